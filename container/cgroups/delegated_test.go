package cgroups

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// delegatedEnv names, in the helper's environment, the subtree delegated to it.
const delegatedEnv = "BOBBIN_TEST_DELEGATED_HIERARCHY"

// nobody is the unprivileged user the delegated subtree is given to.
const nobody = 65534

// A NodeManager that is not root works in a subtree the administrator delegated to its
// user (on v1: the subtree's directories and files chowned to it in each controller): it
// creates its containers' cgroups there, sets their limits, moves its processes in, and
// kills and removes them, with no privilege. The helper below does that as nobody.
func TestDelegatedSubtreeWithoutRoot(t *testing.T) {
	if os.Getenv(delegatedEnv) != "" {
		t.Skip("the helper's own run")
	}
	if os.Getenv(guestV2Env) != "" {
		t.Skip("v1 delegation; the guest runs the v2 tests")
	}
	// The administrator's part, as root: the subtree in every controller, given to nobody.
	s := Settings{Version: V1, CPU: true, Memory: true, Pids: true}
	tree := testSubtree(t, s)
	hierarchy := filepath.Base(tree.Path("memory"))
	for _, c := range tree.Controllers() {
		root := tree.Path(c)
		err := filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, nobody, nobody)
		})
		if err != nil {
			t.Fatalf("delegate %s: %v", root, err)
		}
	}
	// The test binary, where nobody may run it.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "bobbin-delegated-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "cgroups.test")
	if err := copyFile(self, bin); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run", "^TestDelegatedSubtreeHelper$", "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), delegatedEnv+"="+hierarchy, "TMPDIR=/tmp", "HOME=/tmp")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.CombinedOutput()
	t.Logf("the helper, as nobody:\n%s", out)
	if err != nil || !strings.Contains(string(out), "--- PASS: TestDelegatedSubtreeHelper") {
		t.Fatalf("the unprivileged NodeManager's work in its delegated subtree failed: %v", err)
	}
}

// TestDelegatedSubtreeHelper is the unprivileged NodeManager's work, run as nobody by
// TestDelegatedSubtreeWithoutRoot.
func TestDelegatedSubtreeHelper(t *testing.T) {
	hierarchy := os.Getenv(delegatedEnv)
	if hierarchy == "" {
		t.Skip("run by TestDelegatedSubtreeWithoutRoot")
	}
	if os.Geteuid() == 0 {
		t.Fatal("the helper runs as root: it proves nothing")
	}
	tree, err := Open(Settings{Version: V1, CPU: true, Memory: true, Pids: true, Hierarchy: hierarchy})
	if err != nil {
		t.Fatalf("open the delegated subtree: %v", err)
	}
	if err := tree.SetCPULimit(1.5); err != nil {
		t.Fatalf("the subtree's own CPU limit: %v", err)
	}
	g, err := tree.Create("container_1_0001_01_000061", Limits{CPUShares: 2048, MemoryBytes: 64 << 20, PidsMax: 32})
	if err != nil {
		t.Fatalf("a container's cgroup: %v", err)
	}
	// An escape stays in; a hog over its limit is OOM-killed.
	cmd := exec.Command("/bin/bash", "-c", `setsid sleep 300 & exec python3 -c 'b = bytearray(256 << 20)
for i in range(0, len(b), 4096): b[i] = 1'`)
	if err := g.Start(cmd); err != nil {
		t.Fatalf("start in the cgroup: %v", err)
	}
	err = cmd.Wait()
	if ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus); err == nil || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("the hog ended with %v, want SIGKILL from the OOM killer", err)
	}
	if n := g.OOMKills(); n < 1 {
		t.Errorf("OOM kills counted: %d", n)
	}
	pids, _ := g.Pids()
	if len(pids) != 1 {
		t.Errorf("the escaped sleep is not (alone) in the cgroup: %v", pids)
	}
	if err := g.Destroy(); err != nil {
		t.Fatalf("kill and remove the cgroup: %v", err)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("process %d survived", pid)
		}
	}
	if g.Exists() {
		t.Error("the cgroup is still there")
	}
	t.Logf("worked as uid %d in %s", os.Geteuid(), tree.Path("memory"))
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
