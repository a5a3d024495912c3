package nodemanager

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/container"
	"github.com/bobbin-yarn/bobbin/container/cgroups"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/nodemanager/borrowed"
	"github.com/bobbin-yarn/bobbin/nodemanager/containers"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
	"google.golang.org/protobuf/proto"
)

// The cgroups keys mean what they mean to the Java NodeManager, and those Bobbin cannot
// serve are refused by name.
func TestCgroupSettingsAsJava(t *testing.T) {
	read := func(kv ...string) (cgroupSettings, error) { return readCgroupSettings(confOf(kv...), false) }
	if s, err := read(); err != nil || s.enabled() {
		t.Fatalf("defaults: %+v, %v: cgroups should be off", s, err)
	}
	s, err := read(keyResourcesHandler, classCgroupsHandler)
	if err != nil || !s.enabled() || !s.Tree.CPU || s.Tree.Memory || s.Tree.Hierarchy != "/hadoop-yarn" || s.Tree.Version != cgroups.V1 {
		t.Fatalf("2.x's handler class: %+v, %v: want the CPU controller under /hadoop-yarn", s, err)
	}
	s, err = read(keyMemoryEnabled, "true", keyCPUEnabled, "true", keyStrict, "true", keyCPUPercent, "50",
		keyV2Enabled, "true", keyV2MountPath, "/sys/fs/cgroup")
	if err != nil || !s.Tree.Memory || !s.Tree.CPU || s.Tree.Version != cgroups.V2 || s.Tree.MountPath != "/sys/fs/cgroup" || s.SoftLimit != 0.9 {
		t.Fatalf("3.x's keys: %+v, %v", s, err)
	}
	if want := float64(s.CPUs) / 2; s.YarnCPUs != want {
		t.Errorf("containers' processors at 50 %%: %v, want %v", s.YarnCPUs, want)
	}
	// A 2-vcore, 1000 MB container on an 8-vcore node.
	ctr := &containers.Container{Ident: &yarnpb.ContainerTokenIdentifierProto{Resource: &yarnpb.ResourceProto{Memory: proto.Int64(1000), VirtualCores: proto.Int32(2)}}}
	l := s.limits(ctr, 8)
	if l.CPUShares != 2048 || l.CPUCores != 2*s.YarnCPUs/8 || l.MemoryBytes != 1000<<20 || l.MemorySoftBytes != 900<<20 || l.Swappiness == nil || *l.Swappiness != 0 {
		t.Errorf("limits %+v", l)
	}
	ctr.Ident.ExecutionType = yarnpb.ExecutionTypeProto_OPPORTUNISTIC.Enum()
	if l := s.limits(ctr, 8); l.CPUShares != 2 || *l.Swappiness != 100 {
		t.Errorf("an OPPORTUNISTIC container's limits %+v: want 2 shares, swappiness 100", l)
	}
	for _, c := range []struct {
		kv  []string
		key string
	}{
		{[]string{keyElastic, "true"}, keyMemoryEnabled}, // Java: not available without memory cgroups
		{[]string{keyMemoryEnabled, "true", keyElastic, "true", keyElasticTimeout, "0"}, keyElasticTimeout},
		{[]string{keyMemoryEnabled, "true", keyElastic, "true", keyOOMHandler, "com.example.OOMHandler"}, keyOOMHandler},
		{[]string{keyCPUEnabled, "true", keyMount, "true"}, keyMount},
		{[]string{"yarn.nodemanager.resource.disk.enabled", "true"}, "yarn.nodemanager.resource.disk.enabled"},
		{[]string{"yarn.nodemanager.resource.network.enabled", "true"}, "yarn.nodemanager.resource.network.enabled"},
		{[]string{keyCPUPercent, "0"}, keyCPUPercent},
		{[]string{keySoftLimit, "120"}, keySoftLimit},
		{[]string{keySwappiness, "-1"}, keySwappiness},
		{[]string{keyResourcesHandler, "com.example.Handler"}, keyResourcesHandler},
	} {
		if _, err := read(c.kv...); err == nil || !strings.Contains(err.Error(), c.key) {
			t.Errorf("%v: %v, want an error naming %s", c.kv, err, c.key)
		}
	}
}

// cgroupNodeIn is a NodeManager with its directories under dir whose containers run in cgroups under a subtree of the
// test's own, or skips where this machine has no cgroups to give it.
func cgroupNodeIn(t *testing.T, dir string, extra ...string) (*cluster, string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create cgroups")
	}
	hierarchy := fmt.Sprintf("bobbin-test-%d-%s", os.Getpid(), t.Name())
	probe, err := cgroups.Open(cgroups.Settings{Version: cgroups.V1, Hierarchy: hierarchy, CPU: true, Memory: true, Pids: true})
	if err != nil {
		t.Skipf("no cgroups v1 cpu, memory and pids controllers here: %v", err)
	}
	t.Cleanup(func() { probe.Remove() })
	kv := append([]string{keyResourcesHandler, classCgroupsHandler, keyMemoryEnabled, "true", keyPidsMax, "64", keyHierarchy, hierarchy}, extra...)
	return newClusterIn(t, dir, "", kv...), hierarchy
}

func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && len(b) > i+2 && b[i+2] != 'Z'
}

// A container's cgroup holds what leaves its session, counts it and kills it; a memory
// hog is ended by the kernel and reported as Java reports one over its memory; a fork
// bomb stops at the pids limit and the NodeManager keeps serving; a cgroup an earlier
// NodeManager left is swept at start.
func TestCgroupsContainEscapesHogsAndBombs(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("needs python3")
	}
	// A cgroup left by an earlier NodeManager process, with a process still in it.
	hierarchy := fmt.Sprintf("bobbin-test-%d-%s", os.Getpid(), t.Name())
	left, err := cgroups.Open(cgroups.Settings{Version: cgroups.V1, Hierarchy: hierarchy})
	if err != nil {
		t.Skipf("no cgroups here: %v", err)
	}
	g, err := left.Create("container_9_0009_01_000009", cgroups.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	// It leads its session with the container's and the NodeManager's markers, as the
	// container's launch did, and has a child that left with neither.
	dir := t.TempDir()
	orphan := exec.Command("/bin/bash", "-c", "setsid env -i sleep 301 & sleep 300")
	orphan.Env = append(os.Environ(), container.MarkerEnv+"=container_9_0009_01_000009", container.OwnerEnv+"="+ownerMark([]string{filepath.Join(dir, "local")}))
	orphan.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := g.Start(orphan); err != nil {
		t.Fatal(err)
	}
	go orphan.Wait()
	var orphans []int
	testutil.Eventually(t, 10*time.Second, "the orphans", func() bool { orphans, _ = g.Pids(); return len(orphans) >= 3 })

	c, _ := cgroupNodeIn(t, dir)
	for _, pid := range orphans {
		if alive(pid) {
			t.Errorf("process %d of an earlier NodeManager's container survived the start", pid)
		}
	}
	if g.Exists() {
		t.Error("the NodeManager left an earlier container's cgroup")
	}
	ctrs := c.containers(t, 3) // 128 MB each
	nm := c.client()
	defer nm.Close()
	ctx := context.Background()
	start := func(ctr *yarnpb.ContainerProto, command string) {
		t.Helper()
		if _, err := nm.Start(ctx, &yarnpb.ContainerLaunchContextProto{Command: []string{command}}, ctr); err != nil {
			t.Fatal(err)
		}
	}

	// The escape: its process is in the container's cgroup and dies with it.
	start(ctrs[0], "setsid env -i sleep 300 & sleep 301")
	id := records.ContainerIDFromProto(ctrs[0].GetId()).String()
	var pids []int
	testutil.Eventually(t, 10*time.Second, "the container's two sleeps in its cgroup", func() bool {
		grp, ok := c.nm.cgroups.Adopt(id)
		if ok {
			pids, _ = grp.Pids()
		}
		return len(pids) >= 3
	})
	if err := nm.Stop(ctx, ctrs[0].GetId()); err != nil {
		t.Fatal(err)
	}
	completeStatus(t, nm, ctrs[0].GetId(), 10*time.Second)
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("process %d outlived its stopped container", pid)
		}
	}

	// The hog: 400 MB in a 128 MB container.
	start(ctrs[1], `python3 -c 'b = bytearray(400 << 20)
for i in range(0, len(b), 4096): b[i] = 1'`)
	st := completeStatus(t, nm, ctrs[1].GetId(), 20*time.Second)
	if st.GetExitStatus() != exitcode.KilledExceededPmem || !strings.Contains(st.GetDiagnostics(), "is running beyond physical memory limits") {
		t.Errorf("the memory hog's status: %d %q, want KILLED_EXCEEDED_PMEM", st.GetExitStatus(), st.GetDiagnostics())
	}

	// The bomb: held at 64 processes; the NodeManager answers, and stops it whole.
	start(ctrs[2], `bomb() { bomb | bomb & }; bomb; sleep 300`)
	bid := records.ContainerIDFromProto(ctrs[2].GetId()).String()
	testutil.Eventually(t, 20*time.Second, "the bomb at its limit", func() bool {
		grp, ok := c.nm.cgroups.Adopt(bid)
		if !ok {
			return false
		}
		s, err := grp.Stats()
		return err == nil && s.Pids >= 50
	})
	if st, err := nm.Status(ctx, ctrs[2].GetId()); err != nil || st.GetState() != yarnpb.ContainerStateProto_C_RUNNING {
		t.Fatalf("the NodeManager under a fork bomb: %v, %v", st, err)
	}
	if err := nm.Stop(ctx, ctrs[2].GetId()); err != nil {
		t.Fatal(err)
	}
	completeStatus(t, nm, ctrs[2].GetId(), 30*time.Second)
	if grp, ok := c.nm.cgroups.Adopt(bid); ok {
		n, _ := grp.Pids()
		t.Errorf("the bomb's cgroup is still there, with %d processes", len(n))
	}
}

// ownerLoop is the owner's work on a borrowed server: a busy loop pinned to processor 0,
// outside every container; cpuTime reads what it got.
type ownerLoop struct{ cmd *exec.Cmd }

func startOwner(t *testing.T) ownerLoop {
	t.Helper()
	cmd := exec.Command("taskset", "-c", "0", "/bin/bash", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Skipf("taskset: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return ownerLoop{cmd}
}

func (o ownerLoop) cpuTime() time.Duration {
	u, _ := container.ProcessUsage(o.cmd.Process.Pid)
	return u.CPU
}

// rate is the share of a processor the owner gets over d.
func (o ownerLoop) rate(t *testing.T, d time.Duration) float64 {
	c0, w0 := o.cpuTime(), time.Now()
	testutil.Eventually(t, d+time.Minute, "time to pass", func() bool { return time.Since(w0) >= d })
	return float64(o.cpuTime()-c0) / float64(time.Since(w0))
}

// subtreeCPU is the containers' CPU time together, from the subtree's accounting.
func subtreeCPU(t *testing.T, hierarchy string) time.Duration {
	b, err := os.ReadFile(filepath.Join("/sys/fs/cgroup/cpuacct", hierarchy, "cpuacct.usage"))
	if err != nil {
		t.Skipf("no cpuacct accounting to measure with: %v", err)
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return time.Duration(n)
}

// On a borrowed server with cgroups the kernel protects the owner: its busy processor
// shared with two busy containers still gives it nearly all it had alone, at once; when
// the owner is measured using three quarters of the machine, the containers together
// get no more than the quarter left from the next measurement on; in critical hours
// without eviction they are frozen, and a frozen container still stops when asked.
func TestBorrowedCgroupsGiveTheOwnerItsCPU(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("needs two processors")
	}
	dir := t.TempDir()
	hierarchy := fmt.Sprintf("bobbin-test-%d-%s", os.Getpid(), t.Name())
	// The host as the meter reads it: the owner's busy time is ownerShare of the
	// machine's time since the last reading, plus what the containers used (the meter
	// takes theirs off). Only the sampling goroutine calls it.
	var ownerShare atomic.Uint64 // percent
	var ownerBusy, lastTotal time.Duration
	readHost := func(dirs []string) (borrowed.Host, error) {
		h, err := borrowed.ReadHost("/proc", dirs)
		if err != nil {
			return h, err
		}
		if lastTotal > 0 {
			ownerBusy += (h.CPUTotal - lastTotal) * time.Duration(ownerShare.Load()) / 100
		}
		lastTotal = h.CPUTotal
		b, _ := os.ReadFile(filepath.Join("/sys/fs/cgroup/cpuacct", hierarchy, "cpuacct.usage"))
		n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		h.CPUBusy = ownerBusy + time.Duration(n)
		return h, nil
	}
	// The critical hours are an hour from now; the NodeManager's clock jumps into them.
	var ahead atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }
	from := time.Now().UTC().Add(time.Hour)
	window := fmt.Sprintf("%s-%s", from.Format("15:04"), from.Add(time.Hour).Format("15:04"))
	if os.Geteuid() != 0 {
		t.Skip("needs root to create cgroups")
	}
	probe, err := cgroups.Open(cgroups.Settings{Version: cgroups.V1, Hierarchy: hierarchy, CPU: true, Memory: true})
	if err != nil || probe.Path("cpuacct") == "" {
		t.Skipf("no cgroups v1 cpu, cpuacct and memory controllers here: %v", err)
	}
	t.Cleanup(func() { probe.Remove() })
	c := newClusterWith(t, dir, "", Options{ReadHost: readHost, Now: now},
		keyResourcesHandler, classCgroupsHandler, keyMemoryEnabled, "true", keyHierarchy, hierarchy,
		"bobbin.nodemanager.borrowed.enabled", "true", "bobbin.nodemanager.borrowed.interval-ms", "200",
		"bobbin.nodemanager.borrowed.window-ms", "400", "bobbin.nodemanager.borrowed.evict-external-cpu", "0",
		"bobbin.nodemanager.borrowed.leave-below", "0", "bobbin.nodemanager.borrowed.rejoin-above", "0",
		"bobbin.nodemanager.borrowed.disk-min-free-mb", "0", "bobbin.nodemanager.borrowed.memory-reserve-mb", "0",
		"bobbin.nodemanager.borrowed.critical-hours", window, "bobbin.nodemanager.borrowed.time-zone", "UTC",
		"bobbin.nodemanager.borrowed.critical-hours-evict", "false")

	owner := startOwner(t)
	alone := owner.rate(t, time.Second)
	ctrs := c.containers(t, 2)
	nm := c.client()
	defer nm.Close()
	for _, ctr := range ctrs {
		if _, err := nm.Start(context.Background(), &yarnpb.ContainerLaunchContextProto{Command: []string{"exec taskset -c 0 /bin/bash -c 'while :; do :; done'"}}, ctr); err != nil {
			t.Fatal(err)
		}
	}
	subtree := func() time.Duration { return subtreeCPU(t, hierarchy) }
	// Beside the owner they get next to nothing of processor 0: wait for their loops.
	testutil.Eventually(t, 20*time.Second, "the containers' loops", func() bool {
		n := 0
		for _, ctr := range ctrs {
			if g, ok := c.nm.cgroups.Adopt(records.ContainerIDFromProto(ctr.GetId()).String()); ok {
				pids, _ := g.Pids()
				for _, pid := range pids {
					if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); strings.Contains(string(b), "while :") {
						n++
					}
				}
			}
		}
		return n == 2
	})
	// The owner's rate depends on whatever else runs on processor 0 (other tests); what
	// the containers got against what the owner got in the same second is the weights'
	// doing: 256 against 1024, a quarter (two containers at their own 1024 shares each,
	// unprotected, would get twice the owner's).
	s0, o0, w1 := subtree(), owner.cpuTime(), time.Now()
	testutil.Eventually(t, time.Minute, "1 s", func() bool { return time.Since(w1) >= time.Second })
	w, ownerGot, theirs := time.Since(w1), owner.cpuTime()-o0, subtree()-s0
	shared := float64(ownerGot) / float64(w)
	ratio := float64(theirs) / float64(max(ownerGot, time.Millisecond))
	t.Logf("the owner's busy loop on processor 0: %.2f of it alone, %.2f beside two busy containers, which got %.2f of what it got", alone, shared, ratio)
	if ratio > 0.5 {
		t.Errorf("two containers beside the owner's busy loop got %.2f times its CPU, want at most a quarter (a half with noise)", ratio)
	}

	// The owner at three quarters of two processors: the containers get half of one.
	ownerShare.Store(75)
	for _, ctr := range ctrs {
		nm.Stop(context.Background(), ctr.GetId())
		completeStatus(t, nm, ctr.GetId(), 20*time.Second)
	}
	quota := func() string {
		b, _ := os.ReadFile(filepath.Join("/sys/fs/cgroup/cpu", hierarchy, "cpu.cfs_quota_us"))
		return strings.TrimSpace(string(b))
	}
	testutil.Eventually(t, 10*time.Second, "the subtree capped at half a processor", func() bool { return quota() == "50000" })
	more := c.containers(t, 2)
	for _, ctr := range more {
		// Unpinned: each could have a processor of its own.
		if _, err := nm.Start(context.Background(), &yarnpb.ContainerLaunchContextProto{Command: []string{"while :; do :; done"}}, ctr); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Eventually(t, 20*time.Second, "the containers busy", func() bool { return subtree() > 100*time.Millisecond })
	c0, w0 := subtree(), time.Now()
	testutil.Eventually(t, time.Minute, "4 s", func() bool { return time.Since(w0) >= 4*time.Second })
	w = time.Since(w0)
	// A 100 ms period: over w, half of w and at most one more period's half.
	used, bound := float64(subtree()-c0)/float64(w), 0.5*float64(w+100*time.Millisecond)/float64(w)
	t.Logf("two busy containers with the owner at 75%% of two processors: %.2f processors (cap 0.5)", used)
	if used > bound {
		t.Errorf("the containers used %.2f processors, over the half the owner left (at most %.2f over %v)", used, bound, w)
	}

	// Critical hours: frozen, their CPU still; a stop still ends them.
	ahead.Store(int64(90 * time.Minute))
	state := func(ctr *yarnpb.ContainerProto) string {
		b, _ := os.ReadFile(filepath.Join("/sys/fs/cgroup/freezer", hierarchy, records.ContainerIDFromProto(ctr.GetId()).String(), "freezer.state"))
		return strings.TrimSpace(string(b))
	}
	testutil.Eventually(t, 10*time.Second, "the containers frozen", func() bool { return state(more[0]) == "FROZEN" && state(more[1]) == "FROZEN" })
	f0, fw := subtree(), time.Now()
	testutil.Eventually(t, time.Minute, "1 s", func() bool { return time.Since(fw) >= time.Second })
	if moved := subtree() - f0; moved > 50*time.Millisecond {
		t.Errorf("frozen containers used %v of CPU", moved)
	}
	nm.Stop(context.Background(), more[0].GetId())
	if st := completeStatus(t, nm, more[0].GetId(), 20*time.Second); st.GetExitStatus() == exitcode.Preempted {
		t.Errorf("a frozen container stopped on request reported PREEMPTED")
	}
	ahead.Store(0)
	testutil.Eventually(t, 10*time.Second, "the other container thawed", func() bool { return state(more[1]) == "THAWED" })
}
