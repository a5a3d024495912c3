package rmcore

import (
	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/yarn/audit"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

// CheckRelease refuses releases of containers that are not the attempt's, as the Java RM
// does with InvalidContainerReleaseException.
func CheckRelease(att records.AttemptID, ids []*yarnpb.ContainerIdProto) error {
	for _, p := range ids {
		if id := records.ContainerIDFromProto(p); id.Attempt != att {
			return exceptions.Errorf(exceptions.InvalidContainerRelease, "Cannot release container : %s not belonging to this application attempt : %s", id, att)
		}
	}
	return nil
}

// Release ends containers an AM gave back: the engine frees them, the AM hears ABORTED,
// and their NodeManagers are told to kill them.
func (rm *Core) Release(ids []*yarnpb.ContainerIdProto) {
	for _, p := range ids {
		id := records.ContainerIDFromProto(p)
		c, _, fresh := rm.containers.Complete(id, &yarnpb.ContainerStatusProto{ContainerId: p, State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(),
			ExitStatus: proto.Int32(exitcode.Aborted), Diagnostics: proto.String("Container released by application")})
		if c == nil {
			rm.recovery.noteRelease(id) // its node may still be on its way back
		}
		if !fresh {
			continue
		}
		rm.engine.Release(c.EngineID)
		rm.metrics.containerReleased()
		rm.health.release(c.Node(), c.ID, c.Resource)
		rm.containers.KillOnNode(c.Node(), p)
	}
}

// EndApp ends a finished, failed or killed application: the engine forgets it, its
// containers that still run are killed on their NodeManagers, the NodeManagers it ran on
// are told it ended, its AMRMTokens stop working, and the oldest finished applications
// beyond yarn.resourcemanager.max-completed-applications are forgotten.
func (rm *Core) EndApp(id records.ApplicationID) {
	// RMAuditLogger's "Application Finished - Succeeded|Failed|Killed", once per
	// application (EndApp may run again for it), written outside the applications' lock.
	var user, queue string
	var state yarnpb.YarnApplicationStateProto
	found := false
	rm.apps.View(id, func(a *rmstate.App) { user, queue, state, found = a.User, a.Queue, a.State(), true })
	if _, again := rm.endAudited.LoadOrStore(id, struct{}{}); found && !again {
		op := "Application Finished - Succeeded"
		switch state {
		case yarnpb.YarnApplicationStateProto_FAILED:
			op = "Application Finished - Failed"
		case yarnpb.YarnApplicationStateProto_KILLED:
			op = "Application Finished - Killed"
		}
		rm.audit.Success(user, "", op, "RMAppManager", audit.KV{Key: "APPID", Value: id.String()}, audit.KV{Key: "QUEUENAME", Value: queue})
	}
	rm.engine.RemoveApp(EngineID(id))
	rm.containers.CleanupContainers(id, func(records.ContainerID) bool { return true })
	rm.containers.AppEnded(id)
	for _, att := range rm.apps.AttemptIDs(id) {
		rm.amrm.Revoke(att)
	}
	if rm.tokens != nil {
		rm.tokens.ApplicationFinished(id.String())
	}
	for _, gone := range rm.apps.Retire(id, rm.settings.MaxCompletedApps) {
		rm.containers.ForgetApp(gone)
		rm.endAudited.Delete(gone)
	}
}
