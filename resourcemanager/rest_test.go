package resourcemanager

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/client/amclient"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/tools/nmsim"
)

// restCall makes one REST call on the RM's web address and returns the status and the
// decoded JSON body (nil when the body is not JSON).
func restCall(t *testing.T, rm *ResourceManager, method, path, accept, body string) (int, map[string]any, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+rm.WebAddr().String()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var v map[string]any
	if json.Unmarshal(raw, &v) != nil {
		v = nil
	}
	return resp.StatusCode, v, string(raw)
}

// The RM REST API in the Java RM's shapes: the cluster's, applications' (with filters),
// attempts' and nodes' resources, the state change that kills an application, XML on
// request, and RemoteException errors with the Java statuses.
func TestRESTAPI(t *testing.T) {
	sc := newSimCluster(t, testConf(), 1, nil)
	release := make(chan struct{})
	running := make(chan struct{}, 1)
	sc.am = func(ctx context.Context, l *nmsim.Launch, am *amclient.Client) int32 {
		if _, err := am.Register(ctx, "am-host", 4242, "http://am-host:8080/ui"); err != nil {
			t.Errorf("register: %v", err)
			return 1
		}
		am.Request(20, "*", 1024, 1, 1)
		for got := 0; got < 1; {
			resp, err := am.Allocate(ctx, 0.5)
			if err != nil {
				t.Errorf("allocate: %v", err)
				return 1
			}
			for _, c := range resp.GetAllocatedContainers() {
				if err := startCommand(ctx, am, l.ID.Attempt, c, "run-until-stopped"); err != nil {
					t.Errorf("start: %v", err)
					return 1
				}
				got++
			}
			time.Sleep(10 * time.Millisecond)
		}
		running <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		// Killed over REST: the AM's container is stopped; nothing more to do.
		return 0
	}
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	app := sc.submit(1, 0)
	appID := records.AppIDFromProto(app).String()
	select {
	case <-running:
	case <-time.After(20 * time.Second):
		t.Fatal("the AM did not get its container")
	}

	// Cluster info and metrics.
	code, v, raw := restCall(t, sc.rm, "GET", "/ws/v1/cluster/info", "", "")
	info, _ := v["clusterInfo"].(map[string]any)
	if code != 200 || info["haState"] != "ACTIVE" || info["state"] != "STARTED" || info["hadoopVersion"] == nil {
		t.Fatalf("info %d %s", code, raw)
	}
	_, v, raw = restCall(t, sc.rm, "GET", "/ws/v1/cluster/metrics", "", "")
	m := v["clusterMetrics"].(map[string]any)
	if m["appsRunning"] != 1.0 || m["allocatedMB"] != 2048.0 || m["availableMB"] != 8192.0-2048 || m["containersAllocated"] != 2.0 ||
		m["activeNodes"] != 1.0 || m["totalNodes"] != 1.0 || m["appsSubmitted"] != 1.0 {
		t.Fatalf("metrics %s", raw)
	}

	// The application, alone and in lists.
	_, v, raw = restCall(t, sc.rm, "GET", "/ws/v1/cluster/apps/"+appID, "", "")
	a := v["app"].(map[string]any)
	if a["id"] != appID || a["state"] != "RUNNING" || a["finalStatus"] != "UNDEFINED" || a["user"] != "alice" || a["queue"] != "default" ||
		a["allocatedMB"] != 2048.0 || a["runningContainers"] != 2.0 || a["trackingUI"] != "ApplicationMaster" ||
		a["amRPCAddress"] != "am-host:4242" || !strings.Contains(fmt.Sprint(a["amContainerLogs"]), "/node/containerlogs/container_") ||
		a["progress"] != 50.0 || a["elapsedTime"].(float64) < 0 {
		t.Fatalf("app %s", raw)
	}
	for _, k := range []string{"memorySeconds", "vcoreSeconds", "resourceSecondsMap", "clusterUsagePercentage", "queueUsagePercentage",
		"preemptedResourceMB", "logAggregationStatus", "unmanagedApplication", "timeouts", "masterNodeId", "amHostHttpAddress"} {
		if _, ok := a[k]; !ok {
			t.Errorf("app lacks %q: %s", k, raw)
		}
	}
	if a["clusterUsagePercentage"] != 25.0 {
		t.Errorf("clusterUsagePercentage %v, want 25 (2048 of 8192 MB)", a["clusterUsagePercentage"])
	}
	// A queue by name or, as 3.3+ clients name it, by path.
	for _, q := range []string{"", "?states=running", "?state=RUNNING&user=alice&queue=default&limit=1", "?queue=root.default", "?applicationTypes=yarn"} {
		_, v, raw = restCall(t, sc.rm, "GET", "/ws/v1/cluster/apps"+q, "", "")
		list, _ := v["apps"].(map[string]any)["app"].([]any)
		if len(list) != 1 {
			t.Fatalf("apps%s: %s", q, raw)
		}
	}
	for _, q := range []string{"?states=finished", "?user=bob", "?finalStatus=SUCCEEDED"} {
		_, v, raw = restCall(t, sc.rm, "GET", "/ws/v1/cluster/apps"+q, "", "")
		if apps, ok := v["apps"].(map[string]any); !ok || len(apps) != 0 {
			t.Fatalf("apps%s: %s (want an empty apps object)", q, raw)
		}
	}
	_, v, raw = restCall(t, sc.rm, "GET", "/ws/v1/cluster/apps/"+appID+"/appattempts", "", "")
	atts := v["appAttempts"].(map[string]any)["appAttempt"].([]any)
	att := atts[0].(map[string]any)
	if len(atts) != 1 || att["id"] != 1.0 || !strings.HasPrefix(fmt.Sprint(att["containerId"]), "container_") || att["nodeId"] == "" ||
		att["appAttemptId"] != records.AppIDFromProto(app).Attempt(1).String() {
		t.Fatalf("attempts %s", raw)
	}

	// Nodes.
	_, v, raw = restCall(t, sc.rm, "GET", "/ws/v1/cluster/nodes", "", "")
	nodes := v["nodes"].(map[string]any)["node"].([]any)
	n := nodes[0].(map[string]any)
	if len(nodes) != 1 || n["state"] != "RUNNING" || n["usedMemoryMB"] != 2048.0 || n["availMemoryMB"] != 6144.0 || n["numContainers"] != 2.0 {
		t.Fatalf("nodes %s", raw)
	}
	if code, v, raw = restCall(t, sc.rm, "GET", "/ws/v1/cluster/nodes/"+fmt.Sprint(n["id"]), "", ""); code != 200 || v["node"].(map[string]any)["id"] != n["id"] {
		t.Fatalf("node %d %s", code, raw)
	}
	if _, v, _ = restCall(t, sc.rm, "GET", "/ws/v1/cluster/nodes?states=LOST", "", ""); len(v["nodes"].(map[string]any)) != 0 {
		t.Fatalf("lost nodes %v", v)
	}

	// The scheduler's queue tree, with the quota groups.
	_, v, raw = restCall(t, sc.rm, "GET", "/ws/v1/cluster/scheduler", "", "")
	si := v["scheduler"].(map[string]any)["schedulerInfo"].(map[string]any)
	if si["type"] != "capacityScheduler" || si["queueName"] != "root" || si["usedCapacity"] != 25.0 {
		t.Fatalf("scheduler %s", raw)
	}
	var def, etl map[string]any
	for _, q := range si["queues"].(map[string]any)["queue"].([]any) {
		switch q := q.(map[string]any); q["queueName"] {
		case "default":
			def = q
		case "etl":
			etl = q
		}
	}
	if def == nil || def["type"] != "capacitySchedulerLeafQueueInfo" || def["numApplications"] != 1.0 || def["numActiveApplications"] != 1.0 ||
		def["allocatedContainers"] != 2.0 || def["resourcesUsed"].(map[string]any)["memory"] != 2048.0 || def["absoluteCapacity"] != 60.0 ||
		def["usedCapacity"] != 41.6667 || def["users"].(map[string]any)["user"].([]any)[0].(map[string]any)["username"] != "alice" {
		t.Fatalf("default queue %v", def)
	}
	qg := def["quotaGroup"].(map[string]any)["partitions"].([]any)[0].(map[string]any)
	if qg["quotaShare"] != 60.0 || qg["used"].(map[string]any)["memory"] != 2048.0 || qg["priorityValue"].(float64) <= 0 {
		t.Fatalf("default queue's group %v", def["quotaGroup"])
	}
	// The RPC's QueueInfo (yarn queue -status) agrees: current capacity 2048 of 60 % of 8192 MB.
	qi, err := sc.cl.GetQueueInfo(context.Background(), &yarnpb.GetQueueInfoRequestProto{QueueName: proto.String("default")})
	if err != nil || math.Abs(float64(qi.GetCurrentCapacity())-0.416667) > 1e-4 {
		t.Fatalf("queue info %v %v", qi, err)
	}
	if etl == nil || etl["type"] != nil || len(etl["queues"].(map[string]any)["queue"].([]any)) != 2 || etl["numApplications"] != 0.0 {
		t.Fatalf("etl queue %v", etl)
	}

	// XML, as JAXB writes the same objects.
	code, _, raw = restCall(t, sc.rm, "GET", "/ws/v1/cluster/apps", "application/xml", "")
	var x struct {
		XMLName xml.Name `xml:"apps"`
		App     []struct {
			ID    string `xml:"id"`
			State string `xml:"state"`
		} `xml:"app"`
	}
	if code != 200 || xml.Unmarshal([]byte(raw), &x) != nil || len(x.App) != 1 || x.App[0].ID != appID || x.App[0].State != "RUNNING" {
		t.Fatalf("XML apps %d %s", code, raw)
	}

	// Errors: Apache's RemoteException and statuses.
	for _, tc := range []struct {
		method, path, body string
		code               int
		exception, msg     string
	}{
		{"GET", "/ws/v1/cluster/apps/application_1_0099", "", 404, "NotFoundException", "java.lang.Exception: app with id: application_1_0099 not found"},
		{"GET", "/ws/v1/cluster/apps/foo", "", 400, "BadRequestException", "Invalid ApplicationId prefix: foo"},
		{"GET", "/ws/v1/cluster/apps?states=SLEEPING", "", 400, "BadRequestException", "Invalid application-state SLEEPING"},
		{"GET", "/ws/v1/cluster/apps?limit=x", "", 400, "BadRequestException", "limit value must be a number!"},
		{"GET", "/ws/v1/cluster/apps?queue=nosuch", "", 400, "BadRequestException", "Unknown queue: nosuch"},
		{"GET", "/ws/v1/cluster/nodes?states=ASLEEP", "", 400, "IllegalArgumentException", "No enum constant"},
		{"GET", "/ws/v1/cluster/nodes/nosuch:1", "", 404, "NotFoundException", "nodeId, nosuch:1, is not found"},
		{"PUT", "/ws/v1/cluster/apps/" + appID + "/state", "{not json", 400, "WebApplicationException", "UnmarshalException"},
		{"PUT", "/ws/v1/cluster/apps/" + appID + "/state", `{"state":"RUNNING_FAST"}`, 400, "BadRequestException", "Only 'KILLED' is allowed"},
		{"GET", "/ws/v1/cluster/nosuch", "", 404, "NotFoundException", ""},
	} {
		code, v, raw := restCall(t, sc.rm, tc.method, tc.path, "", tc.body)
		re, _ := v["RemoteException"].(map[string]any)
		if code != tc.code || re == nil || re["exception"] != tc.exception || !strings.Contains(fmt.Sprint(re["message"]), tc.msg) ||
			!strings.HasSuffix(fmt.Sprint(re["javaClassName"]), "."+tc.exception) {
			t.Errorf("%s %s: %d %s; want %d %s %q", tc.method, tc.path, code, raw, tc.code, tc.exception, tc.msg)
		}
	}

	// A huge query is refused before any handler runs.
	if code, _, _ := restCall(t, sc.rm, "GET", "/ws/v1/cluster/apps?user="+strings.Repeat("x", 100<<10), "", ""); code != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a 100 KiB query: %d, want 431", code)
	}

	// Kill over REST: {"state":"KILLED"}, as user.name.
	code, v, raw = restCall(t, sc.rm, "GET", "/ws/v1/cluster/apps/"+appID+"/state", "", "")
	if code != 200 || v["state"] != "RUNNING" {
		t.Fatalf("state %d %s", code, raw)
	}
	code, v, raw = restCall(t, sc.rm, "PUT", "/ws/v1/cluster/apps/"+appID+"/state?user.name=alice", "", `{"state":"KILLED"}`)
	if code != 200 || v["state"] != "KILLED" {
		t.Fatalf("kill %d %s", code, raw)
	}
	rep := sc.waitFinal(app, 10*time.Second)
	if rep.GetYarnApplicationState() != yarnpb.YarnApplicationStateProto_KILLED || !strings.Contains(rep.GetDiagnostics(), "killed by user alice") {
		t.Fatalf("after the REST kill: %v", rep)
	}
	_, v, raw = restCall(t, sc.rm, "GET", "/ws/v1/cluster/apps/"+appID, "", "")
	if a := v["app"].(map[string]any); a["finalStatus"] != "KILLED" || a["allocatedMB"] != -1.0 || a["trackingUI"] == "ApplicationMaster" ||
		a["memorySeconds"].(float64) <= 0 {
		t.Fatalf("killed app %s", raw)
	}
}

// A client without Java submits over REST (new-application, then POST /apps) and the
// application runs to FINISHED with the launch context it sent; its queue and priority
// change over REST; /appstatistics counts it.
func TestRESTSubmission(t *testing.T) {
	sc := newSimCluster(t, testConf("yarn.cluster.max-application-priority", "10"), 1, nil)
	got := make(chan *nmsim.Launch, 1)
	registered := make(chan struct{})
	proceed := make(chan struct{})
	sc.am = func(ctx context.Context, l *nmsim.Launch, am *amclient.Client) int32 {
		got <- l
		if _, err := am.Register(ctx, "h", 0, ""); err != nil {
			t.Errorf("register: %v", err)
			return 1
		}
		close(registered) // RUNNING from here on
		select {
		case <-proceed:
		case <-ctx.Done():
			return 1
		}
		am.Finish(ctx, yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED, "rest app done", "")
		return 0
	}
	code, v, raw := restCall(t, sc.rm, "POST", "/ws/v1/cluster/apps/new-application?user.name=carol", "", "")
	id, _ := v["application-id"].(string)
	if code != 200 || !strings.HasPrefix(id, "application_") || v["maximum-resource-capability"].(map[string]any)["memory"] != 8192.0 {
		t.Fatalf("new application %d %s", code, raw)
	}
	body := fmt.Sprintf(`{"application-id":%q,"application-name":"rest-shell","queue":"default","priority":3,
		"am-container-spec":{"commands":{"command":"echo hello > out; sleep 1"},
			"environment":{"entry":[{"key":"GREETING","value":"hello"},{"key":"MODE","value":"rest"}]},
			"local-resources":{"entry":{"key":"script.sh","value":{"resource":"hdfs://nn:8020/tmp/script.sh","type":"FILE","visibility":"APPLICATION","size":12,"timestamp":1700000000000}}}},
		"resource":{"memory":1024,"vCores":1},"application-type":"SHELL","max-app-attempts":1,"application-tags":{"tag":["nightly"]}}`, id)
	code, _, raw = restCall(t, sc.rm, "POST", "/ws/v1/cluster/apps?user.name=carol", "", body)
	if code != http.StatusAccepted {
		t.Fatalf("submit %d %s", code, raw)
	}
	var l *nmsim.Launch
	select {
	case l = <-got:
	case <-time.After(20 * time.Second):
		t.Fatal("the REST-submitted application's AM did not start")
	}
	env := map[string]string{}
	for _, e := range l.Context.GetEnvironment() {
		env[e.GetKey()] = e.GetValue()
	}
	lr := l.Context.GetLocalResources()
	if strings.Join(l.Context.GetCommand(), " ") != "echo hello > out; sleep 1" || env["GREETING"] != "hello" || env["MODE"] != "rest" ||
		len(lr) != 1 || lr[0].GetKey() != "script.sh" || lr[0].GetValue().GetResource().GetHost() != "nn" || lr[0].GetValue().GetResource().GetPort() != 8020 {
		t.Fatalf("launch context %v", l.Context)
	}
	_, v, raw = restCall(t, sc.rm, "GET", "/ws/v1/cluster/apps/"+id, "", "")
	a := v["app"].(map[string]any)
	if a["user"] != "carol" || a["name"] != "rest-shell" || a["applicationType"] != "SHELL" || a["priority"] != 3.0 || a["applicationTags"] != "nightly" {
		t.Fatalf("submitted app %s", raw)
	}
	// Queue and priority.
	if code, v, raw = restCall(t, sc.rm, "PUT", "/ws/v1/cluster/apps/"+id+"/queue?user.name=carol", "", `{"queue":"daily"}`); code != 200 || v["queue"] != "daily" {
		t.Fatalf("move %d %s", code, raw)
	}
	if code, v, raw = restCall(t, sc.rm, "PUT", "/ws/v1/cluster/apps/"+id+"/queue", "", `{"queue":"etl"}`); code != 500 && code != 400 || !strings.Contains(raw, "not a leaf queue") {
		t.Fatalf("move to a parent queue %d %s", code, raw)
	}
	if code, v, raw = restCall(t, sc.rm, "PUT", "/ws/v1/cluster/apps/"+id+"/priority", "", `{"priority":7}`); code != 200 || v["priority"] != 7.0 {
		t.Fatalf("priority %d %s", code, raw)
	}
	if _, v, raw = restCall(t, sc.rm, "GET", "/ws/v1/cluster/apps/"+id+"/priority", "", ""); v["priority"] != 7.0 {
		t.Fatalf("priority %s", raw)
	}
	select {
	case <-registered:
	case <-time.After(20 * time.Second):
		t.Fatal("the REST-submitted application's AM did not register")
	}
	_, v, raw = restCall(t, sc.rm, "GET", "/ws/v1/cluster/appstatistics?states=running,finished&applicationTypes=shell", "", "")
	items := v["appStatInfo"].(map[string]any)["statItem"].([]any)
	if len(items) != 2 || items[0].(map[string]any)["state"] != "RUNNING" || items[0].(map[string]any)["count"] != 1.0 ||
		items[1].(map[string]any)["count"] != 0.0 || items[0].(map[string]any)["type"] != "shell" {
		t.Fatalf("appstatistics %s", raw)
	}
	if code, _, raw = restCall(t, sc.rm, "GET", "/ws/v1/cluster/appstatistics?applicationTypes=a,b", "", ""); code != 400 || !strings.Contains(raw, "at most one applicationType") {
		t.Fatalf("appstatistics with two types %d %s", code, raw)
	}
	close(proceed)
	rep := sc.waitFinal(&yarnpb.ApplicationIdProto{Id: proto.Int32(1), ClusterTimestamp: proto.Int64(sc.rm.Core().ClusterTimestamp())}, 20*time.Second)
	if rep.GetYarnApplicationState() != yarnpb.YarnApplicationStateProto_FINISHED || rep.GetDiagnostics() != "rest app done" {
		t.Fatalf("REST-submitted application ended %v", rep)
	}
	// Bad submissions.
	for _, tc := range []struct{ body, want string }{
		{`{"application-id":"application_1_x"}`, "Invalid ApplicationId"},
		{`{"application-id":` + fmt.Sprintf("%q", id) + `,"credentials":{"tokens":{}}}`, "credentials"},
		{`[1,2`, "UnmarshalException"},
	} {
		if code, _, raw := restCall(t, sc.rm, "POST", "/ws/v1/cluster/apps", "", tc.body); code != 400 || !strings.Contains(raw, tc.want) {
			t.Errorf("submission %s: %d %s", tc.body, code, raw)
		}
	}
}

// Slow web clients (headers sent a byte at a time, never finished) hold nothing the RPC
// ports or other web callers need: both answer while 200 of them hang on.
func TestSlowWebClientsDoNotHoldTheRM(t *testing.T) {
	sc := newSimCluster(t, testConf(), 1, nil)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < 200; i++ {
		c, err := net.Dial("tcp", sc.rm.WebAddr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte("GET /ws/v1/cluster/apps HTTP/1.1\r\nHost: rm\r\nX-Slow: "))
		conns = append(conns, c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, err := sc.cl.GetClusterMetrics(ctx)
	if err != nil || m.GetNumNodeManagers() != 1 {
		t.Fatalf("RPC beside slow web clients: %v %v", m, err)
	}
	if code, v, raw := restCall(t, sc.rm, "GET", "/ws/v1/cluster/info", "", ""); code != 200 || v["clusterInfo"] == nil {
		t.Fatalf("REST beside slow web clients: %d %s", code, raw)
	}
}

// OPTIONS on any web path is answered 200 with the methods allowed, as by the Java RM's
// Jetty: Hadoop's client authenticator (`yarn top`, the log and timeline clients) opens
// every endpoint with OPTIONS first and fails on a 404 ("Error while authenticating with
// endpoint").
func TestWebAnswersOptions(t *testing.T) {
	sc := newSimCluster(t, testConf(), 1, nil)
	for _, path := range []string{"/ws/v1/cluster/info", "/ws/v1/cluster/apps?user.name=alice", "/cluster", "/jmx"} {
		req, _ := http.NewRequest(http.MethodOptions, "http://"+sc.rm.WebAddr().String()+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Allow"), "GET") {
			t.Errorf("OPTIONS %s: %d, Allow %q", path, resp.StatusCode, resp.Header.Get("Allow"))
		}
	}
	if code, _, _ := restCall(t, sc.rm, "GET", "/ws/v1/cluster/info", "", ""); code != http.StatusOK {
		t.Fatalf("GET after OPTIONS: %d", code)
	}
}
