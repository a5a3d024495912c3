package resourcemanager

import (
	"fmt"
	"sort"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/conf/resourcetypes"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
	"github.com/sirupsen/logrus"
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

// preemptContainer applies one of the engine's preemptions: a notice for the AM's next
// allocate answer, or the kill, sent to the container's NodeManager.
func (t *containerTable) preemptContainer(p scheduler.Preemption, logger *logrus.Entry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c, ok := t.byEngine[p.Container]
	if !ok || c.done {
		return
	}
	log := logger.WithFields(map[string]any{"container": c.id.String(), "node": c.node()})
	if !p.Kill {
		t.preempt[c.id.Attempt] = append(t.preempt[c.id.Attempt], c.id.Proto())
		log.Info("container to be preempted: AM notified")
		return
	}
	c.preempted = true
	t.cleanup[c.node()] = append(t.cleanup[c.node()], c.id.Proto())
	log.Info("preempted container killed")
}

// takePreemptions is the preemption message for an attempt's allocate answer (nil: none).
func (t *containerTable) takePreemptions(att records.AttemptID) *yarnpb.PreemptionMessageProto {
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

// nextID is the next container id of an attempt.
func (t *containerTable) nextID(att records.AttemptID) records.ContainerID {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.seq[att]++
	return records.ContainerID{Attempt: att, ID: t.seq[att]}
}

// add tracks a container the engine placed on node: starting there until its NodeManager
// reports it, and (unless it is an AM's) queued for its attempt's next allocate answer.
func (t *containerTable) add(rc *rmContainer, node string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.byEngine[rc.engineID], t.byID[rc.id] = rc, rc
	if t.starting[node] == nil {
		t.starting[node] = map[records.ContainerID]*rmContainer{}
	}
	t.starting[node][rc.id] = rc
	appID := rc.id.Attempt.App
	if t.ranOn[appID] == nil {
		t.ranOn[appID] = &nodeSet{}
	}
	t.ranOn[appID].add(t.nodes.of(node))
	if !rc.am {
		t.allocated[rc.id.Attempt] = append(t.allocated[rc.id.Attempt], rc)
	}
}

// drain takes what an attempt's allocate answer carries: its newly allocated containers
// (handed out now: they may expire unused from here), its completed statuses (which the
// next allocate acknowledges), and the nodes it needs NMTokens for.
func (t *containerTable) drain(att records.AttemptID, now time.Time) (allocated []*rmContainer, completed []*yarnpb.ContainerStatusProto, need []*yarnpb.NodeIdProto) {
	t.mu.Lock()
	defer t.mu.Unlock()
	allocated, done := t.allocated[att], t.completed[att]
	delete(t.allocated, att)
	delete(t.completed, att)
	// This call acknowledges the completed statuses the last response carried.
	acked := t.sentToAM[att]
	for _, c := range acked {
		t.forgetLocked(c)
	}
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
	for _, rc := range allocated {
		if !rc.done && rc.handedOut == 0 {
			rc.handedOut = now.UnixMilli()
			t.unstarted[rc.id] = rc
		}
		if sent.add(t.nodes.of(rc.node())) {
			need = append(need, rc.at.id)
		}
	}
	return allocated, completed, need
}

// cleanupContainers kills the still-running containers that match on their NodeManagers.
func (t *containerTable) cleanupContainers(match func(records.ContainerID) bool) {
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
func (t *containerTable) forgetAttempt(att records.AttemptID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dropAttemptLocked(att)
}

// forgetApp drops every trace of an application the registry no longer keeps.
func (t *containerTable) forgetApp(id records.ApplicationID) {
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

// appEnded tells every NodeManager the application ran on that it ended (their next
// heartbeat answers carry it), so they clean up its files and services.
func (t *containerTable) appEnded(id records.ApplicationID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if ran := t.ranOn[id]; ran != nil {
		ran.each(func(i int) {
			node := t.nodes.keys[i]
			t.appCleanup[node] = append(t.appCleanup[node], id.Proto())
		})
	}
	delete(t.ranOn, id)
}

// forgetNMTokens forgets which nodes each attempt has NMTokens for, so the next answers
// carry tokens of the newly activated key.
func (t *containerTable) forgetNMTokens() {
	t.mu.Lock()
	defer t.mu.Unlock()
	clear(t.nmTokens)
}
