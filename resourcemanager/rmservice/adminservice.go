package rmservice

import (
	"context"
	"time"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmcore"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
	"github.com/bobbin-yarn/bobbin/yarn/protocol"
)

// adminService answers ResourceManagerAdministrationProtocol (yarn.resourcemanager.admin.address).
type adminService struct {
	rm *rmcore.Core
}

func NewAdminService(rm *rmcore.Core) (*rpc.Protocol, error) {
	s := &adminService{rm: rm}
	sd := yarnpb.File_yarn_resourcemanager_administration_protocol_proto.Services().ByName("ResourceManagerAdministrationProtocolService")
	return rpc.ServiceProtocol(protocol.ResourceManagerAdministration, sd, map[string]rpc.Method{
		"refreshQueues":               rpc.Unary(s.refreshQueues),
		"refreshNodes":                rpc.Unary(s.refreshNodes),
		"addToClusterNodeLabels":      rpc.Unary(s.addToClusterNodeLabels),
		"removeFromClusterNodeLabels": rpc.Unary(s.removeFromClusterNodeLabels),
		"replaceLabelsOnNodes":        rpc.Unary(s.replaceLabelsOnNodes),
		"updateNodeResource":          rpc.Unary(s.updateNodeResource),
		"refreshSuperUserGroupsConfiguration": rpc.Unary(func(ctx context.Context, _ *yarnpb.RefreshSuperUserGroupsConfigurationRequestProto) (*yarnpb.RefreshSuperUserGroupsConfigurationResponseProto, error) {
			return &yarnpb.RefreshSuperUserGroupsConfigurationResponseProto{}, s.authorize(ctx, "refreshSuperUserGroupsConfiguration")
		}),
		"refreshUserToGroupsMappings": rpc.Unary(func(ctx context.Context, _ *yarnpb.RefreshUserToGroupsMappingsRequestProto) (*yarnpb.RefreshUserToGroupsMappingsResponseProto, error) {
			return &yarnpb.RefreshUserToGroupsMappingsResponseProto{}, s.authorize(ctx, "refreshUserToGroupsMappings")
		}),
		"refreshAdminAcls": rpc.Unary(func(ctx context.Context, _ *yarnpb.RefreshAdminAclsRequestProto) (*yarnpb.RefreshAdminAclsResponseProto, error) {
			return &yarnpb.RefreshAdminAclsResponseProto{}, s.authorize(ctx, "refreshAdminAcls")
		}),
		"refreshServiceAcls": rpc.Unary(func(ctx context.Context, _ *yarnpb.RefreshServiceAclsRequestProto) (*yarnpb.RefreshServiceAclsResponseProto, error) {
			return &yarnpb.RefreshServiceAclsResponseProto{}, s.authorize(ctx, "refreshServiceAcls")
		}),
		"getGroupsForUser": rpc.Unary(func(_ context.Context, req *yarnpb.GetGroupsForUserRequestProto) (*yarnpb.GetGroupsForUserResponseProto, error) {
			return &yarnpb.GetGroupsForUserResponseProto{Groups: rmcore.UserGroups(req.GetUser())}, nil
		}),
	}, func(method string) error {
		return rpc.Errorf(exceptions.YarnException, "%s is not supported by this ResourceManager yet", method)
	})
}

// authorize applies yarn.admin.acl when yarn.acl.enable is set.
func (s *adminService) authorize(ctx context.Context, op string) error {
	if !s.rm.Settings.ACLEnabled {
		return nil
	}
	c, _ := rpc.CallerFrom(ctx)
	if c != nil && s.rm.Settings.AdminACL.Allows(c.User, rmcore.UserGroups(c.User)) {
		return nil
	}
	user := ""
	if c != nil {
		user = c.User
	}
	return rpc.Errorf(rpc.ClassAccessControl, "User %s doesn't have permission to call '%s'", user, op)
}

func (s *adminService) refreshQueues(ctx context.Context, _ *yarnpb.RefreshQueuesRequestProto) (*yarnpb.RefreshQueuesResponseProto, error) {
	if err := s.authorize(ctx, "refreshQueues"); err != nil {
		return nil, err
	}
	if err := s.rm.RefreshQueues(); err != nil {
		// The caller sees why (as a YarnException, which clients do not retry); the old
		// queues stay.
		return nil, rpc.Errorf(exceptions.YarnException, "Failed to re-init queues : %v", err)
	}
	return &yarnpb.RefreshQueuesResponseProto{}, nil
}

// refreshNodes re-reads the include/exclude files; a 3.x client may ask for a graceful
// decommission with a timeout in seconds.
func (s *adminService) refreshNodes(ctx context.Context, req *yarnpb.RefreshNodesRequestProto) (*yarnpb.RefreshNodesResponseProto, error) {
	if err := s.authorize(ctx, "refreshNodes"); err != nil {
		return nil, err
	}
	graceful := req.GetDecommissionType() == yarnpb.DecommissionTypeProto_DECOMMISSION_GRACEFUL
	if err := s.rm.RefreshNodes(graceful, time.Duration(req.GetDecommissionTimeout())*time.Second); err != nil {
		return nil, rpc.Errorf(exceptions.YarnException, "refreshNodes failed: %v", err)
	}
	return &yarnpb.RefreshNodesResponseProto{}, nil
}

// labelsEnabled refuses node-label administration unless yarn.node-labels.enabled.
func (s *adminService) labelsEnabled(ctx context.Context, op string) error {
	if err := s.authorize(ctx, op); err != nil {
		return err
	}
	if !s.rm.Settings.NodeLabels {
		return rpc.Errorf(rpc.ClassIOException, "Node-label-based scheduling is disabled. Please check yarn.node-labels.enabled")
	}
	return nil
}

func (s *adminService) addToClusterNodeLabels(ctx context.Context, req *yarnpb.AddToClusterNodeLabelsRequestProto) (*yarnpb.AddToClusterNodeLabelsResponseProto, error) {
	if err := s.labelsEnabled(ctx, "addToClusterNodeLabels"); err != nil {
		return nil, err
	}
	// 2.x clients send names (field 1), 3.x clients NodeLabelProtos (field 2).
	labels := append([]string(nil), req.GetDeprecatedNodeLabels()...)
	for _, l := range req.GetNodeLabels() {
		labels = append(labels, l.GetName())
	}
	if err := s.rm.Labels.Add(labels); err != nil {
		return nil, rmcore.LabelError(err)
	}
	if err := s.rm.SaveLabels(); err != nil {
		return nil, rpc.Errorf(exceptions.YarnException, "node labels added but not stored: %v", err)
	}
	s.rm.Log.WithField("labels", labels).Info("cluster node labels added")
	return &yarnpb.AddToClusterNodeLabelsResponseProto{}, nil
}

func (s *adminService) removeFromClusterNodeLabels(ctx context.Context, req *yarnpb.RemoveFromClusterNodeLabelsRequestProto) (*yarnpb.RemoveFromClusterNodeLabelsResponseProto, error) {
	if err := s.labelsEnabled(ctx, "removeFromClusterNodeLabels"); err != nil {
		return nil, err
	}
	tree := s.rm.Queues()
	changed, err := s.rm.Labels.Remove(req.GetNodeLabels(), func(label string) string {
		for _, q := range tree.Queues() {
			for _, l := range q.AccessibleNodeLabels {
				if l == label {
					return q.Path
				}
			}
		}
		return ""
	})
	if err != nil {
		return nil, rmcore.LabelError(err)
	}
	s.rm.Relabel(changed)
	if err := s.rm.SaveLabels(); err != nil {
		return nil, rpc.Errorf(exceptions.YarnException, "node labels removed but not stored: %v", err)
	}
	s.rm.Log.WithField("labels", req.GetNodeLabels()).Info("cluster node labels removed")
	return &yarnpb.RemoveFromClusterNodeLabelsResponseProto{}, nil
}

func (s *adminService) replaceLabelsOnNodes(ctx context.Context, req *yarnpb.ReplaceLabelsOnNodeRequestProto) (*yarnpb.ReplaceLabelsOnNodeResponseProto, error) {
	if err := s.labelsEnabled(ctx, "replaceLabelsOnNode"); err != nil {
		return nil, err
	}
	m := map[string][]string{}
	var changed []string
	for _, e := range req.GetNodeToLabels() {
		key := rmstate.NodeKey(e.GetNodeId())
		if req.GetFailOnUnknownNodes() && !s.rm.Nodes.Known(e.GetNodeId()) {
			return nil, rpc.Errorf(exceptions.YarnException, "Following nodes are not running in the cluster: [%s]", key)
		}
		m[key] = e.GetNodeLabels()
		changed = append(changed, key)
	}
	if err := s.rm.Labels.Replace(m); err != nil {
		return nil, rmcore.LabelError(err)
	}
	s.rm.Relabel(changed)
	if err := s.rm.SaveLabels(); err != nil {
		return nil, rpc.Errorf(exceptions.YarnException, "labels replaced but not stored: %v", err)
	}
	s.rm.Log.WithField("nodes", changed).Info("labels replaced on nodes")
	return &yarnpb.ReplaceLabelsOnNodeResponseProto{}, nil
}

// updateNodeResource changes registered nodes' schedulable capacity (rmadmin
// -updateNodeResource); running containers are kept.
func (s *adminService) updateNodeResource(ctx context.Context, req *yarnpb.UpdateNodeResourceRequestProto) (*yarnpb.UpdateNodeResourceResponseProto, error) {
	if err := s.authorize(ctx, "updateNodeResource"); err != nil {
		return nil, err
	}
	rm := s.rm
	for _, e := range req.GetNodeResourceMap() {
		key := rmstate.NodeKey(e.GetNodeId())
		r := e.GetResourceOption().GetResource()
		if r.GetMemory() < 0 || r.GetVirtualCores() < 0 {
			return nil, rpc.Errorf(exceptions.YarnException, "Invalid resource %v for node %s", r, key)
		}
		// The whole resource, other types (GPUs) included.
		if !rm.Nodes.SetCapability(key, proto.Clone(r).(*yarnpb.ResourceProto)) {
			return nil, rpc.Errorf(exceptions.YarnException, "Resource update get failed on all nodes due to change resource on an unrecognized node: %s", key)
		}
		rm.SyncSchedulable(key)
		rm.Log.WithFields(map[string]any{"node": key, "memory_mb": r.GetMemory(), "vcores": r.GetVirtualCores()}).Info("node resource updated")
	}
	return &yarnpb.UpdateNodeResourceResponseProto{}, nil
}
