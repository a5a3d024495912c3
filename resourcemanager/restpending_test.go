package resourcemanager

import (
	"context"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/client/amclient"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/rpc/token"
)

// The scheduler REST view's pending resources are what the outstanding asks ask for, in
// the leaf and summed up the tree (they were always 0).
func TestSchedulerRESTPendingResources(t *testing.T) {
	rm, cl := startRM(t, testConf())
	ctx := context.Background()
	na, err := cl.GetNewApplication(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.Call(ctx, "submitApplication", &yarnpb.SubmitApplicationRequestProto{ApplicationSubmissionContext: &yarnpb.ApplicationSubmissionContextProto{
		ApplicationId: na.GetApplicationId(), Queue: proto.String("default"), UnmanagedAm: proto.Bool(true)}}, &yarnpb.SubmitApplicationResponseProto{}); err != nil {
		t.Fatal(err)
	}
	rep, _ := cl.GetApplicationReport(ctx, na.GetApplicationId())
	am := amclient.New(amclient.Options{Addr: rm.SchedulerAddr().String(), Token: token.FromProto(rep.GetAmRmToken()), ConnectRetries: -1, Logger: testutil.QuietLogger()})
	defer am.Close()
	if _, err := am.Register(ctx, "h", 0, ""); err != nil {
		t.Fatal(err)
	}
	am.Request(10, "*", 1024, 1, 2) // no node: they stay outstanding
	if _, err := am.Allocate(ctx, 0); err != nil {
		t.Fatal(err)
	}
	pendingOf := func(q map[string]any) float64 {
		parts := q["resources"].(map[string]any)["resourceUsagesByPartition"].([]any)
		return parts[0].(map[string]any)["pending"].(map[string]any)["memory"].(float64)
	}
	testutil.Eventually(t, 5*time.Second, "pending resources in the scheduler view", func() bool {
		_, v, _ := restCall(t, rm, "GET", "/ws/v1/cluster/scheduler", "", "")
		si := v["scheduler"].(map[string]any)["schedulerInfo"].(map[string]any)
		for _, q := range si["queues"].(map[string]any)["queue"].([]any) {
			if q := q.(map[string]any); q["queueName"] == "default" {
				return pendingOf(q) == 2048 && q["pendingContainers"] == 2.0
			}
		}
		return false
	})
	// The application's own view: what it waits for (ResourceRequestInfo), and its
	// pending resources.
	app := "/ws/v1/cluster/apps/" + records.AppIDFromProto(na.GetApplicationId()).String()
	_, v, raw := restCall(t, rm, "GET", app, "", "")
	ai := v["app"].(map[string]any)
	reqs, _ := ai["resourceRequests"].([]any)
	if len(reqs) != 1 {
		t.Fatalf("resourceRequests: %s", raw)
	}
	r := reqs[0].(map[string]any)
	if r["priority"] != 10.0 || r["resourceName"] != "*" || r["numContainers"] != 2.0 || r["relaxLocality"] != true ||
		r["capability"].(map[string]any)["memory"] != 1024.0 || r["executionTypeRequest"].(map[string]any)["executionType"] != "GUARANTEED" {
		t.Errorf("the outstanding ask: %v", r)
	}
	if p := ai["resourceInfo"].(map[string]any)["resourceUsagesByPartition"].([]any)[0].(map[string]any)["pending"].(map[string]any)["memory"]; p != 2048.0 {
		t.Errorf("the application's pending memory: %v, want 2048", p)
	}
	// Satisfied asks leave the list empty, not absent, while the application runs.
	am.Request(10, "*", 1024, 1, 0)
	if _, err := am.Allocate(ctx, 0); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 5*time.Second, "an empty resourceRequests", func() bool {
		_, v, _ := restCall(t, rm, "GET", app, "", "")
		reqs, ok := v["app"].(map[string]any)["resourceRequests"].([]any)
		return ok && len(reqs) == 0
	})
}
