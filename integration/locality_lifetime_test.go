package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/client/rmclient"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/tools/nmsim"
)

// TestLocalityDelayLikeApache runs capacity-scheduler.xml's delay-scheduling keys
// (node-locality-delay, and 3.x's rack-locality-additional-delay, which 2.7.3 does not
// read) on the Apache RMs and Bobbin's (issue 22): both accept them, an ask naming the
// node's host is placed there, and an ask naming a host the cluster does not have is
// placed on the node once its delay lets it go off its host (Java: after
// min(nodes, node-locality-delay) missed opportunities; Bobbin: at once, as it waits only
// for hosts its partition has).
func TestLocalityDelayLikeApache(t *testing.T) {
	t.Parallel()
	for _, k := range comparedRMs(t) {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			site := loopbackRMSite(t)
			site["yarn.resourcemanager.nodemanagers.heartbeat-interval-ms"] = "200"
			dir := queueConfDir(t, site, map[string]string{"root.queues": "default", "root.default.capacity": "100",
				"node-locality-delay": "5", "rack-locality-additional-delay": "2", "maximum-am-resource-percent": "1"})
			k.start(t, dir, site)
			ctx := context.Background()
			am := unmanagedAMAs(t, site, "alice", "default")
			// As a MapReduce AM asks: the host, its rack and anywhere, at one priority each.
			for prio, host := range map[int32]string{1: "127.0.0.1", 2: "elsewhere.invalid"} {
				am.Request(prio, host, 1024, 1, 1)
				am.Request(prio, "/default-rack", 1024, 1, 1)
				am.Request(prio, "*", 1024, 1, 1)
			}
			if _, err := am.Allocate(ctx, 0); err != nil {
				t.Fatalf("allocate: %v", err)
			}
			nm, err := nmsim.Start(nmsim.Options{TrackerAddr: site["yarn.resourcemanager.resource-tracker.address"], Port: int32(freePort(t)),
				MemoryMB: 10240, VCores: 10, Heartbeat: 200 * time.Millisecond, FollowRM: true, Logger: testutil.QuietLogger()})
			if err != nil {
				t.Fatalf("simulated NodeManager: %v", err)
			}
			t.Cleanup(nm.Stop)
			byPriority := map[int32]string{}
			testutil.PollEvery(20*time.Second, 100*time.Millisecond, func() bool {
				resp, err := am.Allocate(ctx, 0)
				if err != nil {
					t.Fatalf("allocate: %v", err)
				}
				for _, c := range resp.GetAllocatedContainers() {
					byPriority[c.GetPriority().GetPriority()] = c.GetNodeId().GetHost()
				}
				return len(byPriority) >= 2
			})
			if byPriority[1] != "127.0.0.1" || byPriority[2] != "127.0.0.1" {
				t.Errorf("containers by priority: %v, want both on 127.0.0.1", byPriority)
			}
		})
	}
}

// TestApplicationLifetimeLikeApache gives Apache 3.1.1's RM and Bobbin's a queue with
// maximum-application-lifetime (3.x) beside one without: an application in the first,
// asking for no lifetime, gets the queue's and is killed when it passes, with the same
// diagnostics from both; the other runs on (issue 22).
func TestApplicationLifetimeLikeApache(t *testing.T) {
	t.Parallel()
	for _, k := range comparedRMs(t) {
		if k.name == "apache-"+hadoop2 {
			continue // lifetimes came in 2.9/3.0
		}
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			site := loopbackRMSite(t)
			dir := queueConfDir(t, site, map[string]string{"root.queues": "default,b", "root.default.capacity": "50", "root.b.capacity": "50",
				"root.default.maximum-application-lifetime": "4"})
			k.start(t, dir, site)
			ctx := context.Background()
			cl := rmclient.New(site["yarn.resourcemanager.address"], "alice", rpc.ClientOptions{ConnectRetries: 50, Logger: testutil.QuietLogger()})
			t.Cleanup(func() { cl.Close() })
			start := time.Now()
			unmanagedAMAs(t, site, "alice", "default")
			unmanagedAMAs(t, site, "alice", "b")
			states := map[string]string{}
			testutil.PollEvery(30*time.Second, 250*time.Millisecond, func() bool {
				apps, err := cl.GetApplications(ctx, &yarnpb.GetApplicationsRequestProto{})
				if err != nil {
					t.Fatalf("getApplications: %v", err)
				}
				for _, a := range apps {
					states[a.GetQueue()] = a.GetYarnApplicationState().String() + ": " + a.GetDiagnostics()
				}
				return strings.HasPrefix(states["default"], "KILLED")
			})
			took := time.Since(start)
			const killed = "KILLED: Application is killed by ResourceManager as it has exceeded the lifetime period."
			if states["default"] != killed || !strings.HasPrefix(states["b"], "RUNNING") {
				t.Errorf("after %v: queue default's application %q, want %q; queue b's %q, want RUNNING", took.Round(time.Millisecond), states["default"], killed, states["b"])
			}
			if took < 4*time.Second {
				t.Errorf("killed after %v, before its lifetime of 4 s", took)
			}
			t.Logf("killed after %v", took.Round(100*time.Millisecond))
		})
	}
}
