package scheduler

import (
	"testing"
	"time"
)

// Under FitByMemory (the Capacity Scheduler's DefaultResourceCalculator) containers fit a
// node by memory alone and its vcores may be overcommitted, as on the Java RM; a node
// whose capacity is measured (a borrowed server) still fits every type, and without
// FitByMemory every node does.
func TestFitByMemoryOvercommitsVCores(t *testing.T) {
	for _, c := range []struct {
		name     string
		byMemory bool
		measured bool
		want     int
	}{{"by memory", true, false, 10}, {"by memory, measured node", true, true, 4}, {"every type", false, false, 4}} {
		cfg := DefaultConfig()
		cfg.FitByMemory = c.byMemory
		cfg.Now = func() time.Time { return t0 }
		e, err := New(cfg, queues(t, "root.queues", "default", "root.default.capacity", "100"))
		must(t, err)
		must(t, e.AddNode(NodeSpec{ID: "n:8041", Capacity: res(10240, 4), Measured: c.measured}))
		must(t, e.AddApp(AppSpec{ID: "a", Queue: "default", User: "alice"}))
		must(t, e.UpdateAsks("a", []Ask{{Priority: 1, ResourceName: "*", Capability: res(1024, 1), Count: 12, RelaxLocality: true}}))
		if got := len(e.Schedule(0).Allocations); got != c.want {
			t.Errorf("%s: %d containers of 1 GB, 1 vcore on a 10 GB, 4-vcore node, want %d", c.name, got, c.want)
		}
	}
}

// An unmanaged AM counts the minimum allocation against the AM limit from its
// application's first container until it leaves (FiCaSchedulerApp's AM resource): with
// room for one, the second unmanaged application waits until the first has gone.
func TestUnmanagedAMCountsAgainstTheAMLimit(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Now = func() time.Time { return t0 }
	cfg.MinimumAllocation = res(1024, 1)
	e, err := New(cfg, queues(t, "root.queues", "default", "root.default.capacity", "100", "maximum-am-resource-percent", "0.1"))
	must(t, err)
	must(t, e.AddNode(NodeSpec{ID: "n:8041", Capacity: res(10240, 10)}))
	for _, id := range []AppID{"u1", "u2"} {
		must(t, e.AddApp(AppSpec{ID: id, Queue: "default", User: "alice", UnmanagedAM: true}))
		must(t, e.UpdateAsks(id, []Ask{{Priority: 1, ResourceName: "*", Capability: res(1024, 1), Count: 3, RelaxLocality: true}}))
	}
	got := map[AppID]int{}
	for _, a := range e.Schedule(0).Allocations {
		got[a.App]++
	}
	if got["u1"] != 3 || got["u2"] != 0 {
		t.Fatalf("placed %v, want u1's 3 and none of u2's (AM limit 1 GB, held by u1's AM)", got)
	}
	if am := e.GroupStats()["default"].AMUsed; am != res(1024, 1) {
		t.Fatalf("AM used %v, want the minimum allocation", am)
	}
	must(t, e.RemoveApp("u1"))
	got = map[AppID]int{}
	for _, a := range e.Schedule(0).Allocations {
		got[a.App]++
	}
	if got["u2"] != 3 {
		t.Fatalf("placed %v after u1 left, want u2's 3", got)
	}
}
