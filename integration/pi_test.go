package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMapReducePiOnApacheNM runs `hadoop jar hadoop-mapreduce-examples-2.7.3.jar pi 2 10`
// (non-uber: two maps, one reduce, the real shuffle through the Apache NM's
// ShuffleHandler) against Bobbin's RM and an unchanged Apache NodeManager, in a private
// network namespace.
func TestMapReducePiOnApacheNM(t *testing.T) {
	c := newNSCluster(t)
	home := c.home
	examples := filepath.Join(home, "share", "hadoop", "mapreduce", "hadoop-mapreduce-examples-2.7.3.jar")
	os.MkdirAll(c.path("staging"), 0o755)
	opens := "--add-opens java.base/java.lang=ALL-UNNAMED"
	mapred := "<?xml version=\"1.0\"?>\n<configuration>\n" +
		prop("mapreduce.framework.name", "yarn") +
		prop("yarn.app.mapreduce.am.staging-dir", c.path("staging")) +
		prop("yarn.app.mapreduce.am.env", "HADOOP_MAPRED_HOME="+home) +
		prop("mapreduce.map.env", "HADOOP_MAPRED_HOME="+home) +
		prop("mapreduce.reduce.env", "HADOOP_MAPRED_HOME="+home) +
		prop("yarn.app.mapreduce.am.command-opts", "-Xmx256m "+opens) +
		prop("yarn.app.mapreduce.am.resource.mb", "512") +
		prop("mapreduce.map.memory.mb", "256") +
		prop("mapreduce.reduce.memory.mb", "256") +
		prop("mapreduce.map.java.opts", "-Xmx200m "+opens) +
		prop("mapreduce.reduce.java.opts", "-Xmx200m "+opens) +
		prop("mapreduce.job.ubertask.enable", "false") +
		"</configuration>\n"
	if err := os.WriteFile(filepath.Join(c.confDir, "mapred-site.xml"), []byte(mapred), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := c.run(t, 6*time.Minute, fmt.Sprintf(`timeout 240 $HADOOP_HOME/bin/hadoop jar %s pi 2 10 > %s 2>&1
echo "pi exit $?"
$HADOOP_HOME/bin/yarn application -list -appStates ALL 2>&1`, examples, c.path("pi.log")))
	piLog, _ := os.ReadFile(c.path("pi.log"))
	if err != nil || !strings.Contains(out, "pi exit 0") || !strings.Contains(string(piLog), "Estimated value of Pi is 3.8") ||
		!strings.Contains(out, "FINISHED") || !strings.Contains(out, "SUCCEEDED") {
		t.Fatalf("err %v\noutput:\n%s\nRM log:\n%s\npi (tail):\n%s", err, out, c.logTail("rm.log", 60), tail(string(piLog), 40))
	}
	for _, l := range strings.Split(string(piLog), "\n") {
		if strings.Contains(l, "Job Finished in") {
			t.Log(strings.TrimSpace(l))
		}
	}
}
