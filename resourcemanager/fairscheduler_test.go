package resourcemanager

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/client/rmclient"
	"github.com/bobbin-yarn/bobbin/conf/fairscheduler"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/resourcemanager/statestore"
	"github.com/bobbin-yarn/bobbin/rpc"
)

const threeQueues = `<allocations>
  <queue name="small"><weight>1</weight><maxRunningApps>1</maxRunningApps></queue>
  <queue name="medium"><weight>2</weight></queue>
  <queue name="large"><weight>3</weight></queue>
  <queuePlacementPolicy>
    <rule name="specified" create="false"/>
    <rule name="primaryGroup" create="false"/>
    <rule name="user" create="true"/>
  </queuePlacementPolicy>
</allocations>`

// The Fair Scheduler's class runs fair-scheduler.xml: its placement policy places (and
// creates) queues, yarn queue -status names them by path with their weight's share, and a
// change to the file is applied without a restart.
func TestFairSchedulerAllocationFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "fair-scheduler.xml")
	if err := os.WriteFile(file, []byte(threeQueues), 0o644); err != nil {
		t.Fatal(err)
	}
	c := testConf("yarn.resourcemanager.scheduler.class", fairscheduler.Class,
		"hadoop.user.group.static.mapping.overrides", "alice=medium;bob=staff")
	rm, err := New(Options{Conf: c, ConfDir: dir, Logger: testutil.QuietLogger(), FairReload: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := rm.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		rm.Shutdown(ctx)
	})
	ctx := context.Background()
	queueOf := func(user, requested string) string {
		t.Helper()
		cl := rmclient.New(rm.ClientAddr().String(), user, rpc.ClientOptions{ConnectRetries: -1, Logger: testutil.QuietLogger()})
		defer cl.Close()
		r, err := cl.GetNewApplication(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := submit(t, cl, r.GetApplicationId(), requested, 1024); err != nil {
			t.Fatalf("%s submitting to %q: %v", user, requested, err)
		}
		rep, err := cl.GetApplicationReport(ctx, r.GetApplicationId())
		if err != nil {
			t.Fatal(err)
		}
		return rep.GetQueue()
	}
	for _, tc := range []struct{ user, requested, want string }{
		{"alice", "large", "root.large"},    // specified
		{"alice", "default", "root.medium"}, // her primary group's queue
		{"bob", "default", "root.bob"},      // group staff has none: his own, created
	} {
		if got := queueOf(tc.user, tc.requested); got != tc.want {
			t.Errorf("%s asking for %q: placed in %q, want %q", tc.user, tc.requested, got, tc.want)
		}
	}
	cl := rmclient.New(rm.ClientAddr().String(), "alice", rpc.ClientOptions{ConnectRetries: -1, Logger: testutil.QuietLogger()})
	defer cl.Close()
	capacityOf := func(queue string) (string, float32) {
		var resp yarnpb.GetQueueInfoResponseProto
		if err := cl.Call(ctx, "getQueueInfo", &yarnpb.GetQueueInfoRequestProto{QueueName: &queue}, &resp); err != nil {
			t.Fatal(err)
		}
		return resp.GetQueueInfo().GetQueueName(), resp.GetQueueInfo().GetCapacity()
	}
	// Weights 1:2:3, root.default's 1 and the created root.bob's 1: 2/8 for medium.
	if name, got := capacityOf("root.medium"); name != "root.medium" || math.Abs(float64(got)-0.25) > 1e-6 {
		t.Fatalf("root.medium: %q capacity %v, want 0.25", name, got)
	}
	// What 3.4's `yarn queue -status` prints of a Fair Scheduler queue: its weight, its
	// maxRunningApps (unbounded: Integer.MAX_VALUE), nothing reserved.
	for queue, want := range map[string][2]float32{"root.small": {1, 1}, "root.medium": {2, math.MaxInt32}, "root": {1, math.MaxInt32}} {
		var resp yarnpb.GetQueueInfoResponseProto
		if err := cl.Call(ctx, "getQueueInfo", &yarnpb.GetQueueInfoRequestProto{QueueName: proto.String(queue)}, &resp); err != nil {
			t.Fatal(err)
		}
		qi := resp.GetQueueInfo()
		if qi.GetSchedulerType() != "FairScheduler" || qi.GetWeight() != want[0] || float32(qi.GetMaxRunningApp()) != want[1] || qi.GetReservedResourceMemory() != 0 {
			t.Errorf("%s's 3.4 fields: %v", queue, qi)
		}
	}
	// The REST scheduler view is the Fair Scheduler's, queues named by path.
	type fq struct {
		Type             string `json:"type"`
		QueueName        string `json:"queueName"`
		MaxApps          int    `json:"maxApps"`
		SchedulingPolicy string `json:"schedulingPolicy"`
		NumActiveApps    *int   `json:"numActiveApps"`
		NumPendingApps   *int   `json:"numPendingApps"`
		ChildQueues      *struct {
			Queue []fq `json:"queue"`
		} `json:"childQueues"`
	}
	var view struct {
		Scheduler struct {
			SchedulerInfo struct {
				Type      string `json:"type"`
				RootQueue fq     `json:"rootQueue"`
			} `json:"schedulerInfo"`
		} `json:"scheduler"`
	}
	getJSON(t, "http://"+rm.WebAddr().String()+"/ws/v1/cluster/scheduler", &view)
	si := view.Scheduler.SchedulerInfo
	if si.Type != "fairScheduler" || si.RootQueue.QueueName != "root" || si.RootQueue.ChildQueues == nil {
		t.Fatalf("scheduler view: %+v", si)
	}
	leaves := map[string]fq{}
	for _, q := range si.RootQueue.ChildQueues.Queue {
		leaves[q.QueueName] = q
	}
	for name, apps := range map[string]int{"root.small": 0, "root.medium": 1, "root.large": 1, "root.bob": 1, "root.default": 0} {
		q, ok := leaves[name]
		if !ok || q.Type != "fairSchedulerLeafQueueInfo" || q.SchedulingPolicy != "fair" || q.NumActiveApps == nil || *q.NumActiveApps+*q.NumPendingApps != apps {
			t.Errorf("%s in the scheduler view: %+v, want a fair leaf with %d applications", name, q, apps)
		}
	}
	if q := leaves["root.small"]; q.MaxApps != 1 || leaves["root.large"].MaxApps != math.MaxInt32 {
		t.Errorf("maxApps: small %d, large %d", q.MaxApps, leaves["root.large"].MaxApps)
	}
	// Weights 1:1:1 from now on; root.bob stays.
	if err := os.WriteFile(file, []byte(`<allocations><queue name="small"/><queue name="medium"/><queue name="large"/></allocations>`), 0o644); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Minute) // as if written a while ago: the reload waits for a still file
	if err := os.Chtimes(file, past, past); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "root.medium's capacity is not 0.2 after the change", func() bool {
		_, got := capacityOf("root.medium")
		return math.Abs(float64(got)-0.2) < 1e-6
	})
	if _, got := capacityOf("root.bob"); math.Abs(float64(got)-0.2) > 1e-6 {
		t.Errorf("created root.bob after the reload: %v, want 0.2", got)
	}
}

// A queue the placement policy created lives in memory, as in the Java RM: after a
// restart the recovered application's queue is created again, and the application waits
// in it for its AM container as before.
func TestFairCreatedQueueAfterRestart(t *testing.T) {
	dir := t.TempDir()
	c := testConf("yarn.resourcemanager.scheduler.class", fairscheduler.Class,
		statestore.KeyRecovery, "true", statestore.KeyFSURI, "file://"+t.TempDir())
	start := func() *ResourceManager {
		rm, err := New(Options{Conf: c, ConfDir: dir, Logger: testutil.QuietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		if err := rm.Start(); err != nil {
			t.Fatal(err)
		}
		return rm
	}
	ctx := context.Background()
	rm1 := start()
	cl1 := rmclient.New(rm1.ClientAddr().String(), "alice", rpc.ClientOptions{ConnectRetries: -1, Logger: testutil.QuietLogger()})
	r, err := cl1.GetNewApplication(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := submit(t, cl1, r.GetApplicationId(), "default", 1024); err != nil {
		t.Fatal(err)
	}
	cl1.Close()
	stopRM(t, rm1)

	rm2 := start()
	defer stopRM(t, rm2)
	cl2 := rmclient.New(rm2.ClientAddr().String(), "alice", rpc.ClientOptions{ConnectRetries: -1, Logger: testutil.QuietLogger()})
	defer cl2.Close()
	rep, err := cl2.GetApplicationReport(ctx, r.GetApplicationId())
	if err != nil || rep.GetQueue() != "root.alice" || rep.GetYarnApplicationState() != yarnpb.YarnApplicationStateProto_ACCEPTED {
		t.Fatalf("recovered application: %v %v", rep, err)
	}
	queue := "root.alice"
	var qi yarnpb.GetQueueInfoResponseProto
	if err := cl2.Call(ctx, "getQueueInfo", &yarnpb.GetQueueInfoRequestProto{QueueName: &queue}, &qi); err != nil || qi.GetQueueInfo().GetQueueName() != "root.alice" {
		t.Fatalf("root.alice after the restart: %v %v", qi.GetQueueInfo(), err)
	}
	if st := rm2.Core().GroupStats()["root.alice"]; st.Apps != 1 || st.Pending != 1 {
		t.Fatalf("root.alice in the scheduler: %+v", st)
	}
}
