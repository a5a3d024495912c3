package resourcemanager

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/rpc/token"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
	"github.com/bobbin-yarn/bobbin/yarn/protocol"
)

func amClient(t *testing.T, rm *ResourceManager, tok *token.Token) *rpc.Client {
	c := rpc.NewClient(rpc.ClientOptions{Addr: rm.SchedulerAddr().String(), Protocol: protocol.ApplicationMaster, User: "alice", Token: tok, ConnectRetries: -1, Logger: testutil.QuietLogger()})
	t.Cleanup(func() { c.Close() })
	return c
}

// The unmanaged-AM path: the client takes the AMRMToken from the report and runs the AM
// itself; register, allocate and finish are checked against the Java rules.
func TestUnmanagedAMLifecycle(t *testing.T) {
	rm, cl := startRM(t, testConf("yarn.scheduler.maximum-allocation-mb", "4096"))
	ctx := context.Background()
	na, _ := cl.GetNewApplication(ctx)
	id := na.GetApplicationId()
	err := cl.Call(ctx, "submitApplication", &yarnpb.SubmitApplicationRequestProto{ApplicationSubmissionContext: &yarnpb.ApplicationSubmissionContextProto{
		ApplicationId: id, Queue: proto.String("default"), UnmanagedAm: proto.Bool(true)}}, &yarnpb.SubmitApplicationResponseProto{})
	if err != nil {
		t.Fatal(err)
	}
	rep, _ := cl.GetApplicationReport(ctx, id)
	tok := token.FromProto(rep.GetAmRmToken())
	if tok == nil || tok.Kind != token.KindAMRM || rep.GetCurrentApplicationAttemptId().GetAttemptId() != 1 {
		t.Fatalf("report %v", rep)
	}
	am := amClient(t, rm, tok)
	call := func(method string, req, resp proto.Message) error { return am.Call(ctx, method, req, resp) }
	wantClass := func(err error, class, msg string) {
		t.Helper()
		re := remote(t, err)
		if re.Class != class || !strings.Contains(re.Message, msg) {
			t.Fatalf("got %s: %s; want %s containing %q", re.Class, re.Message, class, msg)
		}
	}

	wantClass(call("allocate", &yarnpb.AllocateRequestProto{}, &yarnpb.AllocateResponseProto{}), exceptions.AMNotRegistered, "AM should re-register")
	wantClass(call("finishApplicationMaster", &yarnpb.FinishApplicationMasterRequestProto{}, &yarnpb.FinishApplicationMasterResponseProto{}), exceptions.AMNotRegistered, "before registering")

	var reg yarnpb.RegisterApplicationMasterResponseProto
	if err := call("registerApplicationMaster", &yarnpb.RegisterApplicationMasterRequestProto{Host: proto.String("am-host"), RpcPort: proto.Int32(4242), TrackingUrl: proto.String("http://am-host:8080")}, &reg); err != nil {
		t.Fatal(err)
	}
	if reg.GetMaximumCapability().GetMemory() != 4096 || reg.GetQueue() != "default" {
		t.Fatalf("register response %v", &reg)
	}
	rep, _ = cl.GetApplicationReport(ctx, id)
	if rep.GetYarnApplicationState() != yarnpb.YarnApplicationStateProto_RUNNING || rep.GetHost() != "am-host" || rep.GetRpcPort() != 4242 {
		t.Fatalf("after register %v", rep)
	}
	wantClass(call("registerApplicationMaster", &yarnpb.RegisterApplicationMasterRequestProto{}, &yarnpb.RegisterApplicationMasterResponseProto{}), exceptions.InvalidAMRequest, "already registered")

	var a1, again yarnpb.AllocateResponseProto
	if err := call("allocate", &yarnpb.AllocateRequestProto{ResponseId: proto.Int32(0)}, &a1); err != nil || a1.GetResponseId() != 1 {
		t.Fatalf("allocate %v %v", &a1, err)
	}
	if err := call("allocate", &yarnpb.AllocateRequestProto{ResponseId: proto.Int32(0)}, &again); err != nil || again.GetResponseId() != 1 || !proto.Equal(&a1, &again) {
		t.Fatalf("retried allocate %v %v", &again, err)
	}
	wantClass(call("allocate", &yarnpb.AllocateRequestProto{ResponseId: proto.Int32(7)}, &yarnpb.AllocateResponseProto{}), exceptions.InvalidAMRequest, "Invalid responseId")
	big := &yarnpb.ResourceRequestProto{Priority: &yarnpb.PriorityProto{Priority: proto.Int32(20)}, ResourceName: proto.String("*"),
		Capability: &yarnpb.ResourceProto{Memory: proto.Int64(8192), VirtualCores: proto.Int32(1)}, NumContainers: proto.Int32(1)}
	wantClass(call("allocate", &yarnpb.AllocateRequestProto{ResponseId: proto.Int32(1), Ask: []*yarnpb.ResourceRequestProto{big}}, &yarnpb.AllocateResponseProto{}), exceptions.InvalidResourceRequest, "requestedMemory=8192")

	var fin yarnpb.FinishApplicationMasterResponseProto
	if err := call("finishApplicationMaster", &yarnpb.FinishApplicationMasterRequestProto{FinalApplicationStatus: yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED.Enum(), Diagnostics: proto.String("done")}, &fin); err != nil || !fin.GetIsUnregistered() {
		t.Fatalf("finish %v %v", &fin, err)
	}
	rep, _ = cl.GetApplicationReport(ctx, id)
	if rep.GetYarnApplicationState() != yarnpb.YarnApplicationStateProto_FINISHED || rep.GetFinalApplicationStatus() != yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED || rep.GetAmRmToken() != nil {
		t.Fatalf("after finish %v", rep)
	}
}

func TestAMServiceRefusesCallsWithoutAMRMToken(t *testing.T) {
	rm, _ := startRM(t, testConf())
	// SIMPLE: the RPC layer lets it in, the AM service does not.
	re := remote(t, amClient(t, rm, nil).Call(context.Background(), "registerApplicationMaster", &yarnpb.RegisterApplicationMasterRequestProto{}, &yarnpb.RegisterApplicationMasterResponseProto{}))
	if re.Class != exceptions.YarnException || !strings.Contains(re.Message, "No AMRMToken found for user alice") {
		t.Fatalf("%+v", re)
	}
	// A forged token fails SASL.
	tok, _ := rm.Core().AMRMTokens().Issue(rm.Core().NewAppID("test", "test").Attempt(1))
	tok.Password = bytes.Repeat([]byte{9}, 20)
	re = remote(t, amClient(t, rm, tok).Call(context.Background(), "registerApplicationMaster", &yarnpb.RegisterApplicationMasterRequestProto{}, &yarnpb.RegisterApplicationMasterResponseProto{}))
	if !re.Fatal || re.Class != rpc.ClassSaslException {
		t.Fatalf("%+v", re)
	}
}

// An AM that unregisters after its application was killed (it heard the kill late) changes
// nothing: the attempt stays KILLED with the RM's application page as tracking URL, as in
// the Java RM.
func TestFinishAfterKillKeepsTheAttemptKilled(t *testing.T) {
	rm, cl := startRM(t, testConf())
	ctx := context.Background()
	na, _ := cl.GetNewApplication(ctx)
	id := na.GetApplicationId()
	if err := cl.Call(ctx, "submitApplication", &yarnpb.SubmitApplicationRequestProto{ApplicationSubmissionContext: &yarnpb.ApplicationSubmissionContextProto{
		ApplicationId: id, Queue: proto.String("default"), UnmanagedAm: proto.Bool(true)}}, &yarnpb.SubmitApplicationResponseProto{}); err != nil {
		t.Fatal(err)
	}
	rep, _ := cl.GetApplicationReport(ctx, id)
	am := amClient(t, rm, token.FromProto(rep.GetAmRmToken()))
	if err := am.Call(ctx, "registerApplicationMaster", &yarnpb.RegisterApplicationMasterRequestProto{Host: proto.String("am-host"), TrackingUrl: proto.String("http://am-host:8080")},
		&yarnpb.RegisterApplicationMasterResponseProto{}); err != nil {
		t.Fatal(err)
	}
	if err := cl.Call(ctx, "forceKillApplication", &yarnpb.KillApplicationRequestProto{ApplicationId: id}, &yarnpb.KillApplicationResponseProto{}); err != nil {
		t.Fatal(err)
	}
	var fin yarnpb.FinishApplicationMasterResponseProto
	if err := am.Call(ctx, "finishApplicationMaster", &yarnpb.FinishApplicationMasterRequestProto{FinalApplicationStatus: yarnpb.FinalApplicationStatusProto_APP_KILLED.Enum(),
		TrackingUrl: proto.String("http://am-host:8080/late")}, &fin); err != nil || !fin.GetIsUnregistered() {
		t.Fatalf("late finish: %v %v", &fin, err)
	}
	var att yarnpb.GetApplicationAttemptReportResponseProto
	if err := cl.Call(ctx, "getApplicationAttemptReport", &yarnpb.GetApplicationAttemptReportRequestProto{ApplicationAttemptId: rep.GetCurrentApplicationAttemptId()}, &att); err != nil {
		t.Fatal(err)
	}
	rep, _ = cl.GetApplicationReport(ctx, id)
	if st := att.GetApplicationAttemptReport().GetYarnApplicationAttemptState(); st != yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_KILLED ||
		rep.GetYarnApplicationState() != yarnpb.YarnApplicationStateProto_KILLED || !strings.Contains(rep.GetTrackingUrl(), "/cluster/app/") {
		t.Fatalf("after a late finish: attempt %v, app %v, tracking %s", st, rep.GetYarnApplicationState(), rep.GetTrackingUrl())
	}
}
