package scheduler

import "testing"

func localityEngine(t *testing.T, delay int) *Engine {
	cfg := DefaultConfig()
	cfg.NodeLocalityDelay = delay
	e, err := New(cfg, queues(t, "root.queues", "a", "root.a.capacity", "100"))
	must(t, err)
	must(t, e.AddNode(NodeSpec{ID: "h1:8041", Rack: "/r1", Capacity: res(1024, 1)}))
	must(t, e.AddNode(NodeSpec{ID: "h2:8041", Rack: "/r2", Capacity: res(1024, 1)}))
	must(t, e.AddNode(NodeSpec{ID: "h3:8041", Rack: "/r2", Capacity: res(1024, 1)}))
	return e
}

// localAsk is what an AM sends for one container that prefers host h on rack r.
func localAsk(h, r string, relax bool) []Ask {
	c := res(1024, 1)
	return []Ask{
		{Priority: 20, ResourceName: h, Capability: c, Count: 1, RelaxLocality: true},
		{Priority: 20, ResourceName: r, Capability: c, Count: 1, RelaxLocality: true},
		{Priority: 20, ResourceName: "*", Capability: c, Count: 1, RelaxLocality: relax},
	}
}

func TestNodeLocalPlacement(t *testing.T) {
	e := localityEngine(t, 3)
	must(t, e.AddApp(AppSpec{ID: "x", Queue: "a"}))
	must(t, e.UpdateAsks("x", localAsk("h3", "/r2", true)))
	got := e.Schedule(0).Allocations
	if len(got) != 1 || got[0].Node != "h3:8041" || got[0].Locality != NodeLocal || got[0].Queue != "a" {
		t.Fatalf("placed %+v, want node-local h3 in queue a", got)
	}
	if len(e.apps["x"].asks) != 0 {
		t.Fatalf("node and rack asks not consumed: %v", e.apps["x"].asks)
	}
}

// The host is busy: the ask waits `delay` opportunities, then takes its rack (h2), and only
// if the rack is busy too waits as long again before going anywhere.
func TestDelaySchedulingFallsBackToRackThenAny(t *testing.T) {
	e := localityEngine(t, 3)
	must(t, e.AddApp(AppSpec{ID: "busy", Queue: "a"}))
	must(t, e.UpdateAsks("busy", []Ask{{Priority: 1, ResourceName: "h3", Capability: res(1024, 1), Count: 1, RelaxLocality: true},
		{Priority: 1, ResourceName: "*", Capability: res(1024, 1), Count: 1, RelaxLocality: false}}))
	if got := e.Schedule(0).Allocations; len(got) != 1 || got[0].Node != "h3:8041" {
		t.Fatalf("setup %+v", got)
	}
	must(t, e.AddApp(AppSpec{ID: "x", Queue: "a"}))
	must(t, e.UpdateAsks("x", localAsk("h3", "/r2", true)))
	for i := 0; i < 3; i++ {
		if got := e.Schedule(0).Allocations; len(got) != 0 {
			t.Fatalf("pass %d placed %+v before the node-locality delay", i, got)
		}
	}
	if got := e.Schedule(0).Allocations; len(got) != 1 || got[0].Node != "h2:8041" || got[0].Locality != RackLocal {
		t.Fatalf("after the delay: %+v, want rack-local h2", got)
	}
}

func TestStrictLocalityNeverGoesElsewhere(t *testing.T) {
	e := localityEngine(t, 1)
	must(t, e.AddApp(AppSpec{ID: "busy", Queue: "a"}))
	must(t, e.UpdateAsks("busy", []Ask{{Priority: 1, ResourceName: "h3", Capability: res(1024, 1), Count: 1, RelaxLocality: true},
		{Priority: 1, ResourceName: "*", Capability: res(1024, 1), Count: 1, RelaxLocality: false}}))
	e.Schedule(0)
	must(t, e.AddApp(AppSpec{ID: "x", Queue: "a"}))
	c := res(1024, 1)
	must(t, e.UpdateAsks("x", []Ask{{Priority: 20, ResourceName: "h3", Capability: c, Count: 1},
		{Priority: 20, ResourceName: "*", Capability: c, Count: 1, RelaxLocality: false}}))
	for i := 0; i < 10; i++ {
		if got := e.Schedule(0).Allocations; len(got) != 0 {
			t.Fatalf("strict ask placed %+v away from h3", got)
		}
	}
	must(t, e.Release(1))
	if got := e.Schedule(0).Allocations; len(got) != 1 || got[0].Node != "h3:8041" {
		t.Fatalf("strict ask not placed on h3 once free: %+v", got)
	}
}

// The delay never exceeds the partition's node count (the Capacity Scheduler's
// getActualNodeLocalityDelay): with the default 40 on three nodes an ask for a busy host
// waits three opportunities, not forty.
func TestLocalityDelayCappedByNodeCount(t *testing.T) {
	e := localityEngine(t, 40)
	must(t, e.AddApp(AppSpec{ID: "busy", Queue: "a"}))
	must(t, e.UpdateAsks("busy", []Ask{{Priority: 1, ResourceName: "h3", Capability: res(1024, 1), Count: 1, RelaxLocality: true},
		{Priority: 1, ResourceName: "*", Capability: res(1024, 1), Count: 1, RelaxLocality: false}}))
	e.Schedule(0)
	must(t, e.AddApp(AppSpec{ID: "x", Queue: "a"}))
	must(t, e.UpdateAsks("x", localAsk("h3", "/r2", true)))
	for i := 0; i < 3; i++ {
		if got := e.Schedule(0).Allocations; len(got) != 0 {
			t.Fatalf("pass %d placed %+v before the capped delay", i, got)
		}
	}
	if got := e.Schedule(0).Allocations; len(got) != 1 || got[0].Node != "h2:8041" {
		t.Fatalf("after three passes: %+v, want rack-local h2", got)
	}
}

// 3.x rack-locality-additional-delay: with host and rack busy, an ask waits
// node-locality-delay opportunities, then that many more, before taking any node.
func TestRackLocalityAdditionalDelay(t *testing.T) {
	for _, tc := range []struct{ extra, waits int }{{0, 1}, {2, 3}, {-1, 2}} {
		e := localityEngine(t, 1)
		e.cfg.RackLocalityAdditionalDelay = tc.extra
		must(t, e.AddApp(AppSpec{ID: "busy", Queue: "a"}))
		must(t, e.UpdateAsks("busy", []Ask{{Priority: 1, ResourceName: "/r2", Capability: res(1024, 1), Count: 2, RelaxLocality: true},
			{Priority: 1, ResourceName: "*", Capability: res(1024, 1), Count: 2, RelaxLocality: false}}))
		if got := e.Schedule(0).Allocations; len(got) != 2 {
			t.Fatalf("setup %+v", got)
		}
		must(t, e.AddApp(AppSpec{ID: "x", Queue: "a"}))
		must(t, e.UpdateAsks("x", localAsk("h3", "/r2", true)))
		for i := 0; i < tc.waits; i++ {
			if got := e.Schedule(0).Allocations; len(got) != 0 {
				t.Fatalf("additional %d: pass %d placed %+v, want a wait of %d", tc.extra, i, got, tc.waits)
			}
		}
		if got := e.Schedule(0).Allocations; len(got) != 1 || got[0].Node != "h1:8041" || got[0].Locality != OffSwitch {
			t.Fatalf("additional %d: after %d waits %+v, want off-switch h1", tc.extra, tc.waits, got)
		}
	}
}

// Hosts or racks the cluster does not have are not waited for: the ask goes on to its
// racks, or anywhere, at once (a MapReduce split on "localhost" of a file:// input).
func TestNoWaitForHostsTheClusterLacks(t *testing.T) {
	e := localityEngine(t, 3)
	must(t, e.AddApp(AppSpec{ID: "x", Queue: "a"}))
	must(t, e.UpdateAsks("x", localAsk("localhost", "/r2", true)))
	if got := e.Schedule(0).Allocations; len(got) != 1 || (got[0].Node != "h2:8041" && got[0].Node != "h3:8041") {
		t.Fatalf("placed %+v, want rack-local on /r2 at once", got)
	}
	must(t, e.AddApp(AppSpec{ID: "y", Queue: "a"}))
	must(t, e.UpdateAsks("y", localAsk("localhost", "/default-rack", true)))
	if got := e.Schedule(0).Allocations; len(got) != 1 || got[0].Locality != OffSwitch {
		t.Fatalf("placed %+v, want off-switch at once", got)
	}
}
