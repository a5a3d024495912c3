package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/client/amclient"
	"github.com/bobbin-yarn/bobbin/client/rmclient"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/rpc/token"
	"github.com/bobbin-yarn/bobbin/tools/nmsim"
)

// userLimitCase is a capacity-scheduler.xml and the containers each user's application
// holds once a 10 GB node is offered to all of them at once: each asks for ten 1 GB
// containers in queue default, in the order of users.
type userLimitCase struct {
	name   string
	queues map[string]string // without the yarn.scheduler.capacity. prefix
	users  []string
	want   []int
}

// TestUserLimitsLikeApache gives the Apache 2.7.3 and 3.1.1 RMs and Bobbin's the same
// capacity-scheduler.xml and the same demand and expects each user to end with the same
// containers (issue 22: user-limit-factor, default 1, and minimum-user-limit-percent).
func TestUserLimitsLikeApache(t *testing.T) {
	t.Parallel()
	// maximum-am-resource-percent 1: the unmanaged AMs' resource would otherwise keep
	// all but the first application inactive on the Java RMs.
	base := func(kv ...string) map[string]string {
		m := map[string]string{"maximum-am-resource-percent": "1"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	cases := []userLimitCase{{
		// One user in a half-cluster queue: its capacity, and the container that crosses it.
		name:   "user-limit-factor default 1",
		queues: base("root.queues", "default,other", "root.default.capacity", "50", "root.default.maximum-capacity", "100", "root.other.capacity", "50"),
		users:  []string{"alice"},
		want:   []int{6},
	}, {
		name: "user-limit-factor 2",
		queues: base("root.queues", "default,other", "root.default.capacity", "50", "root.default.maximum-capacity", "100", "root.other.capacity", "50",
			"root.default.user-limit-factor", "2"),
		users: []string{"alice"},
		want:  []int{10},
	}, {
		// Five active users, minimum-user-limit-percent 25: each may hold max(1/5, 25 %) of
		// 10 GB, rounded up to the 1 GB minimum allocation: 3 GB, and one more.
		name:   "minimum-user-limit-percent 25",
		queues: base("root.queues", "default", "root.default.capacity", "100", "root.default.minimum-user-limit-percent", "25"),
		users:  []string{"alice", "bob", "carol", "dave", "erin"},
		want:   []int{4, 4, 2, 0, 0},
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
				site["yarn.resourcemanager.nodemanagers.heartbeat-interval-ms"] = "200"
				dir := queueConfDir(t, site, c.queues)
				k.start(t, dir, site)
				if got := holdings(t, site, c.users, demand{}); fmt.Sprint(got) != fmt.Sprint(c.want) {
					t.Errorf("%s: users %v hold %v containers, want %v", c.name, c.users, got, c.want)
				}
			}
		})
	}
}

// rmKind is an RM to compare: Bobbin's, and Apache's of each distribution present.
type rmKind struct {
	name  string
	start func(t *testing.T, confDir string, site map[string]string)
}

func rmKinds(t *testing.T) []rmKind {
	kinds := []rmKind{{"bobbin", func(t *testing.T, confDir string, site map[string]string) {
		rm := startDaemon(t, "resourcemanager", "--conf", confDir)
		rm.waitListening(t, site["yarn.resourcemanager.address"])
	}}}
	for _, v := range hadoopVersions {
		home := hadoopHomeIfPresent(v)
		if home == "" {
			t.Logf("no Hadoop %s: its RM is left out of the comparison", v)
			continue
		}
		kinds = append(kinds, rmKind{"apache-" + v, func(t *testing.T, confDir string, site map[string]string) {
			rm := startJavaDaemon(t, home, confDir, nil, "resourcemanager")
			rm.waitListening(t, site["yarn.resourcemanager.address"])
		}})
	}
	return kinds
}

// demand is what holdings offers and asks for: one node of nodeMB and nodeVcores, and
// count containers (counts[i] for user i, when given) of askMB and askVcores from each
// user's application (zero values: a 10 GB, 10-vcore node and ten 1 GB, 1-vcore
// containers each).
type demand struct {
	nodeMB, askMB                int64
	nodeVcores, askVcores, count int32
	counts                       []int32
	queues                       []string // user i's application's queue ("default" when unset)
}

// queue is the queue user i's application is submitted to.
func (d demand) queue(i int) string {
	if i < len(d.queues) {
		return d.queues[i]
	}
	return "default"
}

// of is how many containers user i's application asks for.
func (d demand) of(i int) int32 {
	if i < len(d.counts) {
		return d.counts[i]
	}
	return d.count
}

func (d demand) withDefaults() demand {
	if d.nodeMB == 0 {
		d.nodeMB, d.nodeVcores = 10240, 10
	}
	if d.askMB == 0 {
		d.askMB, d.askVcores = 1024, 1
	}
	if d.count == 0 {
		d.count = 10
	}
	return d
}

// holdings submits one unmanaged-AM application per user, has each ask for d's
// containers, then registers d's node and allocates until the grants stop: what each
// application holds then.
func holdings(t *testing.T, site map[string]string, users []string, d demand) []int {
	t.Helper()
	d = d.withDefaults()
	ctx := context.Background()
	ams := make([]*amclient.Client, len(users))
	for i, user := range users {
		ams[i] = unmanagedAMAs(t, site, user, d.queue(i))
		ams[i].Request(1, "*", d.askMB, d.askVcores, d.of(i))
		if _, err := ams[i].Allocate(ctx, 0); err != nil {
			t.Fatalf("%s's first allocate: %v", user, err)
		}
	}
	nm, err := nmsim.Start(nmsim.Options{TrackerAddr: site["yarn.resourcemanager.resource-tracker.address"], Port: int32(freePort(t)),
		MemoryMB: d.nodeMB, VCores: d.nodeVcores, Heartbeat: 200 * time.Millisecond, FollowRM: true, Logger: testutil.QuietLogger()})
	if err != nil {
		t.Fatalf("simulated NodeManager: %v", err)
	}
	t.Cleanup(nm.Stop)
	held := make([]int, len(users))
	// The Java RMs place one container per node heartbeat (200 ms): grants stop when the
	// node's memory is full or every ask is met, or when 3 s (15 heartbeats) pass
	// without one.
	last := time.Now()
	asked := 0
	for i := range users {
		asked += int(d.of(i))
	}
	full := func(total int) bool {
		return int64(total)*d.askMB > d.nodeMB-d.askMB || total == asked
	}
	for total := 0; !full(total) && time.Since(last) < 3*time.Second; time.Sleep(100 * time.Millisecond) {
		for i, am := range ams {
			resp, err := am.Allocate(ctx, 0)
			if err != nil {
				t.Fatalf("%s's allocate: %v", users[i], err)
			}
			if n := len(resp.GetAllocatedContainers()); n > 0 {
				held[i] += n
				total += n
				last = time.Now()
			}
		}
	}
	return held
}

// unmanagedAMAs submits an unmanaged-AM application as user to queue and registers its
// AM.
func unmanagedAMAs(t *testing.T, site map[string]string, user, queue string) *amclient.Client {
	t.Helper()
	ctx := context.Background()
	cl := rmclient.New(site["yarn.resourcemanager.address"], user, rpc.ClientOptions{ConnectRetries: 50, Logger: testutil.QuietLogger()})
	t.Cleanup(func() { cl.Close() })
	r, err := cl.GetNewApplication(ctx)
	if err != nil {
		t.Fatalf("getNewApplication as %s: %v", user, err)
	}
	id := r.GetApplicationId()
	if err := cl.Call(ctx, "submitApplication", &yarnpb.SubmitApplicationRequestProto{ApplicationSubmissionContext: &yarnpb.ApplicationSubmissionContextProto{
		ApplicationId: id, ApplicationName: proto.String("user-limits"), Queue: proto.String(queue), UnmanagedAm: proto.Bool(true),
		Resource:        &yarnpb.ResourceProto{Memory: proto.Int64(1024), VirtualCores: proto.Int32(1)},
		AmContainerSpec: &yarnpb.ContainerLaunchContextProto{}, MaxAppAttempts: proto.Int32(1)}}, &yarnpb.SubmitApplicationResponseProto{}); err != nil {
		t.Fatalf("submitApplication as %s: %v", user, err)
	}
	// The AMRMToken is in the report once the RM has launched the unmanaged attempt.
	var rep *yarnpb.ApplicationReportProto
	ended := func() bool {
		s := rep.GetYarnApplicationState()
		return strings.HasPrefix(s.String(), "FAILED") || s == yarnpb.YarnApplicationStateProto_KILLED
	}
	testutil.PollEvery(30*time.Second, 50*time.Millisecond, func() bool {
		var err error
		if rep, err = cl.GetApplicationReport(ctx, id); err != nil {
			t.Fatalf("getApplicationReport: %v", err)
		}
		return rep.GetAmRmToken() != nil || ended()
	})
	tok := rep.GetAmRmToken()
	if tok == nil {
		t.Fatalf("application of %s: %v %q, no AMRMToken", user, rep.GetYarnApplicationState(), rep.GetDiagnostics())
	}
	am := amclient.New(amclient.Options{Addr: site["yarn.resourcemanager.scheduler.address"], Token: token.FromProto(tok), User: user,
		ConnectRetries: 3, Logger: testutil.QuietLogger()})
	t.Cleanup(func() { am.Close() })
	if _, err := am.Register(ctx, "127.0.0.1", 0, ""); err != nil {
		t.Fatalf("registerApplicationMaster as %s: %v", user, err)
	}
	return am
}
