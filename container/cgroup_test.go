package container

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/container/cgroups"
	"github.com/bobbin-yarn/bobbin/container/cgroups/cgroupstest"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

func launchIn(t *testing.T, e ProcessExecutor, id, script string, l cgroups.Limits) (Process, Spec) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "launch_container.sh")
	if err := os.WriteFile(path, []byte("#!/bin/bash\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := Spec{ID: id, Script: path, WorkDir: dir, Env: os.Environ(), OutputFile: filepath.Join(dir, "launch.out"), Limits: l, Owner: testMark(t, id).Owner}
	p, err := e.Launch(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(0); p.Wait() })
	return p, spec
}

// hog is a process that leaves its container's session, process group and environment
// marker (the attacker), then holds 300 MB.
const hog = `setsid env -i python3 -c 'import time
b = bytearray(300 << 20)
for i in range(0, len(b), 4096): b[i] = 1
open("ready", "w").close()
time.sleep(300)' &
sleep 300
`

// The escape the marker scan misses: the process is counted in the container's memory
// and dies with it.
func TestCgroupCountsAndKillsTheEscapedProcess(t *testing.T) {
	tree := cgroupstest.Subtree(t, cgroups.Settings{Version: cgroups.V1, Memory: true})
	id := "container_1_0001_01_000101"
	p, spec := launchIn(t, ProcessExecutor{Cgroups: tree}, id, hog, cgroups.Limits{})
	testutil.Poll(time.Minute, func() bool { return fileIs(filepath.Join(spec.WorkDir, "ready")) })
	if u := p.Usage(); u.RSS < 280<<20 {
		t.Fatalf("the container's memory: %d bytes, without the escaped process's 300 MB", u.RSS)
	}
	if u := TreeUsage(spec.Mark(), p.Pid()); u.RSS > 200<<20 {
		t.Logf("(the marker scan found it too: %d bytes)", u.RSS)
	}
	g, _ := tree.Adopt(id)
	pids, _ := g.Pids()
	p.Stop(time.Second)
	p.Wait()
	for _, pid := range pids {
		if f, ok := statFields(pid); ok && f[0] != "Z" && f[0] != "X" {
			t.Errorf("process %d outlived its container", pid)
		}
	}
	if g.Exists() {
		t.Error("the container's cgroup was not removed")
	}
}

// A container over its hard memory limit is ended by the kernel and reported as Java
// reports one over its physical memory.
func TestCgroupOOMIsReportedAsPmem(t *testing.T) {
	tree := cgroupstest.Subtree(t, cgroups.Settings{Version: cgroups.V1, Memory: true})
	p, _ := launchIn(t, ProcessExecutor{Cgroups: tree}, "container_1_0001_01_000102",
		"python3 -c 'b = bytearray(256 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1'\n", cgroups.Limits{MemoryBytes: 64 << 20})
	if code := p.Wait(); code != 137 {
		t.Fatalf("exit %d, want 137: the script's python killed", code)
	}
	p.Stop(0)
	if e, ok := p.(MemoryEnforcer); !ok || !e.MemoryEnforced() {
		t.Error("a hard-limited container should tell the NodeManager its memory is enforced")
	}
	exit, diag, ok := p.(Verdicter).Verdict()
	if !ok || exit != exitcode.KilledExceededPmem || !strings.Contains(diag, "is running beyond physical memory limits") {
		t.Fatalf("verdict %v %d %q, want KILLED_EXCEEDED_PMEM", ok, exit, diag)
	}
}

// A restarted NodeManager takes the container back by its cgroup: stopping it then
// ends what escaped its session too.
func TestCgroupReattachKillsWhatEscaped(t *testing.T) {
	tree := cgroupstest.Subtree(t, cgroups.Settings{Version: cgroups.V1})
	id := "container_1_0001_01_000103"
	e := ProcessExecutor{Cgroups: tree}
	_, spec := launchIn(t, e, id, "setsid env -i sleep 300 &\nsleep 301\n", cgroups.Limits{})
	g, _ := tree.Adopt(id)
	testutil.Poll(time.Minute, func() bool { pids, _ := g.Pids(); return len(pids) >= 3 })
	pids, _ := g.Pids()
	q, err := e.Reattach(spec, 0)
	if err != nil {
		t.Fatal(err)
	}
	q.Stop(0)
	q.Wait()
	for _, pid := range pids {
		if f, ok := statFields(pid); ok && f[0] != "Z" && f[0] != "X" {
			t.Errorf("process %d outlived its container", pid)
		}
	}
}

func fileIs(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
