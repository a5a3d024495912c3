package resourcemanager

import (
	"context"
	"strings"
	"testing"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmcore"
)

// With bobbin.resourcemanager.application-queue-names=path an application's queue is
// named by its path, as Hadoop 3.3+'s Capacity Scheduler names it, in reports, the
// application list, REST and the AM's registration; leaf (the default) keeps 2.x-3.2's
// leaf name; another value refuses start, naming the key.
func TestReportedQueueNames(t *testing.T) {
	for _, tc := range []struct{ value, want string }{{"leaf", "default"}, {"path", "root.default"}} {
		t.Run(tc.value, func(t *testing.T) {
			rm, cl := startRM(t, testConf(rmcore.KeyQueueNames, tc.value))
			am, _ := unregisteredAM(t, rm, cl)
			ctx := context.Background()
			var reg yarnpb.RegisterApplicationMasterResponseProto
			if err := am.Call(ctx, "registerApplicationMaster", &yarnpb.RegisterApplicationMasterRequestProto{}, &reg); err != nil {
				t.Fatal(err)
			}
			list, err := cl.GetApplications(ctx, &yarnpb.GetApplicationsRequestProto{})
			if err != nil || len(list) != 1 {
				t.Fatalf("applications %v, %v", list, err)
			}
			rep, err := cl.GetApplicationReport(ctx, list[0].GetApplicationId())
			if err != nil {
				t.Fatal(err)
			}
			_, v, raw := restCall(t, rm, "GET", "/ws/v1/cluster/apps", "", "")
			restQueue := v["apps"].(map[string]any)["app"].([]any)[0].(map[string]any)["queue"]
			if reg.GetQueue() != tc.want || list[0].GetQueue() != tc.want || rep.GetQueue() != tc.want || restQueue != tc.want {
				t.Fatalf("queue named %q (registration), %q (list), %q (report), %v (REST %s); want %q", reg.GetQueue(), list[0].GetQueue(), rep.GetQueue(), restQueue, raw, tc.want)
			}
		})
	}
	if _, err := rmcore.ReadSettings(testConf(rmcore.KeyQueueNames, "full")); err == nil || !strings.Contains(err.Error(), rmcore.KeyQueueNames) {
		t.Fatalf("value full: %v, want a refusal naming %s", err, rmcore.KeyQueueNames)
	}
}
