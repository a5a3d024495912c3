package resourcemanager

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/client/amclient"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/statestore"
	"github.com/bobbin-yarn/bobbin/tools/nmsim"
)

// TestAMFinishingWhenItsNodeReturns is the kill matrix's failure (rm, commit phase, 3.1.1
// pi): the RM restarts (work-preserving) during the job's commit; the MapReduce AM
// re-registers with the restarted RM and unregisters at once, before its NodeManager has
// registered again. The AM container still runs — a MapReduce AM serves its client the
// job's last status for 5 s after unregistering — so when the node comes back reporting
// it, the application is FINISHING, not over: as in the Java RM (an application is not in
// a final state until its AM container exits), the container is taken back, not killed as
// an orphan, and the node is told the application ended only once the AM container exits.
func TestAMFinishingWhenItsNodeReturns(t *testing.T) {
	c := testConf(statestore.KeyRecovery, "true", statestore.KeyFSURI, "file://"+t.TempDir(),
		"yarn.resourcemanager.address", freeAddr(t), "yarn.resourcemanager.resource-tracker.address", freeAddr(t),
		"yarn.resourcemanager.scheduler.address", freeAddr(t))
	sc, restart := restartableSimCluster(t, c)
	registered := make(chan records.ContainerID, 1)
	rmBack := make(chan struct{})
	finished := make(chan error, 1)
	exit := make(chan struct{})
	sc.am = func(ctx context.Context, l *nmsim.Launch, am *amclient.Client) int32 {
		if _, err := am.Register(ctx, "mr-am", 0, ""); err != nil {
			finished <- fmt.Errorf("register: %w", err)
			return 1
		}
		registered <- l.ID
		<-rmBack
		// The first call on the restarted RM meets ApplicationMasterNotRegistered: the
		// client registers again, then unregisters.
		finished <- am.Finish(ctx, yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED, "", "")
		select { // the AM lingers after unregistering, as MapReduce's does
		case <-exit:
			return 0
		case <-ctx.Done():
			return 1
		}
	}
	// The node heartbeats only when the test says: it must come back after the AM unregistered.
	nm := sc.addNode(nmsim.Options{MemoryMB: 4096, VCores: 4, KeepOnResync: true, Heartbeat: time.Hour})
	app := records.AppIDFromProto(sc.submit(1, 0))
	var amID records.ContainerID
	testutil.Eventually(t, 20*time.Second, "the AM did not register", func() bool {
		select {
		case amID = <-registered:
			return true
		default:
			nm.HeartbeatNow()
			return false
		}
	})
	defer close(exit)
	restart(nil)
	close(rmBack)
	select {
	case err := <-finished:
		if err != nil {
			t.Fatalf("the AM's unregistration on the restarted RM: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the AM did not unregister")
	}
	nm.HeartbeatNow() // RESYNC: the node registers again, reporting the AM container
	for range 3 {
		nm.HeartbeatNow()
	}
	if st, _, ok := nm.ContainerState(amID); !ok || st != yarnpb.ContainerStateProto_C_RUNNING {
		t.Fatalf("AM container %s after its node came back: %v (held %v); want it left running until its AM exits", amID, st, ok)
	}
	if slices.Contains(nm.FinishedApps(), app) {
		t.Fatalf("node told %s ended while its AM container runs", app)
	}
	exit <- struct{}{}
	testutil.Eventually(t, 10*time.Second, "the node was never told the application ended", func() bool {
		nm.HeartbeatNow()
		return slices.Contains(nm.FinishedApps(), app)
	})
	rep := sc.waitFinal(app.Proto(), 10*time.Second)
	if rep.GetFinalApplicationStatus() != yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED {
		t.Fatalf("final status %v", rep.GetFinalApplicationStatus())
	}
	if st, code, _ := nm.ContainerState(amID); st != yarnpb.ContainerStateProto_C_COMPLETE || code != 0 {
		t.Fatalf("AM container %s ended %v exit %d; want its own exit 0, not a kill", amID, st, code)
	}
}
