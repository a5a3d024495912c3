package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
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
	// Where this machine gives cgroups, each NodeManager finds its two GPUs with
	// nvidia-smi (a stand-in printing nvidia-smi's XML for two GPUs, minor numbers 0 and
	// 2) and isolates them; each GPU container then reports what it was given and tries
	// both GPUs' device files (nodes of NVIDIA's major with no driver: the one it holds
	// answers "No such device", the other is denied). Elsewhere the count is configured.
	plugin := gpuPluginFixture(t, c)
	c.nmProps = func(_ int, props map[string]string) {
		props["yarn.resource-types"] = "yarn.io/gpu"
		if plugin == nil {
			props["yarn.nodemanager.resource-type.yarn.io/gpu"] = "2"
			return
		}
		for k, v := range plugin {
			props[k] = v
		}
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
		return fmt.Sprintf(`$Y jar %[1]s -jar %[1]s -shell_command 'sh %[5]s %[2]d' -container_resources memory-mb=128,vcores=1,yarn.io/gpu=1 -num_containers %[3]d -master_memory 256 > %[4]s 2>&1 &`,
			c.dshellJar(), sleep, n, log, c.path("gpu-probe.sh"))
	}
	probe := "echo gpus=$CUDA_VISIBLE_DEVICES nvidia=$NVIDIA_VISIBLE_DEVICES\n"
	if plugin != nil {
		probe += fmt.Sprintf("cat %[1]s/nvidia0 2>&1 | sed 's/^/minor0: /'\ncat %[1]s/nvidia2 2>&1 | sed 's/^/minor2: /'\n", c.path("dev"))
	}
	if err := os.WriteFile(c.path("gpu-probe.sh"), []byte(probe+"sleep $1\n"), 0o755); err != nil {
		t.Fatal(err)
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
echo "=== nm gpus $(curl -s http://127.0.0.1:8042/ws/v1/node/resources/yarn.io%2Fgpu)"
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
	if plugin == nil {
		t.Log("no cgroups here: GPUs offered as a configured count, not discovered or isolated")
		return
	}
	// nvidia-smi's two GPUs, both held by the first application's containers.
	var rest struct {
		Info     struct{ GPUs []struct{ UUID string } } `json:"gpuDeviceInformation"`
		Total    []struct{ Index, MinorNumber int }     `json:"totalGpuDevices"`
		Assigned []struct{ ContainerID string }         `json:"assignedGpuDevices"`
	}
	if m := regexp.MustCompile(`=== nm gpus (.*)`).FindStringSubmatch(out); m == nil || json.Unmarshal([]byte(m[1]), &rest) != nil ||
		len(rest.Info.GPUs) != 2 || len(rest.Total) != 2 || rest.Total[1].MinorNumber != 2 || len(rest.Assigned) != 2 {
		fail("the NodeManager's /ws/v1/node/resources/yarn.io%2Fgpu does not show its two GPUs, both assigned")
	}
	// Each of the first application's GPU containers holds one GPU, the other denied.
	outs, _ := filepath.Glob(c.path("*/application_*_0001/container_*/stdout"))
	more, _ := filepath.Glob(c.path("nm-logs/application_*_0001/container_*/stdout"))
	byIndex := map[string]int{}
	for _, f := range append(outs, more...) {
		b, _ := os.ReadFile(f)
		text := string(b)
		m := regexp.MustCompile(`gpus=(\S*) nvidia=(\S*)`).FindStringSubmatch(text)
		if m == nil || m[1] == "" {
			continue // the AM
		}
		held, other := map[string][2]string{"0": {"minor0", "minor2"}, "1": {"minor2", "minor0"}}[m[1]][0], map[string][2]string{"0": {"minor0", "minor2"}, "1": {"minor2", "minor0"}}[m[1]][1]
		if m[1] != m[2] || held == "" || !strings.Contains(text, held+": cat: ") || !strings.Contains(text, "No such device") ||
			!strings.Contains(text, other+": cat: "+c.path("dev")) || !strings.Contains(text, "Operation not permitted") {
			fail(fmt.Sprintf("GPU container %s:\n%s\nwant its GPU index in both variables, its own device opening as far as the driver, the other denied", f, text))
		}
		byIndex[m[1]]++
	}
	if byIndex["0"] != 2 || byIndex["1"] != 2 {
		fail(fmt.Sprintf("the four GPU containers held GPUs %v, want each node's two GPUs once", byIndex))
	}
}

// gpuPluginFixture sets up the yarn.io/gpu plugin for the cluster's NodeManagers when
// this machine gives them cgroups: nvidia-smi as a script printing its XML for two GPUs
// (minor numbers 0 and 2), their device nodes (NVIDIA's major, no driver) under the
// cluster's dev/, a cgroups subtree of the test's own. nil where it cannot.
func gpuPluginFixture(t *testing.T, c *nsCluster) map[string]string {
	t.Helper()
	hierarchy := fmt.Sprintf("bobbin-it-%d-%s", os.Getpid(), t.Name())
	if os.Geteuid() != 0 {
		return nil
	}
	probe, err := cgroups.Open(cgroups.Settings{Version: cgroups.V1, Hierarchy: hierarchy, Devices: true})
	if err != nil {
		t.Logf("no cgroups devices controller (%v)", err)
		return nil
	}
	t.Cleanup(func() { probe.Remove() })
	xml, err := filepath.Abs("../nodemanager/gpu/testdata/nvidia-smi-q-x.xml")
	if err != nil {
		t.Fatal(err)
	}
	bin := c.path("nvidia-bin")
	os.MkdirAll(bin, 0o755)
	os.MkdirAll(c.path("dev"), 0o755)
	if err := os.WriteFile(filepath.Join(bin, "nvidia-smi"), []byte("#!/bin/sh\ncat "+xml+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, minor := range []int{0, 2} {
		if err := syscall.Mknod(c.path(fmt.Sprint("dev/nvidia", minor)), syscall.S_IFCHR|0o666, 195<<8|minor); err != nil {
			t.Logf("mknod: %v", err)
			return nil
		}
	}
	return map[string]string{
		"yarn.nodemanager.resource-plugins":                                   "yarn.io/gpu",
		"yarn.nodemanager.resource-plugins.gpu.path-to-discovery-executables": bin,
		"yarn.nodemanager.linux-container-executor.cgroups.hierarchy":         hierarchy,
	}
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
