package rmcore

import (
	"sync"
	"time"

	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
)

// The scheduler's health, as Java's SchedulerHealth keeps it for the REST API's
// scheduler.health (3.x): the last allocation, release and preemption (node, container,
// queue), when the last scheduling pass ran and what it did. Releases are the containers
// that ended between the pass before and that one. Bobbin reserves nothing: the
// reservations are always none.

// HealthOp is one operation's node, container and queue ("" while there was none).
type HealthOp struct{ Node, Container, Queue string }

// SchedulerHealth is the scheduler's health now.
type SchedulerHealth struct {
	LastRun                         time.Time
	LastAllocation, LastRelease     HealthOp
	LastPreemption, LastReservation HealthOp
	Allocations, Releases           int64
	Allocated, Released             scheduler.Resource
}

// schedulerHealth gathers it; its lock is a leaf.
type schedulerHealth struct {
	mu  sync.Mutex
	now SchedulerHealth
	// lastReleased is the last released container, whose queue is looked up when the
	// health is read: a completion (thousands a second) takes no applications' lock.
	lastReleased records.ContainerID
	// Releases since the last pass, moved into now at the next.
	releases int64
	released scheduler.Resource
}

// pass records a scheduling pass that made n containers holding allocated, the last of
// them last (nil: none).
func (h *schedulerHealth) pass(at time.Time, n int, allocated scheduler.Resource, last *HealthOp) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.now.LastRun, h.now.Allocations, h.now.Allocated = at, int64(n), allocated
	h.now.Releases, h.now.Released = h.releases, h.released
	h.releases, h.released = 0, scheduler.Resource{}
	if last != nil {
		h.now.LastAllocation = *last
	}
}

func (h *schedulerHealth) release(node string, id records.ContainerID, r scheduler.Resource) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.now.LastRelease = HealthOp{Node: node, Container: id.String()}
	h.lastReleased = id
	h.releases++
	h.released = h.released.Add(r)
}

func (h *schedulerHealth) preempt(op HealthOp) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.now.LastPreemption = op
}

// snapshot is the health now, and the last released container.
func (h *schedulerHealth) snapshot() (SchedulerHealth, records.ContainerID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.now, h.lastReleased
}

// SchedulerHealth is what the scheduler did last.
func (rm *Core) SchedulerHealth() SchedulerHealth {
	h, released := rm.health.snapshot()
	if h.LastRelease.Container != "" {
		rm.apps.View(released.Attempt.App, func(a *rmstate.App) { h.LastRelease.Queue = a.Queue })
	}
	return h
}

// healthOp names a container's operation: its node, id and its application's queue.
func (rm *Core) healthOp(c *rmstate.Container) HealthOp { return rm.appQueueOp(c.Node(), c.ID) }

// appQueueOp is healthOp for a container known by id only.
func (rm *Core) appQueueOp(node string, id records.ContainerID) HealthOp {
	op := HealthOp{Node: node, Container: id.String()}
	rm.apps.View(id.Attempt.App, func(a *rmstate.App) { op.Queue = a.Queue })
	return op
}
