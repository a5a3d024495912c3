package resourcemanager

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/conf/capacity"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/rpc/token"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
)

// An AM asks, the engine places containers on a NodeManager, the AM gets them with
// container tokens and NMTokens, and completions flow back from the NM's heartbeats.
func TestAllocateEndToEnd(t *testing.T) {
	rm, cl := startRMWithClock(t, testConf("yarn.scheduler.minimum-allocation-mb", "128"), time.Now)
	ctx := context.Background()
	nm := newFakeNM(t, rm, 45454)
	nm.register(8192, 8)
	hbID := int32(0)
	heartbeat := func(statuses ...*yarnpb.ContainerStatusProto) *yarnpb.NodeHeartbeatResponseProto {
		var resp yarnpb.NodeHeartbeatResponseProto
		err := nm.c.Call(ctx, "nodeHeartbeat", &yarnpb.NodeHeartbeatRequestProto{NodeStatus: &yarnpb.NodeStatusProto{
			NodeId: nm.id, ResponseId: proto.Int32(hbID), ContainersStatuses: statuses}}, &resp)
		if err != nil {
			t.Fatal(err)
		}
		rm.Core().WaitStatuses() // the statuses are applied after the heartbeat is answered
		hbID = resp.GetResponseId()
		return &resp
	}
	heartbeat()

	newApp := func() *yarnpb.ApplicationIdProto { r, _ := cl.GetNewApplication(ctx); return r.GetApplicationId() }
	appID, allocate := unmanagedAM(t, rm, cl, newApp, "default")
	ask := &yarnpb.ResourceRequestProto{Priority: &yarnpb.PriorityProto{Priority: proto.Int32(20)}, ResourceName: proto.String("*"),
		Capability: &yarnpb.ResourceProto{Memory: proto.Int64(1024), VirtualCores: proto.Int32(1)}, NumContainers: proto.Int32(2), RelaxLocality: proto.Bool(true)}
	first := allocate(&yarnpb.AllocateRequestProto{Ask: []*yarnpb.ResourceRequestProto{ask}})
	got := first.GetAllocatedContainers()
	tokens := first.GetNmTokens()
	if len(got) < 2 {
		rm.Core().SchedulePass() // the loop may not have run since the ask came in
		r := allocate(&yarnpb.AllocateRequestProto{})
		got = append(got, r.GetAllocatedContainers()...)
		tokens = append(tokens, r.GetNmTokens()...)
	}
	if len(got) != 2 || len(tokens) != 1 || rmstate.NodeKey(tokens[0].GetNodeId()) != "127.0.0.1:45454" {
		t.Fatalf("allocated %v, NMTokens %v", got, tokens)
	}
	c0 := records.ContainerIDFromProto(got[0].GetId())
	if got[0].GetPriority().GetPriority() != 20 || got[0].GetContainerToken() == nil || c0.Attempt.App != records.AppIDFromProto(appID) {
		t.Fatalf("container %v", got[0])
	}
	var cti yarnpb.ContainerTokenIdentifierProto
	if err := proto.Unmarshal(got[0].GetContainerToken().GetIdentifier(), &cti); err != nil || cti.GetNmHostAddr() != "127.0.0.1:45454" || cti.GetRmIdentifier() != rm.Core().ClusterTimestamp() {
		t.Fatalf("container token identifier %v %v", &cti, err)
	}
	// The NM reports the first complete; the AM releases the second.
	hb := heartbeat(&yarnpb.ContainerStatusProto{ContainerId: got[0].GetId(), State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(), ExitStatus: proto.Int32(0)})
	if len(hb.GetContainersToBeRemovedFromNm()) != 0 {
		t.Fatalf("the NM is told to forget a completed container before its AM heard of it: %v", hb)
	}
	r := allocate(&yarnpb.AllocateRequestProto{Release: []*yarnpb.ContainerIdProto{got[1].GetId()}})
	statuses := map[int64]int32{}
	for _, st := range r.GetCompletedContainerStatuses() {
		statuses[st.GetContainerId().GetId()] = st.GetExitStatus()
	}
	if statuses[got[0].GetId().GetId()] != 0 || statuses[got[1].GetId().GetId()] != -100 || len(statuses) != 2 {
		t.Fatalf("completed statuses %v", r.GetCompletedContainerStatuses())
	}
	next := heartbeat()
	if len(next.GetContainersToCleanup()) != 1 || next.GetContainersToCleanup()[0].GetId() != got[1].GetId().GetId() {
		t.Fatalf("the released container is not sent to the NM for cleanup: %v", next.GetContainersToCleanup())
	}
	if r.GetLimit().GetMemory() != 8192 {
		t.Fatalf("headroom %v after everything was released", r.GetLimit())
	}
	// As in the Java RM: the AM's next call acknowledges the statuses it was sent, and
	// only then is the NM told to forget both containers.
	if rm := next.GetContainersToBeRemovedFromNm(); len(rm) != 0 {
		t.Fatalf("forgotten before the AM acknowledged: %v", rm)
	}
	allocate(&yarnpb.AllocateRequestProto{})
	forget := map[int64]bool{}
	for _, id := range heartbeat().GetContainersToBeRemovedFromNm() {
		forget[id.GetId()] = true
	}
	if len(forget) != 2 || !forget[got[0].GetId().GetId()] || !forget[got[1].GetId().GetId()] {
		t.Fatalf("containers to be removed from the NM: %v", forget)
	}
}

// An application tagged bobbin.gang gets an ask's containers all together: four on a
// node with room for three wait until a fourth frees, then come in one answer. A bad tag
// value is refused at submission.
func TestGangTagPlacesAsksWhole(t *testing.T) {
	// Two unmanaged AMs count two minimum allocations against the AM limit, as in Java.
	rm, cl := startRMWithClock(t, testConf(capacity.Prefix+"maximum-am-resource-percent", "1"), time.Now)
	ctx := context.Background()
	nm := newFakeNM(t, rm, 45454)
	nm.register(8192, 8)
	var hb yarnpb.NodeHeartbeatResponseProto
	if err := nm.c.Call(ctx, "nodeHeartbeat", &yarnpb.NodeHeartbeatRequestProto{NodeStatus: &yarnpb.NodeStatusProto{NodeId: nm.id, ResponseId: proto.Int32(0)}}, &hb); err != nil {
		t.Fatal(err)
	}
	newApp := func() *yarnpb.ApplicationIdProto { r, _ := cl.GetNewApplication(ctx); return r.GetApplicationId() }
	// An ordinary application takes five of the eight slots (the answer to the ask may
	// carry some already: a pass can run while it is made).
	_, other := unmanagedAM(t, rm, cl, newApp, "default")
	held := other(&yarnpb.AllocateRequestProto{Ask: []*yarnpb.ResourceRequestProto{gigs(5)}}).GetAllocatedContainers()
	rm.Core().SchedulePass()
	held = append(held, other(&yarnpb.AllocateRequestProto{}).GetAllocatedContainers()...)
	if len(held) != 5 {
		t.Fatalf("the ordinary application got %d containers, want 5", len(held))
	}
	// The gang application, submitted with the tag.
	id := newApp()
	if err := cl.Call(ctx, "submitApplication", &yarnpb.SubmitApplicationRequestProto{ApplicationSubmissionContext: &yarnpb.ApplicationSubmissionContextProto{
		ApplicationId: id, Queue: proto.String("default"), UnmanagedAm: proto.Bool(true), ApplicationTags: []string{"bobbin.gang=maybe"}}}, &yarnpb.SubmitApplicationResponseProto{}); err == nil {
		t.Fatal("bobbin.gang=maybe was accepted")
	}
	_, gang := unmanagedAM(t, rm, cl, newApp, "default", "bobbin.gang")
	got := gang(&yarnpb.AllocateRequestProto{Ask: []*yarnpb.ResourceRequestProto{gigs(4)}}).GetAllocatedContainers()
	rm.Core().SchedulePass()
	if got = append(got, gang(&yarnpb.AllocateRequestProto{}).GetAllocatedContainers()...); len(got) != 0 {
		t.Fatalf("the gang got %d of its 4 containers with room for 3", len(got))
	}
	other(&yarnpb.AllocateRequestProto{Release: []*yarnpb.ContainerIdProto{held[0].GetId()}})
	rm.Core().SchedulePass()
	if got := gang(&yarnpb.AllocateRequestProto{}).GetAllocatedContainers(); len(got) != 4 {
		t.Fatalf("the gang got %d containers once 4 fit, want all 4", len(got))
	}
}

// A queue's maximum-allocation-mb reaches its AM at registration, while its AM and asks
// are held to the cluster's maximum, as the Java RMs hold them (TestAskLimitsLikeApache
// has both); a queue maximum above the cluster's stops the RM.
func TestQueueMaximumAllocation(t *testing.T) {
	rm, cl := startRMWithClock(t, testConf(capacity.Prefix+"root.etl.daily.maximum-allocation-mb", "2048"), time.Now)
	ctx := context.Background()
	newApp := func() *yarnpb.ApplicationIdProto { r, _ := cl.GetNewApplication(ctx); return r.GetApplicationId() }
	submit := func(mb int64) error {
		return cl.Call(ctx, "submitApplication", &yarnpb.SubmitApplicationRequestProto{ApplicationSubmissionContext: &yarnpb.ApplicationSubmissionContextProto{
			ApplicationId: newApp(), Queue: proto.String("daily"), Resource: &yarnpb.ResourceProto{Memory: proto.Int64(mb), VirtualCores: proto.Int32(1)},
			AmContainerSpec: &yarnpb.ContainerLaunchContextProto{}}}, &yarnpb.SubmitApplicationResponseProto{})
	}
	if err := submit(3072); err != nil {
		t.Fatalf("AM above the queue's maximum, within the cluster's: %v", err)
	}
	if re := remote(t, submit(9000)); re.Class != exceptions.InvalidResourceRequest || !strings.Contains(re.Message, "requestedMemory=9000, maxMemory=8192") {
		t.Fatalf("AM above the cluster's maximum: %v", re)
	}
	// An unmanaged AM in daily: its registration names the queue's maximum; an ask above
	// it is taken, one above the cluster's fails with the Java message.
	id := newApp()
	if err := cl.Call(ctx, "submitApplication", &yarnpb.SubmitApplicationRequestProto{ApplicationSubmissionContext: &yarnpb.ApplicationSubmissionContextProto{
		ApplicationId: id, Queue: proto.String("daily"), UnmanagedAm: proto.Bool(true)}}, &yarnpb.SubmitApplicationResponseProto{}); err != nil {
		t.Fatal(err)
	}
	var rep yarnpb.GetApplicationReportResponseProto
	if err := cl.Call(ctx, "getApplicationReport", &yarnpb.GetApplicationReportRequestProto{ApplicationId: id}, &rep); err != nil {
		t.Fatal(err)
	}
	am := amClient(t, rm, token.FromProto(rep.GetApplicationReport().GetAmRmToken()))
	var reg yarnpb.RegisterApplicationMasterResponseProto
	if err := am.Call(ctx, "registerApplicationMaster", &yarnpb.RegisterApplicationMasterRequestProto{}, &reg); err != nil {
		t.Fatal(err)
	}
	if got := reg.GetMaximumCapability().GetMemory(); got != 2048 {
		t.Fatalf("registration's maximum capability %d MB, want the queue's 2048", got)
	}
	ask := gigs(1)
	ask.Capability.Memory = proto.Int64(4096)
	if err := am.Call(ctx, "allocate", &yarnpb.AllocateRequestProto{ResponseId: proto.Int32(0), Ask: []*yarnpb.ResourceRequestProto{ask}}, &yarnpb.AllocateResponseProto{}); err != nil {
		t.Fatalf("ask above the queue's maximum, within the cluster's: %v", err)
	}
	ask.Capability.Memory = proto.Int64(9000)
	err := am.Call(ctx, "allocate", &yarnpb.AllocateRequestProto{ResponseId: proto.Int32(1), Ask: []*yarnpb.ResourceRequestProto{ask}}, &yarnpb.AllocateResponseProto{})
	if re := remote(t, err); re.Class != exceptions.InvalidResourceRequest || !strings.Contains(re.Message, "requestedMemory=9000, maxMemory=8192") {
		t.Fatalf("ask above the cluster's maximum: %v", err)
	}
	if _, err := New(Options{Conf: testConf(capacity.Prefix+"root.queues", "default", capacity.Prefix+"root.default.capacity", "100",
		capacity.Prefix+"root.default.maximum-allocation-mb", "999999"), Logger: testutil.QuietLogger()}); err == nil ||
		!strings.Contains(err.Error(), "Queue maximum allocation cannot be larger than the cluster setting for queue root.default") {
		t.Fatalf("queue maximum above the cluster's: %v", err)
	}
}
