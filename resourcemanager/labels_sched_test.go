package resourcemanager

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/client/amclient"
	"github.com/bobbin-yarn/bobbin/client/rmclient"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/tools/nmsim"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
	"github.com/bobbin-yarn/bobbin/yarn/protocol"
)

// labelledSimCluster: node labels on, the default queue may use "lab" (all of it) and
// "ghost", which no administrator added, etl neither; two nodes, the first labelled lab at
// runtime (rmadmin's calls).
func labelledSimCluster(t *testing.T) (*simCluster, *nmsim.NodeManager, *nmsim.NodeManager) {
	sc := newSimCluster(t, testConf("yarn.node-labels.enabled", "true",
		"yarn.scheduler.capacity.root.accessible-node-labels", "*",
		"yarn.scheduler.capacity.root.accessible-node-labels.lab.capacity", "100",
		"yarn.scheduler.capacity.root.default.accessible-node-labels", "lab,ghost",
		"yarn.scheduler.capacity.root.default.accessible-node-labels.lab.capacity", "100",
		"yarn.scheduler.capacity.root.etl.accessible-node-labels", " "), 0, nil)
	lab := sc.addNode(nmsim.Options{MemoryMB: 8192, VCores: 8})
	plain := sc.addNode(nmsim.Options{MemoryMB: 8192, VCores: 8})
	adm := rpc.NewClient(rpc.ClientOptions{Addr: sc.rm.AdminAddr().String(), Protocol: protocol.ResourceManagerAdministration, User: "admin", ConnectRetries: -1, Logger: testutil.QuietLogger()})
	defer adm.Close()
	ctx := context.Background()
	if err := adm.Call(ctx, "addToClusterNodeLabels", &yarnpb.AddToClusterNodeLabelsRequestProto{DeprecatedNodeLabels: []string{"lab"},
		NodeLabels: []*yarnpb.NodeLabelProto{{Name: proto.String("lab"), IsExclusive: proto.Bool(true)}}}, &yarnpb.AddToClusterNodeLabelsResponseProto{}); err != nil {
		t.Fatal(err)
	}
	if err := adm.Call(ctx, "replaceLabelsOnNodes", &yarnpb.ReplaceLabelsOnNodeRequestProto{NodeToLabels: []*yarnpb.NodeIdToLabelsProto{
		{NodeId: lab.NodeID(), NodeLabels: []string{"lab"}}}}, &yarnpb.ReplaceLabelsOnNodeResponseProto{}); err != nil {
		t.Fatal(err)
	}
	return sc, lab, plain
}

// submitLabelled submits a managed application to queue with the submission's node-label
// expression (nil: none).
func (sc *simCluster) submitLabelled(queue string, label *string) (*yarnpb.ApplicationIdProto, error) {
	ctx := context.Background()
	na, err := sc.cl.GetNewApplication(ctx)
	if err != nil {
		sc.t.Fatal(err)
	}
	return na.GetApplicationId(), sc.cl.Call(ctx, "submitApplication", &yarnpb.SubmitApplicationRequestProto{ApplicationSubmissionContext: &yarnpb.ApplicationSubmissionContextProto{
		ApplicationId: na.GetApplicationId(), ApplicationName: proto.String("labelled"), Queue: proto.String(queue),
		AmContainerSpec: &yarnpb.ContainerLaunchContextProto{Command: []string{"go-am"}}, NodeLabelExpression: label,
		Resource: &yarnpb.ResourceProto{Memory: proto.Int64(1024), VirtualCores: proto.Int32(1)}}}, &yarnpb.SubmitApplicationResponseProto{})
}

// TestLabelledApplicationRunsOnItsPartition: an application submitted with a node-label
// expression gets its AM and every container on the labelled node, its asks (which name
// no label) inheriting the submission's, as in the Java RM; before, the AM's request
// carried no label and the application stayed ACCEPTED for ever. Requests the cluster
// cannot serve are refused with the Java RM's InvalidLabelResourceRequestException.
func TestLabelledApplicationRunsOnItsPartition(t *testing.T) {
	sc, lab, _ := labelledSimCluster(t)
	var mu sync.Mutex
	nodes := map[string]int{}
	var askErr error
	sc.am = func(ctx context.Context, l *nmsim.Launch, am *amclient.Client) int32 {
		mu.Lock()
		nodes[l.Identifier.GetNmHostAddr()]++
		mu.Unlock()
		if _, err := am.Register(ctx, "go-am-host", 0, ""); err != nil {
			return 1
		}
		am.Request(1, "*", 1024, 1, 3)
		for got := 0; got < 3; {
			resp, err := am.Allocate(ctx, 0)
			if err != nil {
				return 1
			}
			for _, c := range resp.GetAllocatedContainers() {
				mu.Lock()
				nodes[fmt.Sprintf("%s:%d", c.GetNodeId().GetHost(), c.GetNodeId().GetPort())]++
				mu.Unlock()
				got++
			}
			time.Sleep(10 * time.Millisecond)
		}
		// A host request with a label is refused (the label goes on the ANY request).
		am.RequestLabelled(2, lab.NodeID().GetHost(), 1024, 1, 1, proto.String("lab"))
		_, askErr = am.Allocate(ctx, 0)
		if err := am.Finish(ctx, yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED, "", ""); err != nil && ctx.Err() == nil {
			return 1
		}
		return 0
	}
	id, err := sc.submitLabelled("default", proto.String("lab"))
	if err != nil {
		t.Fatal(err)
	}
	if rep := sc.waitFinal(id, 20*time.Second); rep.GetFinalApplicationStatus() != yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED {
		t.Fatalf("labelled application ended %v", rep)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(nodes) != 1 || nodes[lab.Key()] != 4 {
		t.Fatalf("AM and containers by node %v, want all 4 on the lab node %s", nodes, lab.Key())
	}
	// The scheduler page has the queue's lab partition.
	_, _, raw := restCall(t, sc.rm, "GET", "/ws/v1/cluster/scheduler", "", "")
	if !regexp.MustCompile(`"partitionName":"lab","capacity":100,"usedCapacity":[0-9.]+,"maxCapacity":100,"absoluteCapacity":100,`).MatchString(raw) {
		t.Errorf("no lab partition in the scheduler page:\n%.2000s", raw)
	}
	if re := remote(t, askErr); re.Class != exceptions.InvalidLabelResourceRequest ||
		!strings.Contains(re.Message, "specified node label expression in a resource request has resource name = "+lab.NodeID().GetHost()) {
		t.Fatalf("a labelled host request: %+v", re)
	}

	for _, c := range []struct {
		queue, label, class, msg string
	}{
		// A label the queue names but the cluster lacks (a queue's labels are not the cluster's).
		{"default", "ghost", exceptions.InvalidLabelResourceRequest, "Invalid label resource request, cluster do not contain , label= ghost"},
		{"default", "nosuch", exceptions.InvalidLabelResourceRequest, "queue=default doesn't have permission to access all labels in resource request. labelExpression of resource request=nosuch. Queue labels=lab,ghost"},
		{"etl", "lab", exceptions.InvalidLabelResourceRequest, "Invalid resource request, queue=etl doesn't have permission to access all labels in resource request. labelExpression of resource request=lab. Queue labels="},
		{"default", "lab&&x", exceptions.InvalidLabelResourceRequest, "specified more than one node label in a node label expression, node label expression = lab&&x"},
	} {
		_, err := sc.submitLabelled(c.queue, proto.String(c.label))
		if re := remote(t, err); re.Class != c.class || !strings.Contains(re.Message, c.msg) {
			t.Errorf("submission to %s with label %q: %+v, want %s %q", c.queue, c.label, re, c.class, c.msg)
		}
	}
}

// TestNodeLabelsLiveInTheJavaStore: with node labels enabled and no RM recovery, the
// labels live in the Java RM's node-label store (yarn.node-labels.fs-store.root-dir):
// those a Java 3.1.1 RM stored there are the cluster's when Bobbin's starts, with their
// exclusivity and nodes, and one added afterwards is there after a restart.
func TestNodeLabelsLiveInTheJavaStore(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"nodelabel.mirror", "nodelabel.editlog"} {
		b, err := os.ReadFile(filepath.Join("labelstore", "testdata", "java-3.1.1", n))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, n), b, 0o644)
	}
	c := testConf("yarn.node-labels.enabled", "true", "yarn.node-labels.fs-store.root-dir", "file://"+dir)
	ctx := context.Background()
	labels := func(cl interface {
		Call(context.Context, string, proto.Message, proto.Message) error
	}) string {
		var resp yarnpb.GetClusterNodeLabelsResponseProto
		if err := cl.Call(ctx, "getClusterNodeLabels", &yarnpb.GetClusterNodeLabelsRequestProto{}, &resp); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, l := range resp.GetNodeLabels() {
			out = append(out, fmt.Sprintf("%s:%v", l.GetName(), l.GetIsExclusive()))
		}
		var n2l yarnpb.GetNodesToLabelsResponseProto
		if err := cl.Call(ctx, "getNodeToLabels", &yarnpb.GetNodesToLabelsRequestProto{}, &n2l); err != nil {
			t.Fatal(err)
		}
		var nodes []string
		for _, e := range n2l.GetNodeToLabels() {
			nodes = append(nodes, fmt.Sprintf("%s:%d=%s", e.GetNodeId().GetHost(), e.GetNodeId().GetPort(), strings.Join(e.GetNodeLabels(), ",")))
		}
		sort.Strings(nodes)
		return strings.Join(out, " ") + " | " + strings.Join(nodes, " ")
	}
	rm1 := startRestartableRM(t, c)
	cl1 := rmclient.New(rm1.ClientAddr().String(), "alice", rpc.ClientOptions{ConnectRetries: -1, Logger: testutil.QuietLogger()})
	if got, want := labels(cl1), "gpu:true shared:false | hostb:0=shared localhost:8041=gpu"; got != want {
		t.Fatalf("labels from the Java store: %q, want %q", got, want)
	}
	adm := rpc.NewClient(rpc.ClientOptions{Addr: rm1.AdminAddr().String(), Protocol: protocol.ResourceManagerAdministration, User: "admin", ConnectRetries: -1, Logger: testutil.QuietLogger()})
	if err := adm.Call(ctx, "addToClusterNodeLabels", &yarnpb.AddToClusterNodeLabelsRequestProto{DeprecatedNodeLabels: []string{"ssd"},
		NodeLabels: []*yarnpb.NodeLabelProto{{Name: proto.String("ssd"), IsExclusive: proto.Bool(false)}}}, &yarnpb.AddToClusterNodeLabelsResponseProto{}); err != nil {
		t.Fatal(err)
	}
	adm.Close()
	cl1.Close()
	stopRM(t, rm1)
	_, cl2 := startRMWithClock(t, c, time.Now)
	if got, want := labels(cl2), "gpu:true shared:false ssd:false | hostb:0=shared localhost:8041=gpu"; got != want {
		t.Fatalf("labels after a restart without recovery: %q, want %q", got, want)
	}
}
