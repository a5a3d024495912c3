package cgroups

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/opencontainers/cgroups"
	"golang.org/x/sys/unix"
)

// What the elastic memory control needs of the subtree (Java's
// CGroupElasticMemoryController): the kernel's OOM killer off for the containers
// together, so that reaching their common limit pauses them instead of killing one the
// kernel picks; a notification when that happens; and whether it still does. All of it
// is cgroups v1's memory.oom_control: v2 has no way to turn a cgroup's OOM killer off.

// errOOMControlV2 says why the elastic control needs v1.
var errOOMControlV2 = errors.New("cgroups v2 cannot turn the OOM killer off for a cgroup (there is no memory.oom_control): the elastic memory control needs the v1 memory controller")

// oomControl is the subtree's memory.oom_control, or why there is none.
func (t *Subtree) oomControl() (string, error) {
	if t.version != V1 {
		return "", errOOMControlV2
	}
	p := t.Path("memory")
	if p == "" {
		return "", errors.New("the containers do not join the memory controller")
	}
	return filepath.Join(p, "memory.oom_control"), nil
}

// SetOOMKiller turns the kernel's OOM killer on or off for the containers' common
// limit. Off, a container cgroup created after inherits it (the kernel copies the
// parent's setting): Limits.KernelOOMKill turns it back on for each.
func (t *Subtree) SetOOMKiller(on bool) error {
	f, err := t.oomControl()
	if err != nil {
		return err
	}
	v := "1"
	if on {
		v = "0"
	}
	if err := os.WriteFile(f, []byte(v), 0o644); err != nil {
		return fmt.Errorf("set %s: %w", f, err)
	}
	return nil
}

// UnderOOM says the containers together are at their limit with the OOM killer off:
// the kernel holds whichever of them asks for memory until some is freed.
func (t *Subtree) UnderOOM() (bool, error) {
	f, err := t.oomControl()
	if err != nil {
		return false, err
	}
	b, err := os.ReadFile(f)
	if err != nil {
		return false, err
	}
	for line := range bytes.Lines(b) {
		if k, v, ok := bytes.Cut(bytes.TrimSpace(line), []byte(" ")); ok && string(k) == "under_oom" {
			return string(v) == "1", nil
		}
	}
	return false, fmt.Errorf("%s has no under_oom line", f)
}

// SetMemorySwapLimit caps the containers' memory and swap together at bytes (v1
// memory.memsw.limit_in_bytes; the elastic control of virtual memory). The memory limit
// stays what SetMemoryLimit wrote, and must be set first: the kernel refuses a swap
// limit under it.
func (t *Subtree) SetMemorySwapLimit(bytes int64) error {
	if bytes <= 0 {
		bytes = -1
	}
	// Under the lock, so that a SetMemoryLimit meanwhile is not written over.
	t.mu.Lock()
	defer t.mu.Unlock()
	mem := t.memory
	if !t.memorySet {
		mem = -1
	}
	if err := t.set(&cgroups.Resources{Memory: mem, MemorySwap: bytes}, "memory"); err != nil {
		return fmt.Errorf("%w (is swap accounting on? memory.memsw.limit_in_bytes)", err)
	}
	return nil
}

// OOMListener tells of the subtree's OOM events: an eventfd the kernel signals through
// cgroup.event_control each time the containers together reach their limit (and once
// at the start if they are there already).
type OOMListener struct {
	// C receives a value per event (events that come while one waits are merged); it
	// is closed when the listener stops: Close, or the subtree removed.
	C    <-chan struct{}
	efd  *os.File
	done chan struct{}
}

// ListenOOM registers for the subtree's OOM events. The goroutine it starts is the
// listener's: Close stops it.
func (t *Subtree) ListenOOM() (*OOMListener, error) {
	f, err := t.oomControl()
	if err != nil {
		return nil, err
	}
	ctl, err := os.Open(f)
	if err != nil {
		return nil, err
	}
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		ctl.Close()
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	// Non-blocking, the file is the runtime poller's: Close wakes a pending Read.
	efd := os.NewFile(uintptr(fd), "oom-eventfd")
	reg := fmt.Sprintf("%d %d", fd, ctl.Fd())
	if err := os.WriteFile(filepath.Join(filepath.Dir(f), "cgroup.event_control"), []byte(reg), 0o200); err != nil {
		efd.Close()
		ctl.Close()
		return nil, fmt.Errorf("register for OOM events of %s: %w", filepath.Dir(f), err)
	}
	ch := make(chan struct{}, 1)
	l := &OOMListener{C: ch, efd: efd, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		defer close(ch)
		defer ctl.Close()
		buf := make([]byte, 8)
		for {
			if _, err := efd.Read(buf); err != nil {
				return
			}
			// The kernel signals the eventfd also when the cgroup goes away.
			if _, err := os.Stat(f); err != nil {
				return
			}
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}()
	return l, nil
}

// Close stops listening and waits for the listener's goroutine to end.
func (l *OOMListener) Close() error {
	err := l.efd.Close()
	<-l.done
	return err
}
