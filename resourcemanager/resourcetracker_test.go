package resourcemanager

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/client/amclient"
	"github.com/bobbin-yarn/bobbin/rpc/token"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/resourcemanager/nmphase"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmcore"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/yarn/protocol"
)

// fakeNM speaks ResourceTracker over a real socket, as a NodeManager does.
type fakeNM struct {
	rm *ResourceManager
	t  *testing.T
	c  *rpc.Client
	id *yarnpb.NodeIdProto
}

func newFakeNM(t *testing.T, rm *ResourceManager, port int32) *fakeNM {
	c := rpc.NewClient(rpc.ClientOptions{Addr: rm.TrackerAddr().String(), Protocol: protocol.ResourceTracker, User: "yarn", ConnectRetries: -1, Logger: testutil.QuietLogger()})
	t.Cleanup(func() { c.Close() })
	return &fakeNM{rm: rm, t: t, c: c, id: &yarnpb.NodeIdProto{Host: proto.String("127.0.0.1"), Port: proto.Int32(port)}}
}

func (n *fakeNM) register(mem int64, cores int32) *yarnpb.RegisterNodeManagerResponseProto {
	var resp yarnpb.RegisterNodeManagerResponseProto
	err := n.c.Call(context.Background(), "registerNodeManager", &yarnpb.RegisterNodeManagerRequestProto{NodeId: n.id, HttpPort: proto.Int32(8042),
		Resource: &yarnpb.ResourceProto{Memory: proto.Int64(mem), VirtualCores: proto.Int32(cores)}, NmVersion: proto.String("2.7.3")}, &resp)
	if err != nil {
		n.t.Fatal(err)
	}
	return &resp
}

func (n *fakeNM) heartbeat(responseID int32) *yarnpb.NodeHeartbeatResponseProto {
	var resp yarnpb.NodeHeartbeatResponseProto
	err := n.c.Call(context.Background(), "nodeHeartbeat", &yarnpb.NodeHeartbeatRequestProto{NodeStatus: &yarnpb.NodeStatusProto{
		NodeId: n.id, ResponseId: proto.Int32(responseID), NodeHealthStatus: &yarnpb.NodeHealthStatusProto{IsNodeHealthy: proto.Bool(true), HealthReport: proto.String("")}}}, &resp)
	if err != nil {
		n.t.Fatal(err)
	}
	return &resp
}

func TestNodeRegistrationAndHeartbeats(t *testing.T) {
	var mu sync.Mutex
	clock := time.UnixMilli(1732269000000)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	rm, cl := startRMWithClock(t, testConf("yarn.nm.liveness-monitor.expiry-interval-ms", "300"), now)
	nm := newFakeNM(t, rm, 45454)
	reg := nm.register(8192, 8)
	if reg.GetNodeAction() != yarnpb.NodeActionProto_NORMAL || reg.GetRmIdentifier() != rm.Core().ClusterTimestamp() ||
		len(reg.GetContainerTokenMasterKey().GetBytes()) == 0 || len(reg.GetNmTokenMasterKey().GetBytes()) == 0 {
		t.Fatalf("register response %v", reg)
	}
	hb := nm.heartbeat(0)
	// The interval named steers the node towards its place in the heartbeat interval, by
	// at most the default 10 %.
	want := nmphase.New(time.Second, 10).Next(fmt.Sprintf("%s:%d", nm.id.GetHost(), nm.id.GetPort()), clock)
	if iv := hb.GetNextHeartBeatInterval(); hb.GetResponseId() != 1 || hb.GetNodeAction() != yarnpb.NodeActionProto_NORMAL || iv != want || iv < 900 || iv > 1100 {
		t.Fatalf("heartbeat %v; want interval %d ms", hb, want)
	}
	// A retried heartbeat gets the same answer; a stale one is told to resync.
	if again := nm.heartbeat(0); again.GetResponseId() != 1 {
		t.Fatalf("retried heartbeat %v", again)
	}
	nm.heartbeat(1)
	nm.heartbeat(2)
	ctx := context.Background()
	nodes, err := cl.GetClusterNodes(ctx, yarnpb.NodeStateProto_NS_RUNNING)
	if err != nil || len(nodes) != 1 || nodes[0].GetCapability().GetMemory() != 8192 || nodes[0].GetHttpAddress() != "127.0.0.1:8042" {
		t.Fatalf("nodes %v %v", nodes, err)
	}
	if m, _ := cl.GetClusterMetrics(ctx); m.GetNumNodeManagers() != 1 {
		t.Fatalf("metrics %v", m)
	}
	// Silence: the node expires, is LOST, and its next heartbeat is told to resync.
	mu.Lock()
	clock = clock.Add(time.Second)
	mu.Unlock()
	rm.Core().Step(now()) // the monitor's pass, driven by the test's clock
	if nodes, _ := cl.GetClusterNodes(ctx, yarnpb.NodeStateProto_NS_LOST); len(nodes) != 1 {
		t.Fatalf("node not LOST after the expiry: %v", nodes)
	}
	if hb := nm.heartbeat(3); hb.GetNodeAction() != yarnpb.NodeActionProto_RESYNC {
		t.Fatalf("heartbeat from a LOST node: %v", hb)
	}
}

// TestUnregisteredNodeIsShutdown: a 3.x NodeManager stopping calls unRegisterNodeManager;
// the node is SHUTDOWN at once (counted in the cluster metrics), and its next heartbeat
// is told to resync. An unknown node's unregistration is ignored.
func TestUnregisteredNodeIsShutdown(t *testing.T) {
	rm, cl := startRM(t, testConf())
	nm := newFakeNM(t, rm, 45456)
	nm.register(8192, 8)
	nm.heartbeat(0)
	ctx := context.Background()
	for _, port := range []int32{45456, 45999} {
		id := &yarnpb.NodeIdProto{Host: proto.String("127.0.0.1"), Port: proto.Int32(port)}
		if err := nm.c.Call(ctx, "unRegisterNodeManager", &yarnpb.UnRegisterNodeManagerRequestProto{NodeId: id}, &yarnpb.UnRegisterNodeManagerResponseProto{}); err != nil {
			t.Fatalf("unregister %d: %v", port, err)
		}
	}
	nodes, err := cl.GetClusterNodes(ctx, yarnpb.NodeStateProto_NS_SHUTDOWN)
	if err != nil || len(nodes) != 1 || nodes[0].GetNodeId().GetPort() != 45456 {
		t.Fatalf("SHUTDOWN nodes %v %v", nodes, err)
	}
	if m, _ := cl.GetClusterMetrics(ctx); m.GetNumShutdownNms() != 1 || m.GetNumActiveNms() != 0 {
		t.Fatalf("metrics %v", m)
	}
	if hb := nm.heartbeat(1); hb.GetNodeAction() != yarnpb.NodeActionProto_RESYNC {
		t.Fatalf("heartbeat from a SHUTDOWN node: %v", hb)
	}
}

func TestTooSmallNodeIsShutDown(t *testing.T) {
	rm, _ := startRM(t, testConf())
	nm := newFakeNM(t, rm, 45455)
	if reg := nm.register(512, 1); reg.GetNodeAction() != yarnpb.NodeActionProto_SHUTDOWN {
		t.Fatalf("register below the minimum allocation: %v", reg)
	}
}

// TestMeasuredCapacityAndStaticLabel: a borrowed NodeManager's measured capacity replaces
// its capability (zero takes it out of scheduling), automatic labels show in node
// reports, and the AM container goes to the static node even when the borrowed node is
// bigger.
func TestMeasuredCapacityAndStaticLabel(t *testing.T) {
	rm, cl := startRM(t, testConf())
	ctx := context.Background()
	borrowedNM, staticNM := newFakeNM(t, rm, 45454), newFakeNM(t, rm, 45455)
	borrowedNM.register(8192, 8)
	staticNM.register(2048, 2)
	beat := func(n *fakeNM, id int32, res *yarnpb.ResourceProto, labels ...string) {
		req := &yarnpb.NodeHeartbeatRequestProto{NodeStatus: &yarnpb.NodeStatusProto{NodeId: n.id, ResponseId: proto.Int32(id),
			NodeHealthStatus: &yarnpb.NodeHealthStatusProto{IsNodeHealthy: proto.Bool(true), HealthReport: proto.String("")}},
			BobbinSchedulableResource: res, NodeLabels: &yarnpb.NodeLabelsProto{}}
		for _, l := range labels {
			req.NodeLabels.NodeLabels = append(req.NodeLabels.NodeLabels, &yarnpb.NodeLabelProto{Name: proto.String(l)})
		}
		if err := n.c.Call(ctx, "nodeHeartbeat", req, &yarnpb.NodeHeartbeatResponseProto{}); err != nil {
			t.Fatal(err)
		}
	}
	res := func(mb int64, vc int32) *yarnpb.ResourceProto {
		return &yarnpb.ResourceProto{Memory: proto.Int64(mb), VirtualCores: proto.Int32(vc)}
	}
	beat(borrowedNM, 0, res(6000, 3), "high_mem")
	beat(staticNM, 0, nil, "static")
	nodes, err := cl.GetClusterNodes(ctx)
	if err != nil || len(nodes) != 2 {
		t.Fatalf("nodes %v %v", nodes, err)
	}
	for _, n := range nodes {
		switch n.GetNodeId().GetPort() {
		case 45454:
			if n.GetCapability().GetMemory() != 6000 || n.GetCapability().GetVirtualCores() != 3 || len(n.GetNodeLabels()) != 1 || n.GetNodeLabels()[0] != "high_mem" {
				t.Errorf("borrowed node report %v", n)
			}
		case 45455:
			if n.GetCapability().GetMemory() != 2048 || len(n.GetNodeLabels()) != 1 || n.GetNodeLabels()[0] != "static" {
				t.Errorf("static node report %v", n)
			}
		}
	}
	r, err := cl.GetNewApplication(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := submit(t, cl, r.GetApplicationId(), "default", 1024); err != nil {
		t.Fatal(err)
	}
	var node string
	testutil.Eventually(t, 5*time.Second, "no AM container allocated", func() bool {
		// Only the AM's container is live this early.
		for _, c := range rm.Core().ContainerReports(records.AppIDFromProto(r.GetApplicationId()).Attempt(1)) {
			node = rmstate.NodeKey(c.GetNodeId())
		}
		return node != ""
	})
	if node != "127.0.0.1:45455" {
		t.Fatalf("AM container on %s, not on the static node", node)
	}
	// Zero measured capacity: the node takes no new containers; the report shows zero.
	beat(borrowedNM, 1, res(0, 0), "high_mem", "high_load")
	nodes, _ = cl.GetClusterNodes(ctx)
	for _, n := range nodes {
		if n.GetNodeId().GetPort() == 45454 && (n.GetCapability().GetMemory() != 0 || len(n.GetNodeLabels()) != 2) {
			t.Errorf("borrowed node at zero capacity: %v", n)
		}
	}
}

// A heartbeat that races the node's registration — the registry has the node, the engine
// not yet (the 2.7.3 NodeManager's old heartbeat thread still runs while it registers
// again after a resync) — is not the node's first: the next heartbeat makes the node
// schedulable. Before, the node stayed unschedulable for ever (a stuck reduce after an
// HA failover, TestHAFailoverDuringPi/2.7.3-apache-nm).
func TestHeartbeatRacingRegistrationDoesNotCountAsFirst(t *testing.T) {
	rm, cl := startRM(t, testConf())
	nm := newFakeNM(t, rm, 45460)
	key := "127.0.0.1:45460"
	addr := &rmstate.NodeAddr{Key: key, ID: nm.id, HTTP: "127.0.0.1:8042"}
	capability := &yarnpb.ResourceProto{Memory: proto.Int64(8192), VirtualCores: proto.Int32(8)}
	// The registration's first step: the registry's record.
	if _, err := rm.Core().PutNode(key, &rmstate.Node{NodeAddr: addr, Rack: "/default-rack", Capability: capability,
		Version: "2.7.3", LastHeartbeat: time.Now(), HealthTime: time.Now().UnixMilli()}, yarnpb.NodeStateProto_NS_RUNNING); err != nil {
		t.Fatal(err)
	}
	if hb := nm.heartbeat(7); hb.GetNodeAction() != yarnpb.NodeActionProto_NORMAL {
		t.Fatalf("racing heartbeat: %v", hb)
	}
	// The registration's second step: the engine, unschedulable until the first heartbeat.
	if _, _, err := rm.Core().RegisterNode(scheduler.NodeSpec{ID: key, Rack: "/default-rack", Capacity: rm.Core().ResourceOf(capability), Unschedulable: true}, addr, nil); err != nil {
		t.Fatal(err)
	}
	nm.heartbeat(8)
	// An AM's ask is placed on the node.
	ctx := context.Background()
	na, err := cl.GetNewApplication(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.Call(ctx, "submitApplication", &yarnpb.SubmitApplicationRequestProto{ApplicationSubmissionContext: &yarnpb.ApplicationSubmissionContextProto{
		ApplicationId: na.GetApplicationId(), Queue: proto.String("default"), UnmanagedAm: proto.Bool(true)}}, &yarnpb.SubmitApplicationResponseProto{}); err != nil {
		t.Fatal(err)
	}
	rep, _ := cl.GetApplicationReport(ctx, na.GetApplicationId())
	am := amclient.New(amclient.Options{Addr: rm.SchedulerAddr().String(), Token: token.FromProto(rep.GetAmRmToken()), ConnectRetries: -1, Logger: testutil.QuietLogger()})
	defer am.Close()
	if _, err := am.Register(ctx, "h", 0, ""); err != nil {
		t.Fatal(err)
	}
	am.Request(10, "*", 1024, 1, 1)
	for i := 0; ; i++ {
		resp, err := am.Allocate(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.GetAllocatedContainers()) == 1 {
			break
		}
		if i == 50 {
			t.Fatal("no container on the node: the heartbeat after its registration did not make it schedulable")
		}
		nm.heartbeat(int32(9 + i))
		time.Sleep(20 * time.Millisecond)
	}
}

func TestHeartbeatSpreadSetting(t *testing.T) {
	clock := time.UnixMilli(1732269000123)
	rm, _ := startRMWithClock(t, testConf(rmcore.KeyHeartbeatSpread, "0", "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms", "700"), func() time.Time { return clock })
	nm := newFakeNM(t, rm, 45454)
	nm.register(8192, 8)
	if iv := nm.heartbeat(0).GetNextHeartBeatInterval(); iv != 700 {
		t.Errorf("spread 0: interval %d ms; want the configured 700 unchanged", iv)
	}
	for _, bad := range []string{"51", "-1", "ten"} {
		_, err := New(Options{Conf: testConf(rmcore.KeyHeartbeatSpread, bad), Logger: testutil.QuietLogger()})
		if err == nil || !strings.Contains(err.Error(), rmcore.KeyHeartbeatSpread) || !strings.Contains(err.Error(), bad) {
			t.Errorf("spread %q: error %v; want one naming the key and the value", bad, err)
		}
	}
}

// A NodeManager registering with applications it still runs (after an RM restart, say)
// hears at once which of them ended, or are unknown to the RM, so that it cleans them up
// and aggregates their logs, as the Java RM's handleRunningAppOnNode does; one still
// running is told to the node when it ends, though no container of it is left there.
// Before, an application that ended just before an RM restart was never cleaned up on its
// node, and `yarn logs` never had its containers (the kill matrix's unregistered phase).
func TestRegistrationCleansUpEndedApplications(t *testing.T) {
	rm, cl := startRMWithClock(t, testConf(), time.Now)
	ctx := context.Background()
	newApp := func() *yarnpb.ApplicationIdProto {
		na, err := cl.GetNewApplication(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := submit(t, cl, na.GetApplicationId(), "default", 1024); err != nil {
			t.Fatal(err)
		}
		return na.GetApplicationId()
	}
	kill := func(id *yarnpb.ApplicationIdProto) {
		if err := cl.Call(ctx, "forceKillApplication", &yarnpb.KillApplicationRequestProto{ApplicationId: id}, &yarnpb.KillApplicationResponseProto{}); err != nil {
			t.Fatal(err)
		}
	}
	ended, running := newApp(), newApp()
	kill(ended)
	unknown := &yarnpb.ApplicationIdProto{ClusterTimestamp: proto.Int64(rm.Core().ClusterTimestamp() - 1), Id: proto.Int32(7)}
	nm := newFakeNM(t, rm, 45454)
	var reg yarnpb.RegisterNodeManagerResponseProto
	if err := nm.c.Call(ctx, "registerNodeManager", &yarnpb.RegisterNodeManagerRequestProto{NodeId: nm.id, HttpPort: proto.Int32(8042),
		Resource: &yarnpb.ResourceProto{Memory: proto.Int64(8192), VirtualCores: proto.Int32(8)}, NmVersion: proto.String("2.7.3"),
		RunningApplications: []*yarnpb.ApplicationIdProto{ended, running, unknown}}, &reg); err != nil {
		t.Fatal(err)
	}
	cleanup := func(hb *yarnpb.NodeHeartbeatResponseProto) map[string]bool {
		ids := map[string]bool{}
		for _, p := range hb.GetApplicationsToCleanup() {
			ids[records.AppIDFromProto(p).String()] = true
		}
		return ids
	}
	str := func(p *yarnpb.ApplicationIdProto) string { return records.AppIDFromProto(p).String() }
	if got := cleanup(nm.heartbeat(0)); len(got) != 2 || !got[str(ended)] || !got[str(unknown)] {
		t.Fatalf("first heartbeat's applications to clean up: %v; want %s and %s", got, str(ended), str(unknown))
	}
	if got := cleanup(nm.heartbeat(1)); len(got) != 0 {
		t.Fatalf("applications to clean up told twice: %v", got)
	}
	kill(running)
	if got := cleanup(nm.heartbeat(2)); len(got) != 1 || !got[str(running)] {
		t.Fatalf("after the running application was killed: %v; want %s", got, str(running))
	}
}
