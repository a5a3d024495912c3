package resourcemanager

import (
	"context"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/client/rmclient"
	"github.com/bobbin-yarn/bobbin/conf/capacity"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/resourcemanager/statestore"
	"github.com/bobbin-yarn/bobbin/rpc"
)

// An RM restarted with a queue removed kills the recovered applications of that queue,
// with the 3.x Capacity Scheduler's diagnostics, instead of leaving them waiting for ever;
// an application of a queue now STOPPED is recovered and drained.
func TestRecoveryAfterQueueChanges(t *testing.T) {
	dir := t.TempDir()
	start := func(queues ...string) (*ResourceManager, *rmclient.Client) {
		c := testConf(statestore.KeyRecovery, "true", statestore.KeyFSURI, "file://"+dir, capacity.Prefix+"root.queues", "a,b,c",
			capacity.Prefix+"root.a.capacity", "40", capacity.Prefix+"root.b.capacity", "30", capacity.Prefix+"root.c.capacity", "30",
			capacity.Prefix+"maximum-am-resource-percent", "1")
		for i := 0; i+1 < len(queues); i += 2 {
			c.Set(capacity.Prefix+queues[i], queues[i+1])
		}
		tree, err := capacity.Parse(c)
		if err != nil {
			t.Fatal(err)
		}
		rm, err := New(Options{Conf: c, Queues: tree, Logger: testutil.QuietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		if err := rm.Start(); err != nil {
			t.Fatal(err)
		}
		return rm, rmclient.New(rm.ClientAddr().String(), "alice", rpc.ClientOptions{ConnectRetries: -1, Logger: testutil.QuietLogger()})
	}
	ctx := context.Background()
	rm1, cl1 := start()
	submit := func(queue string) *yarnpb.ApplicationIdProto {
		na, err := cl1.GetNewApplication(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := cl1.Call(ctx, "submitApplication", &yarnpb.SubmitApplicationRequestProto{ApplicationSubmissionContext: &yarnpb.ApplicationSubmissionContextProto{
			ApplicationId: na.GetApplicationId(), Queue: proto.String(queue), AmContainerSpec: &yarnpb.ContainerLaunchContextProto{Command: []string{"am"}},
			Resource: &yarnpb.ResourceProto{Memory: proto.Int64(1024), VirtualCores: proto.Int32(1)}}}, &yarnpb.SubmitApplicationResponseProto{}); err != nil {
			t.Fatal(err)
		}
		return na.GetApplicationId()
	}
	// No NodeManager: both wait for their AM containers.
	inB, inC := submit("b"), submit("c")
	cl1.Close()
	stopRM(t, rm1)

	// b removed, c stopped.
	rm2, cl2 := start("root.queues", "a,c", "root.a.capacity", "70", "root.c.state", "STOPPED")
	defer stopRM(t, rm2)
	defer cl2.Close()
	rep, err := cl2.GetApplicationReport(ctx, inB)
	if err != nil || rep.GetYarnApplicationState() != yarnpb.YarnApplicationStateProto_KILLED ||
		rep.GetDiagnostics() != "Application killed on recovery as it was submitted to queue b which no longer exists after restart." {
		t.Fatalf("application of the removed queue: %v %v", rep, err)
	}
	rep, err = cl2.GetApplicationReport(ctx, inC)
	if err != nil || rep.GetYarnApplicationState() != yarnpb.YarnApplicationStateProto_ACCEPTED {
		t.Fatalf("application of the stopped queue: %v %v", rep, err)
	}
	if n := rm2.Core().GroupStats()["c"].Apps; n != 1 {
		t.Fatalf("stopped queue c holds %d applications in the engine, want the recovered one", n)
	}
}
