package resourcemanager

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/client/amclient"
	"github.com/bobbin-yarn/bobbin/client/rmclient"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/statestore"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/tools/nmsim"
)

// An RM restarted on its state store lists every application with its state; an
// application that was waiting for its AM gets a new attempt (the first failed by the
// restart, not counted), and the new run's containers carry the next epoch.
func TestRestartRecoversApplications(t *testing.T) {
	dir := t.TempDir()
	c := testConf(statestore.KeyRecovery, "true", statestore.KeyFSURI, "file://"+dir, statestore.KeyWorkPreserving, "false")
	ctx := context.Background()
	rm1, err := New(Options{Conf: c, Logger: testutil.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := rm1.Start(); err != nil {
		t.Fatal(err)
	}
	cl1 := rmclient.New(rm1.ClientAddr().String(), "alice", rpc.ClientOptions{ConnectRetries: -1, Logger: testutil.QuietLogger()})
	sc1 := &simCluster{t: t, rm: rm1, cl: cl1}
	waiting := sc1.submit(1, 0) // no NodeManager: it waits for its AM container
	killed := sc1.submit(1, 0)
	if err := cl1.Call(ctx, "forceKillApplication", &yarnpb.KillApplicationRequestProto{ApplicationId: killed}, &yarnpb.KillApplicationResponseProto{}); err != nil {
		t.Fatal(err)
	}
	cl1.Close()
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := rm1.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}

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
	if len(atts) != 2 || atts[0].GetYarnApplicationAttemptState() != yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FAILED ||
		!strings.Contains(atts[0].GetDiagnostics(), "ResourceManager restarted") {
		t.Fatalf("attempts %v", atts)
	}
	am := records.ContainerIDFromProto(atts[1].GetAmContainerId())
	if !strings.HasPrefix(am.String(), "container_e01_") {
		t.Fatalf("AM container after the restart %s, want epoch 1", am)
	}
	list, err := cl2.GetApplications(ctx, &yarnpb.GetApplicationsRequestProto{})
	if err != nil || len(list) != 2 {
		t.Fatalf("applications after the restart: %d, %v", len(list), err)
	}
}
