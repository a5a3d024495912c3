package rmservice

// Node attributes (Hadoop 3.2+: `yarn nodeattributes`, node-attribute targets in placement
// constraints). Bobbin's ResourceManager keeps none of Hadoop's (a borrowed server's
// automatic labels show in node reports' labels, not here): an administrator's mapping is
// refused by name, and the queries answer truthfully that no node has any, as Apache's RM
// answers a cluster where none were set.

import (
	"context"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
)

// nodeAttributesRefused answers an administrator's attempt to set node attributes.
func nodeAttributesRefused() error {
	return rpc.Errorf(exceptions.YarnException, "node attributes (mapAttributesToNodes, `yarn nodeattributes -add/-remove/-replace`) are not supported by Bobbin's ResourceManager: no node has any, and placement constraints (on node attributes too) are refused")
}

func (s *clientService) getClusterNodeAttributes(context.Context, *yarnpb.GetClusterNodeAttributesRequestProto) (*yarnpb.GetClusterNodeAttributesResponseProto, error) {
	return &yarnpb.GetClusterNodeAttributesResponseProto{}, nil
}

func (s *clientService) getAttributesToNodes(context.Context, *yarnpb.GetAttributesToNodesRequestProto) (*yarnpb.GetAttributesToNodesResponseProto, error) {
	return &yarnpb.GetAttributesToNodesResponseProto{}, nil
}

func (s *clientService) getNodesToAttributes(context.Context, *yarnpb.GetNodesToAttributesRequestProto) (*yarnpb.GetNodesToAttributesResponseProto, error) {
	return &yarnpb.GetNodesToAttributesResponseProto{}, nil
}

func (s *adminService) mapAttributesToNodes(ctx context.Context, _ *yarnpb.NodesToAttributesMappingRequestProto) (*yarnpb.NodesToAttributesMappingResponseProto, error) {
	if err := s.authorize(ctx, "mapAttributesToNodes"); err != nil {
		return nil, err
	}
	return nil, nodeAttributesRefused()
}
