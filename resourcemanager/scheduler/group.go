package scheduler

import (
	"fmt"
	"math"
	"math/bits"
	"time"
)

// ppm is the unit of quotas: parts per million of a partition.
const ppm = 1_000_000

// group is a quota group: one leaf queue (scheduling.md §1).
type group struct {
	name     string
	nameRank int // position in name order among the leaves (ranking ties)
	queue    *queue
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
	// maxRes is the ceiling on what the group holds (bobbin.maximum-resource, its own or a
	// parent's; -1 for a type without one); fair marks a group of the Fair Scheduler's
	// tree (fairshare.go).
	maxRes *Resource
	fair   bool
	// amUsed is what the group's AM containers hold; userUsed what each user holds, and
	// userUsedIn the same per partition (the user limit is a partition's).
	amUsed     Resource
	userAMUsed map[string]Resource
	userUsed   map[string]Resource
	userUsedIn map[userPartition]Resource
	// activeUsers counts, per user, the group's applications with outstanding asks: the
	// Capacity Scheduler's active users, among whom the user limit divides the queue.
	activeUsers map[string]int
}

// userPartition keys a user's use of one partition.
type userPartition struct{ user, partition string }

// addUse books r (sign +1) or takes it back (-1) as user's in partition part.
func (g *group) addUse(user, part string, r Resource, sign int64) {
	if sign > 0 {
		g.used[part] = g.used[part].Add(r)
		g.userUsed[user] = g.userUsed[user].Add(r)
		g.userUsedIn[userPartition{user, part}] = g.userUsedIn[userPartition{user, part}].Add(r)
		return
	}
	g.used[part] = g.used[part].Sub(r)
	g.userUsed[user] = g.userUsed[user].Sub(r)
	k := userPartition{user, part}
	if left := g.userUsedIn[k].Sub(r); left.IsZero() {
		delete(g.userUsedIn, k)
	} else {
		g.userUsedIn[k] = left
	}
}

// addAMUse books r (sign +1) or takes it back (-1) as an AM container of user's.
func (g *group) addAMUse(user string, r Resource, sign int64) {
	if sign > 0 {
		g.amUsed = g.amUsed.Add(r)
		g.userAMUsed[user] = g.userAMUsed[user].Add(r)
		return
	}
	g.amUsed = g.amUsed.Sub(r)
	if left := g.userAMUsed[user].Sub(r); left.IsZero() {
		delete(g.userAMUsed, user)
	} else {
		g.userAMUsed[user] = left
	}
}

// pendingChanged keeps activeUsers as a's outstanding count went from before to a.pending.
func (g *group) pendingChanged(a *app, before int) {
	switch u := a.spec.User; {
	case before <= 0 && a.pending > 0:
		g.activeUsers[u]++
	case before > 0 && a.pending <= 0:
		if g.activeUsers[u]--; g.activeUsers[u] <= 0 {
			delete(g.activeUsers, u)
		}
	}
}

func newGroup(q *queue, gs GroupSettings) *group {
	if gs.Policy == "" {
		gs.Policy = PolicyFIFO
	}
	g := &group{name: q.Name, queue: q, quota: map[string]uint64{}, used: map[string]Resource{}, waiting: map[string][]*app{},
		policy: gs.Policy, backfill: gs.Backfill, preemptionPolicy: gs.PreemptionPolicy, schedule: gs.Schedule,
		userUsed: map[string]Resource{}, userUsedIn: map[userPartition]Resource{}, userAMUsed: map[string]Resource{}, activeUsers: map[string]int{}}
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

// buildGroup makes the group of leaf queue q, resolving an absolute-resource capacity
// and its ceiling; fair: q is of the Fair Scheduler's tree.
func buildGroup(types Types, q *queue, gs GroupSettings, fair bool) (*group, error) {
	g := newGroup(q, gs)
	g.fair = fair
	g.bounds(q)
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
// partition p: maximum-capacity, the user limit and maximum-am-resource-percent (at least
// one AM may always run). A gang ask is checked whole: all its Count containers.
func (g *group) limitsAllow(a *app, ask *Ask, p *partition, minAlloc Resource, types int, cpuOnly bool) bool {
	q := g.queue
	whole, before := ask.Capability, Resource{} // before: the gang's containers ahead of its last
	if ask.Gang && ask.Count > 1 {
		for i := range whole {
			whole[i] *= int64(ask.Count)
			before[i] = whole[i] - ask.Capability[i]
		}
	}
	if p.name == "" && q.AbsoluteMaximumCapacity < 1 {
		maxPPM := uint64(q.AbsoluteMaximumCapacity*ppm + 0.5)
		if !shareAtMost(g.used[""].Add(whole), p.total, types, cpuOnly, maxPPM) {
			return false
		}
	}
	if p.name == "" && !g.withinMaximum(whole) {
		return false
	}
	if !g.fair && !g.userLimitAllows(a, ask.Capability, before, minAlloc, p, types, cpuOnly) {
		return false
	}
	return !ask.AM || g.amLimitAllows(a, whole, p, types, cpuOnly)
}

// amLimitAllows reports whether one more AM of a's, holding am, stays within
// maximum-am-resource-percent in partition p: the queue's limit and its user's (at least
// one AM may always run).
func (g *group) amLimitAllows(a *app, am Resource, p *partition, types int, cpuOnly bool) bool {
	if g.amUsed.IsZero() {
		return true
	}
	q := g.queue
	amPPM := float64(g.quota[p.name]) * q.MaximumAMResourcePercent
	if !shareAtMost(g.amUsed.Add(am), p.total, types, cpuOnly, uint64(amPPM+0.5)) {
		return false
	}
	if g.fair {
		return true // the Fair Scheduler has no user's AM limit
	}
	// Each user's AM limit (LeafQueue.getUserAMResourceLimit): the queue's times the
	// user's share, max(minimum-user-limit-percent, 1/active users), times the factor.
	share := max(q.MinimumUserLimitPercent/100, 1/float64(max(1, len(g.activeUsers))))
	userPPM := uint64(amPPM*share*q.UserLimitFactor + 0.5)
	return shareAtMost(g.userAMUsed[a.spec.User].Add(am), p.total, types, cpuOnly, userPPM)
}

// shareAtMost reports used/total (dominant) <= limit/ppm.
func shareAtMost(used, total Resource, types int, cpuOnly bool, limit uint64) bool {
	s := DominantShare(used, total, types, cpuOnly)
	return cmp192(s.Num, ppm, 1, limit, s.Den, 1) <= 0
}

// userLimitAllows is the Capacity Scheduler's user limit (LeafQueue.computeUserLimit and
// canAssignToUser in 2.7.3, UsersManager in 3.1.1), in shares of partition p:
//
//	current = the queue's capacity while the queue uses less, else its use + this container
//	limit   = min(max(current / active users, current × minimum-user-limit-percent/100),
//	              capacity × user-limit-factor)
//
// and a user may take another container (required) while what it holds is at most the
// limit: as in Java, the container that crosses the limit is still given. user-limit-factor
// defaults to 1, so a user alone gets the queue's capacity and not the idle room beyond it
// (up to maximum-capacity), which a larger factor lets it borrow. before is what comes
// ahead of this container in the same placement (a gang's other containers): the check is
// the one its last container would meet were they placed one by one.
func (g *group) userLimitAllows(a *app, required, before, minAlloc Resource, p *partition, types int, cpuOnly bool) bool {
	limit := limitAmount(g.userLimit(p, g.used[p.name].Add(before), required, types, cpuOnly), p.total, minAlloc, types, cpuOnly)
	held := g.userUsedIn[userPartition{a.spec.User, p.name}].Add(before)
	for i := range limit {
		if limit[i] >= 0 && held[i] > limit[i] {
			return false
		}
	}
	return true
}

// limitAmount is a limit in ppm of total as an amount of each measured type, rounded up
// to the minimum allocation as Java rounds it; -1 for a type not measured.
func limitAmount(limit uint64, total, minAlloc Resource, types int, cpuOnly bool) Resource {
	var out Resource
	for i := range out {
		out[i] = -1
		if i >= types || (cpuOnly && i != VCores) || total[i] <= 0 {
			continue
		}
		hi, lo := bits.Mul64(limit, uint64(total[i]))
		if hi >= ppm {
			continue // beyond any amount
		}
		amount, rem := bits.Div64(hi, lo, ppm)
		if rem > 0 {
			amount++
		}
		if step := uint64(minAlloc[i]); step > 0 {
			amount = (amount + step - 1) / step * step
		}
		out[i] = int64(min(amount, math.MaxInt64))
	}
	return out
}

// userLimit is the user limit in ppm of partition p (see userLimitAllows) while the group
// holds used there and a container of required is being placed.
func (g *group) userLimit(p *partition, used, required Resource, types int, cpuOnly bool) uint64 {
	q := g.queue
	capacity := g.quota[p.name]
	current := capacity
	if shareAtLeast(used, p.total, types, cpuOnly, capacity, 1000) {
		current = ceilPPM(DominantShare(used.Add(required), p.total, types, cpuOnly))
	}
	users := uint64(max(1, len(g.activeUsers)))
	limit := max((current+users-1)/users, uint64(float64(current)*q.MinimumUserLimitPercent/100))
	return min(limit, uint64(float64(capacity)*q.UserLimitFactor+0.5))
}

// ceilPPM is s in parts per million, rounded up.
func ceilPPM(s Share) uint64 {
	if s.Den == 0 {
		return 0
	}
	hi, lo := bits.Mul64(s.Num, ppm)
	if hi >= s.Den {
		return math.MaxUint64 // past any limit
	}
	q, r := bits.Div64(hi, lo, s.Den)
	if r > 0 {
		q++
	}
	return q
}
