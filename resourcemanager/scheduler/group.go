package scheduler

import (
	"fmt"
	"time"

	"github.com/bobbin-yarn/bobbin/conf/capacity"
)

// ppm is the unit of quotas: parts per million of a partition.
const ppm = 1_000_000

// group is a quota group: one leaf queue (scheduling.md §1).
type group struct {
	name     string
	nameRank int // position in name order among the leaves (ranking ties)
	queue    *capacity.Queue
	// quota per partition in ppm of that partition; a partition the queue cannot use is absent.
	quota map[string]uint64
	used  map[string]Resource
	apps  []*app // in submission order
	// waiting lists, per partition, the apps with outstanding asks there, in submission
	// order; apps whose asks ran out are pruned lazily by pick.
	waiting map[string][]*app
	// preemptionPolicy orders this group's containers as victims; preemptedAt is when it
	// last lost containers (cool-down and hold).
	preemptionPolicy string
	preemptedAt      time.Time
	policy           string
	backfill         string
	schedule         []CapacityWindow
	// absQuota is set for a queue whose capacity is an absolute resource; its quota share
	// follows the default partition's size.
	absQuota *Resource
	// amUsed is what the group's AM containers hold; userUsed what each user holds.
	amUsed   Resource
	userUsed map[string]Resource
}

func newGroup(q *capacity.Queue, gs GroupSettings) *group {
	if gs.Policy == "" {
		gs.Policy = PolicyFIFO
	}
	g := &group{name: q.Name, queue: q, quota: map[string]uint64{}, used: map[string]Resource{}, waiting: map[string][]*app{},
		policy: gs.Policy, backfill: gs.Backfill, preemptionPolicy: gs.PreemptionPolicy, schedule: gs.Schedule,
		userUsed: map[string]Resource{}}
	g.quota[""] = uint64(q.AbsoluteCapacity*ppm + 0.5)
	// Per-label quota: the product of label capacities from the root down.
	labels := map[string]float64{}
	for l := range q.Labels {
		labels[l] = 1
	}
	for cur := q; cur != nil && cur.Parent != nil; cur = cur.Parent {
		for l := range labels {
			share, ok := cur.Labels[l]
			if !ok {
				labels[l] = 0
				continue
			}
			labels[l] *= share.Capacity / 100
		}
	}
	for l, f := range labels {
		g.quota[l] = uint64(f*ppm + 0.5)
	}
	return g
}

// buildGroup makes the group of leaf queue q, resolving an absolute-resource capacity.
func buildGroup(types Types, q *capacity.Queue, gs GroupSettings) (*group, error) {
	g := newGroup(q, gs)
	if q.CapacityResource != nil {
		r, err := types.Vector(q.CapacityResource)
		if err != nil {
			return nil, fmt.Errorf("scheduler: queue %s capacity: %w", q.Path, err)
		}
		g.absQuota = &r
	}
	return g, nil
}

// canUse reports whether the group may place work in partition p.
func (g *group) canUse(p string) bool {
	if p == "" {
		return true
	}
	_, ok := g.quota[p]
	return ok
}

// value is the group's used/quota in partition p against the partition's total.
func (g *group) value(p string, total Resource, types int, cpuOnly bool) groupValue {
	s := DominantShare(g.used[p], total, types, cpuOnly)
	return groupValue{usedNum: s.Num, usedDen: s.Den, quota: g.quota[p]}
}

// belowQuota reports used < quota × factor (factor in thousandths), exactly:
// used.Num/used.Den < quota/ppm × f/1000  <=>  used.Num × ppm × 1000 < quota × f × used.Den.
func (g *group) belowQuota(p string, total Resource, types int, cpuOnly bool, factorMilli uint64) bool {
	s := DominantShare(g.used[p], total, types, cpuOnly)
	return cmp192(s.Num, ppm, 1000, g.quota[p], factorMilli, s.Den) < 0
}

// aboveQuota reports used > quota × factor (thousandths).
func (g *group) aboveQuota(p string, total Resource, types int, cpuOnly bool, factorMilli uint64) bool {
	s := DominantShare(g.used[p], total, types, cpuOnly)
	return cmp192(s.Num, ppm, 1000, g.quota[p], factorMilli, s.Den) > 0
}

// scheduledQuota is the default-partition quota at minute m of the day: a window's
// capacity replaces the queue's own capacity (percent of the parent) inside the window.
func (g *group) scheduledQuota(m int) uint64 {
	capPct := g.queue.Capacity
	for _, w := range g.schedule {
		if w.contains(m) {
			capPct = w.Capacity
			break
		}
	}
	parentAbs := 1.0
	if g.queue.Parent != nil {
		parentAbs = g.queue.Parent.AbsoluteCapacity
	}
	return uint64(parentAbs*capPct/100*ppm + 0.5)
}

// limitsAllow applies the queue's caps to one more container of ask for app a in
// partition p: maximum-capacity, user-limit-factor (when configured) and
// maximum-am-resource-percent (at least one AM may always run).
func (g *group) limitsAllow(a *app, ask *Ask, p *partition, types int, cpuOnly bool) bool {
	q := g.queue
	if p.name == "" && q.AbsoluteMaximumCapacity < 1 {
		maxPPM := uint64(q.AbsoluteMaximumCapacity*ppm + 0.5)
		if !shareAtMost(g.used[""].Add(ask.Capability), p.total, types, cpuOnly, maxPPM) {
			return false
		}
	}
	if q.UserLimitFactorSet {
		capPPM := uint64(float64(g.quota[p.name])*q.UserLimitFactor + 0.5)
		if !shareAtMost(g.userUsed[a.spec.User].Add(ask.Capability), p.total, types, cpuOnly, capPPM) {
			return false
		}
	}
	if ask.AM && !g.amUsed.IsZero() {
		amPPM := uint64(float64(g.quota[p.name])*q.MaximumAMResourcePercent + 0.5)
		if !shareAtMost(g.amUsed.Add(ask.Capability), p.total, types, cpuOnly, amPPM) {
			return false
		}
	}
	return true
}

// shareAtMost reports used/total (dominant) <= limit/ppm.
func shareAtMost(used, total Resource, types int, cpuOnly bool, limit uint64) bool {
	s := DominantShare(used, total, types, cpuOnly)
	return cmp192(s.Num, ppm, 1, limit, s.Den, 1) <= 0
}
