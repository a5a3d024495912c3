package scheduler

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/conf/capacity"
)

// In-group policies (yarn.scheduler.capacity.<queue-path>.bobbin.policy).
const (
	PolicyFIFO     = "fifo"
	PolicyPriority = "priority"
	PolicyFair     = "fair"
	PolicyDRF      = "drf"
	PolicyBackfill = "backfill"
)

// Backfilling variants (yarn.scheduler.capacity.<queue-path>.bobbin.backfill).
const (
	BackfillEASY         = "easy"
	BackfillConservative = "conservative"
)

// GroupSettings are a leaf queue's Bobbin additions.
type GroupSettings struct {
	Policy           string
	Backfill         string
	PreemptionPolicy string
	// Schedule replaces the queue's capacity inside daily windows (time-of-day quotas).
	Schedule []CapacityWindow
}

// CapacityWindow is a daily window [Start, End) in minutes after midnight (End may be
// past midnight, wrapping) with the capacity, in percent of the parent, that applies in it.
type CapacityWindow struct {
	Start, End int
	Capacity   float64
}

// contains reports whether minute m of the day is inside the window.
func (w CapacityWindow) contains(m int) bool {
	if w.Start <= w.End {
		return m >= w.Start && m < w.End
	}
	return m >= w.Start || m < w.End
}

// Scheduler keys, all Bobbin additions (documented in docs/configuration.md).
const (
	KeyNodeSelection     = "bobbin.scheduler.node-selection"
	KeyUsage             = "bobbin.scheduler.usage"
	KeyPreemptionEnabled = "bobbin.scheduler.preemption.enabled"
	KeyStarvedThreshold  = "bobbin.scheduler.preemption.starved-threshold"
	KeyOverThreshold     = "bobbin.scheduler.preemption.over-threshold"
	KeyPreemptionGrace   = "bobbin.scheduler.preemption.grace"
	KeyCoolDown          = "bobbin.scheduler.preemption.cool-down"
	KeyHold              = "bobbin.scheduler.preemption.hold"
	KeyBalanceThreshold  = "bobbin.scheduler.balance.utilization-threshold"
	KeyBalanceWeights    = "bobbin.scheduler.balance.initial-weights"
	KeyBalanceGateWindow = "bobbin.scheduler.balance.gate-window"
	KeyBalanceMaxSkips   = "bobbin.scheduler.balance.max-skips"
	KeyBalanceCandidates = "bobbin.scheduler.balance.candidates"
	KeyAutoSkew          = "bobbin.scheduler.auto.skew"
	// Every resource type's rings have RingKey(type, "base"|"width"|"bounds") keys;
	// these two are the common ones.
	KeyRingMemoryWidth    = "bobbin.scheduler.rings.memory-mb.width"
	KeyRingVCoresWidth    = "bobbin.scheduler.rings.vcores.width"
	KeyRingSearchLimit    = "bobbin.scheduler.rings.search-limit"
	KeySearchVisits       = "bobbin.scheduler.search-visits"
	KeyBlacklistThreshold = "bobbin.scheduler.blacklist.label-threshold"
	KeyTimeZone           = "bobbin.scheduler.time-zone"
	// KeyNodeLocalityDelay is the Capacity Scheduler's own key, read as YARN reads it.
	KeyNodeLocalityDelay = "yarn.scheduler.capacity.node-locality-delay"
	// KeyRackLocalityAdditionalDelay is the 3.x Capacity Scheduler's off-switch delay.
	KeyRackLocalityAdditionalDelay = "yarn.scheduler.capacity.rack-locality-additional-delay"
	// KeyResourceCalculator is the Capacity Scheduler's measure of its queue caps.
	KeyResourceCalculator = "yarn.scheduler.capacity.resource-calculator"
)

// The two resource calculators the Capacity Scheduler offers.
const (
	DefaultResourceCalculator  = "org.apache.hadoop.yarn.util.resource.DefaultResourceCalculator"
	DominantResourceCalculator = "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator"
)

// RingKey is the key of one setting (base, width, bounds) of a resource type's rings,
// e.g. bobbin.scheduler.rings.yarn.io/gpu.width.
func RingKey(resourceType, setting string) string {
	return "bobbin.scheduler.rings." + resourceType + "." + setting
}

// parseRingBounds reads unequal ring widths: the rings' upper bounds, ascending, each
// above base.
func parseRingBounds(v string, base int64) ([]int64, error) {
	var out []int64
	last := base
	for _, part := range strings.Split(v, ",") {
		b, err := strconv.ParseInt(strings.TrimSpace(part), 10, 64)
		if err != nil || b <= last {
			return nil, fmt.Errorf("must be ascending whole amounts above the base (%d), comma-separated", base)
		}
		out = append(out, b)
		last = b
	}
	return out, nil
}

// queueKey is a queue's Bobbin key.
func queueKey(q *capacity.Queue, name string) string {
	return capacity.Prefix + q.Path + ".bobbin." + name
}

// FromConf reads the engine's settings and every leaf queue's Bobbin keys for a cluster
// of the given resource types (DefaultTypes when empty), reporting every bad value with
// its file, key and value.
//
// Preemption is on as the Java RM's is, unless bobbin.scheduler.preemption.enabled says
// otherwise: only with yarn.resourcemanager.scheduler.monitor.enable and
// ProportionalCapacityPreemptionPolicy among the monitor's policies (the default list);
// Bobbin's hysteresis then does the preempting. The Fair Scheduler's own switch
// (yarn.scheduler.fair.preemption) arrives as the Bobbin key (fairscheduler.CapacityKeys).
func FromConf(c *conf.Configuration, tree *capacity.Tree, types Types) (Config, map[string]GroupSettings, error) {
	cfg := DefaultConfig()
	if types.Len() > 0 {
		cfg.Types = types
	}
	var errs []error
	bad := func(key, reason string, args ...any) {
		raw, _ := c.Raw(key)
		errs = append(errs, &conf.ValueError{Source: c.Source(key), Key: key, Value: raw, Reason: fmt.Sprintf(reason, args...)})
	}
	str := func(key, def string) string {
		v, ok, err := c.Lookup(key)
		if err != nil {
			errs = append(errs, err)
			return def
		}
		if !ok || strings.TrimSpace(v) == "" {
			return def
		}
		return strings.TrimSpace(v)
	}
	num := func(key string, def, min, max float64) float64 {
		v := str(key, "")
		if v == "" {
			return def
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			bad(key, "not a number")
			return def
		}
		if f < min || f > max {
			bad(key, "must be between %g and %g", min, max)
			return def
		}
		return f
	}
	dur := func(key string, def time.Duration) time.Duration {
		if _, ok := c.Raw(key); !ok {
			return def
		}
		d, err := c.Duration(key, time.Millisecond)
		if err != nil {
			errs = append(errs, err)
			return def
		}
		if d < 0 {
			bad(key, "must not be negative")
			return def
		}
		return d
	}
	boolean := func(key string, def bool) bool {
		if _, ok := c.Raw(key); !ok {
			return def
		}
		b, err := c.Bool(key)
		if err != nil {
			errs = append(errs, err)
			return def
		}
		return b
	}

	switch s := str(KeyNodeSelection, cfg.Strategy); s {
	case StrategyRings, StrategyBalance, StrategyFirstFit, StrategyAuto:
		cfg.Strategy = s
	default:
		bad(KeyNodeSelection, "must be auto, rings, balance or first-fit")
	}
	switch s := str(KeyUsage, "dominant"); s {
	case "dominant":
	case "cpu":
		cfg.CPUOnly = true
	default:
		bad(KeyUsage, "must be dominant or cpu")
	}
	switch s := str(KeyResourceCalculator, DefaultResourceCalculator); s {
	case DefaultResourceCalculator:
		cfg.LimitsByMemory = true
		// The Capacity Scheduler's default calculator fits by memory alone; the Fair
		// Scheduler normalizes and fits by every type whatever this key says.
		cfg.FitByMemory = !capacity.UsesFairScheduler(c)
	case DominantResourceCalculator:
		cfg.LimitsByMemory = false
	default:
		bad(KeyResourceCalculator, "must be %s or %s", DefaultResourceCalculator, DominantResourceCalculator)
	}
	pc := &cfg.Preemption
	pc.Enabled = boolean(KeyPreemptionEnabled, javaPreemption(str))
	pc.BelowMilli = uint64(num(KeyStarvedThreshold, 0.9, 0.001, 1)*1000 + 0.5)
	pc.AboveMilli = uint64(num(KeyOverThreshold, 1.1, 1, 100)*1000 + 0.5)
	pc.Grace = dur(KeyPreemptionGrace, pc.Grace)
	pc.CoolDown = dur(KeyCoolDown, pc.CoolDown)
	pc.Hold = dur(KeyHold, pc.Hold)
	bc := &cfg.Balance
	bc.Threshold = num(KeyBalanceThreshold, bc.Threshold, 0, 1)
	bc.GateWindow = int(num(KeyBalanceGateWindow, float64(bc.GateWindow), 0, 1<<20))
	bc.MaxSkips = int(num(KeyBalanceMaxSkips, float64(bc.MaxSkips), 0, 1<<20))
	bc.Candidates = int(num(KeyBalanceCandidates, float64(bc.Candidates), 1, 1<<20))
	bc.AutoSkew = num(KeyAutoSkew, bc.AutoSkew, 1, 1e9)
	if ws := str(KeyBalanceWeights, ""); ws != "" {
		var sum float64
		var w []float64
		for _, part := range strings.Split(ws, ",") {
			f, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
			if err != nil || f < 0 {
				bad(KeyBalanceWeights, "weights must be non-negative numbers")
				w = nil
				break
			}
			w = append(w, f)
			sum += f
		}
		switch {
		case w == nil:
		case len(w) != cfg.Types.Len():
			bad(KeyBalanceWeights, "needs %d weights, one per resource type (%s)", cfg.Types.Len(), strings.Join(cfg.Types.Names, ", "))
		case sum < 0.999 || sum > 1.001:
			bad(KeyBalanceWeights, "weights must sum to 1")
		default:
			bc.InitialWeights = w
		}
	}
	for i, name := range cfg.Types.Names {
		if i >= MaxResourceTypes {
			break
		}
		rc := &cfg.Rings[i]
		rc.Base = int64(num(RingKey(name, "base"), float64(rc.Base), 0, 1<<50))
		rc.Width = int64(num(RingKey(name, "width"), float64(rc.Width), 1, 1<<50))
		if v := str(RingKey(name, "bounds"), ""); v != "" {
			bounds, err := parseRingBounds(v, rc.Base)
			if err != nil {
				bad(RingKey(name, "bounds"), "%v", err)
			}
			rc.Bounds = bounds
		}
	}
	cfg.SearchLimit = int(num(KeyRingSearchLimit, float64(cfg.SearchLimit), 0, 1<<20))
	cfg.Visits = int(num(KeySearchVisits, float64(cfg.Visits), 1, 1<<24))
	cfg.BlacklistThreshold = num(KeyBlacklistThreshold, cfg.BlacklistThreshold, 0, 1)
	cfg.NodeLocalityDelay = int(num(KeyNodeLocalityDelay, float64(cfg.NodeLocalityDelay), -1, 1<<20))
	if cfg.NodeLocalityDelay < 0 {
		cfg.NodeLocalityDelay = 0 // YARN's -1 turns delay scheduling off
	}
	cfg.RackLocalityAdditionalDelay = int(num(KeyRackLocalityAdditionalDelay, float64(cfg.RackLocalityAdditionalDelay), -1, 1<<20))
	if tz := str(KeyTimeZone, ""); tz != "" {
		loc, err := time.LoadLocation(tz)
		if err != nil {
			bad(KeyTimeZone, "unknown time zone")
		} else {
			cfg.Location = loc
		}
	}

	groups := map[string]GroupSettings{}
	for _, q := range tree.Leaves() {
		gs := GroupSettings{Policy: PolicyFIFO, Backfill: BackfillEASY, PreemptionPolicy: PreemptLowestPriorityFirst}
		// The Capacity Scheduler's ordering-policy is the default of Bobbin's own key: its
		// fifo orders by application priority, then submission (Bobbin's "priority"), its
		// fair by memory used (Bobbin's "fair").
		def := PolicyFIFO
		switch q.OrderingPolicy {
		case capacity.OrderingFIFO:
			def = PolicyPriority
		case capacity.OrderingFair:
			def = PolicyFair
		}
		switch v := str(queueKey(q, "policy"), def); v {
		case PolicyFIFO, PolicyPriority, PolicyFair, PolicyDRF, PolicyBackfill:
			gs.Policy = v
		default:
			bad(queueKey(q, "policy"), "unknown policy (fifo, priority, fair, drf or backfill)")
		}
		switch v := str(queueKey(q, "backfill"), BackfillEASY); v {
		case BackfillEASY, BackfillConservative:
			gs.Backfill = v
		default:
			bad(queueKey(q, "backfill"), "must be easy or conservative")
		}
		switch v := str(queueKey(q, "preemption-policy"), PreemptLowestPriorityFirst); v {
		case PreemptLowestPriorityFirst, PreemptMostRecentFirst:
			gs.PreemptionPolicy = v
		default:
			bad(queueKey(q, "preemption-policy"), "must be lowest-priority-first or most-recent-first")
		}
		if v := str(queueKey(q, "capacity-schedule"), ""); v != "" {
			ws, err := ParseCapacitySchedule(v)
			if err != nil {
				bad(queueKey(q, "capacity-schedule"), "%v", err)
			}
			gs.Schedule = ws
		}
		groups[q.Path] = gs
	}
	return cfg, groups, errors.Join(errs...)
}

// ParseCapacitySchedule parses "HH:MM-HH:MM=percent[,...]", e.g. "07:30-09:00=20".
func ParseCapacitySchedule(s string) ([]CapacityWindow, error) {
	var out []CapacityWindow
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		span, pct, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("window %q is not HH:MM-HH:MM=percent", part)
		}
		from, to, ok := strings.Cut(span, "-")
		if !ok {
			return nil, fmt.Errorf("window %q is not HH:MM-HH:MM=percent", part)
		}
		start, err1 := parseClock(from)
		end, err2 := parseClock(to)
		if err1 != nil || err2 != nil || start == end {
			return nil, fmt.Errorf("bad time window %q", span)
		}
		c, err := strconv.ParseFloat(strings.TrimSpace(pct), 64)
		if err != nil || c < 0 || c > 100 {
			return nil, fmt.Errorf("window %q: capacity must be a percentage from 0 to 100", part)
		}
		w := CapacityWindow{Start: start, End: end, Capacity: c}
		for _, o := range out {
			if overlaps(o, w) {
				return nil, fmt.Errorf("window %q overlaps another", span)
			}
		}
		out = append(out, w)
	}
	return out, nil
}

func parseClock(s string) (int, error) {
	h, m, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return 0, fmt.Errorf("bad time %q", s)
	}
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if err1 != nil || err2 != nil || hh < 0 || hh > 24 || mm < 0 || mm > 59 || (hh == 24 && mm != 0) {
		return 0, fmt.Errorf("bad time %q", s)
	}
	return hh*60 + mm, nil
}

func overlaps(a, b CapacityWindow) bool {
	for m := 0; m < 24*60; m++ {
		if a.contains(m) && b.contains(m) {
			return true
		}
	}
	return false
}

// The Java RM's switch for preemption: the scheduling monitor, and its policies.
const (
	keyMonitorEnable   = "yarn.resourcemanager.scheduler.monitor.enable"
	keyMonitorPolicies = "yarn.resourcemanager.scheduler.monitor.policies"
	preemptionPolicy   = "org.apache.hadoop.yarn.server.resourcemanager.monitor.capacity.ProportionalCapacityPreemptionPolicy"
)

// javaPreemption reports whether the Java RM would preempt with this configuration.
func javaPreemption(str func(key, def string) string) bool {
	if on, err := strconv.ParseBool(str(keyMonitorEnable, "false")); err != nil || !on {
		return false
	}
	for _, p := range strings.Split(str(keyMonitorPolicies, preemptionPolicy), ",") {
		if strings.TrimSpace(p) == preemptionPolicy {
			return true
		}
	}
	return false
}
