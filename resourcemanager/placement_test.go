package resourcemanager

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/rpc/token"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
)

// TestPlacementConstraintsAreRefusedLikeJava: Bobbin serves no placement constraints, and
// says so at once with the Java RM's answers: under the default handler (disabled) a
// registration carrying constraints and an allocate carrying SchedulingRequests fail with
// DisabledPlacementProcessor's YarnException; under the scheduler handler the
// registration is taken and the allocate fails as the Java RM fails it for a scheduler
// that cannot handle them. The failed allocate does not advance the response id. Before,
// the SchedulingRequests were dropped in silence and the AM waited until its client
// killed it.
func TestPlacementConstraintsAreRefusedLikeJava(t *testing.T) {
	constraints := []*yarnpb.PlacementConstraintMapEntryProto{{AllocationTags: []string{"foo"}, PlacementConstraint: &yarnpb.PlacementConstraintProto{}}}
	scheduling := []*yarnpb.SchedulingRequestProto{{AllocationRequestId: proto.Int64(1), Priority: &yarnpb.PriorityProto{Priority: proto.Int32(0)},
		AllocationTags: []string{"foo"}, ResourceSizing: &yarnpb.ResourceSizingProto{NumAllocations: proto.Int32(2),
			Resources: &yarnpb.ResourceProto{Memory: proto.Int64(128), VirtualCores: proto.Int32(1)}}}}
	for _, handler := range []string{"", "scheduler"} {
		t.Run("handler="+handler, func(t *testing.T) {
			rm, cl := startRM(t, testConf("yarn.resourcemanager.placement-constraints.handler", handler))
			ctx := context.Background()
			na, _ := cl.GetNewApplication(ctx)
			id := na.GetApplicationId()
			if err := cl.Call(ctx, "submitApplication", &yarnpb.SubmitApplicationRequestProto{ApplicationSubmissionContext: &yarnpb.ApplicationSubmissionContextProto{
				ApplicationId: id, Queue: proto.String("default"), UnmanagedAm: proto.Bool(true)}}, &yarnpb.SubmitApplicationResponseProto{}); err != nil {
				t.Fatal(err)
			}
			rep, _ := cl.GetApplicationReport(ctx, id)
			am := amClient(t, rm, token.FromProto(rep.GetAmRmToken()))
			attID := records.AppIDFromProto(id).Attempt(1).String()
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
			if handler == "scheduler" {
				want = "Found non empty SchedulingRequest of AllocateRequest for application=" + attID + ", however the configured scheduler=org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler cannot handle placement constraints"
			}
			if re.Class != exceptions.YarnException || !strings.HasPrefix(re.Message, want) {
				t.Fatalf("allocate with SchedulingRequests: %s %q, want %q", re.Class, re.Message, want)
			}
			// The refused call left the response id where it was.
			if err := am.Call(ctx, "allocate", &yarnpb.AllocateRequestProto{ResponseId: proto.Int32(0)}, &yarnpb.AllocateResponseProto{}); err != nil {
				t.Fatalf("the next allocate, response id 0: %v", err)
			}
		})
	}
}
