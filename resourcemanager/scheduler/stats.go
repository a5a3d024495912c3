package scheduler

import (
	"sort"
	"time"
)

// Stats is a point-in-time summary of the engine for reports and metrics.
type Stats struct {
	Total     Resource            // capacity of every node
	Allocated Resource            // allocated on every node
	QueueUsed map[string]Resource // by leaf queue name, all partitions
	AppUsed   map[AppID]Resource  // by application id
	// Fragmented is the free room on schedulable nodes that fits no waiting ask of the
	// node's partition: capacity stranded by the shapes of what was placed.
	Fragmented Resource
	Pending    int // outstanding containers
	Running    int
	// Partitions is each partition's capacity ("" is the default partition).
	Partitions map[string]Resource
}

// Stats summarises the engine's state.
func (e *Engine) Stats() Stats {
	e.lock()
	defer e.mu.Unlock()
	s := Stats{QueueUsed: map[string]Resource{}, AppUsed: map[AppID]Resource{}, Partitions: map[string]Resource{}}
	for _, p := range e.partitions {
		s.Partitions[p.name] = p.total
		s.Total = s.Total.Add(p.total)
		s.Allocated = s.Allocated.Add(p.allocated)
		for _, n := range p.nodes {
			if !n.schedulable() {
				continue
			}
			free := n.free()
			if free.IsZero() {
				continue
			}
			fits, room := false, n.room()
			for shape := range p.pendingShapes {
				if shape.Fits(room) {
					fits = true
					break
				}
			}
			if !fits && len(p.pendingShapes) > 0 {
				s.Fragmented = s.Fragmented.Add(free)
			}
		}
	}
	for _, g := range e.leaves {
		var u Resource
		for _, r := range g.used {
			u = u.Add(r)
		}
		s.QueueUsed[g.name] = u
	}
	for id, a := range e.apps {
		s.AppUsed[id] = a.used
		s.Pending += a.pending
		s.Running += a.running
	}
	return s
}

// Totals returns the capacity of every node and what is allocated on them: the cheap part
// of Stats, for every AM heartbeat's headroom. It takes no lock: during a pass it reads
// the sums as the pass has left them so far.
func (e *Engine) Totals() (total, allocated Resource) {
	return readSum(&e.sums.total), readSum(&e.sums.allocated)
}

// Types returns the engine's resource types.
func (e *Engine) Types() Types { return e.cfg.Types }

// FitsByMemory reports Config.FitByMemory: asks are then normalized to one vcore, as the
// Java DefaultResourceCalculator normalizes them.
func (e *Engine) FitsByMemory() bool { return e.cfg.FitByMemory }

// GroupStats is one quota group (a leaf queue) as the engine sees it.
type GroupStats struct {
	// Quota is the group's share of each partition it may use (0..1).
	Quota map[string]float64
	// Used is what it holds in each partition; AMUsed what its AM containers hold.
	Used   map[string]Resource
	AMUsed Resource
	// UserUsed is what each user's applications hold; UserAMUsed what their AM
	// containers hold.
	UserUsed, UserAMUsed map[string]Resource
	// UserLimit is what of the default partition a user may hold now (the Capacity
	// Scheduler's user limit); ActiveUsers how many users have outstanding asks.
	UserLimit   Resource
	ActiveUsers int
	// Value is the group's priority value in each partition: its share of the partition
	// (dominant share, or as configured) over its quota. Groups with the smallest value
	// are served first; above 1 the group uses more than its quota.
	Value map[string]float64
	// Apps is the number of applications in the group; Pending their outstanding
	// containers.
	Apps    int
	Pending int
	// PendingResource is what the outstanding containers ask for in all.
	PendingResource Resource
	// PreemptedAt is when the group last lost containers to preemption (zero: never).
	PreemptedAt time.Time
	// Policy and PreemptionPolicy are how it orders its applications and its victims.
	Policy, PreemptionPolicy string
}

// GroupStats reports every group by leaf queue name.
func (e *Engine) GroupStats() map[string]GroupStats {
	e.lock()
	defer e.mu.Unlock()
	out := map[string]GroupStats{}
	types := e.cfg.Types.Len()
	for _, g := range e.leaves {
		gs := GroupStats{Quota: map[string]float64{}, Used: map[string]Resource{}, UserUsed: map[string]Resource{}, UserAMUsed: map[string]Resource{}, Value: map[string]float64{},
			AMUsed: g.amUsed, Apps: len(g.apps), PreemptedAt: g.preemptedAt, Policy: g.policy, PreemptionPolicy: g.preemptionPolicy}
		for p, q := range g.quota {
			gs.Quota[p] = float64(q) / ppm
			gs.Used[p] = g.used[p]
			if part := e.partitions[p]; part != nil && q > 0 {
				ut, uc := e.usageMeasure()
				s := DominantShare(g.used[p], part.total, ut, uc)
				if s.Den > 0 {
					gs.Value[p] = float64(s.Num) / float64(s.Den) / (float64(q) / ppm)
				}
			}
		}
		for u, r := range g.userUsed {
			gs.UserUsed[u] = r
		}
		for u, r := range g.userAMUsed {
			gs.UserAMUsed[u] = r
		}
		if part := e.partitions[""]; part != nil {
			lt, lc := e.limitMeasure(types)
			limit := limitAmount(g.userLimit(part, g.used[""], Resource{}, lt, lc), part.total, e.cfg.MinimumAllocation, types, false)
			gs.UserLimit, gs.ActiveUsers = limit.Max(Resource{}), len(g.activeUsers)
		}
		for _, a := range g.apps {
			gs.Pending += a.pending
			for _, ask := range a.anyAsks {
				for i := range ask.Capability {
					gs.PendingResource[i] += ask.Capability[i] * int64(ask.Count)
				}
			}
		}
		out[g.name] = gs
	}
	return out
}

// outstanding are a's asks with a count above zero, sorted.
func outstanding(a *app) []Ask {
	out := make([]Ask, 0, len(a.asks))
	for _, k := range a.asks {
		if k.Count > 0 {
			out = append(out, *k)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Priority != out[j].Priority {
			return out[i].Priority < out[j].Priority
		}
		if out[i].ResourceName != out[j].ResourceName {
			return out[i].ResourceName < out[j].ResourceName
		}
		return out[i].RequestID < out[j].RequestID
	})
	return out
}

// AppsAsks are the outstanding asks (a count above zero) of each of ids, by priority,
// then resource name: what the REST API shows as their resourceRequests. They are read
// under one hold of the engine's lock (a page of applications must not wait for a
// scheduling pass per application), and are copies the caller may keep.
func (e *Engine) AppsAsks(ids []AppID) map[AppID][]Ask {
	e.lock()
	defer e.mu.Unlock()
	out := make(map[AppID][]Ask, len(ids))
	for _, id := range ids {
		if a, ok := e.apps[id]; ok {
			out[id] = outstanding(a)
		}
	}
	return out
}
