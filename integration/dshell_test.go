package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDistributedShellOnApacheNM runs, in a private network namespace, `bobbin
// resourcemanager`, an unchanged Apache 2.7.3 NodeManager and the real distributed-shell
// ApplicationMaster (started unmanaged by Hadoop's UnmanagedAMLauncher) with two
// containers: Bobbin schedules them, the Java NM starts them with Bobbin's container
// tokens and NMTokens, they run `ls`, and the application ends FINISHED/SUCCEEDED.
func TestDistributedShellOnApacheNM(t *testing.T) {
	t.Parallel() // its own network namespace: see parallelism in cluster_test.go
	c := newNSCluster(t)
	launcher := hadoopJar(c.home, c.version, "yarn", "hadoop-yarn-applications-unmanaged-am-launcher")
	dshell := c.dshellJar()
	// The AM reads its shell command from ./shellCommands (DataOutput.writeUTF).
	os.WriteFile(filepath.Join(c.path("work"), "shellCommands"), []byte("\x00\x02ls"), 0o644)
	out, err := c.run(t, 4*time.Minute, fmt.Sprintf(`CP="%[1]s:$($HADOOP_HOME/bin/yarn classpath)"
timeout 150 $HADOOP_HOME/bin/yarn jar %[2]s org.apache.hadoop.yarn.applications.unmanagedamlauncher.UnmanagedAMLauncher -classpath "$CP" \
  -cmd "java %[4]s org.apache.hadoop.yarn.applications.distributedshell.ApplicationMaster --num_containers 2 --container_memory 128" > %[3]s 2>&1
echo "launcher exit $?"
$HADOOP_HOME/bin/yarn application -list -appStates ALL 2>&1`, dshell, launcher, c.path("launcher.log"), javaOpts))
	report := func() string {
		return fmt.Sprintf("output:\n%s\nRM log:\n%s\nlauncher (tail):\n%s", out, c.logTail("rm.log", 60), c.logTail("launcher.log", 30))
	}
	if err != nil || !strings.Contains(out, "launcher exit 0") || !strings.Contains(out, "rm exit 0") {
		t.Fatalf("err %v\n%s", err, report())
	}
	if !strings.Contains(out, "FINISHED") || !strings.Contains(out, "SUCCEEDED") {
		t.Fatalf("application not FINISHED/SUCCEEDED\n%s", report())
	}
	// Both containers ran on the Apache NM and wrote their `ls` output.
	outs, _ := filepath.Glob(filepath.Join(c.path("nm-logs"), "application_*", "container_*", "stdout"))
	if len(outs) != 2 {
		t.Fatalf("container stdout files %v\n%s", outs, report())
	}
	for _, f := range outs {
		b, _ := os.ReadFile(f)
		if !strings.Contains(string(b), "launch_container.sh") {
			t.Fatalf("%s holds %q, not the output of ls", f, b)
		}
	}
}

// nmConf is the yarn-site of a one-node cluster inside a private network namespace. It
// writes dir/container-jvm.args, the options of every container JVM (see below).
func nmConf(dir string) map[string]string {
	// Every container JVM starts cheap too, also those whose command line the test cannot
	// reach (the distributed shell's AM): the NodeManager forces admin-env into each
	// container's environment, and the java launcher reads JDK_JAVA_OPTIONS. An argument
	// file, because the Apache 2.7.3 NodeManager cuts an admin-env value at its first '='.
	args := filepath.Join(dir, "container-jvm.args")
	os.WriteFile(args, []byte(javaOpts+"\n"), 0o644) // a cluster's dir: a failure shows as JVMs that cannot start
	return map[string]string{
		"yarn.resourcemanager.hostname":                           "127.0.0.1",
		"yarn.nodemanager.hostname":                               "127.0.0.1",
		"yarn.nodemanager.address":                                "127.0.0.1:8041",
		"yarn.nodemanager.localizer.address":                      "127.0.0.1:8040",
		"yarn.nodemanager.webapp.address":                         "127.0.0.1:8042",
		"yarn.nodemanager.resource.memory-mb":                     "4096",
		"yarn.nodemanager.resource.cpu-vcores":                    "4",
		"yarn.nodemanager.local-dirs":                             filepath.Join(dir, "nm-local"),
		"yarn.nodemanager.log-dirs":                               filepath.Join(dir, "nm-logs"),
		"yarn.nodemanager.vmem-check-enabled":                     "false",
		"yarn.nodemanager.pmem-check-enabled":                     "false",
		"yarn.nodemanager.aux-services":                           "mapreduce_shuffle",
		"yarn.nodemanager.aux-services.mapreduce_shuffle.class":   "org.apache.hadoop.mapred.ShuffleHandler",
		"yarn.scheduler.minimum-allocation-mb":                    "128",
		"yarn.resourcemanager.nodemanagers.heartbeat-interval-ms": "500",
		"yarn.nodemanager.admin-env":                              "JDK_JAVA_OPTIONS=@" + args,
		// A 3.2+ Apache RM keeps node attributes there, by default under /tmp for every RM
		// of the user: each cluster its own.
		"yarn.node-attribute.fs-store.root-dir": "file://" + filepath.Join(dir, "node-attribute"),
	}
}
