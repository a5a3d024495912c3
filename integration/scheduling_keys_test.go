package integration

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/client/rmclient"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/tools/nmsim"
)

// schedulingCase is a capacity-scheduler.xml, the demand offered to it and the containers
// each user's application holds then (see holdings).
type schedulingCase struct {
	name   string
	queues map[string]string // without the yarn.scheduler.capacity. prefix
	users  []string
	demand demand
	want   []int
	only   string // the one Hadoop version whose key this is ("": both)
}

// TestSchedulingKeysLikeApache gives the Apache RMs and Bobbin's the same
// capacity-scheduler.xml and the same demand and expects the same containers for each
// application (issue 22): AM resource limits, the resource calculator and the leaf's
// ordering policy.
func TestSchedulingKeysLikeApache(t *testing.T) {
	t.Parallel()
	queue := func(kv ...string) map[string]string {
		m := map[string]string{"root.queues": "default", "root.default.capacity": "100"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	three := demand{count: 3}
	cases := []schedulingCase{{
		// 10 % of 10 GB: the first application's 1 GB AM fills it, the others wait.
		name:   "system maximum-am-resource-percent",
		queues: queue("maximum-am-resource-percent", "0.1"),
		users:  []string{"alice", "bob", "carol"},
		demand: three,
		want:   []int{3, 0, 0},
	}, {
		name:   "queue maximum-am-resource-percent",
		queues: queue("maximum-am-resource-percent", "0.1", "root.default.maximum-am-resource-percent", "0.2"),
		users:  []string{"alice", "bob", "carol"},
		demand: three,
		want:   []int{3, 3, 0},
	}, {
		// The default calculator counts memory only: ten 2-vcore containers on 4 vcores.
		name:   "resource-calculator default",
		queues: queue("maximum-am-resource-percent", "1"),
		users:  []string{"alice"},
		demand: demand{nodeMB: 10240, nodeVcores: 4, askMB: 1024, askVcores: 2},
		want:   []int{10},
	}, {
		name:   "resource-calculator dominant",
		queues: queue("maximum-am-resource-percent", "1", "resource-calculator", "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator"),
		users:  []string{"alice"},
		demand: demand{nodeMB: 10240, nodeVcores: 4, askMB: 1024, askVcores: 2},
		want:   []int{2},
	}, {
		name:   "ordering-policy fifo",
		queues: queue("maximum-am-resource-percent", "1", "root.default.ordering-policy", "fifo"),
		users:  []string{"alice", "bob"},
		want:   []int{10, 0},
		only:   "3.1.1",
	}, {
		name:   "ordering-policy fair",
		queues: queue("maximum-am-resource-percent", "1", "root.default.ordering-policy", "fair"),
		users:  []string{"alice", "bob"},
		want:   []int{5, 5},
		only:   "3.1.1",
	}, {
		// Three slots: the fair ordering alternates, alice first on the tie; with
		// size-based weights bob's larger demand (30 GB against 2) earns him the third.
		name:   "ordering-policy fair, three slots",
		queues: queue("maximum-am-resource-percent", "1", "root.default.ordering-policy", "fair"),
		users:  []string{"alice", "bob"},
		demand: demand{nodeMB: 3072, nodeVcores: 3, counts: []int32{2, 30}},
		want:   []int{2, 1},
		only:   "3.1.1",
	}, {
		name: "ordering-policy fair, three slots, size-based weight",
		queues: queue("maximum-am-resource-percent", "1", "root.default.ordering-policy", "fair",
			"root.default.ordering-policy.fair.enable-size-based-weight", "true"),
		users:  []string{"alice", "bob"},
		demand: demand{nodeMB: 3072, nodeVcores: 3, counts: []int32{2, 30}},
		want:   []int{1, 2},
		only:   "3.1.1",
	}}
	for _, k := range comparedRMs(t) {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range cases {
				if c.only != "" && k.name != "bobbin" && k.name != "apache-"+c.only {
					continue
				}
				site := loopbackRMSite(t)
				site["yarn.resourcemanager.nodemanagers.heartbeat-interval-ms"] = "200"
				dir := queueConfDir(t, site, c.queues)
				k.start(t, dir, site)
				if got := holdings(t, site, c.users, c.demand); fmt.Sprint(got) != fmt.Sprint(c.want) {
					t.Errorf("%s: users %v hold %v containers, want %v", c.name, c.users, got, c.want)
				}
			}
		})
	}
}

// comparedRMs are Bobbin's RM and the Apache RMs present, or a skip when there are none.
func comparedRMs(t *testing.T) []rmKind {
	kinds := rmKinds(t)
	if len(kinds) == 1 {
		t.Skip("no Hadoop distribution to compare with (HADOOP2_HOME / HADOOP3_HOME); see README.md")
	}
	return kinds
}

// TestAskLimitsLikeApache asks the Apache RMs and Bobbin's for containers, and submits
// AMs, above a queue's maximum-allocation-mb and -vcores and above the cluster's: the same
// grants and refusals from each (issue 22). The Java RMs hold asks and AMs to the
// cluster's maximum only (the queue's reaches the AM at registration), and their default
// calculator grants every container one vcore.
func TestAskLimitsLikeApache(t *testing.T) {
	t.Parallel()
	for _, k := range comparedRMs(t) {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			site := loopbackRMSite(t)
			// 3.1.1's default; 2.7.3's (and Bobbin's) is 32.
			site["yarn.scheduler.maximum-allocation-vcores"] = "4"
			dir := queueConfDir(t, site, map[string]string{"root.queues": "default", "root.default.capacity": "100",
				"maximum-am-resource-percent": "1", "root.default.maximum-allocation-mb": "2048", "root.default.maximum-allocation-vcores": "2"})
			k.start(t, dir, site)
			nm, err := nmsim.Start(nmsim.Options{TrackerAddr: site["yarn.resourcemanager.resource-tracker.address"], Port: int32(freePort(t)),
				MemoryMB: 10240, VCores: 10, Heartbeat: 200 * time.Millisecond, FollowRM: true, Logger: testutil.QuietLogger()})
			if err != nil {
				t.Fatalf("simulated NodeManager: %v", err)
			}
			t.Cleanup(nm.Stop)
			for _, ask := range []struct {
				mb     int64
				vcores int32
				want   string
			}{
				{2048, 2, "granted 2048 MB, 1 vcores"},
				{3072, 1, "granted 3072 MB, 1 vcores"}, // above the queue's maximum
				{1024, 3, "granted 1024 MB, 1 vcores"},
				{9216, 1, "InvalidResourceRequestException"}, // above the cluster's 8192 MB
				{1024, 5, "InvalidResourceRequestException"}, // above the cluster's 4 vcores
			} {
				am := unmanagedAMAs(t, site, "alice", "default")
				am.Request(1, "*", ask.mb, ask.vcores, 1)
				got := "nothing"
				testutil.PollEvery(3*time.Second, 100*time.Millisecond, func() bool {
					resp, err := am.Allocate(ctx, 0)
					if err != nil {
						got = err.Error()
						return true
					}
					if cs := resp.GetAllocatedContainers(); len(cs) > 0 {
						got = fmt.Sprintf("granted %d MB, %d vcores", cs[0].GetResource().GetMemory(), cs[0].GetResource().GetVirtualCores())
						return true
					}
					return false
				})
				if !strings.Contains(got, ask.want) {
					t.Errorf("ask of %d MB, %d vcores: %q, want %q", ask.mb, ask.vcores, got, ask.want)
				}
				am.Close()
			}
			for _, am := range []struct {
				mb   int64
				want string
			}{{3072, "ACCEPTED"}, {9216, "InvalidResourceRequestException"}} {
				if got := submitManaged(t, site["yarn.resourcemanager.address"], "alice", am.mb); !strings.Contains(got, am.want) {
					t.Errorf("AM of %d MB: %q, want %q", am.mb, got, am.want)
				}
			}
		})
	}
}

// submitManaged submits an application whose AM asks for mb and returns its state and
// diagnostics once the RM has decided, or the error when the call itself is refused.
func submitManaged(t *testing.T, addr, user string, mb int64) string {
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
		ApplicationId: id, ApplicationName: proto.String("limits"), Queue: proto.String("default"),
		Resource:        &yarnpb.ResourceProto{Memory: proto.Int64(mb), VirtualCores: proto.Int32(1)},
		AmContainerSpec: &yarnpb.ContainerLaunchContextProto{Command: []string{"sleep", "60"}}, MaxAppAttempts: proto.Int32(1)}}, &yarnpb.SubmitApplicationResponseProto{}); err != nil {
		return "submitApplication refused: " + err.Error()
	}
	rep := awaitDecided(t, ctx, cl, id, 20*time.Second)
	return rep.GetYarnApplicationState().String() + " " + rep.GetDiagnostics()
}

// TestApplicationPriorityLikeApache submits applications with and without a priority
// under yarn.cluster.max-application-priority and a queue's default-application-priority
// (3.x keys) to Apache 3.1.1's RM and Bobbin's: the same priority in each report.
func TestApplicationPriorityLikeApache(t *testing.T) {
	t.Parallel()
	for _, k := range comparedRMs(t) {
		if k.name == "apache-"+hadoop2 {
			continue // application priorities came in 2.8
		}
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			site := loopbackRMSite(t)
			site["yarn.cluster.max-application-priority"] = "10"
			dir := queueConfDir(t, site, map[string]string{"root.queues": "default,b", "root.default.capacity": "50", "root.b.capacity": "50",
				"root.default.default-application-priority": "3"})
			k.start(t, dir, site)
			for _, c := range []struct {
				queue         string
				asked, wanted int32 // asked -1: none
			}{{"default", -1, 3}, {"default", 5, 5}, {"default", 20, 10}, {"b", -1, 0}, {"b", 7, 7}} {
				if got := submittedPriority(t, site["yarn.resourcemanager.address"], c.queue, c.asked); got != c.wanted {
					t.Errorf("queue %s, priority asked %d: the report says %d, want %d", c.queue, c.asked, got, c.wanted)
				}
			}
		})
	}
}

// submittedPriority submits an unmanaged-AM application to queue, with priority unless it
// is -1, and returns the priority its report gives.
func submittedPriority(t *testing.T, addr, queue string, priority int32) int32 {
	t.Helper()
	ctx := context.Background()
	cl := rmclient.New(addr, "alice", rpc.ClientOptions{ConnectRetries: 50, Logger: testutil.QuietLogger()})
	defer cl.Close()
	r, err := cl.GetNewApplication(ctx)
	if err != nil {
		t.Fatalf("getNewApplication: %v", err)
	}
	sc := &yarnpb.ApplicationSubmissionContextProto{ApplicationId: r.GetApplicationId(), ApplicationName: proto.String("priority"), Queue: proto.String(queue),
		UnmanagedAm: proto.Bool(true), AmContainerSpec: &yarnpb.ContainerLaunchContextProto{}, MaxAppAttempts: proto.Int32(1),
		Resource: &yarnpb.ResourceProto{Memory: proto.Int64(1024), VirtualCores: proto.Int32(1)}}
	if priority >= 0 {
		sc.Priority = &yarnpb.PriorityProto{Priority: proto.Int32(priority)}
	}
	if err := cl.Call(ctx, "submitApplication", &yarnpb.SubmitApplicationRequestProto{ApplicationSubmissionContext: sc}, &yarnpb.SubmitApplicationResponseProto{}); err != nil {
		t.Fatalf("submitApplication to %s: %v", queue, err)
	}
	// The priority as the report gives it once the application is past submission (or
	// after 10 s, whatever it is then).
	var rep *yarnpb.ApplicationReportProto
	testutil.PollEvery(10*time.Second, 100*time.Millisecond, func() bool {
		var err error
		if rep, err = cl.GetApplicationReport(ctx, r.GetApplicationId()); err != nil {
			t.Fatalf("getApplicationReport: %v", err)
		}
		st := rep.GetYarnApplicationState()
		return st != yarnpb.YarnApplicationStateProto_NEW && st != yarnpb.YarnApplicationStateProto_NEW_SAVING && st != yarnpb.YarnApplicationStateProto_SUBMITTED
	})
	return rep.GetPriority().GetPriority()
}

// TestReservationsLikeApache calls the reservation system of RMs that run without one
// (Bobbin refuses reservable queues and yarn.resourcemanager.reservation-system.enable):
// the same exception and message from each (issue 22).
func TestReservationsLikeApache(t *testing.T) {
	t.Parallel()
	for _, k := range comparedRMs(t) {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			site := loopbackRMSite(t)
			k.start(t, queueConfDir(t, site, map[string]string{"root.queues": "default", "root.default.capacity": "100"}), site)
			cl := rmclient.New(site["yarn.resourcemanager.address"], "alice", rpc.ClientOptions{ConnectRetries: 50, Logger: testutil.QuietLogger()})
			defer cl.Close()
			err := cl.Call(context.Background(), "submitReservation", &yarnpb.ReservationSubmissionRequestProto{Queue: proto.String("default"),
				ReservationDefinition: &yarnpb.ReservationDefinitionProto{Deadline: proto.Int64(time.Now().Add(time.Hour).UnixMilli())}},
				&yarnpb.ReservationSubmissionResponseProto{})
			var re *rpc.RemoteError
			if !errors.As(err, &re) || re.Class != "org.apache.hadoop.yarn.exceptions.YarnException" || !strings.HasPrefix(re.Message, "Reservation is not enabled. Please enable & try again") {
				t.Fatalf("submitReservation: %v, want YarnException: Reservation is not enabled. Please enable & try again", err)
			}
		})
	}
}
