package scheduler

import (
	"time"
)

// Backfilling (scheduling.md §5) for groups whose policy is "backfill". Runtimes come from
// AppSpec.Runtime (the submitter's declared estimate, or the application lifetime); a
// job without one is unbounded: it cannot be backfilled ahead of anyone, and its running
// containers never free their room in the forecast.

// backfillWindow bounds the waiting jobs one backfill decision looks at.
const backfillWindow = 32

// reservation is the earliest start a blocked job's next container can count on.
type reservation struct {
	node  *node
	start time.Time
	req   Resource
	dur   time.Duration // 0: unbounded
}

// endOf is when c is expected to finish (zero: unknown, never in the forecast).
func endOf(c *container) time.Time {
	if rt := c.app.spec.Runtime; rt > 0 {
		return c.start.Add(rt)
	}
	return time.Time{}
}

// freeAt forecasts n's free resources at time t from its running containers' expected
// ends and the reservations already made on it (each holds its room from its start for
// its duration).
func freeAt(n *node, t time.Time, rs []reservation) Resource {
	f := n.room()
	for _, c := range n.containers.items {
		if end := endOf(c); !end.IsZero() && !end.After(t) {
			f = f.Add(c.resource)
		}
	}
	for _, r := range rs {
		if r.node == n && !r.start.After(t) && (r.dur == 0 || r.start.Add(r.dur).After(t)) {
			f = f.Sub(r.req)
		}
	}
	return f
}

// reserve finds the earliest time at or after now at which req fits some node of p for
// dur, given the running containers and earlier reservations. Candidate times are now
// and every forecast container end and reservation end.
func (e *Engine) reserve(p *partition, req Resource, dur time.Duration, now time.Time, rs []reservation) (reservation, bool) {
	times := forecastTimes(p, now, rs)
	nodes := schedulableNodes(p)
	for _, t := range times {
		for _, n := range nodes {
			if req.Fits(freeAt(n, t, rs)) && holds(n, t, req, dur, rs, times) {
				return reservation{node: n, start: t, req: req, dur: dur}, true
			}
		}
	}
	return reservation{}, false
}

// reserveFor reserves an ask's room: one reservation, or one per container of a gang.
func (e *Engine) reserveFor(p *partition, a *app, ask *Ask, now time.Time, rs []reservation) []reservation {
	if ask.Gang {
		got, _ := e.reserveGang(p, ask.Capability, ask.Count, a.spec.Runtime, now, rs)
		return append(rs, got...)
	}
	if r, ok := e.reserve(p, ask.Capability, a.spec.Runtime, now, rs); ok {
		rs = append(rs, r)
	}
	return rs
}

// holds checks that req keeps fitting on n from t for dur at every later forecast point.
func holds(n *node, t time.Time, req Resource, dur time.Duration, rs []reservation, times []time.Time) bool {
	for _, u := range times {
		if !u.After(t) || (dur > 0 && !u.Before(t.Add(dur))) {
			continue
		}
		if !req.Fits(freeAt(n, u, rs)) {
			return false
		}
	}
	for _, r := range rs {
		if r.node == n && r.start.After(t) && (dur == 0 || r.start.Before(t.Add(dur))) {
			if !req.Fits(freeAt(n, r.start, rs)) {
				return false
			}
		}
	}
	return true
}

// backfillCandidate returns a later job of g that may start now without delaying the
// jobs it must respect: the head only (EASY) or every blocked job ahead of it
// (conservative). head is the group's first waiting job, which does not fit now.
func (e *Engine) backfillCandidate(g *group, p *partition, head *app, headAsk *Ask, now time.Time) (*app, *Ask, *node) {
	rs := e.reserveFor(p, head, headAsk, now, nil)
	seen := 0
	for _, a := range g.waiting[p.name] {
		if a == head || a.pendingIn[p.name] <= 0 {
			continue
		}
		if seen++; seen > backfillWindow {
			break
		}
		ask := a.nextAskIn(p.name)
		if ask == nil {
			continue
		}
		// A gang is not backfilled: it starts when it is first in line.
		if a.spec.Runtime > 0 && !ask.Gang {
			if n := e.backfillNode(p, a, ask, now, rs); n != nil {
				return a, ask, n
			}
		}
		if g.backfill == BackfillConservative {
			// Every job passed over keeps its own reservation (a gang's, whole).
			rs = e.reserveFor(p, a, ask, now, rs)
		}
	}
	return nil, nil, nil
}

// backfillNode finds a node where a's ask fits now and running it for a's runtime
// leaves every reservation able to start on time.
func (e *Engine) backfillNode(p *partition, a *app, ask *Ask, now time.Time, rs []reservation) *node {
	end := now.Add(a.spec.Runtime)
	return e.chooseNodeWhere(p, a, ask, func(n *node) bool {
		for _, r := range rs {
			if r.node != n || !r.start.Before(end) {
				continue
			}
			// The backfilled container still runs at r.start: the reservation must fit
			// beside it (and beside the other reservations then).
			if !r.req.Fits(freeAt(n, r.start, without(rs, r)).Sub(ask.Capability)) {
				return false
			}
		}
		return true
	})
}

// without returns rs minus one occurrence of r (a gang holds several equal ones).
func without(rs []reservation, r reservation) []reservation {
	out := make([]reservation, 0, len(rs))
	dropped := false
	for _, x := range rs {
		if x == r && !dropped {
			dropped = true
			continue
		}
		out = append(out, x)
	}
	return out
}
