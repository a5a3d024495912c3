package scheduler

import (
	"fmt"
	"slices"
)

// Plan is what one Schedule call decided, computed under the engine's lock against one
// consistent state: the allocations in the order they were made, the preemption notices
// and kills, and why the asks that got nothing were not placed.
//
// The allocations are assumed: the engine counts them as running from the moment it
// plans them, so the next pass does not hand out the same room twice. The caller commits
// each one: Confirm once it has become a real container, Forget if it could not (the
// application's attempt ended, the node left), which frees the room and gives the ask
// its container back.
type Plan struct {
	Allocations []Allocation
	Preemptions []Preemption
	// Unplaced holds one entry per (application, ask) that a round passed over, with the
	// last reason it was passed over for in this pass.
	Unplaced []Unplaced
	// Balance holds, with Config.Explain and the balance strategy, every choice the
	// strategy made in this pass, in order.
	Balance []BalanceDecision
}

// BalanceDecision is one choice of the balance strategy (scheduling.md §3): the weights
// it used and the parts they were made of, the partition's utilization, and the node's
// balance y (smaller is better balanced) before and after the request.
type BalanceDecision struct {
	App        AppID
	Partition  string
	Priority   int32
	Capability Resource
	Node       string // "" when a gated request fits no node
	// Outcome is OutcomePlaced, OutcomePlacedByGate or OutcomeGated.
	Outcome string
	// Mode is ModeBestBalance (utilization at or above the threshold) or ModeRoundRobin.
	Mode        string
	Utilization float64
	// W0 is configured, W1 from the pending requests each type blocks, W2 from each
	// type's usage; Weights = (W0 + W1 + W2) / 3. One entry per resource type.
	W0, W1, W2, Weights []float64
	Before, After       float64
}

// Balance decision outcomes and modes.
const (
	OutcomePlaced = "placed"
	// OutcomePlacedByGate: a later request that makes its node better balanced, placed
	// while the group's head waits.
	OutcomePlacedByGate = "placed-by-gate"
	// OutcomeGated: the group's head, passed over because it would make Node less
	// balanced (or fits no node) while a later request improves one.
	OutcomeGated    = "gated"
	ModeBestBalance = "best-balance"
	ModeRoundRobin  = "round-robin"
)

// Reason says why a round placed nothing for an application's ask.
type Reason string

const (
	// ReasonLocality: the ask names hosts or racks and lets this opportunity pass,
	// waiting for one of them (delay scheduling).
	ReasonLocality Reason = "waiting-for-locality"
	// ReasonNoNode: no node passed the filters (see Unplaced.Rejected).
	ReasonNoNode Reason = "no-node-fits"
	// ReasonPreempting: no node fits and room is being preempted for the ask's group.
	ReasonPreempting Reason = "preempting-for-group"
	// ReasonQueueLimit: the application is at one of its queue's caps (maximum capacity,
	// its user's limit, the AM share) and is passed over.
	ReasonQueueLimit Reason = "queue-limit"
)

// Unplaced is an ask a pass could not place, and why.
type Unplaced struct {
	App        AppID
	Partition  string
	Priority   int32
	Capability Resource
	Reason     Reason
	// Rejected counts, by filter, the partition's nodes that turned the ask down, each
	// node under the first filter it failed. Filled for ReasonNoNode when Config.Explain
	// is set (it costs a pass over the partition's nodes).
	Rejected map[string]int
}

// Node filters, in the order a node is put through them before the partition's strategy
// (rings, balance or first-fit) scores the survivors and picks one.
const (
	FilterUnschedulable = "unschedulable" // decommissioning, on leave, disk guard
	FilterResources     = "insufficient-resources"
	FilterStaticAM      = "not-static-for-am" // AM containers go to static nodes when there are any
	FilterBlacklisted   = "blacklisted"
	FilterConstraint    = "placement-constraint" // a SchedulingRequest's constraint on the node's tags
	FilterStrategy      = "strategy-declined"    // the balance gate or a backfill reservation
)

// nodeFilter is one named test a node must pass to take a container.
type nodeFilter struct {
	name string
	ok   func(n *node) bool
}

// filtersFor are the filters for one container of a's ask in partition p beyond fitting
// (the strategy's index checks the fit itself), with accept, if any, last.
func (e *Engine) filtersFor(p *partition, a *app, ask *Ask, accept func(*node) bool) []nodeFilter {
	var fs []nodeFilter
	if ask.AM && p.static > 0 {
		fs = append(fs, nodeFilter{FilterStaticAM, func(n *node) bool { return n.spec.Static }})
	}
	if len(a.blacklist) > 0 {
		fs = append(fs, nodeFilter{FilterBlacklisted, func(n *node) bool { return !a.blacklist[n.spec.ID] }})
	}
	if ask.Placement != nil && ask.Placement.Constraint != nil {
		fs = append(fs, nodeFilter{FilterConstraint, func(n *node) bool { return e.satisfies(a, n, ask.Placement.Constraint) }})
	}
	if accept != nil {
		fs = append(fs, nodeFilter{FilterStrategy, accept})
	}
	return fs
}

// passes combines filters into the one test the strategies take.
func passes(fs []nodeFilter) func(*node) bool {
	switch len(fs) {
	case 0:
		return func(*node) bool { return true }
	case 1:
		return fs[0].ok
	}
	return func(n *node) bool {
		for _, f := range fs {
			if !f.ok(n) {
				return false
			}
		}
		return true
	}
}

// explain counts, for an ask no node took, each node of p under the first filter it fails.
func (e *Engine) explain(p *partition, a *app, ask *Ask) map[string]int {
	fs := append([]nodeFilter{
		{FilterUnschedulable, func(n *node) bool { return n.schedulable() }},
		{FilterResources, func(n *node) bool { return ask.Capability.Fits(n.room()) }},
	}, e.filtersFor(p, a, ask, nil)...)
	out := map[string]int{}
	for _, n := range p.nodes {
		for _, f := range fs {
			if !f.ok(n) {
				out[f.name]++
				break
			}
		}
	}
	return out
}

// unplacedLog gathers a pass's Unplaced entries, one per (application, partition,
// priority, capability), keeping the last reason.
type unplacedLog struct {
	at      map[unplacedKey]int
	out     []Unplaced
	balance []BalanceDecision
}

// decide notes a balance decision (with Config.Explain and the balance strategy), before
// the request is placed.
func (l *unplacedLog) decide(e *Engine, p *partition, a *app, ask *Ask, n *node, outcome string) {
	if !e.cfg.Explain || p.balance == nil || !p.balance.governs(ask.Capability) {
		return
	}
	types := e.cfg.Types.Len()
	w := e.partitionWeights(p)
	d := BalanceDecision{App: a.spec.ID, Partition: p.name, Priority: ask.Priority, Capability: ask.Capability, Outcome: outcome,
		Utilization: e.utilization(p), Mode: ModeBestBalance,
		W0: slices.Clone(p.w0[:types]), W1: slices.Clone(p.w1[:types]), W2: slices.Clone(p.w2[:types]), Weights: slices.Clone(w)}
	if d.Utilization < e.cfg.Balance.Threshold {
		d.Mode = ModeRoundRobin
	}
	if n != nil {
		d.Node = n.spec.ID
		d.Before = imbalance(n.allocated, Resource{}, n.spec.Capacity, w)
		d.After = imbalance(n.allocated, ask.Capability, n.spec.Capacity, w)
	}
	l.balance = append(l.balance, d)
}

type unplacedKey struct {
	app       *app
	partition string
	priority  int32
	cap       Resource
}

func (l *unplacedLog) note(e *Engine, p *partition, a *app, ask *Ask, why Reason) {
	k := unplacedKey{a, p.name, ask.Priority, ask.Capability}
	u := Unplaced{App: a.spec.ID, Partition: p.name, Priority: ask.Priority, Capability: ask.Capability, Reason: why}
	if why == ReasonNoNode && e.cfg.Explain {
		u.Rejected = e.explain(p, a, ask)
	}
	if i, ok := l.at[k]; ok {
		l.out[i] = u
		return
	}
	if l.at == nil {
		l.at = map[unplacedKey]int{}
	}
	l.at[k] = len(l.out)
	l.out = append(l.out, u)
}

// Confirm commits planned allocations that became containers. Ids the engine no longer
// holds as assumed (released meanwhile, or confirmed already) are skipped.
func (e *Engine) Confirm(ids []ContainerID) {
	if len(ids) == 0 {
		return
	}
	e.lock()
	defer e.mu.Unlock()
	for _, id := range ids {
		if c, ok := e.containers.get(id); ok {
			c.assumed = false
		}
	}
}

// Forget withdraws a planned allocation that could not become a container: its room is
// freed and, while the application is still registered, its ask gets the container
// back, so a later pass places it again.
func (e *Engine) Forget(id ContainerID) error {
	e.lock()
	defer e.mu.Unlock()
	c, ok := e.containers.get(id)
	if !ok {
		return fmt.Errorf("container %d: %w", id, ErrUnknownContainer)
	}
	if !c.assumed {
		return fmt.Errorf("container %d: confirmed already; release it instead", id)
	}
	e.release(c)
	if a := c.app; e.apps[a.spec.ID] == a {
		e.restoreAsk(a, c)
	}
	return nil
}

// restoreAsk gives one container back to the ANY ask that c was placed for.
func (e *Engine) restoreAsk(a *app, c *container) {
	cp := Ask{Priority: c.priority, ResourceName: "*", Capability: c.resource, RelaxLocality: true, AM: c.am, RequestID: c.request, Placement: c.placement}
	k := cp.key()
	ask, ok := a.asks[k]
	if !ok || ask.Count == 0 {
		if c.node.spec.Partition != a.label {
			cp.Label = c.node.spec.Partition
		}
		cp.partition = c.node.spec.Partition
		ask = &cp
		a.asks[k] = ask
		a.anyAsks = append(a.anyAsks, ask)
		sortAsks(a.anyAsks)
	}
	ask.Count++
	e.addPending(a, ask.partition, 1)
	e.shape(ask.partition, ask.Capability, 1)
}
