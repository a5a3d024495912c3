package scheduler

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/conf/capacity"
	"github.com/bobbin-yarn/bobbin/conf/fairscheduler"
)

// fairTree is the queue tree of a Fair Scheduler allocation file.
func fairTree(t *testing.T, allocations string) *capacity.Tree {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "fair-scheduler.xml"), []byte(allocations), 0o644); err != nil {
		t.Fatal(err)
	}
	c := conf.Empty()
	c.Set(capacity.KeySchedulerClass, fairscheduler.Class)
	tree, err := capacity.Load(c, dir)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// busy runs one application per queue, each asking for more 1 GB containers than ten
// unit nodes hold, and returns what each queue got.
func busy(t *testing.T, tree *capacity.Tree, queues ...string) map[string]int {
	t.Helper()
	e := newEngine(t, StrategyRings, tree)
	unitNodes(t, e, 10)
	for _, q := range queues {
		id := AppID("app-" + q)
		must(t, e.AddApp(AppSpec{ID: id, Queue: q, Submit: t0}))
		must(t, e.UpdateAsks(id, []Ask{{Priority: 1, ResourceName: "*", Capability: res(1024, 1), Count: 100}}))
	}
	return countByQueue(e, e.Schedule(0).Allocations)
}

// The Fair Scheduler's instantaneous fair shares: minResources raises a queue's share
// above its weight's, maxResources caps it and what it holds, and a parent's share goes to
// its busy children alone (issue 22).
func TestFairSharesWithMinimumsAndMaximums(t *testing.T) {
	for _, c := range []struct {
		name, file string
		queues     []string
		want       map[string]int
	}{{
		name:   "equal weights",
		file:   `<allocations><queue name="a"/><queue name="b"/></allocations>`,
		queues: []string{"root.a", "root.b"},
		want:   map[string]int{"root.a": 5, "root.b": 5},
	}, {
		// Weights 1:1, a's floor 6 GB of 10: a gets 6 and b the 4 left.
		name:   "minResources",
		file:   `<allocations><queue name="a"><minResources>6144 mb, 6 vcores</minResources></queue><queue name="b"/></allocations>`,
		queues: []string{"root.a", "root.b"},
		want:   map[string]int{"root.a": 6, "root.b": 4},
	}, {
		// a's ceiling of 3 GB holds it there although b's weight is a third of a's.
		name:   "maxResources",
		file:   `<allocations><queue name="a"><weight>3</weight><maxResources>3072 mb, 10 vcores</maxResources></queue><queue name="b"/></allocations>`,
		queues: []string{"root.a", "root.b"},
		want:   map[string]int{"root.a": 3, "root.b": 7},
	}, {
		// Alone, a stops at its ceiling; the rest of the cluster stays free.
		name:   "maxResources alone",
		file:   `<allocations><queue name="a"><maxResources>memory-mb=4096, vcores=10</maxResources></queue><queue name="b"/></allocations>`,
		queues: []string{"root.a"},
		want:   map[string]int{"root.a": 4},
	}, {
		// etl (weight 4) against adhoc (1): with hourly idle, daily takes all of etl's share.
		name: "hierarchy",
		file: `<allocations><queue name="etl"><weight>4</weight><queue name="daily"/><queue name="hourly"/></queue>
			<queue name="adhoc"/></allocations>`,
		queues: []string{"root.etl.daily", "root.adhoc"},
		want:   map[string]int{"root.etl.daily": 8, "root.adhoc": 2},
	}} {
		got := busy(t, fairTree(t, c.file), c.queues...)
		for q, n := range c.want {
			if got[q] != n {
				t.Errorf("%s: %v, want %v", c.name, got, c.want)
				break
			}
		}
	}
}

func TestSplitFairly(t *testing.T) {
	got := splitFairly([]fairChild{
		{weight: 1, lo: 0.6, hi: 1, active: true},
		{weight: 1, hi: 1, active: true},
		{weight: 5, hi: 1},                           // idle: nothing
		{weight: 2, lo: 0.1, hi: 0.05, active: true}, // the ceiling wins over the floor
	}, 1)
	want := []float64{0.6, 0.35, 0, 0.05}
	for i := range want {
		if d := got[i] - want[i]; d > 1e-9 || d < -1e-9 {
			t.Fatalf("shares %v, want %v", got, want)
		}
	}
	// Floors above what there is: each gets its floor.
	got = splitFairly([]fairChild{{weight: 1, lo: 0.7, hi: 1, active: true}, {weight: 1, lo: 0.7, hi: 1, active: true}}, 1)
	if got[0] != 0.7 || got[1] != 0.7 {
		t.Errorf("floors above the total: %v", got)
	}
}

// A floor or ceiling naming a resource type the cluster lacks is refused, naming the queue,
// on a parent as on a leaf.
func TestBoundsNameKnownTypes(t *testing.T) {
	tree := fairTree(t, `<allocations><queue name="p"><minResources>memory-mb=1024, vcores=1, yarn.io/fpga=1</minResources><queue name="c"/></queue></allocations>`)
	if _, err := New(DefaultConfig(), tree); err == nil || !strings.Contains(err.Error(), "queue root.p minimum resource") {
		t.Errorf("unknown type on a parent's floor: %v", err)
	}
}
