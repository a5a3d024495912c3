package scheduler

import (
	"sort"

	"github.com/google/btree"
)

// placer chooses a node for a request within one partition. Implementations keep their
// own index and are told about every change of a node's free resources.
type placer interface {
	add(n *node)
	remove(n *node)
	// update moves n after its free resources changed from old.
	update(n *node, old Resource)
	// choose returns a node whose free resources fit req and that ok accepts, or nil.
	choose(req Resource, ok func(*node) bool) *node
}

// Strategy names the node-choice policies (bobbin.scheduler.node-selection).
const (
	StrategyRings    = "rings"
	StrategyBalance  = "balance"
	StrategyFirstFit = "first-fit"
	// StrategyAuto is balance for the requests it pays off for (GPUs in the partition,
	// skewed shapes) and rings best fit for the rest (balance.governs).
	StrategyAuto = "auto"
)

// firstFit takes the first node, in the order nodes joined, that fits. It is the baseline
// the other strategies are measured against, and scans.
type firstFit struct {
	nodes *btree.BTreeG[*node]
}

func newFirstFit() *firstFit {
	return &firstFit{nodes: btree.NewG(16, func(a, b *node) bool { return a.order < b.order })}
}

func (f *firstFit) add(n *node)            { f.nodes.ReplaceOrInsert(n) }
func (f *firstFit) remove(n *node)         { f.nodes.Delete(n) }
func (f *firstFit) update(*node, Resource) {}
func (f *firstFit) choose(req Resource, ok func(*node) bool) *node {
	var found *node
	f.nodes.Ascend(func(n *node) bool {
		if req.Fits(n.room()) && ok(n) {
			found = n
			return false
		}
		return true
	})
	return found
}

// freeKey orders nodes by the free amount of one resource type, then by node order.
type freeKey struct {
	free int64
	n    *node
}

func lessFreeKey(a, b freeKey) bool {
	if a.free != b.free {
		return a.free < b.free
	}
	return nodeOrder(a.n) < nodeOrder(b.n)
}

// RingConfig sets the rings of one resource type: ring k holds free amounts in
// [Base + (k-1)·Width, Base + k·Width), amounts below Base are ring 0. With Bounds (the
// rings' upper bounds, ascending: unequal widths, seed 002) ring k holds
// [Bounds[k-2], Bounds[k-1]) (from Base for k = 1), and above the last bound the rings
// go on Width wide.
type RingConfig struct {
	Base, Width int64
	Bounds      []int64
}

// rings is the resource-ring best fit of scheduling.md §4. One ordered index per
// resource type replaces the ring subsets: ring membership is free/width, and a search
// that would walk rings K..K+N is a bounded in-order walk of the index from the request's
// amount. That makes each choice O(log n + visits).
type rings struct {
	types  int
	totals func() Resource // the partition's capacity, to find a request's dominant type
	cfg    [MaxResourceTypes]RingConfig
	limit  int // rings searched above ring K (N)
	visits int // nodes examined per ring walk before giving up on the walk
	index  [MaxResourceTypes]*btree.BTreeG[freeKey]
}

func newRings(types int, cfg [MaxResourceTypes]RingConfig, searchLimit, visits int, totals func() Resource) *rings {
	r := &rings{types: types, cfg: cfg, limit: searchLimit, visits: visits, totals: totals}
	for i := 0; i < types; i++ {
		r.index[i] = btree.NewG(32, lessFreeKey)
		if r.cfg[i].Width <= 0 {
			r.cfg[i].Width = 1
		}
	}
	return r
}

func (r *rings) add(n *node) {
	f := n.free()
	for i := 0; i < r.types; i++ {
		r.index[i].ReplaceOrInsert(freeKey{f[i], n})
	}
}

func (r *rings) remove(n *node) {
	f := n.free()
	for i := 0; i < r.types; i++ {
		r.index[i].Delete(freeKey{f[i], n})
	}
}

func (r *rings) update(n *node, old Resource) {
	f := n.free()
	for i := 0; i < r.types; i++ {
		if old[i] == f[i] {
			continue
		}
		r.index[i].Delete(freeKey{old[i], n})
		r.index[i].ReplaceOrInsert(freeKey{f[i], n})
	}
}

// dominantType is the type in which req takes the largest share of the partition.
func dominantType(req, total Resource, types int) int {
	best, bestShare := 0, Share{0, 1}
	for i := 0; i < types; i++ {
		if total[i] <= 0 || req[i] <= 0 {
			continue
		}
		s := Share{uint64(req[i]), uint64(total[i])}
		if bestShare.Less(s) {
			best, bestShare = i, s
		}
	}
	return best
}

// ring returns the ring number holding amount x of type t.
func (r *rings) ring(t int, x int64) int64 {
	return r.cfg[t].ring(x)
}

func (c *RingConfig) ring(x int64) int64 {
	if x < c.Base {
		return 0
	}
	if len(c.Bounds) == 0 {
		return (x-c.Base)/c.Width + 1
	}
	if last := c.Bounds[len(c.Bounds)-1]; x >= last {
		return int64(len(c.Bounds)) + (x-last)/c.Width + 1
	}
	// The first bound above x closes x's ring.
	return int64(sort.Search(len(c.Bounds), func(i int) bool { return c.Bounds[i] > x })) + 1
}

func (r *rings) choose(req Resource, ok func(*node) bool) *node {
	t := dominantType(req, r.totals(), r.types)
	k := r.ring(t, req[t])
	// Steps 1-2: best fit in ring K, else in the first non-empty ring of K+1..K+N: the first
	// fitting node at or above req in free order, if its ring is within K+N.
	ascend := func(visit btree.ItemIteratorG[freeKey]) { r.index[t].AscendGreaterOrEqual(freeKey{req[t], nil}, visit) }
	if n := r.walk(ascend, func(fk freeKey) bool { return r.ring(t, fk.free) > k+int64(r.limit) }, req, ok); n != nil {
		return n
	}
	// Step 3: from the largest ring down, the node with the most free room that fits.
	descend := func(visit btree.ItemIteratorG[freeKey]) { r.index[t].Descend(visit) }
	return r.walk(descend, func(fk freeKey) bool { return fk.free < req[t] }, req, ok)
}

// walk returns the first node along one index walk that fits req and that ok accepts,
// giving up when past says the walk has gone too far or after r.visits nodes.
func (r *rings) walk(iterate func(btree.ItemIteratorG[freeKey]), past func(freeKey) bool, req Resource, ok func(*node) bool) *node {
	var found *node
	visits := 0
	iterate(func(fk freeKey) bool {
		if past(fk) || visits >= r.visits {
			return false
		}
		visits++
		if req.Fits(fk.n.room()) && ok(fk.n) {
			found = fk.n
			return false
		}
		return true
	})
	return found
}

// nodeOrder is n's insertion order; a nil node (a search pivot) sorts first.
func nodeOrder(n *node) int {
	if n == nil {
		return -1
	}
	return n.order
}
