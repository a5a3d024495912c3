package cgroups

import (
	"bytes"
	"errors"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/opencontainers/cgroups"
)

// The elastic control's view of a subtree: with the OOM killer off, containers that
// together reach the subtree's limit are held, not killed; the listener hears of it,
// UnderOOM says so, and killing one ends the hold.
func TestSubtreeOOMHoldIsHeardAndEnded(t *testing.T) {
	tree := testSubtree(t, Settings{Version: V1, Memory: true})
	if tree.Version() == V2 {
		// v2 cannot hold a cgroup at its limit: the control is refused, with the reason.
		if err := tree.SetOOMKiller(false); !errors.Is(err, errOOMControlV2) {
			t.Fatalf("SetOOMKiller on v2: %v, want %v", err, errOOMControlV2)
		}
		if _, err := tree.ListenOOM(); !errors.Is(err, errOOMControlV2) {
			t.Fatalf("ListenOOM on v2: %v, want %v", err, errOOMControlV2)
		}
		return
	}
	if err := tree.SetOOMKiller(false); err != nil {
		t.Fatal(err)
	}
	if err := tree.SetMemoryLimit(96 << 20); err != nil {
		t.Fatal(err)
	}
	l, err := tree.ListenOOM()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// Each container within nothing of its own: only the common limit applies.
	small, err := tree.Create("container_1_0001_01_000002", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	hog, err := tree.Create("container_1_0001_01_000003", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	quiet := start(t, small, `exec python3 -c 'import time
b = bytearray(24 << 20)
for i in range(0, len(b), 4096): b[i] = 1
time.sleep(600)'`)
	waitFor(t, "the small container's memory", func() bool {
		st, err := small.Stats()
		return err == nil && st.MemoryUsage >= 24<<20
	})
	greedy := start(t, hog, `exec python3 -c 'b = bytearray(256 << 20)
for i in range(0, len(b), 4096): b[i] = 1
print("survived")'`)
	select {
	case <-l.C:
	case <-time.After(time.Minute):
		t.Fatal("no OOM event within a minute")
	}
	under, err := tree.UnderOOM()
	if err != nil || !under {
		t.Fatalf("UnderOOM = %v, %v after the event; want true", under, err)
	}
	used, err := subtreeUsage(tree)
	if err != nil || used < 90<<20 || used > 96<<20 {
		t.Errorf("the subtree charges %d bytes (%v); want at its 96 MB limit", used, err)
	}
	// Held, not killed: the kernel leaves the choice to whoever listens.
	if n := hog.OOMKills(); n != 0 {
		t.Errorf("the kernel OOM-killed %d processes with its killer off", n)
	}
	if err := hog.Kill(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	greedy.Wait()
	waitFor(t, "the hold to end", func() bool {
		under, err := tree.UnderOOM()
		return err == nil && !under
	})
	if !alive(quiet.Process.Pid) {
		t.Error("the container within the limit did not survive the hold")
	}
}

// A container with a hard limit of its own under a subtree whose OOM killer is off
// inherits it off; KernelOOMKill turns it back on, so that it is killed at its own limit
// as without the elastic control, not held there.
func TestKernelOOMKillUnderAnElasticSubtree(t *testing.T) {
	tree := testSubtree(t, Settings{Version: V1, Memory: true})
	if tree.Version() == V2 {
		t.Skip("v1 only: the elastic control is refused on v2 (TestSubtreeOOMHoldIsHeardAndEnded)")
	}
	if err := tree.SetOOMKiller(false); err != nil {
		t.Fatal(err)
	}
	if err := tree.SetMemoryLimit(512 << 20); err != nil {
		t.Fatal(err)
	}
	g, err := tree.Create("container_1_0001_01_000004", Limits{MemoryBytes: 48 << 20, KernelOOMKill: true})
	if err != nil {
		t.Fatal(err)
	}
	cmd := start(t, g, `exec python3 -c 'b = bytearray(128 << 20)
for i in range(0, len(b), 4096): b[i] = 1
print("survived")'`)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Fatal("the hog over its own limit is held, not killed")
	}
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if err == nil || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the hog ended with %v, want SIGKILL from the OOM killer", err)
	}
	if under, err := tree.UnderOOM(); err != nil || under {
		t.Errorf("the subtree is held: %v, %v", under, err)
	}
}

// Closing a listener ends its goroutine and closes its channel.
func TestOOMListenerClose(t *testing.T) {
	tree := testSubtree(t, Settings{Version: V1, Memory: true})
	if tree.Version() == V2 {
		t.Skip("v1 only: the elastic control is refused on v2 (TestSubtreeOOMHoldIsHeardAndEnded)")
	}
	l, err := tree.ListenOOM()
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-l.C; ok {
		t.Error("an event after Close")
	}
}

// subtreeUsage is what the kernel charges the containers together (memory.usage_in_bytes
// of the subtree; v2 memory.current).
func subtreeUsage(t *Subtree) (int64, error) {
	p := t.Path("memory")
	name := "memory.usage_in_bytes"
	if t.version == V2 {
		name = "memory.current"
	}
	if p == "" {
		return 0, errors.New("the containers do not join the memory controller")
	}
	v, err := cgroups.ReadFile(p, name)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(string(bytes.TrimSpace([]byte(v))), 10, 64)
}
