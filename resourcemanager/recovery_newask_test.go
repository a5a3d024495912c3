package resourcemanager

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/client/amclient"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/statestore"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/tools/nmsim"
	"github.com/bobbin-yarn/bobbin/yarn/protocol"
)

// stopOn stops a container through its NodeManager, as an AM does when a task is done.
func stopOn(ctx context.Context, am *amclient.Client, att records.AttemptID, c *yarnpb.ContainerProto) error {
	node := fmt.Sprintf("%s:%d", c.GetNodeId().GetHost(), c.GetNodeId().GetPort())
	nm := rpc.NewClient(rpc.ClientOptions{Addr: node, Protocol: protocol.ContainerManagement, User: att.String(), Token: am.NMToken(node), ConnectRetries: -1, Logger: testutil.QuietLogger()})
	defer nm.Close()
	return nm.Call(ctx, "stopContainers", &yarnpb.StopContainersRequestProto{ContainerId: []*yarnpb.ContainerIdProto{c.GetId()}}, &yarnpb.StopContainersResponseProto{})
}

// MapReduce across a work-preserving restart, as TestHAFailoverDuringPi saw it with the
// Apache NM: the maps (host-local asks, priority 20) finish and are stopped by the AM
// while the RM is down; after the restart the NM re-registers with them completed, the AM
// re-registers and re-sends its table — the map asks at 0 and the reduce ask (priority
// 10, any host) — and the reduce must be allocated.
func TestNewAskAfterWorkPreservingRestart(t *testing.T) {
	c := testConf(statestore.KeyRecovery, "true", statestore.KeyFSURI, "file://"+t.TempDir(),
		"yarn.resourcemanager.address", freeAddr(t), "yarn.resourcemanager.resource-tracker.address", freeAddr(t),
		"yarn.resourcemanager.scheduler.address", freeAddr(t))
	sc, restart := restartableSimCluster(t, c)
	mapsRunning := make(chan struct{})
	rmDown := make(chan struct{})
	mapsStopped := make(chan struct{})
	reduce := make(chan *yarnpb.ContainerProto, 1)
	var host string
	sc.am = func(ctx context.Context, l *nmsim.Launch, am *amclient.Client) int32 {
		if _, err := am.Register(ctx, "mr-am", 0, ""); err != nil {
			t.Errorf("register: %v", err)
			return 1
		}
		am.Request(20, host, 256, 1, 2)
		am.Request(20, "/default-rack", 256, 1, 2)
		am.Request(20, "*", 256, 1, 2)
		var maps []*yarnpb.ContainerProto
		for len(maps) < 2 {
			resp, err := am.Allocate(ctx, 0.1)
			if err != nil {
				t.Errorf("allocate: %v", err)
				return 1
			}
			maps = append(maps, resp.GetAllocatedContainers()...)
			time.Sleep(10 * time.Millisecond)
		}
		for _, m := range maps {
			if err := startCommand(ctx, am, l.ID.Attempt, m, "run-until-stopped"); err != nil {
				t.Errorf("start: %v", err)
				return 1
			}
		}
		close(mapsRunning)
		<-rmDown
		for _, m := range maps { // the maps are done while the RM is away
			if err := stopOn(ctx, am, l.ID.Attempt, m); err != nil {
				t.Errorf("stop: %v", err)
			}
		}
		close(mapsStopped)
		// The MR AM's table after the maps: map asks at 0, one reduce anywhere.
		am.Request(20, host, 256, 1, 0)
		am.Request(20, "/default-rack", 256, 1, 0)
		am.Request(20, "*", 256, 1, 0)
		am.Request(10, "*", 256, 1, 1)
		var got []*yarnpb.ContainerProto
		if !testutil.Poll(20*time.Second, func() bool {
			resp, err := am.Allocate(ctx, 0.5) // an error: the RM is not back yet
			got = resp.GetAllocatedContainers()
			return err == nil && len(got) > 0
		}) {
			close(reduce)
			return 1
		}
		reduce <- got[0]
		am.Finish(ctx, yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED, "", "")
		return 0
	}
	nm := sc.addNode(nmsim.Options{MemoryMB: 4096, VCores: 4, KeepOnResync: true})
	host = nm.NodeID().GetHost()
	sc.submit(1, 0)
	select {
	case <-mapsRunning:
	case <-time.After(20 * time.Second):
		t.Fatal("the maps did not start")
	}
	restart(func() {
		close(rmDown)
		select { // the maps end while no RM runs
		case <-mapsStopped:
		case <-time.After(20 * time.Second):
			t.Error("the AM did not stop its maps")
		}
	})
	select {
	case r, ok := <-reduce:
		if !ok {
			t.Fatal("the reduce was never allocated after the restart")
		}
		t.Logf("reduce %s", records.ContainerIDFromProto(r.GetId()))
	case <-time.After(30 * time.Second):
		t.Fatal("no answer from the AM")
	}
}
