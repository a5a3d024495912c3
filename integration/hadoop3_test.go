package integration

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/container/cgroups"
)

// TestHadoop3OnBobbinRMAndNM runs the Hadoop 3.1.1 distributed shell and `pi 2 10` with the
// 3.1.1 clients, MapReduce AM and tasks on Bobbin's RM and Bobbin's NM, whose containers
// run in cgroups (3.x's keys: CPU shares and hard memory limits) where this machine has
// them to give.
func TestHadoop3OnBobbinRMAndNM(t *testing.T) {
	t.Parallel() // its own network namespace: see parallelism in cluster_test.go
	c := newNSClusterVersion(t, hadoop3)
	c.bobbinNM = true
	cgroupsOn := withCgroups(t, c)
	runDShellAndPi(t, c)
	if cgroupsOn && !strings.Contains(c.logTail("nm.log", 100000), "containers run in cgroups") {
		t.Error("the NodeManager did not put its containers into cgroups")
	}
}

// withCgroups turns cgroups on for the cluster's NodeManagers, under a subtree of the
// test's own, when this machine has the v1 cpu and memory controllers for root; false
// (said in the log) where it has not.
func withCgroups(t *testing.T, c *nsCluster) bool {
	t.Helper()
	hierarchy := fmt.Sprintf("bobbin-it-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "-"))
	if os.Geteuid() != 0 {
		t.Log("not root: the jobs run without cgroups")
		return false
	}
	probe, err := cgroups.Open(cgroups.Settings{Version: cgroups.V1, Hierarchy: hierarchy, CPU: true, Memory: true})
	if err != nil {
		t.Logf("no cgroups here (%v): the jobs run without", err)
		return false
	}
	t.Cleanup(func() { probe.Remove() })
	c.nmProps = func(_ int, props map[string]string) {
		props["yarn.nodemanager.resource.cpu.enabled"] = "true"
		props["yarn.nodemanager.resource.memory.enabled"] = "true"
		props["yarn.nodemanager.linux-container-executor.cgroups.hierarchy"] = hierarchy
	}
	return true
}

// TestHadoop3ApacheNMUnderBobbinRM: an unchanged Apache 3.1.1 NodeManager under Bobbin's
// RM runs the 3.1.1 distributed shell and pi.
func TestHadoop3ApacheNMUnderBobbinRM(t *testing.T) {
	t.Parallel() // its own network namespace: see parallelism in cluster_test.go
	c := newNSClusterVersion(t, hadoop3)
	runDShellAndPi(t, c)
}

// TestHadoop3BobbinNMUnderApacheRM: Bobbin's NodeManager serves an unchanged Apache 3.1.1
// ResourceManager.
func TestHadoop3BobbinNMUnderApacheRM(t *testing.T) {
	t.Parallel() // its own network namespace: see parallelism in cluster_test.go
	c := newNSClusterVersion(t, hadoop3)
	c.bobbinNM, c.apacheRM = true, true
	runDShellAndPi(t, c)
}

// TestHadoop3GPUsOnBobbin: with yarn.io/gpu declared and two Bobbin NodeManagers offering
// two GPUs each, the 3.1.1 distributed shell asking for four one-GPU containers gets
// exactly four, a second application's GPU container waits until they end (the first is
// killed), and `yarn node -list -showDetails` shows each node's GPUs in use.
func TestHadoop3GPUsOnBobbin(t *testing.T) {
	t.Parallel() // its own network namespace: see parallelism in cluster_test.go
	c := newNSClusterVersion(t, hadoop3)
	c.bobbinNM, c.secondNM = true, true
	c.nmProps = func(_ int, props map[string]string) {
		props["yarn.resource-types"] = "yarn.io/gpu"
		props["yarn.nodemanager.resource-type.yarn.io/gpu"] = "2"
	}
	// The default queue may use the whole cluster: with writeConf's 90 % maximum it could
	// hold only 3 of the 4 GPUs (Bobbin limits a queue in every resource type, as the Java
	// RM's DominantResourceCalculator does). GPUs need that calculator, on the Java RM as
	// on Bobbin's: the default one normalizes asks to memory and one vcore. Its AM limit
	// is then a dominant share too, which two AMs' vcores would pass at 10 %.
	c.capacityProps = map[string]string{
		"yarn.scheduler.capacity.resource-calculator":           "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator",
		"yarn.scheduler.capacity.maximum-am-resource-percent":   "0.5",
		"yarn.scheduler.capacity.root.queues":                   "default",
		"yarn.scheduler.capacity.root.default.capacity":         "100",
		"yarn.scheduler.capacity.root.default.maximum-capacity": "100",
	}
	gpuDS := func(sleep, n int, log string) string {
		return fmt.Sprintf(`$Y jar %[1]s -jar %[1]s -shell_command 'sleep %[2]d' -container_resources memory-mb=128,vcores=1,yarn.io/gpu=1 -num_containers %[3]d -master_memory 256 > %[4]s 2>&1 &`,
			c.dshellJar(), sleep, n, log)
	}
	out, err := c.run(t, 6*time.Minute, `Y=$HADOOP_HOME/bin/yarn
running() { $Y container -list appattempt_${1#application_}_000001 2>/dev/null | grep -c '^container_'; }
`+gpuDS(300, 4, c.path("ds1.log"))+`
FIRST=$!
for i in $(seq 1 240); do
  A1=$(running_app)
  [ -n "$A1" ] && [ "$(app_containers $A1)" -ge 5 ] && break
  sleep 0.5
done
`+gpuDS(5, 1, c.path("ds2.log"))+`
SECOND=$!
for i in $(seq 1 180); do
  A2=$(running_app "$A1")
  [ -n "$A2" ] && [ "$(app_containers $A2)" -ge 1 ] && break
  sleep 0.5
done
sleep 8
echo "first $A1 containers $(running $A1)"
echo "second $A2 containers $(running $A2)"
echo "=== nodes"
$Y node -list -showDetails 2>&1 | grep -v WARN
echo "=== end nodes"
# The first is killed once looked at (its sleep outlasts any slow check): its GPUs go to
# the second's waiting container.
$Y application -kill $A1 > /dev/null 2>&1
wait $FIRST; echo "first exit $?"
wait $SECOND; echo "second exit $?"`)
	fail := func(what string) {
		t.Fatalf("%s\nerr %v\noutput:\n%s\nRM log:\n%s\nds1:\n%s\nds2:\n%s", what, err, out, c.logTail("rm.log", 40), c.logTail("ds1.log", 30), c.logTail("ds2.log", 30))
	}
	if err != nil || !strings.Contains(out, "second exit 0") {
		fail("the second GPU distributed shell did not succeed once the first was killed")
	}
	// The first has its AM and four GPU containers; the second only its AM: its GPU
	// container waits for a free GPU.
	if !regexp.MustCompile(`first application_\S+ containers 5\b`).MatchString(out) || !regexp.MustCompile(`second application_\S+ containers 1\b`).MatchString(out) {
		fail("want the first application holding 4 GPU containers (+ AM) and the second only its AM")
	}
	nodes := out[strings.Index(out, "=== nodes"):strings.Index(out, "=== end nodes")]
	if strings.Count(nodes, "Configured Resources : <memory:4096, vCores:4, yarn.io/gpu: 2>") != 2 ||
		strings.Count(nodes, "yarn.io/gpu: 2>") < 4 {
		fail("yarn node -list -showDetails does not show 2 GPUs configured and 2 in use on both nodes")
	}
	t.Logf("nodes while the first held every GPU:\n%s", nodes)
}

// TestMixedHadoopVersionsOnBobbinRM: clients of one Hadoop version and an unchanged Apache
// NodeManager of the other under Bobbin's RM (a cluster mid-upgrade): the distributed
// shell and pi succeed both ways. The MapReduce AM and tasks are the NodeManager's
// version, as on a real cluster whose nodes carry the framework; under the 2.7.3
// NodeManager the distributed shell is 2.7.3's, submitted with the 3.1.1 client libraries
// (see dshellCommand). An unchanged 3.1.1 NodeManager also unregisters when it stops
// (unRegisterNodeManager), which Bobbin's RM answers.
func TestMixedHadoopVersionsOnBobbinRM(t *testing.T) {
	t.Parallel() // its own network namespace: see parallelism in cluster_test.go
	for _, p := range []struct{ client, nm string }{{hadoop2, hadoop3}, {hadoop3, hadoop2}} {
		// No commas in the name: Hadoop splits the paths under the test's temp dir on them.
		t.Run(p.client+"-clients-"+p.nm+"-NM", func(t *testing.T) {
			t.Parallel() // its own network namespace: see parallelism in cluster_test.go
			c := newNSClusterVersion(t, p.client)
			c.withApacheNM(t, p.nm)
			runDShellAndPi(t, c)
		})
	}
}
