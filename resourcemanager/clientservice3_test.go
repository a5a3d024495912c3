package resourcemanager

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
	"github.com/bobbin-yarn/bobbin/rpc/token"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
)

// Priorities are clamped to yarn.cluster.max-application-priority at submission and on
// update, reach allocate answers (3.x MapReduce AMs read them on every call), and a
// finished application keeps its priority.
func TestApplicationPriority(t *testing.T) {
	rm, cl := startRMWithClock(t, testConf("yarn.cluster.max-application-priority", "5"), time.Now)
	ctx := context.Background()
	newApp := func() *yarnpb.ApplicationIdProto { r, _ := cl.GetNewApplication(ctx); return r.GetApplicationId() }
	id, alloc := unmanagedAM(t, rm, cl, newApp, "default")
	if p := alloc(&yarnpb.AllocateRequestProto{}).GetApplicationPriority(); p == nil || p.GetPriority() != 0 {
		t.Fatalf("allocate answer's priority %v, want 0", p)
	}
	update := func(p int32) (int32, error) {
		var resp yarnpb.UpdateApplicationPriorityResponseProto
		err := cl.Call(ctx, "updateApplicationPriority", &yarnpb.UpdateApplicationPriorityRequestProto{ApplicationId: id, ApplicationPriority: &yarnpb.PriorityProto{Priority: proto.Int32(p)}}, &resp)
		return resp.GetApplicationPriority().GetPriority(), err
	}
	if got, err := update(3); err != nil || got != 3 {
		t.Fatalf("update to 3: %d %v", got, err)
	}
	if got, err := update(9); err != nil || got != 5 {
		t.Fatalf("update to 9 with max 5: %d %v", got, err)
	}
	if p := alloc(&yarnpb.AllocateRequestProto{}).GetApplicationPriority().GetPriority(); p != 5 {
		t.Fatalf("allocate answer's priority %d, want 5", p)
	}
	rep, err := cl.GetApplicationReport(ctx, id)
	if err != nil || rep.GetPriority().GetPriority() != 5 {
		t.Fatalf("report priority %v %v", rep.GetPriority(), err)
	}
	if err := cl.Call(ctx, "forceKillApplication", &yarnpb.KillApplicationRequestProto{ApplicationId: id}, &yarnpb.KillApplicationResponseProto{}); err != nil {
		t.Fatal(err)
	}
	if rep, err := cl.GetApplicationReport(ctx, id); err != nil || rep.GetProgress() != 1 {
		t.Fatalf("a killed application's progress %v %v, want 1 (100%%) as the Java RM shows", rep.GetProgress(), err)
	}
	if got, err := update(1); err != nil || got != 5 {
		t.Fatalf("update of a killed application: %d %v, want it to keep 5", got, err)
	}
}

// A lifetime given at submission or with updateApplicationTimeouts (ISO 8601, as the
// 3.x CLI sends it) shows in reports and kills the application when it passes.
func TestApplicationLifetime(t *testing.T) {
	clock := testutil.NewClock(time.Now())
	now, advance := clock.Now, clock.Advance
	rm, cl := startRMWithClock(t, testConf(), now)
	ctx := context.Background()
	r, _ := cl.GetNewApplication(ctx)
	id := r.GetApplicationId()
	lifetime := yarnpb.ApplicationTimeoutTypeProto_APP_TIMEOUT_LIFETIME
	if err := cl.Call(ctx, "submitApplication", &yarnpb.SubmitApplicationRequestProto{ApplicationSubmissionContext: &yarnpb.ApplicationSubmissionContextProto{
		ApplicationId: id, Queue: proto.String("default"), UnmanagedAm: proto.Bool(true),
		ApplicationTimeouts: []*yarnpb.ApplicationTimeoutMapProto{{ApplicationTimeoutType: lifetime.Enum(), Timeout: proto.Int64(100)}}}}, &yarnpb.SubmitApplicationResponseProto{}); err != nil {
		t.Fatal(err)
	}
	timeout := func() *yarnpb.ApplicationTimeoutProto {
		rep, err := cl.GetApplicationReport(ctx, id)
		if err != nil || len(rep.GetAppTimeouts()) != 1 {
			t.Fatalf("report timeouts %v %v", rep.GetAppTimeouts(), err)
		}
		return rep.GetAppTimeouts()[0].GetApplicationTimeout()
	}
	if to := timeout(); to.GetRemainingTime() != 100 || to.GetExpireTime() != now().Add(100*time.Second).Format(rmstate.ISO8601) {
		t.Fatalf("timeout %v", to)
	}
	// The CLI's -updateLifetime: an absolute expiry time.
	exp := now().Add(20 * time.Second).Format(rmstate.ISO8601)
	var resp yarnpb.UpdateApplicationTimeoutsResponseProto
	if err := cl.Call(ctx, "updateApplicationTimeouts", &yarnpb.UpdateApplicationTimeoutsRequestProto{ApplicationId: id,
		ApplicationTimeouts: []*yarnpb.ApplicationUpdateTimeoutMapProto{{ApplicationTimeoutType: lifetime.Enum(), ExpireTime: proto.String(exp)}}}, &resp); err != nil {
		t.Fatal(err)
	}
	if to := timeout(); to.GetRemainingTime() != 20 || to.GetExpireTime() != exp {
		t.Fatalf("updated timeout %v", to)
	}
	// Bad times are refused with Java's messages.
	for raw, want := range map[string]string{"tomorrow": "is not in ISO8601 format", now().Add(-time.Minute).Format(rmstate.ISO8601): "Expire time is less than current time"} {
		err := cl.Call(ctx, "updateApplicationTimeouts", &yarnpb.UpdateApplicationTimeoutsRequestProto{ApplicationId: id,
			ApplicationTimeouts: []*yarnpb.ApplicationUpdateTimeoutMapProto{{ApplicationTimeoutType: lifetime.Enum(), ExpireTime: proto.String(raw)}}}, &resp)
		if re := remote(t, err); !strings.Contains(re.Message, want) {
			t.Errorf("%s: %s", raw, re.Message)
		}
	}
	advance(21 * time.Second)
	var rep *yarnpb.ApplicationReportProto
	rm.Core().Step(now()) // the monitor's pass at the moved clock
	rep, _ = cl.GetApplicationReport(ctx, id)
	if rep.GetYarnApplicationState() != yarnpb.YarnApplicationStateProto_KILLED || !strings.Contains(rep.GetDiagnostics(), "exceeded the lifetime period") {
		t.Fatalf("after its lifetime: %v %q", rep.GetYarnApplicationState(), rep.GetDiagnostics())
	}
	if to := timeout(); to.GetExpireTime() != exp || to.GetRemainingTime() != 0 {
		t.Fatalf("a finished application's timeout %v, want its expiry and 0 s left, as 3.1.1 shows", to)
	}
	err := cl.Call(ctx, "updateApplicationTimeouts", &yarnpb.UpdateApplicationTimeoutsRequestProto{ApplicationId: id,
		ApplicationTimeouts: []*yarnpb.ApplicationUpdateTimeoutMapProto{{ApplicationTimeoutType: lifetime.Enum(), ExpireTime: proto.String(now().Add(time.Hour).Format(rmstate.ISO8601))}}}, &resp)
	if re := remote(t, err); re.Message != "Application is in the final state KILLED. Can not update timeout." {
		t.Fatalf("update of a killed application: %s", re.Message)
	}
}

// GPUs declared in resource-types.xml are an engine dimension: nodes offer them, asks
// take them, and a node with no GPU left gets no GPU container.
func TestGPUsAreScheduled(t *testing.T) {
	// GPUs need the DominantResourceCalculator, as on the Java RM: the default one
	// normalizes every ask to memory and one vcore.
	rm, cl := startRMWithClock(t, testConf("yarn.resource-types", "yarn.io/gpu", scheduler.KeyResourceCalculator, scheduler.DominantResourceCalculator), time.Now)
	ctx := context.Background()
	var info yarnpb.GetAllResourceTypeInfoResponseProto
	if err := cl.Call(ctx, "getResourceTypeInfo", &yarnpb.GetAllResourceTypeInfoRequestProto{}, &info); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ti := range info.GetResourceTypeInfo() {
		names = append(names, ti.GetName()+"/"+ti.GetUnits())
	}
	if strings.Join(names, ",") != "memory-mb/Mi,vcores/,yarn.io/gpu/" {
		t.Fatalf("resource types %v", names)
	}
	gpu := func(n int64) *yarnpb.ResourceInformationProto {
		return &yarnpb.ResourceInformationProto{Key: proto.String("yarn.io/gpu"), Value: proto.Int64(n)}
	}
	for i, port := range []int32{45454, 45455} {
		nm := newFakeNM(t, rm, port)
		var resp yarnpb.RegisterNodeManagerResponseProto
		if err := nm.c.Call(ctx, "registerNodeManager", &yarnpb.RegisterNodeManagerRequestProto{NodeId: nm.id, HttpPort: proto.Int32(8042 + int32(i)),
			Resource:  &yarnpb.ResourceProto{Memory: proto.Int64(8192), VirtualCores: proto.Int32(8), ResourceValueMap: []*yarnpb.ResourceInformationProto{gpu(2)}},
			NmVersion: proto.String("3.1.1")}, &resp); err != nil {
			t.Fatal(err)
		}
		nm.heartbeat(0)
	}
	newApp := func() *yarnpb.ApplicationIdProto { r, _ := cl.GetNewApplication(ctx); return r.GetApplicationId() }
	_, alloc := unmanagedAM(t, rm, cl, newApp, "default")
	ask := &yarnpb.ResourceRequestProto{Priority: &yarnpb.PriorityProto{Priority: proto.Int32(1)}, ResourceName: proto.String("*"), NumContainers: proto.Int32(5), RelaxLocality: proto.Bool(true),
		Capability: &yarnpb.ResourceProto{Memory: proto.Int64(128), VirtualCores: proto.Int32(1), ResourceValueMap: []*yarnpb.ResourceInformationProto{gpu(1)}}}
	var got []*yarnpb.ContainerProto
	got = append(got, alloc(&yarnpb.AllocateRequestProto{Ask: []*yarnpb.ResourceRequestProto{ask}}).GetAllocatedContainers()...)
	// Two passes: the first places what fits, the second shows the fifth still waits.
	for range 2 {
		rm.Core().SchedulePass()
		got = append(got, alloc(&yarnpb.AllocateRequestProto{}).GetAllocatedContainers()...)
	}
	if len(got) != 4 {
		t.Fatalf("%d GPU containers on two nodes of 2 GPUs, want 4 (the fifth waits)", len(got))
	}
	for _, c := range got {
		res := rm.Core().ResourceOf(c.GetResource())
		if res[2] != 1 {
			t.Fatalf("container %v has %d GPUs", records.ContainerIDFromProto(c.GetId()), res[2])
		}
	}
	nodes, err := cl.GetClusterNodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		u, c := rm.Core().ResourceOf(n.GetUsed()), rm.Core().ResourceOf(n.GetCapability())
		if u[2] != 2 || c[2] != 2 || u[0] != 2*1024 || n.GetNumContainers() != 2 {
			t.Fatalf("node %v: used %v of %v, %d containers", n.GetNodeId(), u, c, n.GetNumContainers())
		}
	}
	// More GPUs than the type's maximum-allocation is refused as 3.1.1 refuses it.
	rm2, cl2 := startRMWithClock(t, testConf("yarn.resource-types", "yarn.io/gpu", "yarn.resource-types.yarn.io/gpu.maximum-allocation", "2"), time.Now)
	newApp2 := func() *yarnpb.ApplicationIdProto { r, _ := cl2.GetNewApplication(ctx); return r.GetApplicationId() }
	id2, _ := unmanagedAM(t, rm2, cl2, newApp2, "default")
	var rep yarnpb.GetApplicationReportResponseProto
	cl2.Call(ctx, "getApplicationReport", &yarnpb.GetApplicationReportRequestProto{ApplicationId: id2}, &rep)
	am := amClient(t, rm2, token.FromProto(rep.GetApplicationReport().GetAmRmToken()))
	big := proto.Clone(ask).(*yarnpb.ResourceRequestProto)
	big.Capability.ResourceValueMap = []*yarnpb.ResourceInformationProto{gpu(3)}
	err = am.Call(ctx, "allocate", &yarnpb.AllocateRequestProto{ResponseId: proto.Int32(0), Ask: []*yarnpb.ResourceRequestProto{big}}, &yarnpb.AllocateResponseProto{})
	if re := remote(t, err); re.Class != exceptions.InvalidResourceRequest || !strings.Contains(re.Message, "requested resource type=[yarn.io/gpu] < 0 or greater than maximum allowed allocation") {
		t.Fatalf("3 GPUs over a maximum of 2: %s %s", re.Class, re.Message)
	}
}
