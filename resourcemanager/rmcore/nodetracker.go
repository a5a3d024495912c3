package rmcore

// ResourceTracker's logic: a NodeManager registers (its containers rebuilt or killed,
// the applications it still runs told apart), heartbeats (liveness, health, measured
// capacity, container statuses, the directives it gets back) and unregisters. rmservice
// converts the messages.

import (
	"fmt"
	"strings"

	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/nmheartbeat"
	"github.com/bobbin-yarn/bobbin/resourcemanager/nmphase"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
	"github.com/bobbin-yarn/bobbin/yarn/security"
)

func masterKey(k security.MasterKey) *yarnpb.MasterKeyProto {
	return &yarnpb.MasterKeyProto{KeyId: proto.Int32(k.ID), Bytes: k.Bytes}
}

// RegisterNodeManager registers a NodeManager (ResourceTracker's registerNodeManager).
// Its container statuses come decoded lean where they are plain (package nmheartbeat).
func (rm *Core) RegisterNodeManager(reg nmheartbeat.Registration) (*yarnpb.RegisterNodeManagerResponseProto, error) {
	req := reg.RegisterNodeManagerRequestProto
	resp := &yarnpb.RegisterNodeManagerResponseProto{
		ContainerTokenMasterKey: masterKey(rm.containerKeys.Current()),
		NmTokenMasterKey:        masterKey(rm.nmKeys.Current()),
		NodeAction:              yarnpb.NodeActionProto_NORMAL.Enum(),
		RmIdentifier:            proto.Int64(rm.ClusterTimestamp()),
		RmVersion:               proto.String(Version),
	}
	id := req.GetNodeId()
	if id.GetHost() == "" {
		return nil, exceptions.Errorf(exceptions.YarnException, "registerNodeManager without a node id")
	}
	key := rmstate.NodeKey(id)
	log := rm.log.WithField("node", key)
	capability := req.GetResource()
	// A node that was decommissioning gracefully when the RM restarted comes back to finish
	// it, though the exclude list names it.
	decommissionBy, decommissioning := rm.RecoveredDecommission(key)
	allowed := rm.HostsAllow(id.GetHost(), key)
	decommissioning = decommissioning && !allowed
	if !allowed && !decommissioning {
		msg := fmt.Sprintf("Disallowed NodeManager from  %s, Sending SHUTDOWN signal to the NodeManager.", id.GetHost())
		log.Warn(msg)
		resp.NodeAction = yarnpb.NodeActionProto_SHUTDOWN.Enum()
		resp.DiagnosticsMessage = proto.String(msg)
		return resp, nil
	}
	if capability.GetMemory() < int64(rm.settings.MinAllocationMB) || capability.GetVirtualCores() < int32(rm.settings.MinAllocationCore) {
		msg := fmt.Sprintf("NodeManager from  %s doesn't satisfy minimum allocations, Sending SHUTDOWN signal to the NodeManager.", id.GetHost())
		log.Warn(msg)
		resp.NodeAction = yarnpb.NodeActionProto_SHUTDOWN.Enum()
		resp.DiagnosticsMessage = proto.String(msg)
		return resp, nil
	}
	now := rm.opts.Now()
	n := &rmstate.Node{NodeAddr: &rmstate.NodeAddr{Key: key, ID: id, HTTP: fmt.Sprintf("%s:%d", id.GetHost(), req.GetHttpPort())}, Rack: "/default-rack",
		Capability: capability, Physical: req.GetPhysicalResource(), Version: req.GetNmVersion(), LastHeartbeat: now, HealthTime: now.UnixMilli()}
	first := yarnpb.NodeStateProto_NS_RUNNING
	if decommissioning {
		first, n.DecommissionBy = yarnpb.NodeStateProto_NS_DECOMMISSIONING, decommissionBy
		log.WithField("decommission_by", decommissionBy).Info("node registered again while decommissioning: it goes on")
	}
	again, err := rm.nodes.Put(key, n, first)
	if err != nil {
		return nil, err
	}
	// Unschedulable until its first heartbeat (rmstate.beatVerdict.First).
	spec := scheduler.NodeSpec{ID: key, Rack: n.Rack, Capacity: rm.ResourceOf(capability), Partition: rm.labels.PartitionOf(id), Unschedulable: true}
	// A NodeManager that restarted and lists running applications kept its containers
	// (work-preserving NodeManager restart): as in the Java RM, the node and its
	// containers stay. One that lists none lost them with its restart.
	reconnected := false
	var recovered, orphans []records.ContainerID
	reports := reportsOf(reg)
	if again && len(req.GetRunningApplications()) > 0 {
		reconnected, orphans, err = rm.ReconnectNode(spec, reports)
	} else if again {
		rm.NodeLost(key, "Container released on a *lost* node") // its containers did not survive the NodeManager's restart
	}
	if !reconnected && err == nil {
		// The containers the NodeManager kept: after a work-preserving RM restart those
		// of attempts that carry on are rebuilt, any other running one is killed.
		recovered, orphans, err = rm.RegisterNode(spec, n.NodeAddr, reports)
	}
	if err != nil {
		log.WithError(err).Warn("node not added to the scheduler")
	}
	// The applications the node still has: those that ended (while the RM was down, say)
	// are cleaned up there, the others will be when they end.
	var endedApps, runningApps []*yarnpb.ApplicationIdProto
	for _, p := range req.GetRunningApplications() {
		ended := true
		rm.apps.View(records.AppIDFromProto(p), func(a *rmstate.App) { ended = a.Over() })
		if ended {
			endedApps = append(endedApps, p)
		} else {
			runningApps = append(runningApps, p)
		}
	}
	rm.containers.AppsOnNode(key, endedApps, runningApps)
	if len(endedApps) > 0 {
		log.WithField("applications", len(endedApps)).Info("node runs applications that ended: told to clean them up")
	}
	rm.RememberNode(key)
	rm.KickScheduler()
	log.WithFields(logrus.Fields{"memory_mb": capability.GetMemory(), "vcores": capability.GetVirtualCores(), "http_port": req.GetHttpPort(), "orphans_killed": joinIDs(orphans), "containers_recovered": len(recovered), "containers_reported": len(reports),
		"version": req.GetNmVersion(), "reregistered": again, "reconnected_with_containers": reconnected}).Info("NodeManager registered")
	return resp, nil
}

// NodeHeartbeat answers a NodeManager's heartbeat, decoded with its running containers'
// statuses by id (package nmheartbeat).
func (rm *Core) NodeHeartbeat(hb nmheartbeat.Request) *yarnpb.NodeHeartbeatResponseProto {
	req := hb.NodeHeartbeatRequestProto
	st := req.GetNodeStatus()
	key := rmstate.NodeKey(st.GetNodeId())
	// The entry is made only when there is something to log: at 10,000 nodes making one
	// per heartbeat was a sixth of the RM's garbage.
	log := func() *logrus.Entry { return rm.log.WithField("node", key) }
	now := rm.opts.Now()
	// The node registry's lock is not held while container statuses are processed: that
	// takes the application registry's lock, which AM calls hold while asking about nodes.
	v := rm.nodes.Beat(key, req, len(hb.Running), now, rm.log)
	if v.Action != nil {
		if v.Action.GetNodeAction() == yarnpb.NodeActionProto_RESYNC && v.Known {
			rm.NodeLost(key, "Container released on a *lost* node")
		}
		return v.Action
	}
	resized, relabelled, healthChanged, state, capability, autoLabels, statuses := v.Resized, v.Relabelled, v.HealthChanged, v.State, v.Capability, v.AutoLabels, st.GetContainersStatuses()
	// The node takes containers from its first heartbeat on; one that came before the
	// engine had the node (a heartbeat racing the registration) does not count as first.
	firstSynced := true
	if resized || relabelled {
		log().WithFields(logrus.Fields{"memory_mb": capability.GetMemory(), "vcores": capability.GetVirtualCores(), "labels": autoLabels}).Info("node's measured capacity or labels changed")
		if !healthChanged {
			rm.SyncSchedulable(key)
		}
	}

	if healthChanged {
		log().WithFields(logrus.Fields{"state": state.String(), "health_report": st.GetNodeHealthStatus().GetHealthReport()}).Warn("node health changed")
		if synced := rm.SyncSchedulable(key); v.First {
			firstSynced = synced
		}
	} else if v.First {
		firstSynced = rm.SyncSchedulable(key) // the node takes containers from now on
	}
	rm.QueueStatuses(key, statuses, hb.Running, hb.Completed)
	for _, f := range rm.apps.LogAggregationReports(key, req.GetLogAggregationReportsForApps()) {
		log().WithFields(logrus.Fields{"application": records.AppIDFromProto(f.GetApplicationId()).String(), "diagnostics": f.GetDiagnostics()}).Warn("log aggregation failed on the node")
	}
	resp := &yarnpb.NodeHeartbeatResponseProto{
		ResponseId: proto.Int32(st.GetResponseId() + 1),
		NodeAction: yarnpb.NodeActionProto_NORMAL.Enum(),
		// Steers the node's next heartbeat towards its own place in the interval, so that
		// nodes do not gather into bursts (package nmphase).
		NextHeartBeatInterval: proto.Int64(nmphase.New(rm.settings.NMHeartbeat, rm.settings.NMHeartbeatSpread).Next(key, now)),
	}
	// Master keys the NodeManager does not have yet: during a roll the next key goes out
	// before anything is signed with it, so NMs verify tokens of both keys.
	resp.ContainerTokenMasterKey = keyUpdate(rm.containerKeys, req.GetLastKnownContainerTokenMasterKey())
	resp.NmTokenMasterKey = keyUpdate(rm.nmKeys, req.GetLastKnownNmTokenMasterKey())
	d := rm.containers.Directives(key)
	resp.ContainersToCleanup, resp.ContainersToBeRemovedFromNm, resp.ApplicationsToCleanup, resp.ContainersToSignal = d.Cleanup, d.Removed, d.Apps, d.Signals
	if len(resp.ContainersToCleanup) > 0 {
		log().WithField("containers", len(resp.ContainersToCleanup)).Debug("containers to clean up sent")
	}
	if firstSynced {
		rm.nodes.SetLastResponse(key, resp)
	}
	return resp
}

// UnregisterNodeManager: a 2.8+/3.x NodeManager says it is shutting down. As in the Java
// RM, the node becomes SHUTDOWN at once (not LOST after the expiry interval) and its
// containers are released; an unknown node is ignored.
func (rm *Core) UnregisterNodeManager(id *yarnpb.NodeIdProto) {
	key := rmstate.NodeKey(id)
	log := rm.log.WithField("node", key)
	if !rm.nodes.Shutdown(key) {
		log.Info("unregistration from an unknown node ignored")
		return
	}
	log.Info("NodeManager shut down: node unregistered")
	rm.NodeLost(key, "Container released on a *shutdown* node")
}

// keyUpdate is the key a holder that last knew known should be sent, or nil.
func keyUpdate(ring *security.KeyRing, known *yarnpb.MasterKeyProto) *yarnpb.MasterKeyProto {
	want := ring.Current()
	if next, ok := ring.Next(); ok {
		want = next
	}
	if known.GetKeyId() == want.ID && known != nil {
		return nil
	}
	return masterKey(want)
}

func joinIDs(ids []records.ContainerID) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = id.String()
	}
	return strings.Join(parts, " ")
}
