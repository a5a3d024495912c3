package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeMapredSite configures MapReduce on YARN for the namespace cluster: non-uber, small
// containers, the Hadoop home for tasks, and the JDK 17 opens Hadoop 2.7 needs.
func writeMapredSite(t *testing.T, c *nsCluster) {
	t.Helper()
	home := c.frameworkHome()
	writeMapredSiteWith(t, c, prop("yarn.app.mapreduce.am.env", "HADOOP_MAPRED_HOME="+home)+
		prop("mapreduce.map.env", "HADOOP_MAPRED_HOME="+home)+
		prop("mapreduce.reduce.env", "HADOOP_MAPRED_HOME="+home))
}

// writeMapredSiteWith writes writeMapredSite's mapred-site.xml with framework's
// properties saying where the MapReduce framework comes from.
func writeMapredSiteWith(t *testing.T, c *nsCluster, framework string) {
	t.Helper()
	os.MkdirAll(c.path("staging"), 0o755)
	opens := javaOpts
	mapred := "<?xml version=\"1.0\"?>\n<configuration>\n" +
		prop("mapreduce.framework.name", "yarn") +
		prop("yarn.app.mapreduce.am.staging-dir", c.path("staging")) +
		framework +
		prop("yarn.app.mapreduce.am.command-opts", "-Xmx256m "+opens) +
		prop("yarn.app.mapreduce.am.resource.mb", "512") +
		prop("mapreduce.map.memory.mb", "256") +
		prop("mapreduce.reduce.memory.mb", "256") +
		prop("mapreduce.map.java.opts", "-Xmx200m "+opens) +
		prop("mapreduce.reduce.java.opts", "-Xmx200m "+opens) +
		prop("mapreduce.job.ubertask.enable", "false") +
		// No JobHistoryServer runs here: with its address empty, a 3.x job client that
		// misses the AM's last seconds (a loaded machine) takes the final state from the
		// RM's report instead of retrying a server that is not there and failing the job
		// (ClientCache.instantiateHistoryProxy, ClientServiceDelegate.checkAndGetHSProxy).
		// 2.7.3's Configuration drops an empty value and keeps the default 0.0.0.0:10020:
		// see jobHistoryMissed.
		prop("mapreduce.jobhistory.address", "") +
		"</configuration>\n"
	if err := os.WriteFile(filepath.Join(c.confDir, "mapred-site.xml"), []byte(mapred), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestMapReduceAndDistributedShellOnApacheNM is issue 4's acceptance run on Bobbin's RM
// and one unchanged Apache NodeManager in a private network namespace:
//   - `hadoop jar hadoop-mapreduce-examples-2.7.3.jar pi 2 10` (non-uber: two maps, one
//     reduce, the real shuffle through the Apache NM's ShuffleHandler) succeeds;
//   - `yarn jar distributedshell` with two containers succeeds: Bobbin's AM launcher starts
//     the Java AM with the AMRMToken in its credentials, both containers print "hello"
//     into the NM's log dir;
//   - `yarn application -list -appStates ALL` shows both FINISHED/SUCCEEDED;
//   - a running `sleep 300` distributed shell is KILLED with `yarn application -kill`;
//   - `yarn node -list -all` shows the node RUNNING.
func TestMapReduceAndDistributedShellOnApacheNM(t *testing.T) {
	t.Parallel() // its own network namespace: see parallelism in cluster_test.go
	c := newNSCluster(t)
	writeMapredSite(t, c)
	examples := c.examplesJar()
	dshell := c.dshellJar()
	out, err := c.run(t, 8*time.Minute, fmt.Sprintf(`Y=$HADOOP_HOME/bin/yarn
timeout 240 $HADOOP_HOME/bin/hadoop jar %[1]s pi 2 10 > %[3]s 2>&1
echo "pi exit $?"
timeout 150 $Y jar %[2]s -jar %[2]s -shell_command 'echo hello' -num_containers 2 -master_memory 256 -container_memory 128 > %[4]s 2>&1
echo "dshell exit $?"
echo "=== list after both"
$Y application -list -appStates ALL 2>&1 | grep application_
echo "=== end list"
# A long job, killed from the CLI while it runs.
$Y jar %[2]s -jar %[2]s -shell_command 'sleep 300' -num_containers 1 -master_memory 256 -container_memory 128 > %[5]s 2>&1 &
for i in $(seq 1 150); do
  APP=$(running_app)
  [ -n "$APP" ] && grep -q "container_.*_000002" %[6]s && break
  sleep 1
done
echo "sleeper $APP"
$Y application -kill "$APP" 2>&1 | grep -v INFO
echo "=== final list"
$Y application -list -appStates ALL 2>&1 | grep application_
$Y node -list -all 2>&1`, examples, dshell, c.path("pi.log"), c.path("client.log"), c.path("sleeper.log"), c.path("rm.log")))
	piLog, _ := os.ReadFile(c.path("pi.log"))
	fail := func(what string) {
		t.Fatalf("%s\nerr %v\noutput:\n%s\nRM log:\n%s\npi (tail):\n%s\ndshell client (tail):\n%s", what, err, out, c.logTail("rm.log", 60),
			tail(string(piLog), 40), c.logTail("client.log", 30))
	}
	if err != nil || !strings.Contains(out, "pi exit 0") || !strings.Contains(string(piLog), "Estimated value of Pi is 3.8") {
		fail("pi did not succeed")
	}
	if !strings.Contains(out, "dshell exit 0") {
		fail("distributed shell did not succeed")
	}
	list := out[strings.Index(out, "=== list after both"):strings.Index(out, "=== end list")]
	succeeded := 0
	for _, l := range strings.Split(list, "\n") {
		if strings.Contains(l, "FINISHED") && strings.Contains(l, "SUCCEEDED") {
			succeeded++
		}
	}
	if succeeded != 2 || !strings.Contains(list, "MAPREDUCE") || !strings.Contains(list, "DistributedShell") {
		fail(fmt.Sprintf("%d applications FINISHED/SUCCEEDED in the list, want pi and distributed shell", succeeded))
	}
	hellos := 0
	outs, _ := filepath.Glob(filepath.Join(c.path("nm-logs"), "application_*", "container_*", "stdout"))
	for _, f := range outs {
		if b, _ := os.ReadFile(f); strings.TrimSpace(string(b)) == "hello" {
			hellos++
		}
	}
	// 2.7.3's shell AM adds its two requests one by one while its heartbeat thread already
	// runs, so its asks can reach the RM as 1 and then 2; any RM (the Java one too, seen
	// here) then allocates 3, and the AM runs the third as well.
	if hellos != 2 && hellos != 3 {
		fail(fmt.Sprintf("%d containers printed hello, want 2 (3 when the AM's asks raced) (%v)", hellos, outs))
	}
	final := out[strings.Index(out, "=== final list"):]
	if !strings.Contains(final, "KILLED") {
		fail("the running sleep job was not KILLED")
	}
	if !strings.Contains(final, "Total Nodes:1") || !strings.Contains(final, "RUNNING") {
		fail("yarn node -list -all does not show the node")
	}
	for _, l := range strings.Split(string(piLog), "\n") {
		if strings.Contains(l, "Job Finished in") {
			t.Log(strings.TrimSpace(l))
		}
	}
}

// runDShellAndPi runs distributed shell (2 containers printing "hello") and pi 2 10 on the
// cluster and checks both succeeded and both containers' output is in the NM's log dir.
func runDShellAndPi(t *testing.T, c *nsCluster) {
	t.Helper()
	writeMapredSite(t, c)
	examples := c.examplesJar()
	dshell := c.dshellCommand()
	out, err := c.run(t, 8*time.Minute, fmt.Sprintf(`Y=$HADOOP_HOME/bin/yarn
S=$(date +%%s.%%N)
timeout 150 %[2]s -shell_command 'echo hello' -num_containers 2 -master_memory 256 -container_memory 128 > %[4]s 2>&1
echo "dshell exit $?"
echo "=== dshell_seconds $(echo "$(date +%%s.%%N) - $S" | bc)"
S=$(date +%%s.%%N)
timeout 240 $HADOOP_HOME/bin/hadoop jar %[1]s pi 2 10 > %[3]s 2>&1
echo "pi exit $?"
echo "=== pi_seconds $(echo "$(date +%%s.%%N) - $S" | bc)"
$Y application -list -appStates ALL 2>&1 | grep application_`, examples, dshell, c.path("pi.log"), c.path("client.log")))
	// The jobs' wall times, client start to end, on this pairing (issue 47's figures).
	times := scriptResults(out)
	t.Logf("Hadoop %s, %s RM with %s NM: distributed shell %s s, pi 2 10 %s s", c.version, map[bool]string{true: "Apache", false: "Bobbin"}[c.apacheRM],
		map[bool]string{true: "Bobbin", false: "Apache"}[c.bobbinNM], times["dshell_seconds"], times["pi_seconds"])
	piLog, _ := os.ReadFile(c.path("pi.log"))
	fail := func(what string) {
		c.keep(t)
		t.Fatalf("%s\nerr %v\noutput:\n%s\nNM log:\n%s\nRM log:\n%s\npi (tail):\n%s\ndshell client (tail):\n%s", what, err, out, c.logTail("nm.log", 60),
			c.logTail("rm.log", 40), tail(string(piLog), 40), c.logTail("client.log", 30))
	}
	hellos := 0
	outs, _ := filepath.Glob(filepath.Join(c.path("nm-logs"), "application_*", "container_*", "stdout"))
	for _, f := range outs {
		if b, _ := os.ReadFile(f); strings.TrimSpace(string(b)) == "hello" {
			hellos++
		}
	}
	if !strings.Contains(out, "dshell exit 0") {
		if c.version == hadoop2 && hellos == 3 {
			// Upstream: 2.7.3's shell AM, given the third container of its raced asks (below),
			// finishes only when its count of completed containers equals 2 exactly
			// (RMCallbackHandler.onContainersCompleted, checked in the jar); when the last two
			// completions reach it in one allocate response the count goes from 1 to 3 and
			// it never finishes, under any RM.
			c.keep(t)
			t.Skipf("2.7.3's distributed shell AM ran 3 containers and never finished (upstream, see the comment); output:\n%s", out)
		}
		fail("distributed shell did not succeed")
	}
	// 2.7.3's shell AM adds its two requests one by one while its heartbeat thread already
	// runs, so its asks can reach the RM as 1 and then 2; any RM (the Java one too, seen
	// here) then allocates 3, and the AM runs the third as well.
	if hellos != 2 && hellos != 3 {
		fail(fmt.Sprintf("%d containers printed hello, want 2 (3 when the AM's asks raced) (%v)", hellos, outs))
	}
	if err != nil || !strings.Contains(out, "pi exit 0") || !strings.Contains(string(piLog), "Estimated value of Pi is 3.8") {
		fail("pi did not succeed")
	}
	for _, l := range strings.Split(string(piLog), "\n") {
		if strings.Contains(l, "Job Finished in") {
			t.Log(strings.TrimSpace(l))
		}
	}
}

// TestMapReduceAndDistributedShellOnBobbinNM runs the jobs on Bobbin's RM and Bobbin's
// NodeManager: the Java MR AM, map and reduce tasks and the distributed-shell AM run in
// Bobbin containers, and the reduce fetches map output through Bobbin's shuffle.
func TestMapReduceAndDistributedShellOnBobbinNM(t *testing.T) {
	t.Parallel() // its own network namespace: see parallelism in cluster_test.go
	c := newNSCluster(t)
	c.bobbinNM = true
	runDShellAndPi(t, c)
}

// TestMapReduceAndDistributedShellOnApacheRMWithBobbinNM: Bobbin's NodeManager serves an
// unchanged Apache ResourceManager.
func TestMapReduceAndDistributedShellOnApacheRMWithBobbinNM(t *testing.T) {
	t.Parallel() // its own network namespace: see parallelism in cluster_test.go
	c := newNSCluster(t)
	c.bobbinNM, c.apacheRM = true, true
	runDShellAndPi(t, c)
}

// TestPiWallTimeApacheVsBobbin runs `pi 2 10` on Apache RM + Apache NM and then on Bobbin
// RM + Bobbin NM, one after the other on this machine, and logs both "Job Finished in"
// lines (docs/benchmarks.md records them). It asserts success, never a time. Set
// BOBBIN_PI_COMPARE=1 to run it.
func TestPiWallTimeApacheVsBobbin(t *testing.T) {
	if os.Getenv("BOBBIN_PI_COMPARE") == "" {
		t.Skip("set BOBBIN_PI_COMPARE=1 to compare pi wall time on Apache and Bobbin daemons")
	}
	for _, setup := range []struct {
		name               string
		apacheRM, bobbinNM bool
	}{{"Apache RM + Apache NM", true, false}, {"Bobbin RM + Bobbin NM", false, true}} {
		c := newNSCluster(t)
		c.apacheRM, c.bobbinNM = setup.apacheRM, setup.bobbinNM
		writeMapredSite(t, c)
		examples := c.examplesJar()
		out, err := c.run(t, 6*time.Minute, fmt.Sprintf(`start=$(date +%%s.%%N)
timeout 240 $HADOOP_HOME/bin/hadoop jar %s pi 2 10 > %s 2>&1
echo "pi exit $? wall $(echo "$(date +%%s.%%N) - $start" | bc)"`, examples, c.path("pi.log")))
		piLog, _ := os.ReadFile(c.path("pi.log"))
		if err != nil || !strings.Contains(out, "pi exit 0") || !strings.Contains(string(piLog), "Estimated value of Pi is 3.8") {
			t.Fatalf("%s: pi failed: %v\n%s\n%s", setup.name, err, out, tail(string(piLog), 30))
		}
		for _, l := range strings.Split(string(piLog)+"\n"+out, "\n") {
			if strings.Contains(l, "Job Finished in") || strings.Contains(l, "pi exit 0 wall") {
				t.Logf("%s: %s", setup.name, strings.TrimSpace(l))
			}
		}
	}
}

// TestTwoBobbinNMsAcceptance is issue 5's acceptance run: Bobbin RM + two Bobbin NMs (same
// host, different ports and dirs, 768 MB each so work spreads): pi 4 10 — the AM and four
// maps fill both NMs exactly, so maps run on both — with the reduce fetching map output
// from both NMs' shuffles (the second's port set only in its mapred-site.xml); distributed shell
// with two containers; `yarn application -kill` of a running `sleep 300` leaves it KILLED
// with no container process left.
func TestTwoBobbinNMsAcceptance(t *testing.T) {
	t.Parallel() // its own network namespace: see parallelism in cluster_test.go
	c := newNSCluster(t)
	c.bobbinNM, c.secondNM, c.nmMemoryMB = true, true, 768
	// The default queue may use the whole cluster: under writeConf's 90 % maximum the
	// fourth map waits for a finished one, and all four can end up on one NM.
	c.capacityProps = map[string]string{
		"yarn.scheduler.capacity.root.queues":                   "default",
		"yarn.scheduler.capacity.root.default.capacity":         "100",
		"yarn.scheduler.capacity.root.default.maximum-capacity": "100",
	}
	writeMapredSite(t, c)
	examples := c.examplesJar()
	dshell := c.dshellJar()
	out, err := c.run(t, 8*time.Minute, fmt.Sprintf(`Y=$HADOOP_HOME/bin/yarn
timeout 240 $HADOOP_HOME/bin/hadoop jar %[1]s pi 4 10 > %[3]s 2>&1
echo "pi exit $?"
timeout 150 $Y jar %[2]s -jar %[2]s -shell_command 'echo hello' -num_containers 2 -master_memory 256 -container_memory 128 > %[4]s 2>&1
echo "dshell exit $?"
$Y jar %[2]s -jar %[2]s -shell_command 'sleep 300' -num_containers 1 -master_memory 256 -container_memory 128 > %[5]s 2>&1 &
for i in $(seq 1 150); do
  APP=$(running_app)
  [ -n "$APP" ] && [ "$(grep -l "BOBBIN_CONTAINER_ID=container_${APP#application_}_01_000002" /proc/[0-9]*/environ 2>/dev/null | wc -l)" -ge 1 ] && break
  sleep 1
done
echo "sleeper $APP"
$Y application -kill "$APP" 2>&1 | grep -v INFO
sleep 3
echo "left $(grep -l "BOBBIN_CONTAINER_ID=container_${APP#application_}_" /proc/[0-9]*/environ 2>/dev/null | wc -l)"
echo "=== final list"
$Y application -list -appStates ALL 2>&1 | grep application_
$Y node -list -all 2>&1
wc -c %[6]s/nm.log %[6]s/nm2.log`, examples, dshell, c.path("pi.log"), c.path("client.log"), c.path("sleeper.log"), c.dir))
	piLog, _ := os.ReadFile(c.path("pi.log"))
	fail := func(what string) {
		c.keep(t)
		t.Fatalf("%s\nerr %v\noutput:\n%s\nRM log:\n%s\nNM1 log:\n%s\nNM2 log:\n%s\npi (tail):\n%s", what, err, out, c.logTail("rm.log", 40), c.logTail("nm.log", 40),
			c.logTail("nm2.log", 40), tail(string(piLog), 30))
	}
	if err != nil || !strings.Contains(out, "pi exit 0") || !strings.Contains(string(piLog), "Estimated value of Pi is ") {
		fail("pi did not succeed")
	}
	// The pi application (the first) ran containers on both NodeManagers.
	piApp := ""
	for _, f := range strings.Fields(out[strings.Index(out, "=== final list"):]) {
		if strings.HasPrefix(f, "application_") && strings.HasSuffix(f, "_0001") {
			piApp = f
		}
	}
	n1, _ := filepath.Glob(filepath.Join(c.path("nm-logs"), piApp, "container_*"))
	n2, _ := filepath.Glob(filepath.Join(c.path("nm2"), "nm-logs", piApp, "container_*"))
	if piApp == "" || len(n1) == 0 || len(n2) == 0 {
		fail(fmt.Sprintf("pi (%s) containers: %d on NM1, %d on NM2", piApp, len(n1), len(n2)))
	}
	// The second NM's shuffle port is set only in its mapred-site.xml: two shuffles on
	// one host, each serving map output.
	served1, served2 := strings.Count(c.logTail("nm.log", 100000), "map output served"), strings.Count(c.logTail("nm2.log", 100000), "map output served")
	if served1 == 0 || served2 == 0 {
		fail(fmt.Sprintf("map outputs served: %d by NM1, %d by NM2; want the reduce fetching from both", served1, served2))
	}
	t.Logf("map outputs served: %d by NM1, %d by NM2 (shuffle port from mapred-site.xml)", served1, served2)
	if !strings.Contains(out, "dshell exit 0") {
		fail("distributed shell did not succeed")
	}
	hellos := 0
	outs, _ := filepath.Glob(filepath.Join(c.dir, "*", "application_*", "container_*", "stdout"))
	more, _ := filepath.Glob(filepath.Join(c.dir, "nm2", "nm-logs", "application_*", "container_*", "stdout"))
	for _, f := range append(outs, more...) {
		if b, _ := os.ReadFile(f); strings.TrimSpace(string(b)) == "hello" {
			hellos++
		}
	}
	if hellos != 2 {
		fail(fmt.Sprintf("%d containers printed hello, want 2", hellos))
	}
	final := out[strings.Index(out, "=== final list"):]
	if !strings.Contains(final, "KILLED") || !strings.Contains(out, "left 0") {
		fail("the sleep job was not KILLED, or container processes were left")
	}
	if !strings.Contains(final, "Total Nodes:2") {
		fail("yarn node -list -all does not show both nodes")
	}
	t.Logf("pi containers: %d on NM1, %d on NM2", len(n1), len(n2))
	for _, l := range strings.Split(string(piLog), "\n") {
		if strings.Contains(l, "Job Finished in") {
			t.Log(strings.TrimSpace(l))
		}
	}
}
