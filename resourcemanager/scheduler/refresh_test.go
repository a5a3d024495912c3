package scheduler

import (
	"strings"
	"testing"
)

func TestRefreshKeepsRunningWork(t *testing.T) {
	e := newEngine(t, StrategyRings, queues(t, "root.queues", "a,b", "root.a.capacity", "50", "root.b.capacity", "50"))
	unitNodes(t, e, 10)
	must(t, e.AddApp(AppSpec{ID: "x", Queue: "a"}))
	must(t, e.UpdateAsks("x", ask1(3)))
	if n := len(e.Schedule(0).Allocations); n != 3 {
		t.Fatalf("placed %d", n)
	}
	// Add a queue c and shrink a: x keeps its three containers and its place.
	must(t, e.Refresh(queues(t, "root.queues", "a,b,c", "root.a.capacity", "30", "root.b.capacity", "50", "root.c.capacity", "20"), nil))
	if e.groups["a"].used[""][VCores] != 3 || e.apps["x"].running != 3 {
		t.Fatal("running work lost on refresh")
	}
	if e.groups["a"].quota[""] != 300000 {
		t.Fatalf("a's quota %d, want 30%%", e.groups["a"].quota[""])
	}
	must(t, e.AddApp(AppSpec{ID: "y", Queue: "c"}))
	must(t, e.UpdateAsks("y", ask1(1)))
	if got := e.Schedule(0).Allocations; len(got) != 1 || got[0].App != "y" {
		t.Fatalf("new queue not served: %+v", got)
	}
	// Removing a queue with applications is refused and changes nothing.
	err := e.Refresh(queues(t, "root.queues", "b,c", "root.b.capacity", "50", "root.c.capacity", "50"), nil)
	if err == nil || !strings.Contains(err.Error(), "root.a has 1 applications") {
		t.Fatalf("removal: %v", err)
	}
	if _, ok := e.groups["a"]; !ok {
		t.Fatal("failed refresh changed the queues")
	}
}
