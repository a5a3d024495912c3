package scheduler

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Placement constraints (YARN 3.x SchedulingRequests, scheduling.md §9): an ask may carry
// the allocation tags its containers get and a constraint on the tags already on a node
// (or its rack) that the node must meet to take one. The engine counts the tags of every
// container it placed, the ones it planned in this pass included, so that one pass never
// puts two anti-affine containers together; the Java RM counts committed containers
// only, and places one container per node heartbeat, to the same effect.

// Placement is what a SchedulingRequest adds to an ask. It is shared by the ask, its
// containers and their allocations, and never modified once given to UpdateAsks.
type Placement struct {
	// RequestID is the SchedulingRequest's allocation_request_id: with the priority it
	// keys the ask, and the AM finds it on the containers it gets.
	RequestID int64
	// Tags are the allocation tags of the ask's containers, sorted.
	Tags []string
	// Constraint is what a node must meet to take one of its containers (nil: none).
	Constraint *Constraint
}

// ConstraintOp is a composite constraint's operator.
type ConstraintOp int

const (
	// ConstraintSingle is a leaf: Scope, Targets and the cardinality bounds.
	ConstraintSingle ConstraintOp = iota
	ConstraintAnd
	ConstraintOr
)

// Scope is where a constraint counts tags: the node or the node's rack.
type Scope int

const (
	ScopeNode Scope = iota
	ScopeRack
)

// Namespace says whose containers' tags a target counts.
type Namespace int

const (
	NamespaceSelf    Namespace = iota // the application's own (YARN's default)
	NamespaceAll                      // every application's
	NamespaceNotSelf                  // every other application's
	NamespaceApp                      // one named application's (Target.App)
)

// Constraint is a placement constraint: a leaf bounds how many containers with each
// target's tags the node's scope holds (IN: at least one; NOTIN: none; CARDINALITY:
// between Min and Max), a composite combines its children.
type Constraint struct {
	Op       ConstraintOp
	Children []*Constraint // ConstraintAnd, ConstraintOr
	Scope    Scope
	Targets  []Target
	Min      int64 // 0: no lower bound
	Max      int64 // < 0: no upper bound
}

// Target is one target expression of a leaf constraint: allocation tags in a namespace,
// or (Partitions set) the node's partition, as YARN's yarn_node_partition/ attribute.
type Target struct {
	Namespace  Namespace
	App        AppID
	Tags       []string
	Partitions []string // "" is the default partition
}

// tagCounts counts containers by allocation tag and application in one node or rack.
type tagCounts map[string]map[AppID]int32

func (t tagCounts) add(tags []string, app AppID, delta int32) {
	for _, tag := range tags {
		m := t[tag]
		if m == nil {
			m = map[AppID]int32{}
			t[tag] = m
		}
		if m[app] += delta; m[app] <= 0 {
			delete(m, app)
			if len(m) == 0 {
				delete(t, tag)
			}
		}
	}
}

// count is how many containers with tag the target's namespace sees, for app self.
func (t tagCounts) count(tag string, target *Target, self AppID) int64 {
	var n int64
	for app, c := range t[tag] {
		switch target.Namespace {
		case NamespaceSelf:
			if app != self {
				continue
			}
		case NamespaceNotSelf:
			if app == self {
				continue
			}
		case NamespaceApp:
			if app != target.App {
				continue
			}
		}
		n += int64(c)
	}
	return n
}

// tagPlaced books c's tags on its node and rack (sign +1) or takes them off (-1).
func (e *Engine) tagPlaced(c *container, sign int32) {
	if c.placement == nil || len(c.placement.Tags) == 0 {
		return
	}
	n := c.node
	if n.tags == nil {
		n.tags = tagCounts{}
	}
	n.tags.add(c.placement.Tags, c.app.spec.ID, sign)
	rack := e.rackTags[c.rack]
	if rack == nil {
		rack = tagCounts{}
		e.rackTags[c.rack] = rack
	}
	rack.add(c.placement.Tags, c.app.spec.ID, sign)
	if len(rack) == 0 {
		delete(e.rackTags, c.rack)
	}
}

// satisfies reports whether node n meets constraint c for a container of application a
// (PlacementConstraintsUtil.canSatisfyConstraints).
func (e *Engine) satisfies(a *app, n *node, c *Constraint) bool {
	switch c.Op {
	case ConstraintAnd:
		for _, child := range c.Children {
			if !e.satisfies(a, n, child) {
				return false
			}
		}
		return true
	case ConstraintOr:
		return slices.ContainsFunc(c.Children, func(child *Constraint) bool { return e.satisfies(a, n, child) })
	}
	counts := n.tags
	if c.Scope == ScopeRack {
		counts = e.rackTags[n.spec.Rack]
	}
	for i := range c.Targets {
		t := &c.Targets[i]
		if t.Partitions != nil {
			// The node's partition is one of the values, or it is not.
			var in int64
			if slices.Contains(t.Partitions, n.spec.Partition) {
				in = 1
			}
			if !withinBounds(in, in, c) {
				return false
			}
			continue
		}
		// The lower bound holds for every tag (the least count), the upper bound too
		// (the greatest), as the Java RM's Long::min and Long::max reductions.
		least, most := int64(-1), int64(0)
		for _, tag := range t.Tags {
			k := counts.count(tag, t, a.spec.ID)
			if least < 0 || k < least {
				least = k
			}
			most = max(most, k)
		}
		if !withinBounds(max(least, 0), most, c) {
			return false
		}
	}
	return true
}

func withinBounds(least, most int64, c *Constraint) bool {
	return (c.Min <= 0 || least >= c.Min) && (c.Max < 0 || most <= c.Max)
}

// behindLimit bounds the asks placeableBehind tries: an AM with thousands of
// SchedulingRequests (the distributed shell sends one per container) costs a round no
// more than this many node choices.
const behindLimit = 64

// placeableBehind finds, behind a's ask head (a SchedulingRequest no node meets now),
// the first of its asks in partition p that a node takes within the queue's limits, and
// that node.
func (e *Engine) placeableBehind(g *group, p *partition, a *app, head *Ask) (*Ask, *node) {
	limitTypes, limitCPUOnly := e.limitMeasure(e.cfg.Types.Len())
	tried := 0
	for _, ask := range a.anyAsks {
		if ask == head || ask.Count <= 0 || ask.partition != p.name || ask.Gang || ask.AM {
			continue
		}
		if tried++; tried > behindLimit {
			break
		}
		if !g.limitsAllow(a, oneOf(ask), p, e.cfg.MinimumAllocation, limitTypes, limitCPUOnly) {
			continue
		}
		if n, wait := e.chooseLocal(p, a, ask); n != nil && !wait {
			return ask, n
		}
	}
	return nil, nil
}

// nextAppPlaceable finds, among the applications waiting in g after blocked (whose
// SchedulingRequests no node meets now), the first whose best request a node takes within
// the queue's limits, and that node: one application's unmeetable constraint does not
// stop its queue (the Java scheduler goes on to the next application). Applications with
// host or rack requests are passed over, so that their delay-scheduling counts stay
// theirs.
func (e *Engine) nextAppPlaceable(g *group, p *partition, blocked *app) (*app, *Ask, *node) {
	limitTypes, limitCPUOnly := e.limitMeasure(e.cfg.Types.Len())
	tried := 0
	for _, b := range g.waiting[p.name] {
		if b == blocked || b.pendingIn[p.name] <= 0 || b.localAsks > 0 {
			continue
		}
		if tried++; tried > behindLimit {
			break
		}
		ask := b.nextAskIn(p.name)
		if ask == nil || ask.Gang || !e.mayStart(b) || !e.unmanagedAMFits(b, p, limitTypes, limitCPUOnly) ||
			!g.limitsAllow(b, oneOf(ask), p, e.cfg.MinimumAllocation, limitTypes, limitCPUOnly) {
			continue
		}
		n := e.chooseNode(p, b, ask)
		if n == nil && ask.Placement != nil {
			ask, n = e.placeableBehind(g, p, b, ask)
		}
		if n != nil {
			return b, ask, n
		}
	}
	return nil, nil, nil
}

// constrained reports whether ask waits on a placement constraint.
func constrained(ask *Ask) bool { return ask.Placement != nil && ask.Placement.Constraint != nil }

// key is the ask's key in its application's asks: asks of one priority and capability
// are told apart by their allocation request ids, and a SchedulingRequest's from a
// ResourceRequest's.
func (ask *Ask) key() askKey {
	return askKey{priority: ask.Priority, name: ask.ResourceName, cap: ask.Capability, request: ask.RequestID, scheduling: ask.Placement != nil}
}

// NodeTags counts the allocation tags of the containers on each node, every
// application's together (the REST API's allocationTags): node id -> tag -> count.
func (e *Engine) NodeTags() map[string]map[string]int64 {
	e.lock()
	defer e.mu.Unlock()
	out := map[string]map[string]int64{}
	for id, n := range e.nodes {
		for tag, byApp := range n.tags {
			for _, k := range byApp {
				if out[id] == nil {
					out[id] = map[string]int64{}
				}
				out[id][tag] += int64(k)
			}
		}
	}
	return out
}

// String writes the constraint as Java's PlacementConstraint.toString does (the REST
// API's placementConstraint): "notin,node,hbase", "in,rack,zk", "cardinality,node,spark,0,3",
// "and(c1:c2)", "or(c1:c2)".
func (c *Constraint) String() string {
	if c == nil {
		return ""
	}
	if c.Op != ConstraintSingle {
		parts := make([]string, 0, len(c.Children))
		for _, ch := range c.Children {
			parts = append(parts, ch.String())
		}
		op := "and"
		if c.Op == ConstraintOr {
			op = "or"
		}
		return op + "(" + strings.Join(parts, ":") + ")"
	}
	scope := "node"
	if c.Scope == ScopeRack {
		scope = "rack"
	}
	var out []string
	for _, t := range c.Targets {
		target := t.String()
		switch {
		case c.Min == 0 && c.Max == 0:
			out = append(out, "notin,"+scope+","+target)
		case c.Min == 1 && c.Max < 0:
			out = append(out, "in,"+scope+","+target)
		default:
			max := c.Max
			if max < 0 {
				max = math.MaxInt32
			}
			out = append(out, fmt.Sprintf("cardinality,%s,%s,%d,%d", scope, target, c.Min, max))
		}
	}
	return strings.Join(out, ":")
}

// String is Java's TargetExpression.toString: the tags (with their namespace's prefix
// outside the application's own), or yarn_node_partition=[p1:p2].
func (t Target) String() string {
	if t.Partitions != nil {
		return "yarn_node_partition=[" + strings.Join(t.Partitions, ":") + "]"
	}
	prefix := ""
	switch t.Namespace {
	case NamespaceAll:
		prefix = "all/"
	case NamespaceNotSelf:
		prefix = "not-self/"
	case NamespaceApp:
		prefix = "app-id/" + string(t.App) + "/"
	}
	tags := make([]string, 0, len(t.Tags))
	for _, tag := range t.Tags {
		tags = append(tags, prefix+tag)
	}
	return strings.Join(tags, ",")
}
