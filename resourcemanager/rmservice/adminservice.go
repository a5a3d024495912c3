package rmservice

import (
	"context"
	"time"

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
		"refreshQueues":               rpc.Unary(audited(s, "refreshQueues", s.refreshQueues)),
		"refreshNodes":                rpc.Unary(audited(s, "refreshNodes", s.refreshNodes)),
		"addToClusterNodeLabels":      rpc.Unary(audited(s, "addToClusterNodeLabels", s.addToClusterNodeLabels)),
		"removeFromClusterNodeLabels": rpc.Unary(audited(s, "removeFromClusterNodeLabels", s.removeFromClusterNodeLabels)),
		"replaceLabelsOnNodes":        rpc.Unary(audited(s, "replaceLabelsOnNode", s.replaceLabelsOnNodes)),
		"updateNodeResource":          rpc.Unary(audited(s, "updateNodeResource", s.updateNodeResource)),
		"mapAttributesToNodes":        rpc.Unary(audited(s, "mapAttributesToNodes", s.mapAttributesToNodes)),
		"refreshSuperUserGroupsConfiguration": rpc.Unary(audited(s, "refreshSuperUserGroupsConfiguration", func(ctx context.Context, _ *yarnpb.RefreshSuperUserGroupsConfigurationRequestProto) (*yarnpb.RefreshSuperUserGroupsConfigurationResponseProto, error) {
			return &yarnpb.RefreshSuperUserGroupsConfigurationResponseProto{}, s.refresh(ctx, "refreshSuperUserGroupsConfiguration", s.rm.RefreshProxyUsers)
		})),
		"refreshUserToGroupsMappings": rpc.Unary(audited(s, "refreshUserToGroupsMappings", func(ctx context.Context, _ *yarnpb.RefreshUserToGroupsMappingsRequestProto) (*yarnpb.RefreshUserToGroupsMappingsResponseProto, error) {
			return &yarnpb.RefreshUserToGroupsMappingsResponseProto{}, s.refresh(ctx, "refreshUserToGroupsMappings", func() error { s.rm.RefreshGroups(); return nil })
		})),
		"refreshAdminAcls": rpc.Unary(audited(s, "refreshAdminAcls", func(ctx context.Context, _ *yarnpb.RefreshAdminAclsRequestProto) (*yarnpb.RefreshAdminAclsResponseProto, error) {
			return &yarnpb.RefreshAdminAclsResponseProto{}, s.refresh(ctx, "refreshAdminAcls", s.rm.RefreshAdminACLs)
		})),
		"refreshServiceAcls": rpc.Unary(audited(s, "refreshServiceAcls", func(ctx context.Context, _ *yarnpb.RefreshServiceAclsRequestProto) (*yarnpb.RefreshServiceAclsResponseProto, error) {
			return &yarnpb.RefreshServiceAclsResponseProto{}, s.refresh(ctx, "refreshServiceAcls", s.rm.RefreshServiceACLs)
		})),
		"getGroupsForUser": rpc.Unary(func(_ context.Context, req *yarnpb.GetGroupsForUserRequestProto) (*yarnpb.GetGroupsForUserResponseProto, error) {
			return &yarnpb.GetGroupsForUserResponseProto{Groups: s.rm.UserGroups(req.GetUser())}, nil
		}),
	}, func(method string) error {
		if msg, ok := routerOnly[method]; ok {
			return rpc.Errorf(exceptions.YarnException, "%s", msg)
		}
		return rpc.Errorf(exceptions.YarnException, "%s is not supported by this ResourceManager yet", method)
	})
}

// routerOnly are the 3.4 federation Router's administration calls, which a
// ResourceManager refuses: Apache's AdminService's words.
var routerOnly = map[string]string{
	"deregisterSubCluster":             "It is not allowed to call the RM's deregisterSubCluster to set the subCluster(s) state to SC_LOST, Please call Router's deregisterSubCluster to set.",
	"saveFederationQueuePolicy":        "It is not allowed to call the RM's saveFederationQueuePolicy.  Please call Router's saveFederationQueuePolicy to set Policy.",
	"batchSaveFederationQueuePolicies": "It is not allowed to call the RM's  batchSaveFederationQueuePolicies.  Please call Router's batchSaveFederationQueuePolicies to set Policies.",
	"listFederationQueuePolicies":      "It is not allowed to call the RM's  listFederationQueuePolicies.  Please call Router's listFederationQueuePolicies to list Policies.",
	"deleteFederationApplication":      "It is not allowed to call the RM's  deleteFederationApplication.  Please call Router's deleteFederationApplication to delete Application.",
	"getFederationSubClusters":         "It is not allowed to call the RM's  getFederationSubClusters.  Please call Router's getFederationSubClusters to get SubClusters.",
	"deleteFederationPoliciesByQueues": "It is not allowed to call the RM's  deleteFederationQueuePoliciesByQueues.  Please call Router's deleteFederationQueuePoliciesByQueues to delete Policies.",
}

// audited writes an administration call's audit line, as Java's AdminService does:
// success, or failure with the reason (a refused caller, a broken file).
func audited[Req, Resp any](s *adminService, op string, fn func(context.Context, Req) (Resp, error)) func(context.Context, Req) (Resp, error) {
	return func(ctx context.Context, req Req) (Resp, error) {
		resp, err := fn(ctx, req)
		auditCall(ctx, s.rm, op, "AdminService", "yarn.admin.acl", err)
		return resp, err
	}
}

// authorize applies yarn.admin.acl when yarn.acl.enable is set.
func (s *adminService) authorize(ctx context.Context, op string) error {
	if !s.rm.Settings().ACLEnabled {
		return nil
	}
	c, _ := rpc.CallerFrom(ctx)
	if c != nil && s.rm.IsAdmin(c.User) {
		return nil
	}
	user := ""
	if c != nil {
		user = c.User
	}
	return rpc.Errorf(rpc.ClassAccessControl, "User %s doesn't have permission to call '%s'", user, op)
}

// refresh runs an admin's refresh of what op names; a failure reaches the caller as a
// YarnException with the reason, and nothing changes.
func (s *adminService) refresh(ctx context.Context, op string, do func() error) error {
	if err := s.authorize(ctx, op); err != nil {
		return err
	}
	if err := do(); err != nil {
		return rpc.Errorf(exceptions.YarnException, "%s failed: %v", op, err)
	}
	return nil
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

func (s *adminService) addToClusterNodeLabels(ctx context.Context, req *yarnpb.AddToClusterNodeLabelsRequestProto) (*yarnpb.AddToClusterNodeLabelsResponseProto, error) {
	if err := s.authorize(ctx, "addToClusterNodeLabels"); err != nil {
		return nil, err
	}
	// 2.x clients send names (field 1), 3.x clients NodeLabelProtos (field 2), with
	// exclusivity; a 3.x client fills both with the same labels (Java reads field 2 when
	// it has any).
	var labels []rmstate.Label
	for _, l := range req.GetNodeLabels() {
		labels = append(labels, rmstate.Label{Name: l.GetName(), Exclusive: l.GetIsExclusive()})
	}
	if len(labels) == 0 {
		for _, l := range req.GetDeprecatedNodeLabels() {
			labels = append(labels, rmstate.Label{Name: l, Exclusive: true})
		}
	}
	return &yarnpb.AddToClusterNodeLabelsResponseProto{}, s.rm.AddClusterLabels(labels)
}

func (s *adminService) removeFromClusterNodeLabels(ctx context.Context, req *yarnpb.RemoveFromClusterNodeLabelsRequestProto) (*yarnpb.RemoveFromClusterNodeLabelsResponseProto, error) {
	if err := s.authorize(ctx, "removeFromClusterNodeLabels"); err != nil {
		return nil, err
	}
	return &yarnpb.RemoveFromClusterNodeLabelsResponseProto{}, s.rm.RemoveClusterLabels(req.GetNodeLabels())
}

func (s *adminService) replaceLabelsOnNodes(ctx context.Context, req *yarnpb.ReplaceLabelsOnNodeRequestProto) (*yarnpb.ReplaceLabelsOnNodeResponseProto, error) {
	if err := s.authorize(ctx, "replaceLabelsOnNode"); err != nil {
		return nil, err
	}
	m := map[string][]string{}
	for _, e := range req.GetNodeToLabels() {
		m[rmstate.NodeKey(e.GetNodeId())] = e.GetNodeLabels()
	}
	return &yarnpb.ReplaceLabelsOnNodeResponseProto{}, s.rm.ReplaceNodeLabels(m, req.GetFailOnUnknownNodes())
}

// updateNodeResource changes registered nodes' schedulable capacity (rmadmin
// -updateNodeResource); running containers are kept.
func (s *adminService) updateNodeResource(ctx context.Context, req *yarnpb.UpdateNodeResourceRequestProto) (*yarnpb.UpdateNodeResourceResponseProto, error) {
	if err := s.authorize(ctx, "updateNodeResource"); err != nil {
		return nil, err
	}
	for _, e := range req.GetNodeResourceMap() {
		if err := s.rm.UpdateNodeResource(rmstate.NodeKey(e.GetNodeId()), e.GetResourceOption().GetResource()); err != nil {
			return nil, err
		}
	}
	return &yarnpb.UpdateNodeResourceResponseProto{}, nil
}
