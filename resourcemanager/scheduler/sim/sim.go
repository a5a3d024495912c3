package sim

import (
	"container/heap"
	"fmt"
	"sort"
	"time"

	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
)

// DefaultStart is simulated time zero when a trace names no start.
var DefaultStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// maxSimulated stops a simulation that would otherwise wait forever.
const maxSimulated = 30 * 24 * time.Hour

// shapeKey identifies an app's asks of one shape and priority.
type shapeKey struct {
	priority int32
	res      scheduler.Resource
	label    string
}

type simApp struct {
	spec        AppSpec
	outstanding map[shapeKey]int
	// tasks are, per shape, the durations of the containers asked for and not placed,
	// in order: as an AM does, each container granted runs the next task of its shape.
	tasks     map[shapeKey][]time.Duration
	shapes    map[shapeKey]bool // every shape the app asks for (labels included)
	running   int
	left      int // containers still to run to completion, the AM's included
	submitted time.Time
	done      bool
	// stages are the asks not made yet, in order; stageLeft counts the containers of
	// the asks made so far that have not finished: at zero the next stage is asked for.
	stages    []map[shapeKey][]time.Duration
	stageLeft int
	amKey     *shapeKey             // the AM's shape, if the trace names an AM container
	gangs     map[shapeKey]bool     // the shapes asked for as gangs
	am        scheduler.ContainerID // the running AM container (0: none)
	amStarted bool
}

type simRun struct {
	trace  *Trace
	eng    *scheduler.Engine
	types  scheduler.Types
	now    time.Time
	start  time.Time // simulated time zero
	q      eventQueue
	seq    int
	apps   []*simApp
	byID   map[string]*simApp
	conts  map[scheduler.ContainerID]*simContainer
	report *Report
	engine time.Duration
	// The reported quantities since the last sample (taken at last), and their integrals.
	sampled           bool
	last              time.Time
	util, frag, share series
	notice            map[scheduler.ContainerID]time.Time
	asked             bool // a pass's placements made new asks: schedule again at the same time
	// lastWhy is each unplaced ask's last noted reason (Trace.Explain).
	lastWhy map[unplacedKey]string
}

type simContainer struct {
	app   *simApp
	shape shapeKey
	dead  bool
	am    bool
	dur   time.Duration // how long the task it runs takes
	// placed is its record in Report.Placements, whose End is set when it ends.
	placed int
}

// ended marks c ended now: done, or killed.
func (r *simRun) ended(c *simContainer) {
	c.dead = true
	r.report.Placements[c.placed].End = r.now.Sub(r.start).Seconds()
}

// Run simulates a trace.
func Run(t *Trace) (*Report, error) {
	cfg, tree, err := t.build()
	if err != nil {
		return nil, err
	}
	start, loc, err := t.clock()
	if err != nil {
		return nil, err
	}
	if loc != nil {
		cfg.Location = loc
	}
	if t.Window != nil {
		if err := t.Window.check(); err != nil {
			return nil, err
		}
	}
	r := &simRun{trace: t, now: start, start: start, byID: map[string]*simApp{}, conts: map[scheduler.ContainerID]*simContainer{},
		report: &Report{Strategy: cfg.Strategy, JobCompletion: map[string]float64{}}, notice: map[scheduler.ContainerID]time.Time{}}
	cfg.Now = func() time.Time { return r.now }
	cfg.Explain = t.Explain
	if r.eng, err = scheduler.New(cfg, tree); err != nil {
		return nil, err
	}
	r.types = r.eng.Types()
	if err := r.addNodes(); err != nil {
		return nil, err
	}
	for i, a := range t.Apps {
		sa, err := r.newApp(a)
		if err != nil {
			return nil, err
		}
		if _, dup := r.byID[a.ID]; dup {
			return nil, fmt.Errorf("app %s appears twice", a.ID)
		}
		r.apps = append(r.apps, sa)
		r.byID[a.ID] = sa
		r.push(&event{at: r.start.Add(time.Duration(a.Submit)), kind: evSubmit, app: i})
	}
	if err := r.loop(); err != nil {
		return nil, err
	}
	r.finish()
	return r.report, nil
}

// newApp reads an application's asks into stages: the AM alone first, then each
// distinct stage number in ascending order.
func (r *simRun) newApp(a AppSpec) (*simApp, error) {
	sa := &simApp{spec: a, outstanding: map[shapeKey]int{}, tasks: map[shapeKey][]time.Duration{}, shapes: map[shapeKey]bool{}}
	byStage := map[int]map[shapeKey][]time.Duration{}
	var order []int
	for _, ask := range a.Asks {
		res, err := vector(r.types, ask.Resources)
		if err != nil {
			return nil, fmt.Errorf("app %s: %w", a.ID, err)
		}
		if ask.Count < 0 || ask.Duration < 0 {
			return nil, fmt.Errorf("app %s: negative count or duration", a.ID)
		}
		k := shapeKey{ask.Priority, res, ask.Label}
		if ask.AM {
			if sa.amKey != nil || ask.Count != 1 {
				return nil, fmt.Errorf("app %s: one AM ask of count 1 at most", a.ID)
			}
			sa.amKey = &k
		}
		if sa.shapes[k] && (ask.AM || sa.amKey != nil && *sa.amKey == k) {
			return nil, fmt.Errorf("app %s: an ask has the AM's shape and priority", a.ID)
		}
		if sa.shapes[k] && (ask.Gang || sa.gangs[k]) {
			return nil, fmt.Errorf("app %s: a gang ask shares its shape and priority with another ask", a.ID)
		}
		if ask.Gang {
			if ask.AM {
				return nil, fmt.Errorf("app %s: the AM's ask cannot be a gang", a.ID)
			}
			if sa.gangs == nil {
				sa.gangs = map[shapeKey]bool{}
			}
			sa.gangs[k] = true
		}
		sa.shapes[k] = true
		sa.left += ask.Count
		if ask.AM {
			continue
		}
		if byStage[ask.Stage] == nil {
			byStage[ask.Stage] = map[shapeKey][]time.Duration{}
			order = append(order, ask.Stage)
		}
		for range ask.Count {
			byStage[ask.Stage][k] = append(byStage[ask.Stage][k], time.Duration(ask.Duration))
		}
	}
	sort.Ints(order)
	if sa.amKey != nil {
		sa.stages = append(sa.stages, map[shapeKey][]time.Duration{*sa.amKey: {0}})
	}
	for _, st := range order {
		sa.stages = append(sa.stages, byStage[st])
	}
	sa.nextStage()
	return sa, nil
}

// advance asks for a's next stage once the current one is through.
func (r *simRun) advance(a *simApp) error {
	if a.stageLeft != 0 || !a.nextStage() {
		return nil
	}
	r.asked = true
	return r.syncAsks(a)
}

// nextStage makes the asks of the next stage; false when there is none.
func (a *simApp) nextStage() bool {
	if len(a.stages) == 0 {
		return false
	}
	for k, ds := range a.stages[0] {
		a.outstanding[k] += len(ds)
		a.stageLeft += len(ds)
		a.tasks[k] = append(a.tasks[k], ds...)
	}
	a.stages = a.stages[1:]
	return true
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
		if next.Sub(r.start) > maxSimulated {
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
func (r *simRun) pass() (scheduler.Plan, error) {
	var all scheduler.Plan
	for {
		start := time.Now()
		res := r.eng.Schedule(0)
		r.engine += time.Since(start)
		if err := r.apply(res); err != nil {
			return all, err
		}
		if r.trace.Explain {
			r.noteUnplaced(res)
			r.noteBalance(res)
		}
		all.Allocations = append(all.Allocations, res.Allocations...)
		all.Preemptions = append(all.Preemptions, res.Preemptions...)
		again := r.asked // an AM that just started asks for its first stage at once
		r.asked = false
		for _, p := range res.Preemptions {
			again = again || p.Kill
		}
		if !again {
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
		if err := r.eng.AddApp(scheduler.AppSpec{ID: scheduler.AppID(a.spec.ID), Queue: a.spec.Queue, User: a.spec.User, Priority: a.spec.Priority,
			Submit: r.now, Runtime: time.Duration(a.spec.Runtime), Label: a.spec.Label}); err != nil {
			return fmt.Errorf("app %s: %w", a.spec.ID, err)
		}
		if len(a.spec.Blacklist) > 0 {
			if err := r.eng.UpdateBlacklist(scheduler.AppID(a.spec.ID), a.spec.Blacklist, nil); err != nil {
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
		r.ended(c)
		delete(r.notice, ev.cid) // finished within its grace period: no kill follows
		if err := r.eng.Release(ev.cid); err != nil {
			return err
		}
		return r.finished(c)
	}
	return nil
}

// finished accounts for one of a's containers ending: the next stage is asked for when
// the current one is through, and the AM ends once it is the only container left.
func (r *simRun) finished(c *simContainer) error {
	a := c.app
	a.running--
	a.left--
	if c.am {
		a.am = 0
	} else {
		a.stageLeft--
	}
	if !c.am {
		if err := r.advance(a); err != nil {
			return err
		}
	}
	if a.left == 1 && a.am != 0 && len(a.stages) == 0 && a.stageLeft == 0 {
		r.push(&event{at: r.now, kind: evDone, cid: a.am})
	}
	if a.left == 0 {
		r.complete(a)
	}
	return nil
}

func (r *simRun) complete(a *simApp) {
	a.done = true
	r.report.JobCompletion[a.spec.ID] = r.now.Sub(a.submitted).Seconds()
	r.eng.RemoveApp(scheduler.AppID(a.spec.ID))
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
		// The AM's ask is flagged as the RM flags it (static nodes, the AM-resource cap).
		am := a.amKey != nil && *a.amKey == k
		asks = append(asks, scheduler.Ask{Priority: k.priority, ResourceName: "*", Capability: k.res, Count: a.outstanding[k], Label: k.label, RelaxLocality: true, AM: am,
			Gang: a.gangs[k]})
	}
	return r.eng.UpdateAsks(scheduler.AppID(a.spec.ID), asks)
}

func (r *simRun) apply(res scheduler.Plan) error {
	// Every simulated allocation becomes a container: the whole plan is confirmed.
	ids := make([]scheduler.ContainerID, len(res.Allocations))
	for i, al := range res.Allocations {
		ids[i] = al.Container
	}
	r.eng.Confirm(ids)
	for _, al := range res.Allocations {
		a := r.byID[string(al.App)]
		// The simulated AM sees its containers at once.
		r.eng.Delivered(al.App, []scheduler.ContainerID{al.Container})
		k := shapeKey{al.Priority, al.Resource, ""}
		if !a.shapes[k] {
			// The shape with a label: find the matching key.
			for kk := range a.shapes {
				if kk.priority == al.Priority && kk.res == al.Resource {
					k = kk
					break
				}
			}
		}
		a.outstanding[k]--
		a.running++
		sc := &simContainer{app: a, shape: k}
		if q := a.tasks[k]; len(q) > 0 {
			sc.dur, a.tasks[k] = q[0], q[1:]
		}
		r.conts[al.Container] = sc
		sc.placed = len(r.report.Placements)
		r.report.Placements = append(r.report.Placements, Placement{Time: r.now.Sub(r.start).Seconds(), End: -1, App: string(al.App),
			Container: int64(al.Container), Node: al.Node, Resources: r.named(al.Resource), AM: al.AM})
		if a.amKey != nil && *a.amKey == k && a.am == 0 {
			// The AM runs until the rest is done; once it first runs, the first stage is
			// asked for (a preempted AM placed again just resumes).
			sc.am, a.am = true, al.Container
			if !a.amStarted {
				a.amStarted = true
				a.stageLeft--
				if err := r.advance(a); err != nil {
					return err
				}
			}
			if a.left == 1 && len(a.stages) == 0 && a.stageLeft == 0 {
				r.push(&event{at: r.now, kind: evDone, cid: al.Container}) // nothing else to run
			}
		} else {
			r.push(&event{at: r.now.Add(sc.dur), kind: evDone, cid: al.Container})
		}
		r.report.Allocations++
	}
	for _, p := range res.Preemptions {
		r.report.Preemptions = append(r.report.Preemptions, PreemptionRecord{Time: r.now.Sub(r.start).Seconds(), App: string(p.App),
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
		r.ended(c)
		if err := r.eng.Release(p.Container); err != nil {
			return err
		}
		c.app.running--
		c.app.outstanding[c.shape]++
		c.app.tasks[c.shape] = append([]time.Duration{c.dur}, c.app.tasks[c.shape]...)
		if c.am {
			c.app.am = 0
		}
		if err := r.syncAsks(c.app); err != nil {
			return err
		}
	}
	return nil
}
