package scheduler

import (
	"testing"
	"time"
)

// clock is a settable test clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func preemptEngine(t *testing.T, tree ...string) (*Engine, *clock) {
	clk := &clock{t0}
	cfg := DefaultConfig()
	cfg.Now = clk.now
	// Preemption takes back what a group borrowed, and a group's one user borrows only
	// with a user-limit-factor above the default 1 (which keeps a user inside its quota).
	tree = append(tree, "root.a.user-limit-factor", "2", "root.b.user-limit-factor", "2")
	e, err := New(cfg, queues(t, tree...))
	must(t, err)
	unitNodes(t, e, 10)
	return e, clk
}

func ask1(n int) []Ask {
	return []Ask{{Priority: 1, ResourceName: "*", Capability: res(1024, 1), Count: n}}
}

func TestPreemptionOnlyAboveQuotaTimesB(t *testing.T) {
	e, clk := preemptEngine(t, "root.queues", "a,b", "root.a.capacity", "50", "root.b.capacity", "50")
	must(t, e.AddApp(AppSpec{ID: "a1", Queue: "a"}))
	must(t, e.UpdateAsks("a1", ask1(10)))
	if n := len(e.Schedule(0).Allocations); n != 10 {
		t.Fatalf("a took %d nodes, want all 10", n)
	}
	must(t, e.AddApp(AppSpec{ID: "b1", Queue: "b"}))
	must(t, e.UpdateAsks("b1", ask1(10)))
	// Each interval preempts room for one more of b's containers until a is down to
	// quota×B = 5.5 nodes: it may lose 4 (10 -> 6), never the 5th (6 -> 5 < 5.5).
	notices := 0
	for i := 0; i < 10; i++ {
		r := e.Schedule(0)
		for _, p := range r.Preemptions {
			if p.Kill {
				continue
			}
			notices++
			if e.apps[p.App].group.name != "a" {
				t.Fatalf("preempted from %s", p.App)
			}
		}
		clk.t = clk.t.Add(time.Second)
	}
	if notices != 4 {
		t.Fatalf("%d containers preempted from a, want 4 (down to quota×B)", notices)
	}
	// After the grace period the kills follow, once each.
	clk.t = clk.t.Add(time.Minute)
	kills := 0
	for _, p := range e.Schedule(0).Preemptions {
		if p.Kill {
			kills++
			must(t, e.Release(p.Container)) // the NM reports them completed (PREEMPTED)
		}
	}
	if kills != 4 {
		t.Fatalf("%d kills, want 4", kills)
	}
	if again := e.Schedule(0); countKills(again.Preemptions) != 0 {
		t.Fatal("kills repeated")
	}
}

func countKills(ps []Preemption) int {
	n := 0
	for _, p := range ps {
		if p.Kill {
			n++
		}
	}
	return n
}

// No preemption for a group at or above quota×A, nor from one not above quota×B.
func TestNoPreemptionInsideTheBand(t *testing.T) {
	e, _ := preemptEngine(t, "root.queues", "a,b", "root.a.capacity", "50", "root.b.capacity", "50")
	must(t, e.AddApp(AppSpec{ID: "a1", Queue: "a"}))
	must(t, e.AddApp(AppSpec{ID: "b1", Queue: "b"}))
	must(t, e.UpdateAsks("a1", ask1(5)))
	must(t, e.UpdateAsks("b1", ask1(5)))
	e.Schedule(0)
	// Both at quota exactly; b wants one more: b is not below quota×A and a is not above
	// quota×B, so nothing happens.
	must(t, e.UpdateAsks("b1", ask1(1)))
	if r := e.Schedule(0); len(r.Preemptions) != 0 || len(r.Allocations) != 0 {
		t.Fatalf("unexpected decisions %+v", r)
	}
}

func TestCoolDownAndHold(t *testing.T) {
	e, clk := preemptEngine(t, "root.queues", "a,b", "root.a.capacity", "50", "root.b.capacity", "50")
	must(t, e.AddApp(AppSpec{ID: "a1", Queue: "a"}))
	must(t, e.UpdateAsks("a1", ask1(10)))
	deliver(e, e.Schedule(0))
	must(t, e.AddApp(AppSpec{ID: "b1", Queue: "b"}))
	must(t, e.UpdateAsks("b1", ask1(1)))
	r := deliver(e, e.Schedule(0))
	if len(r.Preemptions) != 1 {
		t.Fatalf("preemptions %+v", r.Preemptions)
	}
	// The victim completes; b gets the room. a asks again right away but sits out its
	// cool-down even though a node is free.
	must(t, e.Release(r.Preemptions[0].Container))
	if got := deliver(e, e.Schedule(0)).Allocations; len(got) != 1 || got[0].App != "b1" {
		t.Fatalf("b did not get the freed node: %+v", got)
	}
	must(t, e.UpdateAsks("a1", ask1(5)))
	must(t, e.Release(1)) // one of a's containers finishes: a free node, a waiting
	if got := deliver(e, e.Schedule(0)).Allocations; len(got) != 0 {
		t.Fatalf("a allocated during its cool-down: %+v", got)
	}
	// After the cool-down but inside the hold, a is still over quota (8 of 10 > 5): out.
	clk.t = clk.t.Add(30 * time.Second)
	if got := deliver(e, e.Schedule(0)).Allocations; len(got) != 0 {
		t.Fatalf("a allocated during its hold while over quota: %+v", got)
	}
	// After the hold it may take idle room again.
	clk.t = clk.t.Add(31 * time.Second)
	if got := deliver(e, e.Schedule(0)).Allocations; len(got) != 1 || got[0].App != "a1" {
		t.Fatalf("a not served after the hold: %+v", got)
	}
}

// A preempted group whose own containers end while it sits out its cool-down, until it is
// below quota×B (starved itself), is served again at once: the cool-down keeps a victim
// from taking back what was freed for another, not from its own share.
func TestCoolDownEndsBelowQuota(t *testing.T) {
	e, _ := preemptEngine(t, "root.queues", "a,b", "root.a.capacity", "50", "root.b.capacity", "50")
	must(t, e.AddApp(AppSpec{ID: "a1", Queue: "a"}))
	must(t, e.UpdateAsks("a1", ask1(10)))
	placed := deliver(e, e.Schedule(0)).Allocations
	must(t, e.AddApp(AppSpec{ID: "b1", Queue: "b"}))
	must(t, e.UpdateAsks("b1", ask1(4)))
	r := deliver(e, e.Schedule(0))
	if len(r.Preemptions) == 0 {
		t.Fatal("no preemption for b")
	}
	victims := map[ContainerID]bool{}
	for _, p := range r.Preemptions {
		victims[p.Container] = true
		must(t, e.Release(p.Container))
	}
	deliver(e, e.Schedule(0)) // b takes the freed room
	// a's other containers end until it holds 3 of its 5: below quota×B (4.5).
	left := 10 - len(victims)
	for _, a := range placed {
		if left > 3 && !victims[a.Container] {
			must(t, e.Release(a.Container))
			left--
		}
	}
	must(t, e.UpdateAsks("a1", ask1(2)))
	if got := countByQueue(e, deliver(e, e.Schedule(0)).Allocations); got["a"] != 2 {
		t.Fatalf("a, below its quota, not served during its cool-down: %v", got)
	}
}

func TestVictimPolicies(t *testing.T) {
	for _, tc := range []struct {
		policy string
		want   string
	}{{PreemptLowestPriorityFirst, "low"}, {PreemptMostRecentFirst, "late"}} {
		clk := &clock{t0}
		cfg := DefaultConfig()
		cfg.Now = clk.now
		e, err := New(cfg, queues(t, "root.queues", "a,b", "root.a.capacity", "50", "root.a.user-limit-factor", "2", "root.b.capacity", "50"))
		must(t, err)
		e.groups["a"].preemptionPolicy = tc.policy
		unitNodes(t, e, 4)
		// "low" has priority 1 and starts first; "high" priority 5; "late" priority 5, last.
		must(t, e.AddApp(AppSpec{ID: "low", Queue: "a", Priority: 1}))
		must(t, e.UpdateAsks("low", ask1(1)))
		e.Schedule(0)
		clk.t = clk.t.Add(time.Second)
		must(t, e.AddApp(AppSpec{ID: "high", Queue: "a", Priority: 5}))
		must(t, e.UpdateAsks("high", ask1(2)))
		e.Schedule(0)
		clk.t = clk.t.Add(time.Second)
		must(t, e.AddApp(AppSpec{ID: "late", Queue: "a", Priority: 5}))
		must(t, e.UpdateAsks("late", ask1(1)))
		e.Schedule(0)
		must(t, e.AddApp(AppSpec{ID: "b1", Queue: "b"}))
		must(t, e.UpdateAsks("b1", ask1(1)))
		r := e.Schedule(0)
		if len(r.Preemptions) != 1 || string(r.Preemptions[0].App) != tc.want {
			t.Errorf("%s: preempted %+v, want %s", tc.policy, r.Preemptions, tc.want)
		}
	}
}

// TestDisablePreemptionProtectsTheQueue: a queue with disable_preemption (inherited from
// its parent) keeps what it borrowed; the starved queue waits.
func TestDisablePreemptionProtectsTheQueue(t *testing.T) {
	e, clk := preemptEngine(t, "root.queues", "p,b", "root.p.capacity", "50", "root.b.capacity", "50",
		"root.p.disable_preemption", "true", "root.p.queues", "a", "root.p.a.capacity", "100", "root.p.a.user-limit-factor", "2")
	must(t, e.AddApp(AppSpec{ID: "a1", Queue: "a"}))
	must(t, e.UpdateAsks("a1", ask1(10)))
	if n := len(e.Schedule(0).Allocations); n != 10 {
		t.Fatalf("a took %d nodes, want all 10", n)
	}
	must(t, e.AddApp(AppSpec{ID: "b1", Queue: "b"}))
	must(t, e.UpdateAsks("b1", ask1(10)))
	for i := 0; i < 5; i++ {
		if r := e.Schedule(0); len(r.Preemptions) > 0 {
			t.Fatalf("preempted %+v from a queue under disable_preemption", r.Preemptions)
		}
		clk.t = clk.t.Add(time.Second)
	}
}
