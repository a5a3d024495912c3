package rmstate

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/conf/resourcetypes"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
)

// Container is a container the engine allocated, as the RM tracks it. A busy RM holds
// tens of thousands, so it is kept to 136 bytes: what a report shows is built from it
// only when asked for, and the node's addresses are shared.
type Container struct {
	EngineID scheduler.ContainerID
	ID       records.ContainerID
	At       *NodeAddr // where it runs
	Priority int32
	// appIdx is the container's place in its application's list (containerIndex)
	// while tracked is set: the index holds it.
	appIdx int32
	// nodeIdx is its node's number in Containers.nodes (for the NMToken sets, and
	// Containers.startingOn).
	nodeIdx int32
	tracked bool
	// starting: live, and its NodeManager has not yet reported it running (in
	// Containers.startingOn, at startIdx).
	starting bool
	startIdx int32
	AM       bool // the AM's own container
	// preempted: killed by the scheduler, the AM hears PREEMPTED.
	preempted bool
	// phase is where it is in its life (containerlifecycle.go).
	phase containerPhase
	// unstarted: handed out and its expiry clock running (in Containers.handOuts).
	unstarted bool
	reported  bool // its NodeManager has reported it, in any state
	// HandedOut is when the AM (or the AM launcher) got the container, in ms since the
	// epoch (0: not yet); until its NM reports it, it may expire unused.
	handedOut int64
	Resource  scheduler.Resource
	Created   int64 // ms since the epoch
	User      string
	// RequestID is the allocation_request_id of the ask it was allocated for, which its
	// AM finds on the container (-1, YARN's default, is not written); Placement the
	// SchedulingRequest it was allocated for (nil: a ResourceRequest), whose allocation
	// tags the container carries.
	RequestID int64
	Placement *scheduler.Placement
}

// PlacementTags are the allocation tags c carries (none for a ResourceRequest's).
func (c *Container) PlacementTags() []string {
	if c.Placement == nil {
		return nil
	}
	return c.Placement.Tags
}

// NodeAddr is a node's identity as its containers show it, made once at registration
// and never modified, so containers share it without locks.
type NodeAddr struct {
	Key  string              // "host:port"
	ID   *yarnpb.NodeIdProto // shared with the node registry
	HTTP string              // "host:httpPort"
}

// Node is the key of c's node, "host:port".
func (c *Container) Node() string { return c.At.Key }

// report is the container's getContainerReport view.
func (c *Container) report(types resourcetypes.Types) *yarnpb.ContainerReportProto {
	state := yarnpb.ContainerStateProto_C_NEW
	if c.phase == cRunning {
		state = yarnpb.ContainerStateProto_C_RUNNING
	}
	return &yarnpb.ContainerReportProto{ContainerId: c.ID.Proto(), Resource: types.Proto(c.Resource[:types.Len()]), NodeId: proto.Clone(c.At.ID).(*yarnpb.NodeIdProto),
		Priority: &yarnpb.PriorityProto{Priority: proto.Int32(c.Priority)}, CreationTime: proto.Int64(c.Created),
		ContainerState: state.Enum(), NodeHttpAddress: proto.String("http://" + c.At.HTTP),
		LogUrl: proto.String(fmt.Sprintf("http://%s/node/containerlogs/%s/%s", c.At.HTTP, c.ID, c.User))}
}

// Containers joins the engine's allocations to YARN containers and holds what each
// attempt and node is to be told on its next allocate or heartbeat.
type Containers struct {
	types resourcetypes.Types // for reports
	now   func() time.Time    // the RM's clock, for resource-seconds
	mu    sync.Mutex
	// index holds the tracked containers by id, by engine id and by application: an
	// application's end, its reports and its usage cost its own containers, not a scan
	// of every container of the cluster (hundreds of applications ending among 100,000
	// containers).
	index containerIndex
	seq   map[records.AttemptID]int64
	epoch int64 // the RM's epoch, in the top bits of every container id it makes
	// orphans are, per node, running containers of an earlier RM's that it is killing.
	orphans map[string]map[records.ContainerID]bool
	// boxes hold what each attempt's next allocate answer takes.
	boxes   mailboxes
	orders  nodeOrders // what each node's next heartbeat answer says
	preempt map[records.AttemptID][]*yarnpb.ContainerIdProto
	// preempting is len(preempt), read without the lock.
	preempting atomic.Int64
	// Unstarted are containers handed out and not yet reported by their NodeManager.
	// handOuts are the unstarted containers (nUnstarted of them, handed out and not yet
	// reported by their NodeManager) in hand-out order, with some that started
	// since (dropped when met, or when they outnumber the unstarted): the expiry check
	// reads them from the front instead of scanning every unstarted container under the
	// lock every second (tens of thousands at 50,000 containers a second).
	handOuts   []*Container
	nUnstarted int
	// startingOn are, by node number, the live containers its NodeManager has not yet
	// reported running (Container.starting; startIdx is each one's place): a heartbeat's
	// running statuses need looking up only while there are any, and only those that
	// may be among them (idFilter).
	startingOn [][]*Container
	// ranOn is where each application had containers: those NMs are told when it ends.
	ranOn map[records.ApplicationID]*nodeSet
	nodes nodeIndex
	// spent is what each application's completed containers held, times how long (in
	// resource-milliseconds): the report's aggregate resource allocation.
	spent map[records.ApplicationID]*spentResources
	// queueOf is each application's queue (SetQueue), for ends: what QueueMetrics'
	// Aggregate* counters report, kept by queue since the RM started.
	queueOf map[records.ApplicationID]string
	ends    map[string]*QueueEnds
}

// QueueEnds count a leaf queue's containers that ended since the RM started, and of them
// those the scheduler preempted, with what they held times how long (resource-seconds,
// each container's rounded down, as Java's QueueMetrics add them).
type QueueEnds struct {
	Ended, Preempted int64
	PreemptedSeconds scheduler.Resource
}

// spentResources are resource-milliseconds, all and preempted.
type spentResources struct{ used, preempted scheduler.Resource }

// held is what c holds times how long it has held it until now (resource-milliseconds).
func (c *Container) held(now int64) scheduler.Resource {
	ms := max(now-c.Created, 0)
	var v scheduler.Resource
	for i, x := range c.Resource {
		v[i] = x * ms
	}
	return v
}

// SetEpoch sets the RM's epoch (the state store's restart count): container ids made from
// now on carry it (container_e<epoch>_...), so they never repeat an earlier run's.
func (t *Containers) SetEpoch(epoch int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.epoch = epoch
}

func NewContainers(types resourcetypes.Types, now func() time.Time) *Containers {
	return &Containers{types: types, now: now, spent: map[records.ApplicationID]*spentResources{},
		queueOf: map[records.ApplicationID]string{}, ends: map[string]*QueueEnds{},
		index:   newContainerIndex(),
		seq:     map[records.AttemptID]int64{},
		orders:  newNodeOrders(),
		preempt: map[records.AttemptID][]*yarnpb.ContainerIdProto{},
		ranOn:   map[records.ApplicationID]*nodeSet{},
		orphans: map[string]map[records.ContainerID]bool{}}
}

// Complete records a finished container once and queues its status for its attempt.
// It returns the status as the AM will see it and whether the container was still
// running.
func (t *Containers) Complete(id records.ContainerID, status *yarnpb.ContainerStatusProto) (*Container, *yarnpb.ContainerStatusProto, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c, d, fresh := t.completeLocked(id, compactStatus(status), true)
	if !fresh {
		return c, status, false
	}
	return c, d.status(), true
}

// accountLocked adds what a container that just ended held, for how long, to its
// application's resource-seconds (and preempted resource-seconds), and counts its end to
// its queue unless it ended while the RM was down (counted as an end, as Java's
// recovery does not, it would be one its queue never counted allocated); t.mu is held.
func (t *Containers) accountLocked(c *Container, queued bool) {
	app := c.ID.Attempt.App
	s := t.spent[app]
	if s == nil {
		s = &spentResources{}
		t.spent[app] = s
	}
	h := c.held(t.now().UnixMilli())
	s.used = s.used.Add(h)
	if c.preempted {
		s.preempted = s.preempted.Add(h)
	}
	if !queued {
		return
	}
	e := t.endsLocked(t.queueOf[app])
	e.Ended++
	if c.preempted {
		e.Preempted++
		for i, ms := range h {
			e.PreemptedSeconds[i] += ms / 1000
		}
	}
}

// SetQueue says which queue app is in (submitted or recovered): its containers' ends
// count to that queue.
func (t *Containers) SetQueue(app records.ApplicationID, queue string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.queueOf[app] = queue
}

// MoveQueue moves app to queue, as Java's SchedulerApplicationAttempt.move re-accounts an
// application that moves: its live containers end in the queue it leaves (counted here)
// and are allocated again in the one it joins (live, for the caller to count).
func (t *Containers) MoveQueue(app records.ApplicationID, queue string) (live int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	old := t.queueOf[app]
	t.queueOf[app] = queue
	for _, c := range t.index.list(app) {
		if !c.done() {
			live++
		}
	}
	if live > 0 {
		t.endsLocked(old).Ended += int64(live)
	}
	return live
}

// endsLocked is queue's count of ends, made at its first; t.mu is held.
func (t *Containers) endsLocked(queue string) *QueueEnds {
	e := t.ends[queue]
	if e == nil {
		e = &QueueEnds{}
		t.ends[queue] = e
	}
	return e
}

// QueueEnds copies every queue's container ends (those of applications whose queue was
// never set are under "").
func (t *Containers) QueueEnds() map[string]QueueEnds {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]QueueEnds, len(t.ends))
	for q, e := range t.ends {
		out[q] = *e
	}
	return out
}

// completeLocked records a finished container once and queues its status d for its
// attempt; it returns the status as the AM will see it and whether the container was
// still running; t.mu is held. queued: its end counts to its queue (accountLocked).
func (t *Containers) completeLocked(id records.ContainerID, d doneStatus, queued bool) (*Container, doneStatus, bool) {
	c := t.index.get(id)
	if c == nil || c.move(cEnded) != nil {
		return c, d, false
	}
	t.accountLocked(c, queued)
	t.clockStoppedLocked(c)
	t.startedLocked(c)
	d.c = c
	if c.preempted {
		d = d.preempted()
	}
	t.boxes.of(id.Attempt).postDone(d)
	return c, d, true
}

// forgetLocked tells c's NodeManager to forget it and drops it from the table; t.mu is
// held.
func (t *Containers) forgetLocked(c *Container) {
	c.move(cAcknowledged) // refused for one forgotten again, or never done: it is forgotten all the same
	t.orders.forget(c.Node(), c.ID)
	t.untrackLocked(c)
}

// untrackLocked takes c out of the table (once: a container can be forgotten both when
// its NodeManager reports it complete and when its AM acknowledges it); t.mu is held.
func (t *Containers) untrackLocked(c *Container) { t.index.remove(c) }

// startingLocked lists c as starting on its node (c.nodeIdx is set); t.mu is held.
func (t *Containers) startingLocked(c *Container) {
	if n := int(c.nodeIdx); n >= len(t.startingOn) {
		t.startingOn = append(t.startingOn, make([][]*Container, n+1-len(t.startingOn))...)
	}
	list := t.startingOn[c.nodeIdx]
	c.starting, c.startIdx = true, int32(len(list))
	t.startingOn[c.nodeIdx] = append(list, c)
}

// startingList is what is starting on node number i (the table's own slice); t.mu is
// held.
func (t *Containers) startingList(i int) []*Container {
	if i < len(t.startingOn) {
		return t.startingOn[i]
	}
	return nil
}

// startedLocked takes c off its node's starting list; t.mu is held.
func (t *Containers) startedLocked(c *Container) {
	if !c.starting {
		return
	}
	c.starting = false
	list := t.startingOn[c.nodeIdx]
	last := list[len(list)-1]
	list[c.startIdx], last.startIdx = last, c.startIdx
	list[len(list)-1] = nil
	t.startingOn[c.nodeIdx] = list[:len(list)-1]
}

// HandOut starts a container's allocation-expiry clock.
func (t *Containers) HandOut(id records.ContainerID, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c := t.index.get(id); c != nil && !c.done() && c.handedOut == 0 {
		t.handOutLocked(c, now)
	}
}

// handOutLocked starts c's allocation-expiry clock; t.mu is held.
func (t *Containers) handOutLocked(c *Container, now time.Time) {
	c.handedOut = now.UnixMilli()
	c.unstarted = true
	t.nUnstarted++
	t.handOuts = append(t.handOuts, c)
	if len(t.handOuts) > 2*t.nUnstarted+1024 {
		live := t.handOuts[:0]
		for _, h := range t.handOuts {
			if h.unstarted {
				live = append(live, h)
			}
		}
		clear(t.handOuts[len(live):])
		t.handOuts = live
	}
}

// clockStoppedLocked stops c's allocation-expiry clock (its NodeManager reported it, or
// it ended); t.mu is held.
func (t *Containers) clockStoppedLocked(c *Container) {
	if c.unstarted {
		c.unstarted = false
		t.nUnstarted--
	}
}

// Launched stops a container's allocation-expiry clock without waiting for its
// NodeManager to report it: the RM started it itself (an AM container), as the Java RM's
// AMLaunchedTransition unregisters the AM container from its ContainerAllocationExpirer.
func (t *Containers) Launched(id records.ContainerID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c := t.index.get(id); c != nil {
		t.clockStoppedLocked(c)
	}
}

// Signal queues a signal for a live container's NodeManager (3.x containers_to_signal);
// it returns the container's node, or false when the container is not live.
func (t *Containers) Signal(id records.ContainerID, cmd yarnpb.SignalContainerCommandProto) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.index.get(id)
	if c == nil || c.done() {
		return "", false
	}
	t.orders.signal(c.Node(), &yarnpb.SignalContainerRequestProto{ContainerId: id.Proto(), Command: cmd.Enum()})
	return c.Node(), true
}

// dropAttemptLocked forgets what was queued for an attempt; t.mu is held.
func (t *Containers) dropAttemptLocked(att records.AttemptID) {
	// No AM will pull these any more: their NodeManagers may forget them now.
	if b := t.boxes.remove(att); b != nil {
		for _, c := range b.empty() {
			t.forgetLocked(c)
		}
	}
	delete(t.preempt, att)
	t.preempting.Store(int64(len(t.preempt)))
	delete(t.seq, att)
}

// LiveReports reports the live containers of an attempt (as the Java RM does: finished
// containers are the history server's business).
func (t *Containers) LiveReports(att records.AttemptID) []*yarnpb.ContainerReportProto {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*yarnpb.ContainerReportProto
	for _, c := range t.index.list(att.App) {
		if c.ID.Attempt == att && !c.done() {
			out = append(out, c.report(t.types))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetContainerId().GetId() < out[j].GetContainerId().GetId() })
	return out
}

// LiveReport reports one live container.
func (t *Containers) LiveReport(id records.ContainerID) (*yarnpb.ContainerReportProto, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.index.get(id)
	if c == nil || c.done() {
		return nil, false
	}
	return c.report(t.types), true
}

// Usage is what an application's (or a node's) live containers hold; for an application
// also the resource-milliseconds it has used, all and preempted.
type Usage struct {
	Containers       int32
	Used             scheduler.Resource
	Spent, Preempted scheduler.Resource
}

// LiveUsage sums the live containers of the given applications in one pass over the
// table (a report or a whole application list costs one scan, not one per application).
func (t *Containers) LiveUsage(apps map[records.ApplicationID]bool) map[records.ApplicationID]Usage {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[records.ApplicationID]Usage, len(apps))
	now := t.now().UnixMilli()
	for app := range apps {
		for _, c := range t.index.list(app) {
			if !c.done() {
				u := out[app]
				u.Containers++
				u.Used = u.Used.Add(c.Resource)
				u.Spent = u.Spent.Add(c.held(now))
				out[app] = u
			}
		}
	}
	for app := range apps {
		if s := t.spent[app]; s != nil {
			u := out[app]
			u.Spent, u.Preempted = u.Spent.Add(s.used), u.Preempted.Add(s.preempted)
			out[app] = u
		}
	}
	return out
}

// NodeUsage sums the live containers on each node, by node key.
func (t *Containers) NodeUsage() map[string]Usage {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[string]Usage{}
	t.index.each(func(c *Container) {
		if !c.done() {
			u := out[c.Node()]
			u.Containers++
			u.Used = u.Used.Add(c.Resource)
			out[c.Node()] = u
		}
	})
	return out
}

// PreemptContainer applies one of the engine's preemptions: a notice for the AM's next
// allocate answer, or the kill, sent to the container's NodeManager.
func (t *Containers) PreemptContainer(p scheduler.Preemption, logger *logrus.Entry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.index.engine(p.Container)
	if c == nil || c.done() {
		return
	}
	log := logger.WithFields(map[string]any{"container": c.ID.String(), "node": c.Node()})
	if !p.Kill {
		t.preempt[c.ID.Attempt] = append(t.preempt[c.ID.Attempt], c.ID.Proto())
		t.preempting.Store(int64(len(t.preempt)))
		log.Info("container to be preempted: AM notified")
		return
	}
	c.preempted = true
	t.orders.kill(c.Node(), c.ID.Proto())
	log.Info("preempted container killed")
}

// TakePreemptions is the preemption message for an attempt's allocate answer (nil: none).
func (t *Containers) TakePreemptions(att records.AttemptID) *yarnpb.PreemptionMessageProto {
	// Every allocate asks, and there is rarely anything: the table's lock is not taken
	// then (one writer adding a preemption meanwhile is seen on the next call).
	if t.preempting.Load() == 0 {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	ids := t.preempt[att]
	delete(t.preempt, att)
	t.preempting.Store(int64(len(t.preempt)))
	if len(ids) == 0 {
		return nil
	}
	strict := &yarnpb.StrictPreemptionContractProto{}
	for _, id := range ids {
		strict.Container = append(strict.Container, &yarnpb.PreemptionContainerProto{Id: id})
	}
	return &yarnpb.PreemptionMessageProto{StrictContract: strict}
}

// NextID is the next container id of an attempt.
func (t *Containers) NextID(att records.AttemptID) records.ContainerID {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.nextIDLocked(att)
}

// nextIDLocked is NextID with t.mu held: the RM's epoch in the top bits, then the
// attempt's sequence.
func (t *Containers) nextIDLocked(att records.AttemptID) records.ContainerID {
	t.seq[att]++
	return records.ContainerID{Attempt: att, ID: t.epoch<<40 | t.seq[att]}
}

// Add tracks a container the engine placed on node: starting there until its NodeManager
// reports it, and (unless it is an AM's) queued for its attempt's next allocate answer.
func (t *Containers) Add(rc *Container, node string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.addLocked(rc, node)
}

func (t *Containers) addLocked(rc *Container, node string) {
	t.index.add(rc, true)
	rc.nodeIdx = int32(t.nodes.of(node))
	t.startingLocked(rc)
	t.ranOnLocked(rc)
	if !rc.AM {
		t.boxes.of(rc.ID.Attempt).post(rc)
	}
}

// AddAll tracks task containers of one plan (Add's work for each), under one hold of the
// lock; each container's ID.Attempt is set and its id within the attempt is made here.
func (t *Containers) AddAll(rcs []*Container) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, rc := range rcs {
		rc.ID = t.nextIDLocked(rc.ID.Attempt)
		t.addLocked(rc, rc.Node())
	}
}

// CleanupContainers kills the still-running containers of app that match on their
// NodeManagers.
func (t *Containers) CleanupContainers(app records.ApplicationID, match func(records.ContainerID) bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.index.list(app) {
		if match(c.ID) && c.move(cKilledWithApp) == nil {
			t.accountLocked(c, true) // a killed application's containers count to the kill
			t.clockStoppedLocked(c)
			t.startedLocked(c)
			t.orders.kill(c.Node(), c.ID.Proto())
		}
	}
}

// ForgetAttempt drops what was queued for an attempt that ended.
func (t *Containers) ForgetAttempt(att records.AttemptID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dropAttemptLocked(att)
}

// ForgetApp drops every trace of an application the registry no longer keeps.
func (t *Containers) ForgetApp(id records.ApplicationID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	// Every attempt with something queued, not only those that made container ids (seq):
	// one that only recovered containers after an RM restart made none.
	atts := map[records.AttemptID]bool{}
	attemptsOf(atts, id, t.seq)
	t.boxes.attemptsOf(atts, id)
	attemptsOf(atts, id, t.preempt)
	for att := range atts {
		t.dropAttemptLocked(att)
	}
	for _, c := range t.index.list(id) {
		t.clockStoppedLocked(c)
		t.startedLocked(c)
	}
	t.index.removeApp(id)
	delete(t.spent, id)
	delete(t.queueOf, id)
}

// attemptsOf adds to set the attempts of app that m has.
func attemptsOf[V any](set map[records.AttemptID]bool, app records.ApplicationID, m map[records.AttemptID]V) {
	for att := range m {
		if att.App == app {
			set[att] = true
		}
	}
}

// ranOnLocked notes that c's application ran on c's node (c.nodeIdx is set); t.mu is
// held.
func (t *Containers) ranOnLocked(c *Container) {
	app := c.ID.Attempt.App
	ran := t.ranOn[app]
	if ran == nil {
		ran = &nodeSet{}
		t.ranOn[app] = ran
	}
	ran.add(int(c.nodeIdx))
}

// AppEnded tells every NodeManager the application ran on that it ended (their next
// heartbeat answers carry it), so they clean up its files and services.
func (t *Containers) AppEnded(id records.ApplicationID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if ran := t.ranOn[id]; ran != nil {
		ran.each(func(i int) {
			node := t.nodes.keys[i]
			t.orders.appEnded(node, id.Proto())
		})
	}
	delete(t.ranOn, id)
}

// AppsOnNode takes the applications a registering NodeManager says it runs, as the Java
// RM's handleRunningAppOnNode does: those that ended, or that the RM does not know
// (ended), are told to the node at once as ended, so the node cleans them up and
// aggregates their logs — after an RM restart nothing else would, for an application that
// ended just before it; those still running count as having run there, so their end is
// told to the node too, though none of their containers may be left on it.
func (t *Containers) AppsOnNode(node string, ended, running []*yarnpb.ApplicationIdProto) {
	for _, p := range ended {
		t.orders.appEnded(node, p)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range running {
		id := records.AppIDFromProto(p)
		ran := t.ranOn[id]
		if ran == nil {
			ran = &nodeSet{}
			t.ranOn[id] = ran
		}
		ran.add(t.nodes.of(node))
	}
}

// ForgetNMTokens forgets which nodes each attempt has NMTokens for, so the next answers
// carry tokens of the newly activated key.
func (t *Containers) ForgetNMTokens() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.boxes.forgetTokens()
}

// EngineContainer is the live container the engine knows as id: its id and node.
func (t *Containers) EngineContainer(id scheduler.ContainerID) (records.ContainerID, string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.index.engine(id)
	if c == nil {
		return records.ContainerID{}, "", false
	}
	return c.ID, c.Node(), true
}
