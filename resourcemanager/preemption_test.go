package resourcemanager

import (
	"context"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/rpc/token"
)

// unmanagedAM submits an unmanaged application to queue, registers its AM and returns
// the application id and an allocate function that keeps the response ids.
func unmanagedAM(t *testing.T, rm *ResourceManager, cl interface {
	Call(context.Context, string, proto.Message, proto.Message) error
}, newApp func() *yarnpb.ApplicationIdProto, queue string, tags ...string) (*yarnpb.ApplicationIdProto, func(*yarnpb.AllocateRequestProto) *yarnpb.AllocateResponseProto) {
	ctx := context.Background()
	id := newApp()
	if err := cl.Call(ctx, "submitApplication", &yarnpb.SubmitApplicationRequestProto{ApplicationSubmissionContext: &yarnpb.ApplicationSubmissionContextProto{
		ApplicationId: id, Queue: proto.String(queue), UnmanagedAm: proto.Bool(true), ApplicationTags: tags}}, &yarnpb.SubmitApplicationResponseProto{}); err != nil {
		t.Fatal(err)
	}
	var rep yarnpb.GetApplicationReportResponseProto
	cl.Call(ctx, "getApplicationReport", &yarnpb.GetApplicationReportRequestProto{ApplicationId: id}, &rep)
	am := amClient(t, rm, token.FromProto(rep.GetApplicationReport().GetAmRmToken()))
	if err := am.Call(ctx, "registerApplicationMaster", &yarnpb.RegisterApplicationMasterRequestProto{}, &yarnpb.RegisterApplicationMasterResponseProto{}); err != nil {
		t.Fatal(err)
	}
	rid := int32(0)
	return id, func(req *yarnpb.AllocateRequestProto) *yarnpb.AllocateResponseProto {
		req.ResponseId = proto.Int32(rid)
		var resp yarnpb.AllocateResponseProto
		if err := am.Call(ctx, "allocate", req, &resp); err != nil {
			t.Fatal(err)
		}
		rm.Core().WaitStatuses() // what the answer acknowledged is settled in the table
		rid = resp.GetResponseId()
		return &resp
	}
}

func gigs(n int32) *yarnpb.ResourceRequestProto {
	return &yarnpb.ResourceRequestProto{Priority: &yarnpb.PriorityProto{Priority: proto.Int32(20)}, ResourceName: proto.String("*"),
		Capability: &yarnpb.ResourceProto{Memory: proto.Int64(1024), VirtualCores: proto.Int32(1)}, NumContainers: proto.Int32(n), RelaxLocality: proto.Bool(true)}
}

// A queue over its quota loses a container to a starved one: its AM is told first
// (strict contract), the NodeManager is told to kill it, and the AM then sees PREEMPTED.
func TestPreemptionReachesAMAndNM(t *testing.T) {
	rm, cl := startRMWithClock(t, testConf("yarn.resourcemanager.scheduler.monitor.enable", "true", "bobbin.scheduler.preemption.grace", "0s", "bobbin.scheduler.preemption.cool-down", "0s",
		"bobbin.scheduler.preemption.hold", "0s"), time.Now)
	ctx := context.Background()
	nm := newFakeNM(t, rm, 45454)
	nm.register(8192, 8)
	hb := int32(0)
	heartbeat := func(st ...*yarnpb.ContainerStatusProto) *yarnpb.NodeHeartbeatResponseProto {
		var r yarnpb.NodeHeartbeatResponseProto
		if err := nm.c.Call(ctx, "nodeHeartbeat", &yarnpb.NodeHeartbeatRequestProto{NodeStatus: &yarnpb.NodeStatusProto{NodeId: nm.id, ResponseId: proto.Int32(hb), ContainersStatuses: st}}, &r); err != nil {
			t.Fatal(err)
		}
		rm.Core().WaitStatuses() // the heartbeat's statuses are applied after it is answered
		hb = r.GetResponseId()
		return &r
	}
	heartbeat()
	newApp := func() *yarnpb.ApplicationIdProto { r, _ := cl.GetNewApplication(ctx); return r.GetApplicationId() }
	_, allocA := unmanagedAM(t, rm, cl, newApp, "default")
	var held []*yarnpb.ContainerProto
	// The answer to the ask may already carry containers: a pass can run while it is made.
	held = append(held, allocA(&yarnpb.AllocateRequestProto{Ask: []*yarnpb.ResourceRequestProto{gigs(8)}}).GetAllocatedContainers()...)
	rm.Core().SchedulePass()
	held = append(held, allocA(&yarnpb.AllocateRequestProto{}).GetAllocatedContainers()...)
	if len(held) != 8 {
		t.Fatalf("default took %d containers, want all 8", len(held))
	}
	_, allocB := unmanagedAM(t, rm, cl, newApp, "daily")
	allocB(&yarnpb.AllocateRequestProto{Ask: []*yarnpb.ResourceRequestProto{gigs(1)}})
	var notified, killed []*yarnpb.ContainerIdProto
	testutil.Eventually(t, 5*time.Second, "no preemption notice to the AM and kill to the NM", func() bool {
		if p := allocA(&yarnpb.AllocateRequestProto{}).GetPreempt(); p != nil {
			for _, c := range p.GetStrictContract().GetContainer() {
				notified = append(notified, c.GetId())
			}
		}
		killed = append(killed, heartbeat().GetContainersToCleanup()...)
		return len(notified) > 0 && len(killed) > 0
	})
	if len(notified) == 0 || len(killed) == 0 || notified[0].GetId() != killed[0].GetId() {
		t.Fatalf("notified %v, killed %v", notified, killed)
	}
	// The NM reports the kill (exit 143); the AM hears PREEMPTED.
	heartbeat(&yarnpb.ContainerStatusProto{ContainerId: killed[0], State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(), ExitStatus: proto.Int32(143)})
	var exit int32
	for _, st := range allocA(&yarnpb.AllocateRequestProto{}).GetCompletedContainerStatuses() {
		exit = st.GetExitStatus() // the heartbeat queued it for the AM's next allocate
	}
	if exit != -102 {
		t.Fatalf("the AM saw exit status %d, want PREEMPTED (-102)", exit)
	}
}
