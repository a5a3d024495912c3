package resourcemanager

import (
	"context"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/client/amclient"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
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
}
