package resourcemanager

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/client/amclient"
	"github.com/bobbin-yarn/bobbin/client/rmclient"
	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmcore"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/rpc/token"
	"github.com/bobbin-yarn/bobbin/tools/nmsim"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
	"github.com/bobbin-yarn/bobbin/yarn/protocol"
	"github.com/bobbin-yarn/bobbin/yarn/security"
)

// These tests run whole applications without Hadoop: simulated NodeManagers speak the real
// ResourceTracker protocol and serve ContainerManagementProtocol with NMTokens; the AM is
// a Go program using package amclient over the real AM protocol with the AMRMToken the
// RM's launcher put in its container's credentials.

// amFunc is what a test's AM does once it runs in its container; it returns the
// container's exit status.
type amFunc func(ctx context.Context, l *nmsim.Launch, am *amclient.Client) int32

// simCluster is an RM on a real clock with simulated NodeManagers.
type simCluster struct {
	t   *testing.T
	rm  *ResourceManager
	cl  *rmclient.Client
	nms []*nmsim.NodeManager

	mu sync.Mutex
	am amFunc
}

func newSimCluster(t *testing.T, c *conf.Configuration, nodes int, am amFunc) *simCluster {
	t.Helper()
	return newSimClusterWithClock(t, c, nodes, am, time.Now)
}

// newSimClusterWithClock is newSimCluster on a given clock (a testutil.Clock's Now, for
// tests that move time by hand and run the monitor's pass with rm.Step).
func newSimClusterWithClock(t *testing.T, c *conf.Configuration, nodes int, am amFunc, now func() time.Time) *simCluster {
	t.Helper()
	rm, cl := startRMWithClock(t, c, now)
	sc := &simCluster{t: t, rm: rm, cl: cl, am: am}
	for i := 0; i < nodes; i++ {
		sc.addNode(nmsim.Options{MemoryMB: 8192, VCores: 8})
	}
	return sc
}

func (sc *simCluster) addNode(opts nmsim.Options) *nmsim.NodeManager {
	sc.t.Helper()
	opts.TrackerAddr, opts.Serve, opts.Run, opts.Logger = sc.rm.TrackerAddr().String(), true, sc.run, testutil.QuietLogger()
	if opts.Heartbeat == 0 {
		opts.Heartbeat = 20 * time.Millisecond
	}
	nm, err := nmsim.Start(opts)
	if err != nil {
		sc.t.Fatal(err)
	}
	sc.t.Cleanup(nm.Stop)
	sc.nms = append(sc.nms, nm)
	return nm
}

// run is every container's work: the AM when the launch context holds an AMRMToken, a
// short task otherwise.
func (sc *simCluster) run(ctx context.Context, l *nmsim.Launch) (int32, string) {
	if l.Credentials == nil {
		d := 30 * time.Millisecond
		if slices.Equal(l.Context.GetCommand(), []string{"run-until-stopped"}) {
			d = time.Hour
		}
		select {
		case <-ctx.Done():
		case <-time.After(d):
		}
		return 0, ""
	}
	tok, err := amclient.AMRMTokenFrom(l.Credentials)
	if err != nil {
		return 1, err.Error()
	}
	am := amclient.New(amclient.Options{Addr: sc.rm.SchedulerAddr().String(), Token: tok, User: l.Env["USER"], ConnectRetries: -1, Logger: testutil.QuietLogger()})
	defer am.Close()
	sc.mu.Lock()
	f := sc.am
	sc.mu.Unlock()
	return f(ctx, l, am), ""
}

// submit submits a managed application whose AM the cluster runs.
func (sc *simCluster) submit(maxAttempts int32, validityMs int64) *yarnpb.ApplicationIdProto {
	sc.t.Helper()
	ctx := context.Background()
	na, err := sc.cl.GetNewApplication(ctx)
	if err != nil {
		sc.t.Fatal(err)
	}
	err = sc.cl.Call(ctx, "submitApplication", &yarnpb.SubmitApplicationRequestProto{ApplicationSubmissionContext: &yarnpb.ApplicationSubmissionContextProto{
		ApplicationId: na.GetApplicationId(), ApplicationName: proto.String("go-am"), Queue: proto.String("default"),
		AmContainerSpec: &yarnpb.ContainerLaunchContextProto{Command: []string{"go-am"}},
		Resource:        &yarnpb.ResourceProto{Memory: proto.Int64(1024), VirtualCores: proto.Int32(1)},
		MaxAppAttempts:  proto.Int32(maxAttempts), AttemptFailuresValidityInterval: proto.Int64(validityMs)}}, &yarnpb.SubmitApplicationResponseProto{})
	if err != nil {
		sc.t.Fatal(err)
	}
	return na.GetApplicationId()
}

// waitFinal polls the report until the application ends.
func (sc *simCluster) waitFinal(id *yarnpb.ApplicationIdProto, within time.Duration) *yarnpb.ApplicationReportProto {
	sc.t.Helper()
	var rep *yarnpb.ApplicationReportProto
	testutil.Eventually(sc.t, within, fmt.Sprintf("application %s has not ended", records.AppIDFromProto(id)), func() bool {
		var err error
		if rep, err = sc.cl.GetApplicationReport(context.Background(), id); err != nil {
			sc.t.Fatal(err)
		}
		switch rep.GetYarnApplicationState() {
		case yarnpb.YarnApplicationStateProto_FINISHED, yarnpb.YarnApplicationStateProto_FAILED, yarnpb.YarnApplicationStateProto_KILLED:
			return true
		}
		return false
	})
	return rep
}

func (sc *simCluster) attempts(id *yarnpb.ApplicationIdProto) []*yarnpb.ApplicationAttemptReportProto {
	var resp yarnpb.GetApplicationAttemptsResponseProto
	if err := sc.cl.Call(context.Background(), "getApplicationAttempts", &yarnpb.GetApplicationAttemptsRequestProto{ApplicationId: id}, &resp); err != nil {
		sc.t.Fatal(err)
	}
	return resp.GetApplicationAttempts()
}

// runTasks is a complete AM: register, ask for n containers, start each on its
// NodeManager with the NMToken the RM sent, wait for all to complete, unregister.
func (sc *simCluster) runTasks(n int32) amFunc {
	return func(ctx context.Context, l *nmsim.Launch, am *amclient.Client) int32 {
		if _, err := am.Register(ctx, "go-am-host", 0, ""); err != nil {
			sc.t.Errorf("register: %v", err)
			return 1
		}
		am.Request(20, "*", 1024, 1, n)
		done, started := 0, 0
		for done < int(n) {
			resp, err := am.Allocate(ctx, float32(done)/float32(n))
			if err != nil {
				if ctx.Err() == nil {
					sc.t.Errorf("allocate: %v", err)
				}
				return 1
			}
			for _, c := range resp.GetAllocatedContainers() {
				if c.GetPriority().GetPriority() != 20 {
					sc.t.Errorf("container %v has priority %d, asked 20", c.GetId(), c.GetPriority().GetPriority())
				}
				if err := startOn(ctx, am, l.ID.Attempt, c); err != nil {
					sc.t.Errorf("start %s: %v", records.ContainerIDFromProto(c.GetId()), err)
					return 1
				}
				started++
			}
			for _, st := range resp.GetCompletedContainerStatuses() {
				if st.GetExitStatus() != 0 {
					sc.t.Errorf("task %s exited %d: %s", records.ContainerIDFromProto(st.GetContainerId()), st.GetExitStatus(), st.GetDiagnostics())
				}
				done++
			}
			time.Sleep(20 * time.Millisecond)
		}
		if started != int(n) {
			sc.t.Errorf("started %d containers, asked %d", started, n)
		}
		if err := am.Finish(ctx, yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED, "all tasks done", ""); err != nil {
			// The report shows FINISHED as the RM records the unregistration, before it
			// answers: a test that saw it may end, and stop this container, first.
			if ctx.Err() == nil {
				sc.t.Errorf("finish: %v", err)
			}
			return 1
		}
		return 0
	}
}

// startOn starts a container on its NodeManager the way an AM does: NMToken auth, user =
// attempt id, the container token from the allocation.
func startOn(ctx context.Context, am *amclient.Client, att records.AttemptID, c *yarnpb.ContainerProto) error {
	return startCommand(ctx, am, att, c, "task")
}

// startCommand is startOn with the container's command ("run-until-stopped": a task that
// runs until it is stopped or killed).
func startCommand(ctx context.Context, am *amclient.Client, att records.AttemptID, c *yarnpb.ContainerProto, command string) error {
	node := fmt.Sprintf("%s:%d", c.GetNodeId().GetHost(), c.GetNodeId().GetPort())
	tok := am.NMToken(node)
	if tok == nil {
		return fmt.Errorf("no NMToken for %s", node)
	}
	nm := rpc.NewClient(rpc.ClientOptions{Addr: node, Protocol: protocol.ContainerManagement, User: att.String(), Token: tok, ConnectRetries: -1, Logger: testutil.QuietLogger()})
	defer nm.Close()
	var resp yarnpb.StartContainersResponseProto
	if err := nm.Call(ctx, "startContainers", &yarnpb.StartContainersRequestProto{StartContainerRequest: []*yarnpb.StartContainerRequestProto{
		{ContainerLaunchContext: &yarnpb.ContainerLaunchContextProto{Command: []string{command}}, ContainerToken: c.GetContainerToken()}}}, &resp); err != nil {
		return err
	}
	if f := resp.GetFailedRequests(); len(f) > 0 {
		return fmt.Errorf("%s: %s", f[0].GetException().GetClassName(), f[0].GetException().GetMessage())
	}
	return nil
}

func TestApplicationsRunToCompletionOnSimulatedNodeManagers(t *testing.T) {
	sc := newSimCluster(t, testConf(), 2, nil)
	sc.am = sc.runTasks(5)
	ids := []*yarnpb.ApplicationIdProto{sc.submit(0, 0), sc.submit(0, 0), sc.submit(0, 0)}
	for _, id := range ids {
		rep := sc.waitFinal(id, 20*time.Second)
		if rep.GetYarnApplicationState() != yarnpb.YarnApplicationStateProto_FINISHED || rep.GetFinalApplicationStatus() != yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED ||
			rep.GetDiagnostics() != "all tasks done" || rep.GetHost() != "go-am-host" {
			t.Fatalf("report %v", rep)
		}
		atts := sc.attempts(id)
		if len(atts) != 1 || atts[0].GetAmContainerId() == nil {
			t.Fatalf("attempts %v", atts)
		}
	}
	// Once every AM container has exited, each application is cleaned up on the NMs it
	// ran on, and the engine holds nothing.
	testutil.Eventually(t, 5*time.Second, "applications not cleaned up on the NMs, or the engine still holds containers", func() bool {
		cleaned := map[records.ApplicationID]bool{}
		for _, nm := range sc.nms {
			for _, a := range nm.FinishedApps() {
				cleaned[a] = true
			}
		}
		total, used := sc.rm.Core().Totals()
		return len(cleaned) == len(ids) && used.IsZero() && total[0] == 2*8192
	})
	for _, a := range ids {
		for _, at := range sc.attempts(a) {
			if at.GetYarnApplicationAttemptState() != yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FINISHED {
				t.Errorf("attempt %v", at)
			}
		}
	}
	if n := sc.rm.Core().Metrics().AppsCompleted.Count(); n != 3 {
		t.Errorf("AppsCompleted = %d", n)
	}
	if n := sc.rm.Core().Metrics().ContainersAlloc.Count(); n != 18 {
		t.Errorf("ContainersAllocated = %d, want 3 AMs + 15 tasks", n)
	}
}

// An AM container that exits before unregistering gets a new attempt, up to max attempts;
// then the application is FAILED with diagnostics.
func TestAMAttemptsRetryThenFail(t *testing.T) {
	sc := newSimCluster(t, testConf("yarn.resourcemanager.am.max-attempts", "3"), 1, func(ctx context.Context, l *nmsim.Launch, am *amclient.Client) int32 {
		return 7
	})
	id := sc.submit(2, 0) // the application asks for 2 of the allowed 3
	rep := sc.waitFinal(id, 10*time.Second)
	if rep.GetYarnApplicationState() != yarnpb.YarnApplicationStateProto_FAILED || rep.GetFinalApplicationStatus() != yarnpb.FinalApplicationStatusProto_APP_FAILED {
		t.Fatalf("report %v", rep)
	}
	app := records.AppIDFromProto(id)
	if d := rep.GetDiagnostics(); !strings.Contains(d, fmt.Sprintf("Application %s failed 2 times due to AM Container for %s exited with  exitCode: 7", app, app.Attempt(2))) ||
		!strings.HasSuffix(d, "Failing the application.") {
		t.Fatalf("diagnostics %q", d)
	}
	atts := sc.attempts(id)
	if len(atts) != 2 {
		t.Fatalf("%d attempts", len(atts))
	}
	for i, at := range atts {
		wantAM := records.ContainerID{Attempt: app.Attempt(int32(i + 1)), ID: 1}
		if at.GetYarnApplicationAttemptState() != yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FAILED ||
			records.ContainerIDFromProto(at.GetAmContainerId()) != wantAM {
			t.Errorf("attempt %d: %v", i+1, at)
		}
	}
	// REST lists both attempts, the one that ended first too, as Java's does (it listed
	// only the current one, which Spark's retried AM showed).
	_, v, raw := restCall(t, sc.rm, "GET", "/ws/v1/cluster/apps/"+app.String()+"/appattempts", "", "")
	list, _ := v["appAttempts"].(map[string]any)["appAttempt"].([]any)
	if len(list) != 2 || list[0].(map[string]any)["appAttemptId"] != app.Attempt(1).String() || list[1].(map[string]any)["id"] != 2.0 ||
		!strings.HasSuffix(fmt.Sprint(list[0].(map[string]any)["containerId"]), "_01_000001") {
		t.Errorf("REST attempts: %s", raw)
	}
	if sc.rm.Core().Metrics().AttemptsRetried.Count() != 1 || sc.rm.Core().Metrics().AppsFailed.Count() != 1 {
		t.Errorf("retried %d failed %d", sc.rm.Core().Metrics().AttemptsRetried.Count(), sc.rm.Core().Metrics().AppsFailed.Count())
	}
}

// The second attempt of an application whose first AM crashed completes it.
func TestSecondAttemptSucceeds(t *testing.T) {
	sc := newSimCluster(t, testConf(), 1, nil)
	tasks := sc.runTasks(2)
	var first *token.Token
	sc.am = func(ctx context.Context, l *nmsim.Launch, am *amclient.Client) int32 {
		if l.ID.Attempt.Attempt == 1 {
			// Registers, then dies: the first attempt's token must stop working.
			am.Register(ctx, "h", 0, "")
			first = am.Token()
			return 1
		}
		return tasks(ctx, l, am)
	}
	id := sc.submit(0, 0)
	rep := sc.waitFinal(id, 10*time.Second)
	if rep.GetYarnApplicationState() != yarnpb.YarnApplicationStateProto_FINISHED || rep.GetCurrentApplicationAttemptId().GetAttemptId() != 2 {
		t.Fatalf("report %v", rep)
	}
	// The dead attempt's AMRMToken is revoked.
	re := remote(t, amClient(t, sc.rm, first).Call(context.Background(), "allocate", &yarnpb.AllocateRequestProto{}, &yarnpb.AllocateResponseProto{}))
	if re.Class != rpc.ClassSaslException && re.Class != rpc.ClassInvalidToken {
		t.Fatalf("revoked token: %+v", re)
	}
}

// With a failures-validity interval, failures older than it do not count: an AM that fails
// slowly keeps getting attempts beyond max-attempts.
func TestFailuresValidityInterval(t *testing.T) {
	clock := testutil.NewClock(time.UnixMilli(1732269000000))
	sc := newSimClusterWithClock(t, testConf("yarn.resourcemanager.am.max-attempts", "2"), 1, nil, clock.Now)
	tasks := sc.runTasks(1)
	sc.am = func(ctx context.Context, l *nmsim.Launch, am *amclient.Client) int32 {
		if l.ID.Attempt.Attempt < 3 {
			clock.Advance(400 * time.Millisecond) // each failure lands outside the 300 ms window of the last
			return 1
		}
		return tasks(ctx, l, am)
	}
	id := sc.submit(2, 300)
	rep := sc.waitFinal(id, 15*time.Second)
	if rep.GetYarnApplicationState() != yarnpb.YarnApplicationStateProto_FINISHED || len(sc.attempts(id)) != 3 {
		t.Fatalf("report %v, %d attempts", rep, len(sc.attempts(id)))
	}
}

// An AM that stops heartbeating expires after yarn.am.liveness-monitor.expiry-interval-ms;
// the expiry counts as a failure.
func TestAMLivenessExpiry(t *testing.T) {
	clock := testutil.NewClock(time.UnixMilli(1732269000000))
	registered := make(chan struct{}, 1)
	sc := newSimClusterWithClock(t, testConf("yarn.am.liveness-monitor.expiry-interval-ms", "300"), 1, func(ctx context.Context, l *nmsim.Launch, am *amclient.Client) int32 {
		am.Register(ctx, "h", 0, "")
		registered <- struct{}{}
		<-ctx.Done() // hangs without heartbeating until the RM has it killed
		return 143
	}, clock.Now)
	id := sc.submit(1, 0)
	<-registered
	// Just inside the expiry the attempt lives; just past it, the monitor's pass fails it.
	sc.rm.Core().Step(clock.Advance(300 * time.Millisecond))
	if rep, _ := sc.cl.GetApplicationReport(context.Background(), id); rep.GetYarnApplicationState() != yarnpb.YarnApplicationStateProto_RUNNING {
		t.Fatalf("expired early: %v", rep)
	}
	sc.rm.Core().Step(clock.Advance(time.Millisecond))
	rep := sc.waitFinal(id, 10*time.Second)
	app := records.AppIDFromProto(id)
	if rep.GetYarnApplicationState() != yarnpb.YarnApplicationStateProto_FAILED ||
		!strings.Contains(rep.GetDiagnostics(), fmt.Sprintf("ApplicationMaster for attempt %s timed out", app.Attempt(1))) {
		t.Fatalf("report %v", rep)
	}
	// The hung AM container is killed through its NodeManager.
	amc := records.ContainerID{Attempt: app.Attempt(1), ID: 1}
	testutil.Eventually(t, 5*time.Second, "the hung AM container was not killed", func() bool {
		st, exit, ok := sc.nms[0].ContainerState(amc)
		return !ok || (st == yarnpb.ContainerStateProto_C_COMPLETE && exit == exitcode.KilledByResourceManager)
	})
}

// A container given to an AM and never started is taken back after
// yarn.resourcemanager.rm.container-allocation.expiry-interval-ms: the AM hears ABORTED.
func TestUnusedContainerExpires(t *testing.T) {
	clock := testutil.NewClock(time.UnixMilli(1732269000000))
	sc := newSimClusterWithClock(t, testConf("yarn.resourcemanager.rm.container-allocation.expiry-interval-ms", "300"), 1, nil, clock.Now)
	handedOut := make(chan struct{})
	sc.am = func(ctx context.Context, l *nmsim.Launch, am *amclient.Client) int32 {
		am.Register(ctx, "h", 0, "")
		am.Request(20, "*", 1024, 1, 1)
		var got *yarnpb.ContainerProto
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			resp, err := am.Allocate(ctx, 0)
			if err != nil {
				t.Errorf("allocate: %v", err)
				return 1
			}
			if len(resp.GetAllocatedContainers()) > 0 && got == nil {
				got = resp.GetAllocatedContainers()[0] // and never started
				close(handedOut)
			}
			for _, st := range resp.GetCompletedContainerStatuses() {
				if got != nil && proto.Equal(st.GetContainerId(), got.GetId()) {
					if st.GetExitStatus() != exitcode.Aborted || st.GetDiagnostics() != "Container expired since it was unused" {
						t.Errorf("status %v", st)
					}
					am.Finish(ctx, yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED, "expired as expected", "")
					return 0
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Error("the unused container never expired")
		return 1
	}
	id := sc.submit(1, 0)
	<-handedOut
	sc.rm.Core().Step(clock.Advance(300 * time.Millisecond))
	if n := sc.rm.Core().Metrics().ContainersExpired.Count(); n != 0 {
		t.Fatalf("expired at exactly the interval: %d", n)
	}
	sc.rm.Core().Step(clock.Advance(time.Millisecond))
	rep := sc.waitFinal(id, 10*time.Second)
	if rep.GetDiagnostics() != "expired as expected" {
		t.Fatalf("report %v", rep)
	}
	if sc.rm.Core().Metrics().ContainersExpired.Count() != 1 {
		t.Errorf("ContainersExpired = %d", sc.rm.Core().Metrics().ContainersExpired.Count())
	}
}

// Master keys roll on their schedule: the AM switches to the AMRMToken of the new key
// (AllocateResponse.am_rm_token), NMs get the new container and NM-token keys in
// heartbeats, and containers keep starting with tokens of either key.
func TestMasterKeysRoll(t *testing.T) {
	// Rolls every second must exceed three liveness intervals: 300 ms, which a loaded
	// machine's -race round of allocate and container starts stays within (200 ms did not).
	c := testConf("yarn.am.liveness-monitor.expiry-interval-ms", "300", "yarn.nm.liveness-monitor.expiry-interval-ms", "300",
		rmcore.KeyAMRMRoll, "1", rmcore.KeyContainerRoll, "1", rmcore.KeyNMRoll, "1")
	sc := newSimCluster(t, c, 1, nil)
	containerKey0, nmKey0 := sc.rm.Core().CurrentKeyIDs()
	var keyIDs []int32
	sc.am = func(ctx context.Context, l *nmsim.Launch, am *amclient.Client) int32 {
		am.Register(ctx, "h", 0, "")
		end := time.Now().Add(2600 * time.Millisecond)
		for i := int32(1); time.Now().Before(end); i++ {
			am.Request(20, "*", 1024, 1, 1)
			resp, err := am.Allocate(ctx, 0)
			if err != nil {
				t.Errorf("allocate: %v", err)
				return 1
			}
			for _, ctr := range resp.GetAllocatedContainers() {
				if err := startOn(ctx, am, l.ID.Attempt, ctr); err != nil {
					t.Errorf("start after a roll: %v", err)
					return 1
				}
			}
			if k := security.KeyIDOf(am.Token().Identifier); len(keyIDs) == 0 || keyIDs[len(keyIDs)-1] != k {
				keyIDs = append(keyIDs, k)
			}
			time.Sleep(30 * time.Millisecond)
		}
		am.Finish(ctx, yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED, "", "")
		return 0
	}
	rep := sc.waitFinal(sc.submit(1, 0), 15*time.Second)
	if rep.GetYarnApplicationState() != yarnpb.YarnApplicationStateProto_FINISHED {
		t.Fatalf("report %v", rep)
	}
	if len(keyIDs) < 3 {
		t.Fatalf("AMRMToken key ids seen %v: want at least two rolls", keyIDs)
	}
	if containerKey, nmKey := sc.rm.Core().CurrentKeyIDs(); containerKey == containerKey0 || nmKey == nmKey0 {
		t.Fatalf("container/NM keys did not roll: %d %d", containerKey, nmKey)
	}
}

func TestKeyRollingMustExceedThreeLivenessIntervals(t *testing.T) {
	_, err := New(Options{Conf: testConf(rmcore.KeyAMRMRoll, "60", "yarn.am.liveness-monitor.expiry-interval-ms", "600000"), Logger: testutil.QuietLogger()})
	if err == nil || !strings.Contains(err.Error(), rmcore.KeyAMRMRoll) || !strings.Contains(err.Error(), "should be more than 3 X yarn.am.liveness-monitor.expiry-interval-ms") {
		t.Fatalf("err = %v", err)
	}
}

// The include and exclude files decide which NodeManagers may register; refreshNodes
// re-reads them and decommissions the nodes no longer allowed, at once or gracefully.
func TestIncludeExcludeAndDecommission(t *testing.T) {
	dir := t.TempDir()
	exclude := filepath.Join(dir, "exclude")
	os.WriteFile(exclude, []byte("# retired\nnode-x\n"), 0o644)
	sc := newSimCluster(t, testConf("yarn.resourcemanager.nodes.exclude-path", exclude), 0, nil)
	start := func(host string) (*nmsim.NodeManager, error) {
		return nmsim.Start(nmsim.Options{TrackerAddr: sc.rm.TrackerAddr().String(), Host: host, Port: 45454, MemoryMB: 4096, VCores: 4,
			Heartbeat: 20 * time.Millisecond, Logger: testutil.QuietLogger()})
	}
	if _, err := start("node-x"); err == nil || !strings.Contains(err.Error(), "Disallowed NodeManager from  node-x") {
		t.Fatalf("excluded host registered: %v", err)
	}
	a, err := start("node-a")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop()
	b, err := start("node-b")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Stop()
	// node-a leaves gracefully while a container runs on it.
	cid := records.ContainerID{Attempt: records.ApplicationID{ClusterTimestamp: 1, ID: 1}.Attempt(1), ID: 2}
	a.Run(cid, 400*time.Millisecond, 1024, 1)
	os.WriteFile(exclude, []byte("node-a\nnode-b\n"), 0o644)
	if err := sc.rm.Core().RefreshNodes(true, 0); err != nil {
		t.Fatal(err)
	}
	states := func() map[string]yarnpb.NodeStateProto {
		out := map[string]yarnpb.NodeStateProto{}
		nodes, _ := sc.cl.GetClusterNodes(context.Background())
		for _, n := range nodes {
			out[n.GetNodeId().GetHost()] = n.GetNodeState()
		}
		return out
	}
	if s := states(); s["node-a"] != yarnpb.NodeStateProto_NS_DECOMMISSIONING {
		t.Fatalf("graceful: %v", s)
	}
	// Then an immediate refresh for node-b (2.7 clients only know this kind).
	var resp yarnpb.RefreshNodesResponseProto
	adm := rpc.NewClient(rpc.ClientOptions{Addr: sc.rm.AdminAddr().String(), Protocol: protocol.ResourceManagerAdministration, User: "admin", ConnectRetries: -1, Logger: testutil.QuietLogger()})
	defer adm.Close()
	if err := adm.Call(context.Background(), "refreshNodes", &yarnpb.RefreshNodesRequestProto{}, &resp); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 5*time.Second, "node-a and node-b not decommissioned and told so", func() bool {
		s := states()
		return s["node-a"] == yarnpb.NodeStateProto_NS_DECOMMISSIONED && s["node-b"] == yarnpb.NodeStateProto_NS_DECOMMISSIONED &&
			strings.Contains(a.Shutdown(), "Disallowed NodeManager") && strings.Contains(b.Shutdown(), "Disallowed NodeManager")
	})
	if m, _ := sc.cl.GetClusterMetrics(context.Background()); m.GetNumDecommissionedNms() != 2 || m.GetNumNodeManagers() != 0 {
		t.Fatalf("metrics %v", m)
	}
	// A missing hosts file is an error the caller sees; the old lists stay.
	os.Remove(exclude)
	re := remote(t, adm.Call(context.Background(), "refreshNodes", &yarnpb.RefreshNodesRequestProto{}, &resp))
	if re.Class != exceptions.YarnException || !strings.Contains(re.Message, "yarn.resourcemanager.nodes.exclude-path") {
		t.Fatalf("%+v", re)
	}
	if sc.rm.Core().HostsAllow("node-a", "node-a:45454") {
		t.Fatal("the old exclude list was dropped")
	}
}

// Node labels: administered over the admin protocol (when enabled), reported to clients in
// both the 2.x and 3.x fields, and used by the engine as partitions.
func TestNodeLabelAdministration(t *testing.T) {
	sc := newSimCluster(t, testConf("yarn.node-labels.enabled", "true"), 0, nil)
	nm := sc.addNode(nmsim.Options{MemoryMB: 4096, VCores: 4})
	adm := rpc.NewClient(rpc.ClientOptions{Addr: sc.rm.AdminAddr().String(), Protocol: protocol.ResourceManagerAdministration, User: "admin", ConnectRetries: -1, Logger: testutil.QuietLogger()})
	defer adm.Close()
	ctx := context.Background()
	// A 3.x client fills both fields with the same labels (AddToClusterNodeLabelsRequestPBImpl);
	// the NodeLabelProtos, with their exclusivity, are the ones read.
	if err := adm.Call(ctx, "addToClusterNodeLabels", &yarnpb.AddToClusterNodeLabelsRequestProto{DeprecatedNodeLabels: []string{"gpu", "ssd"},
		NodeLabels: []*yarnpb.NodeLabelProto{{Name: proto.String("gpu")}, {Name: proto.String("ssd"), IsExclusive: proto.Bool(false)}}}, &yarnpb.AddToClusterNodeLabelsResponseProto{}); err != nil {
		t.Fatal(err)
	}
	// A 2.x client: names only, exclusive; one that exists is no change.
	if err := adm.Call(ctx, "addToClusterNodeLabels", &yarnpb.AddToClusterNodeLabelsRequestProto{DeprecatedNodeLabels: []string{"gpu"}}, &yarnpb.AddToClusterNodeLabelsResponseProto{}); err != nil {
		t.Fatal(err)
	}
	re := remote(t, adm.Call(ctx, "addToClusterNodeLabels", &yarnpb.AddToClusterNodeLabelsRequestProto{DeprecatedNodeLabels: []string{"ssd"}}, &yarnpb.AddToClusterNodeLabelsResponseProto{}))
	if re.Class != exceptions.YarnException || !strings.Contains(re.Message, "Exclusivity cannot be modified for an existing label with : <ssd:exclusivity=true>") {
		t.Fatalf("%+v", re)
	}
	re = remote(t, adm.Call(ctx, "addToClusterNodeLabels", &yarnpb.AddToClusterNodeLabelsRequestProto{DeprecatedNodeLabels: []string{"-bad"}}, &yarnpb.AddToClusterNodeLabelsResponseProto{}))
	if re.Class != exceptions.YarnException || !strings.Contains(re.Message, "now it is=-bad") {
		t.Fatalf("%+v", re)
	}
	re = remote(t, adm.Call(ctx, "replaceLabelsOnNodes", &yarnpb.ReplaceLabelsOnNodeRequestProto{NodeToLabels: []*yarnpb.NodeIdToLabelsProto{
		{NodeId: nm.NodeID(), NodeLabels: []string{"tpu"}}}}, &yarnpb.ReplaceLabelsOnNodeResponseProto{}))
	if !strings.Contains(re.Message, "Not all labels being replaced contained by known label collections, please check, new labels=[tpu]") {
		t.Fatalf("%+v", re)
	}
	// A node the cluster does not know, with -failOnUnknownNodes: the Java RM's IOException.
	re = remote(t, adm.Call(ctx, "replaceLabelsOnNodes", &yarnpb.ReplaceLabelsOnNodeRequestProto{FailOnUnknownNodes: proto.Bool(true), NodeToLabels: []*yarnpb.NodeIdToLabelsProto{
		{NodeId: &yarnpb.NodeIdProto{Host: proto.String("elsewhere"), Port: proto.Int32(0)}, NodeLabels: []string{"gpu"}}}}, &yarnpb.ReplaceLabelsOnNodeResponseProto{}))
	if re.Class != rpc.ClassIOException || re.Message != "Failed to replace labels as there are unknown nodes:[elsewhere:0]" {
		t.Fatalf("%+v", re)
	}
	if err := adm.Call(ctx, "replaceLabelsOnNodes", &yarnpb.ReplaceLabelsOnNodeRequestProto{NodeToLabels: []*yarnpb.NodeIdToLabelsProto{
		{NodeId: nm.NodeID(), NodeLabels: []string{"gpu"}}}}, &yarnpb.ReplaceLabelsOnNodeResponseProto{}); err != nil {
		t.Fatal(err)
	}
	var cl yarnpb.GetClusterNodeLabelsResponseProto
	sc.cl.Call(ctx, "getClusterNodeLabels", &yarnpb.GetClusterNodeLabelsRequestProto{}, &cl)
	if strings.Join(cl.GetDeprecatedNodeLabels(), ",") != "gpu,ssd" || len(cl.GetNodeLabels()) != 2 ||
		!cl.GetNodeLabels()[0].GetIsExclusive() || cl.GetNodeLabels()[1].GetIsExclusive() {
		t.Fatalf("cluster labels %v", &cl)
	}
	var n2l yarnpb.GetNodesToLabelsResponseProto
	sc.cl.Call(ctx, "getNodeToLabels", &yarnpb.GetNodesToLabelsRequestProto{}, &n2l)
	if len(n2l.GetNodeToLabels()) != 1 || n2l.GetNodeToLabels()[0].GetNodeLabels()[0] != "gpu" {
		t.Fatalf("node to labels %v", &n2l)
	}
	var l2n yarnpb.GetLabelsToNodesResponseProto
	sc.cl.Call(ctx, "getLabelsToNodes", &yarnpb.GetLabelsToNodesRequestProto{NodeLabels: []string{"gpu"}}, &l2n)
	if len(l2n.GetLabelsToNodes()) != 1 || rmstate.NodeKey(l2n.GetLabelsToNodes()[0].GetNodeId()[0]) != nm.Key() {
		t.Fatalf("labels to nodes %v", &l2n)
	}
	nodes, _ := sc.cl.GetClusterNodes(ctx)
	if len(nodes) != 1 || strings.Join(nodes[0].GetNodeLabels(), ",") != "gpu" {
		t.Fatalf("node report %v", nodes)
	}
	// The labelled node left the default partition: an unlabelled app's AM cannot run.
	if total, _ := sc.rm.Core().Totals(); total[0] != 4096 {
		t.Fatalf("engine total %v", total)
	}
	if err := adm.Call(ctx, "removeFromClusterNodeLabels", &yarnpb.RemoveFromClusterNodeLabelsRequestProto{NodeLabels: []string{"gpu"}}, &yarnpb.RemoveFromClusterNodeLabelsResponseProto{}); err != nil {
		t.Fatal(err)
	}
	if nodes, _ := sc.cl.GetClusterNodes(ctx); len(nodes[0].GetNodeLabels()) != 0 {
		t.Fatalf("label kept after removal: %v", nodes[0])
	}
	// Disabled labels: the Java RM's refusal.
	off := newSimCluster(t, testConf(), 0, nil)
	adm2 := rpc.NewClient(rpc.ClientOptions{Addr: off.rm.AdminAddr().String(), Protocol: protocol.ResourceManagerAdministration, User: "admin", ConnectRetries: -1, Logger: testutil.QuietLogger()})
	defer adm2.Close()
	re = remote(t, adm2.Call(ctx, "addToClusterNodeLabels", &yarnpb.AddToClusterNodeLabelsRequestProto{DeprecatedNodeLabels: []string{"gpu"}}, &yarnpb.AddToClusterNodeLabelsResponseProto{}))
	if !strings.Contains(re.Message, "yarn.node-labels.enabled") {
		t.Fatalf("%+v", re)
	}
}

// A lost node takes the AM container with it; that attempt's end does not count (ABORTED)
// and the application gets a new attempt on the surviving node even with max-attempts 1.
func TestLostAMNodeDoesNotCountAsFailure(t *testing.T) {
	sc := newSimCluster(t, testConf("yarn.nm.liveness-monitor.expiry-interval-ms", "300"), 0, nil)
	first := sc.addNode(nmsim.Options{MemoryMB: 2048, VCores: 2})
	tasks := sc.runTasks(1)
	registered := make(chan struct{}, 1)
	sc.am = func(ctx context.Context, l *nmsim.Launch, am *amclient.Client) int32 {
		if l.ID.Attempt.Attempt == 1 {
			am.Register(ctx, "h", 0, "")
			registered <- struct{}{}
			<-ctx.Done()
			return 143
		}
		return tasks(ctx, l, am)
	}
	id := sc.submit(1, 0)
	<-registered
	sc.addNode(nmsim.Options{MemoryMB: 8192, VCores: 8})
	first.Stop() // the node dies silently
	rep := sc.waitFinal(id, 15*time.Second)
	if rep.GetYarnApplicationState() != yarnpb.YarnApplicationStateProto_FINISHED || len(sc.attempts(id)) != 2 {
		t.Fatalf("report %v attempts %d", rep, len(sc.attempts(id)))
	}
}

type appRecord = rmstate.App

// Live containers are reported to clients; an AM may only release its own containers;
// getApplications filters by name and time; updateNodeResource resizes a node.
func TestContainerReportsReleaseChecksAndNodeResource(t *testing.T) {
	sc := newSimCluster(t, testConf(), 1, nil)
	ctx := context.Background()
	id, allocate := unmanagedAM(t, sc.rm, sc.cl, func() *yarnpb.ApplicationIdProto {
		na, _ := sc.cl.GetNewApplication(ctx)
		return na.GetApplicationId()
	}, "default")
	app := records.AppIDFromProto(id)
	var got []*yarnpb.ContainerProto
	req := &yarnpb.AllocateRequestProto{Ask: []*yarnpb.ResourceRequestProto{gigs(2)}}
	testutil.Eventually(t, 5*time.Second, "two containers not allocated", func() bool {
		got = append(got, allocate(req).GetAllocatedContainers()...)
		req = &yarnpb.AllocateRequestProto{}
		return len(got) >= 2
	})
	if len(got) != 2 {
		t.Fatalf("allocated %d", len(got))
	}
	var cs yarnpb.GetContainersResponseProto
	if err := sc.cl.Call(ctx, "getContainers", &yarnpb.GetContainersRequestProto{ApplicationAttemptId: app.Attempt(1).Proto()}, &cs); err != nil {
		t.Fatal(err)
	}
	if len(cs.GetContainers()) != 2 || cs.GetContainers()[0].GetResource().GetMemory() != 1024 || cs.GetContainers()[0].GetPriority().GetPriority() != 20 {
		t.Fatalf("containers %v", &cs)
	}
	var cr yarnpb.GetContainerReportResponseProto
	if err := sc.cl.Call(ctx, "getContainerReport", &yarnpb.GetContainerReportRequestProto{ContainerId: got[0].GetId()}, &cr); err != nil ||
		!proto.Equal(cr.GetContainerReport().GetNodeId(), sc.nms[0].NodeID()) {
		t.Fatalf("report %v %v", &cr, err)
	}
	rep, _ := sc.cl.GetApplicationReport(ctx, id)
	if u := rep.GetAppResource_Usage(); u.GetNumUsedContainers() != 2 || u.GetUsedResources().GetMemory() != 2048 {
		t.Fatalf("usage %v", u)
	}
	// Releasing another application's container is refused.
	other := records.ContainerID{Attempt: records.ApplicationID{ClusterTimestamp: app.ClusterTimestamp, ID: app.ID + 7}.Attempt(1), ID: 2}
	var rid int32
	sc.rm.Core().ViewAttempt(app.Attempt(1), func(_ *rmstate.App, at *rmstate.Attempt) { rid = at.LastResponseID })
	err := amClient(t, sc.rm, token.FromProto(rep.GetAmRmToken())).Call(ctx, "allocate", &yarnpb.AllocateRequestProto{ResponseId: proto.Int32(rid),
		Release: []*yarnpb.ContainerIdProto{other.Proto()}}, &yarnpb.AllocateResponseProto{})
	if re := remote(t, err); re.Class != exceptions.InvalidContainerRelease || !strings.Contains(re.Message, other.String()) {
		t.Fatalf("release of a foreign container: %+v", re)
	}
	// Released containers leave the reports.
	allocate(&yarnpb.AllocateRequestProto{Release: []*yarnpb.ContainerIdProto{got[0].GetId()}})
	sc.cl.Call(ctx, "getContainers", &yarnpb.GetContainersRequestProto{ApplicationAttemptId: app.Attempt(1).Proto()}, &cs)
	if len(cs.GetContainers()) != 1 {
		t.Fatalf("after release: %v", &cs)
	}
	// Filters.
	apps, _ := sc.cl.GetApplications(ctx, &yarnpb.GetApplicationsRequestProto{Name: proto.String("nope")})
	if len(apps) != 0 {
		t.Fatalf("name filter: %d", len(apps))
	}
	apps, _ = sc.cl.GetApplications(ctx, &yarnpb.GetApplicationsRequestProto{StartBegin: proto.Int64(time.Now().Add(-time.Minute).UnixMilli()), StartEnd: proto.Int64(time.Now().UnixMilli())})
	if len(apps) != 1 {
		t.Fatalf("start range: %d", len(apps))
	}
	apps, _ = sc.cl.GetApplications(ctx, &yarnpb.GetApplicationsRequestProto{FinishBegin: proto.Int64(1)})
	if len(apps) != 0 {
		t.Fatalf("finish range matched a running app: %d", len(apps))
	}
	// updateNodeResource.
	adm := rpc.NewClient(rpc.ClientOptions{Addr: sc.rm.AdminAddr().String(), Protocol: protocol.ResourceManagerAdministration, User: "admin", ConnectRetries: -1, Logger: testutil.QuietLogger()})
	defer adm.Close()
	if err := adm.Call(ctx, "updateNodeResource", &yarnpb.UpdateNodeResourceRequestProto{NodeResourceMap: []*yarnpb.NodeResourceMapProto{{NodeId: sc.nms[0].NodeID(),
		ResourceOption: &yarnpb.ResourceOptionProto{Resource: &yarnpb.ResourceProto{Memory: proto.Int64(16384), VirtualCores: proto.Int32(16)}}}}},
		&yarnpb.UpdateNodeResourceResponseProto{}); err != nil {
		t.Fatal(err)
	}
	if total, used := sc.rm.Core().Totals(); total[0] != 16384 || used[0] != 1024 {
		t.Fatalf("engine %v %v", total, used)
	}
}

func TestWebEndpoints(t *testing.T) {
	sc := newSimCluster(t, testConf(), 1, nil)
	get := func(path string) map[string]any {
		resp, err := http.Get("http://" + sc.rm.WebAddr().String() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	m := get("/ws/v1/cluster/metrics")["clusterMetrics"].(map[string]any)
	if m["activeNodes"].(float64) != 1 || m["totalMB"].(float64) != 8192 {
		t.Fatalf("metrics %v", m)
	}
	if _, ok := get("/metrics?format=json")["rm.AppsSubmitted"]; !ok {
		t.Fatal("go-metrics JSON lacks rm.AppsSubmitted")
	}
	if get("/ws/v1/cluster/info")["clusterInfo"].(map[string]any)["state"] != "STARTED" {
		t.Fatal("cluster info")
	}
}

func TestPprofOnlyWhenEnabled(t *testing.T) {
	for _, enabled := range []bool{false, true} {
		sc := newSimCluster(t, testConf("bobbin.resourcemanager.webapp.pprof.enabled", strconv.FormatBool(enabled)), 1, nil)
		resp, err := http.Get("http://" + sc.rm.WebAddr().String() + "/debug/pprof/heap?debug=1")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := resp.StatusCode == http.StatusOK && strings.Contains(string(body), "heap profile"); got != enabled {
			t.Errorf("pprof enabled=%v: status %d, body %.80q", enabled, resp.StatusCode, body)
		}
	}
}
