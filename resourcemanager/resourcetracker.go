package resourcemanager

import (
	"context"
	"fmt"
	"time"

	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
	"github.com/bobbin-yarn/bobbin/yarn/protocol"
	"github.com/bobbin-yarn/bobbin/yarn/security"
)

// resourceTracker answers ResourceTracker (yarn.resourcemanager.resource-tracker.address):
// NodeManagers register, then heartbeat. See protocol.md §4.4.
type resourceTracker struct {
	rm *ResourceManager
}

func newResourceTracker(rm *ResourceManager) (*rpc.Protocol, error) {
	t := &resourceTracker{rm: rm}
	sd := yarnpb.File_yarn_ResourceTracker_proto.Services().ByName("ResourceTrackerService")
	return rpc.ServiceProtocol(protocol.ResourceTracker, sd, map[string]rpc.Method{
		"registerNodeManager":   rpc.Unary(t.registerNodeManager),
		"nodeHeartbeat":         rpc.Unary(t.nodeHeartbeat),
		"unRegisterNodeManager": rpc.Unary(t.unRegisterNodeManager),
	}, func(method string) error {
		return rpc.Errorf(exceptions.YarnException, "%s is not supported by this ResourceManager yet", method)
	})
}

func masterKey(k security.MasterKey) *yarnpb.MasterKeyProto {
	return &yarnpb.MasterKeyProto{KeyId: proto.Int32(k.ID), Bytes: k.Bytes}
}

// rmVersion is what the RM reports to NodeManagers.
const rmVersion = "2.7.3-bobbin"

func (t *resourceTracker) registerNodeManager(_ context.Context, req *yarnpb.RegisterNodeManagerRequestProto) (*yarnpb.RegisterNodeManagerResponseProto, error) {
	rm := t.rm
	resp := &yarnpb.RegisterNodeManagerResponseProto{
		ContainerTokenMasterKey: masterKey(rm.containerKeys.Current()),
		NmTokenMasterKey:        masterKey(rm.nmKeys.Current()),
		NodeAction:              yarnpb.NodeActionProto_NORMAL.Enum(),
		RmIdentifier:            proto.Int64(rm.clusterTimestamp),
		RmVersion:               proto.String(rmVersion),
	}
	id := req.GetNodeId()
	if id.GetHost() == "" {
		return nil, rpc.Errorf(exceptions.YarnException, "registerNodeManager without a node id")
	}
	key := rmstate.NodeKey(id)
	log := rm.log.WithField("node", key)
	capability := req.GetResource()
	if !rm.hostsAllow(id.GetHost(), key) {
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
	n := &rmstate.Node{NodeAddr: &rmstate.NodeAddr{Key: key, Id: id, Http: fmt.Sprintf("%s:%d", id.GetHost(), req.GetHttpPort())}, Rack: "/default-rack",
		Capability: capability, State: yarnpb.NodeStateProto_NS_RUNNING, Version: req.GetNmVersion(), LastHeartbeat: now, HealthTime: now.UnixMilli()}
	again := rm.nodes.Put(key, n)
	if again {
		rm.nodeLost(key, "Container released on a *lost* node") // its containers did not survive the NodeManager's restart
	}
	if err := rm.engine.AddNode(scheduler.NodeSpec{ID: key, Rack: n.Rack, Capacity: rm.resourceOf(capability), Partition: rm.labels.PartitionOf(id)}); err != nil {
		log.WithError(err).Warn("node not added to the scheduler")
	}
	rm.kickScheduler()
	log.WithFields(logrus.Fields{"memory_mb": capability.GetMemory(), "vcores": capability.GetVirtualCores(), "http_port": req.GetHttpPort(),
		"version": req.GetNmVersion(), "reregistered": again}).Info("NodeManager registered")
	return resp, nil
}

func (t *resourceTracker) nodeHeartbeat(_ context.Context, req *yarnpb.NodeHeartbeatRequestProto) (*yarnpb.NodeHeartbeatResponseProto, error) {
	rm := t.rm
	st := req.GetNodeStatus()
	key := rmstate.NodeKey(st.GetNodeId())
	log := rm.log.WithField("node", key)
	// The node registry's lock is not held while container statuses are processed: that
	// takes the application registry's lock, which AM calls hold while asking about nodes.
	v := rm.nodes.Beat(key, req, rm.opts.Now(), log)
	if v.Action != nil {
		if v.Action.GetNodeAction() == yarnpb.NodeActionProto_RESYNC && v.Known {
			rm.nodeLost(key, "Container released on a *lost* node")
		}
		return v.Action, nil
	}
	resized, relabelled, healthChanged, state, capability, autoLabels, statuses := v.Resized, v.Relabelled, v.HealthChanged, v.State, v.Capability, v.AutoLabels, st.GetContainersStatuses()
	if resized || relabelled {
		log.WithFields(logrus.Fields{"memory_mb": capability.GetMemory(), "vcores": capability.GetVirtualCores(), "labels": autoLabels}).Info("node's measured capacity or labels changed")
		if !healthChanged {
			rm.syncSchedulable(key)
		}
	}

	if healthChanged {
		log.WithFields(logrus.Fields{"state": state.String(), "health_report": st.GetNodeHealthStatus().GetHealthReport()}).Warn("node health changed")
		rm.syncSchedulable(key)
	}
	rm.nodeStatuses(key, statuses)
	resp := &yarnpb.NodeHeartbeatResponseProto{
		ResponseId:            proto.Int32(st.GetResponseId() + 1),
		NodeAction:            yarnpb.NodeActionProto_NORMAL.Enum(),
		NextHeartBeatInterval: proto.Int64(rm.settings.NMHeartbeat.Milliseconds()),
	}
	// Master keys the NodeManager does not have yet: during a roll the next key goes out
	// before anything is signed with it, so NMs verify tokens of both keys.
	resp.ContainerTokenMasterKey = keyUpdate(rm.containerKeys, req.GetLastKnownContainerTokenMasterKey())
	resp.NmTokenMasterKey = keyUpdate(rm.nmKeys, req.GetLastKnownNmTokenMasterKey())
	resp.ContainersToCleanup, resp.ContainersToBeRemovedFromNm, resp.ApplicationsToCleanup, resp.ContainersToSignal = rm.containers.Directives(key)
	rm.nodes.SetLastResponse(key, resp)
	return resp, nil
}

// unRegisterNodeManager: a 2.8+/3.x NodeManager says it is shutting down. As in the Java
// RM, the node becomes SHUTDOWN at once (not LOST after the expiry interval) and its
// containers are released; an unknown node is ignored.
func (t *resourceTracker) unRegisterNodeManager(_ context.Context, req *yarnpb.UnRegisterNodeManagerRequestProto) (*yarnpb.UnRegisterNodeManagerResponseProto, error) {
	rm := t.rm
	key := rmstate.NodeKey(req.GetNodeId())
	log := rm.log.WithField("node", key)
	if !rm.nodes.Shutdown(key) {
		log.Info("unregistration from an unknown node ignored")
		return &yarnpb.UnRegisterNodeManagerResponseProto{}, nil
	}
	log.Info("NodeManager shut down: node unregistered")
	rm.nodeLost(key, "Container released on a *shutdown* node")
	return &yarnpb.UnRegisterNodeManagerResponseProto{}, nil
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

// monitor runs the RM's clocks until ctx ends: NodeManager, AM and allocation expiry, and
// metrics of the engine's state about once a second.
func (rm *ResourceManager) monitor(ctx context.Context) {
	t := time.NewTicker(rm.settings.monitorTick())
	defer t.Stop()
	var lastStats time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := rm.opts.Now()
		rm.Step(now)
		if now.Sub(lastStats) >= time.Second {
			lastStats = now
			rm.metrics.observe(rm.engine.Stats())
		}
	}
}

// Step runs the RM's clocks once at now: NodeManager liveness, AM liveness, unused
// allocations, application lifetimes, graceful decommissions and master-key rolls. The
// monitor calls it on every tick; tests with an injected clock call it directly.
func (rm *ResourceManager) Step(now time.Time) {
	rm.stepMu.Lock() // the key rollers' schedules are the monitor's own state
	defer rm.stepMu.Unlock()
	for _, key := range rm.nodes.Expire(now, rm.settings.NMExpiry) {
		rm.log.WithField("node", key).Warn("NodeManager expired: no heartbeat within yarn.nm.liveness-monitor.expiry-interval-ms; node is LOST")
		rm.nodeLost(key, "Container released on a *lost* node")
	}
	rm.expireAttempts(now)
	rm.expireAllocations(now)
	rm.expireLifetimes(now)
	rm.checkDecommissioning(now)
	rm.rollKeys(now)
}
