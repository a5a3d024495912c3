package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
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
	home := requireHadoop(t)
	if _, err := exec.LookPath("unshare"); err != nil || os.Geteuid() != 0 {
		t.Skip("needs root and unshare for a private network namespace")
	}
	examples := filepath.Join(home, "share", "hadoop", "mapreduce", "hadoop-mapreduce-examples-2.7.3.jar")
	dir := t.TempDir()
	confDir := filepath.Join(dir, "conf")
	for _, d := range []string{"conf", "nm-local", "nm-logs", "logs", "staging", "tmp"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	writeConf(t, confDir, nmConf(dir))
	opens := "--add-opens java.base/java.lang=ALL-UNNAMED"
	mapred := "<?xml version=\"1.0\"?>\n<configuration>\n" +
		prop("mapreduce.framework.name", "yarn") +
		prop("yarn.app.mapreduce.am.staging-dir", filepath.Join(dir, "staging")) +
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
	if err := os.WriteFile(filepath.Join(confDir, "mapred-site.xml"), []byte(mapred), 0o644); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf(`set -u
ip link set lo up
%[1]s resourcemanager --conf %[2]s > %[3]s/rm.log 2>&1 &
RM=$!
%[4]s/bin/yarn nodemanager > %[3]s/nm.log 2>&1 &
NM=$!
for i in $(seq 1 60); do grep -q "NodeManager registered" %[3]s/rm.log && break; sleep 1; done
cd %[3]s
timeout 240 %[4]s/bin/hadoop jar %[5]s pi 2 10 > %[3]s/pi.log 2>&1
echo "pi exit $?"
%[4]s/bin/yarn application -list -appStates ALL 2>&1
kill $NM; sleep 1; kill -9 $NM 2>/dev/null
kill $RM; wait $RM; echo "rm exit $?"
`, bobbinBinary(t), confDir, dir, home, examples)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", "-n", "bash", "-c", script)
	cmd.Env = append(hadoopEnv(home, confDir), "USER=root", "YARN_LOG_DIR="+filepath.Join(dir, "logs"), "HADOOP_LOG_DIR="+filepath.Join(dir, "logs"))
	out, err := cmd.CombinedOutput()
	piLog, _ := os.ReadFile(filepath.Join(dir, "pi.log"))
	if err != nil || !strings.Contains(string(out), "pi exit 0") || !strings.Contains(string(piLog), "Estimated value of Pi is 3.8") ||
		!strings.Contains(string(out), "FINISHED") || !strings.Contains(string(out), "SUCCEEDED") {
		rmLog, _ := os.ReadFile(filepath.Join(dir, "rm.log"))
		t.Fatalf("err %v\noutput:\n%s\nRM log:\n%s\npi (tail):\n%s", err, out, tail(string(rmLog), 60), tail(string(piLog), 40))
	}
	for _, l := range strings.Split(string(piLog), "\n") {
		if strings.Contains(l, "Job Finished in") {
			t.Log(strings.TrimSpace(l))
		}
	}
}
