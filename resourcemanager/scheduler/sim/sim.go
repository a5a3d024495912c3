package sim

import (
	"container/heap"
	"fmt"
	"sort"
	"time"

	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
)

// Epoch is simulated time zero.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// maxSimulated stops a simulation that would otherwise wait forever.
const maxSimulated = 30 * 24 * time.Hour

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
}

type eventKind int

const (
	evSubmit eventKind = iota
	evDone
	evTick
)

type event struct {
	at   time.Time
	kind eventKind
	seq  int
	app  int                   // trace app index (submit)
	cid  scheduler.ContainerID // done
}

type eventQueue []*event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(*event)) }
func (q *eventQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// shapeKey identifies an app's asks of one shape and priority.
type shapeKey struct {
	priority int32
	res      scheduler.Resource
	label    string
}

type simApp struct {
	spec        AppSpec
	outstanding map[shapeKey]int
	durations   map[shapeKey]time.Duration
	running     int
	left        int // containers still to run to completion
	submitted   time.Time
	done        bool
}

type simRun struct {
	trace  *Trace
	eng    *scheduler.Engine
	types  scheduler.Types
	now    time.Time
	q      eventQueue
	seq    int
	apps   []*simApp
	byID   map[string]*simApp
	conts  map[scheduler.ContainerID]*simContainer
	report *Report
	engine time.Duration
	last   time.Time // last sample time, for time weighting
	lastU  map[string]float64
	lastF  map[string]float64
	accU   map[string]float64
	accF   map[string]float64
	notice map[scheduler.ContainerID]time.Time
}

type simContainer struct {
	app   *simApp
	shape shapeKey
	dead  bool
}

// Run simulates a trace.
func Run(t *Trace) (*Report, error) {
	cfg, tree, err := t.build()
	if err != nil {
		return nil, err
	}
	r := &simRun{trace: t, now: Epoch, byID: map[string]*simApp{}, conts: map[scheduler.ContainerID]*simContainer{},
		report: &Report{Strategy: cfg.Strategy, JobCompletion: map[string]float64{}}, notice: map[scheduler.ContainerID]time.Time{},
		accU: map[string]float64{}, accF: map[string]float64{}}
	cfg.Now = func() time.Time { return r.now }
	cfg.Location = time.UTC
	if r.eng, err = scheduler.New(cfg, tree); err != nil {
		return nil, err
	}
	r.types = r.eng.Types()
	if err := r.addNodes(); err != nil {
		return nil, err
	}
	for i, a := range t.Apps {
		sa := &simApp{spec: a, outstanding: map[shapeKey]int{}, durations: map[shapeKey]time.Duration{}}
		for _, ask := range a.Asks {
			res, err := vector(r.types, ask.Resources)
			if err != nil {
				return nil, fmt.Errorf("app %s: %w", a.ID, err)
			}
			if ask.Count < 0 || ask.Duration < 0 {
				return nil, fmt.Errorf("app %s: negative count or duration", a.ID)
			}
			k := shapeKey{ask.Priority, res, ask.Label}
			if d, ok := sa.durations[k]; ok && d != time.Duration(ask.Duration) {
				return nil, fmt.Errorf("app %s: two asks of the same shape and priority with different durations", a.ID)
			}
			sa.outstanding[k] += ask.Count
			sa.durations[k] = time.Duration(ask.Duration)
			sa.left += ask.Count
		}
		if _, dup := r.byID[a.ID]; dup {
			return nil, fmt.Errorf("app %s appears twice", a.ID)
		}
		r.apps = append(r.apps, sa)
		r.byID[a.ID] = sa
		r.push(&event{at: Epoch.Add(time.Duration(a.Submit)), kind: evSubmit, app: i})
	}
	if err := r.loop(); err != nil {
		return nil, err
	}
	r.finish()
	return r.report, nil
}

func (r *simRun) addNodes() error {
	for _, n := range r.trace.Nodes {
		res, err := vector(r.types, n.Resources)
		if err != nil {
			return fmt.Errorf("node %s: %w", n.ID, err)
		}
		count := max(n.Count, 1)
		for i := 0; i < count; i++ {
			id := n.ID
			if count > 1 {
				id = fmt.Sprintf("%s-%d", n.ID, i+1)
			}
			if err := r.eng.AddNode(scheduler.NodeSpec{ID: id, Rack: n.Rack, Partition: n.Label, Static: n.Static, Capacity: res}); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *simRun) push(e *event) {
	r.seq++
	e.seq = r.seq
	heap.Push(&r.q, e)
}

func (r *simRun) loop() error {
	interval := time.Duration(r.trace.Interval)
	if interval <= 0 {
		interval = time.Second
	}
	for r.q.Len() > 0 {
		next := r.q[0].at
		if next.Sub(Epoch) > maxSimulated {
			break
		}
		r.accumulate(next)
		r.now = next
		for r.q.Len() > 0 && r.q[0].at.Equal(next) {
			ev := heap.Pop(&r.q).(*event)
			if err := r.handle(ev); err != nil {
				return err
			}
		}
		res, err := r.pass()
		if err != nil {
			return err
		}
		r.record()
		for _, p := range res.Preemptions {
			if !p.Kill {
				// Step 7: preemption is freeing room; look again after one interval.
				r.push(&event{at: r.now.Add(interval), kind: evTick})
				break
			}
		}
		// Pending preemptions need time to pass: wake at the earliest kill deadline, and
		// keep scheduling passes going while anything waits and work is still running.
		if len(r.notice) > 0 {
			earliest := time.Time{}
			for _, d := range r.notice {
				if earliest.IsZero() || d.Before(earliest) {
					earliest = d
				}
			}
			if !earliest.After(r.now) {
				earliest = r.now.Add(interval) // never schedule into the past
			}
			r.push(&event{at: earliest, kind: evTick})
		} else if r.waiting() && r.q.Len() == 0 && r.eng.Stats().Running == 0 {
			// Nothing runs and nothing will arrive: whatever waits never runs, unless a
			// time-of-day quota may still change; one more interval is the bound.
			break
		} else if r.waiting() && r.q.Len() > 0 && r.q[0].at.Sub(r.now) > interval {
			r.push(&event{at: r.now.Add(interval), kind: evTick})
		}
	}
	return nil
}

// pass schedules at the current time; kills free room, so a pass that killed containers
// is followed at once by another.
func (r *simRun) pass() (scheduler.Result, error) {
	var all scheduler.Result
	for {
		start := time.Now()
		res := r.eng.Schedule(0)
		r.engine += time.Since(start)
		if err := r.apply(res); err != nil {
			return all, err
		}
		all.Allocations = append(all.Allocations, res.Allocations...)
		all.Preemptions = append(all.Preemptions, res.Preemptions...)
		killed := false
		for _, p := range res.Preemptions {
			killed = killed || p.Kill
		}
		if !killed {
			return all, nil
		}
	}
}

func (r *simRun) waiting() bool {
	for _, a := range r.apps {
		for _, n := range a.outstanding {
			if n > 0 {
				return true
			}
		}
	}
	return false
}

func (r *simRun) handle(ev *event) error {
	switch ev.kind {
	case evSubmit:
		a := r.apps[ev.app]
		a.submitted = r.now
		if err := r.eng.AddApp(scheduler.AppSpec{ID: a.spec.ID, Queue: a.spec.Queue, User: a.spec.User, Priority: a.spec.Priority,
			Submit: r.now, Runtime: time.Duration(a.spec.Runtime), Label: a.spec.Label}); err != nil {
			return fmt.Errorf("app %s: %w", a.spec.ID, err)
		}
		if len(a.spec.Blacklist) > 0 {
			if err := r.eng.UpdateBlacklist(a.spec.ID, a.spec.Blacklist, nil); err != nil {
				return err
			}
		}
		if a.left == 0 {
			r.complete(a)
			return nil
		}
		return r.syncAsks(a)
	case evDone:
		c, ok := r.conts[ev.cid]
		if !ok || c.dead {
			return nil // killed by preemption before it finished
		}
		c.dead = true
		delete(r.notice, ev.cid) // finished within its grace period: no kill follows
		if err := r.eng.Release(ev.cid); err != nil {
			return err
		}
		c.app.running--
		c.app.left--
		if c.app.left == 0 {
			r.complete(c.app)
		}
	}
	return nil
}

func (r *simRun) complete(a *simApp) {
	a.done = true
	r.report.JobCompletion[a.spec.ID] = r.now.Sub(a.submitted).Seconds()
	r.eng.RemoveApp(a.spec.ID)
}

// syncAsks sends the app's absolute outstanding counts.
func (r *simRun) syncAsks(a *simApp) error {
	var asks []scheduler.Ask
	keys := make([]shapeKey, 0, len(a.outstanding))
	for k := range a.outstanding {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
	for _, k := range keys {
		asks = append(asks, scheduler.Ask{Priority: k.priority, ResourceName: "*", Capability: k.res, Count: a.outstanding[k], Label: k.label, RelaxLocality: true})
	}
	return r.eng.UpdateAsks(a.spec.ID, asks)
}

func (r *simRun) apply(res scheduler.Result) error {
	for _, al := range res.Allocations {
		a := r.byID[al.App]
		k := shapeKey{al.Priority, al.Resource, ""}
		if _, ok := a.durations[k]; !ok {
			// The shape with a label: find the matching key.
			for kk := range a.durations {
				if kk.priority == al.Priority && kk.res == al.Resource {
					k = kk
					break
				}
			}
		}
		a.outstanding[k]--
		a.running++
		r.conts[al.Container] = &simContainer{app: a, shape: k}
		r.push(&event{at: r.now.Add(a.durations[k]), kind: evDone, cid: al.Container})
		r.report.Placements = append(r.report.Placements, Placement{Time: r.now.Sub(Epoch).Seconds(), App: al.App,
			Container: int64(al.Container), Node: al.Node, Resources: r.named(al.Resource)})
		r.report.Allocations++
	}
	for _, p := range res.Preemptions {
		r.report.Preemptions = append(r.report.Preemptions, PreemptionRecord{Time: r.now.Sub(Epoch).Seconds(), App: p.App,
			Container: int64(p.Container), Node: p.Node, Kill: p.Kill})
		if !p.Kill {
			r.notice[p.Container] = p.Deadline
			continue
		}
		delete(r.notice, p.Container)
		c := r.conts[p.Container]
		if c == nil || c.dead {
			continue
		}
		// The NodeManager kills it (exit status PREEMPTED); the task must run again.
		c.dead = true
		if err := r.eng.Release(p.Container); err != nil {
			return err
		}
		c.app.running--
		c.app.outstanding[c.shape]++
		if err := r.syncAsks(c.app); err != nil {
			return err
		}
	}
	return nil
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
