package rmcore

import (
	"errors"
	"slices"

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
	var orphanIDs []*yarnpb.ContainerIdProto
	var seen []records.ContainerID
	epoch := rm.containers.Epoch()
	for _, st := range statuses {
		id := records.ContainerIDFromProto(st.GetContainerId())
		seen = append(seen, id)
		complete := st.GetContainerState() == yarnpb.ContainerStateProto_C_COMPLETE
		if known, done := rm.containers.State(id); known {
			// This run's container: still live, it goes on; done (the node was lost and
			// its containers ended for the RM and their AMs) but running, it is killed.
			if done && !complete {
				orphanIDs = append(orphanIDs, st.GetContainerId())
				orphans = append(orphans, id)
			}
			continue
		}
		// Only an earlier run's containers are rebuilt: one of this run's that the table
		// no longer holds has ended for the RM already.
		if id.ID>>40 < epoch && rm.recoverContainer(node, id, st, complete) {
			recovered = append(recovered, id)
			continue
		}
		if !complete {
			orphanIDs = append(orphanIDs, st.GetContainerId())
			orphans = append(orphans, id)
		}
	}
	rm.containers.KillOrphans(node.Key, orphanIDs)
	if rm.recovery.nodeBack(node.Key, seen) {
		rm.KickScheduler()
	}
	return recovered, orphans
}

// recoverContainer rebuilds one reported container of a current attempt; false: the
// container is not one to keep.
func (rm *Core) recoverContainer(node *rmstate.NodeAddr, id records.ContainerID, st *yarnpb.NMContainerStatusProto, complete bool) bool {
	if rm.recovery == nil {
		return false // no work-preserving restart: nothing from an earlier run is kept
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
		return false
	}
	if rm.recovery.released(id) {
		// The AM released it while its node had yet to come back.
		rm.log.WithFields(map[string]any{"container": id.String(), "node": node.Key}).Info("recovered container was released by its AM; killing it")
		return false
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
	log := rm.log.WithFields(map[string]any{"container": id.String(), "node": node.Key, "attempt": id.Attempt.String()})
	if complete {
		final, ok := rm.containers.Recover(rc, &yarnpb.ContainerStatusProto{ContainerId: id.Proto(), State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(),
			ExitStatus: proto.Int32(st.GetContainerExitStatus()), Diagnostics: proto.String(st.GetDiagnostics())})
		if !ok {
			return true
		}
		log.WithField("exit_status", st.GetContainerExitStatus()).Info("recovered container had completed while the ResourceManager was down")
		if am && final != nil {
			rm.amExited(id, final)
		}
		return true
	}
	eid, err := rm.engine.Recover(scheduler.RecoveredContainer{App: EngineID(id.Attempt.App), Node: node.Key, Resource: rc.Resource,
		Priority: rc.Priority, AM: am, Start: rm.opts.Now(), RequestID: rc.RequestID, Placement: rc.Placement})
	if err != nil {
		log.WithError(err).Warn("running container not recovered; killing it")
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
	log.WithField("am", am).Info("container recovered")
	return true
}

// RegisterNode adds a registering NodeManager's node to the engine and rebuilds the
// containers it reports, with no scheduling pass in between: a pass must not fill the
// node before its running containers are booked.
func (rm *Core) RegisterNode(spec scheduler.NodeSpec, node *rmstate.NodeAddr, statuses []*yarnpb.NMContainerStatusProto) (recovered, orphans []records.ContainerID, err error) {
	rm.passMu.Lock()
	defer rm.passMu.Unlock()
	if err := rm.engine.AddNode(spec); err != nil {
		return nil, nil, err
	}
	recovered, orphans = rm.RegisteredContainers(node, statuses)
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
