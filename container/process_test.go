package container

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

// outputFile is a container's output file (Spec.OutputFile), read whole.
type outputFile string

func (o outputFile) String() string {
	b, _ := os.ReadFile(string(o))
	return string(b)
}

func launch(t *testing.T, id, script string) (Process, outputFile) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "launch_container.sh")
	if err := os.WriteFile(path, []byte("#!/bin/bash\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	out := outputFile(filepath.Join(dir, "launch.out"))
	p, err := ProcessExecutor{}.Launch(context.Background(), Spec{ID: id, Script: path, WorkDir: dir, Env: os.Environ(), OutputFile: string(out), Owner: testMark(t, id).Owner})
	if err != nil {
		t.Fatal(err)
	}
	return p, out
}

// testMark is the mark of a test's container id: the owner names this test process and
// test, so that tests running beside each other (other packages' among them) never take
// each other's processes for their own.
func testMark(t testing.TB, id string) Mark {
	return Mark{ID: id, Owner: fmt.Sprintf("test-%d-%s", os.Getpid(), t.Name())}
}

func TestExitCodes(t *testing.T) {
	p, out := launch(t, "container_1_0001_01_000001", "echo hi; exit 3\n")
	if code := p.Wait(); code != 3 {
		t.Fatalf("exit %d", code)
	}
	if out.String() != "hi\n" {
		t.Fatalf("output %q", out.String())
	}
	p, _ = launch(t, "container_1_0001_01_000002", "kill -KILL $$\n")
	if code := p.Wait(); code != 137 {
		t.Fatalf("killed shell: exit %d, want 137", code)
	}
}

// Stop leaves nothing behind: not the group, not a child that started its own session,
// not a double-forked daemon.
func TestStopLeavesNoProcessBehind(t *testing.T) {
	id := "container_1_0001_01_000003"
	p, _ := launch(t, id, "setsid sleep 300 &\n( ( sleep 301 & ) & )\ntrap '' TERM\nsleep 302\n")
	testutil.Poll(5*time.Second, func() bool { return len(Stragglers(testMark(t, id), p.Pid())) >= 4 })
	if n := len(Stragglers(testMark(t, id), p.Pid())); n < 4 {
		t.Fatalf("only %d processes seen before stop", n)
	}
	start := time.Now()
	p.Stop(200 * time.Millisecond)
	if left := Stragglers(testMark(t, id), p.Pid()); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
	if code := p.Wait(); code != 137 {
		t.Fatalf("a shell ignoring SIGTERM ends by SIGKILL: exit %d", code)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("stop took %v", d)
	}
}

// Two NodeManagers on one host (two clusters, or tests beside each other) may both run
// a container_1_0001_01_000001: stopping one, or measuring it, leaves the other's
// processes alone. (The runner's tests once killed the UML test's guest this way.)
func TestStopSparesAnotherOwnersContainerWithTheSameID(t *testing.T) {
	id := "container_1_0001_01_000004"
	launchAs := func(owner string) Process {
		dir := t.TempDir()
		path := filepath.Join(dir, "launch_container.sh")
		if err := os.WriteFile(path, []byte("#!/bin/bash\nsetsid sleep 300 &\nsleep 301\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		p, err := ProcessExecutor{}.Launch(context.Background(), Spec{ID: id, Owner: owner, Script: path, WorkDir: dir, Env: os.Environ()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Stop(0); p.Wait() })
		return p
	}
	mine, theirs := testMark(t, id), Mark{ID: id, Owner: testMark(t, id).Owner + "-other"}
	p, q := launchAs(mine.Owner), launchAs(theirs.Owner)
	if !testutil.Poll(5*time.Second, func() bool { return len(Stragglers(mine, p.Pid())) >= 2 && len(Stragglers(theirs, q.Pid())) >= 2 }) {
		t.Fatalf("processes seen: %v and %v", Stragglers(mine, p.Pid()), Stragglers(theirs, q.Pid()))
	}
	// Only the session each leads and the processes carrying its owner's mark.
	for _, pid := range Stragglers(mine, p.Pid()) {
		if slices.Contains(Stragglers(theirs, q.Pid()), pid) {
			t.Fatalf("process %d counted as both owners'", pid)
		}
	}
	theirsBefore := Stragglers(theirs, q.Pid())
	p.Stop(0)
	p.Wait()
	if left := Stragglers(mine, p.Pid()); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
	for _, pid := range theirsBefore {
		if f, ok := statFields(pid); !ok || f[0] == "Z" || f[0] == "X" {
			t.Errorf("process %d of another owner's container with the same id was killed", pid)
		}
	}
}

func TestParseStat(t *testing.T) {
	f, ok := splitStat([]byte("123 (a (weird) name) S 1 120 119 0 -1"))
	if !ok || f[0] != "S" || f[2] != "120" || f[3] != "119" {
		t.Fatalf("%q %v", f, ok)
	}
}

func TestTreeUsage(t *testing.T) {
	id := "container_1_0001_01_000009"
	// tail keeps its whole (newline-free) input in memory.
	p, _ := launch(t, id, "head -c 200000000 /dev/zero | tail\n")
	defer p.Stop(0)
	var u Usage
	if !testutil.PollEvery(10*time.Second, 50*time.Millisecond, func() bool {
		u = TreeUsage(testMark(t, id), p.Pid())
		return u.RSS > 150<<20 && u.VSize >= u.RSS && u.Procs >= 2
	}) {
		t.Fatalf("usage %+v", u)
	}
}

// A container launched by one executor is taken back by another (a NodeManager that
// restarted): found by its marker whatever pid was recorded, its exit code read from the
// file the wrapper left; one gone before the restart reports that exit code at once, and
// one whose wrapper was killed reports Lost.
func TestReattach(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "launch_container.sh")
	if err := os.WriteFile(script, []byte("#!/bin/bash\nsetsid sleep 30 >/dev/null &\necho started\nread line <fifo\nexit 7\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	id := "container_1_0001_01_000031"
	owner := testMark(t, id).Owner
	spec := Spec{ID: id, Script: script, WorkDir: dir, Env: os.Environ(), OutputFile: filepath.Join(dir, "launch.out"), Owner: owner}
	first, err := ProcessExecutor{}.Launch(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Stop(0)
	testutil.Poll(5*time.Second, func() bool { return len(Stragglers(spec.Mark(), first.Pid())) >= 3 })
	if got := Leaders(owner); got[id] != first.Pid() || len(got) != 1 {
		t.Fatalf("leaders %v, want %s → %d", got, id, first.Pid())
	}
	// The pid not recorded: found by its marker, the launch process and not the process
	// that started a session of its own.
	again, err := ProcessExecutor{}.Reattach(spec, 0)
	if err != nil {
		t.Fatal(err)
	}
	if again.Pid() != first.Pid() {
		t.Fatalf("reattached pid %d, launched %d", again.Pid(), first.Pid())
	}
	select {
	case <-waitChan(again):
		t.Fatal("reattached container reported done while it runs")
	case <-time.After(200 * time.Millisecond):
	}
	if err := os.WriteFile(fifo, []byte("go\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code := again.Wait(); code != 7 {
		t.Fatalf("reattached exit %d, want 7", code)
	}
	if got := Tail(again, spec.OutputFile, 4096); got != "started" {
		t.Fatalf("tail %q", got)
	}
	again.Stop(0) // the session the container started of its own goes too

	// Gone before the restart: the recorded exit code, at once.
	late, _ := ProcessExecutor{}.Reattach(spec, first.Pid())
	if code := late.Wait(); code != 7 || late.Pid() != 0 {
		t.Fatalf("exited container: pid %d exit %d, want 0 and 7", late.Pid(), code)
	}
	if left := Leaders(owner); len(left) != 0 {
		t.Fatalf("leaders left: %v", left)
	}
	// A wrapper killed with SIGKILL leaves no exit code: Lost.
	os.WriteFile(script, []byte("#!/bin/bash\nsleep 300\n"), 0o755)
	killed, err := ProcessExecutor{}.Launch(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	Kill(spec.Mark(), killed.Pid())
	killed.Wait()
	lost, _ := ProcessExecutor{}.Reattach(spec, killed.Pid())
	if code := lost.Wait(); code != exitcode.Lost {
		t.Fatalf("killed wrapper: exit %d, want %d", code, exitcode.Lost)
	}
}

func waitChan(p Process) <-chan struct{} {
	c := make(chan struct{})
	go func() {
		p.Wait()
		close(c)
	}()
	return c
}
