package resourcemanager

import (
	"context"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/rpc"
)

// AdminProtocolName is the protocol `yarn rmadmin` speaks.
const AdminProtocolName = "org.apache.hadoop.yarn.server.api.ResourceManagerAdministrationProtocolPB"

// adminService answers ResourceManagerAdministrationProtocol (yarn.resourcemanager.admin.address).
type adminService struct {
	rm *ResourceManager
}

func newAdminService(rm *ResourceManager) (*rpc.Protocol, error) {
	s := &adminService{rm: rm}
	sd := yarnpb.File_yarn_resourcemanager_administration_protocol_proto.Services().ByName("ResourceManagerAdministrationProtocolService")
	return rpc.ServiceProtocol(AdminProtocolName, sd, map[string]rpc.Method{
		"refreshQueues": rpc.Unary(s.refreshQueues),
		"refreshNodes": rpc.Unary(func(ctx context.Context, _ *yarnpb.RefreshNodesRequestProto) (*yarnpb.RefreshNodesResponseProto, error) {
			return &yarnpb.RefreshNodesResponseProto{}, s.authorize(ctx, "refreshNodes")
		}),
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
			return &yarnpb.GetGroupsForUserResponseProto{Groups: userGroups(req.GetUser())}, nil
		}),
	}, func(method string) error {
		return rpc.Errorf(rpc.ClassYarnException, "%s is not supported by this ResourceManager yet", method)
	})
}

// authorize applies yarn.admin.acl when yarn.acl.enable is set.
func (s *adminService) authorize(ctx context.Context, op string) error {
	if !s.rm.settings.ACLEnabled {
		return nil
	}
	c, _ := rpc.CallerFrom(ctx)
	if c != nil && s.rm.settings.AdminACL.Allows(c.User, userGroups(c.User)) {
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
		return nil, rpc.Errorf(rpc.ClassYarnException, "Failed to re-init queues : %v", err)
	}
	return &yarnpb.RefreshQueuesResponseProto{}, nil
}
