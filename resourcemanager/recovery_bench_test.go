package resourcemanager

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/conf"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/internal/zktest"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/statestore"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/tools/nmsim"
)

// BenchmarkRestartToServing measures a work-preserving restart at scale: a store holding
// 10,000 running applications (each attempt launched) and the NodeManagers, an RM
// started on it (restart-to-serving: open, load, restore, admit every application to the
// engine, listen), then the NodeManagers registering with their running containers,
// until every container is rebuilt in the engine. Two sizes: 1,000 NodeManagers with 100
// containers each (100,000), and issue 50's 2,000 with 500 each (1,000,000). Run it once:
//
//	go test -run '^$' -bench RestartToServing -benchtime 1x ./resourcemanager/
//
// The store is FileSystemRMStateStore in the Java RM's layout on local disk (a restart) or,
// with ZooKeeper installed, ZKRMStateStore (what a standby reads when it becomes active: a
// failover's load).
func BenchmarkRestartToServing(b *testing.B) {
	for _, store := range []string{"fs", "zk"} {
		for _, size := range []struct{ apps, nodes, perApp int }{{10000, 1000, 10}, {10000, 2000, 100}} {
			b.Run(fmt.Sprintf("store=%s/apps=%d/containers=%d", store, size.apps, size.apps*size.perApp), func(b *testing.B) {
				benchRestart(b, store, size.apps, size.nodes, size.perApp)
			})
		}
	}
}

// benchStore is an empty store of the kind asked for and the configuration that opens it.
func benchStore(b *testing.B, kind string) (statestore.Store, *conf.Configuration) {
	if kind == "zk" {
		zks := zktest.Start(b)
		s, err := statestore.OpenJavaZK(zks.Addr, "/rmstore", 10*time.Second, "bench", 0, false, testutil.QuietLogger())
		if err != nil {
			b.Fatal(err)
		}
		return s, testConf(statestore.KeyRecovery, "true", statestore.KeyStoreClass, "org.apache.hadoop.yarn.server.resourcemanager.recovery.ZKRMStateStore",
			"hadoop.zk.address", zks.Addr)
	}
	dir := b.TempDir()
	s, err := statestore.OpenJavaFS(dir, dir)
	if err != nil {
		b.Fatal(err)
	}
	return s, testConf(statestore.KeyRecovery, "true", statestore.KeyFSURI, dir)
}

func benchRestart(b *testing.B, store string, apps, nodes, perApp int) {
	for range b.N {
		b.StopTimer()
		s, c := benchStore(b, store)
		const ts = 1795000000000
		st := &statestore.State{}
		for i := 1; i <= apps; i++ {
			id := records.ApplicationID{ClusterTimestamp: ts, ID: int32(i)}
			am := records.ContainerID{Attempt: id.Attempt(1), ID: 1}
			st.Apps = append(st.Apps, &statestore.AppRecord{ID: id.String(), Version: 3, User: "bench", Queue: "default", Name: "bench", Type: "YARN",
				MaxAttempts: 2, State: int32(yarnpb.YarnApplicationStateProto_RUNNING), SubmitTime: ts, StartTime: ts,
				Attempts: []statestore.AttemptRecord{{Attempt: 1, State: int32(yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_RUNNING), Registered: true,
					StartTime: ts, AMContainer: am.String()}}})
		}
		for n := range nodes {
			st.Nodes = append(st.Nodes, &statestore.NodeRecord{ID: fmt.Sprintf("127.0.0.1:%d", 30000+n)})
		}
		for i := 0; i < len(st.Apps); i += 500 {
			if err := s.PutApps(st.Apps[i:min(i+500, len(st.Apps))]); err != nil {
				b.Fatal(err)
			}
		}
		for _, n := range st.Nodes {
			if err := s.PutNode(n); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := s.NextEpoch(); err != nil { // the earlier run's epoch: its containers' ids are of it
			b.Fatal(err)
		}
		s.Close()
		b.StartTimer()
		start := time.Now()
		rm, err := New(Options{Conf: c, Logger: testutil.QuietLogger()})
		if err != nil {
			b.Fatal(err)
		}
		if err := rm.Start(); err != nil {
			b.Fatal(err)
		}
		serving := time.Since(start)
		// Each node's registration carries its containers: container k of application i
		// runs on node (i*perApp+k) % nodes.
		reqs := make([]*yarnpb.RegisterNodeManagerRequestProto, nodes)
		for n := range nodes {
			reqs[n] = &yarnpb.RegisterNodeManagerRequestProto{NodeId: &yarnpb.NodeIdProto{Host: proto.String("127.0.0.1"), Port: proto.Int32(int32(30000 + n))},
				HttpPort: proto.Int32(8042), Resource: &yarnpb.ResourceProto{Memory: proto.Int64(int64(perApp*apps/nodes+1) << 10), VirtualCores: proto.Int32(int32(perApp*apps/nodes + 1))},
				NmVersion: proto.String("2.7.3")}
		}
		for i := 1; i <= apps; i++ {
			att := records.ApplicationID{ClusterTimestamp: ts, ID: int32(i)}.Attempt(1)
			for k := range perApp {
				n := (i*perApp + k) % nodes
				reqs[n].ContainerStatuses = append(reqs[n].ContainerStatuses, &yarnpb.NMContainerStatusProto{
					ContainerId: records.ContainerID{Attempt: att, ID: int64(k + 1)}.Proto(), ContainerState: yarnpb.ContainerStateProto_C_RUNNING.Enum(),
					Resource: &yarnpb.ResourceProto{Memory: proto.Int64(1024), VirtualCores: proto.Int32(1)}, Priority: &yarnpb.PriorityProto{Priority: proto.Int32(20)},
					CreationTime: proto.Int64(ts)})
			}
		}
		// Encoded before the clock: the NodeManagers' work, on their own machines.
		encoded := make([]*rpc.Encoded, nodes)
		for n, req := range reqs {
			bs, err := proto.Marshal(req)
			if err != nil {
				b.Fatal(err)
			}
			encoded[n] = &rpc.Encoded{Bytes: bs}
		}
		reqs = nil
		registered := time.Now()
		var wg sync.WaitGroup
		const conns = 8
		for w := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cl := nmsim.TrackerClient(rm.TrackerAddr().String(), testutil.QuietLogger())
				defer cl.Close()
				for n := w; n < nodes; n += conns {
					var resp yarnpb.RegisterNodeManagerResponseProto
					if err := cl.Call(context.Background(), "registerNodeManager", encoded[n], &resp); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		rebuilt := time.Since(registered)
		b.StopTimer()
		if _, used := rm.Core().Totals(); used[0] != int64(apps*perApp*1024) {
			b.Fatalf("engine books %d MB after the registrations, want %d", used[0], apps*perApp*1024)
		}
		b.ReportMetric(float64(serving.Milliseconds()), "restart-to-serving-ms")
		b.ReportMetric(float64(rebuilt.Milliseconds()), "containers-rebuilt-ms")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		rm.Shutdown(ctx)
		cancel()
	}
}
