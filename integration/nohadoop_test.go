package integration

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestMapReduceOnANodeWithoutHadoop: a Bobbin NodeManager on a server with no Hadoop
// install (no HADOOP_* variable, no JAVA_HOME in its environment) says at start what
// its containers lack, and runs `pi` from a job that ships the MapReduce framework as a
// distributed-cache archive (mapreduce.application.framework.path), as the README shows.
func TestMapReduceOnANodeWithoutHadoop(t *testing.T) {
	t.Parallel() // its own network namespace: see parallelism in cluster_test.go
	c := newNSCluster(t)
	c.bobbinNM, c.nmWithoutHadoop = true, true
	// The framework: the distribution's jars, as an admin would upload the Hadoop
	// tarball (a plain tar here: Java's localizer unpacks .tar, .tar.gz, .tgz, .zip, .jar).
	framework := c.path("hadoop-mapreduce-framework.tar")
	tar := exec.Command("tar", "-cf", framework, "-C", c.home, "--exclude=*-sources.jar", "--exclude=*-tests.jar", "--exclude=jdiff", "--exclude=sources",
		"share/hadoop/common", "share/hadoop/hdfs", "share/hadoop/mapreduce", "share/hadoop/yarn")
	if b, err := tar.CombinedOutput(); err != nil {
		t.Fatalf("tar the framework: %v\n%s", err, b)
	}
	var cp []string
	for _, part := range []string{"mapreduce", "common", "yarn", "hdfs"} {
		cp = append(cp, "$PWD/mrframework/share/hadoop/"+part+"/*", "$PWD/mrframework/share/hadoop/"+part+"/lib/*")
	}
	writeMapredSiteWith(t, c, prop("mapreduce.application.framework.path", "file://"+framework+"#mrframework")+
		prop("mapreduce.application.classpath", strings.Join(cp, ",")))
	out, err := c.run(t, 6*time.Minute, fmt.Sprintf(`timeout 240 $HADOOP_HOME/bin/hadoop jar %s pi 2 10 > %s 2>&1
echo "pi exit $?"`, c.examplesJar(), c.path("pi.log")))
	piLog, _ := os.ReadFile(c.path("pi.log"))
	nmLog := c.logTail("nm.log", 100000)
	if err != nil || !strings.Contains(out, "pi exit 0") || !strings.Contains(string(piLog), "Estimated value of Pi is 3.8") {
		c.keep(t)
		t.Fatalf("pi on a node without Hadoop: %v\n%s\npi:\n%s\nNM log:\n%s", err, out, tail(string(piLog), 40), tail(nmLog, 60))
	}
	for _, want := range []string{
		// What the NodeManager derived as Hadoop's launcher would, and what it could not.
		`msg="container environment: set as Hadoop's launcher would"`, "variable=JAVA_HOME",
		"containers get no HADOOP_COMMON_HOME, HADOOP_HDFS_HOME, HADOOP_YARN_HOME", "containers get no HADOOP_MAPRED_HOME",
	} {
		if !strings.Contains(nmLog, want) {
			t.Errorf("the NodeManager's log lacks %q:\n%s", want, tail(nmLog, 40))
		}
	}
	for _, l := range strings.Split(string(piLog), "\n") {
		if strings.Contains(l, "Job Finished in") {
			t.Log(strings.TrimSpace(l))
		}
	}
}
