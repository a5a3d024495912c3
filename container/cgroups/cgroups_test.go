package cgroups

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// guestV2Env, set to a cgroup2 mount, runs every test on that v2 hierarchy: in a User-Mode
// Linux guest whose own kernel has the controllers on v2 (TestCgroupsV2InAUMLGuest),
// where the host binds them to v1.
const guestV2Env = "BOBBIN_TEST_CGROUPS_V2_MOUNT"

// testSubtree opens a subtree of its own for the test (removed after it), or skips when
// this machine gives the test no cgroups to write.
func testSubtree(t *testing.T, s Settings) *Subtree {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create cgroups")
	}
	if m := os.Getenv(guestV2Env); m != "" {
		s.Version, s.MountPath = V2, m
	}
	s.Hierarchy = fmt.Sprintf("bobbin-test-%d-%s", os.Getpid(), filepath.Base(t.Name()))
	tree, err := Open(s)
	if err != nil {
		t.Skipf("no cgroups for the test here: %v", err)
	}
	t.Cleanup(func() { tree.Remove() })
	return tree
}

// waitFor polls cond until it holds, failing after a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func start(t *testing.T, g *Group, script string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("/bin/bash", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := g.Start(cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Kill(5 * time.Second); cmd.Wait() })
	return cmd
}

func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// A zombie has ended; only its parent's wait is left.
	for i := len(b) - 1; i > 0; i-- {
		if b[i] == ')' {
			return len(b) > i+2 && b[i+2] != 'Z'
		}
	}
	return true
}

// The processes a container starts stay in its cgroup however they leave its session
// (setsid, a double fork, a cleared environment), and Kill ends every one of them.
func TestEscapesStayInTheCgroupAndDie(t *testing.T) {
	for _, v := range []Version{V1, V2} {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			tree := testSubtree(t, Settings{Version: v})
			g, err := tree.Create("container_1_0001_01_000002", Limits{})
			if err != nil {
				t.Fatal(err)
			}
			cmd := start(t, g, `setsid env -i /bin/sleep 300 & (setsid /bin/sleep 301 &) ; (/bin/sleep 302 &) ; exec /bin/sleep 303`)
			var pids []int
			waitFor(t, "the four sleeps in the cgroup", func() bool {
				pids, _ = g.Pids()
				n := 0
				for _, pid := range pids {
					if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && len(b) > 10 && string(b[:10]) == "/bin/sleep" {
						n++
					}
				}
				return n == 4
			})
			if err := g.Kill(10 * time.Second); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()
			for _, pid := range pids {
				if alive(pid) {
					t.Errorf("process %d survived the kill", pid)
				}
			}
			if err := g.Destroy(); err != nil {
				t.Fatal(err)
			}
			if g.Exists() {
				t.Error("the cgroup is still there")
			}
		})
	}
}

// A process the NodeManager could not move into the cgroup never runs the command.
func TestStartRunsNothingOutsideTheCgroup(t *testing.T) {
	tree := testSubtree(t, Settings{Version: V1})
	g, err := tree.Create("container_1_0001_01_000003", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	g.Destroy() // Add fails now: the directories are gone
	cmd := exec.Command("/bin/sh", "-c", "touch "+marker)
	if err := g.Start(cmd); err == nil {
		cmd.Wait()
		t.Fatal("Start succeeded without a cgroup")
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran outside its cgroup")
	}
}

// A process over the hard memory limit is killed by the kernel and counted.
func TestMemoryLimitOOMKills(t *testing.T) {
	tree := testSubtree(t, Settings{Version: V1, Memory: true})
	g, err := tree.Create("container_1_0001_01_000004", Limits{MemoryBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	// 256 MB touched page by page, far past the 64 MB limit.
	cmd := start(t, g, `exec python3 -c 'b = bytearray(256 << 20)
for i in range(0, len(b), 4096): b[i] = 1
print("survived")'`)
	err = cmd.Wait()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if err == nil || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the memory hog ended with %v, want SIGKILL from the OOM killer", err)
	}
	if n := g.OOMKills(); n < 1 {
		t.Errorf("OOM kills counted: %d", n)
	}
	st, err := g.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.MemoryLimit != 64<<20 || st.MemoryMaxUsage < 60<<20 {
		t.Errorf("memory limit %d, peak %d: want 64 MB and a peak near it", st.MemoryLimit, st.MemoryMaxUsage)
	}
}

// Two CPU-bound containers of 1 and 3 vcores (Java's 1024 shares per vcore) on one
// contended core get about 1:3 of it, as their cgroups' CPU accounting measures.
func TestCPUSharesSplitAContendedCore(t *testing.T) {
	tree := testSubtree(t, Settings{Version: V1, CPU: true})
	if tree.Path("cpuacct") == "" {
		t.Skip("no cpuacct controller to measure with")
	}
	var groups []*Group
	for i, vcores := range []uint64{1, 3} {
		g, err := tree.Create(fmt.Sprintf("container_1_0001_01_00001%d", i), Limits{CPUShares: 1024 * vcores})
		if err != nil {
			t.Fatal(err)
		}
		groups = append(groups, g)
		start(t, g, `exec taskset -c 0 /bin/bash -c 'while :; do :; done'`)
	}
	cpu := func(g *Group) time.Duration {
		st, err := g.Stats()
		if err != nil {
			t.Fatal(err)
		}
		return st.CPU
	}
	// Measured from when both run, over 3 s of their CPU together.
	waitFor(t, "both busy", func() bool { return cpu(groups[0]) > 50*time.Millisecond && cpu(groups[1]) > 50*time.Millisecond })
	a0, b0 := cpu(groups[0]), cpu(groups[1])
	waitFor(t, "3 s of CPU", func() bool { return cpu(groups[0])-a0+cpu(groups[1])-b0 > 3*time.Second })
	a, b := cpu(groups[0])-a0, cpu(groups[1])-b0
	ratio := float64(b) / float64(a)
	t.Logf("1 vcore: %v, 3 vcores: %v of CPU: 1:%.2f", a, b, ratio)
	low := 2.4
	if os.Getenv(guestV2Env) != "" {
		// A User-Mode Linux guest's scheduler clock counts 10 ms ticks (HZ=100), which
		// blurs the split: 1:2.39 and 1:2.41 in runs here, where the host measures 1:3.00.
		low = 2.2
	}
	if ratio < low || ratio > 3.75 {
		t.Errorf("CPU split 1:%.2f, want about 1:3", ratio)
	}
}

// A container capped at a quarter of a processor (strict resource usage) gets no more.
func TestCPUQuotaCaps(t *testing.T) {
	tree := testSubtree(t, Settings{Version: V1, CPU: true})
	if tree.Path("cpuacct") == "" {
		t.Skip("no cpuacct controller to measure with")
	}
	g, err := tree.Create("container_1_0001_01_000020", Limits{CPUShares: 1024, CPUCores: 0.25})
	if err != nil {
		t.Fatal(err)
	}
	start(t, g, `while :; do :; done`)
	cpu := func() time.Duration {
		st, err := g.Stats()
		if err != nil {
			t.Fatal(err)
		}
		return st.CPU
	}
	waitFor(t, "busy", func() bool { return cpu() > 10*time.Millisecond })
	// Java's period for a quarter processor is 1 s: over a window of w, the most the
	// quota lets through is a quarter of w plus one period's quota.
	c0, w0 := cpu(), time.Now()
	waitFor(t, "4 s", func() bool { return time.Since(w0) > 4*time.Second })
	w := time.Since(w0)
	quota := 0.25
	if os.Getenv(guestV2Env) != "" {
		quota += 0.01 // the guest enforces the quota at its 10 ms ticks: up to one more per period
	}
	share, bound := float64(cpu()-c0)/float64(w), quota*float64(w+time.Second)/float64(w)
	t.Logf("CPU share under a 0.25 quota: %.3f (at most %.3f over %v)", share, bound, w)
	if share > bound {
		t.Errorf("the container used %.3f of a processor, over its 0.25", share)
	}
}

// A fork bomb in a container stops at its pids limit and dies whole.
func TestPidsLimitStopsAForkBomb(t *testing.T) {
	tree := testSubtree(t, Settings{Version: V1, Pids: true})
	g, err := tree.Create("container_1_0001_01_000030", Limits{PidsMax: 40})
	if err != nil {
		t.Fatal(err)
	}
	start(t, g, `bomb() { bomb | bomb & }; bomb; wait`)
	waitFor(t, "the bomb at its limit", func() bool {
		st, err := g.Stats()
		return err == nil && st.Pids >= 30
	})
	if st, _ := g.Stats(); st.Pids > 40 {
		t.Errorf("%d processes, over the limit of 40", st.Pids)
	}
	if err := g.Kill(20 * time.Second); err != nil {
		t.Fatal(err)
	}
}

// Java's getOverallLimits, value for value.
func TestCPULimitsAsJava(t *testing.T) {
	for _, c := range []struct {
		cpus   float64
		period uint64
		quota  int64
	}{
		{2, 500000, 1000000},
		{0.5, 1000000, 500000},
		{1, 1000000, 1000000},
		{0.0005, 1000000, -1},
		{0.001, 1000000, -1},
		{0.01, 1000000, 10000},
		{2000, 1000000, -1}, // a period under 1000 µs: no limit
		{0, 1000000, -1},
	} {
		p, q := CPULimits(c.cpus)
		if p != c.period || q != c.quota {
			t.Errorf("CPULimits(%v) = %d, %d; Java gives %d, %d", c.cpus, p, q, c.period, c.quota)
		}
	}
}

// A container denied a GPU's device cannot open it; the device it was given opens as far
// as the driver (none here: "no such device"), on v1's devices controller and v2's eBPF.
func TestDeniedDevicesCannotBeOpened(t *testing.T) {
	for _, v := range []Version{V1, V2} {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			tree := testSubtree(t, Settings{Version: v, Devices: v == V1})
			dir := t.TempDir()
			for _, minor := range []int{7, 8} {
				// Nodes of the NVIDIA major with no driver behind them.
				if err := syscall.Mknod(filepath.Join(dir, fmt.Sprint("nvidia", minor)), syscall.S_IFCHR|0o666, int(195<<8|minor)); err != nil {
					t.Skipf("mknod: %v", err)
				}
			}
			g, err := tree.Create("container_1_0001_01_000040", Limits{DenyDevices: []DeviceNumber{{195, 8}}})
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("/bin/bash", "-c", "exec 2>&1; cat "+dir+"/nvidia7; cat "+dir+"/nvidia8; true")
			var b strings.Builder
			cmd.Stdout = &b
			if err := g.Start(cmd); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()
			got := b.String()
			if !strings.Contains(got, "nvidia7: No such device") || !strings.Contains(got, "nvidia8: Operation not permitted") {
				t.Errorf("the container opening its GPU and another's:\n%s", got)
			}
		})
	}
}
