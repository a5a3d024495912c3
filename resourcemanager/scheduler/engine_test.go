package scheduler

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/conf/capacity"
)

// queues builds a tree from "path=capacity" pairs under root.
func queues(t testing.TB, kv ...string) *capacity.Tree {
	t.Helper()
	c := conf.Empty()
	for i := 0; i+1 < len(kv); i += 2 {
		c.Set(capacity.Prefix+kv[i], kv[i+1])
	}
	tr, err := capacity.Parse(c)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func res(mem, cores int64, extra ...int64) Resource {
	r := Resource{mem, cores}
	copy(r[2:], extra)
	return r
}

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func newEngine(t testing.TB, strategy string, tr *capacity.Tree) *Engine {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Strategy = strategy
	cfg.Now = func() time.Time { return t0 }
	e, err := New(cfg, tr)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// deliver hands the AMs the containers of res (the RM's allocate answer does), so the
// asks they send afterwards count only what they still want.
func deliver(e *Engine, res Plan) Plan {
	for _, a := range res.Allocations {
		e.Delivered(a.App, []ContainerID{a.Container})
	}
	return res
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// The worked examples of scheduling.md §1, on groupValue directly.
func TestGroupOrderingWorkedExamples(t *testing.T) {
	// One "unit" of used = 1 of 100; quotas are in any common unit.
	v := func(used, quota uint64) groupValue { return groupValue{usedNum: used, usedDen: 100, quota: quota} }
	// Quotas A=2, B=3, jobs of 1 unit. A runs 1, B runs 1: A=3, B=2 (×LCM) -> B first.
	if !v(1, 3).less(v(1, 2)) {
		t.Error("A=2/B=3, one job each: B should come first")
	}
	// B runs 2: B=4, A=3 -> A first.
	if !v(1, 2).less(v(2, 3)) {
		t.Error("A=2/B=3, B runs 2: A should come first")
	}
	// Quotas 1 and 1: A runs 1, B runs 0 -> B first; B runs 2 -> A first.
	if !v(0, 1).less(v(1, 1)) || v(1, 1).less(v(0, 1)) {
		t.Error("1/1, B idle: B should come first")
	}
	if !v(1, 1).less(v(2, 1)) {
		t.Error("1/1, B runs 2: A should come first")
	}
	// Exact ties: 1/3 of quota 1 equals 2/6 of quota 1, whatever the denominators.
	a := groupValue{usedNum: 1, usedDen: 3, quota: 7}
	b := groupValue{usedNum: 2, usedDen: 6, quota: 7}
	if !a.equal(b) {
		t.Error("equal ratios not equal")
	}
	// Huge values do not overflow: (2^40-1)/2^40 of quota 10^6 vs slightly more.
	big := groupValue{usedNum: 1<<40 - 1, usedDen: 1 << 40, quota: ppm}
	bigger := groupValue{usedNum: 1 << 40, usedDen: 1 << 40, quota: ppm}
	if !big.less(bigger) || bigger.less(big) {
		t.Error("128/192-bit comparison wrong")
	}
}

// unitNodes adds n nodes that each fit exactly one 1 GB/1 core container.
func unitNodes(t testing.TB, e *Engine, n int) {
	for i := 0; i < n; i++ {
		must(t, e.AddNode(NodeSpec{ID: fmt.Sprintf("n%02d:8041", i), Capacity: res(1024, 1)}))
	}
}

func countByQueue(e *Engine, allocs []Allocation) map[string]int {
	out := map[string]int{}
	for _, a := range allocs {
		out[e.apps[a.App].group.name]++
	}
	return out
}

// Under load two groups share in proportion to their quotas (2:3).
func TestQuotaShareUnderLoad(t *testing.T) {
	for _, strategy := range []string{StrategyRings, StrategyFirstFit} {
		e := newEngine(t, strategy, queues(t, "root.queues", "a,b", "root.a.capacity", "40", "root.b.capacity", "60"))
		unitNodes(t, e, 10)
		must(t, e.AddApp(AppSpec{ID: "app-a", Queue: "a", Submit: t0}))
		must(t, e.AddApp(AppSpec{ID: "app-b", Queue: "b", Submit: t0}))
		must(t, e.UpdateAsks("app-a", []Ask{{Priority: 1, ResourceName: "*", Capability: res(1024, 1), Count: 100}}))
		must(t, e.UpdateAsks("app-b", []Ask{{Priority: 1, ResourceName: "*", Capability: res(1024, 1), Count: 100}}))
		got := countByQueue(e, e.Schedule(0).Allocations)
		if got["a"] != 4 || got["b"] != 6 {
			t.Errorf("%s: shares %v, want a=4 b=6", strategy, got)
		}
	}
}

// An idle cluster lets one group take room beyond its quota (a single user needs a
// user-limit-factor above 1 for it, as in Java; TestUserLimit).
func TestIdleCapacityBeyondQuota(t *testing.T) {
	e := newEngine(t, StrategyRings, queues(t, "root.queues", "a,b", "root.a.capacity", "40", "root.a.user-limit-factor", "3", "root.b.capacity", "60"))
	unitNodes(t, e, 10)
	must(t, e.AddApp(AppSpec{ID: "app-a", Queue: "a"}))
	must(t, e.UpdateAsks("app-a", []Ask{{Priority: 1, ResourceName: "*", Capability: res(1024, 1), Count: 100}}))
	if got := countByQueue(e, e.Schedule(0).Allocations); got["a"] != 10 {
		t.Fatalf("a got %v, want all 10 nodes", got)
	}
	// Released room goes back to whoever waits, here b, which is under its quota.
	must(t, e.AddApp(AppSpec{ID: "app-b", Queue: "b"}))
	must(t, e.UpdateAsks("app-b", []Ask{{Priority: 1, ResourceName: "*", Capability: res(1024, 1), Count: 3}}))
	for cid := ContainerID(1); cid <= 3; cid++ {
		must(t, e.Release(cid))
	}
	if got := countByQueue(e, e.Schedule(0).Allocations); got["b"] != 3 || got["a"] != 0 {
		t.Fatalf("after release: %v, want b=3", got)
	}
}

// scheduling.md §4: best fit in the request's ring, then the next rings up to the search
// limit, else the node with the most free room.
func TestRingsChoice(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Strategy = StrategyRings
	cfg.SearchLimit = 2
	e, err := New(cfg, queues(t, "root.queues", "a", "root.a.capacity", "100"))
	must(t, err)
	for _, n := range []struct {
		id  string
		mem int64
	}{{"small", 3 << 10}, {"fit", 5 << 10}, {"mid", 8 << 10}, {"big", 15 << 10}, {"huge", 20 << 10}} {
		must(t, e.AddNode(NodeSpec{ID: n.id, Capacity: res(n.mem, 64)}))
	}
	must(t, e.AddApp(AppSpec{ID: "x", Queue: "a"}))
	place := func(mem int64) string {
		t.Helper()
		must(t, e.UpdateAsks("x", []Ask{{Priority: 1, ResourceName: "*", Capability: res(mem, 1), Count: 1}}))
		allocs := e.Schedule(1).Allocations
		if len(allocs) != 1 {
			t.Fatalf("%d MB not placed", mem)
		}
		return allocs[0].Node
	}
	// 4 GB: ring 5; the tightest node at or above it is "fit" (5 GB, ring 6, within K+2).
	if got := place(4 << 10); got != "fit" {
		t.Errorf("4 GB went to %s, want fit", got)
	}
	// 7 GB: "mid" (8 GB) is the closest free amount above.
	if got := place(7 << 10); got != "mid" {
		t.Errorf("7 GB went to %s, want mid", got)
	}
	// 9 GB: ring 10; best fit would be "big" (15 GB, ring 16) but that is beyond K+N, so
	// step 3 takes the node with the most free room, "huge".
	if got := place(9 << 10); got != "huge" {
		t.Errorf("9 GB went to %s, want huge (most free beyond the search limit)", got)
	}
	// 12 GB: "huge" now has 11 GB free; only "big" fits.
	if got := place(12 << 10); got != "big" {
		t.Errorf("12 GB went to %s, want big", got)
	}
}

func TestAMAsksPreferStaticNodes(t *testing.T) {
	e := newEngine(t, StrategyRings, queues(t, "root.queues", "a", "root.a.capacity", "100"))
	must(t, e.AddNode(NodeSpec{ID: "borrowed", Capacity: res(4096, 4)}))
	must(t, e.AddNode(NodeSpec{ID: "stable", Capacity: res(8192, 8), Static: true}))
	must(t, e.AddApp(AppSpec{ID: "x", Queue: "a"}))
	must(t, e.UpdateAsks("x", []Ask{{Priority: 0, ResourceName: "*", Capability: res(1024, 1), Count: 1, AM: true}}))
	allocs := e.Schedule(0).Allocations
	if len(allocs) != 1 || allocs[0].Node != "stable" || !allocs[0].AM {
		t.Fatalf("AM placed %+v, want the static node", allocs)
	}
}

func TestAsksAreAbsoluteAndErrorsAreTyped(t *testing.T) {
	e := newEngine(t, StrategyRings, queues(t, "root.queues", "a,p", "root.a.capacity", "50", "root.p.capacity", "50",
		"root.p.queues", "c", "root.p.c.capacity", "100", "root.a.state", "STOPPED"))
	unitNodes(t, e, 4)
	if err := e.AddApp(AppSpec{ID: "x", Queue: "nope"}); err == nil {
		t.Error("unknown queue accepted")
	}
	if err := e.AddApp(AppSpec{ID: "x", Queue: "p"}); err == nil {
		t.Error("parent queue accepted")
	}
	if err := e.AddApp(AppSpec{ID: "x", Queue: "a"}); err == nil {
		t.Error("stopped queue accepted")
	}
	must(t, e.AddApp(AppSpec{ID: "x", Queue: "root.p.c"}))
	ask := Ask{Priority: 1, ResourceName: "*", Capability: res(1024, 1), Count: 3}
	must(t, e.UpdateAsks("x", []Ask{ask}))
	ask.Count = 1 // replaces 3, does not add
	must(t, e.UpdateAsks("x", []Ask{ask}))
	if n := len(e.Schedule(0).Allocations); n != 1 {
		t.Fatalf("placed %d, want 1 after the absolute update", n)
	}
	if err := e.UpdateAsks("x", []Ask{{Priority: 1, ResourceName: "*", Count: -1}}); err == nil {
		t.Error("negative count accepted")
	}
	// CancelAsks drops what is outstanding and keeps what runs.
	ask.Count = 5
	must(t, e.UpdateAsks("x", []Ask{ask}))
	must(t, e.CancelAsks("x"))
	if n := len(e.Schedule(0).Allocations); n != 0 {
		t.Fatalf("placed %d after CancelAsks", n)
	}
	if st := e.Stats(); st.Allocated[Memory] != 1024 {
		t.Fatalf("running container lost: %+v", st.Allocated)
	}
}

// scheduling.md §2: a small label's nodes are all blacklisted; the whole-cluster share
// (2 of 12) would never pass YARN's threshold, but the per-label share (2 of 2) does, so the
// label's nodes leave the blacklist and the application runs.
func TestPerLabelBlacklistReset(t *testing.T) {
	e := newEngine(t, StrategyRings, queues(t, "root.queues", "a", "root.a.capacity", "100",
		"root.accessible-node-labels", "*", "root.accessible-node-labels.gpu.capacity", "100",
		"root.a.accessible-node-labels", "gpu", "root.a.accessible-node-labels.gpu.capacity", "100"))
	unitNodes(t, e, 10)
	must(t, e.AddNode(NodeSpec{ID: "gpu1", Partition: "gpu", Capacity: res(1024, 1)}))
	must(t, e.AddNode(NodeSpec{ID: "gpu2", Partition: "gpu", Capacity: res(1024, 1)}))
	must(t, e.AddApp(AppSpec{ID: "x", Queue: "a", Label: "gpu"}))
	must(t, e.UpdateBlacklist("x", []string{"gpu1"}, nil))
	must(t, e.UpdateAsks("x", ask1(1)))
	// One of two gpu nodes blacklisted (50% < 80%): the other one is used.
	if got := e.Schedule(0).Allocations; len(got) != 1 || got[0].Node != "gpu2" {
		t.Fatalf("placed %+v, want gpu2", got)
	}
	must(t, e.Release(1))
	must(t, e.UpdateBlacklist("x", []string{"gpu2"}, nil))
	must(t, e.UpdateAsks("x", ask1(1)))
	got := e.Schedule(0).Allocations
	if len(got) != 1 || (got[0].Node != "gpu1" && got[0].Node != "gpu2") {
		t.Fatalf("with the whole label blacklisted the reset did not happen: %+v", got)
	}
}

// capacity = [memory=..,vcores=..]: the quota is that resource's share of the cluster.
func TestAbsoluteCapacity(t *testing.T) {
	e := newEngine(t, StrategyRings, queues(t, "root.queues", "a,b",
		"root.a.capacity", "[memory=4096,vcores=4]", "root.b.capacity", "[memory=6144,vcores=6]"))
	unitNodes(t, e, 10)
	must(t, e.AddApp(AppSpec{ID: "app-a", Queue: "a"}))
	must(t, e.AddApp(AppSpec{ID: "app-b", Queue: "b"}))
	must(t, e.UpdateAsks("app-a", ask1(100)))
	must(t, e.UpdateAsks("app-b", ask1(100)))
	if got := countByQueue(e, e.Schedule(0).Allocations); got["a"] != 4 || got["b"] != 6 {
		t.Fatalf("shares %v, want a=4 b=6", got)
	}
	if _, err := capacityParse("root.queues", "a,b", "root.a.capacity", "[memory=1]", "root.b.capacity", "50"); err == nil ||
		!strings.Contains(err.Error(), "mix percentage and absolute") {
		t.Fatalf("mixed capacities: %v", err)
	}
	if _, err := capacityParse("root.queues", "a", "root.a.capacity", "[memory=lots]"); err == nil {
		t.Fatal("bad absolute capacity accepted")
	}
}

func capacityParse(kv ...string) (*capacity.Tree, error) {
	c := conf.Empty()
	for i := 0; i+1 < len(kv); i += 2 {
		c.Set(capacity.Prefix+kv[i], kv[i+1])
	}
	return capacity.Parse(c)
}

func TestQueueCaps(t *testing.T) {
	// maximum-capacity: a may borrow idle room only up to 60 %.
	e := newEngine(t, StrategyRings, queues(t, "root.queues", "a,b", "root.a.capacity", "40", "root.a.maximum-capacity", "60", "root.a.user-limit-factor", "3", "root.b.capacity", "60"))
	unitNodes(t, e, 10)
	must(t, e.AddApp(AppSpec{ID: "x", Queue: "a"}))
	must(t, e.UpdateAsks("x", ask1(100)))
	if n := len(e.Schedule(0).Allocations); n != 6 {
		t.Fatalf("a took %d nodes, want 6 (maximum-capacity 60%%)", n)
	}

	// user-limit-factor 1, the default: one user gets the queue's quota and, as in Java,
	// the container that crosses it.
	e = newEngine(t, StrategyRings, queues(t, "root.queues", "a,b", "root.a.capacity", "50", "root.b.capacity", "50"))
	unitNodes(t, e, 10)
	must(t, e.AddApp(AppSpec{ID: "alice-1", Queue: "a", User: "alice"}))
	must(t, e.AddApp(AppSpec{ID: "bob-1", Queue: "a", User: "bob"}))
	must(t, e.UpdateAsks("alice-1", ask1(100)))
	e.Schedule(0)
	if got := e.groups["a"].userUsed["alice"][VCores]; got != 6 {
		t.Fatalf("alice holds %d nodes, want 6 (user-limit-factor 1 × quota, and one)", got)
	}
	must(t, e.UpdateAsks("bob-1", ask1(100)))
	e.Schedule(0)
	if got := e.groups["a"].userUsed["bob"][VCores]; got != 4 {
		t.Fatalf("bob holds %d, want the other 4", got)
	}

	// maximum-am-resource-percent 0.1 of a 10-node queue: one AM, not two.
	e = newEngine(t, StrategyRings, queues(t, "root.queues", "a", "root.a.capacity", "100"))
	unitNodes(t, e, 10)
	for _, id := range []string{"app1", "app2"} {
		must(t, e.AddApp(AppSpec{ID: AppID(id), Queue: "a"}))
		must(t, e.UpdateAsks(AppID(id), []Ask{{Priority: 0, ResourceName: "*", Capability: res(1024, 1), Count: 1, AM: true}}))
	}
	if got := e.Schedule(0).Allocations; len(got) != 1 || got[0].App != "app1" {
		t.Fatalf("AMs started %+v, want only app1's", got)
	}
}

// The queue caps are measured as yarn.scheduler.capacity.resource-calculator says: by
// memory alone (DefaultResourceCalculator, Apache's default), three 256 MB AMs fit in 10 %
// of 8 GB although their vcores are 3/8 of the cluster's; by the dominant share
// (DominantResourceCalculator) only the first AM runs.
func TestQueueCapsFollowResourceCalculator(t *testing.T) {
	for _, tc := range []struct {
		byMemory bool
		want     int
	}{{true, 3}, {false, 1}} {
		cfg := DefaultConfig()
		cfg.LimitsByMemory = tc.byMemory
		cfg.Now = func() time.Time { return t0 }
		e, err := New(cfg, queues(t, "root.queues", "a", "root.a.capacity", "100"))
		must(t, err)
		for i := 0; i < 2; i++ {
			must(t, e.AddNode(NodeSpec{ID: fmt.Sprintf("n%02d:8041", i), Capacity: res(4096, 4)}))
		}
		for i := 1; i <= 5; i++ {
			id := fmt.Sprintf("app%d", i)
			must(t, e.AddApp(AppSpec{ID: AppID(id), Queue: "a"}))
			must(t, e.UpdateAsks(AppID(id), []Ask{{Priority: 0, ResourceName: "*", Capability: res(256, 1), Count: 1, AM: true}}))
		}
		if got := len(e.Schedule(0).Allocations); got != tc.want {
			t.Errorf("limits by memory %v: %d AMs started, want %d", tc.byMemory, got, tc.want)
		}
	}
}

// An ask sent before the AM saw containers allocated for it still counts them (YARN asks
// are the AM's outstanding totals): ask 1, one container placed, then ask 2 before the
// answer carried it — one more, not two. Once delivered, a new ask counts in full.
func TestAsksCountUndeliveredContainers(t *testing.T) {
	e := newEngine(t, StrategyRings, queues(t, "root.queues", "a", "root.a.capacity", "100"))
	unitNodes(t, e, 10)
	must(t, e.AddApp(AppSpec{ID: "ds", Queue: "a"}))
	must(t, e.UpdateAsks("ds", ask1(1)))
	first := e.Schedule(0).Allocations
	must(t, e.UpdateAsks("ds", ask1(2)))
	second := e.Schedule(0).Allocations
	if len(first) != 1 || len(second) != 1 {
		t.Fatalf("allocated %d then %d, want 1 then 1 (the ask of 2 included the undelivered one)", len(first), len(second))
	}
	deliver(e, Plan{Allocations: append(first, second...)})
	must(t, e.UpdateAsks("ds", ask1(2)))
	if got := len(deliver(e, e.Schedule(0)).Allocations); got != 2 {
		t.Fatalf("after delivery an ask of 2 got %d", got)
	}
	// A released undelivered container no longer counts.
	must(t, e.UpdateAsks("ds", ask1(1)))
	third := e.Schedule(0).Allocations
	must(t, e.Release(third[0].Container))
	must(t, e.UpdateAsks("ds", ask1(1)))
	if got := len(e.Schedule(0).Allocations); got != 1 {
		t.Fatalf("after its undelivered container was released an ask of 1 got %d", got)
	}
}

// Rings with a base and unequal widths (seed 002): ring numbers, and a choice that the
// wide second ring keeps within the search limit where equal rings would not.
func TestRingsBaseAndUnequalWidths(t *testing.T) {
	based := RingConfig{Base: 2048, Width: 1024}
	uneven := RingConfig{Width: 1024, Bounds: []int64{4096, 16384}}
	for _, c := range []struct {
		rc   RingConfig
		x    int64
		want int64
	}{{based, 1000, 0}, {based, 2048, 1}, {based, 3071, 1}, {based, 3072, 2},
		{uneven, 0, 1}, {uneven, 4095, 1}, {uneven, 4096, 2}, {uneven, 16383, 2}, {uneven, 16384, 3}, {uneven, 17408, 4}} {
		if got := c.rc.ring(c.x); got != c.want {
			t.Errorf("%+v: ring(%d) = %d, want %d", c.rc, c.x, got, c.want)
		}
	}
	cfg := DefaultConfig()
	cfg.Strategy = StrategyRings
	cfg.SearchLimit = 0
	cfg.Rings[Memory] = uneven
	e, err := New(cfg, queues(t, "root.queues", "a", "root.a.capacity", "100"))
	must(t, err)
	for _, n := range []struct {
		id  string
		mem int64
	}{{"big", 15 << 10}, {"huge", 20 << 10}} {
		must(t, e.AddNode(NodeSpec{ID: n.id, Capacity: res(n.mem, 64)}))
	}
	must(t, e.AddApp(AppSpec{ID: "x", Queue: "a"}))
	must(t, e.UpdateAsks("x", []Ask{{Priority: 1, ResourceName: "*", Capability: res(9<<10, 1), Count: 1}}))
	// 9 GB and "big" (15 GB) share ring 2 [4 GB, 16 GB): best fit in ring K.
	if allocs := e.Schedule(1).Allocations; len(allocs) != 1 || allocs[0].Node != "big" {
		t.Fatalf("9 GB placed %+v, want big (same ring)", allocs)
	}
}

// Running-application bounds (the Fair Scheduler's maxRunningApps): over the bound an
// application waits for its first container, and those behind it are served.
func TestMaxRunningApps(t *testing.T) {
	e := newEngine(t, StrategyRings, queues(t, "root.queues", "a,b", "root.a.capacity", "50", "root.b.capacity", "50",
		"root.a.bobbin.max-running-apps", "1", "root.a.user-limit-factor", "2", "root.b.user-limit-factor", "2",
		"bobbin.user.bob.max-running-apps", "1"))
	unitNodes(t, e, 10)
	for _, s := range []AppSpec{{ID: "a1", Queue: "a", User: "alice"}, {ID: "a2", Queue: "a", User: "alice"},
		{ID: "b1", Queue: "b", User: "bob"}, {ID: "b2", Queue: "b", User: "bob"}, {ID: "b3", Queue: "b", User: "carol"}} {
		must(t, e.AddApp(s))
		must(t, e.UpdateAsks(s.ID, ask1(1)))
	}
	placed := func() map[AppID]bool {
		out := map[AppID]bool{}
		for _, al := range e.Schedule(0).Allocations {
			out[al.App] = true
		}
		return out
	}
	if got := placed(); !got["a1"] || got["a2"] || !got["b1"] || got["b2"] || !got["b3"] {
		t.Fatalf("placed %v, want a1, b1 and b3 (a's bound 1, bob's bound 1)", got)
	}
	must(t, e.RemoveApp("a1"))
	must(t, e.RemoveApp("b1"))
	if got := placed(); !got["a2"] || !got["b2"] {
		t.Fatalf("placed %v after a1 and b1 left, want a2 and b2", got)
	}
}
