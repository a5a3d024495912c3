package resourcemanager

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/client/rmclient"
	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/conf/capacity"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
)

func testConf(kv ...string) *conf.Configuration {
	c := conf.New()
	c.Set("yarn.resourcemanager.address", "127.0.0.1:0")
	c.Set("yarn.resourcemanager.resource-tracker.address", "127.0.0.1:0")
	c.Set("yarn.resourcemanager.scheduler.address", "127.0.0.1:0")
	c.Set("yarn.resourcemanager.admin.address", "127.0.0.1:0")
	c.Set("yarn.resourcemanager.webapp.address", "127.0.0.1:0")
	for i := 0; i+1 < len(kv); i += 2 {
		c.Set(kv[i], kv[i+1])
	}
	return c
}

// startRM runs a ResourceManager on an ephemeral loopback port with a fixed clock.
func startRM(t *testing.T, c *conf.Configuration) (*ResourceManager, *rmclient.Client) {
	return startRMWithClock(t, c, func() time.Time { return time.UnixMilli(1732269000000) })
}

func startRMWithClock(t *testing.T, c *conf.Configuration, now func() time.Time) (*ResourceManager, *rmclient.Client) {
	t.Helper()
	if c.Source("yarn.node-labels.fs-store.root-dir") == conf.SourceDefault {
		// The Java default is under /tmp for every RM of the user: each test its own.
		c.Set("yarn.node-labels.fs-store.root-dir", "file://"+t.TempDir())
	}
	queues, err := capacity.Parse(func() *conf.Configuration {
		q := c.Clone()
		// default's user-limit-factor 2 lets its one user borrow etl's idle 40 %.
		for k, v := range map[string]string{"root.queues": "default,etl", "root.default.capacity": "60", "root.etl.capacity": "40", "root.default.user-limit-factor": "2",
			"root.etl.queues": "daily,hourly", "root.etl.daily.capacity": "50", "root.etl.hourly.capacity": "50",
			"root.etl.hourly.state": "STOPPED", "root.acl_submit_applications": " ", "root.acl_administer_queue": " ",
			"root.default.acl_submit_applications": "*"} {
			if _, set := q.Raw(capacity.Prefix + k); !set { // a test's own setting wins
				q.Set(capacity.Prefix+k, v)
			}
		}
		return q
	}())
	if err != nil {
		t.Fatal(err)
	}
	rm, err := New(Options{Conf: c, Queues: queues, Logger: testutil.QuietLogger(), Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if err := rm.Start(); err != nil {
		t.Fatal(err)
	}
	cl := rmclient.New(rm.ClientAddr().String(), "alice", rpc.ClientOptions{ConnectRetries: -1, Logger: testutil.QuietLogger()})
	t.Cleanup(func() {
		cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := rm.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
	return rm, cl
}

func remote(t *testing.T, err error) *rpc.RemoteError {
	t.Helper()
	var re *rpc.RemoteError
	if !errors.As(err, &re) {
		t.Fatalf("want a remote error, got %v", err)
	}
	return re
}

func TestNewApplicationIDsAndMaximumCapability(t *testing.T) {
	_, cl := startRM(t, testConf("yarn.scheduler.maximum-allocation-mb", "4096", "yarn.scheduler.maximum-allocation-vcores", "6"))
	ctx := context.Background()
	for i := 1; i <= 3; i++ {
		r, err := cl.GetNewApplication(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := records.ApplicationID{ClusterTimestamp: 1732269000000, ID: int32(i)}
		if got := records.AppIDFromProto(r.GetApplicationId()); got != want {
			t.Fatalf("id %s, want %s", got, want)
		}
		if r.GetMaximumCapability().GetMemory() != 4096 || r.GetMaximumCapability().GetVirtualCores() != 6 {
			t.Fatalf("maximumCapability %v", r.GetMaximumCapability())
		}
	}
}

func TestEmptyClusterQueries(t *testing.T) {
	_, cl := startRM(t, testConf())
	ctx := context.Background()
	m, err := cl.GetClusterMetrics(ctx)
	if err != nil || m.GetNumNodeManagers() != 0 {
		t.Fatalf("metrics %v %v", m, err)
	}
	nodes, err := cl.GetClusterNodes(ctx, yarnpb.NodeStateProto_NS_RUNNING)
	if err != nil || len(nodes) != 0 {
		t.Fatalf("nodes %v %v", nodes, err)
	}
	apps, err := cl.GetApplications(ctx, &yarnpb.GetApplicationsRequestProto{ApplicationStates: []yarnpb.YarnApplicationStateProto{yarnpb.YarnApplicationStateProto_RUNNING}})
	if err != nil || len(apps) != 0 {
		t.Fatalf("apps %v %v", apps, err)
	}
	_, err = cl.GetApplicationReport(ctx, records.ApplicationID{ClusterTimestamp: 1, ID: 1}.Proto())
	re := remote(t, err)
	if re.Class != "org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException" || re.Message != "Application with id 'application_1_0001' doesn't exist in RM." {
		t.Fatalf("%+v", re)
	}
}

func TestQueueInfoAndAcls(t *testing.T) {
	_, cl := startRM(t, testConf())
	ctx := context.Background()
	q, err := cl.GetQueueInfo(ctx, &yarnpb.GetQueueInfoRequestProto{QueueName: proto.String("etl"), IncludeChildQueues: proto.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	if q.GetQueueName() != "etl" || q.GetCapacity() != 0.4 || q.GetMaximumCapacity() != 1 || len(q.GetChildQueues()) != 2 {
		t.Fatalf("etl %v", q)
	}
	if h := q.GetChildQueues()[1]; h.GetQueueName() != "hourly" || h.GetState() != yarnpb.QueueStateProto_Q_STOPPED || h.GetCapacity() != 0.5 {
		t.Fatalf("hourly %v", h)
	}
	// What 3.4's `yarn queue -status` prints of a Capacity Scheduler queue.
	if h := q.GetChildQueues()[1]; h.GetSchedulerType() != "CapacityScheduler" || h.GetQueuePath() != "root.etl.hourly" || h.GetWeight() != -1 ||
		h.GetMaxParallelApps() != math.MaxInt32 {
		t.Fatalf("hourly's 3.4 fields %v", h)
	}
	if q, err := cl.GetQueueInfo(ctx, &yarnpb.GetQueueInfoRequestProto{QueueName: proto.String("nope")}); err != nil || q != nil {
		t.Fatalf("unknown queue: %v %v", q, err)
	}
	acls, err := cl.GetQueueUserAcls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, a := range acls {
		got[a.GetQueueName()] = len(a.GetUserAcls())
	}
	// root admits no one, so only "default" (submit: *) grants alice anything.
	if got["default"] != 1 || got["etl"] != 0 || got["root"] != 0 || len(acls) != 5 {
		t.Fatalf("acls %v", got)
	}
}

func TestOtherMethodsAnswerTypedErrors(t *testing.T) {
	_, cl := startRM(t, testConf())
	ctx := context.Background()
	cases := []struct {
		method, class, msg string
		req, resp          proto.Message
	}{
		{"submitApplication", exceptions.ApplicationIDNotProvided, "ApplicationId is not provided", &yarnpb.SubmitApplicationRequestProto{}, &yarnpb.SubmitApplicationResponseProto{}},
		{"submitReservation", exceptions.YarnException, "Reservation is not enabled", &yarnpb.ReservationSubmissionRequestProto{}, &yarnpb.ReservationSubmissionResponseProto{}},
		{"forceKillApplication", exceptions.ApplicationNotFound, "Trying to kill an absent application application_1_0007",
			&yarnpb.KillApplicationRequestProto{ApplicationId: records.ApplicationID{ClusterTimestamp: 1, ID: 7}.Proto()}, &yarnpb.KillApplicationResponseProto{}},
		{"getApplicationAttempts", exceptions.ApplicationNotFound, "doesn't exist", &yarnpb.GetApplicationAttemptsRequestProto{ApplicationId: records.ApplicationID{ClusterTimestamp: 1, ID: 1}.Proto()}, &yarnpb.GetApplicationAttemptsResponseProto{}},
		{"getApplicationReport", exceptions.ApplicationNotFound, "Invalid application id: null", &yarnpb.GetApplicationReportRequestProto{}, &yarnpb.GetApplicationReportResponseProto{}},
		// Hadoop 3.x features that are off answer as the 3.1.1 RM does with them off.
		{"getNewReservation", exceptions.YarnException, "Reservation is not enabled", &yarnpb.GetNewReservationRequestProto{}, &yarnpb.GetNewReservationResponseProto{}},
		{"listReservations", exceptions.YarnException, "Reservation is not enabled", &yarnpb.ReservationListRequestProto{}, &yarnpb.ReservationListResponseProto{}},
		{"getResourceProfiles", exceptions.FeatureNotEnabled, "Resource profile is not enabled, please enable resource profile feature before using its functions. (by setting yarn.resourcemanager.resource-profiles.enabled to true)",
			&yarnpb.GetAllResourceProfilesRequestProto{}, &yarnpb.GetAllResourceProfilesResponseProto{}},
		{"getResourceProfile", exceptions.FeatureNotEnabled, "Resource profile is not enabled", &yarnpb.GetResourceProfileRequestProto{Profile: proto.String("small")}, &yarnpb.GetResourceProfileResponseProto{}},
		{"updateApplicationPriority", exceptions.ApplicationNotFound, "Trying to update priority of an absent application application_1_0003",
			&yarnpb.UpdateApplicationPriorityRequestProto{ApplicationId: records.ApplicationID{ClusterTimestamp: 1, ID: 3}.Proto(), ApplicationPriority: &yarnpb.PriorityProto{Priority: proto.Int32(1)}}, &yarnpb.UpdateApplicationPriorityResponseProto{}},
		{"signalToContainer", exceptions.ApplicationNotFound, "Application application_1_0003 does not exist in RM.",
			&yarnpb.SignalContainerRequestProto{ContainerId: records.ContainerID{Attempt: records.ApplicationID{ClusterTimestamp: 1, ID: 3}.Attempt(1), ID: 2}.Proto(), Command: yarnpb.SignalContainerCommandProto_OUTPUT_THREAD_DUMP.Enum()}, &yarnpb.SignalContainerResponseProto{}},
		{"failApplicationAttempt", exceptions.ApplicationNotFound, "absent application application_1_0003",
			&yarnpb.FailApplicationAttemptRequestProto{ApplicationAttemptId: records.ApplicationID{ClusterTimestamp: 1, ID: 3}.Attempt(1).Proto()}, &yarnpb.FailApplicationAttemptResponseProto{}},
		// A method no Hadoop version has.
		{"getNodeAttributeMappings", rpc.ClassRpcNoSuchMethod, "Unknown method getNodeAttributeMappings", &yarnpb.GetNewApplicationRequestProto{}, &yarnpb.GetNewApplicationResponseProto{}},
	}
	for _, c := range cases {
		err := cl.Call(ctx, c.method, c.req, c.resp)
		re := remote(t, err)
		if re.Class != c.class || !strings.Contains(re.Message, c.msg) {
			t.Errorf("%s: %s: %s", c.method, re.Class, re.Message)
		}
	}
	// getDelegationToken needs Kerberos.
	r, err := cl.GetClusterMetrics(ctx)
	if err != nil || r == nil {
		t.Fatalf("connection unusable after errors: %v", err)
	}
}

func TestBadSettingsRefuseToStart(t *testing.T) {
	cases := map[string][]string{
		"yarn.scheduler.maximum-allocation-mb = \"lots\": not an integer": {"yarn.scheduler.maximum-allocation-mb", "lots"},
		"yarn.resourcemanager.address = \"127.0.0.1:http\"":               {"yarn.resourcemanager.address", "127.0.0.1:http"},
		"exceeds yarn.scheduler.maximum-allocation-mb":                    {"yarn.scheduler.minimum-allocation-mb", "9000"},
		"variable loop": {"yarn.resourcemanager.hostname", "${yarn.resourcemanager.address}", "yarn.resourcemanager.address", "${yarn.resourcemanager.hostname}:1"},
		"yarn.resourcemanager.resource-profiles.enabled = \"true\": Bobbin does not support":                  {"yarn.resourcemanager.resource-profiles.enabled", "true"},
		"yarn.resourcemanager.reservation-system.enable = \"true\"":                                           {"yarn.resourcemanager.reservation-system.enable", "true"},
		"yarn.resourcemanager.opportunistic-container-allocation.enabled = \"true\": Bobbin does not support": {"yarn.resourcemanager.opportunistic-container-allocation.enabled", "true"},
		"yarn.webapp.api-service.enable = \"true\": Bobbin does not support":                                  {"yarn.webapp.api-service.enable", "true"},
		"5 resource types with memory-mb and vcores; Bobbin supports at most 4":                               {"yarn.resource-types", "yarn.io/gpu,yarn.io/fpga,disks"},
		"yarn.resource-types.fpga.units = \"bogus\": unknown unit":                                            {"yarn.resource-types", "fpga", "yarn.resource-types.fpga.units", "bogus"},
		"resource type yarn.io/gpu is listed twice":                                                           {"yarn.resource-types", "yarn.io/gpu,yarn.io/gpu"},
		"yarn.resourcemanager.scheduler.class = \"org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoScheduler\": Bobbin runs the Capacity Scheduler's configuration": {
			"yarn.resourcemanager.scheduler.class", "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoScheduler"},
	}
	// The Capacity Scheduler named explicitly is what Bobbin runs.
	if _, err := New(Options{Conf: testConf("yarn.resourcemanager.scheduler.class", "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler"), Logger: testutil.QuietLogger()}); err != nil {
		t.Errorf("CapacityScheduler named: %v", err)
	}
	for want, kv := range cases {
		_, err := New(Options{Conf: testConf(kv...), Logger: testutil.QuietLogger()})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: %v", kv, err)
		}
	}
}

func submit(t *testing.T, cl *rmclient.Client, id *yarnpb.ApplicationIdProto, queue string, mem int64) error {
	t.Helper()
	return cl.Call(context.Background(), "submitApplication", &yarnpb.SubmitApplicationRequestProto{
		ApplicationSubmissionContext: &yarnpb.ApplicationSubmissionContextProto{
			ApplicationId: id, ApplicationName: proto.String("pi"), Queue: proto.String(queue),
			ApplicationType: proto.String("MAPREDUCE"), Resource: &yarnpb.ResourceProto{Memory: proto.Int64(mem), VirtualCores: proto.Int32(1)},
		}}, &yarnpb.SubmitApplicationResponseProto{})
}

func TestSubmitListKillMove(t *testing.T) {
	_, cl := startRM(t, testConf("yarn.scheduler.maximum-allocation-mb", "4096"))
	ctx := context.Background()
	r, err := cl.GetNewApplication(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id := r.GetApplicationId()
	if err := submit(t, cl, id, "default", 1024); err != nil {
		t.Fatal(err)
	}
	rep, err := cl.GetApplicationReport(ctx, id)
	if err != nil || rep.GetYarnApplicationState() != yarnpb.YarnApplicationStateProto_ACCEPTED || rep.GetUser() != "alice" ||
		rep.GetQueue() != "default" || rep.GetName() != "pi" || rep.GetHost() != "N/A" || rep.GetRpcPort() != -1 {
		t.Fatalf("report %v %v", rep, err)
	}
	// A retried submission of the same id is accepted and changes nothing.
	if err := submit(t, cl, id, "etl", 1024); err != nil {
		t.Fatal(err)
	}
	apps, _ := cl.GetApplications(ctx, &yarnpb.GetApplicationsRequestProto{ApplicationTypes: []string{"mapreduce"}})
	if len(apps) != 1 || apps[0].GetQueue() != "default" {
		t.Fatalf("list %v", apps)
	}
	// Move to another leaf, then kill: KILLED with is_kill_completed.
	if err := cl.Call(ctx, "moveApplicationAcrossQueues", &yarnpb.MoveApplicationAcrossQueuesRequestProto{ApplicationId: id, TargetQueue: proto.String("daily")}, &yarnpb.MoveApplicationAcrossQueuesResponseProto{}); err != nil {
		t.Fatal(err)
	}
	var kr yarnpb.KillApplicationResponseProto
	if err := cl.Call(ctx, "forceKillApplication", &yarnpb.KillApplicationRequestProto{ApplicationId: id}, &kr); err != nil || !kr.GetIsKillCompleted() {
		t.Fatalf("kill %v %v", &kr, err)
	}
	rep, _ = cl.GetApplicationReport(ctx, id)
	if rep.GetYarnApplicationState() != yarnpb.YarnApplicationStateProto_KILLED || rep.GetFinalApplicationStatus() != yarnpb.FinalApplicationStatusProto_APP_KILLED || rep.GetQueue() != "daily" || rep.GetFinishTime() == 0 {
		t.Fatalf("after kill %v", rep)
	}
	if apps, _ := cl.GetApplications(ctx, &yarnpb.GetApplicationsRequestProto{ApplicationStates: []yarnpb.YarnApplicationStateProto{yarnpb.YarnApplicationStateProto_RUNNING}}); len(apps) != 0 {
		t.Fatalf("killed app listed as running: %v", apps)
	}
}

func TestSubmitRejections(t *testing.T) {
	_, cl := startRM(t, testConf("yarn.scheduler.maximum-allocation-mb", "4096"))
	ctx := context.Background()
	newID := func() *yarnpb.ApplicationIdProto {
		r, err := cl.GetNewApplication(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return r.GetApplicationId()
	}
	re := remote(t, submit(t, cl, newID(), "default", 8192))
	if re.Class != exceptions.InvalidResourceRequest || !strings.Contains(re.Message, "requestedMemory=8192, maxMemory=4096") {
		t.Fatalf("too big: %+v", re)
	}
	for queue, want := range map[string]string{
		"nosuch": "to unknown queue: nosuch",
		"etl":    "to non-leaf queue: etl",
		"hourly": "org.apache.hadoop.security.AccessControlException: Queue root.etl.hourly is STOPPED",
	} {
		id := newID()
		if err := submit(t, cl, id, queue, 1024); err != nil {
			t.Fatalf("%s: %v", queue, err)
		}
		rep, _ := cl.GetApplicationReport(ctx, id)
		if rep.GetYarnApplicationState() != yarnpb.YarnApplicationStateProto_FAILED || !strings.Contains(rep.GetDiagnostics(), want) {
			t.Errorf("%s: %v / %q", queue, rep.GetYarnApplicationState(), rep.GetDiagnostics())
		}
	}
}

func TestSubmitACL(t *testing.T) {
	rm, cl := startRM(t, testConf("yarn.acl.enable", "true"))
	ctx := context.Background()
	r, _ := cl.GetNewApplication(ctx)
	if err := submit(t, cl, r.GetApplicationId(), "default", 1024); err != nil {
		t.Fatal(err)
	}
	if rep, _ := cl.GetApplicationReport(ctx, r.GetApplicationId()); rep.GetYarnApplicationState() != yarnpb.YarnApplicationStateProto_ACCEPTED {
		t.Fatalf("default: %v (%s)", rep.GetYarnApplicationState(), rep.GetDiagnostics())
	}
	// The 3.x RM refuses the call itself, with AccessControlException; nothing is recorded.
	r, _ = cl.GetNewApplication(ctx)
	err := submit(t, cl, r.GetApplicationId(), "daily", 1024)
	var re *rpc.RemoteError
	if !errors.As(err, &re) || re.Class != rpc.ClassAccessControl || !strings.Contains(re.Message, "User alice does not have permission to submit application_") || !strings.HasSuffix(re.Message, " to queue daily") {
		t.Fatalf("submission to daily: %v", err)
	}
	if _, err := cl.GetApplicationReport(ctx, r.GetApplicationId()); err == nil {
		t.Fatal("a refused submission left an application behind")
	}
	// Over REST, RMWebServices answers it as BadRequestException naming the wrapped class.
	r, _ = cl.GetNewApplication(ctx)
	body := fmt.Sprintf(`{"application-id":%q,"application-name":"x","queue":"daily","am-container-spec":{"commands":{"command":"true"}},"resource":{"memory":1024,"vCores":1}}`,
		records.AppIDFromProto(r.GetApplicationId()))
	code, _, raw := restCall(t, rm, "POST", "/ws/v1/cluster/apps?user.name=alice", "", body)
	if code != 400 || !strings.Contains(raw, "BadRequestException") || !strings.Contains(raw, "org.apache.hadoop.security.AccessControlException: User alice does not have permission to submit") {
		t.Fatalf("REST submission to daily: %d %s", code, raw)
	}
}

// Backfilling runtimes: the bobbin.runtime tag, else the lifetime, else unknown; a tag that
// is not a duration refuses the submission with a message naming it.
func TestDeclaredRuntime(t *testing.T) {
	for _, tc := range []struct {
		tags     []string
		lifetime int64
		want     time.Duration
	}{{[]string{"etl", "bobbin.runtime=20m"}, 0, 20 * time.Minute}, {[]string{"Bobbin.Runtime=90"}, 5000, 90 * time.Second},
		{nil, 3_600_000, time.Hour}, {[]string{"nightly"}, -5, 0}} {
		if got, err := rmstate.DeclaredRuntime(tc.tags, tc.lifetime); err != nil || got != tc.want {
			t.Errorf("%v, lifetime %d: %v %v, want %v", tc.tags, tc.lifetime, got, err, tc.want)
		}
	}
	_, cl := startRM(t, testConf())
	ctx := context.Background()
	r, err := cl.GetNewApplication(ctx)
	if err != nil {
		t.Fatal(err)
	}
	err = cl.Call(ctx, "submitApplication", &yarnpb.SubmitApplicationRequestProto{ApplicationSubmissionContext: &yarnpb.ApplicationSubmissionContextProto{
		ApplicationId: r.GetApplicationId(), Queue: proto.String("default"), ApplicationTags: []string{"bobbin.runtime=soon"},
		Resource: &yarnpb.ResourceProto{Memory: proto.Int64(1024), VirtualCores: proto.Int32(1)}}}, &yarnpb.SubmitApplicationResponseProto{})
	if re := remote(t, err); re.Class != exceptions.YarnException || !strings.Contains(re.Message, `application tag "bobbin.runtime=soon"`) {
		t.Fatalf("bad runtime tag: %s %s", re.Class, re.Message)
	}
}

// The Capacity Scheduler's limits on unfinished applications, with its messages: the
// queue's maximum-applications, each user's share of it (minimum-user-limit-percent ×
// user-limit-factor), and the system's maximum-applications. A finished application
// frees its place.
func TestMaximumApplications(t *testing.T) {
	rm, alice := startRM(t, testConf(
		capacity.Prefix+"root.default.maximum-applications", "2",
		capacity.Prefix+"root.default.minimum-user-limit-percent", "50", // 2 × 0.5 × 1: one each
		capacity.Prefix+"root.default.user-limit-factor", "1",
		capacity.Prefix+"maximum-applications", "3",
		// Unset, daily's would be 3 × its 20 % of the cluster: 0, as in the Java RM.
		capacity.Prefix+"root.etl.daily.maximum-applications", "5",
	))
	ctx := context.Background()
	bob := rmclient.New(rm.ClientAddr().String(), "bob", rpc.ClientOptions{ConnectRetries: -1, Logger: testutil.QuietLogger()})
	carol := rmclient.New(rm.ClientAddr().String(), "carol", rpc.ClientOptions{ConnectRetries: -1, Logger: testutil.QuietLogger()})
	t.Cleanup(func() { bob.Close(); carol.Close() })
	try := func(cl *rmclient.Client, queue string) (*yarnpb.ApplicationIdProto, *yarnpb.ApplicationReportProto) {
		t.Helper()
		r, err := cl.GetNewApplication(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := submit(t, cl, r.GetApplicationId(), queue, 1024); err != nil {
			t.Fatal(err)
		}
		rep, err := cl.GetApplicationReport(ctx, r.GetApplicationId())
		if err != nil {
			t.Fatal(err)
		}
		return r.GetApplicationId(), rep
	}
	accepted := func(rep *yarnpb.ApplicationReportProto) bool {
		return rep.GetYarnApplicationState() == yarnpb.YarnApplicationStateProto_ACCEPTED
	}
	first, rep := try(alice, "default")
	if !accepted(rep) {
		t.Fatalf("first: %v %q", rep.GetYarnApplicationState(), rep.GetDiagnostics())
	}
	if _, rep := try(alice, "default"); accepted(rep) || !strings.Contains(rep.GetDiagnostics(),
		"org.apache.hadoop.security.AccessControlException: Queue root.default already has 1 applications from user alice cannot accept submission of application: application_") {
		t.Fatalf("alice's second: %v %q", rep.GetYarnApplicationState(), rep.GetDiagnostics())
	}
	if _, rep := try(bob, "default"); !accepted(rep) {
		t.Fatalf("bob's: %v %q", rep.GetYarnApplicationState(), rep.GetDiagnostics())
	}
	if _, rep := try(carol, "default"); accepted(rep) || !strings.Contains(rep.GetDiagnostics(),
		"org.apache.hadoop.security.AccessControlException: Queue root.default already has 2 applications, cannot accept submission of application: application_") {
		t.Fatalf("carol's, the queue full: %v %q", rep.GetYarnApplicationState(), rep.GetDiagnostics())
	}
	if _, rep := try(carol, "daily"); !accepted(rep) {
		t.Fatalf("carol's in daily: %v %q", rep.GetYarnApplicationState(), rep.GetDiagnostics())
	}
	// Three unfinished in the cluster: the system's limit.
	if _, rep := try(carol, "daily"); accepted(rep) || !strings.Contains(rep.GetDiagnostics(), "Maximum system application limit reached,cannot accept submission of application: application_") {
		t.Fatalf("the fourth, the system full: %v %q", rep.GetYarnApplicationState(), rep.GetDiagnostics())
	}
	// A finished application frees its place.
	if err := alice.Call(ctx, "forceKillApplication", &yarnpb.KillApplicationRequestProto{ApplicationId: first}, &yarnpb.KillApplicationResponseProto{}); err != nil {
		t.Fatal(err)
	}
	if _, rep := try(alice, "default"); !accepted(rep) {
		t.Fatalf("after a kill: %v %q", rep.GetYarnApplicationState(), rep.GetDiagnostics())
	}
}

// An application submitted without a priority takes its queue's
// default-application-priority (3.x), clamped to the cluster's maximum; one that names a
// priority keeps it.
func TestDefaultApplicationPriority(t *testing.T) {
	_, cl := startRM(t, testConf("yarn.cluster.max-application-priority", "10",
		capacity.Prefix+"root.etl.daily.default-application-priority", "5"))
	ctx := context.Background()
	for _, c := range []struct {
		queue    string
		priority *int32
		want     int32
	}{{"daily", nil, 5}, {"daily", proto.Int32(2), 2}, {"default", nil, 0}} {
		r, err := cl.GetNewApplication(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sc := &yarnpb.ApplicationSubmissionContextProto{ApplicationId: r.GetApplicationId(), Queue: proto.String(c.queue), UnmanagedAm: proto.Bool(true)}
		if c.priority != nil {
			sc.Priority = &yarnpb.PriorityProto{Priority: c.priority}
		}
		if err := cl.Call(ctx, "submitApplication", &yarnpb.SubmitApplicationRequestProto{ApplicationSubmissionContext: sc}, &yarnpb.SubmitApplicationResponseProto{}); err != nil {
			t.Fatal(err)
		}
		rep, err := cl.GetApplicationReport(ctx, r.GetApplicationId())
		if err != nil {
			t.Fatal(err)
		}
		if got := rep.GetPriority().GetPriority(); got != c.want {
			t.Errorf("%s, priority %v: report priority %d, want %d", c.queue, c.priority, got, c.want)
		}
	}
}

// getQueueInfo carries each queue's QueueStatistics (the Java RM's QueueMetrics), which
// `yarn top` shows: applications submitted, pending and killed count in their leaf queue
// and in every queue above it.
func TestQueueInfoStatistics(t *testing.T) {
	_, cl := startRM(t, testConf())
	ctx := context.Background()
	var ids []*yarnpb.ApplicationIdProto
	for range 2 {
		r, err := cl.GetNewApplication(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := submit(t, cl, r.GetApplicationId(), "default", 1024); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.GetApplicationId())
	}
	if err := cl.Call(ctx, "forceKillApplication", &yarnpb.KillApplicationRequestProto{ApplicationId: ids[1]}, &yarnpb.KillApplicationResponseProto{}); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 5*time.Second, "the statistics of default and root", func() bool {
		for _, name := range []string{"default", "root"} {
			q, err := cl.GetQueueInfo(ctx, &yarnpb.GetQueueInfoRequestProto{QueueName: proto.String(name)})
			st := q.GetQueueStatistics()
			if err != nil || st == nil || st.GetNumAppsSubmitted() != 2 || st.GetNumAppsPending() != 1 || st.GetNumAppsKilled() != 1 ||
				st.GetNumActiveUsers() != 1 || st.GetAllocatedContainers() != 0 {
				return false
			}
		}
		return true
	})
	q, _ := cl.GetQueueInfo(ctx, &yarnpb.GetQueueInfoRequestProto{QueueName: proto.String("etl")})
	if st := q.GetQueueStatistics(); st == nil || st.GetNumAppsSubmitted() != 0 {
		t.Fatalf("etl's statistics: %v", st)
	}
}

// A queue's available resources are what the Java Capacity Scheduler reports (3.1 to 3.4,
// what `yarn top` adds up over root's children): its guarantee, multiplied as Java
// multiplies (float, rounded down), less its use; its maximum capacity plays no part.
// On 4096 MB and 4 vcores, default (60 %) has 2457 MB and 2 vcores, etl (40 %) 1638 MB
// and 1 vcore, the root all of it.
func TestQueueStatisticsAvailableLikeJava(t *testing.T) {
	rm, cl := startRM(t, testConf())
	nm := newFakeNM(t, rm, 45454)
	nm.register(4096, 4)
	nm.heartbeat(0)
	ctx := context.Background()
	want := map[string][2]int64{"root": {4096, 4}, "default": {2457, 2}, "etl": {1638, 1}}
	testutil.Eventually(t, 5*time.Second, "queue statistics", func() bool {
		for name, w := range want {
			q, err := cl.GetQueueInfo(ctx, &yarnpb.GetQueueInfoRequestProto{QueueName: proto.String(name)})
			if err != nil {
				t.Fatal(err)
			}
			if st := q.GetQueueStatistics(); st.GetAvailableMemoryMB() != w[0] || st.GetAvailableVCores() != w[1] {
				t.Logf("%s: available %d MB %d vcores, want %v", name, st.GetAvailableMemoryMB(), st.GetAvailableVCores(), w)
				return false
			}
		}
		return true
	})
}
