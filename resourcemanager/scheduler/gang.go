package scheduler

import (
	"sort"
	"time"
)

// Gang asks (seed 003's wide jobs): an Ask with Gang set is placed whole — every one of
// its Count containers in the same round, or none — since the job runs only with all of
// them. A blocked gang at the head of a backfill group is reserved as a whole: its shadow
// time is the earliest moment Count containers fit at once (reserveGang), and EASY and
// conservative backfilling let later jobs run only if they leave it that moment. A gang
// is never itself backfilled ahead of others; it starts when it is first in line.

// oneOf is ask as one container: a gang at the head of its group is picked when one of
// its containers is within the queue's limits, and then waits (reserving, under
// backfilling) until the whole fits (gangFits).
func oneOf(ask *Ask) *Ask {
	if !ask.Gang {
		return ask
	}
	one := *ask
	one.Gang = false
	return &one
}

// gangFits reports whether every container of the gang ask fits now, counting per node
// how many of it the node holds, under the ask's filters and the group's limits for the
// whole gang.
func (e *Engine) gangFits(p *partition, a *app, ask *Ask) bool {
	limitTypes, limitCPUOnly := e.limitMeasure(e.cfg.Types.Len())
	if !a.group.limitsAllow(a, ask, p, e.cfg.MinimumAllocation, limitTypes, limitCPUOnly) {
		return false
	}
	ok := passes(e.filtersFor(p, a, ask, nil))
	need := ask.Count
	for _, n := range p.nodes {
		if !n.schedulable() || !ok(n) {
			continue
		}
		need -= fitCount(n.room(), ask.Capability)
		if need <= 0 {
			return true
		}
	}
	return false
}

// fitCount is how many containers of req fit in free.
func fitCount(free, req Resource) int {
	k := -1
	for i, r := range req {
		if r <= 0 {
			continue
		}
		if free[i] < r {
			return 0
		}
		if c := int(free[i] / r); k < 0 || c < k {
			k = c
		}
	}
	if k < 0 {
		return 1 << 30 // a request of nothing fits any number of times
	}
	return k
}

// placeGang places every container of a gang ask that gangFits accepted, each where the
// strategy chooses (the nodes' free room changes as the gang fills them), into out.
func (e *Engine) placeGang(p *partition, a *app, ask *Ask, out []Allocation) []Allocation {
	ok := passes(e.filtersFor(p, a, ask, nil))
	for count := ask.Count; count > 0; count-- {
		n := e.chooseNode(p, a, ask)
		if n == nil {
			// The strategy's walks are bounded; gangFits counted every node, so one fits.
			for _, m := range p.nodes {
				if m.schedulable() && ok(m) && ask.Capability.Fits(m.room()) && (n == nil || m.order < n.order) {
					n = m
				}
			}
		}
		out = append(out, e.placeOn(p, a, ask, n))
	}
	return out
}

// reserveGang finds the earliest time at or after now at which count containers of req
// fit p's nodes at once for dur, given the running containers and earlier reservations:
// one reservation per container, all starting then.
func (e *Engine) reserveGang(p *partition, req Resource, count int, dur time.Duration, now time.Time, rs []reservation) ([]reservation, bool) {
	times := forecastTimes(p, now, rs)
	nodes := schedulableNodes(p)
	for _, t := range times {
		trial := append([]reservation(nil), rs...)
		got := 0
		for _, n := range nodes {
			for got < count && req.Fits(freeAt(n, t, trial)) && holds(n, t, req, dur, trial, times) {
				trial = append(trial, reservation{node: n, start: t, req: req, dur: dur})
				got++
			}
			if got == count {
				return trial[len(rs):], true
			}
		}
	}
	return nil, false
}

// forecastTimes are now and every forecast container end and reservation end, in order:
// the moments free room can grow.
func forecastTimes(p *partition, now time.Time, rs []reservation) []time.Time {
	times := []time.Time{now}
	for _, n := range p.nodes {
		for _, c := range n.containers.items {
			if end := endOf(c); !end.IsZero() && end.After(now) {
				times = append(times, end)
			}
		}
	}
	for _, r := range rs {
		if r.dur > 0 {
			times = append(times, r.start.Add(r.dur))
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	return times
}

// schedulableNodes are p's schedulable nodes in node order.
func schedulableNodes(p *partition) []*node {
	nodes := make([]*node, 0, len(p.nodes))
	for _, n := range p.nodes {
		if n.schedulable() {
			nodes = append(nodes, n)
		}
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].order < nodes[j].order })
	return nodes
}
