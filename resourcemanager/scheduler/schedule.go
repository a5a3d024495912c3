package scheduler

import (
	"math"
	"time"
)

// Schedule runs group rounds until no round places anything or max allocations were
// made (max <= 0: no limit). It returns the allocations in the order they were made and
// the preemption notices and kills decided on the way.
func (e *Engine) Schedule(max int) Plan {
	e.lock()
	defer e.mu.Unlock()
	now := e.cfg.Now()
	e.applySchedules(now)
	res := Plan{Preemptions: e.dueKills(now)}
	var unplaced unplacedLog
	// The ranking buffer and partition flags are the engine's (e.mu is held): fresh ones
	// per call were most of what a one-allocation pass allocated.
	if cap(e.ranked) < len(e.leaves) {
		e.ranked = make([]rankedGroup, 0, len(e.leaves))
	}
	ranked := e.ranked[:0]
	parts := e.partitionOrder
	active := e.active[:0]
	for range parts {
		active = append(active, true)
	}
	e.active = active
	// Room for the plan, made with its first allocation, as much as is pending: grown by
	// doubling, a slice's plan of 256 cost as much again in garbage (a ninth of the RM's
	// at its peak).
	room := 0
	if max > 0 {
		for _, p := range parts {
			for _, n := range p.pendingShapes {
				room += n
			}
		}
		room = min(max, room)
	}
	for max <= 0 || len(res.Allocations) < max {
		placed, defaultPlaced := false, false
		for i, p := range parts {
			if !active[i] {
				continue
			}
			got, pre := e.round(p, ranked[:0], now, &unplaced)
			res.Preemptions = append(res.Preemptions, pre...)
			if len(got) == 0 && len(pre) == 0 && p.lends && !defaultPlaced {
				// The default partition ("" sorts first) placed nothing in this pass: its
				// work may take this non-exclusive partition's idle nodes (shared.go).
				got = e.sharedRound(p, ranked[:0])
			}
			if len(got) == 0 {
				if len(pre) > 0 {
					active[i] = false // step 7: preemption is freeing room; sleep
				}
				continue
			}
			defaultPlaced = defaultPlaced || p.name == ""
			// A gang's containers come from one round together, even past max.
			if res.Allocations == nil {
				res.Allocations = make([]Allocation, 0, room+len(got))
			}
			res.Allocations = append(res.Allocations, got...)
			placed = true
			if max > 0 && len(res.Allocations) >= max {
				break
			}
		}
		if !placed {
			break
		}
	}
	res.Unplaced, res.Balance = unplaced.out, unplaced.balance
	return res
}

// round is one group round in partition p (scheduling.md §1, steps 1-8). What it placed
// (one container, or a whole gang) is in the engine's buffer, valid until the next round.
func (e *Engine) round(p *partition, ranked []rankedGroup, now time.Time, unplaced *unplacedLog) ([]Allocation, []Preemption) {
	types, cpuOnly := e.usageMeasure()
	e.placed = e.placed[:0]
	one := func(a Allocation) []Allocation {
		e.placed = append(e.placed, a)
		return e.placed
	}
	for _, g := range e.leaves {
		if g.canUse(p.name) && !e.sitsOut(g, p, now) {
			ranked = append(ranked, newRankedGroup(g, g.value(p.name, p.total, types, cpuOnly)))
		}
	}
	attempted := false
	for i := range ranked {
		// The groups in value order, selected lazily: a round usually places for the
		// first group or the second, so a full sort of every group each round was wasted.
		selectMin(ranked, i)
		g := ranked[i].g
		if i > 0 && attempted && !g.belowQuota(p.name, p.total, types, cpuOnly, 1000) {
			return nil, nil // step 8: only groups under quota may go after an attempt
		}
		a, ask := e.pick(g, p, unplaced)
		if ask == nil {
			continue
		}
		attempted = true
		if ask.Gang {
			if e.gangFits(p, a, ask) {
				e.placed = e.placeGang(p, a, ask, e.placed)
				return e.placed, nil
			}
			// The gang waits whole; a backfill group runs later jobs that leave it room.
			if g.policy == PolicyBackfill {
				if ba, bask, bn := e.backfillCandidate(g, p, a, ask, now); bask != nil {
					return one(e.placeOn(p, ba, bask, bn)), nil
				}
			}
			unplaced.note(e, p, a, ask, ReasonNoNode)
			continue
		}
		n, wait := e.chooseLocal(p, a, ask)
		if n == nil && ask.Placement != nil {
			// A SchedulingRequest no node meets now does not hold back the requests
			// behind it (the Java scheduler tries each of an application's keys in turn),
			// nor, when none of those places, the queue's other applications.
			if alt, an := e.placeableBehind(g, p, a, ask); alt != nil {
				ask, n = alt, an
			} else if b, bask, bn := e.nextAppPlaceable(g, p, a); b != nil {
				unplaced.note(e, p, a, ask, ReasonNoNode)
				a, ask, n = b, bask, bn
			}
		}
		if wait {
			unplaced.note(e, p, a, ask, ReasonLocality)
			continue // delay scheduling: this ask lets the opportunity pass
		}
		gate := p.balance != nil && e.cfg.Balance.GateWindow > 0 && a.skips < e.cfg.Balance.MaxSkips && p.balance.governs(ask.Capability)
		if gate && (n == nil || p.balance.worsens(n, ask.Capability)) {
			// Balance gating: when the head would worsen its node's balance (or does not
			// fit), a later request of the group that improves a node's balance goes
			// first; the head waits, a bounded number of times.
			if la, lask, ln := e.improvingLater(g, p, a, ask); lask != nil {
				a.skips++
				unplaced.decide(e, p, a, ask, n, OutcomeGated)
				unplaced.decide(e, p, la, lask, ln, OutcomePlacedByGate)
				return one(e.placeOn(p, la, lask, ln)), nil
			}
		}
		if n == nil && g.policy == PolicyBackfill {
			// The head is blocked: a later job that delays no one it must respect runs now.
			if ba, bask, bn := e.backfillCandidate(g, p, a, ask, now); bask != nil {
				return one(e.placeOn(p, ba, bask, bn)), nil
			}
		}
		if n == nil {
			// Steps 6-7: a starved group under quota×A gets room preempted for it; not for
			// a request whose constraint, not room, keeps it waiting.
			if e.cfg.Preemption.Enabled && !constrained(ask) {
				if pre := e.preemptFor(g, p, ask, now); len(pre) > 0 {
					unplaced.note(e, p, a, ask, ReasonPreempting)
					return nil, pre
				}
			}
			unplaced.note(e, p, a, ask, ReasonNoNode)
			continue
		}
		unplaced.decide(e, p, a, ask, n, OutcomePlaced)
		return one(e.placeOn(p, a, ask, n)), nil
	}
	return nil, nil
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
// pruned from the waiting list on the way; those at a queue cap are noted as unplaced.
func (e *Engine) pick(g *group, p *partition, unplaced *unplacedLog) (*app, *Ask) {
	w := g.waiting[p.name]
	for len(w) > 0 && w[0].pendingIn[p.name] <= 0 {
		w = w[1:]
	}
	g.waiting[p.name] = w
	limitTypes, limitCPUOnly := e.limitMeasure(e.cfg.Types.Len())
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
		if ask == nil {
			continue
		}
		if !e.mayStart(a) || !e.unmanagedAMFits(a, p, limitTypes, limitCPUOnly) || !g.limitsAllow(a, oneOf(ask), p, e.cfg.MinimumAllocation, limitTypes, limitCPUOnly) {
			unplaced.note(e, p, a, ask, ReasonQueueLimit)
			continue
		}
		best, bestAsk = a, ask
		if g.policy == PolicyFIFO || g.policy == PolicyBackfill {
			break
		}
	}
	return best, bestAsk
}

// sizeWeightedUse is the fair ordering's magnitude with size-based weights
// (FairOrderingPolicy.getMagnitude): the memory a uses over log2(1 + its demand, what it
// uses and still asks for), so that a larger application gets a larger share.
func sizeWeightedUse(a *app) float64 {
	demand := a.used[Memory]
	for _, ask := range a.anyAsks {
		demand += ask.Capability[Memory] * int64(ask.Count)
	}
	return float64(a.used[Memory]) / (math.Log1p(float64(demand)) / math.Ln2)
}

// servesBefore orders two waiting applications under a policy; ties keep submission order
// (the waiting list's order), so callers only replace on a strict win.
func (e *Engine) servesBefore(policy string, a, b *app, p *partition) bool {
	switch policy {
	case PolicyPriority: // larger application priority first
		return a.spec.Priority > b.spec.Priority
	case PolicyFair: // least memory used first (YARN's fair share is memory-based)
		if a.group.queue.FairSizeBasedWeight {
			return sizeWeightedUse(a) < sizeWeightedUse(b)
		}
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
	if e.root != nil {
		e.applyFairShares()
		return
	}
	t := now.In(e.cfg.Location)
	m := t.Hour()*60 + t.Minute()
	for _, g := range e.leaves {
		switch {
		case g.absQuota != nil:
			total := Resource{}
			if p, ok := e.partitions[""]; ok {
				total = p.total
			}
			ut, uc := e.usageMeasure()
			s := DominantShare(*g.absQuota, total, ut, uc)
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
	switch ask.Label {
	case "":
		return a.label
	case DefaultPartition:
		return ""
	}
	return ask.Label
}

// chooseNode asks the partition's strategy for a node for one container of a's ask: the
// nodes that fit and pass the filters (static nodes for AMs, the app's blacklist) are
// the candidates, and the strategy's index picks the best of them.
func (e *Engine) chooseNode(p *partition, a *app, ask *Ask) *node {
	return e.chooseNodeWhere(p, a, ask, nil)
}

// chooseNodeWhere is chooseNode with an extra acceptance test (nil: none).
func (e *Engine) chooseNodeWhere(p *partition, a *app, ask *Ask, accept func(*node) bool) *node {
	e.resetBlacklist(a, p)
	return p.place.choose(ask.Capability, passes(e.filtersFor(p, a, ask, accept)))
}

// placeOn allocates one container of ask on n.
func (e *Engine) placeOn(p *partition, a *app, ask *Ask, n *node) Allocation {
	e.nextCID++
	c := &container{id: e.nextCID, app: a, node: n, resource: ask.Capability, priority: ask.Priority, am: ask.AM, start: e.cfg.Now(), assumed: true,
		placement: ask.Placement, rack: n.spec.Rack, request: ask.RequestID}
	e.tagPlaced(c, +1)
	old := n.free()
	n.allocated = n.allocated.Add(c.resource)
	n.containers.add(c)
	p.place.update(n, old)
	p.allocated = p.allocated.Add(c.resource)
	addSum(&e.sums.allocated, c.resource, 1)
	e.containers.put(c)
	a.containers.add(c)
	if !c.am {
		a.undelivered.add(c)
	}
	a.used = a.used.Add(c.resource)
	a.running++
	e.markStarted(a)
	if a.skips > 0 && a.nextAskIn(ask.partition) == ask {
		a.skips = 0
	}
	a.group.addUse(a.spec.User, p.name, c.resource, 1)
	if c.am {
		a.group.addAMUse(a.spec.User, c.resource, 1)
	}
	loc := e.consumeLocal(a, ask, n)
	// The ask's own partition: a non-exclusive partition's node may serve the default
	// partition's ask (shared.go).
	ask.Count--
	a.pendingIn[ask.partition]--
	a.pending--
	a.group.pendingChanged(a, a.pending+1)
	if ask.partition == p.name {
		e.shapeIn(p, ask.Capability, -1)
	} else {
		e.shape(ask.partition, ask.Capability, -1)
	}
	if ask.Count == 0 {
		delete(a.asks, ask.key())
	}
	return Allocation{Container: c.id, App: a.spec.ID, Node: n.spec.ID, Priority: ask.Priority, Resource: c.resource, AM: ask.AM, Time: c.start,
		RequestID: ask.RequestID, Placement: ask.Placement, Queue: a.group.name, Locality: loc}
}
