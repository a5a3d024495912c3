package scheduler

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/conf/capacity"
)

func confTree(t *testing.T, kv ...string) (*conf.Configuration, *capacity.Tree) {
	c := conf.Empty()
	c.Set(capacity.Prefix+"root.queues", "a,b")
	c.Set(capacity.Prefix+"root.a.capacity", "50")
	c.Set(capacity.Prefix+"root.b.capacity", "50")
	for i := 0; i+1 < len(kv); i += 2 {
		c.Set(kv[i], kv[i+1])
	}
	tr, err := capacity.Parse(c)
	must(t, err)
	return c, tr
}

func TestSettingsFromConf(t *testing.T) {
	c, tr := confTree(t,
		KeyNodeSelection, "balance",
		KeyStarvedThreshold, "0.8",
		KeyCoolDown, "30s",
		KeyBalanceWeights, "0.7, 0.3",
		capacity.Prefix+"root.a.bobbin.policy", "priority",
		capacity.Prefix+"root.b.bobbin.preemption-policy", "most-recent-first",
		capacity.Prefix+"root.b.bobbin.capacity-schedule", "07:30-09:00=20, 22:00-02:00=70",
	)
	cfg, groups, err := FromConf(c, tr, Types{})
	must(t, err)
	if !cfg.LimitsByMemory {
		t.Fatal("without resource-calculator the caps are not measured by memory (Apache's DefaultResourceCalculator)")
	}
	c.Set(KeyResourceCalculator, DominantResourceCalculator)
	if dom, _, err := FromConf(c, tr, Types{}); err != nil || dom.LimitsByMemory {
		t.Fatalf("DominantResourceCalculator: limits by memory %v, %v", dom.LimitsByMemory, err)
	}
	if cfg.Strategy != StrategyBalance || cfg.Preemption.BelowMilli != 800 || cfg.Preemption.CoolDown != 30*time.Second || cfg.Balance.InitialWeights[0] != 0.7 {
		t.Fatalf("cfg %+v", cfg)
	}
	if groups["root.a"].Policy != PolicyPriority || groups["root.b"].PreemptionPolicy != PreemptMostRecentFirst {
		t.Fatalf("groups %+v", groups)
	}
	w := groups["root.b"].Schedule
	if len(w) != 2 || w[0] != (CapacityWindow{450, 540, 20}) || !w[1].contains(60) || w[1].contains(180) {
		t.Fatalf("schedule %+v", w)
	}
}

func TestSettingsErrorsNameKeyAndValue(t *testing.T) {
	c, tr := confTree(t,
		KeyNodeSelection, "random",
		KeyOverThreshold, "-1",
		KeyHold, "soon",
		KeyBalanceWeights, "0.5,0.6",
		capacity.Prefix+"root.a.bobbin.policy", "lottery",
		capacity.Prefix+"root.b.bobbin.capacity-schedule", "25:00-26:00=10",
		KeyResourceCalculator, "org.example.FancyCalculator",
	)
	_, _, err := FromConf(c, tr, Types{})
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{
		`bobbin.scheduler.node-selection = "random": must be auto, rings, balance or first-fit`,
		`bobbin.scheduler.preemption.over-threshold = "-1": must be between 1 and 100`,
		`bobbin.scheduler.preemption.hold = "soon"`,
		`bobbin.scheduler.balance.initial-weights = "0.5,0.6": weights must sum to 1`,
		`yarn.scheduler.capacity.root.a.bobbin.policy = "lottery": unknown policy`,
		`yarn.scheduler.capacity.root.b.bobbin.capacity-schedule = "25:00-26:00=10": bad time window`,
		`yarn.scheduler.capacity.resource-calculator = "org.example.FancyCalculator": must be org.apache.hadoop.yarn.util.resource.DefaultResourceCalculator or org.apache.hadoop.yarn.util.resource.DominantResourceCalculator`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in\n%v", want, err)
		}
	}
	for _, bad := range []string{"07:00=10", "07:00-08:00", "07:00-08:00=120", "07:00-09:00=10,08:00-10:00=20", "7-8=1"} {
		if _, err := ParseCapacitySchedule(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// A time-of-day quota moves shares at its boundaries, and preemption rebalances after.
func TestTimeOfDayQuota(t *testing.T) {
	c, tr := confTree(t, capacity.Prefix+"root.a.bobbin.capacity-schedule", "07:30-09:00=90", "yarn.resourcemanager.scheduler.monitor.enable", "true")
	cfg, groups, err := FromConf(c, tr, Types{})
	must(t, err)
	clk := &clock{time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)}
	cfg.Groups, cfg.Now, cfg.Location = groups, clk.now, time.UTC
	e, err := New(cfg, tr)
	must(t, err)
	unitNodes(t, e, 14)
	must(t, e.AddApp(AppSpec{ID: "a1", Queue: "a"}))
	must(t, e.AddApp(AppSpec{ID: "b1", Queue: "b"}))
	must(t, e.UpdateAsks("a1", ask1(100)))
	must(t, e.UpdateAsks("b1", ask1(100)))
	got := countByQueue(e, e.Schedule(0).Allocations)
	if got["a"] != 9 || got["b"] != 5 {
		t.Fatalf("08:00 shares %v, want a=9 b=5 (90:50)", got)
	}
	// At 09:00 a's quota falls back to 50%: a (9/14) is above quota×B and b (5/14) below
	// quota×A, so a loses a container.
	clk.t = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	r := e.Schedule(0)
	if len(r.Preemptions) != 1 || r.Preemptions[0].App != "a1" {
		t.Fatalf("09:00 decisions %+v, want one preemption from a", r)
	}
}

func TestInGroupPolicies(t *testing.T) {
	for _, tc := range []struct {
		policy, want string
	}{{PolicyFIFO, "first"}, {PolicyPriority, "urgent"}, {PolicyFair, "small"}, {PolicyDRF, "small"}} {
		cfg := DefaultConfig()
		cfg.Groups = map[string]GroupSettings{"root.a": {Policy: tc.policy}}
		e, err := New(cfg, queues(t, "root.queues", "a", "root.a.capacity", "100"))
		must(t, err)
		unitNodes(t, e, 3)
		// "first" already runs two containers; "small" runs none; "urgent" has priority 9.
		must(t, e.AddApp(AppSpec{ID: "first", Queue: "a"}))
		must(t, e.UpdateAsks("first", ask1(2)))
		deliver(e, e.Schedule(0))
		must(t, e.AddApp(AppSpec{ID: "urgent", Queue: "a", Priority: 9}))
		must(t, e.AddApp(AppSpec{ID: "small", Queue: "a"}))
		// "urgent" holds one container too, so fair/DRF prefer "small".
		must(t, e.UpdateAsks("urgent", ask1(1)))
		deliver(e, e.Schedule(0))
		must(t, e.Release(1))
		must(t, e.UpdateAsks("first", ask1(1)))
		must(t, e.UpdateAsks("urgent", ask1(1)))
		must(t, e.UpdateAsks("small", ask1(1)))
		got := deliver(e, e.Schedule(1)).Allocations
		if len(got) != 1 || string(got[0].App) != tc.want {
			t.Errorf("%s served %+v, want %s", tc.policy, got, tc.want)
		}
	}
}

func TestEveryKeyIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/configuration.md")
	must(t, err)
	for _, k := range []string{KeyNodeSelection, KeyUsage, KeyPreemptionEnabled, KeyStarvedThreshold, KeyOverThreshold,
		KeyPreemptionGrace, KeyCoolDown, KeyHold, KeyBalanceThreshold, KeyBalanceWeights, KeyBalanceGateWindow,
		KeyBalanceMaxSkips, KeyBalanceCandidates, KeyRingMemoryWidth, KeyRingVCoresWidth, KeyRingSearchLimit,
		KeySearchVisits, KeyBlacklistThreshold, KeyTimeZone, KeyResourceCalculator, "`policy`", "`backfill`", "`preemption-policy`", "`capacity-schedule`"} {
		if !strings.Contains(string(doc), k) {
			t.Errorf("docs/configuration.md does not document %s", k)
		}
	}
}

// Every resource type's rings are configurable, GPUs included, and the balance weights
// are checked against the cluster's types.
func TestRingSettingsPerType(t *testing.T) {
	gpu := Types{Names: []string{"memory-mb", "vcores", "yarn.io/gpu"}}
	c, tr := confTree(t,
		RingKey("memory-mb", "base"), "512",
		RingKey("memory-mb", "bounds"), "4096, 16384, 65536",
		RingKey("yarn.io/gpu", "width"), "2",
		KeyBalanceWeights, "0.25,0.25,0.5",
	)
	cfg, _, err := FromConf(c, tr, gpu)
	must(t, err)
	if m := cfg.Rings[Memory]; m.Base != 512 || m.Width != 1024 || len(m.Bounds) != 3 || m.Bounds[2] != 65536 {
		t.Fatalf("memory rings %+v", m)
	}
	if g := cfg.Rings[2]; g.Width != 2 || g.Base != 0 {
		t.Fatalf("gpu rings %+v", g)
	}
	if v := cfg.Rings[VCores]; v.Width != 1 {
		t.Fatalf("vcores rings %+v", v)
	}
	if w := cfg.Balance.InitialWeights; len(w) != 3 || w[2] != 0.5 {
		t.Fatalf("weights %v", w)
	}
	c, tr = confTree(t, RingKey("yarn.io/gpu", "bounds"), "4,2")
	_, _, err = FromConf(c, tr, gpu)
	if err == nil || !strings.Contains(err.Error(), "bobbin.scheduler.rings.yarn.io/gpu.bounds") || !strings.Contains(err.Error(), "4,2") {
		t.Fatalf("descending bounds: %v", err)
	}
}

// The Capacity Scheduler's ordering-policy sets a leaf's policy unless Bobbin's own key
// does: fifo (by application priority, then submission) and fair.
func TestOrderingPolicyIsThePolicyDefault(t *testing.T) {
	c, tr := confTree(t,
		capacity.Prefix+"root.a.ordering-policy", "fair",
		capacity.Prefix+"root.b.ordering-policy", "fifo",
	)
	_, groups, err := FromConf(c, tr, Types{})
	must(t, err)
	if groups["root.a"].Policy != PolicyFair || groups["root.b"].Policy != PolicyPriority {
		t.Fatalf("policies a %s, b %s", groups["root.a"].Policy, groups["root.b"].Policy)
	}
	c, tr = confTree(t, capacity.Prefix+"root.a.ordering-policy", "fair", capacity.Prefix+"root.a.bobbin.policy", "drf")
	_, groups, err = FromConf(c, tr, Types{})
	must(t, err)
	if groups["root.a"].Policy != PolicyDRF || groups["root.b"].Policy != PolicyFIFO {
		t.Fatalf("with bobbin.policy: a %s, b %s", groups["root.a"].Policy, groups["root.b"].Policy)
	}
}

// TestPreemptionFollowsTheSchedulingMonitor: like the Java RM, Bobbin preempts only when
// the scheduling monitor runs ProportionalCapacityPreemptionPolicy (its default policy),
// unless bobbin.scheduler.preemption.enabled says otherwise.
func TestPreemptionFollowsTheSchedulingMonitor(t *testing.T) {
	const policy = "org.apache.hadoop.yarn.server.resourcemanager.monitor.capacity.ProportionalCapacityPreemptionPolicy"
	for _, tc := range []struct {
		kv   []string
		want bool
	}{
		{nil, false},
		{[]string{"yarn.resourcemanager.scheduler.monitor.enable", "true"}, true},
		{[]string{"yarn.resourcemanager.scheduler.monitor.enable", "true", "yarn.resourcemanager.scheduler.monitor.policies", policy}, true},
		{[]string{"yarn.resourcemanager.scheduler.monitor.enable", "true", "yarn.resourcemanager.scheduler.monitor.policies", "org.example.OtherPolicy"}, false},
		{[]string{"yarn.resourcemanager.scheduler.monitor.enable", "false", "yarn.resourcemanager.scheduler.monitor.policies", policy}, false},
		{[]string{KeyPreemptionEnabled, "true"}, true},
		{[]string{"yarn.resourcemanager.scheduler.monitor.enable", "true", KeyPreemptionEnabled, "false"}, false},
	} {
		c, tr := confTree(t, tc.kv...)
		cfg, _, err := FromConf(c, tr, Types{})
		must(t, err)
		if cfg.Preemption.Enabled != tc.want {
			t.Errorf("%v: preemption %v, want %v", tc.kv, cfg.Preemption.Enabled, tc.want)
		}
	}
}
