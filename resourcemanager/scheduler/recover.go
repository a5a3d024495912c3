package scheduler

import (
	"fmt"
	"time"
)

// RecoveredContainer is a container that was running before the RM restarted, as its
// NodeManager reports it when it registers again.
type RecoveredContainer struct {
	App      AppID
	Node     string
	Resource Resource
	Priority int32
	AM       bool // the attempt's AM container
	Start    time.Time
	// RequestID and Placement (its allocation tags only) as the NodeManager reported
	// them: the container's tags count for placement constraints again.
	RequestID int64
	Placement *Placement
}

// Recover books a running container of an earlier RM run — work-preserving recovery —
// on its node, its application, its group and its partition, exactly as if this engine
// had placed it, without touching any ask (the AM has the container already). A container
// that does not fit its node's free room (the node came back smaller) is refused: the
// engine never books a node beyond its capacity, and the RM kills that container instead.
func (e *Engine) Recover(rc RecoveredContainer) (ContainerID, error) {
	e.lock()
	defer e.mu.Unlock()
	return e.recoverLocked(rc)
}

// RecoverAll is Recover for each of rcs under one hold of the engine's lock (a restart's
// registrations bring five hundred containers each, and each taking the lock apart kept
// the registrations waiting on each other). ids[i] and errs[i] are Recover's for rcs[i].
func (e *Engine) RecoverAll(rcs []RecoveredContainer) (ids []ContainerID, errs []error) {
	ids, errs = make([]ContainerID, len(rcs)), make([]error, len(rcs))
	e.lock()
	defer e.mu.Unlock()
	for i, rc := range rcs {
		ids[i], errs[i] = e.recoverLocked(rc)
	}
	return ids, errs
}

func (e *Engine) recoverLocked(rc RecoveredContainer) (ContainerID, error) {
	a, err := e.app(rc.App)
	if err != nil {
		return 0, err
	}
	n, ok := e.nodes[rc.Node]
	if !ok {
		return 0, fmt.Errorf("node %s: %w", rc.Node, ErrUnknownNode)
	}
	if rc.Resource.AnyNegative() || !rc.Resource.Fits(n.room()) {
		return 0, fmt.Errorf("container of %s (%s) does not fit node %s (free %s)", rc.App, e.cfg.Types.Format(rc.Resource), rc.Node, e.cfg.Types.Format(n.free()))
	}
	p := e.partitions[n.spec.Partition]
	e.nextCID++
	c := &container{id: e.nextCID, app: a, node: n, resource: rc.Resource, priority: rc.Priority, am: rc.AM, start: rc.Start,
		request: rc.RequestID, placement: rc.Placement, rack: n.spec.Rack}
	e.tagPlaced(c, +1)
	old := n.free()
	n.allocated = n.allocated.Add(c.resource)
	n.containers.add(c)
	if n.schedulable() {
		p.place.update(n, old)
	}
	p.allocated = p.allocated.Add(c.resource)
	addSum(&e.sums.allocated, c.resource, 1)
	p.weightsDirty = true
	e.containers.put(c)
	a.containers.add(c)
	a.used = a.used.Add(c.resource)
	a.running++
	e.markStarted(a)
	a.group.addUse(a.spec.User, p.name, c.resource, 1)
	if c.am {
		a.group.addAMUse(a.spec.User, c.resource, 1)
	}
	return c.id, nil
}
