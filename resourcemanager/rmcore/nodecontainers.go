package rmcore

import (
	"errors"
	"slices"

	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
)

// RegisteredContainers takes the containers a (re-)registering NodeManager reports
// (NMContainerStatus). Containers of attempts that carry on after a work-preserving
// restart are rebuilt: a running one is booked again in the engine — node, application,
// group, partition, as if just placed — and in the container table, without its AM being
// told anything; one that completed while the RM was down goes to its AM as completed (an
// AM container's end fails its attempt). Every other running container — of an attempt
// that was failed, of an application that ended or is unknown — is killed, and the kill
// repeated while the NodeManager still reports it. It returns the ids rebuilt and killed.
func (rm *Core) RegisteredContainers(node *rmstate.NodeAddr, statuses []*yarnpb.NMContainerStatusProto) (recovered, orphans []records.ContainerID) {
	return rm.applyRebuild(node, rm.planRebuild(node, statuses))
}

// rebuild is what a registration's container statuses come to, read before the
// registration takes the scheduling pass's lock: the containers to book again, those to
// kill, every one reported.
type rebuild struct {
	keep      []kept
	orphanIDs []*yarnpb.ContainerIdProto
	orphans   []records.ContainerID
	seen      []records.ContainerID
}

// kept is a reported container of a current attempt, its record built.
type kept struct {
	rc       *rmstate.Container
	complete bool
	st       *yarnpb.NMContainerStatusProto
}

// planRebuild reads the container table and the applications for each status: none of
// it needs the pass's lock, which a restart's registrations of a million containers
// would otherwise hold for all of it.
func (rm *Core) planRebuild(node *rmstate.NodeAddr, statuses []*yarnpb.NMContainerStatusProto) rebuild {
	var b rebuild
	b.seen = make([]records.ContainerID, 0, len(statuses))
	epoch := rm.containers.Epoch()
	for _, st := range statuses {
		id := records.ContainerIDFromProto(st.GetContainerId())
		b.seen = append(b.seen, id)
		complete := st.GetContainerState() == yarnpb.ContainerStateProto_C_COMPLETE
		if known, done := rm.containers.State(id); known {
			// This run's container: still live, it goes on; done (the node was lost and
			// its containers ended for the RM and their AMs) but running, it is killed.
			if done && !complete {
				b.orphanIDs = append(b.orphanIDs, st.GetContainerId())
				b.orphans = append(b.orphans, id)
			}
			continue
		}
		// Only an earlier run's containers are rebuilt: one of this run's that the table
		// no longer holds has ended for the RM already.
		if id.ID>>40 < epoch {
			if rc := rm.recoveredRecord(node, id, st); rc != nil {
				b.keep = append(b.keep, kept{rc: rc, complete: complete, st: st})
				continue
			}
		}
		if !complete {
			b.orphanIDs = append(b.orphanIDs, st.GetContainerId())
			b.orphans = append(b.orphans, id)
		}
	}
	return b
}

// applyRebuild books the kept containers and kills the orphans.
func (rm *Core) applyRebuild(node *rmstate.NodeAddr, b rebuild) (recovered, orphans []records.ContainerID) {
	orphans = b.orphans
	for _, k := range b.keep {
		if rm.recoverContainer(node, k.rc, k.st, k.complete) {
			recovered = append(recovered, k.rc.ID)
			continue
		}
		if !k.complete {
			b.orphanIDs = append(b.orphanIDs, k.st.GetContainerId())
			orphans = append(orphans, k.rc.ID)
		}
	}
	rm.containers.KillOrphans(node.Key, b.orphanIDs)
	if rm.recovery.nodeBack(node.Key, b.seen) {
		rm.KickScheduler()
	}
	return recovered, orphans
}

// recoveredRecord is the record of a reported container of a current attempt, to be
// rebuilt; nil: the container is not one to keep.
func (rm *Core) recoveredRecord(node *rmstate.NodeAddr, id records.ContainerID, st *yarnpb.NMContainerStatusProto) *rmstate.Container {
	if rm.recovery == nil {
		return nil // no work-preserving restart: nothing from an earlier run is kept
	}
	var user string
	var am, ok bool
	rm.apps.ViewAttempt(id.Attempt, func(a *rmstate.App, at *rmstate.Attempt) {
		if a.Over() || a.Unmanaged || at.Ended() {
			return
		}
		user, ok = a.User, true
		am = at.AMContainer != nil && *at.AMContainer == id
	})
	if !ok {
		return nil
	}
	if rm.recovery.released(id) {
		// The AM released it while its node had yet to come back.
		rm.log.WithFields(logrus.Fields{"container": id.String(), "node": node.Key}).Info("recovered container was released by its AM; killing it")
		return nil
	}
	created := st.GetCreationTime()
	if created <= 0 {
		created = rm.opts.Now().UnixMilli()
	}
	rc := &rmstate.Container{ID: id, At: node, AM: am, Resource: rm.ResourceOf(st.GetResource()), Priority: st.GetPriority().GetPriority(),
		Created: created, User: user, RequestID: st.GetAllocationRequestId()}
	if tags := st.GetAllocationTags(); len(tags) > 0 {
		// A SchedulingRequest's container: its tags count again (no constraint: the
		// request it met is the AM's, long placed).
		rc.Placement = &scheduler.Placement{RequestID: rc.RequestID, Tags: slices.Compact(slices.Sorted(slices.Values(tags)))}
	}
	return rc
}

// recoverContainer books one kept container again, under the pass's lock; false: it
// cannot be (its node has no room for it any more), and a running one is killed.
func (rm *Core) recoverContainer(node *rmstate.NodeAddr, rc *rmstate.Container, st *yarnpb.NMContainerStatusProto, complete bool) bool {
	id, am := rc.ID, rc.AM
	// Built only when it logs: a restart rebuilds up to a million containers, and their
	// registrations' summary line ("NodeManager registered", containers_recovered) is the
	// event an administrator reads; one line per running container is at debug level.
	log := func() *logrus.Entry {
		return rm.log.WithFields(logrus.Fields{"container": id.String(), "node": node.Key, "attempt": id.Attempt.String()})
	}
	if complete {
		final, ok := rm.containers.Recover(rc, &yarnpb.ContainerStatusProto{ContainerId: id.Proto(), State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(),
			ExitStatus: proto.Int32(st.GetContainerExitStatus()), Diagnostics: proto.String(st.GetDiagnostics())})
		if !ok {
			return true
		}
		log().WithField("exit_status", st.GetContainerExitStatus()).Info("recovered container had completed while the ResourceManager was down")
		if am && final != nil {
			rm.amExited(id, final)
		}
		return true
	}
	eid, err := rm.engine.Recover(scheduler.RecoveredContainer{App: EngineID(id.Attempt.App), Node: node.Key, Resource: rc.Resource,
		Priority: rc.Priority, AM: am, Start: rm.opts.Now(), RequestID: rc.RequestID, Placement: rc.Placement})
	if err != nil {
		log().WithError(err).Warn("running container not recovered; killing it")
		return false
	}
	rc.EngineID = eid
	rm.apps.RanOn(id.Attempt.App, node.Key)
	if _, ok := rm.containers.Recover(rc, nil); !ok {
		rm.engine.Release(eid) // another registration rebuilt it first
		return true
	}
	_, queue, _, _ := rm.apps.AccessOf(id.Attempt.App)
	rm.metrics.containerRecovered(queue)
	if am {
		log().Info("AM container recovered") // one per application: worth a line
	} else if rm.log.Logger.IsLevelEnabled(logrus.DebugLevel) {
		log().Debug("container recovered")
	}
	return true
}

// RegisterNode adds a registering NodeManager's node to the engine and rebuilds the
// containers it reports, with no scheduling pass in between: a pass must not fill the
// node before its running containers are booked. What the statuses come to is read
// before the pass's lock is taken.
func (rm *Core) RegisterNode(spec scheduler.NodeSpec, node *rmstate.NodeAddr, statuses []*yarnpb.NMContainerStatusProto) (recovered, orphans []records.ContainerID, err error) {
	plan := rm.planRebuild(node, statuses)
	rm.passMu.Lock()
	defer rm.passMu.Unlock()
	if err := rm.engine.AddNode(spec); err != nil {
		return nil, nil, err
	}
	recovered, orphans = rm.applyRebuild(node, plan)
	return recovered, orphans, nil
}

// ReconnectNode takes back a NodeManager that registered again under its node id while
// the RM still holds the node: it restarted and kept its containers (a work-preserving
// NodeManager restart). As the Java RM does when the NodeManager lists running
// applications, the node stays in the engine with its containers; the registration's
// completed statuses are applied as a heartbeat's would be; running containers the RM
// does not hold (any more) are killed. ok is false when the engine no longer holds the
// node (it was lost meanwhile): the caller registers it afresh.
func (rm *Core) ReconnectNode(spec scheduler.NodeSpec, statuses []*yarnpb.NMContainerStatusProto) (ok bool, orphans []records.ContainerID, err error) {
	rm.passMu.Lock()
	err = rm.engine.UpdateNode(spec)
	rm.passMu.Unlock()
	if errors.Is(err, scheduler.ErrUnknownNode) {
		return false, nil, nil
	}
	if err != nil {
		return false, nil, err
	}
	var sts []*yarnpb.ContainerStatusProto
	var orphanIDs []*yarnpb.ContainerIdProto
	for _, st := range statuses {
		id := records.ContainerIDFromProto(st.GetContainerId())
		complete := st.GetContainerState() == yarnpb.ContainerStateProto_C_COMPLETE
		if known, done := rm.containers.State(id); !complete && (!known || done) {
			orphanIDs = append(orphanIDs, st.GetContainerId())
			orphans = append(orphans, id)
			continue
		}
		sts = append(sts, &yarnpb.ContainerStatusProto{ContainerId: st.GetContainerId(), State: st.GetContainerState().Enum(),
			ExitStatus: proto.Int32(st.GetContainerExitStatus()), Diagnostics: proto.String(st.GetDiagnostics())})
	}
	rm.containers.KillOrphans(spec.ID, orphanIDs)
	rm.NodeStatuses(spec.ID, sts, nil)
	return true, orphans, nil
}
