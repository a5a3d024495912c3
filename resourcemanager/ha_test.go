package resourcemanager

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/client/rmclient"
	"github.com/bobbin-yarn/bobbin/conf"
	commonpb "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/internal/zktest"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmha"
	"github.com/bobbin-yarn/bobbin/rpc"
)

// haConf is a two-RM HA configuration on loopback for RM id, with free ports.
func haConf(t *testing.T, zkAddr string, ports map[string]string, id string) *conf.Configuration {
	c := conf.New()
	for k, v := range map[string]string{
		"yarn.resourcemanager.ha.enabled": "true", "yarn.resourcemanager.ha.rm-ids": "rm1,rm2", "yarn.resourcemanager.ha.id": id,
		"yarn.resourcemanager.cluster-id": "test-cluster", "hadoop.zk.address": zkAddr, "yarn.resourcemanager.zk-timeout-ms": "3000",
		"yarn.resourcemanager.recovery.enabled": "true", "yarn.resourcemanager.store.class": "org.apache.hadoop.yarn.server.resourcemanager.recovery.ZKRMStateStore",
	} {
		c.Set(k, v)
	}
	for k, v := range ports {
		c.Set(k, v)
	}
	return c
}

func haPorts(t *testing.T) map[string]string {
	ports := map[string]string{}
	for _, id := range []string{"rm1", "rm2"} {
		for _, k := range rmha.AddressKeys {
			ports[k.Key+"."+id] = freeAddr(t)
		}
	}
	return ports
}

func startHA(t *testing.T, c *conf.Configuration) *ResourceManager {
	t.Helper()
	rm, err := New(Options{Conf: c, Logger: testutil.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := rm.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		rm.Shutdown(ctx)
	})
	return rm
}

// Two RMs in HA on a real ZooKeeper: one becomes active, the other answers clients with
// StandbyException and serves HAServiceProtocol and /ws/v1/cluster/info as a standby;
// when the active stops, the standby becomes active within seconds with the
// applications the first one accepted.
func TestHAFailover(t *testing.T) {
	zks := zktest.Start(t)
	ports := haPorts(t)
	rm1 := startHA(t, haConf(t, zks.Addr, ports, "rm1"))
	testutil.Eventually(t, 20*time.Second, "rm1 never became active", func() bool { return rm1.State() == commonpb.HAServiceStateProto_ACTIVE })
	rm2 := startHA(t, haConf(t, zks.Addr, ports, "rm2"))
	testutil.Eventually(t, 20*time.Second, "rm2 does not see rm1 as active", func() bool { return rm2.ha.Leader() == "rm1" })
	// A standby has no core yet: what reads the active core's figures (the GC floor
	// follows RunningNodes) gets none, and no panic.
	if rm2.Core() != nil || rm2.RunningNodes() != 0 {
		t.Fatalf("a standby that was never active: core %v, %d running nodes", rm2.Core(), rm2.RunningNodes())
	}
	ctx := context.Background()
	status := func(id string) commonpb.HAServiceStateProto {
		cl := rpc.NewClient(rpc.ClientOptions{Addr: ports["yarn.resourcemanager.admin.address."+id], Protocol: rmha.Protocol, User: "admin", ConnectRetries: -1, Logger: testutil.QuietLogger()})
		defer cl.Close()
		var resp commonpb.GetServiceStatusResponseProto
		if err := cl.Call(ctx, "getServiceStatus", &commonpb.GetServiceStatusRequestProto{}, &resp); err != nil {
			t.Fatal(err)
		}
		return resp.GetState()
	}
	if s1, s2 := status("rm1"), status("rm2"); s1 != commonpb.HAServiceStateProto_ACTIVE || s2 != commonpb.HAServiceStateProto_STANDBY {
		t.Fatalf("states rm1 %v rm2 %v", s1, s2)
	}
	// The standby refuses clients with StandbyException.
	cl2 := rmclient.New(ports["yarn.resourcemanager.address.rm2"], "alice", rpc.ClientOptions{ConnectRetries: -1, Logger: testutil.QuietLogger()})
	defer cl2.Close()
	_, err := cl2.GetNewApplication(ctx)
	var re *rpc.RemoteError
	if !errors.As(err, &re) || re.Class != rpc.ClassStandby {
		t.Fatalf("a client call on the standby: %v", err)
	}
	// Its web port says so, and sends the rest to the active.
	resp, err := http.Get("http://" + ports["yarn.resourcemanager.webapp.address.rm2"] + "/ws/v1/cluster/info")
	if err != nil {
		t.Fatal(err)
	}
	var info struct{ ClusterInfo map[string]any }
	json.NewDecoder(resp.Body).Decode(&info)
	resp.Body.Close()
	if info.ClusterInfo["haState"] != "STANDBY" {
		t.Fatalf("standby's cluster info %v", info)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err = noRedirect.Get("http://" + ports["yarn.resourcemanager.webapp.address.rm2"] + "/ws/v1/cluster/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") != "http://"+ports["yarn.resourcemanager.webapp.address.rm1"]+"/ws/v1/cluster/metrics" {
		t.Fatalf("standby's redirect: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	// An application on the active.
	cl1 := rmclient.New(ports["yarn.resourcemanager.address.rm1"], "alice", rpc.ClientOptions{ConnectRetries: -1, Logger: testutil.QuietLogger()})
	defer cl1.Close()
	na, err := cl1.GetNewApplication(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := cl1.Call(ctx, "submitApplication", &yarnpb.SubmitApplicationRequestProto{ApplicationSubmissionContext: &yarnpb.ApplicationSubmissionContextProto{
		ApplicationId: na.GetApplicationId(), ApplicationName: proto.String("before-failover"), Queue: proto.String("default"),
		AmContainerSpec: &yarnpb.ContainerLaunchContextProto{}, Resource: &yarnpb.ResourceProto{Memory: proto.Int64(1024), VirtualCores: proto.Int32(1)}}},
		&yarnpb.SubmitApplicationResponseProto{}); err != nil {
		t.Fatal(err)
	}
	// The active goes away; the standby takes over with the application.
	stopped := time.Now()
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := rm1.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 20*time.Second, "rm2 did not take over", func() bool { return rm2.State() == commonpb.HAServiceStateProto_ACTIVE })
	t.Logf("rm2 active %s after rm1 stopped", time.Since(stopped).Round(time.Millisecond))
	rep, err := cl2.GetApplicationReport(ctx, na.GetApplicationId())
	if err != nil || rep.GetName() != "before-failover" {
		t.Fatalf("the application after the failover: %v %v", rep, err)
	}
	// Without ZooKeeper no RM is active (no split brain); with it back, one is again.
	zks.Stop()
	testutil.Eventually(t, 20*time.Second, "rm2 stayed active without ZooKeeper", func() bool { return rm2.State() == commonpb.HAServiceStateProto_STANDBY })
	zks.Restart()
	testutil.Eventually(t, 30*time.Second, "rm2 not active again after ZooKeeper came back", func() bool { return rm2.State() == commonpb.HAServiceStateProto_ACTIVE })
	// An active that has not heard from ZooKeeper within two thirds of its 3 s session
	// answers as a standby until it has (StillActive): on a loaded machine that can be a
	// moment after it became active again.
	testutil.Eventually(t, 20*time.Second, "the application not served after ZooKeeper came back", func() bool {
		rep, err = cl2.GetApplicationReport(ctx, na.GetApplicationId())
		return err == nil
	})
	if rep.GetName() != "before-failover" {
		t.Fatalf("the application after ZooKeeper came back: %v", rep)
	}
}

// Manual failover (automatic-failover.enabled=false): both RMs start as standbys and
// the administrator's transitionToActive/Standby decide; under automatic failover a
// plain (not forced) request is refused.
func TestHAManualTransitions(t *testing.T) {
	zks := zktest.Start(t)
	ports := haPorts(t)
	c1 := haConf(t, zks.Addr, ports, "rm1")
	c1.Set("yarn.resourcemanager.ha.automatic-failover.enabled", "false")
	rm1 := startHA(t, c1)
	ctx := context.Background()
	admin := rpc.NewClient(rpc.ClientOptions{Addr: ports["yarn.resourcemanager.admin.address.rm1"], Protocol: rmha.Protocol, User: "admin", ConnectRetries: -1, Logger: testutil.QuietLogger()})
	defer admin.Close()
	if rm1.State() != commonpb.HAServiceStateProto_STANDBY {
		t.Fatal("a manual-failover RM started active")
	}
	byUser := &commonpb.HAStateChangeRequestInfoProto{ReqSource: commonpb.HARequestSource_REQUEST_BY_USER.Enum()}
	if err := admin.Call(ctx, "transitionToActive", &commonpb.TransitionToActiveRequestProto{ReqInfo: byUser}, &commonpb.TransitionToActiveResponseProto{}); err != nil {
		t.Fatal(err)
	}
	if rm1.State() != commonpb.HAServiceStateProto_ACTIVE {
		t.Fatal("transitionToActive did not make rm1 active")
	}
	if err := admin.Call(ctx, "transitionToStandby", &commonpb.TransitionToStandbyRequestProto{ReqInfo: byUser}, &commonpb.TransitionToStandbyResponseProto{}); err != nil {
		t.Fatal(err)
	}
	if rm1.State() != commonpb.HAServiceStateProto_STANDBY {
		t.Fatal("transitionToStandby did not make rm1 standby")
	}
	// 3.3+ clients can ask for the observer state (HDFS's); Apache's RM refuses it so.
	var obs *rpc.RemoteError
	if err := admin.Call(ctx, "transitionToObserver", &commonpb.TransitionToObserverRequestProto{ReqInfo: byUser}, &commonpb.TransitionToObserverResponseProto{}); !errors.As(err, &obs) ||
		obs.Class != "org.apache.hadoop.ha.ServiceFailedException" || obs.Message != "Does not support transition to Observer" {
		t.Fatalf("transitionToObserver: %v", err)
	}
	// Under automatic failover only a forced request is taken.
	rm2 := startHA(t, haConf(t, zks.Addr, ports, "rm2"))
	testutil.Eventually(t, 20*time.Second, "rm2 never became active", func() bool { return rm2.State() == commonpb.HAServiceStateProto_ACTIVE })
	admin2 := rpc.NewClient(rpc.ClientOptions{Addr: ports["yarn.resourcemanager.admin.address.rm2"], Protocol: rmha.Protocol, User: "admin", ConnectRetries: -1, Logger: testutil.QuietLogger()})
	defer admin2.Close()
	var re *rpc.RemoteError
	err := admin2.Call(ctx, "transitionToStandby", &commonpb.TransitionToStandbyRequestProto{ReqInfo: byUser}, &commonpb.TransitionToStandbyResponseProto{})
	if !errors.As(err, &re) || re.Class != rpc.ClassAccessControl {
		t.Fatalf("a manual transition under automatic failover: %v", err)
	}
	forced := &commonpb.HAStateChangeRequestInfoProto{ReqSource: commonpb.HARequestSource_REQUEST_BY_USER_FORCED.Enum()}
	if err := admin2.Call(ctx, "transitionToStandby", &commonpb.TransitionToStandbyRequestProto{ReqInfo: forced}, &commonpb.TransitionToStandbyResponseProto{}); err != nil {
		t.Fatal(err)
	}
	if rm2.State() != commonpb.HAServiceStateProto_STANDBY {
		t.Fatal("a forced transitionToStandby did not take")
	}
	// rm2 gave the election lock up with it; alone in the election, it wins it again.
	testutil.Eventually(t, 20*time.Second, "no RM active after the forced standby", func() bool { return rm2.State() == commonpb.HAServiceStateProto_ACTIVE })
}
