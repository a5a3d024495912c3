package rmcore

import (
	"github.com/sirupsen/logrus"

	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
)

// ResourceOf reads a ResourceProto in the cluster's resource types. Types the cluster
// does not have are skipped, as the Java RM's ResourcePBImpl skips them; an amount in
// units that do not convert reads as 0 of that type.
func (rm *Core) ResourceOf(r *yarnpb.ResourceProto) scheduler.Resource {
	var v scheduler.Resource
	if unknown, err := rm.types.FromProto(r, v[:rm.types.Len()]); err != nil || len(unknown) > 0 {
		rm.schedLog().WithError(err).WithField("unknown_types", unknown).Debug("resource types skipped")
	}
	return v
}

// ResourceProto writes a resource in the cluster's types (memory and vcores only when
// there are no others, as a 2.x peer expects).
func (rm *Core) ResourceProto(r scheduler.Resource) *yarnpb.ResourceProto {
	return rm.types.Proto(r[:rm.types.Len()])
}

// scheduleLoop runs engine passes on a tick and whenever kicked, until ctx ends.
func (rm *Core) scheduleLoop(ctx context.Context) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-rm.kick:
		}
		rm.SchedulePass()
	}
}

// KickScheduler asks for a pass soon (it never blocks).
func (rm *Core) KickScheduler() {
	select {
	case rm.kick <- struct{}{}:
	default:
	}
}

// SchedulePass runs the engine and commits its plans now, turning allocations into YARN
// containers with container tokens, queued for their attempts' next allocate. The loop
// calls it on its tick and when kicked; tests call it to schedule at a known moment.
func (rm *Core) SchedulePass() {
	// While a restart waits for its NodeManagers nothing is scheduled: the kick each
	// registration gives must not take the pass's lock from the others (a restart's
	// thousands of registrations queued behind each kick's exclusive turn).
	if rm.recovery.waiting(rm.opts.Now()) {
		return
	}
	// One slice at a time, each committed before the next begins: a caller that returns
	// from SchedulePass knows every plan made before it is in the container table.
	rm.passMu.Lock()
	defer rm.passMu.Unlock()
	// Slices of one consistent engine pass each; the RPC handlers get the engine between
	// them, so none waits for a whole busy pass.
	for {
		if open, _ := rm.schedulingOpen(rm.opts.Now()); !open {
			return
		}
		start := rm.opts.Now()
		res := rm.engine.Schedule(scheduler.SliceSize)
		rm.applyPlan(res)
		end := rm.opts.Now()
		rm.passes.add(end, end.Sub(start), len(res.Allocations))
		if len(res.Allocations) < scheduler.SliceSize {
			return
		}
		// Let the handlers waiting for a core run before the next slice: at saturation
		// the pass otherwise keeps its core for its whole time slice (paired runs at 38k
		// containers/s: allocate p50 7-9 ms against 10-17 ms). The lock is let go
		// meanwhile, so a NodeManager registering (RegisterNode) waits for a slice, not
		// for the pass and its pauses.
		rm.passMu.Unlock()
		runtime.Gosched()
		stepAside()
		rm.passMu.Lock()
	}
}

// passStepAside is how long the pass keeps choosing to wait, after each slice, for the
// goroutines that want a core. It is not a bound on the wait: on a busy machine a sleep
// ends when the runtime gets round to the pass again (some 20 ms with CPU-bound
// goroutines in the queue), which is the point.
const passStepAside = 2 * time.Millisecond

// stepAside waits, for passStepAside, while other goroutines are runnable: a pass with
// work left is the one job that can always wait, and an RPC call it delays is latency an
// AM or NodeManager sees. A Gosched alone puts the pass back in the run queue behind
// them, where it comes round again within a few calls; asleep, it lets the cores drain
// the queue and poll the network for the readers that are waiting on it. At saturation
// (1-TB nodes, 3,200 outstanding per AM) this took allocate p99 from 51-137 ms to 45-85
// ms, at the same allocation rate. Reading the count costs well under a microsecond; a
// runtime without the metric reads as nothing runnable.
func stepAside() {
	deadline := time.Now().Add(passStepAside)
	sample := []metrics.Sample{{Name: "/sched/goroutines/runnable:goroutines"}}
	for {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 || sample[0].Value.Uint64() == 0 || !time.Now().Before(deadline) {
			return
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// applyPlan commits one engine plan: each allocation becomes a container with its token
// and is confirmed to the engine, or, if it cannot (the attempt ended, the node left), is
// forgotten, which gives its ask the container back; the preemptions go to AMs and
// NodeManagers.
func (rm *Core) applyPlan(res scheduler.Plan) {
	// One log line per application and container size per pass, naming every container
	// and its node: at thousands of allocations a second a line per container cost the RM
	// a fifth of its CPU, and a grep for a container id still finds its line.
	type group struct {
		app scheduler.AppID
		res scheduler.Resource
	}
	var (
		order []group
		lines map[group]allocatedLog
	)
	confirmed := make([]scheduler.ContainerID, 0, len(res.Allocations))
	// Allocations that cannot become containers (the attempt ended or the node left while
	// the pass ran) are forgotten, one log line per application and reason.
	type forgotten struct {
		app    scheduler.AppID
		reason string
	}
	var lost map[forgotten]int
	var lostOrder []forgotten
	forget := func(a scheduler.Allocation, err error) {
		k := forgotten{a.App, err.Error()}
		if lost == nil {
			lost = map[forgotten]int{}
		}
		if lost[k] == 0 {
			lostOrder = append(lostOrder, k)
		}
		lost[k]++
		// An application removed meanwhile took its planned containers with it.
		if err := rm.engine.Forget(a.Container); err != nil && !errors.Is(err, scheduler.ErrUnknownContainer) {
			rm.schedLog().WithError(err).WithField("application", a.App).Error("engine refused to forget an allocation")
		}
	}
	// A plan holds thousands of allocations of a few hundred applications: each
	// application's attempt and each node's address are looked up once, and the task
	// containers go into the container table under one hold of its lock, not a few per
	// container (the lock heartbeats and allocate calls take too).
	targets := planTargets{rm: rm, apps: map[scheduler.AppID]planApp{}, nodes: make(map[string]*rmstate.NodeAddr, len(res.Allocations))}
	now := rm.opts.Now()
	// made are the allocations that became containers, in plan order; tasks those of
	// them the table is yet to take (an AM's container is in it and launching already).
	type madeContainer struct {
		a  *scheduler.Allocation
		rc *rmstate.Container
	}
	made := make([]madeContainer, 0, len(res.Allocations))
	tasks := make([]*rmstate.Container, 0, len(res.Allocations))
	for i := range res.Allocations {
		a := &res.Allocations[i]
		att, user, at, err := targets.of(*a)
		if err != nil {
			forget(*a, err)
			continue
		}
		rc := &rmstate.Container{EngineID: a.Container, At: at, AM: a.AM, Resource: a.Resource, Priority: a.Priority,
			Created: now.UnixMilli(), User: user, RequestID: a.RequestID, Placement: a.Placement}
		if a.AM {
			// An AM container is launched by the RM at once, with a token made now.
			if err := rm.amContainerFor(att, rc); err != nil {
				forget(*a, err)
				continue
			}
			made = append(made, madeContainer{a, rc})
			continue
		}
		rc.ID.Attempt = att
		made = append(made, madeContainer{a, rc})
		tasks = append(tasks, rc)
	}
	rm.containers.AddAll(tasks)
	// The pairs as they come (a plan's containers are spread over nodes, so repeats are
	// few): a set of nodes per application was a map per application per slice.
	ranOn := make([]rmstate.AppNode, 0, len(made))
	var allocated scheduler.Resource // what this slice's containers hold, for its health
	allocs := make([]*scheduler.Allocation, len(made))
	for i, m := range made {
		a, rc := m.a, m.rc
		allocs[i] = a
		allocated = allocated.Add(a.Resource)
		ranOn = append(ranOn, rmstate.AppNode{App: rc.ID.Attempt.App, Node: a.Node})
		confirmed = append(confirmed, a.Container)
		if lines == nil {
			lines = map[group]allocatedLog{}
		}
		g := group{a.App, a.Resource}
		if _, ok := lines[g]; !ok {
			order = append(order, g)
		}
		lines[g] = append(lines[g], rc)
	}
	rm.apps.RanOnAll(ranOn) // their logs will be aggregated there
	rm.metrics.allocatedIn(allocs)
	var last *HealthOp
	if len(made) > 0 {
		op := rm.healthOp(made[len(made)-1].rc)
		last = &op
	}
	rm.health.pass(now, len(made), allocated, last)
	rm.engine.Confirm(confirmed)
	for _, k := range lostOrder {
		rm.schedLog().WithFields(map[string]any{"application": k.app, "containers": lost[k], "reason": k.reason}).Info("allocations forgotten")
	}
	for _, g := range order {
		rm.schedLog().WithFields(map[string]any{"application": g.app, "memory_mb": g.res[scheduler.Memory], "vcores": g.res[scheduler.VCores],
			"containers": lines[g]}).Info("containers allocated")
	}
	for _, p := range res.Preemptions {
		rm.preemptContainer(p)
	}
}

// planTargets resolves a plan's allocations to the attempts and nodes they go to, each
// application and node once per plan.
type planTargets struct {
	rm    *Core
	apps  map[scheduler.AppID]planApp
	nodes map[string]*rmstate.NodeAddr
}

// planApp is an application's live attempt and user, or why it has none.
type planApp struct {
	att  records.AttemptID
	user string
	err  error
}

// of is the attempt, user and node of allocation a, or why it cannot become a container
// (the attempt ended or the node left while the pass ran).
func (p *planTargets) of(a scheduler.Allocation) (records.AttemptID, string, *rmstate.NodeAddr, error) {
	app, ok := p.apps[a.App]
	if !ok {
		appID, err := yarnAppID(a.App)
		if err == nil {
			att, user, live := p.rm.apps.LiveAttempt(appID)
			app = planApp{att: att, user: user}
			if !live {
				app.err = fmt.Errorf("no live attempt")
			}
		} else {
			app.err = err
		}
		p.apps[a.App] = app
	}
	if app.err != nil {
		return records.AttemptID{}, "", nil, app.err
	}
	at, ok := p.nodes[a.Node]
	if !ok {
		at, _ = p.rm.nodes.AddrOf(a.Node)
		p.nodes[a.Node] = at
	}
	if at == nil {
		return records.AttemptID{}, "", nil, fmt.Errorf("node %s is gone", a.Node)
	}
	return app.att, app.user, at, nil
}

// amContainerFor makes an AM's allocation its container, with a token issued now, adds
// it to the table and has the AM launcher start it.
func (rm *Core) amContainerFor(att records.AttemptID, rc *rmstate.Container) error {
	rc.ID = rm.containers.NextID(att)
	amContainer, err := rm.containerProto(rc, rm.opts.Now())
	if err != nil {
		return err
	}
	rm.containers.Add(rc, rc.Node())
	rm.launchAM(att, amContainer, amContainer.GetContainerToken())
	return nil
}

// containerTokenLife is how long a container token is valid from its issue.
const containerTokenLife = 10 * time.Minute

// containerProto is the container as its AM gets it, with a container token issued now.
// It is built when the container is handed out, not when it is allocated, so the RM does
// not hold thousands of signed protos while AMs have yet to call.
func (rm *Core) containerProto(c *rmstate.Container, now time.Time) (*yarnpb.ContainerProto, error) {
	tok, err := rm.containerTokens.Issue(&yarnpb.ContainerTokenIdentifierProto{
		ContainerId: c.ID.Proto(), NmHostAddr: proto.String(c.At.Key), AppSubmitter: proto.String(c.User),
		Resource: rm.ResourceProto(c.Resource), ExpiryTimeStamp: proto.Int64(now.Add(containerTokenLife).UnixMilli()),
		Priority: &yarnpb.PriorityProto{Priority: proto.Int32(c.Priority)}, CreationTime: proto.Int64(now.UnixMilli()),
		AllocationRequestId: requestIDField(c.RequestID), AllocationTags: c.PlacementTags(),
	})
	if err != nil {
		return nil, fmt.Errorf("container token for %s: %w", c.ID, err)
	}
	out := &yarnpb.ContainerProto{Id: c.ID.Proto(), NodeId: c.At.ID, NodeHttpAddress: proto.String(c.At.HTTP),
		Resource: rm.ResourceProto(c.Resource), Priority: &yarnpb.PriorityProto{Priority: proto.Int32(c.Priority)}, ContainerToken: tok.Proto()}
	if c.RequestID != -1 {
		out.AllocationRequestId = proto.Int64(c.RequestID)
	}
	if p := c.Placement; p != nil {
		out.AllocationTags = p.Tags
	}
	return out, nil
}

// requestIDField is an allocation_request_id as a proto field: unset for -1, YARN's default.
func requestIDField(id int64) *int64 {
	if id == -1 {
		return nil
	}
	return proto.Int64(id)
}

// preemptContainer carries out one preemption decision: a notice goes to the AM in its
// next allocate response (strict contract); a kill goes to the container's NodeManager,
// and the AM will see exit status PREEMPTED (-102), which MapReduce and Spark do not count
// as a task failure.
func (rm *Core) preemptContainer(p scheduler.Preemption) {
	rm.containers.PreemptContainer(p, rm.schedLog())
	if id, node, ok := rm.containers.EngineContainer(p.Container); ok && p.Kill {
		rm.health.preempt(rm.appQueueOp(node, id)) // a notice to the AM preempts nothing yet
	}
}

// EngineLabel is a node-label expression as the engine takes it: an unset one inherits
// (the application's, then the queue's default-node-label-expression: Java's
// DefaultAMSProcessor.allocate and SchedulerUtils.normalizeNodeLabelExpressionInRequest),
// an empty one is the default partition. Only an ANY request's expression counts: the
// Java scheduler places a host or rack request under its ANY request's label.
func EngineLabel(expr *string) string {
	switch {
	case expr == nil:
		return ""
	case strings.TrimSpace(*expr) == "":
		return scheduler.DefaultPartition
	}
	return strings.TrimSpace(*expr)
}

// AsksFrom converts an AM's resource requests for the engine, normalized as YARN does:
// memory rounded up to a multiple of the minimum allocation; vcores at least the minimum,
// or, under the DefaultResourceCalculator, one vcore and none of any other type (its
// normalize keeps memory alone: Resources.createResource(memory)).
func (rm *Core) AsksFrom(reqs []*yarnpb.ResourceRequestProto) []scheduler.Ask {
	out := make([]scheduler.Ask, 0, len(reqs))
	for _, r := range reqs {
		c := rm.normalized(r.GetCapability())
		label := ""
		if r.GetResourceName() == "*" {
			label = EngineLabel(r.NodeLabelExpression)
		}
		out = append(out, scheduler.Ask{Priority: r.GetPriority().GetPriority(), ResourceName: r.GetResourceName(), RequestID: r.GetAllocationRequestId(),
			Capability: c, Count: int(r.GetNumContainers()), RelaxLocality: r.GetRelaxLocality(), Label: label})
	}
	return out
}

// normalized is a requested capability as the engine takes it (see AsksFrom).
func (rm *Core) normalized(r *yarnpb.ResourceProto) scheduler.Resource {
	c := rm.ResourceOf(r)
	if step := int64(rm.settings.MinAllocationMB); step > 0 {
		c[scheduler.Memory] = max(step, (c[scheduler.Memory]+step-1)/step*step)
	}
	c[scheduler.VCores] = max(c[scheduler.VCores], int64(rm.settings.MinAllocationCore))
	if rm.engine.FitsByMemory() {
		c = scheduler.Resource{scheduler.Memory: c[scheduler.Memory], scheduler.VCores: 1}
	}
	return c
}

// DrainFor hands an attempt what it is owed, appending to b (an AllocateResponseProto's
// bytes) its new containers (allocated_containers entries, with tokens issued now, see
// appendAllocated), then its completed container statuses (completed_container_statuses
// entries); it returns the containers' nodes the attempt has had no NMToken for yet
// (AppendNMTokens writes them, after the fields that come before nm_tokens).
func (rm *Core) DrainFor(b []byte, att records.AttemptID) ([]byte, []*yarnpb.NodeIdProto) {
	now := rm.opts.Now()
	// Forgetting what the AM acknowledged and starting expiry clocks wait for the status
	// applier (reportQueue): allocate calls then hold the table's lock only briefly.
	allocated, completed, need, settle := rm.containers.DrainUnsettled(att, now)
	if settle.Size() > 0 {
		rm.reports.add(queuedReport{settle: &settle}, rm)
	}
	// A container entry is some 200 to 300 bytes (host names, user): room up front, not
	// the doublings of a growing slice.
	b = slices.Grow(b, len(allocated)*containerEntryBytes+len(completed)+len(need)*nmTokenEntryBytes)
	delivered := make([]scheduler.ContainerID, 0, len(allocated))
	for _, rc := range allocated {
		b = rm.appendAllocated(b, rc, now)
		delivered = append(delivered, rc.EngineID)
	}
	b = append(b, completed...)
	if len(delivered) > 0 {
		// The AM's next asks have seen these (see scheduler.Engine.Delivered).
		rm.engine.Delivered(EngineID(att.App), delivered)
	}
	return b, need
}

// TakePreemptions returns, once, the containers an attempt is asked to give back.
func (rm *Core) TakePreemptions(att records.AttemptID) *yarnpb.PreemptionMessageProto {
	return rm.containers.TakePreemptions(att)
}

// schedLog is the scheduling passes' logger: its lines are the scheduler's
// (org.apache.hadoop.yarn.server.resourcemanager.scheduler under /logLevel).
func (rm *Core) schedLog() *logrus.Entry { return rm.log.WithField("component", "scheduler") }
