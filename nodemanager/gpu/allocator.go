package gpu

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"
)

// ReleaseWait is how long a container waits for GPUs still held by ending containers,
// as Java's GpuResourceAllocator waits (120 one-second rounds).
const ReleaseWait = 120 * time.Second

// Allocator says which container holds which of the node's GPUs, as Java's
// GpuResourceAllocator: a container asking for n gets the n free GPUs of lowest index.
// Its lock is its own; it calls nothing while holding it.
type Allocator struct {
	devices []Device

	// wait bounds Assign's wait for GPUs being released (ReleaseWait unless a test
	// says otherwise).
	wait time.Duration

	mu      sync.Mutex
	holder  map[int]string // minor number → container id
	freed   chan struct{}  // closed, and replaced, when a Release frees a GPU
	waiting int            // Assigns waiting for a Release
}

// NewAllocator is an allocator over the node's GPUs, none held.
func NewAllocator(devices []Device) *Allocator {
	d := append([]Device(nil), devices...)
	sort.Slice(d, func(a, b int) bool { return d[a].Index < d[b].Index })
	return &Allocator{devices: d, wait: ReleaseWait, holder: map[int]string{}, freed: make(chan struct{})}
}

// Devices are the node's GPUs, by index.
func (a *Allocator) Devices() []Device { return append([]Device(nil), a.devices...) }

// Assign gives container n GPUs. A container that holds some already (a relaunch)
// keeps them. More than the node has fails at once. The RM gives a node no more GPU
// containers than it has GPUs, but it frees a killed application's GPUs before this node
// has even heard of the kill: with too few free, Assign waits for Releases, up to the
// allocator's wait or ctx's end (the container killed meanwhile). Java's
// GpuResourceAllocator waits the same 120 s, but only for GPUs of containers it already
// stops, so that race fails the container there. Still too few is an error: the
// container fails, as Java's does.
func (a *Allocator) Assign(ctx context.Context, container string, n int) ([]Device, error) {
	if n > len(a.devices) {
		return nil, a.tooFew(n, -1)
	}
	var deadline <-chan time.Time
	for {
		devs, free, freed := a.tryAssign(container, n)
		if devs != nil || n <= 0 {
			return devs, nil
		}
		if deadline == nil {
			if a.wait <= 0 {
				return nil, a.tooFew(n, free)
			}
			t := time.NewTimer(a.wait)
			defer t.Stop()
			deadline = t.C
			a.mu.Lock()
			a.waiting++
			a.mu.Unlock()
			defer func() {
				a.mu.Lock()
				a.waiting--
				a.mu.Unlock()
			}()
		}
		select {
		case <-freed:
		case <-deadline:
			return nil, a.tooFew(n, free)
		case <-ctx.Done():
			return nil, fmt.Errorf("%w while waiting for %d GPUs to be released", ctx.Err(), n)
		}
	}
}

// Waiting counts the containers waiting for GPUs to be released.
func (a *Allocator) Waiting() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.waiting
}

// Free counts the GPUs no container holds.
func (a *Allocator) Free() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.devices) - len(a.holder)
}

func (a *Allocator) tooFew(n, free int) error {
	if free < 0 {
		return fmt.Errorf("failed to find enough GPUs: %d requested, the node has %d", n, len(a.devices))
	}
	return fmt.Errorf("failed to find enough GPUs: %d requested, %d available of %d", n, free, len(a.devices))
}

// tryAssign gives the container its GPUs if enough are free; if not, it says how many
// are and returns the channel the next Release closes.
func (a *Allocator) tryAssign(container string, n int) (devs []Device, free int, freed <-chan struct{}) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if held := a.heldLocked(container); len(held) > 0 || n <= 0 {
		return held, 0, nil
	}
	var avail []Device
	for _, d := range a.devices {
		if _, taken := a.holder[d.Minor]; !taken {
			avail = append(avail, d)
		}
	}
	if len(avail) < n {
		return nil, len(avail), a.freed
	}
	for _, d := range avail[:n] {
		a.holder[d.Minor] = container
	}
	return avail[:n], len(avail), nil
}

// Restore gives a container back the GPUs it held before a NodeManager restart.
func (a *Allocator) Restore(container string, minors []int) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, m := range minors {
		if !a.knownLocked(m) {
			return fmt.Errorf("container %s held GPU minor %d, which this node no longer offers", container, m)
		}
		if h, taken := a.holder[m]; taken && h != container {
			return fmt.Errorf("container %s held GPU minor %d, which %s holds", container, m, h)
		}
	}
	for _, m := range minors {
		a.holder[m] = container
	}
	return nil
}

// Release frees a container's GPUs.
func (a *Allocator) Release(container string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	released := false
	for m, h := range a.holder {
		if h == container {
			delete(a.holder, m)
			released = true
		}
	}
	if released {
		close(a.freed)
		a.freed = make(chan struct{})
	}
}

// Held are a container's GPUs.
func (a *Allocator) Held(container string) []Device {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.heldLocked(container)
}

func (a *Allocator) heldLocked(container string) []Device {
	var out []Device
	for _, d := range a.devices {
		if a.holder[d.Minor] == container {
			out = append(out, d)
		}
	}
	return out
}

func (a *Allocator) knownLocked(minor int) bool {
	for _, d := range a.devices {
		if d.Minor == minor {
			return true
		}
	}
	return false
}

// Others are the node's GPUs not in held: the device files a container holding held is
// denied.
func (a *Allocator) Others(held []Device) []Device {
	mine := map[int]bool{}
	for _, d := range held {
		mine[d.Minor] = true
	}
	var out []Device
	for _, d := range a.devices {
		if !mine[d.Minor] {
			out = append(out, d)
		}
	}
	return out
}

// Assignment is one GPU and the container holding it.
type Assignment struct {
	Device
	Container string `json:"containerId"`
}

// Assigned lists the GPUs held, by index.
func (a *Allocator) Assigned() []Assignment {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []Assignment
	for _, d := range a.devices {
		if h, ok := a.holder[d.Minor]; ok {
			out = append(out, Assignment{Device: d, Container: h})
		}
	}
	return out
}
