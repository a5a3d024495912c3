package resourcemanager

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metrics "github.com/rcrowley/go-metrics"
	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/client/amclient"
	"github.com/bobbin-yarn/bobbin/client/rmclient"
	"github.com/bobbin-yarn/bobbin/conf"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/internal/zktest"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/statestore"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/rpc/token"
	"github.com/bobbin-yarn/bobbin/tools/nmsim"
	"github.com/bobbin-yarn/bobbin/yarn/protocol"
)

// An RM restarted on its state store lists every application with its state; an
// application that was waiting for its AM container runs its first attempt after the
// restart, as on the Java RM, which stores an attempt only once its AM container is
// allocated (Bobbin used to fail it and start a second), and the new run's containers
// carry the next epoch.
func TestRestartRecoversApplications(t *testing.T) {
	dir := t.TempDir()
	c := testConf(statestore.KeyRecovery, "true", statestore.KeyFSURI, "file://"+dir)
	ctx := context.Background()
	rm1 := startRestartableRM(t, c)
	cl1 := rmclient.New(rm1.ClientAddr().String(), "alice", rpc.ClientOptions{ConnectRetries: -1, Logger: testutil.QuietLogger()})
	sc1 := &simCluster{t: t, rm: rm1, cl: cl1}
	waiting := sc1.submit(1, 0) // no NodeManager: it waits for its AM container
	killed := sc1.submit(1, 0)
	if err := cl1.Call(ctx, "forceKillApplication", &yarnpb.KillApplicationRequestProto{ApplicationId: killed}, &yarnpb.KillApplicationResponseProto{}); err != nil {
		t.Fatal(err)
	}
	cl1.Close()
	stopRM(t, rm1)

	rm2, cl2 := startRMWithClock(t, c, time.Now)
	sc := &simCluster{t: t, rm: rm2, cl: cl2, am: func(ctx context.Context, l *nmsim.Launch, am *amclient.Client) int32 {
		am.Register(ctx, "h", 0, "")
		am.Finish(ctx, yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED, "second run", "")
		return 0
	}}
	rep, err := cl2.GetApplicationReport(ctx, killed)
	if err != nil || rep.GetYarnApplicationState() != yarnpb.YarnApplicationStateProto_KILLED {
		t.Fatalf("killed application after the restart: %v %v", rep, err)
	}
	sc.addNode(nmsim.Options{MemoryMB: 8192, VCores: 8})
	rep = sc.waitFinal(waiting, 10*time.Second)
	if rep.GetYarnApplicationState() != yarnpb.YarnApplicationStateProto_FINISHED || rep.GetDiagnostics() != "second run" {
		t.Fatalf("recovered application: %v", rep)
	}
	atts := sc.attempts(waiting)
	if len(atts) != 1 || atts[0].GetApplicationAttemptId().GetAttemptId() != 1 {
		t.Fatalf("attempts %v, want the first alone", atts)
	}
	am := records.ContainerIDFromProto(atts[0].GetAmContainerId())
	if !strings.HasPrefix(am.String(), "container_e01_") {
		t.Fatalf("AM container after the restart %s, want epoch 1", am)
	}
	list, err := cl2.GetApplications(ctx, &yarnpb.GetApplicationsRequestProto{})
	if err != nil || len(list) != 2 {
		t.Fatalf("applications after the restart: %d, %v", len(list), err)
	}
}

// freeAddr is a loopback address nothing listens on now, for an RM that must come back
// on the same ports after a restart.
func freeAddr(t *testing.T) string {
	t.Helper()
	return testutil.FreeAddr(t)
}

// A work-preserving restart: the NodeManager keeps its containers and reports them as it
// registers again, the engine books them again (the node stays full, nothing is placed
// twice), the AM — with its old AMRMToken — is told to re-register, re-sends its
// outstanding ask and gets exactly the one container it still wanted, named with the new
// epoch; the application finishes on its first attempt.
func TestWorkPreservingRestart(t *testing.T) {
	t.Run("embedded", func(t *testing.T) {
		workPreservingRestart(t, "org.apache.hadoop.yarn.server.resourcemanager.recovery.FileSystemRMStateStore", statestore.KeyFSURI, "file://"+t.TempDir())
	})
	t.Run("zookeeper", func(t *testing.T) {
		zks := zktest.Start(t)
		workPreservingRestart(t, "org.apache.hadoop.yarn.server.resourcemanager.recovery.ZKRMStateStore", "hadoop.zk.address", zks.Addr)
	})
}

func workPreservingRestart(t *testing.T, class string, storeConf ...string) {
	c := testConf(append([]string{statestore.KeyRecovery, "true", statestore.KeyStoreClass, class,
		"yarn.resourcemanager.address", freeAddr(t), "yarn.resourcemanager.resource-tracker.address", freeAddr(t),
		"yarn.resourcemanager.scheduler.address", freeAddr(t)}, storeConf...)...)
	sc, restart := restartableSimCluster(t, c)
	running := make(chan []records.ContainerID, 1)
	resume := make(chan struct{})
	afterCh := make(chan []records.ContainerID, 1) // containers allocated after the restart
	sc.am = func(ctx context.Context, l *nmsim.Launch, am *amclient.Client) int32 {
		if _, err := am.Register(ctx, "wp-am", 0, ""); err != nil {
			t.Errorf("register: %v", err)
			return 1
		}
		am.Request(20, "*", 1024, 1, 3) // the node has room for two besides the AM
		var got []*yarnpb.ContainerProto
		for len(got) < 2 {
			resp, err := am.Allocate(ctx, 0.1)
			if err != nil {
				t.Errorf("allocate: %v", err)
				return 1
			}
			got = append(got, resp.GetAllocatedContainers()...)
			time.Sleep(10 * time.Millisecond)
		}
		var ids []records.ContainerID
		for _, ctr := range got {
			if err := startCommand(ctx, am, l.ID.Attempt, ctr, "run-until-stopped"); err != nil {
				t.Errorf("start: %v", err)
				return 1
			}
			ids = append(ids, records.ContainerIDFromProto(ctr.GetId()))
		}
		running <- ids
		<-resume
		var after []records.ContainerID
		defer func() { afterCh <- after }()
		// The first allocate after the restart meets ApplicationMasterNotRegistered; the
		// client registers again and re-sends its table (one container outstanding).
		for deadline := time.Now().Add(20 * time.Second); len(after) < 1 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			resp, err := am.Allocate(ctx, 0.5)
			if err != nil {
				t.Errorf("allocate after the restart: %v", err)
				return 1
			}
			for _, ctr := range resp.GetAllocatedContainers() {
				after = append(after, records.ContainerIDFromProto(ctr.GetId()))
			}
			for _, st := range resp.GetCompletedContainerStatuses() {
				t.Errorf("container %s completed across the restart: %v", records.ContainerIDFromProto(st.GetContainerId()), st)
			}
		}
		// A few more heartbeats: nothing more comes.
		for range 5 {
			resp, err := am.Allocate(ctx, 0.9)
			if err != nil {
				t.Errorf("allocate: %v", err)
				return 1
			}
			for _, ctr := range resp.GetAllocatedContainers() {
				after = append(after, records.ContainerIDFromProto(ctr.GetId()))
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err := am.Finish(ctx, yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED, "carried on", ""); err != nil && ctx.Err() == nil {
			t.Errorf("finish: %v", err)
		}
		return 0
	}
	nm := sc.addNode(nmsim.Options{MemoryMB: 3072, VCores: 8, KeepOnResync: true})
	resumed := false
	t.Cleanup(func() { // before the node stops: its AM must not wait for ever
		if !resumed {
			close(resume)
		}
	})
	app := sc.submit(1, 0)
	var before []records.ContainerID
	select {
	case before = <-running:
	case <-time.After(20 * time.Second):
		t.Fatal("the AM did not get its first containers")
	}
	// The first AM container's launch time is reported, and kept across the restart.
	first, err := sc.cl.GetApplicationReport(context.Background(), app)
	if err != nil || first.GetLaunchTime() < first.GetStartTime() || first.GetLaunchTime() <= 0 {
		t.Fatalf("launch time %d (start %d): %v", first.GetLaunchTime(), first.GetStartTime(), err)
	}
	rm2 := restart(nil)
	// The node comes back with its three containers (the AM's and two tasks) booked.
	testutil.Eventually(t, 10*time.Second, "the node's containers were not recovered", func() bool {
		_, used := rm2.Core().Totals()
		return used[0] == 3072
	})
	for _, id := range before {
		if st, _, ok := nm.ContainerState(id); !ok || st != yarnpb.ContainerStateProto_C_RUNNING {
			t.Fatalf("container %s after the restart: %v %v", id, st, ok)
		}
	}
	// Room for the outstanding container appears only now.
	sc.addNode(nmsim.Options{MemoryMB: 2048, VCores: 8, KeepOnResync: true})
	close(resume)
	resumed = true
	rep := sc.waitFinal(app, 30*time.Second)
	if rep.GetYarnApplicationState() != yarnpb.YarnApplicationStateProto_FINISHED || rep.GetDiagnostics() != "carried on" || rep.GetLaunchTime() != first.GetLaunchTime() {
		t.Fatalf("report %v (launch time before the restart %d)", rep, first.GetLaunchTime())
	}
	if atts := sc.attempts(app); len(atts) != 1 {
		t.Fatalf("attempts after a work-preserving restart: %v", atts)
	}
	// The web endpoints name the store, and its writes are measured.
	resp, err := http.Get("http://" + rm2.WebAddr().String() + "/ws/v1/cluster/info")
	if err != nil {
		t.Fatal(err)
	}
	var info struct{ ClusterInfo map[string]any }
	err = json.NewDecoder(resp.Body).Decode(&info)
	resp.Body.Close()
	if err != nil || info.ClusterInfo["rmStateStoreName"] != class || fmt.Sprint(info.ClusterInfo["rmStateStoreLocation"]) != rm2.Core().StoreLocation() {
		t.Fatalf("cluster info %v %v", info.ClusterInfo, err)
	}
	if n := metrics.GetOrRegisterTimer("rm.statestore.write", rm2.Core().Registry()).Count(); n == 0 {
		t.Fatal("no state store write measured")
	}
	after := <-afterCh
	if len(after) != 1 || !strings.HasPrefix(after[0].String(), "container_e01_") {
		t.Fatalf("containers allocated after the restart: %v (want one, of epoch 1)", after)
	}
}

// A full disk under the state store: submissions that cannot be stored are refused with
// an error naming the store, the RM keeps serving, and once there is room again every
// application it acknowledged — and none it refused — comes back after a restart.
func TestFullDiskRefusesSubmissionsAndLosesNothing(t *testing.T) {
	dir := t.TempDir()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs for the store")
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	c := testConf(statestore.KeyRecovery, "true", statestore.KeyFSURI, "file://"+dir)
	ctx := context.Background()
	rm1 := startRestartableRM(t, c)
	cl1 := rmclient.New(rm1.ClientAddr().String(), "alice", rpc.ClientOptions{ConnectRetries: -1, Logger: testutil.QuietLogger()})
	// A big launch context fills the disk in a few hundred submissions.
	env := make([]*yarnpb.StringStringMapProto, 0, 64)
	for i := range 64 {
		env = append(env, &yarnpb.StringStringMapProto{Key: proto.String(fmt.Sprintf("VAR_%d", i)), Value: proto.String(strings.Repeat("x", 64))})
	}
	submit := func(cl *rmclient.Client) (*yarnpb.ApplicationIdProto, error) {
		na, err := cl.GetNewApplication(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return na.GetApplicationId(), cl.Call(ctx, "submitApplication", &yarnpb.SubmitApplicationRequestProto{ApplicationSubmissionContext: &yarnpb.ApplicationSubmissionContextProto{
			ApplicationId: na.GetApplicationId(), ApplicationName: proto.String("fill"), Queue: proto.String("default"),
			AmContainerSpec: &yarnpb.ContainerLaunchContextProto{Command: []string{"sleep"}, Environment: env},
			Resource:        &yarnpb.ResourceProto{Memory: proto.Int64(1024), VirtualCores: proto.Int32(1)}}}, &yarnpb.SubmitApplicationResponseProto{})
	}
	var accepted []*yarnpb.ApplicationIdProto
	var refused *yarnpb.ApplicationIdProto
	for range 2000 {
		id, err := submit(cl1)
		if err != nil {
			if re := remote(t, err); !strings.Contains(re.Message, "state store") {
				t.Fatalf("refusal does not name the store: %v", err)
			}
			refused = id
			break
		}
		accepted = append(accepted, id)
	}
	if refused == nil || len(accepted) == 0 {
		t.Fatalf("the disk never filled (%d accepted)", len(accepted))
	}
	if _, err := cl1.GetApplicationReport(ctx, refused); err == nil {
		t.Fatal("the refused application is known")
	}
	// Room again: submissions go through.
	if out, err := exec.Command("mount", "-o", "remount,size=4m", dir).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v %s", err, out)
	}
	id, err := submit(cl1)
	if err != nil {
		t.Fatalf("submission after the disk has room again: %v", err)
	}
	accepted = append(accepted, id)
	cl1.Close()
	stopRM(t, rm1)
	_, cl2 := startRMWithClock(t, c, time.Now)
	for _, id := range accepted {
		if _, err := cl2.GetApplicationReport(ctx, id); err != nil {
			t.Fatalf("acknowledged application %s lost: %v", records.AppIDFromProto(id), err)
		}
	}
	if _, err := cl2.GetApplicationReport(ctx, refused); err == nil {
		t.Fatal("the refused application came back")
	}
	t.Logf("%d applications acknowledged and kept; the disk filled at the next", len(accepted)-1)
}

// Two RMs on one ZooKeeper store: once the second has opened it, the first's next write —
// here a submission — is refused (the client hears an error, nothing is stored) and the
// first RM stops (Done), as it must never act on a state another RM owns.
func TestFencedRMStops(t *testing.T) {
	zks := zktest.Start(t)
	c := testConf(statestore.KeyRecovery, "true", statestore.KeyStoreClass, "org.apache.hadoop.yarn.server.resourcemanager.recovery.ZKRMStateStore",
		"hadoop.zk.address", zks.Addr)
	rm1, cl1 := startRMWithClock(t, c, time.Now)
	_, cl2 := startRMWithClock(t, c, time.Now)
	ctx := context.Background()
	na, err := cl1.GetNewApplication(ctx)
	if err != nil {
		t.Fatal(err)
	}
	err = cl1.Call(ctx, "submitApplication", &yarnpb.SubmitApplicationRequestProto{ApplicationSubmissionContext: &yarnpb.ApplicationSubmissionContextProto{
		ApplicationId: na.GetApplicationId(), ApplicationName: proto.String("late"), Queue: proto.String("default"),
		AmContainerSpec: &yarnpb.ContainerLaunchContextProto{}, Resource: &yarnpb.ResourceProto{Memory: proto.Int64(1024), VirtualCores: proto.Int32(1)}}},
		&yarnpb.SubmitApplicationResponseProto{})
	if err == nil || !strings.Contains(err.Error(), "fenced") {
		t.Fatalf("submission to the fenced RM: %v", err)
	}
	select {
	case <-rm1.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the fenced RM did not stop")
	}
	list, err := cl2.GetApplications(ctx, &yarnpb.GetApplicationsRequestProto{})
	if err != nil || len(list) != 0 {
		t.Fatalf("the new RM sees %d applications, %v", len(list), err)
	}
}

// Node labels an administrator added, and the labels put on nodes, come back after a
// restart (the Java RM keeps them in its node-label store).
func TestNodeLabelsSurviveRestart(t *testing.T) {
	c := testConf(statestore.KeyRecovery, "true", statestore.KeyFSURI, "file://"+t.TempDir(), "yarn.node-labels.enabled", "true",
		"yarn.node-labels.fs-store.root-dir", "file://"+t.TempDir())
	ctx := context.Background()
	rm1 := startRestartableRM(t, c)
	adm := rpc.NewClient(rpc.ClientOptions{Addr: rm1.AdminAddr().String(), Protocol: protocol.ResourceManagerAdministration, User: "admin", ConnectRetries: -1, Logger: testutil.QuietLogger()})
	if err := adm.Call(ctx, "addToClusterNodeLabels", &yarnpb.AddToClusterNodeLabelsRequestProto{DeprecatedNodeLabels: []string{"gpu", "ssd"}}, &yarnpb.AddToClusterNodeLabelsResponseProto{}); err != nil {
		t.Fatal(err)
	}
	node := &yarnpb.NodeIdProto{Host: proto.String("h1"), Port: proto.Int32(0)}
	if err := adm.Call(ctx, "replaceLabelsOnNodes", &yarnpb.ReplaceLabelsOnNodeRequestProto{NodeToLabels: []*yarnpb.NodeIdToLabelsProto{
		{NodeId: node, NodeLabels: []string{"gpu"}}}}, &yarnpb.ReplaceLabelsOnNodeResponseProto{}); err != nil {
		t.Fatal(err)
	}
	adm.Close()
	stopRM(t, rm1)
	// The next RM's node-label store is another (empty) directory, as a standby's local
	// one would be: the state store's labels win, and are written to it.
	c2 := c.Clone()
	c2.Set("yarn.node-labels.fs-store.root-dir", "file://"+t.TempDir())
	_, cl := startRMWithClock(t, c2, time.Now)
	var labels yarnpb.GetClusterNodeLabelsResponseProto
	if err := cl.Call(ctx, "getClusterNodeLabels", &yarnpb.GetClusterNodeLabelsRequestProto{}, &labels); err != nil {
		t.Fatal(err)
	}
	if strings.Join(labels.GetDeprecatedNodeLabels(), ",") != "gpu,ssd" {
		t.Fatalf("cluster labels after the restart %v", labels.GetDeprecatedNodeLabels())
	}
	var n2l yarnpb.GetNodesToLabelsResponseProto
	if err := cl.Call(ctx, "getNodeToLabels", &yarnpb.GetNodesToLabelsRequestProto{}, &n2l); err != nil {
		t.Fatal(err)
	}
	if len(n2l.GetNodeToLabels()) != 1 || n2l.GetNodeToLabels()[0].GetNodeLabels()[0] != "gpu" {
		t.Fatalf("node labels after the restart %v", &n2l)
	}
}

// restartableSimCluster is a simulated cluster on an RM with c's state store; restart
// stops the RM, runs whileDown (when not nil), and starts the next one on the same store
// and addresses, and returns it.
func restartableSimCluster(t *testing.T, c *conf.Configuration) (sc *simCluster, restart func(whileDown func()) *ResourceManager) {
	t.Helper()
	rm1 := startRestartableRM(t, c)
	cl1 := rmclient.New(rm1.ClientAddr().String(), "alice", rpc.ClientOptions{ConnectRetries: -1, Logger: testutil.QuietLogger()})
	sc = &simCluster{t: t, rm: rm1, cl: cl1}
	return sc, func(whileDown func()) *ResourceManager {
		t.Helper()
		sc.cl.Close()
		stopRM(t, sc.rm)
		if whileDown != nil {
			whileDown()
		}
		rm2, cl2 := startRMWithClock(t, c, time.Now)
		sc.rm, sc.cl = rm2, cl2
		return rm2
	}
}

// startRestartableRM starts an RM the test stops itself (stopRM) before starting the next
// one on the same store: no cleanup of its own.
func startRestartableRM(t *testing.T, c *conf.Configuration) *ResourceManager {
	t.Helper()
	rm, err := New(Options{Conf: c, Logger: testutil.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := rm.Start(); err != nil {
		t.Fatal(err)
	}
	return rm
}

// stopRM shuts an RM down, letting calls finish for up to 5 s.
func stopRM(t *testing.T, rm *ResourceManager) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rm.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}

// Decommissions survive a restart: a decommissioned node is listed as DECOMMISSIONED
// again (and counted), and a node decommissioning gracefully — its AM container still
// running — registers again into DECOMMISSIONING (the exclude list names it, yet it is
// not refused) and ends DECOMMISSIONED when that container ends. node-a, -b and -c are
// 127.0.0.1, .2 and .3.
func TestDecommissionSurvivesRestart(t *testing.T) {
	exclude := filepath.Join(t.TempDir(), "exclude")
	if err := os.WriteFile(exclude, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c := testConf(statestore.KeyRecovery, "true", statestore.KeyFSURI, "file://"+t.TempDir(), "yarn.resourcemanager.nodes.exclude-path", exclude,
		"yarn.resourcemanager.address", freeAddr(t), "yarn.resourcemanager.resource-tracker.address", freeAddr(t),
		"yarn.resourcemanager.scheduler.address", freeAddr(t))
	rm1 := startRestartableRM(t, c)
	cl1 := rmclient.New(rm1.ClientAddr().String(), "alice", rpc.ClientOptions{ConnectRetries: -1, Logger: testutil.QuietLogger()})
	sc := &simCluster{t: t, rm: rm1, cl: cl1}
	finish := make(chan struct{})
	registered := make(chan struct{}, 1)
	sc.am = func(ctx context.Context, l *nmsim.Launch, am *amclient.Client) int32 {
		if _, err := am.Register(ctx, "decom-am", 0, ""); err != nil {
			t.Errorf("register: %v", err)
			return 1
		}
		registered <- struct{}{}
		select {
		case <-finish:
		case <-ctx.Done():
			return 1
		}
		// After the restart the first allocate re-registers.
		if _, err := am.Allocate(ctx, 1); err != nil {
			t.Errorf("allocate after the restart: %v", err)
		}
		if err := am.Finish(ctx, yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED, "done", ""); err != nil && ctx.Err() == nil {
			t.Errorf("finish: %v", err)
		}
		return 0
	}
	finished := false
	t.Cleanup(func() {
		if !finished {
			close(finish)
		}
	})
	sc.addNode(nmsim.Options{Host: "127.0.0.1", MemoryMB: 2048, VCores: 2, KeepOnResync: true})
	app := sc.submit(1, 0)
	select {
	case <-registered:
	case <-time.After(20 * time.Second):
		t.Fatal("the AM did not start on node-a")
	}
	sc.addNode(nmsim.Options{Host: "127.0.0.2", MemoryMB: 2048, VCores: 2, KeepOnResync: true})
	sc.addNode(nmsim.Options{Host: "127.0.0.3", MemoryMB: 2048, VCores: 2, KeepOnResync: true})
	if err := os.WriteFile(exclude, []byte("127.0.0.1\n127.0.0.2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := rm1.Core().RefreshNodes(true, 0); err != nil {
		t.Fatal(err)
	}
	states := func(cl *rmclient.Client) map[string]yarnpb.NodeStateProto {
		out := map[string]yarnpb.NodeStateProto{}
		nodes, _ := cl.GetClusterNodes(context.Background())
		for _, n := range nodes {
			out[n.GetNodeId().GetHost()] = n.GetNodeState()
		}
		return out
	}
	want := map[string]yarnpb.NodeStateProto{"127.0.0.1": yarnpb.NodeStateProto_NS_DECOMMISSIONING,
		"127.0.0.2": yarnpb.NodeStateProto_NS_DECOMMISSIONED, "127.0.0.3": yarnpb.NodeStateProto_NS_RUNNING}
	testutil.Eventually(t, 10*time.Second, "node-a decommissioning and node-b decommissioned before the restart", func() bool {
		return maps.Equal(states(cl1), want)
	})
	cl1.Close()
	stopRM(t, rm1)

	rm2, cl2 := startRMWithClock(t, c, time.Now)
	sc.rm, sc.cl = rm2, cl2
	testutil.Eventually(t, 10*time.Second, "the same node states after the restart", func() bool {
		return maps.Equal(states(cl2), want)
	})
	m, err := cl2.GetClusterMetrics(context.Background())
	if err != nil || m.GetNumDecommissionedNms() != 1 || m.GetNumDecommissioningNms() != 1 || m.GetNumNodeManagers() != 1 {
		t.Fatalf("cluster metrics after the restart: %v %v", m, err)
	}
	close(finish)
	finished = true
	if rep := sc.waitFinal(app, 30*time.Second); rep.GetFinalApplicationStatus() != yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED {
		t.Fatalf("report %v", rep)
	}
	want["127.0.0.1"] = yarnpb.NodeStateProto_NS_DECOMMISSIONED
	testutil.Eventually(t, 10*time.Second, "node-a's graceful decommission did not finish after its container ended", func() bool {
		return maps.Equal(states(cl2), want)
	})
}

// An unmanaged AM's application carries on across a work-preserving restart, as on the
// 3.x Java RM (YARN-1815): the client's AM registers again with the AMRMToken it holds,
// the containers it runs stay booked, and it finishes in its first attempt. Bobbin used
// to fail such applications at recovery and to drop their containers.
func TestUnmanagedAMSurvivesWorkPreservingRestart(t *testing.T) {
	c := testConf(statestore.KeyRecovery, "true", statestore.KeyFSURI, "file://"+t.TempDir(),
		"yarn.resourcemanager.address", freeAddr(t), "yarn.resourcemanager.resource-tracker.address", freeAddr(t),
		"yarn.resourcemanager.scheduler.address", freeAddr(t))
	sc, restart := restartableSimCluster(t, c)
	nm := sc.addNode(nmsim.Options{MemoryMB: 4096, VCores: 8, KeepOnResync: true})
	ctx := context.Background()
	na, err := sc.cl.GetNewApplication(ctx)
	if err != nil {
		t.Fatal(err)
	}
	app := na.GetApplicationId()
	if err := sc.cl.Call(ctx, "submitApplication", &yarnpb.SubmitApplicationRequestProto{ApplicationSubmissionContext: &yarnpb.ApplicationSubmissionContextProto{
		ApplicationId: app, Queue: proto.String("default"), UnmanagedAm: proto.Bool(true)}}, &yarnpb.SubmitApplicationResponseProto{}); err != nil {
		t.Fatal(err)
	}
	rep, err := sc.cl.GetApplicationReport(ctx, app)
	if err != nil || rep.GetAmRmToken() == nil {
		t.Fatalf("report %v: %v", rep, err)
	}
	am := amclient.New(amclient.Options{Addr: sc.rm.SchedulerAddr().String(), Token: token.FromProto(rep.GetAmRmToken()), User: "alice",
		ConnectRetries: 50, RetryInterval: 20 * time.Millisecond, Logger: testutil.QuietLogger()})
	defer am.Close()
	if _, err := am.Register(ctx, "uam-host", 0, ""); err != nil {
		t.Fatal(err)
	}
	am.Request(1, "*", 1024, 1, 2)
	var granted []records.ContainerID
	testutil.Eventually(t, 10*time.Second, "two containers granted", func() bool {
		resp, err := am.Allocate(ctx, 0.1)
		if err != nil {
			t.Fatal(err)
		}
		for _, ctr := range resp.GetAllocatedContainers() {
			id := records.ContainerIDFromProto(ctr.GetId())
			nm.Run(id, time.Hour, ctr.GetResource().GetMemory(), ctr.GetResource().GetVirtualCores())
			granted = append(granted, id)
		}
		return len(granted) == 2
	})
	if !nm.HeartbeatNow() {
		t.Fatal("heartbeat failed")
	}

	rm2 := restart(nil)
	testutil.Eventually(t, 10*time.Second, "the node's two containers booked again", func() bool {
		_, used := rm2.Core().Totals()
		return used[0] == 2048
	})
	// The AM's next allocate meets ApplicationMasterNotRegistered; the client registers
	// again with the token it holds and goes on. The store already says the AM
	// registered: registering again writes nothing.
	writes := metrics.GetOrRegisterTimer("rm.statestore.write", rm2.Core().Registry())
	before := writes.Count()
	resp, err := am.Allocate(ctx, 0.5)
	if err != nil {
		t.Fatalf("allocate after the restart: %v", err)
	}
	if n := writes.Count() - before; n != 0 {
		t.Errorf("the AM's registering again wrote %d times to the store", n)
	}
	if n := len(resp.GetCompletedContainerStatuses()); n != 0 {
		t.Fatalf("%d containers completed across the restart: %v", n, resp.GetCompletedContainerStatuses())
	}
	for _, id := range granted {
		if st, _, ok := nm.ContainerState(id); !ok || st != yarnpb.ContainerStateProto_C_RUNNING {
			t.Fatalf("container %s after the restart: %v %v", id, st, ok)
		}
	}
	if err := am.Finish(ctx, yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED, "carried on", ""); err != nil {
		t.Fatal(err)
	}
	rep = sc.waitFinal(app, 10*time.Second)
	if rep.GetYarnApplicationState() != yarnpb.YarnApplicationStateProto_FINISHED || rep.GetDiagnostics() != "carried on" {
		t.Fatalf("report %v", rep)
	}
	if atts := sc.attempts(app); len(atts) != 1 {
		t.Fatalf("attempts after a work-preserving restart: %v", atts)
	}
}
