package scheduler

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/bobbin-yarn/bobbin/conf/capacity"
)

// Config holds the engine's settings (bobbin.scheduler.* keys).
type Config struct {
	Types    Types
	Strategy string // rings (default), balance, first-fit
	// CPUOnly accounts group usage by vcores alone instead of the dominant share.
	CPUOnly bool
	// LimitsByMemory measures the Capacity Scheduler's caps (maximum-capacity,
	// user-limit-factor, maximum-am-resource-percent) by memory alone, as Apache's
	// DefaultResourceCalculator does; false measures them by the dominant share, as its
	// DominantResourceCalculator does (yarn.scheduler.capacity.resource-calculator).
	LimitsByMemory bool
	// Rings per resource type; SearchLimit is N, the rings searched above the request's.
	Rings       [MaxResourceTypes]RingConfig
	SearchLimit int
	// Visits bounds the nodes one placement examines in an index walk.
	Visits int
	// Balance configures the balance strategy.
	Balance BalanceConfig
	// Preemption configures hysteresis preemption.
	Preemption PreemptionConfig
	// BlacklistThreshold: when an app's blacklisted share of a label's nodes exceeds it,
	// the label's nodes leave the app's blacklist (per-label blacklist reset).
	BlacklistThreshold float64
	// Groups holds each leaf queue's Bobbin settings by queue path.
	Groups map[string]GroupSettings
	// Location is the time zone of time-of-day quotas.
	Location *time.Location
	// NodeLocalityDelay is how many scheduling opportunities an ask naming hosts waits for
	// one of them (yarn.scheduler.capacity.node-locality-delay); as many again for its racks.
	NodeLocalityDelay int
	// Now is the clock; allocations carry its time.
	Now func() time.Time
}

// limitTypes is how many resource types (of types) the queue caps are measured in:
// memory alone (index 0) under DefaultResourceCalculator, every type otherwise.
func (e *Engine) limitTypes(types int) int {
	if e.cfg.LimitsByMemory {
		return 1
	}
	return types
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	c := Config{Types: DefaultTypes, Strategy: StrategyRings, SearchLimit: 8, Visits: 256, Balance: DefaultBalanceConfig(), Preemption: DefaultPreemptionConfig(),
		BlacklistThreshold: 0.8, Location: time.Local, NodeLocalityDelay: 40, LimitsByMemory: true, Now: time.Now}
	c.Rings[Memory] = RingConfig{Base: 0, Width: 1024}
	c.Rings[VCores] = RingConfig{Base: 0, Width: 1}
	for i := 2; i < MaxResourceTypes; i++ {
		c.Rings[i] = RingConfig{Base: 0, Width: 1}
	}
	return c
}

// partition is one node label's nodes and their index.
type partition struct {
	name      string
	nodes     map[string]*node
	total     Resource
	allocated Resource
	place     placer
	balance   *balance // set when the strategy is balance
	// pendingShapes counts outstanding ANY containers by capability, for the balance
	// weights' "blocked requests" score.
	pendingShapes map[Resource]int
	weights       []float64
	weightsDirty  bool
	// static counts schedulable static nodes, so AM asks know whether to insist on one.
	static int
}

// Engine is the scheduling engine. All methods are safe for concurrent use. Lock rule:
// e.mu guards all engine state; one scheduling step (one allocation) sees one state, and a
// long Schedule pass releases the lock every lockSlice allocations so the RM's RPC
// handlers (UpdateAsks, Release, node updates) wait for a slice, never a whole pass.
type Engine struct {
	cfg Config

	mu         sync.Mutex
	partitions map[string]*partition
	nodes      map[string]*node
	hosts      map[string][]*node // by host name, for node-local asks
	racks      map[string][]*node // by rack, for rack-local asks
	groups     map[string]*group  // by leaf name and path
	leaves     []*group
	apps       map[string]*app
	containers map[ContainerID]*container
	preempting map[ContainerID]*container // notified, not yet completed
	nextCID    ContainerID
	nextNode   int
	nextApp    int64
}

// Errors callers branch on.
var (
	ErrUnknownQueue = errors.New("unknown queue")
	ErrNotLeaf      = errors.New("queue is not a leaf queue")
	ErrQueueStopped = errors.New("queue is stopped")
	ErrUnknownApp   = errors.New("unknown application")
	ErrUnknownNode  = errors.New("unknown node")
	ErrDuplicate    = errors.New("already exists")
)

// New builds an engine over a validated queue tree.
func New(cfg Config, queues *capacity.Tree) (*Engine, error) {
	if cfg.Types.Len() == 0 {
		cfg.Types = DefaultTypes
	}
	if cfg.Types.Len() > MaxResourceTypes {
		return nil, fmt.Errorf("scheduler: %d resource types, at most %d", cfg.Types.Len(), MaxResourceTypes)
	}
	switch cfg.Strategy {
	case "":
		cfg.Strategy = StrategyRings
	case StrategyRings, StrategyBalance, StrategyFirstFit:
	default:
		return nil, fmt.Errorf("scheduler: unknown node selection strategy %q (rings, balance or first-fit)", cfg.Strategy)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Location == nil {
		cfg.Location = time.Local
	}
	if cfg.Visits <= 0 {
		cfg.Visits = 256
	}
	e := &Engine{cfg: cfg, partitions: map[string]*partition{}, nodes: map[string]*node{},
		hosts: map[string][]*node{}, racks: map[string][]*node{},
		groups: map[string]*group{}, apps: map[string]*app{}, containers: map[ContainerID]*container{},
		preempting: map[ContainerID]*container{}}
	for _, q := range queues.Leaves() {
		g, err := buildGroup(cfg.Types, q, cfg.Groups[q.Path])
		if err != nil {
			return nil, err
		}
		e.leaves = append(e.leaves, g)
		e.groups[q.Name] = g
		e.groups[q.Path] = g
	}
	for _, q := range queues.Queues() {
		if !q.IsLeaf() {
			e.groups[q.Path] = nil // a parent: known, not submittable
			if _, ok := e.groups[q.Name]; !ok {
				e.groups[q.Name] = nil
			}
		}
	}
	return e, nil
}

func (e *Engine) partition(name string) *partition {
	p, ok := e.partitions[name]
	if !ok {
		p = &partition{name: name, nodes: map[string]*node{}, pendingShapes: map[Resource]int{}, weightsDirty: true}
		types := e.cfg.Types.Len()
		switch e.cfg.Strategy {
		case StrategyFirstFit:
			p.place = newFirstFit()
		case StrategyBalance:
			r := newRings(types, e.cfg.Rings, e.cfg.SearchLimit, e.cfg.Visits, func() Resource { return p.total })
			p.balance = newBalance(r, e.cfg.Balance, func() []float64 { return e.partitionWeights(p) }, func() float64 { return e.utilization(p) })
			p.place = p.balance
		default:
			p.place = newRings(types, e.cfg.Rings, e.cfg.SearchLimit, e.cfg.Visits, func() Resource { return p.total })
		}
		e.partitions[name] = p
	}
	return p
}

// AddNode adds a node.
func (e *Engine) AddNode(spec NodeSpec) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.nodes[spec.ID]; ok {
		return fmt.Errorf("node %s: %w", spec.ID, ErrDuplicate)
	}
	if spec.Capacity.AnyNegative() {
		return fmt.Errorf("node %s: negative capacity %s", spec.ID, e.cfg.Types.Format(spec.Capacity))
	}
	if spec.Rack == "" {
		spec.Rack = "/default-rack"
	}
	n := &node{spec: spec, containers: map[ContainerID]*container{}, order: e.nextNode}
	e.nextNode++
	e.nodes[spec.ID] = n
	e.attach(n)
	return nil
}

// UpdateNode changes a node's capacity, label, static flag or schedulability; its
// containers keep running.
func (e *Engine) UpdateNode(spec NodeSpec) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	n, ok := e.nodes[spec.ID]
	if !ok {
		return fmt.Errorf("node %s: %w", spec.ID, ErrUnknownNode)
	}
	if spec.Rack == "" {
		spec.Rack = n.spec.Rack
	}
	from := n.spec.Partition
	e.detach(n)
	n.spec = spec
	e.attach(n)
	if from != spec.Partition {
		// A relabelled node's running containers now count in its new partition, where
		// release will take them back from.
		old, cur := e.partitions[from], e.partitions[spec.Partition]
		old.allocated = old.allocated.Sub(n.allocated)
		cur.allocated = cur.allocated.Add(n.allocated)
		old.weightsDirty, cur.weightsDirty = true, true
		for _, c := range n.containers {
			g := c.app.group
			g.used[from] = g.used[from].Sub(c.resource)
			g.used[spec.Partition] = g.used[spec.Partition].Add(c.resource)
		}
	}
	return nil
}

// RemoveNode removes a node; its containers are returned as lost (the caller completes them).
func (e *Engine) RemoveNode(id string) ([]ContainerID, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	n, ok := e.nodes[id]
	if !ok {
		return nil, fmt.Errorf("node %s: %w", id, ErrUnknownNode)
	}
	var lost []ContainerID
	for cid := range n.containers {
		lost = append(lost, cid)
	}
	sort.Slice(lost, func(i, j int) bool { return lost[i] < lost[j] })
	for _, cid := range lost {
		e.release(e.containers[cid])
	}
	e.detach(n)
	delete(e.nodes, id)
	return lost, nil
}

func (e *Engine) detach(n *node) {
	e.hosts[hostOf(n.spec.ID)] = removeNode(e.hosts[hostOf(n.spec.ID)], n)
	e.racks[n.spec.Rack] = removeNode(e.racks[n.spec.Rack], n)
	p := e.partitions[n.spec.Partition]
	if n.schedulable() {
		p.place.remove(n)
		if n.spec.Static {
			p.static--
		}
	}
	p.total = p.total.Sub(n.spec.Capacity)
	delete(p.nodes, n.spec.ID)
}

func removeNode(ns []*node, n *node) []*node {
	for i, x := range ns {
		if x == n {
			return append(ns[:i], ns[i+1:]...)
		}
	}
	return ns
}

func (e *Engine) attach(n *node) {
	e.hosts[hostOf(n.spec.ID)] = append(e.hosts[hostOf(n.spec.ID)], n)
	e.racks[n.spec.Rack] = append(e.racks[n.spec.Rack], n)
	p := e.partition(n.spec.Partition)
	p.nodes[n.spec.ID] = n
	p.total = p.total.Add(n.spec.Capacity)
	if n.schedulable() {
		p.place.add(n)
		if n.spec.Static {
			p.static++
		}
	}
}

// AddApp registers an application in its queue.
func (e *Engine) AddApp(spec AppSpec) error {
	e.mu.Lock()
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
	if g.queue.State == capacity.Stopped {
		return fmt.Errorf("queue %q: %w", spec.Queue, ErrQueueStopped)
	}
	label := spec.Label
	if label == "" {
		label = g.queue.DefaultNodeLabelExpression
	}
	a := &app{spec: spec, group: g, label: label, asks: map[askKey]*Ask{}, pendingIn: map[string]int{}, seq: e.nextApp,
		containers: map[ContainerID]*container{}, blacklist: map[string]bool{}, missed: map[int32]int{}}
	e.nextApp++
	e.apps[spec.ID] = a
	g.apps = append(g.apps, a)
	return nil
}

// SetAppPriority changes an application's priority (yarn application -updatePriority);
// queues under the priority policy serve it by the new one from the next pass.
func (e *Engine) SetAppPriority(id string, priority int32) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	a, err := e.app(id)
	if err != nil {
		return err
	}
	a.spec.Priority = priority
	return nil
}

// RemoveApp forgets an application and releases its containers.
func (e *Engine) RemoveApp(id string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	a, err := e.app(id)
	if err != nil {
		return err
	}
	for _, c := range a.containers {
		e.release(c)
	}
	delete(e.apps, id)
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
	a.pending = 0
	return nil
}

// app finds an application; the caller holds e.mu.
func (e *Engine) app(id string) (*app, error) {
	a, ok := e.apps[id]
	if !ok {
		return nil, fmt.Errorf("application %s: %w", id, ErrUnknownApp)
	}
	return a, nil
}

// UpdateAsks replaces the application's table entries for the given asks: each carries the
// absolute outstanding count for its (priority, resource name, capability), 0 cancels.
func (e *Engine) UpdateAsks(appID string, asks []Ask) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	a, err := e.app(appID)
	if err != nil {
		return err
	}
	for _, ask := range asks {
		if ask.Count < 0 || ask.Capability.AnyNegative() {
			return fmt.Errorf("application %s: negative ask %+v", appID, ask)
		}
	}
	for _, ask := range asks {
		k := askKey{ask.Priority, ask.ResourceName, ask.Capability}
		if old, ok := a.asks[k]; ok && k.name == "*" {
			e.addPending(a, old.partition, -old.Count)
			e.shape(old.partition, old.Capability, -old.Count)
			old.Count = 0
		}
		if ask.Count == 0 {
			delete(a.asks, k)
			continue
		}
		cp := ask
		cp.partition = e.askPartition(a, &cp)
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
	return nil
}

// CancelAsks drops every outstanding ask of an application and keeps its running
// containers (an AM that unregistered, whose containers end with it).
func (e *Engine) CancelAsks(appID string) error {
	e.mu.Lock()
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
	a.anyAsks = a.anyAsks[:0]
	return nil
}

// addPending adjusts an app's outstanding count in partition p and enters the app in its
// group's waiting list for p when it starts waiting there.
func (e *Engine) addPending(a *app, p string, delta int) {
	before := a.pendingIn[p]
	a.pendingIn[p] = before + delta
	a.pending += delta
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
	p := e.partition(pname)
	if n := p.pendingShapes[c] + delta; n > 0 {
		p.pendingShapes[c] = n
	} else {
		delete(p.pendingShapes, c)
	}
	p.weightsDirty = true
}

// utilization is U: the mean over resource types of the partition's allocated/total.
func (e *Engine) utilization(p *partition) float64 {
	types := e.cfg.Types.Len()
	var sum float64
	n := 0
	for i := 0; i < types; i++ {
		if p.total[i] > 0 {
			sum += float64(p.allocated[i]) / float64(p.total[i])
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// partitionWeights returns the balance weights, recomputed after allocations and changes
// of the pending set (mechanisms.md §3).
func (e *Engine) partitionWeights(p *partition) []float64 {
	if !p.weightsDirty && p.weights != nil {
		return p.weights
	}
	types := e.cfg.Types.Len()
	w0 := e.cfg.Balance.InitialWeights
	if len(w0) != types {
		w0 = make([]float64, types)
		for i := range w0 {
			w0[i] = 1 / float64(types)
		}
	}
	// The largest free amount of each type on any schedulable node, from the index.
	maxFree := p.balance.maxFree()
	blocked := make([]float64, types)
	usage := make([]float64, types)
	for shape, count := range p.pendingShapes {
		for i := 0; i < types; i++ {
			if shape[i] > maxFree[i] {
				blocked[i] += float64(count)
			}
		}
	}
	for i := 0; i < types; i++ {
		if p.total[i] > 0 {
			usage[i] = float64(p.allocated[i]) / float64(p.total[i])
		}
	}
	p.weights = balanceWeights(w0, blocked, usage)
	p.weightsDirty = false
	return p.weights
}

// Release frees a container the application gave back or that completed.
func (e *Engine) Release(id ContainerID) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, ok := e.containers[id]
	if !ok {
		return fmt.Errorf("container %d: unknown", id)
	}
	e.release(c)
	return nil
}

// ReleaseAll frees several containers under one lock (a heartbeat's completions); ids
// the engine does not know are skipped.
func (e *Engine) ReleaseAll(ids []ContainerID) {
	if len(ids) == 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, id := range ids {
		if c, ok := e.containers[id]; ok {
			e.release(c)
		}
	}
}

func (e *Engine) release(c *container) {
	n, a := c.node, c.app
	old := n.free()
	n.allocated = n.allocated.Sub(c.resource)
	delete(n.containers, c.id)
	if n.schedulable() {
		e.partitions[n.spec.Partition].place.update(n, old)
	}
	a.used = a.used.Sub(c.resource)
	a.running--
	p := e.partitions[n.spec.Partition]
	p.allocated = p.allocated.Sub(c.resource)
	p.weightsDirty = true
	a.group.used[p.name] = a.group.used[p.name].Sub(c.resource)
	a.group.userUsed[a.spec.User] = a.group.userUsed[a.spec.User].Sub(c.resource)
	if c.am {
		a.group.amUsed = a.group.amUsed.Sub(c.resource)
	}
	delete(e.containers, c.id)
	delete(e.preempting, c.id)
	delete(a.containers, c.id)
}

// lockSlice is how many allocations a pass makes before it lets other callers take the
// engine lock.
const lockSlice = 256

// Schedule runs group rounds until no round places anything or max allocations were
// made (max <= 0: no limit). It returns the allocations in the order they were made and
// the preemption notices and kills decided on the way.
func (e *Engine) Schedule(max int) Result {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.cfg.Now()
	e.applySchedules(now)
	res := Result{Preemptions: e.dueKills(now)}
	names := make([]string, 0, len(e.partitions))
	for name := range e.partitions {
		names = append(names, name)
	}
	sort.Strings(names)
	ranked := make([]rankedGroup, 0, len(e.leaves))
	active := map[string]bool{}
	for _, n := range names {
		active[n] = true
	}
	sliceStart := len(res.Allocations)
	for max <= 0 || len(res.Allocations) < max {
		if len(res.Allocations)-sliceStart >= lockSlice {
			// Let RPC handlers (asks, releases, node updates) in between slices of a long
			// pass, so none waits for a whole pass; the pass goes on with what they changed.
			e.mu.Unlock()
			e.mu.Lock()
			sliceStart = len(res.Allocations)
		}
		placed := false
		for _, pn := range names {
			if !active[pn] {
				continue
			}
			a, pre, ok := e.round(e.partitions[pn], ranked[:0], now)
			res.Preemptions = append(res.Preemptions, pre...)
			if !ok {
				if len(pre) > 0 {
					active[pn] = false // step 7: preemption is freeing room; sleep
				}
				continue
			}
			res.Allocations = append(res.Allocations, a)
			placed = true
			if max > 0 && len(res.Allocations) >= max {
				break
			}
		}
		if !placed {
			break
		}
	}
	return res
}

// round is one group round in partition p (mechanisms.md §1, steps 1-8).
func (e *Engine) round(p *partition, ranked []rankedGroup, now time.Time) (Allocation, []Preemption, bool) {
	types := e.cfg.Types.Len()
	for _, g := range e.leaves {
		if g.canUse(p.name) && !e.sitsOut(g, p, now) {
			ranked = append(ranked, rankedGroup{g, g.value(p.name, p.total, types, e.cfg.CPUOnly)})
		}
	}
	sortGroups(ranked)
	attempted := false
	for i, rg := range ranked {
		g := rg.g
		if i > 0 && attempted && !g.belowQuota(p.name, p.total, types, e.cfg.CPUOnly, 1000) {
			return Allocation{}, nil, false // step 8: only groups under quota may go after an attempt
		}
		a, ask := e.pick(g, p)
		if ask == nil {
			continue
		}
		attempted = true
		n, wait := e.chooseLocal(p, a, ask)
		if wait {
			continue // delay scheduling: this ask lets the opportunity pass
		}
		gate := p.balance != nil && e.cfg.Balance.GateWindow > 0 && a.skips < e.cfg.Balance.MaxSkips
		if gate && (n == nil || p.balance.worsens(n, ask.Capability)) {
			// Balance gating: when the head would worsen its node's balance (or does not
			// fit), a later request of the group that improves a node's balance goes
			// first; the head waits, a bounded number of times.
			if la, lask, ln := e.improvingLater(g, p, a, ask); lask != nil {
				a.skips++
				return e.placeOn(p, la, lask, ln), nil, true
			}
		}
		if n == nil && g.policy == PolicyBackfill {
			// The head is blocked: a later job that delays no one it must respect runs now.
			if ba, bask, bn := e.backfillCandidate(g, p, a, ask, now); bask != nil {
				return e.placeOn(p, ba, bask, bn), nil, true
			}
		}
		if n == nil {
			// Steps 6-7: a starved group under quota×A gets room preempted for it.
			if e.cfg.Preemption.Enabled {
				if pre := e.preemptFor(g, p, ask, now); len(pre) > 0 {
					return Allocation{}, pre, false
				}
			}
			continue
		}
		return e.placeOn(p, a, ask, n), nil, true
	}
	return Allocation{}, nil, false
}

// improvingLater finds, among the next GateWindow requests of g after the head, the first
// whose placement would make its node better balanced.
func (e *Engine) improvingLater(g *group, p *partition, head *app, headAsk *Ask) (*app, *Ask, *node) {
	seen := 0
	past := false
	for _, a := range g.waiting[p.name] {
		if a == head {
			past = true
			continue
		}
		if !past || a.pendingIn[p.name] <= 0 {
			continue
		}
		ask := a.nextAskIn(p.name)
		if ask == nil || ask.Priority != headAsk.Priority {
			continue
		}
		if seen++; seen > e.cfg.Balance.GateWindow {
			break
		}
		n := e.chooseNode(p, a, ask)
		if n != nil && p.balance.improves(n, ask.Capability) {
			return a, ask, n
		}
	}
	return nil, nil, nil
}

// pick applies the group's in-group policy: it returns the application to serve next
// in partition p and its best-priority ask. Applications whose asks there ran out are
// pruned from the waiting list on the way.
func (e *Engine) pick(g *group, p *partition) (*app, *Ask) {
	w := g.waiting[p.name]
	for len(w) > 0 && w[0].pendingIn[p.name] <= 0 {
		w = w[1:]
	}
	g.waiting[p.name] = w
	types := e.cfg.Types.Len()
	var best *app
	var bestAsk *Ask
	for _, a := range w {
		if a.pendingIn[p.name] <= 0 {
			continue
		}
		if best != nil && (g.policy == PolicyFIFO || g.policy == PolicyBackfill || !e.servesBefore(g.policy, a, best, p)) {
			continue
		}
		ask := a.nextAskIn(p.name)
		// An application at one of the queue's caps (its user's limit, the AM share) is
		// passed over so the others behind it can run.
		if ask == nil || !g.limitsAllow(a, ask, p, e.limitTypes(types), e.cfg.CPUOnly && !e.cfg.LimitsByMemory) {
			continue
		}
		best, bestAsk = a, ask
		if g.policy == PolicyFIFO || g.policy == PolicyBackfill {
			break
		}
	}
	return best, bestAsk
}

// servesBefore orders two waiting applications under a policy; ties keep submission order
// (the waiting list's order), so callers only replace on a strict win.
func (e *Engine) servesBefore(policy string, a, b *app, p *partition) bool {
	switch policy {
	case PolicyPriority: // larger application priority first
		return a.spec.Priority > b.spec.Priority
	case PolicyFair: // least memory used first (YARN's fair share is memory-based)
		return a.used[Memory] < b.used[Memory]
	case PolicyDRF: // smallest dominant share first
		types := e.cfg.Types.Len()
		return DominantShare(a.used, p.total, types, false).Less(DominantShare(b.used, p.total, types, false))
	}
	return false
}

// applySchedules sets each group's default-partition quota for the time of day, and the
// share an absolute-resource capacity is of the cluster as it is now.
func (e *Engine) applySchedules(now time.Time) {
	t := now.In(e.cfg.Location)
	m := t.Hour()*60 + t.Minute()
	for _, g := range e.leaves {
		switch {
		case g.absQuota != nil:
			total := Resource{}
			if p, ok := e.partitions[""]; ok {
				total = p.total
			}
			s := DominantShare(*g.absQuota, total, e.cfg.Types.Len(), e.cfg.CPUOnly)
			if s.Num > s.Den {
				s = Share{1, 1} // more than the cluster has: the whole cluster
			}
			g.quota[""] = s.Num * ppm / s.Den
		case len(g.schedule) > 0:
			g.quota[""] = g.scheduledQuota(m)
		}
	}
}

func (e *Engine) askPartition(a *app, ask *Ask) string {
	if ask.Label != "" {
		return ask.Label
	}
	return a.label
}

// chooseNode asks the partition's strategy for a node for one container of a's ask,
// honouring the app's blacklist and the static-node rule for AM containers.
func (e *Engine) chooseNode(p *partition, a *app, ask *Ask) *node {
	return e.chooseNodeWhere(p, a, ask, nil)
}

// chooseNodeWhere is chooseNode with an extra acceptance test (nil: none).
func (e *Engine) chooseNodeWhere(p *partition, a *app, ask *Ask, accept func(*node) bool) *node {
	e.resetBlacklist(a, p)
	wantStatic := ask.AM && p.static > 0
	return p.place.choose(ask.Capability, func(n *node) bool {
		return (!wantStatic || n.spec.Static) && !a.blacklist[n.spec.ID] && (accept == nil || accept(n))
	})
}

// UpdateBlacklist adds and removes nodes (by node id) from an application's blacklist
// (AllocateRequest.blacklist_request).
func (e *Engine) UpdateBlacklist(appID string, additions, removals []string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	a, err := e.app(appID)
	if err != nil {
		return err
	}
	for _, id := range additions {
		a.blacklist[id] = true
	}
	for _, id := range removals {
		delete(a.blacklist, id)
	}
	return nil
}

// resetBlacklist is the per-label blacklist reset (mechanisms.md §2): when the app has
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

// placeOn allocates one container of ask on n.
func (e *Engine) placeOn(p *partition, a *app, ask *Ask, n *node) Allocation {
	e.nextCID++
	c := &container{id: e.nextCID, app: a, node: n, resource: ask.Capability, priority: ask.Priority, am: ask.AM, start: e.cfg.Now()}
	old := n.free()
	n.allocated = n.allocated.Add(c.resource)
	n.containers[c.id] = c
	p.place.update(n, old)
	p.allocated = p.allocated.Add(c.resource)
	e.containers[c.id] = c
	a.containers[c.id] = c
	a.used = a.used.Add(c.resource)
	a.running++
	if a.skips > 0 && a.nextAskIn(p.name) == ask {
		a.skips = 0
	}
	a.group.used[p.name] = a.group.used[p.name].Add(c.resource)
	a.group.userUsed[a.spec.User] = a.group.userUsed[a.spec.User].Add(c.resource)
	if c.am {
		a.group.amUsed = a.group.amUsed.Add(c.resource)
	}
	e.consumeLocal(a, ask, n)
	ask.Count--
	a.pendingIn[p.name]--
	a.pending--
	e.shape(p.name, ask.Capability, -1)
	if ask.Count == 0 {
		delete(a.asks, askKey{ask.Priority, ask.ResourceName, ask.Capability})
	}
	return Allocation{Container: c.id, App: a.spec.ID, Node: n.spec.ID, Priority: ask.Priority, Resource: c.resource, AM: ask.AM, Time: c.start}
}

// Config returns the engine's configuration.
func (e *Engine) Config() Config { return e.cfg }
