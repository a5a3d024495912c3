package integration

import (
	"github.com/bobbin-yarn/bobbin/internal/testutil"

	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestFairSchedulerRESTLikeApache runs the same fair-scheduler.xml on Apache 3.1.1's RM
// and on Bobbin's, submits the same applications, and expects /ws/v1/cluster/scheduler to
// give the same Fair Scheduler view: the same keys in every queue object, the same queues
// by path, policies, maxApps and application counts (issue 22).
func TestFairSchedulerRESTLikeApache(t *testing.T) {
	t.Parallel()
	views := map[string]map[string]string{}
	var kinds []rmKind
	for _, k := range comparedRMs(t) {
		if k.name != "apache-"+hadoop2 { // 2.7.3's view is broken below the first level (YARN-2336)
			kinds = append(kinds, k)
		}
	}
	if len(kinds) < 2 {
		t.Skip("no Hadoop 3.1.1 to compare with (HADOOP3_HOME); see README.md")
	}
	for _, k := range kinds {
		site := loopbackRMSite(t)
		site["yarn.resourcemanager.scheduler.class"] = "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler"
		dir := t.TempDir()
		writeConf(t, dir, site)
		if err := os.WriteFile(filepath.Join(dir, "fair-scheduler.xml"), []byte(`<allocations>
  <defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>
  <queue name="etl" type="parent"><weight>2</weight><schedulingPolicy>fair</schedulingPolicy>
    <queue name="daily"><maxRunningApps>3</maxRunningApps><schedulingPolicy>fifo</schedulingPolicy></queue>
    <queue name="hourly"><schedulingPolicy>fair</schedulingPolicy></queue>
  </queue>
  <queue name="adhoc"><weight>1</weight></queue>
  <queuePlacementPolicy><rule name="specified" create="false"/><rule name="reject"/></queuePlacementPolicy>
</allocations>`), 0o644); err != nil {
			t.Fatal(err)
		}
		k.start(t, dir, site)
		for _, q := range []string{"root.etl.daily", "root.etl.daily", "root.adhoc"} {
			submitTo(t, site, "alice", q)
		}
		views[k.name] = fairView(t, "http://"+site["yarn.resourcemanager.webapp.address"]+"/ws/v1/cluster/scheduler")
	}
	bobbin, apache := views["bobbin"], views["apache-"+hadoop3]
	for _, q := range []string{"root", "root.etl", "root.etl.daily", "root.etl.hourly", "root.adhoc", "root.default"} {
		if apache[q+" keys"] == "" {
			t.Fatalf("Apache's view has no queue %s: %v", q, apache)
		}
	}
	t.Logf("%d figures compared; root.etl.daily: keys %s, policy %s, maxApps %s, applications %s", len(apache), apache["root.etl.daily keys"],
		apache["root.etl.daily schedulingPolicy"], apache["root.etl.daily maxApps"], apache["root.etl.daily apps"])
	var diffs []string
	for _, key := range slices.Sorted(func(yield func(string) bool) {
		for k := range apache {
			if !yield(k) {
				return
			}
		}
		for k := range bobbin {
			if _, ok := apache[k]; !ok && !yield(k) {
				return
			}
		}
	}) {
		if apache[key] != bobbin[key] {
			diffs = append(diffs, fmt.Sprintf("%s: Apache %q, Bobbin %q", key, apache[key], bobbin[key]))
		}
	}
	if len(diffs) > 0 {
		t.Errorf("the scheduler views differ:\n%s", strings.Join(diffs, "\n"))
	}
}

// fairView flattens a Fair Scheduler view to what both RMs must agree on: per queue, its
// keys, type, policy, maxApps and application count.
func fairView(t *testing.T, url string) map[string]string {
	t.Helper()
	var doc struct {
		Scheduler struct {
			SchedulerInfo map[string]any `json:"schedulerInfo"`
		} `json:"scheduler"`
	}
	var err error
	if !testutil.PollEvery(20*time.Second, 200*time.Millisecond, func() bool {
		var resp *http.Response
		if resp, err = http.Get(url); err == nil {
			err = json.NewDecoder(resp.Body).Decode(&doc)
			resp.Body.Close()
		}
		return err == nil && doc.Scheduler.SchedulerInfo != nil
	}) {
		t.Fatalf("GET %s: %v", url, err)
	}
	out := map[string]string{"type": fmt.Sprint(doc.Scheduler.SchedulerInfo["type"])}
	var walk func(q map[string]any)
	walk = func(q map[string]any) {
		name := fmt.Sprint(q["queueName"])
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range q {
				if !yield(k) {
					return
				}
			}
		})
		out[name+" keys"] = strings.Join(keys, ",")
		out[name+" type"] = fmt.Sprint(q["type"])
		out[name+" schedulingPolicy"] = fmt.Sprint(q["schedulingPolicy"])
		out[name+" maxApps"] = fmt.Sprint(q["maxApps"])
		if a, ok := q["numActiveApps"].(float64); ok {
			out[name+" apps"] = fmt.Sprint(a + q["numPendingApps"].(float64))
		}
		if cq, ok := q["childQueues"].(map[string]any); ok {
			list, _ := cq["queue"].([]any)
			for _, c := range list {
				if m, ok := c.(map[string]any); ok {
					walk(m)
				}
			}
		}
	}
	if root, ok := doc.Scheduler.SchedulerInfo["rootQueue"].(map[string]any); ok {
		walk(root)
	}
	return out
}

// submitTo submits an unmanaged-AM application as user to queue and waits until it is
// accepted.
func submitTo(t *testing.T, site map[string]string, user, queue string) {
	t.Helper()
	if got := submitAndWait(t, site["yarn.resourcemanager.address"], user, queue); !strings.HasPrefix(got, "ACCEPTED in ") {
		t.Fatalf("submitting to %s: %s", queue, got)
	}
}
