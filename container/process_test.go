package container

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

type buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func launch(t *testing.T, id, script string) (Process, *buffer) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "launch_container.sh")
	if err := os.WriteFile(path, []byte("#!/bin/bash\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	out := &buffer{}
	p, err := ProcessExecutor{}.Launch(context.Background(), Spec{ID: id, Script: path, WorkDir: dir, Env: os.Environ(), Output: out})
	if err != nil {
		t.Fatal(err)
	}
	return p, out
}

func TestExitCodes(t *testing.T) {
	p, out := launch(t, "container_1_0001_01_000001", "echo hi; exit 3\n")
	if code := p.Wait(); code != 3 {
		t.Fatalf("exit %d", code)
	}
	if out.b.String() != "hi\n" {
		t.Fatalf("output %q", out.b.String())
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
	deadline := time.Now().Add(5 * time.Second)
	for len(Stragglers(id, p.Pid())) < 4 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(Stragglers(id, p.Pid())); n < 4 {
		t.Fatalf("only %d processes seen before stop", n)
	}
	start := time.Now()
	p.Stop(200 * time.Millisecond)
	if left := Stragglers(id, p.Pid()); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
	if code := p.Wait(); code != 137 {
		t.Fatalf("a shell ignoring SIGTERM ends by SIGKILL: exit %d", code)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("stop took %v", d)
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
	deadline := time.Now().Add(10 * time.Second)
	for {
		u := TreeUsage(id, p.Pid())
		if u.RSS > 150<<20 && u.VSize >= u.RSS && u.Procs >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("usage %+v", u)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (b *buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
