package gpu

import (
	"fmt"
	"sort"
	"sync"
)

// Allocator says which container holds which of the node's GPUs, as Java's
// GpuResourceAllocator: a container asking for n gets the n free GPUs of lowest index.
// Its lock is its own; it calls nothing while holding it.
type Allocator struct {
	devices []Device

	mu     sync.Mutex
	holder map[int]string // minor number → container id
}

// NewAllocator is an allocator over the node's GPUs, none held.
func NewAllocator(devices []Device) *Allocator {
	d := append([]Device(nil), devices...)
	sort.Slice(d, func(a, b int) bool { return d[a].Index < d[b].Index })
	return &Allocator{devices: d, holder: map[int]string{}}
}

// Devices are the node's GPUs, by index.
func (a *Allocator) Devices() []Device { return append([]Device(nil), a.devices...) }

// Assign gives container n GPUs. A container that holds some already (a relaunch)
// keeps them. The RM never gives a node more GPU containers than it has GPUs: too few
// free is an error (the container fails, as Java's does).
func (a *Allocator) Assign(container string, n int) ([]Device, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if held := a.heldLocked(container); len(held) > 0 || n <= 0 {
		return held, nil
	}
	var free []Device
	for _, d := range a.devices {
		if _, taken := a.holder[d.Minor]; !taken {
			free = append(free, d)
		}
	}
	if len(free) < n {
		return nil, fmt.Errorf("failed to find enough GPUs: %d requested, %d available of %d", n, len(free), len(a.devices))
	}
	for _, d := range free[:n] {
		a.holder[d.Minor] = container
	}
	return free[:n], nil
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
	for m, h := range a.holder {
		if h == container {
			delete(a.holder, m)
		}
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
