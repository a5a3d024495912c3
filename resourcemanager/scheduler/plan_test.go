package scheduler

import (
	"testing"
	"time"
)

// A forgotten allocation frees its room and gives the ask its container back: the next
// pass places it again; a confirmed one can no longer be forgotten.
func TestForgetGivesTheAskItsContainerBack(t *testing.T) {
	e := newEngine(t, StrategyRings, queues(t, "root.queues", "default", "root.default.capacity", "100"))
	must(t, e.AddNode(NodeSpec{ID: "n1:8041", Capacity: res(2048, 2)}))
	must(t, e.AddApp(AppSpec{ID: "app-1", Queue: "default", Submit: t0}))
	must(t, e.UpdateAsks("app-1", []Ask{{Priority: 1, ResourceName: "*", Capability: res(1024, 1), Count: 1}}))
	plan := e.Schedule(0)
	if len(plan.Allocations) != 1 {
		t.Fatalf("first pass: %d allocations, want 1", len(plan.Allocations))
	}
	first := plan.Allocations[0].Container
	if _, used := e.Totals(); used[Memory] != 1024 {
		t.Fatalf("assumed allocation not counted: %d MB used", used[Memory])
	}
	must(t, e.Forget(first))
	if _, used := e.Totals(); used[Memory] != 0 {
		t.Fatalf("after Forget: %d MB used, want 0", used[Memory])
	}
	plan = e.Schedule(0)
	if len(plan.Allocations) != 1 || plan.Allocations[0].Container == first {
		t.Fatalf("after Forget the ask should be placed again as a new container: %+v", plan.Allocations)
	}
	e.Confirm([]ContainerID{plan.Allocations[0].Container})
	if err := e.Forget(plan.Allocations[0].Container); err == nil {
		t.Fatal("Forget of a confirmed container succeeded")
	}
	if plan = e.Schedule(0); len(plan.Allocations) != 0 {
		t.Fatalf("nothing left to place, got %+v", plan.Allocations)
	}
}

// A pass says why the asks it could not place got nothing, and with Explain which
// filter turned each node down.
func TestPlanExplainsUnplacedAsks(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Now = func() time.Time { return t0 }
	cfg.Explain = true
	e, err := New(cfg, queues(t, "root.queues", "default", "root.default.capacity", "100"))
	must(t, err)
	must(t, e.AddNode(NodeSpec{ID: "small:8041", Capacity: res(1024, 1)}))
	must(t, e.AddNode(NodeSpec{ID: "big:8041", Capacity: res(8192, 8)}))
	must(t, e.AddNode(NodeSpec{ID: "gone:8041", Capacity: res(8192, 8), Unschedulable: true}))
	must(t, e.AddApp(AppSpec{ID: "app-1", Queue: "default", Submit: t0}))
	must(t, e.UpdateBlacklist("app-1", []string{"big:8041"}, nil))
	must(t, e.UpdateAsks("app-1", []Ask{{Priority: 1, ResourceName: "*", Capability: res(4096, 1), Count: 1}}))
	plan := e.Schedule(0)
	if len(plan.Allocations) != 0 {
		t.Fatalf("placed %+v, want nothing", plan.Allocations)
	}
	if len(plan.Unplaced) != 1 {
		t.Fatalf("unplaced %+v, want one entry", plan.Unplaced)
	}
	u := plan.Unplaced[0]
	if u.App != "app-1" || u.Reason != ReasonNoNode || u.Capability != res(4096, 1) {
		t.Fatalf("unplaced %+v", u)
	}
	want := map[string]int{FilterUnschedulable: 1, FilterResources: 1, FilterBlacklisted: 1}
	if len(u.Rejected) != len(want) || u.Rejected[FilterUnschedulable] != 1 || u.Rejected[FilterResources] != 1 || u.Rejected[FilterBlacklisted] != 1 {
		t.Fatalf("rejected %v, want %v", u.Rejected, want)
	}
	// Lifting the blacklist places the ask, and the next plan has nothing unplaced.
	must(t, e.UpdateBlacklist("app-1", nil, []string{"big:8041"}))
	plan = e.Schedule(0)
	if len(plan.Allocations) != 1 || plan.Allocations[0].Node != "big:8041" || len(plan.Unplaced) != 0 {
		t.Fatalf("after lifting the blacklist: %+v", plan)
	}
}
