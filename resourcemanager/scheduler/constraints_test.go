package scheduler

import (
	"fmt"
	"testing"
	"time"
)

// tagged is a SchedulingRequest's ask of n containers of 1 GB with tag and constraint c.
func tagged(id int64, n int, tag string, c *Constraint) Ask {
	return Ask{Priority: 1, ResourceName: "*", Capability: res(1024, 1), Count: n, RelaxLocality: true, RequestID: id,
		Placement: &Placement{RequestID: id, Tags: []string{tag}, Constraint: c}}
}

func notIn(scope Scope, ns Namespace, tag string) *Constraint {
	return &Constraint{Scope: scope, Targets: []Target{{Namespace: ns, Tags: []string{tag}}}, Max: 0}
}

func placedOn(allocs []Allocation) map[string]int {
	out := map[string]int{}
	for _, a := range allocs {
		out[a.Node]++
	}
	return out
}

// Anti-affinity holds within one pass: three "zk" containers that must not share a node
// go to three nodes, a fourth waits, and gets a node once one of the three is released.
func TestAntiAffinityWithinAPass(t *testing.T) {
	e := newEngine(t, StrategyRings, queues(t, "root.queues", "a", "root.a.capacity", "100"))
	for i := 0; i < 3; i++ {
		must(t, e.AddNode(NodeSpec{ID: fmt.Sprintf("n%d:8041", i), Capacity: res(8192, 8)}))
	}
	must(t, e.AddApp(AppSpec{ID: "zk", Queue: "a"}))
	var asks []Ask
	for id := int64(1); id <= 4; id++ {
		asks = append(asks, tagged(id, 1, "zk", notIn(ScopeNode, NamespaceSelf, "zk")))
	}
	must(t, e.UpdateAsks("zk", asks))
	plan := e.Schedule(0)
	if got := placedOn(plan.Allocations); len(plan.Allocations) != 3 || len(got) != 3 {
		t.Fatalf("placed %v, want one zk container on each of 3 nodes", got)
	}
	for _, a := range plan.Allocations {
		if a.Placement == nil || a.Placement.Tags[0] != "zk" {
			t.Fatalf("allocation %+v lost its placement", a)
		}
	}
	e.Confirm(ids(plan.Allocations))
	if more := e.Schedule(0).Allocations; len(more) != 0 {
		t.Fatalf("the fourth zk container was placed beside another: %v", placedOn(more))
	}
	must(t, e.Release(plan.Allocations[1].Container))
	again := e.Schedule(0).Allocations
	if len(again) != 1 || again[0].Node != plan.Allocations[1].Node {
		t.Fatalf("after a release the fourth went to %v, want %s", placedOn(again), plan.Allocations[1].Node)
	}
	// Another application's zk containers do not count in the "self" namespace, and do in "all".
	must(t, e.AddApp(AppSpec{ID: "other", Queue: "a"}))
	must(t, e.UpdateAsks("other", []Ask{tagged(1, 1, "zk", notIn(ScopeNode, NamespaceSelf, "zk"))}))
	if got := e.Schedule(0).Allocations; len(got) != 1 {
		t.Fatalf("another application's self anti-affinity placed %d", len(got))
	}
	must(t, e.UpdateAsks("other", []Ask{tagged(2, 1, "x", notIn(ScopeNode, NamespaceAll, "zk"))}))
	if got := e.Schedule(0).Allocations; len(got) != 0 {
		t.Fatalf("NOTIN all/zk placed on %v though every node has zk", placedOn(got))
	}
}

// IN needs a container with the tag already there: the first one of its own tag never
// places (as in the Java RM); IN another tag follows it; cardinality bounds the count.
func TestAffinityAndCardinality(t *testing.T) {
	e := newEngine(t, StrategyRings, queues(t, "root.queues", "a", "root.a.capacity", "100"))
	for i := 0; i < 3; i++ {
		must(t, e.AddNode(NodeSpec{ID: fmt.Sprintf("n%d:8041", i), Capacity: res(8192, 8)}))
	}
	must(t, e.AddApp(AppSpec{ID: "app", Queue: "a"}))
	in := func(tag string) *Constraint {
		return &Constraint{Scope: ScopeNode, Targets: []Target{{Tags: []string{tag}}}, Min: 1, Max: -1}
	}
	must(t, e.UpdateAsks("app", []Ask{tagged(1, 1, "self", in("self"))}))
	if got := e.Schedule(0).Allocations; len(got) != 0 {
		t.Fatalf("IN its own tag placed the first container on %v", placedOn(got))
	}
	must(t, e.UpdateAsks("app", []Ask{tagged(1, 0, "self", in("self")), tagged(2, 1, "hbase", nil)}))
	hb := e.Schedule(0).Allocations
	if len(hb) != 1 {
		t.Fatalf("an unconstrained ask placed %d", len(hb))
	}
	must(t, e.UpdateAsks("app", []Ask{tagged(3, 3, "spark", in("hbase"))}))
	if got := placedOn(e.Schedule(0).Allocations); len(got) != 1 || got[hb[0].Node] != 3 {
		t.Fatalf("IN hbase placed %v, want all 3 on %s", got, hb[0].Node)
	}
	// At most two "w" per node (cardinality 0..1 of existing ones): 6 containers on 3 nodes.
	card := &Constraint{Scope: ScopeNode, Targets: []Target{{Tags: []string{"w"}}}, Min: 0, Max: 1}
	must(t, e.UpdateAsks("app", []Ask{tagged(4, 7, "w", card)}))
	got := placedOn(e.Schedule(0).Allocations)
	for n, k := range got {
		if k != 2 {
			t.Fatalf("cardinality 0..1 put %d w on %s (%v)", k, n, got)
		}
	}
	if len(got) != 3 {
		t.Fatalf("cardinality placed on %v", got)
	}
	// A forgotten allocation gives its SchedulingRequest's ask the container back.
	must(t, e.UpdateAsks("app", []Ask{tagged(4, 0, "w", card), tagged(5, 1, "f", nil)}))
	f := e.Schedule(0).Allocations
	must(t, e.Forget(f[0].Container))
	if again := e.Schedule(0).Allocations; len(again) != 1 || again[0].Placement == nil || again[0].Placement.RequestID != 5 {
		t.Fatalf("after forgetting, the request was placed as %+v", again)
	}
}

// Rack scope counts every node of the rack; an OR takes either child.
func TestRackScopeAndOr(t *testing.T) {
	e := newEngine(t, StrategyRings, queues(t, "root.queues", "a", "root.a.capacity", "100"))
	for i := 0; i < 4; i++ {
		must(t, e.AddNode(NodeSpec{ID: fmt.Sprintf("n%d:8041", i), Rack: fmt.Sprintf("/r%d", i/2), Capacity: res(8192, 8)}))
	}
	must(t, e.AddApp(AppSpec{ID: "app", Queue: "a"}))
	must(t, e.UpdateAsks("app", []Ask{tagged(1, 3, "r", notIn(ScopeRack, NamespaceSelf, "r"))}))
	if got := e.Schedule(0).Allocations; len(got) != 2 || got[0].Node[:2] == got[1].Node[:2] {
		t.Fatalf("rack anti-affinity placed %v, want one per rack", placedOn(got))
	}
	or := &Constraint{Op: ConstraintOr, Children: []*Constraint{
		{Scope: ScopeNode, Targets: []Target{{Tags: []string{"missing"}}}, Min: 1, Max: -1},
		{Scope: ScopeNode, Targets: []Target{{Partitions: []string{""}}}, Min: 1, Max: -1},
	}}
	must(t, e.UpdateAsks("app", []Ask{tagged(1, 0, "r", nil), tagged(2, 1, "o", or)}))
	if got := e.Schedule(0).Allocations; len(got) != 1 {
		t.Fatalf("an OR with one satisfiable child placed %d", len(got))
	}
}

func ids(allocs []Allocation) []ContainerID {
	out := make([]ContainerID, len(allocs))
	for i, a := range allocs {
		out[i] = a.Container
	}
	return out
}

// Asks of one priority and capability with different allocation request ids (the YARN
// service AM's components) are kept apart, and each container carries its ask's id.
func TestRequestIDsKeepAsksApart(t *testing.T) {
	e := newEngine(t, StrategyRings, queues(t, "root.queues", "a", "root.a.capacity", "100"))
	unitNodes(t, e, 10)
	must(t, e.AddApp(AppSpec{ID: "svc", Queue: "a"}))
	ask := func(id int64, n int) Ask {
		return Ask{Priority: 1, ResourceName: "*", Capability: res(1024, 1), Count: n, RelaxLocality: true, RequestID: id}
	}
	must(t, e.UpdateAsks("svc", []Ask{ask(0, 2), ask(1, 3)}))
	byID := map[int64]int{}
	for _, a := range e.Schedule(0).Allocations {
		byID[a.RequestID]++
	}
	if byID[0] != 2 || byID[1] != 3 || len(byID) != 2 {
		t.Fatalf("containers by request id %v, want 2 of 0 and 3 of 1", byID)
	}
}

// A request no node can meet does not stop its queue: the next application's request is
// placed (FIFO would otherwise serve the blocked head forever), and no room is preempted
// for it, which freeing room would never help.
func TestUnmeetableConstraintYields(t *testing.T) {
	e, clk := preemptEngine(t, "root.queues", "a,b", "root.a.capacity", "50", "root.b.capacity", "50")
	in := &Constraint{Scope: ScopeNode, Targets: []Target{{Tags: []string{"nowhere"}}}, Min: 1, Max: -1}
	must(t, e.AddApp(AppSpec{ID: "first", Queue: "a"}))
	must(t, e.UpdateAsks("first", []Ask{tagged(1, 1, "x", in)}))
	must(t, e.AddApp(AppSpec{ID: "second", Queue: "a"}))
	must(t, e.UpdateAsks("second", ask1(1)))
	got := e.Schedule(0).Allocations
	if len(got) != 1 || got[0].App != "second" {
		t.Fatalf("placed %+v, want second's container", got)
	}
	// b fills the cluster; a's unmeetable request then asks nothing of b.
	must(t, e.AddApp(AppSpec{ID: "b1", Queue: "b"}))
	must(t, e.UpdateAsks("b1", ask1(9)))
	e.Confirm(ids(append(got, e.Schedule(0).Allocations...)))
	for i := 0; i < 5; i++ {
		if pre := e.Schedule(0).Preemptions; len(pre) != 0 {
			t.Fatalf("preempted %+v for a request only a tag can unblock", pre)
		}
		clk.t = clk.t.Add(time.Minute)
	}
}

// A container recovered after an RM restart brings its allocation tags back (the
// NodeManager reports them from its token): anti-affinity still sees it.
func TestRecoveredContainersKeepTheirTags(t *testing.T) {
	e := newEngine(t, StrategyRings, queues(t, "root.queues", "a", "root.a.capacity", "100"))
	for i := 0; i < 2; i++ {
		must(t, e.AddNode(NodeSpec{ID: fmt.Sprintf("n%d:8041", i), Capacity: res(8192, 8)}))
	}
	must(t, e.AddApp(AppSpec{ID: "zk", Queue: "a"}))
	if _, err := e.Recover(RecoveredContainer{App: "zk", Node: "n0:8041", Resource: res(1024, 1), Priority: 1, Start: t0,
		RequestID: 2, Placement: &Placement{RequestID: 2, Tags: []string{"zk"}}}); err != nil {
		t.Fatal(err)
	}
	must(t, e.UpdateAsks("zk", []Ask{tagged(3, 1, "zk", notIn(ScopeNode, NamespaceSelf, "zk"))}))
	if got := placedOn(e.Schedule(0).Allocations); len(got) != 1 || got["n1:8041"] != 1 {
		t.Fatalf("placed %v, want the new zk on n1 (n0 holds the recovered one)", got)
	}
}
