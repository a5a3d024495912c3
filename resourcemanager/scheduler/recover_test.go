package scheduler

import (
	"testing"
)

// A recovered container books its node, application and group as a placed one does,
// consumes no ask, and is released like any other; one that does not fit is refused.
func TestRecoverBooksWithoutAsks(t *testing.T) {
	e := newEngine(t, "first-fit", queues(t, "root.queues", "a", "root.a.capacity", "100"))
	must(t, e.AddNode(NodeSpec{ID: "n1:1", Capacity: res(4096, 4)}))
	must(t, e.AddApp(AppSpec{ID: "app1", Queue: "a", User: "u", Submit: t0}))
	must(t, e.UpdateAsks("app1", []Ask{{Priority: 1, ResourceName: "*", Capability: res(1024, 1), Count: 1, RelaxLocality: true}}))
	am, err := e.Recover(RecoveredContainer{App: "app1", Node: "n1:1", Resource: res(1024, 1), AM: true, Start: t0})
	must(t, err)
	task, err := e.Recover(RecoveredContainer{App: "app1", Node: "n1:1", Resource: res(2048, 1), Priority: 20, Start: t0})
	must(t, err)
	if _, err := e.Recover(RecoveredContainer{App: "app1", Node: "n1:1", Resource: res(2048, 1), Start: t0}); err == nil {
		t.Fatal("a container beyond the node's room was recovered")
	}
	if _, err := e.Recover(RecoveredContainer{App: "nope", Node: "n1:1", Resource: res(1, 1), Start: t0}); err == nil {
		t.Fatal("a container of an unknown application was recovered")
	}
	if _, used := e.Totals(); used != res(3072, 2) {
		t.Fatalf("used after recovery %v", used)
	}
	// The ask is untouched: one more 1 GB container fits, and only one.
	p := deliver(e, e.Schedule(0))
	if len(p.Allocations) != 1 || p.Allocations[0].Resource != res(1024, 1) {
		t.Fatalf("plan after recovery %+v", p)
	}
	must(t, e.Release(task))
	must(t, e.Release(am))
	if _, used := e.Totals(); used != res(1024, 1) {
		t.Fatalf("used after releasing the recovered containers %v", used)
	}
}
