package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/client/rmclient"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/rpc"
)

// capacityCase is one capacity-scheduler.xml and what submitting to it gives: the state
// of each application in turn and, for those FAILED, a part of their diagnostics.
type capacityCase struct {
	name   string
	queues map[string]string // capacity-scheduler.xml, without the yarn.scheduler.capacity. prefix
	core   map[string]string // extra core-site.xml keys
	users  []string          // who submits each application, to queue "default"
	queue  string            // the queue asked for instead of "default"
	want   []string          // "ACCEPTED" (or "ACCEPTED in <queue>"), or the diagnostics a FAILED one carries
}

// TestCapacityLimitsLikeApache submits the same applications under the same
// capacity-scheduler.xml to the Apache 2.7.3 and 3.1.1 RMs and to Bobbin's, and expects
// the same outcome from each: accepted, or FAILED with the Java RM's diagnostics
// (issue 22: "maximum-applications=1 rejects the second submission on both").
func TestCapacityLimitsLikeApache(t *testing.T) {
	t.Parallel()
	cases := []capacityCase{{
		name:   "queue maximum-applications",
		queues: map[string]string{"root.queues": "default", "root.default.capacity": "100", "root.default.maximum-applications": "1"},
		users:  []string{"alice", "bob"},
		want:   []string{"ACCEPTED", "org.apache.hadoop.security.AccessControlException: Queue root.default already has 1 applications, cannot accept submission of application: "},
	}, {
		name: "user share of maximum-applications",
		queues: map[string]string{"root.queues": "default", "root.default.capacity": "100", "root.default.maximum-applications": "4",
			"root.default.minimum-user-limit-percent": "25"},
		users: []string{"alice", "alice", "bob"},
		want:  []string{"ACCEPTED", "org.apache.hadoop.security.AccessControlException: Queue root.default already has 1 applications from user alice cannot accept submission of application: ", "ACCEPTED"},
	}, {
		// The system's limit: 3.1.1 says "Maximum system application limit reached," (Bobbin
		// too), 2.7.3 the queue's share of it; both refuse the second.
		name:   "system maximum-applications",
		queues: map[string]string{"root.queues": "default", "root.default.capacity": "100", "maximum-applications": "1"},
		users:  []string{"alice", "bob"},
		want:   []string{"ACCEPTED", "cannot accept submission of application: application_"},
	}, {
		// The mappings, with carol in group etl and bob and dave in staff (static
		// mappings, which both read); erin has no groups, which the group mapping needs.
		name: "queue-mappings",
		queues: map[string]string{"root.queues": "default,analytics,etl,bob", "root.default.capacity": "25", "root.analytics.capacity": "25",
			"root.etl.capacity": "25", "root.bob.capacity": "25", "queue-mappings": "u:alice:analytics,g:etl:etl,u:%user:%user"},
		core:  map[string]string{"hadoop.user.group.static.mapping.overrides": "carol=etl;bob=staff;dave=staff;dr.who=;"},
		users: []string{"alice", "carol", "bob", "dave", "erin"},
		want: []string{"ACCEPTED in analytics", "ACCEPTED in etl", "ACCEPTED in bob", "submitted by user dave to unknown queue: dave",
			"Failed to submit application application_"},
	}, {
		// A queue asked for by name is kept unless the override is on.
		name: "queue-mappings, a queue named",
		queues: map[string]string{"root.queues": "default,analytics,etl", "root.default.capacity": "40", "root.analytics.capacity": "30",
			"root.etl.capacity": "30", "queue-mappings": "u:alice:analytics"},
		users: []string{"alice"},
		queue: "etl",
		want:  []string{"ACCEPTED in etl"},
	}, {
		name: "queue-mappings-override.enable",
		queues: map[string]string{"root.queues": "default,analytics,etl", "root.default.capacity": "40", "root.analytics.capacity": "30",
			"root.etl.capacity": "30", "queue-mappings": "u:alice:analytics", "queue-mappings-override.enable": "true"},
		users: []string{"alice"},
		queue: "etl",
		want:  []string{"ACCEPTED in analytics"},
	}}
	kinds := rmKinds(t)
	if len(kinds) == 1 {
		t.Skip("no Hadoop distribution to compare with (HADOOP2_HOME / HADOOP3_HOME); see README.md")
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range cases {
				site := loopbackRMSite(t)
				dir := queueConfDir(t, site, c.queues)
				if c.core != nil {
					core := map[string]string{"fs.defaultFS": "file:///", "hadoop.tmp.dir": filepath.Join(dir, "tmp")}
					for key, v := range c.core {
						core[key] = v
					}
					if err := os.WriteFile(filepath.Join(dir, "core-site.xml"), []byte(configXML(core)), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				k.start(t, dir, site)
				for i, user := range c.users {
					queue := c.queue
					if queue == "" {
						queue = "default"
					}
					got := submitAndWait(t, site["yarn.resourcemanager.address"], user, queue)
					if want := c.want[i]; !strings.Contains(got, want) {
						t.Errorf("%s, application %d by %s: %q, want %q", c.name, i+1, user, got, want)
					}
				}
			}
		})
	}
}

// queueConfDir writes a configuration directory with site's yarn-site.xml keys and a
// capacity-scheduler.xml of queues (keys without the yarn.scheduler.capacity. prefix).
func queueConfDir(t *testing.T, site, queues map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	writeConf(t, dir, site)
	props := map[string]string{}
	for key, v := range queues {
		props["yarn.scheduler.capacity."+key] = v
	}
	writeCapacityScheduler(t, dir, props)
	return dir
}

// submitAndWait submits an unmanaged-AM application as user to queue and
// returns "ACCEPTED in <queue>" once it is, its diagnostics once it is FAILED (the Java
// RM rejects asynchronously), or the error when the call itself is refused.
func submitAndWait(t *testing.T, addr, user, queue string) string {
	t.Helper()
	ctx := context.Background()
	cl := rmclient.New(addr, user, rpc.ClientOptions{ConnectRetries: 50, Logger: testutil.QuietLogger()})
	defer cl.Close()
	r, err := cl.GetNewApplication(ctx)
	if err != nil {
		t.Fatalf("getNewApplication as %s: %v", user, err)
	}
	id := r.GetApplicationId()
	if err := cl.Call(ctx, "submitApplication", &yarnpb.SubmitApplicationRequestProto{ApplicationSubmissionContext: &yarnpb.ApplicationSubmissionContextProto{
		ApplicationId: id, ApplicationName: proto.String("limits"), Queue: proto.String(queue), UnmanagedAm: proto.Bool(true),
		Resource:                                &yarnpb.ResourceProto{Memory: proto.Int64(1024), VirtualCores: proto.Int32(1)},
		AmContainerSpec:                         &yarnpb.ContainerLaunchContextProto{},
		MaxAppAttempts:                          proto.Int32(1),
		ApplicationType:                         proto.String("YARN"),
		KeepContainersAcrossApplicationAttempts: proto.Bool(false)}}, &yarnpb.SubmitApplicationResponseProto{}); err != nil {
		// A refusal the 3.x RM gives the call itself (2.7 fails the application instead).
		return "submitApplication refused: " + err.Error()
	}
	rep := awaitDecided(t, ctx, cl, id, 30*time.Second)
	switch rep.GetYarnApplicationState() {
	case yarnpb.YarnApplicationStateProto_FAILED:
		return rep.GetDiagnostics()
	case yarnpb.YarnApplicationStateProto_ACCEPTED, yarnpb.YarnApplicationStateProto_RUNNING:
		return "ACCEPTED in " + rep.GetQueue()
	}
	t.Fatalf("application %v is %v", id, rep.GetYarnApplicationState())
	return ""
}

// awaitDecided waits until the RM has decided on a submitted application, which is then
// past SUBMITTED: ACCEPTED (an AM that never registers stays there), RUNNING, or FAILED
// with its reason (the Java RM rejects asynchronously). It returns the report.
func awaitDecided(t *testing.T, ctx context.Context, cl *rmclient.Client, id *yarnpb.ApplicationIdProto, within time.Duration) *yarnpb.ApplicationReportProto {
	t.Helper()
	var rep *yarnpb.ApplicationReportProto
	decided := testutil.PollEvery(within, 100*time.Millisecond, func() bool {
		var err error
		if rep, err = cl.GetApplicationReport(ctx, id); err != nil {
			t.Fatalf("getApplicationReport: %v", err)
		}
		switch rep.GetYarnApplicationState() {
		case yarnpb.YarnApplicationStateProto_NEW, yarnpb.YarnApplicationStateProto_NEW_SAVING, yarnpb.YarnApplicationStateProto_SUBMITTED:
			return false
		}
		return true
	})
	if !decided {
		t.Fatalf("application %v still %v after %v", id, rep.GetYarnApplicationState(), within)
	}
	return rep
}
