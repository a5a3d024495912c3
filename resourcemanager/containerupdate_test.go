package resourcemanager

import (
	"context"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmcore"
)

// TestContainerUpdatesAnsweredWithErrors: Bobbin changes no container's resources or
// execution type, and says so for each UpdateContainerRequest in an update error (never
// silence): the Java RM's reasons for a container that is not the application's and for
// a wrong version (with the current one, 0), its own for a valid request.
func TestContainerUpdatesAnsweredWithErrors(t *testing.T) {
	rm, am := registeredAMBesideOneNode(t, testConf())
	ctx := context.Background()
	responseID := int32(0)
	allocate := func(req *yarnpb.AllocateRequestProto) *yarnpb.AllocateResponseProto {
		req.ResponseId = proto.Int32(responseID)
		var resp yarnpb.AllocateResponseProto
		if err := am.Call(ctx, "allocate", req, &resp); err != nil {
			t.Fatal(err)
		}
		rm.Core().WaitStatuses()
		responseID = resp.GetResponseId()
		return &resp
	}
	// The container may come in this very answer (the pass can run before it is written).
	var c *yarnpb.ContainerProto
	if got := allocate(&yarnpb.AllocateRequestProto{Ask: []*yarnpb.ResourceRequestProto{{Priority: &yarnpb.PriorityProto{Priority: proto.Int32(1)},
		ResourceName: proto.String("*"), Capability: &yarnpb.ResourceProto{Memory: proto.Int64(1024), VirtualCores: proto.Int32(1)}, NumContainers: proto.Int32(1)}}}).GetAllocatedContainers(); len(got) > 0 {
		c = got[0]
	}
	testutil.Eventually(t, 10*time.Second, "a container allocated", func() bool {
		if c != nil {
			return true
		}
		if got := allocate(&yarnpb.AllocateRequestProto{}).GetAllocatedContainers(); len(got) > 0 {
			c = got[0]
		}
		return c != nil
	})
	other := proto.Clone(c.GetId()).(*yarnpb.ContainerIdProto)
	other.AppAttemptId.ApplicationId.Id = proto.Int32(99)
	if other.AppId != nil {
		other.AppId.Id = proto.Int32(99)
	}
	update := func(id *yarnpb.ContainerIdProto, version int32, kind yarnpb.ContainerUpdateTypeProto) *yarnpb.UpdateContainerRequestProto {
		return &yarnpb.UpdateContainerRequestProto{ContainerVersion: proto.Int32(version), ContainerId: id, UpdateType: kind.Enum(),
			Capability: &yarnpb.ResourceProto{Memory: proto.Int64(2048), VirtualCores: proto.Int32(1)}}
	}
	resp := allocate(&yarnpb.AllocateRequestProto{UpdateRequests: []*yarnpb.UpdateContainerRequestProto{
		update(c.GetId(), 0, yarnpb.ContainerUpdateTypeProto_INCREASE_RESOURCE),
		update(c.GetId(), 1, yarnpb.ContainerUpdateTypeProto_DECREASE_RESOURCE),
		update(other, 0, yarnpb.ContainerUpdateTypeProto_INCREASE_RESOURCE),
	}})
	want := []string{rmcore.UpdateNotServed, "INCORRECT_CONTAINER_VERSION_ERROR", "INVALID_CONTAINER_ID"}
	if len(resp.GetUpdateErrors()) != len(want) || len(resp.GetUpdatedContainers()) != 0 {
		t.Fatalf("update errors %v, updated %v", resp.GetUpdateErrors(), resp.GetUpdatedContainers())
	}
	for i, e := range resp.GetUpdateErrors() {
		if e.GetReason() != want[i] || !proto.Equal(e.GetUpdateRequest().GetContainerId(), []*yarnpb.ContainerIdProto{c.GetId(), c.GetId(), other}[i]) {
			t.Errorf("update error %d: %v, want reason %s", i, e, want[i])
		}
	}
	if e := resp.GetUpdateErrors()[1]; e.CurrentContainerVersion == nil || e.GetCurrentContainerVersion() != 0 {
		t.Errorf("the version error does not give the current version 0: %v", e)
	}
}
