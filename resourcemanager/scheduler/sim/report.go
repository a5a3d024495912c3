package sim

import (
	"fmt"
	"time"

	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
)

// Placement is one container placed.
type Placement struct {
	Time float64 `json:"time"` // seconds since the start
	// End is when it finished or was killed (the end of the run if it never did).
	End       float64          `json:"end"`
	App       string           `json:"app"`
	Container int64            `json:"container"`
	Node      string           `json:"node"`
	Resources map[string]int64 `json:"resources"`
	AM        bool             `json:"am,omitempty"` // the application master's container
}

// PreemptionRecord is one preemption notice or kill.
type PreemptionRecord struct {
	Time      float64 `json:"time"`
	App       string  `json:"app"`
	Container int64   `json:"container"`
	Node      string  `json:"node"`
	Kill      bool    `json:"kill"`
}

// Sample is a value per key at one time.
type Sample struct {
	Time   float64            `json:"time"`
	Values map[string]float64 `json:"values"`
}

// Report is the simulator's output (JSON).
type Report struct {
	Strategy             string             `json:"strategy"`
	Placements           []Placement        `json:"placements"`
	NeverRan             []string           `json:"never_ran"`
	QueueShare           []Sample           `json:"queue_share"`
	Utilization          []Sample           `json:"utilization"`
	Fragmentation        []Sample           `json:"fragmentation"`
	JobCompletion        map[string]float64 `json:"job_completion_seconds"`
	Makespan             float64            `json:"makespan_seconds"`
	Preemptions          []PreemptionRecord `json:"preemptions"`
	Allocations          int                `json:"allocations"`
	EngineSeconds        float64            `json:"engine_seconds"`
	AllocationsPerSecond float64            `json:"allocations_per_second"`
	// Summary figures over the run (time-weighted means, fractions of capacity).
	MeanUtilization   map[string]float64 `json:"mean_utilization"`
	MeanFragmentation map[string]float64 `json:"mean_fragmentation"`
	MeanQueueShare    map[string]float64 `json:"mean_queue_share"`
	// Window is the same means over the trace's window (Trace.Window), if it has one.
	Window *WindowReport `json:"window,omitempty"`
	// Unplaced (with Trace.Explain) records each time an ask's reason for going unplaced
	// changed: the engine's reason and, when no node fit, how many nodes each filter
	// turned down.
	Unplaced []UnplacedRecord `json:"unplaced,omitempty"`
	// Balance (with Trace.Explain and the balance strategy) is every choice the strategy
	// made: its weights and their parts, and the node's balance before and after.
	Balance []BalanceRecord `json:"balance,omitempty"`
}

// BalanceRecord is one balance decision (scheduler.BalanceDecision) with named types.
type BalanceRecord struct {
	Time        float64            `json:"time"`
	App         string             `json:"app"`
	Partition   string             `json:"partition,omitempty"`
	Priority    int32              `json:"priority"`
	Resources   map[string]int64   `json:"resources"`
	Node        string             `json:"node,omitempty"`
	Outcome     string             `json:"outcome"`
	Mode        string             `json:"mode"`
	Utilization float64            `json:"utilization"`
	W0          map[string]float64 `json:"w0"`
	W1          map[string]float64 `json:"w1"`
	W2          map[string]float64 `json:"w2"`
	Weights     map[string]float64 `json:"weights"`
	Before      float64            `json:"balance_before"`
	After       float64            `json:"balance_after"`
}

// noteBalance records a plan's balance decisions.
func (r *simRun) noteBalance(plan scheduler.Plan) {
	perType := func(v []float64) map[string]float64 {
		m := map[string]float64{}
		for i, n := range r.types.Names {
			if i < len(v) {
				m[n] = v[i]
			}
		}
		return m
	}
	for _, d := range plan.Balance {
		r.report.Balance = append(r.report.Balance, BalanceRecord{Time: r.now.Sub(r.start).Seconds(), App: string(d.App), Partition: d.Partition,
			Priority: d.Priority, Resources: r.named(d.Capability), Node: d.Node, Outcome: d.Outcome, Mode: d.Mode, Utilization: d.Utilization,
			W0: perType(d.W0), W1: perType(d.W1), W2: perType(d.W2), Weights: perType(d.Weights), Before: d.Before, After: d.After})
	}
}

// WindowReport is the time-weighted means over [From, To) seconds.
type WindowReport struct {
	From              float64            `json:"from"`
	To                float64            `json:"to"`
	Placements        int                `json:"placements"` // placed within the window
	MeanUtilization   map[string]float64 `json:"mean_utilization"`
	MeanFragmentation map[string]float64 `json:"mean_fragmentation"`
	MeanQueueShare    map[string]float64 `json:"mean_queue_share"`
}

// UnplacedRecord is one ask a pass could not place, and why.
type UnplacedRecord struct {
	Time      float64          `json:"time"`
	App       string           `json:"app"`
	Partition string           `json:"partition,omitempty"`
	Priority  int32            `json:"priority"`
	Resources map[string]int64 `json:"resources"`
	Reason    string           `json:"reason"`
	Rejected  map[string]int   `json:"rejected,omitempty"`
}

type unplacedKey struct {
	app      string
	priority int32
	res      scheduler.Resource
}

// noteUnplaced records the plan's unplaced asks whose reason changed since last noted.
func (r *simRun) noteUnplaced(plan scheduler.Plan) {
	for _, u := range plan.Unplaced {
		k := unplacedKey{string(u.App), u.Priority, u.Capability}
		why := string(u.Reason) + fmt.Sprint(u.Rejected)
		if r.lastWhy[k] == why {
			continue
		}
		if r.lastWhy == nil {
			r.lastWhy = map[unplacedKey]string{}
		}
		r.lastWhy[k] = why
		r.report.Unplaced = append(r.report.Unplaced, UnplacedRecord{Time: r.now.Sub(r.start).Seconds(), App: string(u.App), Partition: u.Partition,
			Priority: u.Priority, Resources: r.named(u.Capability), Reason: string(u.Reason), Rejected: u.Rejected})
	}
}

func (r *simRun) named(res scheduler.Resource) map[string]int64 {
	m := map[string]int64{}
	for i, n := range r.types.Names {
		m[n] = res[i]
	}
	return m
}

// series is one reported quantity per key: its value since the last change, and its
// integral over the run and over the window. The state changes only at event times and
// a sample is taken after every change, so the integrals are exact.
type series struct {
	last        map[string]float64
	run, window map[string]float64
}

func (s *series) add(from, to float64, w *Window) {
	if s.run == nil {
		s.run, s.window = map[string]float64{}, map[string]float64{}
	}
	for k, v := range s.last {
		s.run[k] += v * (to - from)
	}
	if w == nil {
		return
	}
	lo, hi := max(from, time.Duration(w.From).Seconds()), min(to, time.Duration(w.To).Seconds())
	if hi <= lo {
		return
	}
	for k, v := range s.last {
		s.window[k] += v * (hi - lo)
	}
}

// means divides integrals by the span they cover.
func means(acc map[string]float64, span float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range acc {
		if span > 0 {
			out[k] = v / span
		}
	}
	return out
}

// accumulate integrates utilization, fragmentation and shares over [last, t).
func (r *simRun) accumulate(t time.Time) {
	if !r.sampled {
		return
	}
	from, to := r.last.Sub(r.start).Seconds(), t.Sub(r.start).Seconds()
	for _, s := range []*series{&r.util, &r.frag, &r.share} {
		s.add(from, to, r.trace.Window)
	}
	r.last = t
}

// record samples shares, utilization and fragmentation after a scheduling pass, when
// any of them changed.
func (r *simRun) record() {
	s := r.eng.Stats()
	ts := r.now.Sub(r.start).Seconds()
	u, f, share := map[string]float64{}, map[string]float64{}, map[string]float64{}
	for i, n := range r.types.Names {
		if s.Total[i] > 0 {
			u[n] = float64(s.Allocated[i]) / float64(s.Total[i])
			f[n] = float64(s.Fragmented[i]) / float64(s.Total[i])
		}
	}
	for q, used := range s.QueueUsed {
		share[q] = scheduler.DominantShare(used, s.Total, r.types.Len(), false).Float()
	}
	if !r.sampled || !equalMaps(u, r.util.last) || !equalMaps(f, r.frag.last) || !equalMaps(share, r.share.last) {
		r.report.Utilization = append(r.report.Utilization, Sample{Time: ts, Values: u})
		r.report.Fragmentation = append(r.report.Fragmentation, Sample{Time: ts, Values: f})
		r.report.QueueShare = append(r.report.QueueShare, Sample{Time: ts, Values: share})
	}
	if !r.sampled {
		r.sampled, r.last = true, r.now
	}
	r.util.last, r.frag.last, r.share.last = u, f, share
}

func equalMaps(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func (r *simRun) finish() {
	r.accumulate(r.now)
	end := r.now.Sub(r.start).Seconds()
	r.report.Makespan = end
	r.report.MeanUtilization, r.report.MeanFragmentation, r.report.MeanQueueShare = means(r.util.run, end), means(r.frag.run, end), means(r.share.run, end)
	if w := r.trace.Window; w != nil {
		from, to := time.Duration(w.From).Seconds(), time.Duration(w.To).Seconds()
		span := max(min(to, end)-from, 0)
		wr := &WindowReport{From: from, To: to, MeanUtilization: means(r.util.window, span),
			MeanFragmentation: means(r.frag.window, span), MeanQueueShare: means(r.share.window, span)}
		for _, p := range r.report.Placements {
			if p.Time >= from && p.Time < to {
				wr.Placements++
			}
		}
		r.report.Window = wr
	}
	for i := range r.report.Placements {
		if r.report.Placements[i].End < 0 {
			r.report.Placements[i].End = end // still running when the run stopped
		}
	}
	for _, a := range r.apps {
		if !a.done {
			r.report.NeverRan = append(r.report.NeverRan, a.spec.ID)
		}
	}
	r.report.EngineSeconds = r.engine.Seconds()
	if r.engine > 0 {
		r.report.AllocationsPerSecond = float64(r.report.Allocations) / r.engine.Seconds()
	}
	// Empty lists print as [] rather than null.
	if r.report.Placements == nil {
		r.report.Placements = []Placement{}
	}
	if r.report.NeverRan == nil {
		r.report.NeverRan = []string{}
	}
	if r.report.Preemptions == nil {
		r.report.Preemptions = []PreemptionRecord{}
	}
}
