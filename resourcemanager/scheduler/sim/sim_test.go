package sim

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
)

func run(t *testing.T, name, strategy string) *Report {
	t.Helper()
	tr, err := LoadTrace(filepath.Join("testdata", "traces", name))
	if err != nil {
		t.Fatal(err)
	}
	if strategy != "" {
		if tr.Settings == nil {
			tr.Settings = map[string]string{}
		}
		tr.Settings["bobbin.scheduler.node-selection"] = strategy
	}
	rep, err := Run(tr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := json.Marshal(rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

func placedAt(rep *Report, at float64) map[string]int {
	out := map[string]int{}
	for _, p := range rep.Placements {
		if p.Time == at {
			out[strings.SplitN(p.App, "-", 2)[0]]++
		}
	}
	return out
}

// Idle capacity goes to the only waiting queue; under load the shares are 40:60.
func TestTraceShares(t *testing.T) {
	rep := run(t, "share-2-3.json", "")
	if got := placedAt(rep, 0); got["a"] != 10 {
		t.Fatalf("t=0: %v, want a=10 (idle capacity beyond its quota)", got)
	}
	if got := placedAt(rep, 100); got["a"] != 4 || got["b"] != 6 {
		t.Fatalf("t=100: %v, want a=4 b=6", got)
	}
	if len(rep.NeverRan) != 0 || rep.Makespan <= 100 || rep.JobCompletion["a-early"] != 100 {
		t.Fatalf("never ran %v, makespan %v, completions %v", rep.NeverRan, rep.Makespan, rep.JobCompletion)
	}
}

func TestTraceFigure7(t *testing.T) {
	rep := run(t, "figure7.json", "balance")
	var got []string
	for _, p := range rep.Placements {
		if p.Time == 0 {
			got = append(got, p.App)
		}
	}
	if strings.Join(got, ",") != "job5,job1,job4" {
		t.Fatalf("balance placed %v at t=0", got)
	}
	if u := rep.Utilization[0]; u.Time != 0 || u.Values["yarn.io/gpu"] != 1 || u.Values["vcores"] != 1 || u.Values["memory-mb"] != 1 {
		t.Fatalf("utilization %v, want the node filled at t=0", u)
	}
	ff := run(t, "figure7.json", "first-fit")
	got = got[:0]
	for _, p := range ff.Placements {
		if p.Time == 0 {
			got = append(got, p.App)
		}
	}
	if strings.Join(got, ",") != "job5,job2" {
		t.Fatalf("first fit placed %v", got)
	}
	// First fit strands 50 cpu / 100 GB / 4 gpu that none of the waiting jobs fits.
	if f := ff.Fragmentation[0].Values; f["vcores"] != 0.5 || f["memory-mb"] != 0.1 || f["yarn.io/gpu"] != 0.4 {
		t.Fatalf("first-fit fragmentation %v", f)
	}
}

func TestTracePreemption(t *testing.T) {
	rep := run(t, "preemption.json", "")
	notices, kills := 0, 0
	noticed := map[int64]float64{}
	for _, p := range rep.Preemptions {
		if p.App != "greedy" {
			t.Fatalf("preempted %s", p.App)
		}
		if p.Kill {
			kills++
			if p.Time != noticed[p.Container]+10 {
				t.Fatalf("kill at %v, notice at %v: want the 10 s grace", p.Time, noticed[p.Container])
			}
		} else {
			notices++
			noticed[p.Container] = p.Time
			if p.Time < 60 || p.Time > 63 {
				t.Fatalf("notice at %v, want 60..63 (one per interval once b arrives)", p.Time)
			}
		}
	}
	// a may only go down to quota×B = 5.5 nodes: 4 containers.
	if notices != 4 || kills != 4 {
		t.Fatalf("notices %d kills %d, want 4 and 4", notices, kills)
	}
	if len(rep.NeverRan) != 0 {
		t.Fatalf("never ran: %v", rep.NeverRan)
	}
}

func TestTraceEASYBackfill(t *testing.T) {
	rep := run(t, "easy-backfill.json", "")
	start := map[string]float64{}
	for _, p := range rep.Placements {
		start[p.App] = p.Time
	}
	// short backfills at t=1 and ends at 61; wide starts at 100 when "running" ends, not
	// delayed; long waits behind wide.
	if start["short"] != 1 || start["wide"] != 100 || start["long"] != 150 {
		t.Fatalf("starts %v", start)
	}
}

func TestSyntheticSmall(t *testing.T) {
	rep, err := RunSynthetic(SyntheticSpec{Nodes: 200, Apps: 40, Asks: 2000, Queues: 4})
	if err == nil && (rep.Unplaced != 2000-rep.Allocations || rep.Unplaced > 0 && len(rep.UnplacedReasons) == 0) {
		t.Errorf("unplaced %d of %d with reasons %v: every ask not placed is counted, and why", rep.Unplaced, 2000-rep.Allocations, rep.UnplacedReasons)
	}
	if err != nil {
		t.Fatal(err)
	}
	if rep.Allocations != 2000 || rep.AllocationsPerSecond <= 0 || rep.LatencyMicros.P50 <= 0 {
		t.Fatalf("%+v", rep)
	}
	if _, err := ParseSynthetic("nodes=x"); err == nil {
		t.Fatal("bad spec accepted")
	}
}

func BenchmarkSyntheticRings(b *testing.B)   { benchSynthetic(b, "rings") }
func BenchmarkSyntheticBalance(b *testing.B) { benchSynthetic(b, "balance") }

func benchSynthetic(b *testing.B, strategy string) {
	for i := 0; i < b.N; i++ {
		rep, err := RunSynthetic(SyntheticSpec{Nodes: 10000, Apps: 1000, Asks: 100000, Queues: 20, Strategy: strategy})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(rep.AllocationsPerSecond, "allocs/s")
	}
}

func startsOf(rep *Report) map[string]Placement {
	out := map[string]Placement{}
	for _, p := range rep.Placements {
		if _, ok := out[p.App]; !ok {
			out[p.App] = p
		}
	}
	return out
}

func TestTraceRings(t *testing.T) {
	s := startsOf(run(t, "rings.json", ""))
	for app, node := range map[string]string{"4g": "fit", "7g": "mid", "9g": "huge", "12g": "big"} {
		if s[app].Node != node {
			t.Errorf("%s on %s, want %s", app, s[app].Node, node)
		}
	}
}

func TestTraceTimeOfDay(t *testing.T) {
	rep := run(t, "time-of-day.json", "")
	if got := placedAt(rep, 0); got["a"] != 9 || got["b"] != 5 {
		t.Fatalf("t=0: %v, want a=9 b=5 (90:50)", got)
	}
	var first *PreemptionRecord
	for i := range rep.Preemptions {
		if !rep.Preemptions[i].Kill {
			first = &rep.Preemptions[i]
			break
		}
	}
	if first == nil || first.App != "a-batch" || first.Time != 600 {
		t.Fatalf("first preemption %+v, want a-batch at 600 s (the 00:10 boundary)", first)
	}
}

func TestTraceConservativeBackfill(t *testing.T) {
	s := startsOf(run(t, "conservative-backfill.json", ""))
	// short would delay w2's reservation on B at 150 s, so it waits; w1 starts on A at 100,
	// w2 on B at 150.
	if s["w1"].Time != 100 || s["w2"].Time != 150 || s["short"].Time < 150 {
		t.Fatalf("starts w1=%v w2=%v short=%v", s["w1"].Time, s["w2"].Time, s["short"].Time)
	}
	easy, err := LoadTrace(filepath.Join("testdata", "traces", "conservative-backfill.json"))
	if err != nil {
		t.Fatal(err)
	}
	easy.Queues["root.a.bobbin.backfill"] = "easy"
	rep, err := Run(easy)
	if err != nil {
		t.Fatal(err)
	}
	if e := startsOf(rep); e["short"].Time != 1 {
		t.Fatalf("EASY should backfill short at 1 s, got %v", e["short"].Time)
	}
}

func TestTraceLabelBlacklistReset(t *testing.T) {
	rep := run(t, "label-blacklist.json", "")
	if len(rep.NeverRan) != 0 || len(rep.Placements) != 2 {
		t.Fatalf("never ran %v, placements %v", rep.NeverRan, rep.Placements)
	}
	for _, p := range rep.Placements {
		if !strings.HasPrefix(p.Node, "gpu-") {
			t.Fatalf("placed off the label: %+v", p)
		}
	}
}

func TestTraceVictimPolicyAndCoolDown(t *testing.T) {
	rep := run(t, "victim-policy.json", "")
	if len(rep.Preemptions) == 0 || rep.Preemptions[0].App != "recent" {
		t.Fatalf("first victim %+v, want the most recently started container (app recent)", rep.Preemptions)
	}
	// The notice goes out at 20 s and the kill after the 5 s grace; claim starts then. a
	// sits out its 30 s cool-down from 20 s, so a-more (submitted at 30 s) cannot start
	// before 50 s.
	s := startsOf(rep)
	if s["claim"].Time != 25 {
		t.Fatalf("claim started at %v, want 25 (notice at 20 + 5 s grace)", s["claim"].Time)
	}
	if s["a-more"].Time < 50 {
		t.Fatalf("a-more started at %v, inside a's cool-down", s["a-more"].Time)
	}
}

// With Explain the report says why asks waited: in the preemption trace the late job's
// group has room preempted for it, and before that asks found no node with room.
func TestExplainReportsWhyAsksWaited(t *testing.T) {
	tr, err := LoadTrace(filepath.Join("testdata", "traces", "preemption.json"))
	if err != nil {
		t.Fatal(err)
	}
	tr.Explain = true
	rep, err := Run(tr)
	if err != nil {
		t.Fatal(err)
	}
	var preempting, noNode bool
	for _, u := range rep.Unplaced {
		switch u.Reason {
		case string(scheduler.ReasonPreempting):
			preempting = preempting || u.App == "late"
		case string(scheduler.ReasonNoNode):
			noNode = noNode || u.Rejected[scheduler.FilterResources] > 0
		}
	}
	if !preempting || !noNode {
		t.Fatalf("unplaced records %+v: want the late job preempting for its group and a no-node-fits with nodes short of resources", rep.Unplaced)
	}
	tr.Explain = false
	if rep, err = Run(tr); err != nil || len(rep.Unplaced) != 0 {
		t.Fatalf("without Explain: %v, %d unplaced records", err, len(rep.Unplaced))
	}
}
