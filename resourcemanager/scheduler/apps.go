package scheduler

import (
	"fmt"
	"slices"
	"sort"

	"github.com/bobbin-yarn/bobbin/conf/capacity"
)

// AddApp registers an application in its queue.
func (e *Engine) AddApp(spec AppSpec) error {
	e.lock()
	defer e.mu.Unlock()
	if _, ok := e.apps[spec.ID]; ok {
		return fmt.Errorf("application %s: %w", spec.ID, ErrDuplicate)
	}
	g, ok := e.groups[spec.Queue]
	if !ok {
		return fmt.Errorf("queue %q: %w", spec.Queue, ErrUnknownQueue)
	}
	if g == nil {
		return fmt.Errorf("queue %q: %w", spec.Queue, ErrNotLeaf)
	}
	if g.queue.State == capacity.Stopped && !spec.Recovering {
		return fmt.Errorf("queue %q: %w", spec.Queue, ErrQueueStopped)
	}
	label := spec.Label
	switch label {
	case "":
		label = g.queue.DefaultNodeLabelExpression
	case DefaultPartition:
		label = ""
	}
	a := &app{spec: spec, group: g, label: label, asks: map[askKey]*Ask{}, pendingIn: map[string]int{}, seq: e.nextApp,
		containers: containerSet{kind: ofApp}, undelivered: containerSet{kind: undelivered}, blacklist: map[string]bool{}, missed: map[int32]int{}}
	e.nextApp++
	e.apps[spec.ID] = a
	e.inbox.setKnown(spec.ID, true)
	g.apps = append(g.apps, a)
	return nil
}

// SetAppPriority changes an application's priority (yarn application -updatePriority);
// queues under the priority policy serve it by the new one from the next pass.
func (e *Engine) SetAppPriority(id AppID, priority int32) error {
	e.lock()
	defer e.mu.Unlock()
	a, err := e.app(id)
	if err != nil {
		return err
	}
	a.spec.Priority = priority
	return nil
}

// RemoveApp forgets an application and releases its containers.
func (e *Engine) RemoveApp(id AppID) error {
	e.lock()
	defer e.mu.Unlock()
	a, err := e.app(id)
	if err != nil {
		return err
	}
	for a.containers.len() > 0 { // release takes each out of the set
		e.release(a.containers.items[a.containers.len()-1])
	}
	delete(e.apps, id)
	e.markGone(a)
	e.inbox.setKnown(id, false)
	g := a.group
	for i, x := range g.apps {
		if x == a {
			g.apps = append(g.apps[:i], g.apps[i+1:]...)
			break
		}
	}
	for _, ask := range a.anyAsks {
		if ask.Count > 0 {
			e.shape(ask.partition, ask.Capability, -ask.Count)
		}
	}
	for p := range a.pendingIn {
		a.pendingIn[p] = 0 // pick prunes it from the waiting lists
	}
	before := a.pending
	a.pending = 0
	g.pendingChanged(a, before)
	return nil
}

// app finds an application; the caller holds e.mu.
func (e *Engine) app(id AppID) (*app, error) {
	a, ok := e.apps[id]
	if !ok {
		return nil, fmt.Errorf("application %s: %w", id, ErrUnknownApp)
	}
	return a, nil
}

// updateAsks is UpdateAsks applied; the caller holds e.mu.
func (e *Engine) updateAsks(a *app, asks []Ask) {
	for _, ask := range asks {
		ask.Count = max(0, ask.Count-a.unseen(ask))
		k := ask.key()
		if old, ok := a.asks[k]; ok && k.name == "*" {
			e.addPending(a, old.partition, -old.Count)
			e.shape(old.partition, old.Capability, -old.Count)
			old.Count = 0
		}
		_, had := a.asks[k]
		if ask.Count == 0 {
			if had && k.name != "*" {
				a.localAsks--
			}
			delete(a.asks, k)
			continue
		}
		if !had && k.name != "*" {
			a.localAsks++
		}
		cp := ask
		cp.partition = e.askPartition(a, &cp)
		if a.spec.Gang && k.name == "*" && !cp.AM && cp.Placement == nil {
			cp.Gang = true
		}
		a.asks[k] = &cp
		if k.name == "*" {
			e.addPending(a, cp.partition, cp.Count)
			e.shape(cp.partition, cp.Capability, cp.Count)
		}
	}
	// Rebuild the ordered ANY list without the spent entries.
	a.anyAsks = a.anyAsks[:0]
	for k, ask := range a.asks {
		if k.name == "*" && ask.Count > 0 {
			a.anyAsks = append(a.anyAsks, ask)
		}
	}
	sortAsks(a.anyAsks)
}

// CancelAsks drops every outstanding ask of an application and keeps its running
// containers (an AM that unregistered, whose containers end with it).
func (e *Engine) CancelAsks(appID AppID) error {
	e.lock()
	defer e.mu.Unlock()
	a, err := e.app(appID)
	if err != nil {
		return err
	}
	for k, ask := range a.asks {
		if k.name == "*" && ask.Count > 0 {
			e.addPending(a, ask.partition, -ask.Count)
			e.shape(ask.partition, ask.Capability, -ask.Count)
			ask.Count = 0
		}
	}
	clear(a.asks)
	a.localAsks = 0
	a.anyAsks = a.anyAsks[:0]
	return nil
}

// addPending adjusts an app's outstanding count in partition p and enters the app in its
// group's waiting list for p when it starts waiting there.
func (e *Engine) addPending(a *app, p string, delta int) {
	before := a.pendingIn[p]
	a.pendingIn[p] = before + delta
	a.pending += delta
	a.group.pendingChanged(a, a.pending-delta)
	if before <= 0 && before+delta > 0 {
		w := a.group.waiting[p]
		for _, x := range w {
			if x == a {
				return
			}
		}
		// Keep submission order: insert by seq.
		i := sort.Search(len(w), func(i int) bool { return w[i].seq > a.seq })
		w = append(w, nil)
		copy(w[i+1:], w[i:])
		w[i] = a
		a.group.waiting[p] = w
	}
}

// shape adjusts the pending-shape count of a partition (balance weights' w1 input).
func (e *Engine) shape(pname string, c Resource, delta int) {
	e.shapeIn(e.partition(pname), c, delta)
}

// shapeIn is shape for a partition the caller holds.
func (e *Engine) shapeIn(p *partition, c Resource, delta int) {
	if n := p.pendingShapes[c] + delta; n > 0 {
		p.pendingShapes[c] = n
	} else {
		delete(p.pendingShapes, c)
	}
	p.weightsDirty = true
}

// Release frees a container the application gave back or that completed.
func (e *Engine) Release(id ContainerID) error {
	e.lock()
	defer e.mu.Unlock()
	c, ok := e.containers.get(id)
	if !ok {
		return fmt.Errorf("container %d: %w", id, ErrUnknownContainer)
	}
	e.release(c)
	return nil
}

// ReleaseAll frees several containers under one lock (the completions of a batch of
// heartbeats); ids the engine does not know are skipped.
func (e *Engine) ReleaseAll(ids []ContainerID) {
	if len(ids) == 0 {
		return
	}
	e.lock()
	defer e.mu.Unlock()
	// A heartbeat's completions are all on its node: the placement index moves each
	// node once, from its free resources before the first release, not once per
	// container (a tenth of the RM's CPU at 50,000 a second). The index orders nodes by
	// their values alone, so one move ends where several would.
	type moved struct {
		n   *node
		old Resource
	}
	var nodes []moved
	for _, id := range ids {
		c, ok := e.containers.get(id)
		if !ok {
			continue
		}
		// A batch of heartbeats comes node by node: the last node moved is the likely one.
		if k := len(nodes); (k == 0 || nodes[k-1].n != c.node) && !slices.ContainsFunc(nodes, func(m moved) bool { return m.n == c.node }) {
			nodes = append(nodes, moved{c.node, c.node.free()})
		}
		e.unbook(c)
	}
	for _, m := range nodes {
		if m.n.schedulable() {
			e.partitions[m.n.spec.Partition].place.update(m.n, m.old)
		}
	}
}

func (e *Engine) release(c *container) {
	n := c.node
	old := n.free()
	e.unbook(c)
	if n.schedulable() {
		e.partitions[n.spec.Partition].place.update(n, old)
	}
}

// unbook takes c off its node, application, group and partition, leaving the node's
// place in the placement index to the caller.
func (e *Engine) unbook(c *container) {
	n, a := c.node, c.app
	n.allocated = n.allocated.Sub(c.resource)
	n.containers.remove(c)
	a.used = a.used.Sub(c.resource)
	a.running--
	p := e.partitions[n.spec.Partition]
	p.allocated = p.allocated.Sub(c.resource)
	addSum(&e.sums.allocated, c.resource, -1)
	p.weightsDirty = true
	a.group.addUse(a.spec.User, p.name, c.resource, -1)
	if c.am {
		a.group.addAMUse(a.spec.User, c.resource, -1)
	}
	e.tagPlaced(c, -1)
	e.containers.del(c.id)
	delete(e.preempting, c.id)
	a.containers.remove(c)
	a.undelivered.remove(c)
}

// unseen counts the app's undelivered containers that ask covers: same priority and
// capability, and, for a host or rack ask, placed there. YARN asks are totals the AM
// believes outstanding, so an ask sent before the AM saw those containers still counts
// them; the Java RM takes it as is and over-allocates (a distributed shell whose ask
// grew from 1 to 2 between two heartbeats gets 3 containers, and the 2.7 shell then never
// finishes). Bobbin subtracts them.
func (a *app) unseen(ask Ask) int {
	if ask.Placement != nil {
		return 0 // a SchedulingRequest is sent once, not repeated as a running total
	}
	n := 0
	for _, c := range a.undelivered.items {
		if c.priority != ask.Priority || c.resource != ask.Capability || c.request != ask.RequestID || c.placement != nil {
			continue
		}
		if ask.ResourceName == "*" || ask.ResourceName == c.node.spec.Rack || ask.ResourceName == hostOf(c.node.spec.ID) {
			n++
		}
	}
	return n
}

// delivered is Delivered applied; the caller holds e.mu.
func (e *Engine) delivered(a *app, ids []ContainerID) {
	for _, id := range ids {
		if c, ok := e.containers.get(id); ok && c.app == a {
			a.undelivered.remove(c)
		}
	}
}

// updateBlacklist is UpdateBlacklist applied; the caller holds e.mu.
func (e *Engine) updateBlacklist(a *app, additions, removals []string) {
	for _, id := range additions {
		a.blacklist[id] = true
	}
	for _, id := range removals {
		delete(a.blacklist, id)
	}
}

// resetBlacklist is the per-label blacklist reset (scheduling.md §2): when the app has
// blacklisted more than the threshold share of partition p's nodes, p's nodes leave its
// blacklist. YARN compares against the whole cluster, which never triggers for a small
// label and leaves the application waiting forever.
func (e *Engine) resetBlacklist(a *app, p *partition) {
	if len(a.blacklist) == 0 || len(p.nodes) == 0 {
		return
	}
	n := 0
	for id := range a.blacklist {
		if _, ok := p.nodes[id]; ok {
			n++
		}
	}
	if float64(n)/float64(len(p.nodes)) > e.cfg.BlacklistThreshold {
		for id := range a.blacklist {
			if _, ok := p.nodes[id]; ok {
				delete(a.blacklist, id)
			}
		}
	}
}
