package resourcemanager

import (
	"context"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
	"github.com/bobbin-yarn/bobbin/resourcemanager/security"
	"github.com/bobbin-yarn/bobbin/rpc"
)

// ResourceTrackerProtocolName is the protocol NodeManagers register and heartbeat on.
const ResourceTrackerProtocolName = "org.apache.hadoop.yarn.server.api.ResourceTrackerPB"

// resourceTracker answers ResourceTracker (yarn.resourcemanager.resource-tracker.address):
// NodeManagers register, then heartbeat. See hadoop-wire.md §4.4.
type resourceTracker struct {
	rm *ResourceManager
}

func newResourceTracker(rm *ResourceManager) (*rpc.Protocol, error) {
	t := &resourceTracker{rm: rm}
	sd := yarnpb.File_yarn_ResourceTracker_proto.Services().ByName("ResourceTrackerService")
	return rpc.ServiceProtocol(ResourceTrackerProtocolName, sd, map[string]rpc.Method{
		"registerNodeManager": rpc.Unary(t.registerNodeManager),
		"nodeHeartbeat":       rpc.Unary(t.nodeHeartbeat),
	}, func(method string) error {
		return rpc.Errorf(rpc.ClassYarnException, "%s is not supported by this ResourceManager yet", method)
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
		return nil, rpc.Errorf(rpc.ClassYarnException, "registerNodeManager without a node id")
	}
	key := nodeKey(id)
	log := rm.log.WithField("node", key)
	capability := req.GetResource()
	if capability.GetMemory() < int64(rm.settings.MinAllocationMB) || capability.GetVirtualCores() < int32(rm.settings.MinAllocationCore) {
		msg := fmt.Sprintf("NodeManager from  %s doesn't satisfy minimum allocations, Sending SHUTDOWN signal to the NodeManager.", id.GetHost())
		log.Warn(msg)
		resp.NodeAction = yarnpb.NodeActionProto_SHUTDOWN.Enum()
		resp.DiagnosticsMessage = proto.String(msg)
		return resp, nil
	}
	now := rm.opts.Now()
	n := &rmNode{id: id, key: key, httpPort: req.GetHttpPort(), rack: "/default-rack", capability: capability,
		state: yarnpb.NodeStateProto_NS_RUNNING, version: req.GetNmVersion(), lastHeartbeat: now, healthTime: now.UnixMilli()}
	rm.nodes.mu.Lock()
	_, again := rm.nodes.nodes[key]
	rm.nodes.nodes[key] = n
	rm.nodes.mu.Unlock()
	if again {
		rm.nodeLost(key) // its containers did not survive the NodeManager's restart
	}
	if err := rm.engine.AddNode(scheduler.NodeSpec{ID: key, Rack: n.rack, Capacity: resourceOf(capability)}); err != nil {
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
	key := nodeKey(st.GetNodeId())
	rm.nodes.mu.Lock()
	defer rm.nodes.mu.Unlock()
	n, ok := rm.nodes.nodes[key]
	if !ok || n.state != yarnpb.NodeStateProto_NS_RUNNING {
		// Unknown or LOST: the NodeManager must register again.
		rm.log.WithField("node", key).Info("heartbeat from an unregistered node: asking it to resync")
		return &yarnpb.NodeHeartbeatResponseProto{ResponseId: proto.Int32(0), NodeAction: yarnpb.NodeActionProto_RESYNC.Enum(),
			DiagnosticsMessage: proto.String("Node not found resyncing " + key)}, nil
	}
	if last := n.lastResponse; last != nil {
		switch {
		case st.GetResponseId()+1 == last.GetResponseId():
			return last, nil // a retried heartbeat: answer it again
		case st.GetResponseId()+1 < last.GetResponseId():
			msg := fmt.Sprintf("Too far behind rm response id:%d nm response id:%d", last.GetResponseId(), st.GetResponseId())
			rm.log.WithField("node", key).Warn(msg)
			n.state = yarnpb.NodeStateProto_NS_REBOOTED
			return &yarnpb.NodeHeartbeatResponseProto{ResponseId: proto.Int32(0), NodeAction: yarnpb.NodeActionProto_RESYNC.Enum(),
				DiagnosticsMessage: proto.String(msg)}, nil
		}
	}
	n.lastHeartbeat = rm.opts.Now()
	n.containers = st.GetContainersStatuses()
	rm.nodeStatuses(key, n.containers)
	if h := st.GetNodeHealthStatus(); h != nil {
		n.healthReport, n.healthTime = h.GetHealthReport(), h.GetLastHealthReportTime()
	}
	resp := &yarnpb.NodeHeartbeatResponseProto{
		ResponseId:            proto.Int32(st.GetResponseId() + 1),
		NodeAction:            yarnpb.NodeActionProto_NORMAL.Enum(),
		NextHeartBeatInterval: proto.Int64(rm.settings.NMHeartbeat.Milliseconds()),
	}
	// Keys the NodeManager does not have yet (first heartbeat after a roll).
	if cur := rm.containerKeys.Current(); req.GetLastKnownContainerTokenMasterKey().GetKeyId() != cur.ID {
		resp.ContainerTokenMasterKey = masterKey(cur)
	}
	if cur := rm.nmKeys.Current(); req.GetLastKnownNmTokenMasterKey().GetKeyId() != cur.ID {
		resp.NmTokenMasterKey = masterKey(cur)
	}
	resp.ContainersToCleanup, resp.ContainersToBeRemovedFromNm = rm.nodeDirectives(key)
	n.lastResponse = resp
	return resp, nil
}

// watchNodes marks NodeManagers LOST when their heartbeats stop, until ctx ends.
func (rm *ResourceManager) watchNodes(ctx context.Context) {
	tick := rm.settings.NMExpiry / 10
	tick = min(max(tick, 10*time.Millisecond), time.Second)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			for _, key := range rm.nodes.expire(rm.opts.Now(), rm.settings.NMExpiry) {
				rm.log.WithField("node", key).Warn("NodeManager expired: no heartbeat within yarn.nm.liveness-monitor.expiry-interval-ms; node is LOST")
				rm.nodeLost(key)
			}
		}
	}
}
