package sim

import (
	"fmt"
	"time"

	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
)

// Placement is one container placed.
type Placement struct {
	Time      float64          `json:"time"` // seconds since the start
	App       string           `json:"app"`
	Container int64            `json:"container"`
	Node      string           `json:"node"`
	Resources map[string]int64 `json:"resources"`
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
	// Unplaced (with Trace.Explain) records each time an ask's reason for going unplaced
	// changed: the engine's reason and, when no node fit, how many nodes each filter
	// turned down.
	Unplaced []UnplacedRecord `json:"unplaced,omitempty"`
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
		r.report.Unplaced = append(r.report.Unplaced, UnplacedRecord{Time: r.now.Sub(Epoch).Seconds(), App: string(u.App), Partition: u.Partition,
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

// accumulate adds the time-weighted utilization and fragmentation of [last, t).
func (r *simRun) accumulate(t time.Time) {
	if r.last.IsZero() || r.lastU == nil {
		r.last = t
		return
	}
	dt := t.Sub(r.last).Seconds()
	for k, v := range r.lastU {
		r.accU[k] += v * dt
	}
	for k, v := range r.lastF {
		r.accF[k] += v * dt
	}
	r.last = t
}

// record samples shares, utilization and fragmentation after a scheduling pass (only
// when they changed).
func (r *simRun) record() {
	s := r.eng.Stats()
	ts := r.now.Sub(Epoch).Seconds()
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
	if r.lastU == nil || !equalMaps(u, r.lastU) || !equalMaps(f, r.lastF) {
		r.report.Utilization = append(r.report.Utilization, Sample{Time: ts, Values: u})
		r.report.Fragmentation = append(r.report.Fragmentation, Sample{Time: ts, Values: f})
		r.report.QueueShare = append(r.report.QueueShare, Sample{Time: ts, Values: share})
	}
	if r.last.IsZero() {
		r.last = r.now
	}
	r.lastU, r.lastF = u, f
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
	end := r.now.Sub(Epoch).Seconds()
	r.report.Makespan = end
	r.report.MeanUtilization, r.report.MeanFragmentation = map[string]float64{}, map[string]float64{}
	for k, v := range r.accU {
		if end > 0 {
			r.report.MeanUtilization[k] = v / end
		}
	}
	for k, v := range r.accF {
		if end > 0 {
			r.report.MeanFragmentation[k] = v / end
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
