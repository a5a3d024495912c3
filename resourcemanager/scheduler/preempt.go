package scheduler

import (
	"sort"
	"time"
)

// Victim-selection policies of an over-quota group (yarn.scheduler.capacity.<queue>.bobbin.preemption-policy).
const (
	PreemptLowestPriorityFirst = "lowest-priority-first"
	PreemptMostRecentFirst     = "most-recent-first"
)

// PreemptionConfig sets hysteresis preemption (scheduling.md §1).
type PreemptionConfig struct {
	Enabled bool
	// BelowMilli is A×1000: a group whose request does not fit gets preemption only while
	// used < quota×A (default 900).
	BelowMilli uint64
	// AboveMilli is B×1000: only groups with used > quota×B lose containers, and never below
	// quota×B (default 1100).
	AboveMilli uint64
	// Grace is the time between telling the AM and killing the container.
	Grace time.Duration
	// CoolDown: a group just preempted sits out of rounds; Hold: it also sits out while it is
	// still over its quota.
	CoolDown, Hold time.Duration
}

// DefaultPreemptionConfig returns the documented defaults.
func DefaultPreemptionConfig() PreemptionConfig {
	return PreemptionConfig{Enabled: true, BelowMilli: 900, AboveMilli: 1100, Grace: 15 * time.Second, CoolDown: 20 * time.Second, Hold: 60 * time.Second}
}

// Preemption is a decision about one container: first a notice (Kill false: tell the AM in
// its allocate response), then, once the grace period has passed and the container still
// runs, a kill (Kill true: stop it through its NodeManager; the AM sees exit status
// PREEMPTED, -102, which MapReduce and Spark do not count as a task failure).
type Preemption struct {
	Container ContainerID
	App       AppID
	Node      string
	Resource  Resource
	Kill      bool
	Deadline  time.Time
}

// sitsOut reports whether a recently preempted group stays out of rounds in partition p.
// A group that has since fallen below quota×B — starved itself, as its own containers
// ended while it sat out — takes part again: the cool-down keeps a victim from taking
// back what was freed for another, not from its own share.
func (e *Engine) sitsOut(g *group, p *partition, now time.Time) bool {
	if g.preemptedAt.IsZero() {
		return false
	}
	since := now.Sub(g.preemptedAt)
	ut, uc := e.usageMeasure()
	if since < e.cfg.Preemption.CoolDown {
		return !g.belowQuota(p.name, p.total, ut, uc, e.cfg.Preemption.BelowMilli)
	}
	return since < e.cfg.Preemption.Hold && g.aboveQuota(p.name, p.total, ut, uc, 1000)
}

// preemptFor tries to free room for one container of ask (for starved group g) by taking
// containers from groups above quota×B, in each victim group's policy order, never taking
// a group below quota×B nor one whose queue has disable_preemption. It returns the notices it issued (nil when nothing can help).
func (e *Engine) preemptFor(g *group, p *partition, ask *Ask, now time.Time) []Preemption {
	types, cpuOnly := e.usageMeasure()
	pc := e.cfg.Preemption
	if !g.belowQuota(p.name, p.total, types, cpuOnly, pc.BelowMilli) {
		return nil
	}
	// Room already being freed for this group counts: preempt more only while it falls short
	// of what the group is waiting for in this partition.
	var freeing, demand Resource
	for _, c := range e.preempting {
		if c.preemptedFor == g && c.node.spec.Partition == p.name {
			freeing = freeing.Add(c.resource)
		}
	}
	for _, a := range g.waiting[p.name] {
		for _, w := range a.anyAsks {
			if w.partition == p.name && w.Count > 0 {
				for i := 0; i < types; i++ {
					demand[i] += w.Capability[i] * int64(w.Count)
				}
			}
		}
	}
	if !freeing.IsZero() && demand.Fits(freeing) {
		return nil
	}
	// Candidate victims from every group over quota×B, in that group's policy order.
	type victimGroup struct {
		g       *group
		remains Resource // used minus what is already being preempted
	}
	var victims []*container
	budget := map[*group]*victimGroup{}
	for _, vg := range e.leaves {
		if vg == g || vg.queue.DisablePreemption || !vg.aboveQuota(p.name, p.total, types, cpuOnly, pc.AboveMilli) {
			continue
		}
		remains := vg.used[p.name]
		var cs []*container
		for _, c := range e.containersOf(vg, p) {
			if c.preemptAt.IsZero() && !c.am {
				cs = append(cs, c)
			} else if !c.preemptAt.IsZero() {
				remains = remains.Sub(c.resource)
			}
		}
		orderVictims(cs, vg.preemptionPolicy)
		victims = append(victims, cs...)
		budget[vg] = &victimGroup{vg, remains}
	}
	// Greedy: take victims in order until one node's free room plus what is taken there
	// fits the ask; then preempt only the victims on that node.
	taken := map[*node][]*container{}
	gain := map[*node]Resource{}
	for _, c := range victims {
		vb := budget[c.app.group]
		after := vb.remains.Sub(c.resource)
		q := c.app.group
		if !shareAtLeast(after, p.total, types, cpuOnly, q.quota[p.name], pc.AboveMilli) {
			continue // would take the group below quota×B
		}
		vb.remains = after
		taken[c.node] = append(taken[c.node], c)
		gain[c.node] = gain[c.node].Add(c.resource)
		if ask.Capability.Fits(c.node.room().Add(gain[c.node])) {
			var out []Preemption
			for _, v := range taken[c.node] {
				v.preemptAt = now.Add(pc.Grace)
				v.preemptedFor = g
				e.preempting[v.id] = v
				v.app.group.preemptedAt = now
				out = append(out, Preemption{Container: v.id, App: v.app.spec.ID, Node: v.node.spec.ID, Resource: v.resource, Deadline: v.preemptAt})
			}
			return out
		}
	}
	return nil
}

// dueKills returns kill decisions for preempted containers whose grace period is over.
func (e *Engine) dueKills(now time.Time) []Preemption {
	var out []Preemption
	for _, c := range e.preempting {
		if !c.killSent && !now.Before(c.preemptAt) {
			c.killSent = true
			out = append(out, Preemption{Container: c.id, App: c.app.spec.ID, Node: c.node.spec.ID, Resource: c.resource, Kill: true, Deadline: c.preemptAt})
		}
	}
	if len(out) > 1 {
		sort.Slice(out, func(i, j int) bool { return out[i].Container < out[j].Container })
	}
	return out
}

// containersOf lists a group's containers in partition p, oldest first.
func (e *Engine) containersOf(g *group, p *partition) []*container {
	var out []*container
	for _, a := range g.apps {
		for _, c := range a.containers.items {
			if c.node.spec.Partition == p.name {
				out = append(out, c)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// orderVictims sorts containers by the group's preemption policy.
func orderVictims(cs []*container, policy string) {
	switch policy {
	case PreemptMostRecentFirst:
		sort.SliceStable(cs, func(i, j int) bool {
			if !cs[i].start.Equal(cs[j].start) {
				return cs[i].start.After(cs[j].start)
			}
			return cs[i].id > cs[j].id
		})
	default: // lowest application priority first, then the youngest application
		sort.SliceStable(cs, func(i, j int) bool {
			ai, aj := cs[i].app, cs[j].app
			if ai.spec.Priority != aj.spec.Priority {
				return ai.spec.Priority < aj.spec.Priority
			}
			if ai.seq != aj.seq {
				return ai.seq > aj.seq
			}
			return cs[i].id > cs[j].id
		})
	}
}

// shareAtLeast reports used/total (dominant) >= quota/ppm × f/1000.
func shareAtLeast(used, total Resource, types int, cpuOnly bool, quota, factorMilli uint64) bool {
	s := DominantShare(used, total, types, cpuOnly)
	return cmp192(s.Num, ppm, 1000, quota, factorMilli, s.Den) >= 0
}
