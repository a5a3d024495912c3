package scheduler

import (
	"testing"
	"time"
)

func backfillEngine(t *testing.T, variant string, nodes ...int64) (*Engine, *clock) {
	clk := &clock{t0}
	cfg := DefaultConfig()
	cfg.Strategy = StrategyFirstFit
	cfg.Now = clk.now
	cfg.Groups = map[string]GroupSettings{"root.a": {Policy: PolicyBackfill, Backfill: variant}}
	e, err := New(cfg, queues(t, "root.queues", "a", "root.a.capacity", "100"))
	must(t, err)
	for i, gb := range nodes {
		must(t, e.AddNode(NodeSpec{ID: string(rune('A' + i)), Capacity: res(gb<<10, 16)}))
	}
	return e, clk
}

func job(t *testing.T, e *Engine, id AppID, gb int64, runtime time.Duration) {
	must(t, e.AddApp(AppSpec{ID: id, Queue: "a", Runtime: runtime}))
	must(t, e.UpdateAsks(id, []Ask{{Priority: 1, ResourceName: "*", Capability: res(gb<<10, 1), Count: 1}}))
}

func placedApps(r Plan) []string {
	var out []string
	for _, a := range r.Allocations {
		out = append(out, string(a.App)+"@"+a.Node)
	}
	return out
}

// EASY: a short job runs ahead of a blocked wide one because it ends before the wide
// job's reservation; a long one does not.
func TestEASYBackfill(t *testing.T) {
	e, _ := backfillEngine(t, BackfillEASY, 4)
	job(t, e, "running", 2, 100*time.Second)
	e.Schedule(0)
	job(t, e, "wide", 4, 50*time.Second)
	job(t, e, "long", 2, 200*time.Second)
	job(t, e, "short", 2, 60*time.Second)
	got := placedApps(e.Schedule(0))
	if join(got) != "short@A" {
		t.Fatalf("placed %v, want only short@A (long would delay wide past its reservation at +100s)", got)
	}
	// The wide job still starts at +100 s, when both the running and the short job are done.
	w, ok := e.reserve(e.partitions[""], res(4<<10, 1), 50*time.Second, t0, nil)
	if !ok || !w.start.Equal(t0.Add(100*time.Second)) {
		t.Fatalf("wide job's reservation %v, want +100s", w.start.Sub(t0))
	}
}

// A job without a declared runtime is unbounded and never backfilled.
func TestUnboundedJobsAreNotBackfilled(t *testing.T) {
	e, _ := backfillEngine(t, BackfillEASY, 4)
	job(t, e, "running", 2, 100*time.Second)
	e.Schedule(0)
	job(t, e, "wide", 4, 50*time.Second)
	job(t, e, "unknown", 1, 0)
	if got := placedApps(e.Schedule(0)); len(got) != 0 {
		t.Fatalf("placed %v", got)
	}
}

// Two nodes: the head's reservation is on A, the second blocked job's on B. A job that
// fits on B now delays the second job: EASY runs it, conservative refuses.
func TestConservativeRefusesWhatEASYAllows(t *testing.T) {
	for _, tc := range []struct {
		variant, want string
	}{{BackfillEASY, "short@B"}, {BackfillConservative, ""}} {
		e, _ := backfillEngine(t, tc.variant, 4, 4)
		job(t, e, "r1", 3, 100*time.Second) // first fit: A
		job(t, e, "r2", 2, 150*time.Second) // A has 1 GB left: B
		if got := join(placedApps(e.Schedule(0))); got != "r1@A,r2@B" {
			t.Fatalf("setup placed %s", got)
		}
		job(t, e, "w1", 4, 200*time.Second) // reserves A at +100 s
		job(t, e, "w2", 4, 200*time.Second) // reserves B at +150 s (A is taken by w1 until +300 s)
		job(t, e, "short", 2, 200*time.Second)
		if got := join(placedApps(e.Schedule(0))); got != tc.want {
			t.Errorf("%s placed %q, want %q", tc.variant, got, tc.want)
		}
	}
}
