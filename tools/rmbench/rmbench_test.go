package rmbench_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/resourcemanager"
	"github.com/bobbin-yarn/bobbin/tools/rmbench"
)

// TestRunAgainstBobbinRM drives a real in-process ResourceManager over its sockets for a
// short window: every node registers and heartbeats, every AM is admitted with its
// AMRMToken, containers are granted, run and reported complete, and the apps finish.
// The generator against an in-process Bobbin RM, with a connection per simulated NM (as
// real NMs) and with the NMs' heartbeats multiplexed over three connections.
func TestRunAgainstBobbinRM(t *testing.T) {
	for _, conns := range []int{0, 3} {
		t.Run(fmt.Sprintf("nm-connections=%d", conns), func(t *testing.T) { runAgainstBobbinRM(t, conns, 0) })
	}
	// An offered rate: 30 containers a second over the three AMs, however many the RM
	// could place.
	t.Run("rate=30", func(t *testing.T) {
		res := runAgainstBobbinRM(t, 0, 30)
		// 3 s of window at 30/s, plus what was asked during the last interval before it.
		if res.OfferedRate != 30 || res.Allocated > 3*30+30*2/5+3 {
			t.Errorf("offered %v: %d allocated", res.OfferedRate, res.Allocated)
		}
	})
}

func runAgainstBobbinRM(t *testing.T, conns int, rate float64) *rmbench.Result {
	c := conf.New()
	for _, k := range []string{"address", "resource-tracker.address", "scheduler.address", "admin.address", "webapp.address"} {
		c.Set("yarn.resourcemanager."+k, "127.0.0.1:0")
	}
	c.Set("yarn.resourcemanager.nodemanagers.heartbeat-interval-ms", "200") // the simulated NMs follow it
	rm, err := resourcemanager.New(resourcemanager.Options{Conf: c, Logger: testutil.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := rm.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := rm.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := rmbench.Run(ctx, rmbench.Options{TrackerAddr: rm.TrackerAddr().String(), ClientAddr: rm.ClientAddr().String(),
		SchedulerAddr: rm.SchedulerAddr().String(), Nodes: 8, Apps: 3, Duration: 3 * time.Second,
		Heartbeat: 200 * time.Millisecond, AMInterval: 200 * time.Millisecond, ContainerTime: 300 * time.Millisecond,
		AsksPerApp: 5, Rate: rate, FirstPort: 30000, RMPid: os.Getpid(), TrackerConnections: conns, Logger: testutil.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors != 0 {
		t.Fatalf("errors: %v %v", res.ErrorKinds, res.ErrorSamples)
	}
	if res.NodesLive != 8 || res.AppsFinished != 3 {
		t.Errorf("nodes heartbeating %d, apps finished %d; want 8 and 3", res.NodesLive, res.AppsFinished)
	}
	if res.Allocated == 0 || res.Completed == 0 || res.Completed > int64(res.Allocated) {
		t.Errorf("allocated %d, completed %d", res.Allocated, res.Completed)
	}
	if res.AllocateLatency.Count != res.AllocateCalls || res.AllocateCalls == 0 {
		t.Errorf("allocate latency samples %d for %d calls", res.AllocateLatency.Count, res.AllocateCalls)
	}
	if res.HeartbeatLatency.Count != res.Heartbeats || res.Heartbeats < 8 {
		t.Errorf("heartbeat latency samples %d for %d heartbeats", res.HeartbeatLatency.Count, res.Heartbeats)
	}
	if res.AskToGrant.Count != res.Allocated {
		t.Errorf("ask-to-grant samples %d for %d grants", res.AskToGrant.Count, res.Allocated)
	}
	if res.RMPeakRSSMB <= 0 {
		t.Errorf("no RSS sampled for pid %d", os.Getpid())
	}
	return res
}

func TestRunRejectsImpossibleOptions(t *testing.T) {
	for name, o := range map[string]rmbench.Options{
		"no nodes":  {TrackerAddr: "a:1", ClientAddr: "a:2", SchedulerAddr: "a:3", Apps: 1, Duration: time.Second},
		"no addrs":  {Nodes: 1, Apps: 1, Duration: time.Second},
		"port span": {TrackerAddr: "a:1", ClientAddr: "a:2", SchedulerAddr: "a:3", Nodes: 100, Apps: 1, Duration: time.Second, FirstPort: 65500},
	} {
		if _, err := rmbench.Run(context.Background(), o); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestRestartMeasuresTheRMComingBack restarts a real in-process RM (work-preserving
// recovery, embedded store) in the middle of the window: every node and AM must come
// back to the new RM, the RM must hold the containers the generator runs, and the calls
// that failed while it was down are the restart's, not errors.
func TestRestartMeasuresTheRMComingBack(t *testing.T) {
	c := conf.New()
	for _, k := range []string{"address", "resource-tracker.address", "scheduler.address", "admin.address", "webapp.address"} {
		c.Set("yarn.resourcemanager."+k, testutil.FreeAddr(t))
	}
	c.Set("yarn.resourcemanager.nodemanagers.heartbeat-interval-ms", "200")
	c.Set("yarn.resourcemanager.recovery.enabled", "true")
	c.Set("yarn.resourcemanager.fs.state-store.uri", "file://"+t.TempDir())
	start := func() *resourcemanager.ResourceManager {
		rm, err := resourcemanager.New(resourcemanager.Options{Conf: c, Logger: testutil.QuietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		if err := rm.Start(); err != nil {
			t.Fatal(err)
		}
		return rm
	}
	stop := func(rm *resourcemanager.ResourceManager) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := rm.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	}
	rm := start()
	t.Cleanup(func() { stop(rm) })
	restarts := 0
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := rmbench.Run(ctx, rmbench.Options{TrackerAddr: rm.TrackerAddr().String(), ClientAddr: rm.ClientAddr().String(),
		SchedulerAddr: rm.SchedulerAddr().String(), RMREST: rm.WebAddr().String(), Nodes: 6, Apps: 3, Duration: 4 * time.Second,
		Warmup: time.Second, Heartbeat: 200 * time.Millisecond, AMInterval: 200 * time.Millisecond, ContainerTime: time.Hour,
		AsksPerApp: 4, NodeMemoryMB: 2048, FirstPort: 31000, RMPid: os.Getpid(), RestartAfter: 500 * time.Millisecond, Logger: testutil.QuietLogger(),
		Restart: func(context.Context) (int, error) {
			// In process a graceful stop stands for the kill: the store is what the
			// new RM starts from either way.
			restarts++
			stop(rm)
			rm = start()
			return os.Getpid(), nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Restart
	if restarts != 1 || r == nil {
		t.Fatalf("restarts %d, result %+v", restarts, r)
	}
	if r.Failure != "" {
		t.Fatalf("restart: %s (%+v)", r.Failure, r)
	}
	if r.NodesResynced != 6 || r.AMsResynced != 3 || r.ServingMs <= 0 || r.NodesResyncedMs < r.CommandMs || r.AMsResyncedMs <= 0 {
		t.Errorf("not everything measured back: %+v", r)
	}
	if r.ContainersRunning != 12 || r.ContainersReported != 12 || r.GeneratorContainers != 12 || r.RMContainers != 12 || r.RMAllocatedMB != 12*1024 {
		t.Errorf("containers across the restart (want 12 everywhere): %+v", r)
	}
	if res.Errors != 0 || res.AppsFinished != 3 {
		t.Errorf("errors %v %v, apps finished %d", res.ErrorKinds, res.ErrorSamples, res.AppsFinished)
	}
}
