// Package sim is a discrete-event simulator over the scheduling engine: it replays a trace
// of nodes and applications in simulated time and reports placements, shares,
// utilization, fragmentation, completion times and the engine's speed. `bobbin sim` runs
// it; docs/simulator.md describes the trace and report formats.
package sim

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/conf/capacity"
	"github.com/bobbin-yarn/bobbin/conf/fairscheduler"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
)

// Trace is the simulator's input (JSON).
type Trace struct {
	// ResourceTypes in vector order; default ["memory-mb", "vcores"].
	ResourceTypes []string `json:"resource_types,omitempty"`
	// CapacityScheduler names a capacity-scheduler.xml (relative to the trace file);
	// Queues gives the same keys inline, without the yarn.scheduler.capacity. prefix.
	CapacityScheduler string            `json:"capacity_scheduler,omitempty"`
	Queues            map[string]string `json:"queues,omitempty"`
	// FairScheduler names a Fair Scheduler allocation file (relative to the trace file)
	// to run instead, as the RM runs it with the FairScheduler class; its queues are
	// named by path ("root.a").
	FairScheduler string `json:"fair_scheduler,omitempty"`
	// Settings are extra configuration keys, e.g. bobbin.scheduler.node-selection.
	Settings map[string]string `json:"settings,omitempty"`
	// Interval between scheduling passes when nothing else happens (default 1s).
	Interval Duration   `json:"interval,omitempty"`
	Nodes    []NodeSpec `json:"nodes"`
	Apps     []AppSpec  `json:"apps"`
	// Explain reports why asks went unplaced (Report.Unplaced; bobbin sim --explain).
	Explain bool `json:"explain,omitempty"`
	// Start is the moment simulated time zero stands for (RFC 3339, default
	// 2026-01-01T00:00:00Z); TimeZone the IANA zone time-of-day quotas are read in
	// (default UTC, or the bobbin.scheduler.time-zone setting).
	Start    string `json:"start,omitempty"`
	TimeZone string `json:"time_zone,omitempty"`
	// Window adds time-weighted means over [From, To) to the report (bobbin sim --window).
	Window *Window `json:"window,omitempty"`
}

// Window is a span of simulated time, offsets from the start.
type Window struct {
	From Duration `json:"from"`
	To   Duration `json:"to"`
}

// ParseWindow reads "FROM,TO" (durations or seconds, e.g. "30m,2h" or "1800,7200").
func ParseWindow(s string) (*Window, error) {
	from, to, ok := strings.Cut(s, ",")
	if !ok {
		return nil, fmt.Errorf("window %q: want FROM,TO", s)
	}
	var w Window
	for _, f := range []struct {
		s string
		d *Duration
	}{{from, &w.From}, {to, &w.To}} {
		v := strings.TrimSpace(f.s)
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			v = strconv.Quote(v)
		}
		if err := f.d.UnmarshalJSON([]byte(v)); err != nil {
			return nil, fmt.Errorf("window %q: %w", s, err)
		}
	}
	return &w, w.check()
}

func (w *Window) check() error {
	if w.From < 0 || w.To <= w.From {
		return fmt.Errorf("window %s,%s: want 0 <= from < to", time.Duration(w.From), time.Duration(w.To))
	}
	return nil
}

// clock is the trace's start and the zone of its time-of-day quotas (nil: as configured).
func (t *Trace) clock() (time.Time, *time.Location, error) {
	start := DefaultStart
	if t.Start != "" {
		v, err := time.Parse(time.RFC3339, t.Start)
		if err != nil {
			return start, nil, fmt.Errorf("trace start %q: want RFC 3339, e.g. 2026-03-02T08:00:00+08:00: %w", t.Start, err)
		}
		start = v
	}
	if t.TimeZone == "" {
		return start, nil, nil
	}
	loc, err := time.LoadLocation(t.TimeZone)
	if err != nil {
		return start, nil, fmt.Errorf("trace time_zone %q: %w", t.TimeZone, err)
	}
	return start, loc, nil
}

// NodeSpec is a node (Count > 1 makes numbered copies).
type NodeSpec struct {
	ID        string           `json:"id"`
	Resources map[string]int64 `json:"resources"`
	Label     string           `json:"label,omitempty"`
	Static    bool             `json:"static,omitempty"`
	Rack      string           `json:"rack,omitempty"`
	Count     int              `json:"count,omitempty"`
}

// AppSpec is an application and its container asks.
type AppSpec struct {
	ID       string   `json:"id"`
	Submit   Duration `json:"submit"`
	Queue    string   `json:"queue"`
	User     string   `json:"user,omitempty"`
	Priority int32    `json:"priority,omitempty"`
	Label    string   `json:"label,omitempty"`
	// Runtime is the declared estimate backfilling uses (optional).
	Runtime Duration `json:"runtime,omitempty"`
	// Blacklist names nodes the application asks not to run on (AllocateRequest blacklist).
	Blacklist []string  `json:"blacklist,omitempty"`
	Asks      []AskSpec `json:"asks"`
}

// AskSpec is Count containers of one shape, each running for Duration.
type AskSpec struct {
	Resources map[string]int64 `json:"resources"`
	Count     int              `json:"count"`
	Duration  Duration         `json:"duration"`
	Priority  int32            `json:"priority,omitempty"`
	Label     string           `json:"label,omitempty"`
	// AM marks the application master's container: asked for first and alone, it runs
	// (Duration ignored) until every other container of the application has finished.
	AM bool `json:"am,omitempty"`
	// Stage orders the asks: those of a later stage are made only once every container
	// of the earlier stages has finished (MapReduce asks for reduces after its maps).
	Stage int `json:"stage,omitempty"`
	// Gang: the Count containers run only together, so they are placed together (all in
	// one round, or none); backfilling reserves them as a whole.
	Gang bool `json:"gang,omitempty"`
}

// Duration is a time.Duration written as a Go duration string ("90s", "5m").
type Duration time.Duration

// UnmarshalJSON accepts "90s" or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("duration %q: %w", s, err)
		}
		*d = Duration(v)
		return nil
	}
	var secs float64
	if err := json.Unmarshal(b, &secs); err != nil {
		return fmt.Errorf("duration %s: want \"90s\" or seconds", b)
	}
	*d = Duration(secs * float64(time.Second))
	return nil
}

// MarshalJSON writes the Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// LoadTrace reads a trace file.
func LoadTrace(path string) (*Trace, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var t Trace
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return nil, fmt.Errorf("trace %s: %w", path, err)
	}
	if t.CapacityScheduler != "" && !filepath.IsAbs(t.CapacityScheduler) {
		t.CapacityScheduler = filepath.Join(filepath.Dir(path), t.CapacityScheduler)
	}
	if t.FairScheduler != "" && !filepath.IsAbs(t.FairScheduler) {
		t.FairScheduler = filepath.Join(filepath.Dir(path), t.FairScheduler)
	}
	return &t, nil
}

// build turns the trace's queue and scheduler settings into an engine configuration.
func (t *Trace) build() (scheduler.Config, *capacity.Tree, error) {
	c := conf.New()
	for k, v := range t.Settings {
		c.Set(k, v)
	}
	var tree *capacity.Tree
	var err error
	switch {
	case t.FairScheduler != "":
		c.Set(capacity.KeySchedulerClass, fairscheduler.Class)
		c.Set(fairscheduler.KeyAllocationFile, t.FairScheduler)
		if tree, err = capacity.LoadFair(c, "", nil); err != nil {
			return scheduler.Config{}, nil, err
		}
		c = tree.Conf
	case t.CapacityScheduler != "":
		if err := c.AddFile(t.CapacityScheduler); err != nil {
			return scheduler.Config{}, nil, err
		}
	case len(t.Queues) > 0:
		keys := make([]string, 0, len(t.Queues))
		for k := range t.Queues {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			c.Set(capacity.Prefix+k, t.Queues[k])
		}
	default:
		if err := c.AddXML("built-in capacity-scheduler.xml", []byte(capacity.DefaultXML)); err != nil {
			return scheduler.Config{}, nil, err
		}
	}
	if tree == nil {
		if tree, err = capacity.Parse(c); err != nil {
			return scheduler.Config{}, nil, err
		}
	}
	var types scheduler.Types
	if len(t.ResourceTypes) > 0 {
		types = scheduler.Types{Names: t.ResourceTypes}
	}
	cfg, groups, err := scheduler.FromConf(c, tree, types)
	if err != nil {
		return scheduler.Config{}, nil, err
	}
	cfg.Groups = groups
	if _, set := c.Raw(scheduler.KeyResourceCalculator); !set {
		// A trace places by every resource type (Bobbin's multi-resource placement)
		// unless it names the calculator; the RM without the key fits by memory, as the
		// Java Capacity Scheduler's default calculator does.
		cfg.FitByMemory = false
	}
	if _, set := c.Raw(scheduler.KeyTimeZone); !set {
		cfg.Location = time.UTC // a trace's time of day is UTC unless it says otherwise
	}
	_, bobbinKey := c.Raw(scheduler.KeyPreemptionEnabled)
	if _, javaKey := c.Raw("yarn.resourcemanager.scheduler.monitor.enable"); !bobbinKey && !javaKey {
		// A trace runs Bobbin's hysteresis preemption unless it says otherwise; the RM
		// without either key does not preempt, as the Java RM does not.
		cfg.Preemption.Enabled = true
	}
	return cfg, tree, nil
}

// vector converts a name->amount map to the engine's resource vector.
func vector(types scheduler.Types, m map[string]int64) (scheduler.Resource, error) {
	for name, v := range m {
		if v < 0 {
			return scheduler.Resource{}, fmt.Errorf("negative amount %d of %s", v, name)
		}
	}
	r, err := types.Vector(m)
	if err != nil {
		return r, fmt.Errorf("%w (types: %s)", err, strings.Join(types.Names, ", "))
	}
	return r, nil
}
