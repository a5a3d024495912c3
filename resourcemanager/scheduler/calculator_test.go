package scheduler

import (
	"fmt"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/conf/capacity"
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

// The fair ordering with size-based weights (FairOrderingPolicy.getMagnitude): memory used
// over log2(1 + demand). With three slots, plain fair alternates from the first submitted
// (2 and 1); weighted, the application asking for 30 GB takes two of them.
func TestFairOrderingSizeBasedWeight(t *testing.T) {
	for _, c := range []struct {
		weighted string
		want     [2]int
	}{{"false", [2]int{2, 1}}, {"true", [2]int{1, 2}}} {
		c0 := conf.Empty()
		for k, v := range map[string]string{"root.queues": "default", "root.default.capacity": "100", "root.default.ordering-policy": "fair",
			"root.default.ordering-policy.fair.enable-size-based-weight": c.weighted} {
			c0.Set(capacity.Prefix+k, v)
		}
		tr, err := capacity.Parse(c0)
		must(t, err)
		cfg, groups, err := FromConf(c0, tr, Types{})
		must(t, err)
		cfg.Groups, cfg.Now = groups, func() time.Time { return t0 }
		e, err := New(cfg, tr)
		must(t, err)
		must(t, e.AddNode(NodeSpec{ID: "n:8041", Capacity: res(3072, 3)}))
		for i, n := range []int{2, 30} {
			id := AppID(fmt.Sprint("app", i))
			must(t, e.AddApp(AppSpec{ID: id, Queue: "default", User: "alice"}))
			must(t, e.UpdateAsks(id, []Ask{{Priority: 1, ResourceName: "*", Capability: res(1024, 1), Count: n, RelaxLocality: true}}))
		}
		var got [2]int
		for range 3 {
			for _, a := range e.Schedule(1).Allocations {
				got[a.App[3]-'0']++
			}
		}
		if got != c.want {
			t.Errorf("size-based weight %s: the 2 GB and the 30 GB applications hold %v, want %v", c.weighted, got, c.want)
		}
	}
}
