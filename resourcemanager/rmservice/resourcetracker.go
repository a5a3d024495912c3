package rmservice

import (
	"context"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/resourcemanager/nmheartbeat"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmcore"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
	"github.com/bobbin-yarn/bobbin/yarn/protocol"
)

// resourceTracker answers ResourceTracker (yarn.resourcemanager.resource-tracker.address):
// NodeManagers register, then heartbeat. See protocol.md §4.4.
type resourceTracker struct {
	rm *rmcore.Core
	// heartbeats decodes nodeHeartbeat requests, running containers' statuses by id, and
	// registerNodeManager requests, plain container statuses lean.
	heartbeats nmheartbeat.Decoder
}

func NewResourceTracker(rm *rmcore.Core) (*rpc.Protocol, error) {
	t := &resourceTracker{rm: rm}
	sd := yarnpb.File_yarn_ResourceTracker_proto.Services().ByName("ResourceTrackerService")
	return rpc.ServiceProtocol(protocol.ResourceTracker, sd, map[string]rpc.Method{
		"registerNodeManager":   rpc.UnaryDecoded(t.heartbeats.DecodeRegistration, t.registerNodeManager),
		"nodeHeartbeat":         rpc.UnaryDecoded(t.heartbeats.Decode, t.nodeHeartbeat),
		"unRegisterNodeManager": rpc.Unary(t.unRegisterNodeManager),
	}, func(method string) error {
		return rpc.Errorf(exceptions.YarnException, "%s is not supported by this ResourceManager yet", method)
	})
}

func (t *resourceTracker) registerNodeManager(_ context.Context, reg nmheartbeat.Registration) (*yarnpb.RegisterNodeManagerResponseProto, error) {
	return t.rm.RegisterNodeManager(reg)
}

func (t *resourceTracker) nodeHeartbeat(_ context.Context, hb nmheartbeat.Request) (*yarnpb.NodeHeartbeatResponseProto, error) {
	return t.rm.NodeHeartbeat(hb), nil
}

func (t *resourceTracker) unRegisterNodeManager(_ context.Context, req *yarnpb.UnRegisterNodeManagerRequestProto) (*yarnpb.UnRegisterNodeManagerResponseProto, error) {
	t.rm.UnregisterNodeManager(req.GetNodeId())
	return &yarnpb.UnRegisterNodeManagerResponseProto{}, nil
}
