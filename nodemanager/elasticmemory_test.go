package nodemanager

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/conf"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/nodemanager/containers"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

// The elastic control needs what Java's needs: memory cgroups, and the pmem or vmem
// check to say which memory its one limit counts.
func TestElasticMemorySettingsAsJava(t *testing.T) {
	read := func(kv ...string) (Settings, error) { return ReadSettings(confOf(kv...)) }
	s, err := read(keyMemoryEnabled, "true", keyElastic, "true", keyMemoryEnforced, "false")
	if err != nil || !s.Cgroups.Elastic || s.Cgroups.ElasticTimeout != 5*time.Second || !slices.Contains(s.Cgroups.On, keyElastic) {
		t.Fatalf("elastic with memory cgroups: %+v, %v", s.Cgroups, err)
	}
	if l := s.Cgroups.limits(&containers.Container{Ident: &yarnpb.ContainerTokenIdentifierProto{}}, 8); !l.KernelOOMKill || l.MemoryBytes != 0 {
		t.Errorf("a container's limits under the elastic control without memory.enforced: %+v; want no hard limit, the kernel's OOM killer on", l)
	}
	_, err = read(keyMemoryEnabled, "true", keyElastic, "true", "yarn.nodemanager.pmem-check-enabled", "false", "yarn.nodemanager.vmem-check-enabled", "false")
	if err == nil || !strings.Contains(err.Error(), keyElastic) || !strings.Contains(err.Error(), "either virtual or physical memory check") {
		t.Errorf("elastic without a memory check: %v; want Java's refusal naming the key", err)
	}
}

// DefaultOOMHandler's order: OPPORTUNISTIC first, then over their allocation, then the
// latest launched.
func TestOOMCandidateOrder(t *testing.T) {
	at := func(min int) containers.View {
		return containers.View{Started: time.Date(2026, 11, 29, 12, min, 0, 0, time.UTC)}
	}
	cands := []oomCandidate{
		{v: at(1)},                      // 0: guaranteed, within, oldest
		{v: at(5)},                      // 1: guaranteed, within, newest
		{v: at(2), overLimit: true},     // 2: guaranteed, over
		{v: at(0), opportunistic: true}, // 3: opportunistic, within, old
		{v: at(3), opportunistic: true, overLimit: true}, // 4
		{v: at(4), overLimit: true},                      // 5: guaranteed, over, newer
	}
	idx := []int{0, 1, 2, 3, 4, 5}
	slices.SortStableFunc(idx, func(a, b int) int { return oomOrder(cands[a], cands[b]) })
	if want := []int{4, 3, 5, 2, 1, 0}; !slices.Equal(idx, want) {
		t.Errorf("kill order %v, want %v", idx, want)
	}
}

// Containers burst past their allocations while together they fit the node; when they
// reach the node's memory the kernel holds them and the NodeManager kills the one over
// its allocation, launched last, reported KILLED_EXCEEDED_PMEM; the other runs on. Held
// again by a process of no container, it kills the last container (PREEMPTED: within
// its allocation), then, with nothing left to kill, gives the subtree back to the kernel.
func TestElasticMemoryLetsBurstsAndKillsAtTheNodeLimit(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("needs python3")
	}
	dir := t.TempDir()
	c, hierarchy := cgroupNodeIn(t, dir, keyElastic, "true", keyMemoryEnforced, "false", "yarn.nodemanager.resource.memory-mb", "384")
	mem := filepath.Join(c.nm.cgroups.Path("memory"))
	if b, err := os.ReadFile(filepath.Join(mem, "memory.oom_control")); err != nil || !strings.Contains(string(b), "oom_kill_disable 1") {
		t.Fatalf("%s's memory.oom_control: %q, %v; want the OOM killer off", hierarchy, b, err)
	}
	if b, err := os.ReadFile(filepath.Join(mem, "memory.limit_in_bytes")); err != nil || strings.TrimSpace(string(b)) != "402653184" {
		t.Fatalf("the containers' limit %q, %v; want the node's 384 MB", b, err)
	}
	ctrs := c.containers(t, 2) // 128 MB each
	nm := c.client()
	defer nm.Close()
	ctx := context.Background()
	start := func(ctr *yarnpb.ContainerProto, command string) {
		t.Helper()
		if _, err := nm.Start(ctx, &yarnpb.ContainerLaunchContextProto{Command: []string{command}}, ctr); err != nil {
			t.Fatal(err)
		}
	}
	usage := func(ctr *yarnpb.ContainerProto) uint64 {
		g, ok := c.nm.cgroups.Adopt(records.ContainerIDFromProto(ctr.GetId()).String())
		if !ok {
			return 0
		}
		st, err := g.Stats()
		if err != nil {
			return 0
		}
		return st.MemoryUsage
	}
	// The first holds 100 MB, within its 128.
	start(ctrs[0], `exec python3 -c 'import time
b = bytearray(100 << 20)
for i in range(0, len(b), 4096): b[i] = 1
time.sleep(600)'`)
	testutil.Eventually(t, 20*time.Second, "the first container's 100 MB", func() bool { return usage(ctrs[0]) >= 100<<20 })
	// The second bursts to 200 MB (past its 128: allowed, the node has room), says so,
	// waits until told, then asks for 300 MB more.
	burst, more := filepath.Join(dir, "burst"), filepath.Join(dir, "more")
	start(ctrs[1], `exec python3 -c 'import os, sys, time
b = bytearray(200 << 20)
for i in range(0, len(b), 4096): b[i] = 1
os.close(os.open(sys.argv[1], os.O_CREAT))
while not os.path.exists(sys.argv[2]): time.sleep(0.05)
c = bytearray(300 << 20)
for i in range(0, len(c), 4096): c[i] = 1
print(1)' `+burst+` `+more)
	testutil.Eventually(t, 20*time.Second, "the burst", func() bool {
		if _, err := os.Stat(burst); err == nil {
			return true
		}
		if st, err := nm.Status(ctx, ctrs[1].GetId()); err == nil && st.GetState() == yarnpb.ContainerStateProto_C_COMPLETE {
			t.Fatalf("the bursting container ended: %d %s", st.GetExitStatus(), st.GetDiagnostics())
		}
		return false
	})
	// Several monitor intervals (100 ms) pass: no pmem check kills the burst.
	for range 5 {
		time.Sleep(100 * time.Millisecond)
		if st, err := nm.Status(ctx, ctrs[1].GetId()); err != nil || st.GetState() != yarnpb.ContainerStateProto_C_RUNNING {
			t.Fatalf("the bursting container within the node's memory: %v, %v; want it running", st, err)
		}
	}
	if u := usage(ctrs[1]); u < 200<<20 {
		t.Errorf("the burst charges %d bytes; want past 200 MB", u)
	}
	if err := os.WriteFile(more, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	st := completeStatus(t, nm, ctrs[1].GetId(), 30*time.Second)
	if st.GetExitStatus() != exitcode.KilledExceededPmem || !strings.Contains(st.GetDiagnostics(), "killed by the elastic memory control") ||
		!strings.Contains(st.GetDiagnostics(), "beyond the 'PHYSICAL' memory limit") {
		t.Errorf("the container over its allocation: %d %q; want KILLED_EXCEEDED_PMEM by the elastic control", st.GetExitStatus(), st.GetDiagnostics())
	}
	if under, err := c.nm.cgroups.UnderOOM(); err != nil || under {
		t.Errorf("the containers are still held: %v, %v", under, err)
	}
	if st, err := nm.Status(ctx, ctrs[0].GetId()); err != nil || st.GetState() != yarnpb.ContainerStateProto_C_RUNNING {
		t.Fatalf("the container within its allocation: %v, %v; want it running on", st, err)
	}

	// A process of no container in the containers' cgroup takes 400 MB: held again, the
	// NodeManager kills the one container left (within its allocation: PREEMPTED, not a
	// failure of its own), and, still held with nothing to kill, gives the subtree back
	// to the kernel: limit lifted, OOM killer on, and the stray process gets its memory.
	hog := exec.Command("python3", "-c", `import sys
sys.stdin.readline()
b = bytearray(400 << 20)
for i in range(0, len(b), 4096): b[i] = 1
print("got it")`)
	in, err := hog.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	hog.Stdout = &out
	if err := hog.Start(); err != nil {
		t.Fatal(err)
	}
	defer hog.Process.Kill()
	if err := os.WriteFile(filepath.Join(mem, "cgroup.procs"), []byte(strconv.Itoa(hog.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	in.Write([]byte("go\n"))
	st = completeStatus(t, nm, ctrs[0].GetId(), 30*time.Second)
	if st.GetExitStatus() != exitcode.Preempted || !strings.Contains(st.GetDiagnostics(), "was killed by the elastic memory control") {
		t.Errorf("the container within its allocation: %d %q; want PREEMPTED by the elastic control", st.GetExitStatus(), st.GetDiagnostics())
	}
	if err := hog.Wait(); err != nil || strings.TrimSpace(out.String()) != "got it" {
		t.Errorf("the stray process: %v, %q; want its memory once the control gave up", err, out.String())
	}
	if b, err := os.ReadFile(filepath.Join(mem, "memory.oom_control")); err != nil || !strings.Contains(string(b), "oom_kill_disable 0") {
		t.Errorf("after the control gave up, memory.oom_control: %q, %v; want the OOM killer on", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(mem, "memory.limit_in_bytes")); err != nil || len(strings.TrimSpace(string(b))) < 15 {
		t.Errorf("after the control gave up, the containers' limit: %q, %v; want none", b, err)
	}
}

// confOf is a configuration with the keys and values kv set.
func confOf(kv ...string) *conf.Configuration {
	c := conf.New()
	for i := 0; i+1 < len(kv); i += 2 {
		c.Set(kv[i], kv[i+1])
	}
	return c
}
