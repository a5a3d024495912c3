package scheduler

import (
	"math"
	"testing"
)

// scheduling.md §3: usage cpu 20 %, mem 50 %, gpu 10 % -> weights 1.5/4.5, 2.5/4.5, 0.5/4.5.
func TestPriorityGraphWeightsExample(t *testing.T) {
	w := priorityGraphWeights([]float64{0.2, 0.5, 0.1})
	want := []float64{1.5 / 4.5, 2.5 / 4.5, 0.5 / 4.5}
	for i := range want {
		if math.Abs(w[i]-want[i]) > 1e-12 {
			t.Fatalf("weights %v, want %v", w, want)
		}
	}
	eq := priorityGraphWeights([]float64{3, 3})
	if eq[0] != 0.5 || eq[1] != 0.5 {
		t.Fatalf("equal scores: %v", eq)
	}
}

func TestImbalance(t *testing.T) {
	capacity := res(1000, 100, 10)
	w := []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}
	if y := imbalance(Resource{}, res(1000, 100, 10), capacity, w); y != 0 {
		t.Fatalf("a full node is perfectly balanced, y=%v", y)
	}
	// d = (0.5, 0.2, 0.4): mean 0.3667.
	want := math.Sqrt((sq(0.5-11.0/30) + sq(0.2-11.0/30) + sq(0.4-11.0/30)) / 3)
	if y := imbalance(Resource{}, res(500, 20, 4), capacity, w); math.Abs(y-want) > 1e-12 {
		t.Fatalf("y = %v, want %v", y, want)
	}
}

func sq(x float64) float64 { return x * x }

// figure7 is the source's figure-7 example: one node (100 cpu, 1000 GB, 10 gpu) and six
// jobs waiting in order. Memory is in GB here; only ratios matter.
func figure7(t *testing.T, strategy string) (*Engine, []string) {
	cfg := DefaultConfig()
	cfg.Strategy = strategy
	cfg.Types = Types{Names: []string{"memory-mb", "vcores", "yarn.io/gpu"}}
	e, err := New(cfg, queues(t, "root.queues", "a", "root.a.capacity", "100"))
	must(t, err)
	must(t, e.AddNode(NodeSpec{ID: "node", Capacity: res(1000, 100, 10)}))
	jobs := []struct {
		name          string
		cpu, mem, gpu int64
	}{{"job5", 20, 500, 4}, {"job2", 30, 400, 2}, {"job1", 40, 200, 2}, {"job4", 40, 300, 4}, {"job3", 30, 300, 1}, {"job6", 30, 200, 1}}
	for _, j := range jobs {
		must(t, e.AddApp(AppSpec{ID: AppID(j.name), Queue: "a"}))
		must(t, e.UpdateAsks(AppID(j.name), []Ask{{Priority: 1, ResourceName: "*", Capability: res(j.mem, j.cpu, j.gpu), Count: 1}}))
	}
	var placed []string
	for _, a := range e.Schedule(0).Allocations {
		placed = append(placed, string(a.App))
	}
	return e, placed
}

func TestFigure7BalanceWithGating(t *testing.T) {
	e, placed := figure7(t, StrategyBalance)
	if got := join(placed); got != "job5,job1,job4" {
		t.Fatalf("balance placed %s, want job5,job1,job4", got)
	}
	if free := e.nodes["node"].free(); !free.IsZero() {
		t.Fatalf("node not filled exactly: free %v", free)
	}
	for _, waiting := range []string{"job2", "job3", "job6"} {
		if e.apps[AppID(waiting)].pending != 1 {
			t.Errorf("%s should still wait", waiting)
		}
	}
}

func TestFigure7FirstFitStrands(t *testing.T) {
	e, placed := figure7(t, StrategyFirstFit)
	if got := join(placed); got != "job5,job2" {
		t.Fatalf("first fit placed %s, want job5,job2", got)
	}
	if free := e.nodes["node"].free(); free != res(100, 50, 4) {
		t.Fatalf("first fit strands %v, want 50 cpu / 100 GB / 4 gpu", free)
	}
}

// Gating never starves the head: after MaxSkips passes it is placed even if it worsens.
func TestGatingIsBounded(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Strategy = StrategyBalance
	cfg.Balance.MaxSkips = 1
	cfg.Types = Types{Names: []string{"memory-mb", "vcores", "yarn.io/gpu"}}
	e, err := New(cfg, queues(t, "root.queues", "a", "root.a.capacity", "100"))
	must(t, err)
	must(t, e.AddNode(NodeSpec{ID: "node", Capacity: res(10000, 1000, 100)}))
	must(t, e.AddApp(AppSpec{ID: "head", Queue: "a"}))
	must(t, e.AddApp(AppSpec{ID: "later", Queue: "a"}))
	must(t, e.UpdateAsks("head", []Ask{{Priority: 1, ResourceName: "*", Capability: res(5000, 10, 1), Count: 1}}))
	must(t, e.UpdateAsks("later", []Ask{{Priority: 1, ResourceName: "*", Capability: res(100, 10, 1), Count: 5}}))
	// Place something first so the node has a balance to worsen.
	var order []string
	for _, a := range e.Schedule(0).Allocations {
		order = append(order, string(a.App))
	}
	found := false
	for _, o := range order {
		found = found || o == "head"
	}
	if !found {
		t.Fatalf("head starved: %v", order)
	}
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ","
		}
		out += x
	}
	return out
}

// The auto strategy balances what balance pays off for and leaves the rest to rings: a
// request in proportion to the partition goes by rings, a skewed one by balance, and
// every request of a partition with GPUs by balance.
func TestAutoGovernsSkewedAndGPU(t *testing.T) {
	r := newRings(2, DefaultConfig().Rings, 8, 256, func() Resource { return res(100<<10, 100) })
	b := newBalance(r, DefaultBalanceConfig(), nil, nil)
	b.auto = true
	for _, c := range []struct {
		req  Resource
		want bool
	}{{res(1<<10, 1), false}, {res(1400, 1), false}, {res(2<<10, 1), true}, {res(1<<10, 2), true}, {res(1<<10, 0), true}, {Resource{}, false}} {
		if got := b.governs(c.req); got != c.want {
			t.Errorf("governs(%v) = %v, want %v", c.req, got, c.want)
		}
	}
	gpu := newRings(3, DefaultConfig().Rings, 8, 256, func() Resource { return Resource{100 << 10, 100, 8} })
	bg := newBalance(gpu, DefaultBalanceConfig(), nil, nil)
	bg.auto = true
	if !bg.governs(res(1<<10, 1)) {
		t.Error("a partition with GPUs: a plain request is not balanced")
	}
	b.auto = false
	if !b.governs(res(1<<10, 1)) {
		t.Error("the balance strategy does not balance every request")
	}
}
