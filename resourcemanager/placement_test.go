package resourcemanager

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/client/rmclient"
	"github.com/bobbin-yarn/bobbin/conf"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/rpc/token"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
)

// TestPlacementConstraintsRefusedWhereJavaRefusesThem: under the default handler
// (disabled) a registration carrying constraints and an allocate carrying
// SchedulingRequests fail with DisabledPlacementProcessor's YarnException; under the
// scheduler handler with the Fair Scheduler the allocate fails as the Java RM fails it
// for a scheduler that cannot handle them. The failed allocate does not advance the
// response id.
func TestPlacementConstraintsRefusedWhereJavaRefusesThem(t *testing.T) {
	constraints := []*yarnpb.PlacementConstraintMapEntryProto{{AllocationTags: []string{"foo"}, PlacementConstraint: &yarnpb.PlacementConstraintProto{}}}
	scheduling := []*yarnpb.SchedulingRequestProto{schedulingRequest(1, 2, "foo", nil)}
	for _, handler := range []string{"", "fair"} {
		t.Run("handler="+handler, func(t *testing.T) {
			c := testConf()
			if handler == "fair" {
				c = testConf("yarn.resourcemanager.placement-constraints.handler", "scheduler",
					"yarn.resourcemanager.scheduler.class", "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler")
			}
			rm, cl := startRM(t, c)
			am, attID := unregisteredAM(t, rm, cl)
			ctx := context.Background()
			err := am.Call(ctx, "registerApplicationMaster", &yarnpb.RegisterApplicationMasterRequestProto{PlacementConstraints: constraints}, &yarnpb.RegisterApplicationMasterResponseProto{})
			if handler == "" {
				re := remote(t, err)
				want := "Found non empty placement constraints map in RegisterApplicationMasterRequest for application=" + attID +
					", but the configured yarn.resourcemanager.placement-constraints.handler cannot handle placement constraints. Rejecting this registerApplicationMaster operation"
				if re.Class != exceptions.YarnException || re.Message != want {
					t.Fatalf("register with constraints: %s %q, want %q", re.Class, re.Message, want)
				}
				if err := am.Call(ctx, "registerApplicationMaster", &yarnpb.RegisterApplicationMasterRequestProto{}, &yarnpb.RegisterApplicationMasterResponseProto{}); err != nil {
					t.Fatal(err)
				}
			} else if err != nil {
				t.Fatalf("the scheduler handler takes the registration's constraints: %v", err)
			}
			re := remote(t, am.Call(ctx, "allocate", &yarnpb.AllocateRequestProto{ResponseId: proto.Int32(0), SchedulingRequests: scheduling}, &yarnpb.AllocateResponseProto{}))
			want := "Found non empty SchedulingRequest in AllocateRequest for application=" + attID + ", but the configured yarn.resourcemanager.placement-constraints.handler cannot handle placement constraints. Rejecting this allocate operation"
			if handler == "fair" {
				want = "Found non empty SchedulingRequest of AllocateRequest for application=" + attID + ", however the configured scheduler=org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler cannot handle placement constraints, rejecting this allocate operation"
			}
			if re.Class != exceptions.YarnException || re.Message != want {
				t.Fatalf("allocate with SchedulingRequests: %s %q, want %q", re.Class, re.Message, want)
			}
			// The refused call left the response id where it was.
			if err := am.Call(ctx, "allocate", &yarnpb.AllocateRequestProto{ResponseId: proto.Int32(0)}, &yarnpb.AllocateResponseProto{}); err != nil {
				t.Fatalf("the next allocate, response id 0: %v", err)
			}
		})
	}
}

// TestPlacementConstraintsPlaced: with the scheduler handler and the Capacity Scheduler,
// SchedulingRequests are placed under their constraints, the registered constraint of
// their tag included, and their containers carry the request id and tags (the AMRM
// client matches them to its outstanding requests by both). Bad requests get the Java
// RM's words.
func TestPlacementConstraintsPlaced(t *testing.T) {
	rm, cl := startRM(t, testConf("yarn.resourcemanager.placement-constraints.handler", "scheduler"))
	for i := int32(0); i < 3; i++ {
		nm := newFakeNM(t, rm, 45454+i)
		nm.register(8192, 8)
		nm.heartbeat(0)
	}
	am, _ := unregisteredAM(t, rm, cl)
	ctx := context.Background()
	// "hb" registers anti-affinity to its own tag: its requests need none of their own.
	registered := []*yarnpb.PlacementConstraintMapEntryProto{{AllocationTags: []string{"hb"}, PlacementConstraint: notInNode("hb")}}
	if err := am.Call(ctx, "registerApplicationMaster", &yarnpb.RegisterApplicationMasterRequestProto{PlacementConstraints: registered}, &yarnpb.RegisterApplicationMasterResponseProto{}); err != nil {
		t.Fatal(err)
	}
	responseID := int32(0)
	allocate := func(reqs ...*yarnpb.SchedulingRequestProto) (*yarnpb.AllocateResponseProto, error) {
		var resp yarnpb.AllocateResponseProto
		err := am.Call(ctx, "allocate", &yarnpb.AllocateRequestProto{ResponseId: proto.Int32(responseID), SchedulingRequests: reqs}, &resp)
		if err == nil {
			responseID = resp.GetResponseId()
		}
		rm.Core().WaitStatuses() // what the answer acknowledged is settled in the table
		return &resp, err
	}
	var reqs []*yarnpb.SchedulingRequestProto
	for id := int64(2); id <= 5; id++ {
		reqs = append(reqs, schedulingRequest(id, 1, "zk", notInNode("zk")))
	}
	reqs = append(reqs, schedulingRequest(6, 3, "hb", nil))
	byTag := map[string]map[string]int{}
	ids := map[int64]int{}
	collect := func(resp *yarnpb.AllocateResponseProto) {
		for _, c := range resp.GetAllocatedContainers() {
			if len(c.GetAllocationTags()) != 1 {
				t.Fatalf("container %v has tags %v", c.GetId(), c.GetAllocationTags())
			}
			tag := c.GetAllocationTags()[0]
			if byTag[tag] == nil {
				byTag[tag] = map[string]int{}
			}
			byTag[tag][c.GetNodeId().String()]++
			ids[c.GetAllocationRequestId()]++
		}
	}
	// The first containers may come in this very answer (the pass can run before it is written).
	resp, err := allocate(reqs...)
	if err != nil {
		t.Fatal(err)
	}
	collect(resp)
	testutil.Eventually(t, 10*time.Second, "the placeable containers allocated", func() bool {
		resp, err := allocate()
		if err != nil {
			t.Fatal(err)
		}
		collect(resp)
		return len(byTag["zk"]) == 3 && len(byTag["hb"]) == 3
	})
	for tag, nodes := range byTag {
		for n, k := range nodes {
			if k != 1 {
				t.Fatalf("%d %s containers on %s: %v", k, tag, n, byTag)
			}
		}
	}
	if ids[6] != 3 || ids[2]+ids[3]+ids[4]+ids[5] != 3 {
		t.Fatalf("containers by allocation request id: %v", ids)
	}
	// The REST API shows each node's tags, as the Java RM's allocationTags.
	_, v, raw := restCall(t, rm, "GET", "/ws/v1/cluster/nodes", "", "")
	for _, n := range v["nodes"].(map[string]any)["node"].([]any) {
		tags := fmt.Sprint(n.(map[string]any)["allocationTags"])
		if tags != "map[allocationTagInfo:[map[allocationTag:hb allocationsCount:1] map[allocationTag:zk allocationsCount:1]]]" {
			t.Fatalf("node allocationTags %s in %s", tags, raw)
		}
	}
	// A pending request whose count alone changes is taken; one changing anything else
	// is refused in the Java RM's words, as are a missing sizing and OPPORTUNISTIC.
	var pending int64
	for id := int64(2); id <= 5; id++ {
		if ids[id] == 0 {
			pending = id
		}
	}
	if _, err := allocate(schedulingRequest(pending, 2, "zk", notInNode("zk"))); err != nil {
		t.Fatalf("a new count for pending request %d: %v", pending, err)
	}
	for name, tc := range map[string]struct {
		req  *yarnpb.SchedulingRequestProto
		want string
	}{
		"changed": {schedulingRequest(pending, 1, "other", notInNode("zk")), "we only allows changing numAllocations for the updated SchedulingRequest"},
		"sizing":  {&yarnpb.SchedulingRequestProto{AllocationRequestId: proto.Int64(9), Priority: &yarnpb.PriorityProto{Priority: proto.Int32(0)}}, "No ResourceSizing found in the scheduling request, please double check"},
		"opportunistic": {func() *yarnpb.SchedulingRequestProto {
			r := schedulingRequest(10, 1, "o", nil)
			r.ExecutionType = &yarnpb.ExecutionTypeRequestProto{ExecutionType: yarnpb.ExecutionTypeProto_OPPORTUNISTIC.Enum()}
			return r
		}(), "Only GUARANTEED execution type is supported."},
		"attribute": {schedulingRequest(11, 1, "a", &yarnpb.PlacementConstraintProto{SimpleConstraint: &yarnpb.SimplePlacementConstraintProto{Scope: proto.String("node"),
			TargetExpressions: []*yarnpb.PlacementConstraintTargetProto{{TargetType: yarnpb.PlacementConstraintTargetProto_NODE_ATTRIBUTE.Enum(), TargetKey: proto.String("java"), TargetValues: []string{"1.8"}}},
			MinCardinality:    proto.Int32(1), MaxCardinality: proto.Int32(1<<31 - 1)}}), `node attribute "java" in a placement constraint: node attributes are not served by Bobbin`},
	} {
		_, err := allocate(tc.req)
		re := remote(t, err)
		if re.Class != exceptions.YarnException || !strings.Contains(re.Message, tc.want) || (name != "attribute" && !strings.Contains(re.Message, "AppId=application_")) {
			t.Errorf("%s: %s %q, want a YarnException saying %q", name, re.Class, re.Message, tc.want)
		}
	}
}

// unregisteredAM submits an unmanaged application and returns its unregistered AM's client and attempt id.
func unregisteredAM(t *testing.T, rm *ResourceManager, cl *rmclient.Client) (*rpc.Client, string) {
	t.Helper()
	ctx := context.Background()
	na, _ := cl.GetNewApplication(ctx)
	id := na.GetApplicationId()
	if err := cl.Call(ctx, "submitApplication", &yarnpb.SubmitApplicationRequestProto{ApplicationSubmissionContext: &yarnpb.ApplicationSubmissionContextProto{
		ApplicationId: id, Queue: proto.String("default"), UnmanagedAm: proto.Bool(true)}}, &yarnpb.SubmitApplicationResponseProto{}); err != nil {
		t.Fatal(err)
	}
	rep, _ := cl.GetApplicationReport(ctx, id)
	return amClient(t, rm, token.FromProto(rep.GetAmRmToken())), records.AppIDFromProto(id).Attempt(1).String()
}

// registeredAMBesideOneNode starts an RM of conf c with one NodeManager (8 GB, 8 vcores)
// and returns it with the registered AM of an unmanaged application.
func registeredAMBesideOneNode(t *testing.T, c *conf.Configuration) (*ResourceManager, *rpc.Client) {
	t.Helper()
	rm, cl := startRM(t, c)
	nm := newFakeNM(t, rm, 45454)
	nm.register(8192, 8)
	nm.heartbeat(0)
	am, _ := unregisteredAM(t, rm, cl)
	if err := am.Call(context.Background(), "registerApplicationMaster", &yarnpb.RegisterApplicationMasterRequestProto{}, &yarnpb.RegisterApplicationMasterResponseProto{}); err != nil {
		t.Fatal(err)
	}
	return rm, am
}

func schedulingRequest(id int64, n int32, tag string, c *yarnpb.PlacementConstraintProto) *yarnpb.SchedulingRequestProto {
	return &yarnpb.SchedulingRequestProto{AllocationRequestId: proto.Int64(id), Priority: &yarnpb.PriorityProto{Priority: proto.Int32(0)},
		ExecutionType:  &yarnpb.ExecutionTypeRequestProto{ExecutionType: yarnpb.ExecutionTypeProto_GUARANTEED.Enum()},
		AllocationTags: []string{tag}, PlacementConstraint: c, ResourceSizing: &yarnpb.ResourceSizingProto{NumAllocations: proto.Int32(n),
			Resources: &yarnpb.ResourceProto{Memory: proto.Int64(128), VirtualCores: proto.Int32(1)}}}
}

// notInNode is the distributed shell's NOTIN,NODE,tag: no container with tag (of this
// application) on the node.
func notInNode(tag string) *yarnpb.PlacementConstraintProto {
	return &yarnpb.PlacementConstraintProto{SimpleConstraint: &yarnpb.SimplePlacementConstraintProto{Scope: proto.String("node"),
		TargetExpressions: []*yarnpb.PlacementConstraintTargetProto{{TargetType: yarnpb.PlacementConstraintTargetProto_ALLOCATION_TAG.Enum(), TargetKey: proto.String("self"), TargetValues: []string{tag}}},
		MinCardinality:    proto.Int32(0), MaxCardinality: proto.Int32(0)}}
}

// A SchedulingRequest IN a node partition its queue may not use is refused: the Java
// scheduler never offers that queue the partition's nodes, so it would wait for ever.
func TestPlacementPartitionTargetNeedsQueueAccess(t *testing.T) {
	_, am := registeredAMBesideOneNode(t, testConf("yarn.resourcemanager.placement-constraints.handler", "scheduler",
		"yarn.node-labels.enabled", "true", "yarn.scheduler.capacity.root.default.accessible-node-labels", " "))
	ctx := context.Background()
	inGPU := &yarnpb.PlacementConstraintProto{SimpleConstraint: &yarnpb.SimplePlacementConstraintProto{Scope: proto.String("node"),
		TargetExpressions: []*yarnpb.PlacementConstraintTargetProto{{TargetType: yarnpb.PlacementConstraintTargetProto_NODE_ATTRIBUTE.Enum(), TargetKey: proto.String("yarn_node_partition/"), TargetValues: []string{"gpu"}}},
		MinCardinality:    proto.Int32(1), MaxCardinality: proto.Int32(1<<31 - 1)}}
	err := am.Call(ctx, "allocate", &yarnpb.AllocateRequestProto{ResponseId: proto.Int32(0), SchedulingRequests: []*yarnpb.SchedulingRequestProto{schedulingRequest(1, 1, "g", inGPU)}}, &yarnpb.AllocateResponseProto{})
	re := remote(t, err)
	if re.Class != exceptions.YarnException || !strings.Contains(re.Message, "queue=default doesn't have permission to access node partition gpu") {
		t.Fatalf("%s %q, want a YarnException refusing partition gpu to queue default", re.Class, re.Message)
	}
}
