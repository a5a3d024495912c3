package resourcemanager

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/client/amclient"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/resourcemanager/statestore"
	"github.com/bobbin-yarn/bobbin/tools/nmsim"
)

// TestNMTokenAfterRestartBeforeFirstContainer is issue 44's failure: the RM restarts
// (work-preserving) after the AM registered and before it had any container. The AM holds
// no NMToken — its own container was started by the RM — yet the restarted RM, rebuilding
// the AM container from the NodeManager's report, took the attempt for one that held a
// token for that node, and the AM's first container there came without an NMToken
// ("No NMToken sent for host:port" in the MapReduce AM, every map failing). As in the Java
// RM (NMTokenSecretManagerInRM keeps the set in memory only), a restarted RM sends a token
// with the first container on each node.
func TestNMTokenAfterRestartBeforeFirstContainer(t *testing.T) {
	c := testConf(statestore.KeyRecovery, "true", statestore.KeyFSURI, "file://"+t.TempDir(),
		"yarn.resourcemanager.address", freeAddr(t), "yarn.resourcemanager.resource-tracker.address", freeAddr(t),
		"yarn.resourcemanager.scheduler.address", freeAddr(t))
	sc, restart := restartableSimCluster(t, c)
	registered := make(chan struct{})
	rmBack := make(chan struct{})
	result := make(chan error, 1)
	sc.am = func(ctx context.Context, l *nmsim.Launch, am *amclient.Client) int32 {
		if _, err := am.Register(ctx, "mr-am", 0, ""); err != nil {
			result <- fmt.Errorf("register: %w", err)
			return 1
		}
		close(registered)
		<-rmBack
		am.Request(20, "*", 256, 1, 1)
		var got []*yarnpb.ContainerProto
		if !testutil.Poll(20*time.Second, func() bool {
			resp, err := am.Allocate(ctx, 0.1) // an error: re-registering with the restarted RM
			got = resp.GetAllocatedContainers()
			return err == nil && len(got) > 0
		}) {
			result <- fmt.Errorf("no container after the restart")
			return 1
		}
		err := startOn(ctx, am, l.ID.Attempt, got[0])
		result <- err
		if err != nil {
			return 1
		}
		am.Finish(ctx, yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED, "", "")
		return 0
	}
	sc.addNode(nmsim.Options{MemoryMB: 4096, VCores: 4, KeepOnResync: true})
	sc.submit(1, 0)
	select {
	case <-registered:
	case <-time.After(20 * time.Second):
		t.Fatal("the AM did not register")
	}
	restart(nil)
	close(rmBack)
	select {
	case err := <-result:
		if err != nil {
			t.Fatalf("the first container after the restart: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no answer from the AM")
	}
}
