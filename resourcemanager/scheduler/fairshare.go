package scheduler

import "math"

// The Fair Scheduler's shares. A tree read from its allocation file (capacity.Tree.Fair)
// runs as groups whose quotas are the Fair Scheduler's instantaneous fair shares,
// recomputed before every pass: what each queue would get were every queue with runnable
// applications busy, by weight, between its minResources and maxResources. Such groups
// have no user limits (the Fair Scheduler has none), and maxResources written as amounts
// also caps what a queue holds.

// bounds sets g's ceiling from leaf q's and its parents' ceilings: a parent's ceiling
// also caps each leaf under it. (Floors act through the fair shares alone.)
func (g *group) bounds(q *queue) {
	for cur := q; cur != nil; cur = cur.Parent {
		c := cur.bounds.ceiling
		if c == nil {
			continue
		}
		if g.maxRes == nil {
			r := *c
			g.maxRes = &r
			continue
		}
		for i, v := range c {
			if v >= 0 && (g.maxRes[i] < 0 || v < g.maxRes[i]) {
				g.maxRes[i] = v
			}
		}
	}
}

// queueBounds are a queue's floor and ceiling as amounts (nil: none; the ceiling -1 for a
// type it does not name), read once as the engine's queues are built (queues.go).
type queueBounds struct{ floor, ceiling *Resource }

// withinMaximum reports whether the group may hold more as well as what it holds in the
// default partition within its ceiling, in every type the ceiling names (the Fair
// Scheduler's FSQueue.fitsInMaxShare).
func (g *group) withinMaximum(more Resource) bool {
	if g.maxRes == nil {
		return true
	}
	held := g.used[""].Add(more)
	for i, limit := range g.maxRes {
		if limit >= 0 && held[i] > limit {
			return false
		}
	}
	return true
}

// applyFairShares sets every group's default-partition quota to its instantaneous fair
// share (FSParentQueue.recomputeShares, ComputeFairShares): from the root down, a
// parent's share goes to its active children — those with runnable applications under
// them — by weight, each child's held between its floor and its ceiling and the rest
// spread over the others; an inactive queue's share is 0. Shares are of the default
// partition, measured as groups are ranked (usageMeasure).
func (e *Engine) applyFairShares() {
	p := e.partitions[""]
	if p == nil || p.total.IsZero() || e.root == nil {
		return
	}
	ut, uc := e.usageMeasure()
	floor := func(q *queue) float64 {
		if q.bounds.floor == nil {
			return 0
		}
		return DominantShare(*q.bounds.floor, p.total, ut, uc).Float()
	}
	ceiling := func(q *queue) float64 {
		hi := q.AbsoluteMaximumCapacity
		if c := q.bounds.ceiling; c != nil {
			r := *c
			for i := range r {
				if r[i] < 0 {
					r[i] = p.total[i]
				}
			}
			hi = min(hi, DominantShare(r, p.total, ut, uc).Float())
		}
		return hi
	}
	var walk func(q *queue, share float64)
	walk = func(q *queue, share float64) {
		if q.IsLeaf() {
			if g := e.groups[q.Path]; g != nil {
				g.quota[""] = uint64(math.Round(share * ppm))
			}
			return
		}
		kids := make([]fairChild, 0, len(q.Children))
		for _, c := range q.Children {
			kids = append(kids, fairChild{weight: c.Capacity, lo: floor(c), hi: ceiling(c), active: e.fairActive(c)})
		}
		shares := splitFairly(kids, share)
		for i, c := range q.Children {
			walk(c, shares[i])
		}
	}
	walk(e.root, 1)
}

// fairActive reports whether queue q has runnable applications under it: started, or
// free to start (the Fair Scheduler's runnable apps).
func (e *Engine) fairActive(q *queue) bool {
	if !q.IsLeaf() {
		for _, c := range q.Children {
			if e.fairActive(c) {
				return true
			}
		}
		return false
	}
	g := e.groups[q.Path]
	if g == nil {
		return false
	}
	for _, a := range g.apps {
		if a.started || e.mayStart(a) {
			return true
		}
	}
	return false
}

// fairChild is one child in splitFairly: its weight, floor and ceiling (shares of the
// cluster) and whether it takes part.
type fairChild struct {
	weight, lo, hi float64
	active         bool
}

// splitFairly divides share among the active children as ComputeFairShares does: each
// gets clamp(weight × r, lo, hi) (the ceiling winning over the floor), with r chosen so
// that the shares add up to share, or to the ceilings' sum when that is less; when the
// floors alone exceed it, each gets its floor. Inactive children get 0.
func splitFairly(kids []fairChild, share float64) []float64 {
	out := make([]float64, len(kids))
	at := func(r float64) float64 {
		var sum float64
		for _, k := range kids {
			if k.active {
				sum += min(max(k.weight*r, k.lo), k.hi)
			}
		}
		return sum
	}
	var ceilings float64
	for _, k := range kids {
		if k.active {
			ceilings += k.hi
		}
	}
	target := min(share, ceilings)
	r := 0.0
	if at(0) < target {
		hi := 1.0
		for i := 0; i < 64 && at(hi) < target; i++ {
			hi *= 2
		}
		lo := 0.0
		for range 60 {
			mid := (lo + hi) / 2
			if at(mid) < target {
				lo = mid
			} else {
				hi = mid
			}
		}
		r = hi
	}
	for i, k := range kids {
		if k.active {
			out[i] = min(max(k.weight*r, k.lo), k.hi)
		}
	}
	return out
}
