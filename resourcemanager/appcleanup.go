package resourcemanager

import (
	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

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
