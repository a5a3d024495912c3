package scheduler

import "testing"

// labelledEngine: two unlabelled nodes and two "lab" nodes (1 GB, 1 vcore each); queue a
// may use lab, queue b may not, and a's default-node-label-expression is defaultLabel.
func labelledEngine(t *testing.T, defaultLabel string) *Engine {
	t.Helper()
	e := newEngine(t, StrategyRings, queues(t, "root.queues", "a,b", "root.a.capacity", "50", "root.b.capacity", "50",
		"root.accessible-node-labels", "*", "root.accessible-node-labels.lab.capacity", "100",
		"root.a.accessible-node-labels", "lab", "root.a.accessible-node-labels.lab.capacity", "100",
		"root.a.default-node-label-expression", defaultLabel, "root.b.accessible-node-labels", ""))
	for _, id := range []string{"d1:8041", "d2:8041"} {
		must(t, e.AddNode(NodeSpec{ID: id, Capacity: res(1024, 1)}))
	}
	for _, id := range []string{"l1:8041", "l2:8041"} {
		must(t, e.AddNode(NodeSpec{ID: id, Partition: "lab", Capacity: res(1024, 1)}))
	}
	return e
}

func nodesOf(p Plan) map[string]int {
	out := map[string]int{}
	for _, a := range p.Allocations {
		out[a.Node[:1]]++
	}
	return out
}

// TestExclusiveLabelServesOnlyItsRequests: an exclusive label's nodes take only requests
// that name it; the default partition's work waits for its own nodes.
func TestExclusiveLabelServesOnlyItsRequests(t *testing.T) {
	e := labelledEngine(t, "")
	must(t, e.AddApp(AppSpec{ID: "plain", Queue: "b"}))
	must(t, e.UpdateAsks("plain", ask1(4)))
	if got := nodesOf(e.Schedule(0)); got["d"] != 2 || got["l"] != 0 {
		t.Fatalf("default work placed %v, want the 2 unlabelled nodes only", got)
	}
	must(t, e.AddApp(AppSpec{ID: "lab", Queue: "a", Label: "lab"}))
	must(t, e.UpdateAsks("lab", []Ask{{Priority: 0, ResourceName: "*", Capability: res(1024, 1), Count: 1, AM: true}}))
	if got := nodesOf(e.Schedule(0)); got["l"] != 1 || len(got) != 1 {
		t.Fatalf("labelled AM placed %v, want a lab node", got)
	}
}

// TestDefaultPartitionOverridesQueueDefault: the queue's default-node-label-expression is
// taken by requests without one; an explicitly empty expression (DefaultPartition) is the
// default partition, as in the Java RM.
func TestDefaultPartitionOverridesQueueDefault(t *testing.T) {
	e := labelledEngine(t, "lab")
	must(t, e.AddApp(AppSpec{ID: "inherits", Queue: "a"}))
	must(t, e.UpdateAsks("inherits", ask1(1)))
	if got := nodesOf(e.Schedule(0)); got["l"] != 1 || len(got) != 1 {
		t.Fatalf("inheriting app placed %v, want a lab node", got)
	}
	must(t, e.AddApp(AppSpec{ID: "plain", Queue: "a", Label: DefaultPartition}))
	must(t, e.UpdateAsks("plain", ask1(1)))
	if got := nodesOf(e.Schedule(0)); got["d"] != 1 || len(got) != 1 {
		t.Fatalf("explicitly unlabelled app placed %v, want an unlabelled node", got)
	}
	ask := ask1(1)
	ask[0].Label, ask[0].Priority = DefaultPartition, 2
	must(t, e.UpdateAsks("inherits", ask))
	if got := nodesOf(e.Schedule(0)); got["d"] != 1 || len(got) != 1 {
		t.Fatalf("an ask with an empty expression placed %v, want an unlabelled node", got)
	}
}

// TestNonExclusiveLabelLendsIdleNodes: a non-exclusive label's idle nodes take the
// default partition's work once its own nodes are full, from any queue, but never an
// AM container; once the label is exclusive again, they lend no more.
func TestNonExclusiveLabelLendsIdleNodes(t *testing.T) {
	e := labelledEngine(t, "")
	e.SetNonExclusive([]string{"lab"})
	must(t, e.AddApp(AppSpec{ID: "plain", Queue: "b"}))
	must(t, e.UpdateAsks("plain", ask1(3)))
	if got := nodesOf(deliver(e, e.Schedule(0))); got["d"] != 2 || got["l"] != 1 {
		t.Fatalf("placed %v, want both unlabelled nodes, then one lab node lent", got)
	}
	// The default partition is full: an AM waits rather than take the idle lab node.
	am := []Ask{{Priority: 0, ResourceName: "*", Capability: res(1024, 1), Count: 1, AM: true}}
	must(t, e.AddApp(AppSpec{ID: "am", Queue: "b"}))
	must(t, e.UpdateAsks("am", am))
	if got := nodesOf(e.Schedule(0)); len(got) != 0 {
		t.Fatalf("an AM container was lent a lab node: %v", got)
	}
	e.SetNonExclusive(nil)
	must(t, e.UpdateAsks("plain", ask1(1)))
	if got := nodesOf(e.Schedule(0)); len(got) != 0 {
		t.Fatalf("exclusive again, yet placed %v", got)
	}
	e.SetNonExclusive([]string{"lab"})
	if got := nodesOf(e.Schedule(0)); got["l"] != 1 || len(got) != 1 {
		t.Fatalf("non-exclusive again: placed %v, want the other lab node", got)
	}
}
