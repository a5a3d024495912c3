// The container table's side facing NodeManagers: the statuses they report, what they
// are told to kill, signal and forget, and which containers they have not started.

package rmstate

import (
	"sort"
	"time"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/nmheartbeat"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
)

// KillOnNode queues a container for its NodeManager's next heartbeat answer to kill.
func (t *Containers) KillOnNode(node string, id *yarnpb.ContainerIdProto) {
	t.orders.kill(node, id)
}

// Completion is a container that completed and the status its AM hears.
type Completion struct {
	C *Container
	d doneStatus
}

// Exit is the container's exit status as its AM hears it.
func (f Completion) Exit() int32 { return f.d.exitStatus() }

// Final is the status its AM hears, as a message.
func (f Completion) Final() *yarnpb.ContainerStatusProto { return f.d.status() }

// NodeReport is one heartbeat's container statuses, as TakeReports takes them: as
// nmheartbeat decodes them, the plain running and completed ones apart.
type NodeReport struct {
	Node      string
	Statuses  []*yarnpb.ContainerStatusProto
	Running   []records.ContainerID
	Completed []nmheartbeat.Done
}

// TakeReports applies NodeManagers' container statuses, several heartbeats' under one
// hold of the lock (finished[i] and release[i] are reports[i]'s): running ones stop their
// allocation-expiry clock; completed ones are returned (with their engine ids, to free)
// and queued for their attempts, and the NM is told to forget them. Running are the
// containers the heartbeat reported plainly RUNNING, by id (nmheartbeat keeps them out of
// statuses); they are taken after statuses, which only matters to a heartbeat reporting
// a container twice, and then the completion stands either way.
func (t *Containers) TakeReports(reports []NodeReport) (finished [][]Completion, release [][]scheduler.ContainerID) {
	finished, release = make([][]Completion, len(reports)), make([][]scheduler.ContainerID, len(reports))
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, r := range reports {
		finished[i], release[i] = t.takeStatusesLocked(r)
	}
	return finished, release
}

// takeStatusesLocked applies one heartbeat's statuses; t.mu is held.
func (t *Containers) takeStatusesLocked(r NodeReport) (finished []Completion, release []scheduler.ContainerID) {
	node, running := r.Node, r.Running
	nodeIdx := t.nodes.of(node)
	for _, st := range r.Statuses {
		id := records.ContainerIDFromProto(st.GetContainerId())
		if st.GetState() != yarnpb.ContainerStateProto_C_COMPLETE {
			if t.orphans[node][id] {
				t.orders.kill(node, st.GetContainerId())
			}
			t.startedRunningLocked(nodeIdx, id, st.GetState())
			continue
		}
		finished, release = t.completedOnLocked(node, id, compactStatus(st), finished, release)
	}
	for _, d := range r.Completed {
		finished, release = t.completedOnLocked(node, d.ID, plainStatus(d), finished, release)
	}
	// Every heartbeat repeats every running container; only those not yet seen running,
	// and orphans, matter. A heartbeat at 300 containers a node reports 300 and has about
	// a fifth of them starting: the filter of those spares looking up the rest.
	if starting, orphans := t.startingList(nodeIdx), t.orphans[node]; len(starting) > 0 || len(orphans) > 0 {
		var maybe idFilter
		for _, c := range starting {
			maybe.add(c.ID)
		}
		for _, id := range running {
			if orphans[id] {
				// Still running: the kill is sent again until the NodeManager reports it
				// gone (a 2.7.3 NodeManager can miss the first, sent as it re-registers).
				t.orders.kill(node, id.Proto())
			}
			if maybe.has(id) {
				t.startedRunningLocked(nodeIdx, id, yarnpb.ContainerStateProto_C_RUNNING)
			}
		}
	}
	if len(t.orphans[node]) == 0 {
		delete(t.orphans, node)
	}
	return finished, release
}

// completedOnLocked applies a completed status from node, adding a container that
// completed now to finished and its engine id to release; t.mu is held.
func (t *Containers) completedOnLocked(node string, id records.ContainerID, d doneStatus, finished []Completion, release []scheduler.ContainerID) ([]Completion, []scheduler.ContainerID) {
	if orphans := t.orphans[node]; orphans[id] {
		delete(orphans, id)
	}
	c, d, fresh := t.completeLocked(id, d, true)
	if fresh {
		finished = append(finished, Completion{c, d})
		release = append(release, c.EngineID)
	}
	// A completed container the AM still has to hear of is acknowledged after it has
	// (drainFor); any other, known or not, at once, so NMs do not keep reporting
	// containers of applications the RM has forgotten.
	switch {
	case c == nil:
		t.orders.forget(node, id)
	case c.awaitingAck():
		// Only the attempt's acknowledgement list holds it now.
		t.untrackLocked(c)
	default:
		t.forgetLocked(c)
	}
	return finished, release
}

// startedRunningLocked applies a status, not complete (NEW or RUNNING), from node number
// nodeIdx to a container that may be starting there; t.mu is held.
func (t *Containers) startedRunningLocked(nodeIdx int, id records.ContainerID, state yarnpb.ContainerStateProto) {
	if len(t.startingList(nodeIdx)) == 0 {
		return
	}
	c := t.index.get(id)
	if c == nil || !c.starting || int(c.nodeIdx) != nodeIdx {
		return
	}
	t.clockStoppedLocked(c)
	c.reported = true
	if state == yarnpb.ContainerStateProto_C_RUNNING {
		c.move(cReportedRunning)
		t.startedLocked(c)
	}
}

// KillOrphans asks node to kill running containers the RM does not know (a NodeManager
// kept them across an RM restart), and keeps asking while it reports them running.
func (t *Containers) KillOrphans(node string, ids []*yarnpb.ContainerIdProto) {
	if len(ids) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	set := t.orphans[node]
	if set == nil {
		set = map[records.ContainerID]bool{}
		t.orphans[node] = set
	}
	for _, id := range ids {
		set[records.ContainerIDFromProto(id)] = true
		t.orders.kill(node, id)
	}
}

// IdsOf maps engine container ids to the YARN ids of the containers still tracked, in
// container-id order.
func (t *Containers) IdsOf(engineIDs []scheduler.ContainerID) []records.ContainerID {
	t.mu.Lock()
	var ids []records.ContainerID
	for _, e := range engineIDs {
		if c := t.index.engine(e); c != nil {
			ids = append(ids, c.ID)
		}
	}
	t.mu.Unlock()
	sort.Slice(ids, func(i, j int) bool { return ids[i].ID < ids[j].ID })
	return ids
}

// UnstartedSince are the containers handed out before cutoff that no NodeManager has
// reported yet.
func (t *Containers) UnstartedSince(cutoff time.Time) []*Container {
	t.mu.Lock()
	defer t.mu.Unlock()
	var due []*Container
	i := 0
	for ; i < len(t.handOuts); i++ {
		c := t.handOuts[i]
		if !c.unstarted {
			continue // started, expired or gone
		}
		if !time.UnixMilli(c.handedOut).Before(cutoff) {
			break // the rest were handed out later
		}
		due = append(due, c)
	}
	clear(t.handOuts[:i])
	t.handOuts = t.handOuts[i:]
	return due
}

// RecoverCompleted and RecoverRunning track containers an earlier run of the RM
// allocated, which their NodeManager reports as it registers after a work-preserving
// restart. Their AM holds them already, so they are handed out and not queued for an
// allocate answer. A running one is live (and booked in the engine under rc.EngineID by
// the caller); one that completed while the RM was down (RecoverCompleted, with its
// status done) is completed now, its status queued for the attempt's next allocate, and
// returned. ok is false for a container the table tracks already.
//
// The attempt is not marked as holding an NMToken for the node: which tokens an AM holds
// is not known after a restart (its own container's node it never had one for: the RM
// started that container), so, as the Java RM's in-memory set starts empty, its next
// container on each node carries a token.
func (t *Containers) RecoverCompleted(rc *Container, done *yarnpb.ContainerStatusProto) (final *yarnpb.ContainerStatusProto, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.recoverLocked(rc, false) {
		return nil, false
	}
	_, d, _ := t.completeLocked(rc.ID, compactStatus(done), false)
	return d.status(), true
}

// RecoverRunning takes running containers (each booked in the engine by the caller),
// under one hold of the table's lock: a restart's registrations bring hundreds each.
func (t *Containers) RecoverRunning(rcs []*Container) (ok []bool) {
	ok = make([]bool, len(rcs))
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, rc := range rcs {
		ok[i] = t.recoverLocked(rc, true)
	}
	return ok
}

// recoverLocked tracks rc, running or (to be completed by the caller) not; false when
// the table tracks it already.
func (t *Containers) recoverLocked(rc *Container, running bool) bool {
	if t.index.get(rc.ID) != nil {
		return false // two registrations raced: the first rebuilt it
	}
	rc.handedOut = max(rc.Created, 1)
	if running {
		rc.move(cReportedRunning)
	}
	t.index.add(rc, running)
	rc.nodeIdx = int32(t.nodes.of(rc.Node()))
	t.ranOnLocked(rc)
	return true
}

// State reports whether the table tracks container id, and whether it is done.
func (t *Containers) State(id records.ContainerID) (known, done bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.index.get(id)
	return c != nil, c != nil && c.done()
}

// Epoch is the RM's epoch (SetEpoch).
func (t *Containers) Epoch() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.epoch
}
