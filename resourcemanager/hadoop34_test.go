package resourcemanager

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
	"github.com/bobbin-yarn/bobbin/yarn/protocol"
)

// The calls Hadoop 3.2–3.4 clients add, answered as Apache's 3.4 RM answers them: node
// attribute queries (none exist), an administrator's node attributes refused by name, the
// federation Router's administration refused in Apache's words. (transitionToObserver, on
// an HA RM's admin port: TestHAManualTransitions.)
func TestHadoop34CallsAnswerAsApache(t *testing.T) {
	rm, cl := startRM(t, testConf())
	ctx := context.Background()
	var attrs yarnpb.GetClusterNodeAttributesResponseProto
	if err := cl.Call(ctx, "getClusterNodeAttributes", &yarnpb.GetClusterNodeAttributesRequestProto{}, &attrs); err != nil || len(attrs.GetNodeAttributes()) != 0 {
		t.Errorf("getClusterNodeAttributes: %v %v", err, &attrs)
	}
	var toNodes yarnpb.GetAttributesToNodesResponseProto
	if err := cl.Call(ctx, "getAttributesToNodes", &yarnpb.GetAttributesToNodesRequestProto{}, &toNodes); err != nil || len(toNodes.GetAttributesToNodes()) != 0 {
		t.Errorf("getAttributesToNodes: %v %v", err, &toNodes)
	}
	var ofNodes yarnpb.GetNodesToAttributesResponseProto
	if err := cl.Call(ctx, "getNodesToAttributes", &yarnpb.GetNodesToAttributesRequestProto{Hostnames: []string{"localhost"}}, &ofNodes); err != nil || len(ofNodes.GetNodesToAttributes()) != 0 {
		t.Errorf("getNodesToAttributes: %v %v", err, &ofNodes)
	}

	adm := rpc.NewClient(rpc.ClientOptions{Addr: rm.AdminAddr().String(), Protocol: protocol.ResourceManagerAdministration, User: "admin", ConnectRetries: -1, Logger: testutil.QuietLogger()})
	defer adm.Close()
	re := remote(t, adm.Call(ctx, "mapAttributesToNodes", &yarnpb.NodesToAttributesMappingRequestProto{NodeToAttributes: []*yarnpb.NodeToAttributesProto{{Node: proto.String("localhost"),
		NodeAttributes: []*yarnpb.NodeAttributeProto{{AttributeKey: &yarnpb.NodeAttributeKeyProto{AttributeName: proto.String("os")}, AttributeValue: proto.String("linux")}}}}}, &yarnpb.NodesToAttributesMappingResponseProto{}))
	if re.Class != exceptions.YarnException || !strings.Contains(re.Message, "node attributes (mapAttributesToNodes") {
		t.Errorf("mapAttributesToNodes: %+v", re)
	}
	re = remote(t, adm.Call(ctx, "getFederationSubClusters", &yarnpb.GetSubClustersRequestProto{}, &yarnpb.GetSubClustersResponseProto{}))
	if re.Class != exceptions.YarnException || re.Message != "It is not allowed to call the RM's  getFederationSubClusters.  Please call Router's getFederationSubClusters to get SubClusters." {
		t.Errorf("getFederationSubClusters: %+v", re)
	}
	// sub_cluster_id (set only by a Router) is carried and changes nothing.
	if err := adm.Call(ctx, "refreshQueues", &yarnpb.RefreshQueuesRequestProto{SubClusterId: proto.String("SC-1")}, &yarnpb.RefreshQueuesResponseProto{}); err != nil {
		t.Errorf("refreshQueues with a sub-cluster id: %v", err)
	}

}
