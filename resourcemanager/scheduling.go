package resourcemanager

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/conf/resourcetypes"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
	"github.com/bobbin-yarn/bobbin/yarn/security"
)

// rmContainer is a container the engine allocated, as the RM tracks it. A busy RM holds
// tens of thousands, so it is kept to 128 bytes: what a report shows is built from it
// only when asked for, and the node's addresses are shared.
type rmContainer struct {
	engineID scheduler.ContainerID
	id       records.ContainerID
	at       *nodeAddr // where it runs
	priority int32
	am       bool // the AM's own container
	// preempted: killed by the scheduler, the AM hears PREEMPTED.
	preempted bool
	done      bool
	// awaitingAck: done, and its NodeManager is told to forget it only once the AM has
	// had its completed status (see drainFor).
	awaitingAck bool
	running     bool // its NodeManager has reported it running
	// handedOut is when the AM (or the AM launcher) got the container, in ms since the
	// epoch (0: not yet); until its NM reports it, it may expire unused.
	handedOut int64
	resource  scheduler.Resource
	created   int64 // ms since the epoch
	user      string
}

// nodeAddr is a node's identity as its containers show it, made once at registration
// and never modified, so containers share it without locks.
type nodeAddr struct {
	key  string              // "host:port"
	id   *yarnpb.NodeIdProto // shared with the node registry
	http string              // "host:httpPort"
}

// node is the key of c's node, "host:port".
func (c *rmContainer) node() string { return c.at.key }

// report is the container's getContainerReport view.
func (c *rmContainer) report(types resourcetypes.Types) *yarnpb.ContainerReportProto {
	state := yarnpb.ContainerStateProto_C_NEW
	if c.running {
		state = yarnpb.ContainerStateProto_C_RUNNING
	}
	return &yarnpb.ContainerReportProto{ContainerId: c.id.Proto(), Resource: types.Proto(c.resource[:types.Len()]), NodeId: proto.Clone(c.at.id).(*yarnpb.NodeIdProto),
		Priority: &yarnpb.PriorityProto{Priority: proto.Int32(c.priority)}, CreationTime: proto.Int64(c.created),
		ContainerState: state.Enum(), NodeHttpAddress: proto.String("http://" + c.at.http),
		LogUrl: proto.String(fmt.Sprintf("http://%s/node/containerlogs/%s/%s", c.at.http, c.id, c.user))}
}

// containerTable joins the engine's allocations to YARN containers and holds what each
// attempt and node is to be told on its next allocate or heartbeat.
type containerTable struct {
	types     resourcetypes.Types // for reports
	now       func() time.Time    // the RM's clock, for resource-seconds
	mu        sync.Mutex
	byEngine  map[scheduler.ContainerID]*rmContainer
	byID      map[records.ContainerID]*rmContainer
	seq       map[records.AttemptID]int64
	allocated map[records.AttemptID][]*rmContainer // allocated, not yet handed to the AM
	// completed are the finished containers whose status the attempt has not pulled
	// yet; sentToAM those whose status went out in the attempt's last allocate response.
	// As in the Java RM, a NodeManager forgets a completed container (and stops answering
	// getContainerStatuses for it) only once its AM has had the status and called again.
	completed map[records.AttemptID][]doneStatus
	sentToAM  map[records.AttemptID][]*rmContainer
	nmTokens  map[records.AttemptID]*nodeSet        // nodes each attempt has an NMToken for
	cleanup   map[string][]*yarnpb.ContainerIdProto // node -> containers to kill
	removed   map[string][]records.ContainerID      // node -> completed containers to forget
	preempt   map[records.AttemptID][]*yarnpb.ContainerIdProto
	// unstarted are containers handed out and not yet reported by their NodeManager.
	unstarted map[records.ContainerID]*rmContainer
	// starting are, per node, the live containers its NodeManager has not yet reported
	// running: a heartbeat's running statuses need looking up only while there are any,
	// and then in this small map rather than in byID.
	starting map[string]map[records.ContainerID]*rmContainer
	// ranOn is where each application had containers: those NMs are told when it ends.
	ranOn      map[records.ApplicationID]*nodeSet
	nodes      nodeIndex
	appCleanup map[string][]*yarnpb.ApplicationIdProto          // node -> finished applications
	signals    map[string][]*yarnpb.SignalContainerRequestProto // node -> signals from signalToContainer
	// spent is what each application's completed containers held, times how long (in
	// resource-milliseconds): the report's aggregate resource allocation.
	spent map[records.ApplicationID]*spentResources
}

// spentResources are resource-milliseconds, all and preempted.
type spentResources struct{ used, preempted scheduler.Resource }

// held is what c holds times how long it has held it until now (resource-milliseconds).
func (c *rmContainer) held(now int64) scheduler.Resource {
	ms := max(now-c.created, 0)
	var v scheduler.Resource
	for i, x := range c.resource {
		v[i] = x * ms
	}
	return v
}

func newContainerTable(types resourcetypes.Types, now func() time.Time) *containerTable {
	return &containerTable{types: types, now: now, spent: map[records.ApplicationID]*spentResources{}, byEngine: map[scheduler.ContainerID]*rmContainer{}, byID: map[records.ContainerID]*rmContainer{},
		seq: map[records.AttemptID]int64{}, allocated: map[records.AttemptID][]*rmContainer{},
		completed: map[records.AttemptID][]doneStatus{}, sentToAM: map[records.AttemptID][]*rmContainer{}, nmTokens: map[records.AttemptID]*nodeSet{},
		cleanup: map[string][]*yarnpb.ContainerIdProto{}, removed: map[string][]records.ContainerID{},
		preempt: map[records.AttemptID][]*yarnpb.ContainerIdProto{}, unstarted: map[records.ContainerID]*rmContainer{},
		starting: map[string]map[records.ContainerID]*rmContainer{},
		ranOn:    map[records.ApplicationID]*nodeSet{}, appCleanup: map[string][]*yarnpb.ApplicationIdProto{},
		signals: map[string][]*yarnpb.SignalContainerRequestProto{}}
}

// complete records a finished container once and queues its status for its attempt.
// It returns the status as the AM will see it and whether the container was still
// running.
func (t *containerTable) complete(id records.ContainerID, status *yarnpb.ContainerStatusProto) (*rmContainer, *yarnpb.ContainerStatusProto, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.completeLocked(id, status)
}

func (t *containerTable) completeLocked(id records.ContainerID, status *yarnpb.ContainerStatusProto) (*rmContainer, *yarnpb.ContainerStatusProto, bool) {
	c, ok := t.byID[id]
	if !ok || c.done {
		return c, status, false
	}
	c.done = true
	s := t.spent[id.Attempt.App]
	if s == nil {
		s = &spentResources{}
		t.spent[id.Attempt.App] = s
	}
	h := c.held(t.now().UnixMilli())
	s.used = s.used.Add(h)
	if c.preempted {
		s.preempted = s.preempted.Add(h)
	}
	delete(t.unstarted, id)
	t.startedLocked(c)
	if c.preempted {
		status = proto.Clone(status).(*yarnpb.ContainerStatusProto)
		status.ExitStatus = proto.Int32(exitcode.Preempted)
		status.Diagnostics = proto.String("Container preempted by scheduler")
	}
	t.completed[id.Attempt] = append(t.completed[id.Attempt], compactStatus(c, status))
	c.awaitingAck = true
	return c, status, true
}

// doneStatus is a completed container's status while it waits for its AM. Tens of
// thousands wait at a time on a busy RM, so the common status (id, exit status,
// diagnostics) is kept flat and the proto built when the AM pulls it; a status with
// anything more (a newer NM's fields) is kept whole.
type doneStatus struct {
	c    *rmContainer
	exit int32
	diag string
	full *yarnpb.ContainerStatusProto
}

func compactStatus(c *rmContainer, st *yarnpb.ContainerStatusProto) doneStatus {
	if st.Capability != nil || st.ExecutionType != nil || len(st.ContainerAttributes) > 0 || st.ContainerSubState != nil ||
		len(st.ProtoReflect().GetUnknown()) > 0 || st.GetState() != yarnpb.ContainerStateProto_C_COMPLETE {
		return doneStatus{c: c, full: st}
	}
	return doneStatus{c: c, exit: st.GetExitStatus(), diag: st.GetDiagnostics()}
}

func (d doneStatus) proto() *yarnpb.ContainerStatusProto {
	if d.full != nil {
		return d.full
	}
	return &yarnpb.ContainerStatusProto{ContainerId: d.c.id.Proto(), State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(),
		Diagnostics: proto.String(d.diag), ExitStatus: proto.Int32(d.exit)}
}

// forgetLocked tells c's NodeManager to forget it and drops it from the table; t.mu is
// held.
func (t *containerTable) forgetLocked(c *rmContainer) {
	c.awaitingAck = false
	t.removed[c.node()] = append(t.removed[c.node()], c.id)
	delete(t.byID, c.id)
	delete(t.byEngine, c.engineID)
}

// startedLocked takes c off its node's starting list; t.mu is held.
func (t *containerTable) startedLocked(c *rmContainer) {
	if m := t.starting[c.node()]; m != nil {
		delete(m, c.id)
		if len(m) == 0 {
			delete(t.starting, c.node())
		}
	}
}

// handOut starts a container's allocation-expiry clock.
func (t *containerTable) handOut(id records.ContainerID, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c, ok := t.byID[id]; ok && !c.done && c.handedOut == 0 {
		c.handedOut = now.UnixMilli()
		t.unstarted[id] = c
	}
}

// resourceOf reads a ResourceProto in the cluster's resource types. Types the cluster
// does not have are skipped, as the Java RM's ResourcePBImpl skips them; an amount in
// units that do not convert reads as 0 of that type.
func (rm *ResourceManager) resourceOf(r *yarnpb.ResourceProto) scheduler.Resource {
	var v scheduler.Resource
	if unknown, err := rm.types.FromProto(r, v[:rm.types.Len()]); err != nil || len(unknown) > 0 {
		rm.log.WithError(err).WithField("unknown_types", unknown).Debug("resource types skipped")
	}
	return v
}

// resourceProto writes a resource in the cluster's types (memory and vcores only when
// there are no others, as a 2.x peer expects).
func (rm *ResourceManager) resourceProto(r scheduler.Resource) *yarnpb.ResourceProto {
	return rm.types.Proto(r[:rm.types.Len()])
}

// scheduleLoop runs engine passes on a tick and whenever kicked, until ctx ends.
func (rm *ResourceManager) scheduleLoop(ctx context.Context) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-rm.kick:
		}
		rm.schedulePass()
	}
}

// kickScheduler asks for a pass soon (it never blocks).
func (rm *ResourceManager) kickScheduler() {
	select {
	case rm.kick <- struct{}{}:
	default:
	}
}

// schedulePass turns the engine's allocations into YARN containers with container tokens,
// queued for their attempts' next allocate.
func (rm *ResourceManager) schedulePass() {
	res := rm.engine.Schedule(0)
	// One log line per application and container size per pass, naming every container
	// and its node: at thousands of allocations a second a line per container cost the RM
	// a fifth of its CPU, and a grep for a container id still finds its line.
	type group struct {
		app string
		res scheduler.Resource
	}
	var (
		order []group
		lines map[group]*strings.Builder
	)
	for _, a := range res.Allocations {
		cid, err := rm.containerFor(a)
		if err != nil {
			rm.log.WithError(err).WithField("application", a.App).Warn("allocation dropped")
			rm.engine.Release(a.Container)
			continue
		}
		if lines == nil {
			lines = map[group]*strings.Builder{}
		}
		g := group{a.App, a.Resource}
		b, ok := lines[g]
		if !ok {
			b = &strings.Builder{}
			lines[g] = b
			order = append(order, g)
		} else {
			b.WriteByte(' ')
		}
		b.WriteString(cid.String())
		b.WriteByte('@')
		b.WriteString(a.Node)
	}
	for _, g := range order {
		rm.log.WithFields(map[string]any{"application": g.app, "memory_mb": g.res[scheduler.Memory], "vcores": g.res[scheduler.VCores],
			"containers": lines[g].String()}).Info("containers allocated")
	}
	for _, p := range res.Preemptions {
		rm.preemptContainer(p)
	}
}

// containerFor makes an engine allocation a YARN container with its token, queued for
// the attempt's next allocate (or launched, for an AM).
func (rm *ResourceManager) containerFor(a scheduler.Allocation) (records.ContainerID, error) {
	appID, err := records.ParseApplicationID(a.App)
	if err != nil {
		return records.ContainerID{}, err
	}
	var att records.AttemptID
	var user string
	live := false
	rm.apps.mu.Lock()
	if app, ok := rm.apps.apps[appID]; ok && app.attempt != nil && !app.finished() {
		att, user, live = app.attempt.id, app.user, true
	}
	rm.apps.mu.Unlock()
	if !live {
		return records.ContainerID{}, fmt.Errorf("no live attempt")
	}
	rm.nodes.mu.Lock()
	n, ok := rm.nodes.nodes[a.Node]
	var at *nodeAddr
	if ok {
		at = n.nodeAddr
	}
	rm.nodes.mu.Unlock()
	if !ok {
		return records.ContainerID{}, fmt.Errorf("node %s is gone", a.Node)
	}
	t := rm.containers
	t.mu.Lock()
	t.seq[att]++
	cid := records.ContainerID{Attempt: att, ID: t.seq[att]}
	t.mu.Unlock()
	now := rm.opts.Now()
	rc := &rmContainer{engineID: a.Container, id: cid, at: at, am: a.AM, resource: a.Resource, priority: a.Priority,
		created: now.UnixMilli(), user: user}
	var amContainer *yarnpb.ContainerProto
	if a.AM {
		if amContainer, err = rm.containerProto(rc); err != nil {
			return records.ContainerID{}, err
		}
	}
	t.mu.Lock()
	t.byEngine[a.Container], t.byID[cid] = rc, rc
	if t.starting[a.Node] == nil {
		t.starting[a.Node] = map[records.ContainerID]*rmContainer{}
	}
	t.starting[a.Node][cid] = rc
	if t.ranOn[appID] == nil {
		t.ranOn[appID] = &nodeSet{}
	}
	t.ranOn[appID].add(t.nodes.of(a.Node))
	if !a.AM {
		t.allocated[att] = append(t.allocated[att], rc)
	}
	t.mu.Unlock()
	rm.metrics.containerAllocated()
	if a.AM {
		rm.launchAM(att, amContainer, amContainer.GetContainerToken())
	}
	return cid, nil
}

// containerProto is the container as its AM gets it, with a container token issued now.
// It is built when the container is handed out, not when it is allocated, so the RM does
// not hold thousands of signed protos while AMs have yet to call.
func (rm *ResourceManager) containerProto(c *rmContainer) (*yarnpb.ContainerProto, error) {
	now := rm.opts.Now()
	tok, err := rm.containerTokens.Issue(&yarnpb.ContainerTokenIdentifierProto{
		ContainerId: c.id.Proto(), NmHostAddr: proto.String(c.at.key), AppSubmitter: proto.String(c.user),
		Resource: rm.resourceProto(c.resource), ExpiryTimeStamp: proto.Int64(now.Add(10 * time.Minute).UnixMilli()),
		Priority: &yarnpb.PriorityProto{Priority: proto.Int32(c.priority)}, CreationTime: proto.Int64(now.UnixMilli()),
	})
	if err != nil {
		return nil, fmt.Errorf("container token for %s: %w", c.id, err)
	}
	return &yarnpb.ContainerProto{Id: c.id.Proto(), NodeId: c.at.id, NodeHttpAddress: proto.String(c.at.http),
		Resource: rm.resourceProto(c.resource), Priority: &yarnpb.PriorityProto{Priority: proto.Int32(c.priority)}, ContainerToken: tok.Proto()}, nil
}

// preemptContainer carries out one preemption decision: a notice goes to the AM in its
// next allocate response (strict contract); a kill goes to the container's NodeManager,
// and the AM will see exit status PREEMPTED (-102), which MapReduce and Spark do not count
// as a task failure.
func (rm *ResourceManager) preemptContainer(p scheduler.Preemption) {
	t := rm.containers
	t.mu.Lock()
	defer t.mu.Unlock()
	c, ok := t.byEngine[p.Container]
	if !ok || c.done {
		return
	}
	log := rm.log.WithFields(map[string]any{"container": c.id.String(), "node": c.node()})
	if !p.Kill {
		t.preempt[c.id.Attempt] = append(t.preempt[c.id.Attempt], c.id.Proto())
		log.Info("container to be preempted: AM notified")
		return
	}
	c.preempted = true
	t.cleanup[c.node()] = append(t.cleanup[c.node()], c.id.Proto())
	log.Info("preempted container killed")
}

// asksFrom converts an AM's resource requests for the engine, normalized as YARN does:
// memory rounded up to a multiple of the minimum allocation, vcores at least the minimum.
func (rm *ResourceManager) asksFrom(reqs []*yarnpb.ResourceRequestProto) []scheduler.Ask {
	out := make([]scheduler.Ask, 0, len(reqs))
	for _, r := range reqs {
		c := rm.resourceOf(r.GetCapability())
		if step := int64(rm.settings.MinAllocationMB); step > 0 {
			c[scheduler.Memory] = max(step, (c[scheduler.Memory]+step-1)/step*step)
		}
		c[scheduler.VCores] = max(c[scheduler.VCores], int64(rm.settings.MinAllocationCore))
		out = append(out, scheduler.Ask{Priority: r.GetPriority().GetPriority(), ResourceName: r.GetResourceName(),
			Capability: c, Count: int(r.GetNumContainers()), RelaxLocality: r.GetRelaxLocality(),
			Label: r.GetNodeLabelExpression()})
	}
	return out
}

// drainFor hands an attempt what it is owed: new containers, NMTokens for their nodes it
// has not had yet, and completed container statuses.
func (rm *ResourceManager) drainFor(att records.AttemptID, user string) ([]*yarnpb.ContainerProto, []*yarnpb.NMTokenProto, []*yarnpb.ContainerStatusProto) {
	t := rm.containers
	t.mu.Lock()
	allocated, done := t.allocated[att], t.completed[att]
	delete(t.allocated, att)
	delete(t.completed, att)
	// This call acknowledges the completed statuses the last response carried.
	acked := t.sentToAM[att]
	for _, c := range acked {
		t.forgetLocked(c)
	}
	var completed []*yarnpb.ContainerStatusProto
	if len(done) > 0 {
		completed = make([]*yarnpb.ContainerStatusProto, len(done))
		acked = acked[:0]
		for i, d := range done {
			completed[i] = d.proto()
			acked = append(acked, d.c)
		}
		t.sentToAM[att] = acked
	} else {
		delete(t.sentToAM, att)
	}
	sent := t.nmTokens[att]
	if sent == nil {
		sent = &nodeSet{}
		t.nmTokens[att] = sent
	}
	var need []*yarnpb.NodeIdProto
	now := rm.opts.Now()
	for _, rc := range allocated {
		if !rc.done && rc.handedOut == 0 {
			rc.handedOut = now.UnixMilli()
			t.unstarted[rc.id] = rc
		}
		if sent.add(t.nodes.of(rc.node())) {
			need = append(need, rc.at.id)
		}
	}
	t.mu.Unlock()
	containers := make([]*yarnpb.ContainerProto, 0, len(allocated))
	for _, rc := range allocated {
		c, err := rm.containerProto(rc)
		if err != nil {
			rm.log.WithError(err).WithField("container", rc.id.String()).Error("container not handed out")
			continue
		}
		containers = append(containers, c)
	}
	var tokens []*yarnpb.NMTokenProto
	issuer := security.NMTokens{Keys: rm.nmKeys}
	for _, n := range need {
		tok, err := issuer.Issue(att, n, user)
		if err != nil {
			continue
		}
		tokens = append(tokens, &yarnpb.NMTokenProto{NodeId: n, Token: tok.Proto()})
	}
	return containers, tokens, completed
}

// checkRelease refuses releases of containers that are not the attempt's, as the Java RM
// does with InvalidContainerReleaseException.
func checkRelease(att records.AttemptID, ids []*yarnpb.ContainerIdProto) error {
	for _, p := range ids {
		if id := records.ContainerIDFromProto(p); id.Attempt != att {
			return rpc.Errorf(exceptions.InvalidContainerRelease, "Cannot release container : %s not belonging to this application attempt : %s", id, att)
		}
	}
	return nil
}

// release ends containers an AM gave back: the engine frees them, the AM hears ABORTED,
// and their NodeManagers are told to kill them.
func (rm *ResourceManager) release(ids []*yarnpb.ContainerIdProto) {
	for _, p := range ids {
		id := records.ContainerIDFromProto(p)
		c, _, fresh := rm.containers.complete(id, &yarnpb.ContainerStatusProto{ContainerId: p, State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(),
			ExitStatus: proto.Int32(exitcode.Aborted), Diagnostics: proto.String("Container released by application")})
		if !fresh {
			continue
		}
		rm.engine.Release(c.engineID)
		rm.metrics.containerReleased()
		rm.containers.mu.Lock()
		rm.containers.cleanup[c.node()] = append(rm.containers.cleanup[c.node()], p)
		rm.containers.mu.Unlock()
	}
}

// nodeStatuses takes a NodeManager's container statuses: running ones stop their
// allocation-expiry clock; completed ones free their room and go to their attempts, and
// the NM is told to forget them on the next heartbeat.
func (rm *ResourceManager) nodeStatuses(node string, statuses []*yarnpb.ContainerStatusProto) {
	t := rm.containers
	type done struct {
		c     *rmContainer
		final *yarnpb.ContainerStatusProto
	}
	var (
		finished []done
		release  []scheduler.ContainerID
	)
	// The whole heartbeat is taken under one hold of the table's lock and one of the
	// engine's: thousands of heartbeats a second must not queue on them per container.
	t.mu.Lock()
	starting := t.starting[node]
	for _, st := range statuses {
		if st.GetState() != yarnpb.ContainerStateProto_C_COMPLETE && len(starting) == 0 {
			continue
		}
		id := records.ContainerIDFromProto(st.GetContainerId())
		if st.GetState() == yarnpb.ContainerStateProto_C_COMPLETE {
			c, final, fresh := t.completeLocked(id, st)
			if fresh {
				finished = append(finished, done{c, final})
				release = append(release, c.engineID)
			}
			// A completed container the AM still has to hear of is acknowledged after it
			// has (drainFor); any other, known or not, at once, so NMs do not keep
			// reporting containers of applications the RM has forgotten.
			switch {
			case c == nil:
				t.removed[node] = append(t.removed[node], id)
			case c.awaitingAck:
				// Only the attempt's acknowledgement list holds it now.
				delete(t.byID, id)
				delete(t.byEngine, c.engineID)
			default:
				t.forgetLocked(c)
			}
			starting = t.starting[node]
			continue
		}
		// Every heartbeat repeats every running container; only those not yet seen
		// running matter.
		c, ok := starting[id]
		if !ok {
			continue
		}
		delete(t.unstarted, c.id)
		if st.GetState() == yarnpb.ContainerStateProto_C_RUNNING {
			c.running = true
			t.startedLocked(c)
			starting = t.starting[node]
		}
	}
	t.mu.Unlock()
	if len(finished) == 0 {
		return
	}
	rm.engine.ReleaseAll(release)
	// One line per heartbeat: "container:exit_status" for each container it completed.
	var b strings.Builder
	for i, f := range finished {
		rm.metrics.containerCompleted(f.final.GetExitStatus())
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(f.c.id.String())
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(int(f.final.GetExitStatus())))
		if f.c.am {
			rm.amExited(f.c.id, f.final)
		}
	}
	rm.log.WithFields(map[string]any{"node": node, "containers": b.String()}).Info("containers completed")
	rm.kickScheduler()
}

// signal queues a signal for a live container's NodeManager (3.x containers_to_signal);
// it returns the container's node, or false when the container is not live.
func (t *containerTable) signal(id records.ContainerID, cmd yarnpb.SignalContainerCommandProto) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c, ok := t.byID[id]
	if !ok || c.done {
		return "", false
	}
	t.signals[c.node()] = append(t.signals[c.node()], &yarnpb.SignalContainerRequestProto{ContainerId: id.Proto(), Command: cmd.Enum()})
	return c.node(), true
}

// nodeDirectives returns, once, what node must kill, signal and may forget, and which
// applications ended.
func (rm *ResourceManager) nodeDirectives(node string) (cleanup, removed []*yarnpb.ContainerIdProto, apps []*yarnpb.ApplicationIdProto, signals []*yarnpb.SignalContainerRequestProto) {
	t := rm.containers
	t.mu.Lock()
	defer t.mu.Unlock()
	signals = t.signals[node]
	delete(t.signals, node)
	cleanup, apps = t.cleanup[node], t.appCleanup[node]
	if ids := t.removed[node]; len(ids) > 0 {
		removed = make([]*yarnpb.ContainerIdProto, len(ids))
		for i, id := range ids {
			removed[i] = id.Proto()
		}
	}
	delete(t.cleanup, node)
	delete(t.removed, node)
	delete(t.appCleanup, node)
	return cleanup, removed, apps, signals
}

// nodeLost completes the containers of a lost (or decommissioned, or restarted) node as
// ABORTED; an AM container among them ends its attempt without counting as a failure.
func (rm *ResourceManager) nodeLost(node, why string) {
	lost, err := rm.engine.RemoveNode(node)
	if err != nil {
		return
	}
	rm.containers.mu.Lock()
	var ids []records.ContainerID
	for _, e := range lost {
		if c, ok := rm.containers.byEngine[e]; ok {
			ids = append(ids, c.id)
		}
	}
	rm.containers.mu.Unlock()
	sort.Slice(ids, func(i, j int) bool { return ids[i].ID < ids[j].ID })
	for _, id := range ids {
		c, final, fresh := rm.containers.complete(id, &yarnpb.ContainerStatusProto{ContainerId: id.Proto(), State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(),
			ExitStatus: proto.Int32(exitcode.Aborted), Diagnostics: proto.String(why)})
		if fresh && c.am {
			rm.amExited(id, final)
		}
	}
}

// hostsToNodes maps blacklisted host names to the node ids on them.
func (rm *ResourceManager) hostsToNodes(hosts []string) []string {
	rm.nodes.mu.Lock()
	defer rm.nodes.mu.Unlock()
	var out []string
	for _, h := range hosts {
		for k, n := range rm.nodes.nodes {
			if n.id.GetHost() == h || strings.EqualFold(k, h) {
				out = append(out, k)
			}
		}
	}
	return out
}

// endApp ends a finished, failed or killed application: the engine forgets it, its
// containers that still run are killed on their NodeManagers, the NodeManagers it ran on
// are told it ended, its AMRMTokens stop working, and the oldest finished applications
// beyond yarn.resourcemanager.max-completed-applications are forgotten.
func (rm *ResourceManager) endApp(id records.ApplicationID) {
	rm.engine.RemoveApp(id.String())
	rm.cleanupContainers(func(cid records.ContainerID) bool { return cid.Attempt.App == id })
	t := rm.containers
	t.mu.Lock()
	if ran := t.ranOn[id]; ran != nil {
		ran.each(func(i int) {
			node := t.nodes.keys[i]
			t.appCleanup[node] = append(t.appCleanup[node], id.Proto())
		})
	}
	delete(t.ranOn, id)
	t.mu.Unlock()
	for _, att := range rm.apps.attemptIDs(id) {
		rm.amrm.Revoke(att)
	}
	for _, gone := range rm.apps.retire(id, rm.settings.MaxCompletedApps) {
		rm.forgetApp(gone)
	}
}

// cleanupContainers kills the still-running containers that match on their NodeManagers.
func (rm *ResourceManager) cleanupContainers(match func(records.ContainerID) bool) {
	t := rm.containers
	t.mu.Lock()
	defer t.mu.Unlock()
	for cid, c := range t.byID {
		if match(cid) && !c.done {
			c.done = true
			delete(t.unstarted, cid)
			t.startedLocked(c)
			t.cleanup[c.node()] = append(t.cleanup[c.node()], cid.Proto())
		}
	}
}

// forgetAttempt drops what was queued for an attempt that ended.
func (rm *ResourceManager) forgetAttempt(att records.AttemptID) {
	t := rm.containers
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dropAttemptLocked(att)
}

// dropAttemptLocked forgets what was queued for an attempt; t.mu is held.
func (t *containerTable) dropAttemptLocked(att records.AttemptID) {
	// No AM will pull these any more: their NodeManagers may forget them now.
	for _, c := range t.sentToAM[att] {
		t.forgetLocked(c)
	}
	for _, d := range t.completed[att] {
		t.forgetLocked(d.c)
	}
	delete(t.sentToAM, att)
	delete(t.allocated, att)
	delete(t.completed, att)
	delete(t.nmTokens, att)
	delete(t.preempt, att)
	delete(t.seq, att)
}

// forgetApp drops every trace of an application the registry no longer keeps.
func (rm *ResourceManager) forgetApp(id records.ApplicationID) {
	t := rm.containers
	t.mu.Lock()
	defer t.mu.Unlock()
	for cid, c := range t.byID {
		if cid.Attempt.App == id {
			delete(t.byID, cid)
			delete(t.byEngine, c.engineID)
			delete(t.unstarted, cid)
			t.startedLocked(c)
		}
	}
	for att := range t.seq {
		if att.App == id {
			t.dropAttemptLocked(att)
		}
	}
	delete(t.spent, id)
}

// liveReports reports the live containers of an attempt (as the Java RM does: finished
// containers are the history server's business).
func (t *containerTable) liveReports(att records.AttemptID) []*yarnpb.ContainerReportProto {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*yarnpb.ContainerReportProto
	for id, c := range t.byID {
		if id.Attempt == att && !c.done {
			out = append(out, c.report(t.types))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetContainerId().GetId() < out[j].GetContainerId().GetId() })
	return out
}

// liveReport reports one live container.
func (t *containerTable) liveReport(id records.ContainerID) (*yarnpb.ContainerReportProto, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c, ok := t.byID[id]
	if !ok || c.done {
		return nil, false
	}
	return c.report(t.types), true
}

// usage is what an application's (or a node's) live containers hold; for an application
// also the resource-milliseconds it has used, all and preempted.
type usage struct {
	containers       int32
	used             scheduler.Resource
	spent, preempted scheduler.Resource
}

// liveUsage sums the live containers of the given applications in one pass over the
// table (a report or a whole application list costs one scan, not one per application).
func (t *containerTable) liveUsage(apps map[records.ApplicationID]bool) map[records.ApplicationID]usage {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[records.ApplicationID]usage, len(apps))
	now := t.now().UnixMilli()
	for id, c := range t.byID {
		if app := id.Attempt.App; apps[app] && !c.done {
			u := out[app]
			u.containers++
			u.used = u.used.Add(c.resource)
			u.spent = u.spent.Add(c.held(now))
			out[app] = u
		}
	}
	for app := range apps {
		if s := t.spent[app]; s != nil {
			u := out[app]
			u.spent, u.preempted = u.spent.Add(s.used), u.preempted.Add(s.preempted)
			out[app] = u
		}
	}
	return out
}

// nodeUsage sums the live containers on each node, by node key.
func (t *containerTable) nodeUsage() map[string]usage {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[string]usage{}
	for _, c := range t.byID {
		if !c.done {
			u := out[c.node()]
			u.containers++
			u.used = u.used.Add(c.resource)
			out[c.node()] = u
		}
	}
	return out
}

// takePreemptions returns, once, the containers an attempt is asked to give back.
func (rm *ResourceManager) takePreemptions(att records.AttemptID) *yarnpb.PreemptionMessageProto {
	t := rm.containers
	t.mu.Lock()
	defer t.mu.Unlock()
	ids := t.preempt[att]
	delete(t.preempt, att)
	if len(ids) == 0 {
		return nil
	}
	strict := &yarnpb.StrictPreemptionContractProto{}
	for _, id := range ids {
		strict.Container = append(strict.Container, &yarnpb.PreemptionContainerProto{Id: id})
	}
	return &yarnpb.PreemptionMessageProto{StrictContract: strict}
}
