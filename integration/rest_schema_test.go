package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// restEndpoints are the RM REST resources compared with the Apache RM's, by the file the
// cluster script saves each to. $FIN is a finished application (pi), $RUN a running one
// (distributed shell), $NODE the NodeManager.
var restEndpoints = []struct{ file, path string }{
	{"info", "/ws/v1/cluster/info"},
	{"metrics", "/ws/v1/cluster/metrics"},
	{"scheduler", "/ws/v1/cluster/scheduler"},
	{"apps", "/ws/v1/cluster/apps"},
	{"app-finished", "/ws/v1/cluster/apps/$FIN"},
	{"app-running", "/ws/v1/cluster/apps/$RUN"},
	{"attempts", "/ws/v1/cluster/apps/$RUN/appattempts"},
	{"state", "/ws/v1/cluster/apps/$RUN/state"},
	{"nodes", "/ws/v1/cluster/nodes"},
	{"node", "/ws/v1/cluster/nodes/$NODE"},
	{"appstatistics", "/ws/v1/cluster/appstatistics"},
	{"app-unknown", "/ws/v1/cluster/apps/application_1_0099"},
	// The NodeManager's (Bobbin's NM under Bobbin's RM, Apache's under Apache's); $CONT is
	// the distributed shell's running container.
	{"nm-info", "/ws/v1/node/info"},
	{"nm-apps", "/ws/v1/node/apps"},
	{"nm-app", "/ws/v1/node/apps/$RUN"},
	{"nm-containers", "/ws/v1/node/containers"},
	{"nm-container", "/ws/v1/node/containers/$CONT"},
	{"nm-container-unknown", "/ws/v1/node/containers/container_1_0099_01_000001"},
}

// proxyEndpoints are the web proxy's answers compared with the Apache RM's (status and
// Location): a finished MapReduce job (to its history page), a running distributed shell
// (its AM registers no page: to the RM's application page) and an unknown application.
var proxyEndpoints = []struct{ file, path string }{
	{"proxy-finished", "/proxy/$FIN/"},
	{"proxy-running", "/proxy/$RUN/"},
	{"proxy-unknown", "/proxy/application_1_0099/"},
}

// labelEndpoints are the node-label resources, read after the scenario added the label
// gpu and put it on one node (over REST on 3.1.1, with rmadmin on 2.7.3, whose REST
// writes take other bodies). Their key sets are compared on 3.1.1 only: 2.7.3 answers in
// older shapes ({"nodeLabels":"gpu"}), and Bobbin, which cannot tell a 2.7.3 script from a
// 3.x one, answers in 3.x's (docs/rest.md).
var labelEndpoints = []struct{ file, path string }{
	{"labels-cluster", "/ws/v1/cluster/get-node-labels"},
	{"labels-node-to-labels", "/ws/v1/cluster/get-node-to-labels"},
	{"labels-mappings", "/ws/v1/cluster/label-mappings"},
	{"labels-of-node", "/ws/v1/cluster/nodes/$NODE/get-labels"},
}

// restMissingOK are keys the Apache RM has that Bobbin leaves out, and why.
var restMissingOK = map[string]string{
	"app.resourceRequests": "the entries' keys: Bobbin lists only what is outstanding (numContainers above 0), where the Java " +
		"scheduler keeps each satisfied request with numContainers 0, so a running application that got its containers has " +
		"entries on Apache's RM and none on Bobbin's (2.7.3's entries are ResourceRequest records, 3.x's ResourceRequestInfo: " +
		"Bobbin writes 3.x's, checked in TestSchedulerRESTPendingResources)",
	"apps.app.resourceRequests": "(as app.resourceRequests)",
	"scheduler.schedulerInfo.health.operationsInfo": "3.1.1 writes the last operations as a map ({\"entry\": [{\"key\", \"value\"}]}); " +
		"Bobbin writes 3.4's list of operations, each naming itself (3.4.2's keys are compared in TestHadoop3CLISameAnswersAsApacheRM)",
}

// missingOK looks a key, or the key it is under, up in restMissingOK.
func missingOK(key string) (string, bool) {
	for k := key; k != ""; {
		if why, ok := restMissingOK[k]; ok {
			return why, true
		}
		i := strings.LastIndexByte(k, '.')
		if i < 0 {
			break
		}
		k = k[:i]
	}
	return "", false
}

// TestRESTSchemaMatchesApache runs the same scenario — pi 2 10 finished, a distributed
// shell running, two NodeManagers, one of them labelled — on the Apache RM and on
// Bobbin's, of Hadoop 2.7.3 and 3.1.1,
// saves every REST resource above from each, and compares their JSON key sets
// recursively: every key the Apache RM sends, Bobbin sends too (restMissingOK lists the
// exceptions), and the statuses agree. Bobbin's additions are logged. The running
// application is then killed with PUT {"state":"KILLED"}.
func TestRESTSchemaMatchesApache(t *testing.T) {
	t.Parallel() // its subtests join the other clusters' tests, not a batch of their own
	// The four clusters run side by side, each in a slot of its own (one test of two
	// clusters in a row was the suite's longest), and are queued for slots as soon as
	// this test runs: a level of subtests between would queue them again, behind every
	// other test's, and leave them the suite's tail. The comparisons follow.
	snaps := map[string]map[string]restResponse{}
	var mu sync.Mutex
	t.Run("clusters", func(t *testing.T) {
		for _, v := range []string{hadoop2, hadoop3} {
			for _, rm := range []string{"apache", "bobbin"} {
				t.Run(v+"-"+rm, func(t *testing.T) {
					t.Parallel() // each cluster has its own network namespace
					snap := restSnapshot(t, v, rm == "apache")
					mu.Lock()
					snaps[v+"-"+rm] = snap
					mu.Unlock()
				})
			}
		}
	})
	for _, v := range []string{hadoop2, hadoop3} {
		t.Run(v, func(t *testing.T) {
			apache, bobbin := snaps[v+"-apache"], snaps[v+"-bobbin"]
			if apache == nil || bobbin == nil {
				t.Fatal("a cluster's scenario failed (above)")
			}
			compareRESTKeys(t, v, restEndpoints, apache, bobbin)
			if a, b := apache["nm-log"], bobbin["nm-log"]; a.status != 200 || b.status != 200 {
				t.Errorf("a container's stdout over the NM's REST API: Apache %d, Bobbin %d %q", a.status, b.status, b.body)
			}
			// Labels: added and put on a node with the version's own means (3.1.1: REST,
			// answered 200; 2.7.3: rmadmin, exit status 0).
			for _, name := range []string{"label-add", "label-replace"} {
				if a, b := apache[name], bobbin[name]; a.status != b.status || (b.status != 200 && b.status != 0) {
					t.Errorf("%s: Apache %d, Bobbin %d", name, a.status, b.status)
				}
			}
			for _, e := range labelEndpoints {
				a, b := apache[e.file], bobbin[e.file]
				if v != hadoop3 && e.file == "labels-mappings" {
					continue // 3.x's: 2.7.3 answers 404
				}
				if a.status != b.status || !strings.Contains(b.body, "gpu") {
					t.Errorf("%s: Apache %d %s\nBobbin %d %s", e.path, a.status, a.body, b.status, b.body)
				}
				if v != hadoop3 {
					t.Logf("%s: 2.7.3's shape %s, Bobbin's (3.x) %s", e.path, a.body, b.body)
					continue
				}
				ak, bk := jsonKeys(t, e.file, a.body), jsonKeys(t, e.file, b.body)
				if len(ak) != len(bk) {
					t.Errorf("%s: Apache %s\nBobbin %s", e.path, a.body, b.body)
				}
				for k := range ak {
					if !bk[k] {
						t.Errorf("%s: Bobbin lacks %s", e.path, k)
					}
				}
			}
			compareJMX(t, apache, bobbin)
			// The web proxy: the MR AM's pages through it while pi runs, and its answers
			// for finished, running and unknown applications, as the Apache RM's proxy.
			for _, name := range []string{"proxy-am-info", "proxy-am-page"} {
				if a, b := apache[name], bobbin[name]; b.status != 200 || b.status != a.status {
					t.Errorf("%s through the web proxy: Apache %d, Bobbin %d\n%.300s", name, a.status, b.status, b.body)
				}
			}
			if a, b := jsonKeys(t, "proxy-am-info", apache["proxy-am-info"].body), jsonKeys(t, "proxy-am-info", bobbin["proxy-am-info"].body); !b["info.appId"] || len(a) != len(b) {
				t.Errorf("the MR AM's /ws/v1/mapreduce/info through the proxy: Apache %v, Bobbin %v", a, b)
			}
			if !strings.Contains(bobbin["proxy-am-page"].body, "MapReduce") {
				t.Errorf("the MR AM's job page through the proxy:\n%.500s", bobbin["proxy-am-page"].body)
			}
			if b := bobbin["proxy-finished"].body; !strings.Contains(b, "FINISHED, final status SUCCEEDED") {
				t.Errorf("the proxy's page of the finished pi does not name its final state:\n%s", b)
			}
			ids := regexp.MustCompile(`(application|job)_\d+_`)
			for _, e := range proxyEndpoints {
				a, b := apache[e.file], bobbin[e.file]
				// The Java RM names a loopback web address by the local host's canonical
				// name (localhost here), Bobbin by the address configured.
				norm := func(l string) string {
					return strings.Replace(ids.ReplaceAllString(l, "${1}_T_"), "//localhost:", "//127.0.0.1:", 1)
				}
				al, bl := norm(a.location), norm(b.location)
				if a.status != b.status || al != bl {
					t.Errorf("%s: Apache %d %q, Bobbin %d %q", e.path, a.status, a.location, b.status, b.location)
				}
				t.Logf("%s: %d %s", e.path, b.status, b.location)
			}
			// The Java RM answers 202 while the kill is saved (FINAL_SAVING), Bobbin 200 KILLED:
			// its kill is stored before it answers.
			if bobbin["kill"].status != 200 || !strings.Contains(bobbin["kill"].body, `"KILLED"`) || (apache["kill"].status != 200 && apache["kill"].status != 202) {
				t.Errorf("PUT state KILLED: Apache %d %s, Bobbin %d %s", apache["kill"].status, apache["kill"].body, bobbin["kill"].status, bobbin["kill"].body)
			}
		})
	}
}

// jmxBeans are the MBeans monitoring reads, by daemon; each must be in Bobbin's /jmx with
// at least the attributes listed (Apache's names), and Apache's attributes Bobbin lacks
// are logged.
var jmxBeans = []struct {
	file, name string
	attrs      []string
}{
	{"jmx-rm", "Hadoop:service=ResourceManager,name=ClusterMetrics", []string{"NumActiveNMs", "NumLostNMs", "NumUnhealthyNMs", "NumDecommissionedNMs", "NumRebootedNMs",
		"AMLaunchDelayNumOps", "AMLaunchDelayAvgTime", "AMRegisterDelayNumOps", "AMRegisterDelayAvgTime"}},
	{"jmx-rm", "Hadoop:service=ResourceManager,name=QueueMetrics,q0=root", []string{"AppsSubmitted", "AppsRunning", "AppsPending", "AppsCompleted", "AppsKilled", "AppsFailed", "AllocatedMB", "AllocatedVCores", "AllocatedContainers", "AvailableMB", "AvailableVCores", "PendingMB", "PendingVCores", "PendingContainers", "ActiveUsers", "ActiveApplications", "running_0", "running_60", "running_300", "running_1440",
		"AggregateContainersAllocated", "AggregateNodeLocalContainersAllocated", "AggregateRackLocalContainersAllocated", "AggregateOffSwitchContainersAllocated", "AggregateContainersReleased",
		"ReservedMB", "ReservedVCores", "ReservedContainers"}},
	{"jmx-rm", "Hadoop:service=ResourceManager,name=RMNMInfo", []string{"LiveNodeManagers"}},
	{"jmx-rm", "Hadoop:service=ResourceManager,name=RpcDetailedActivityForPort8032", []string{"tag.port", "tag.Context"}},
	{"jmx-rm", "Hadoop:service=ResourceManager,name=UgiMetrics", []string{"LoginSuccessNumOps", "LoginSuccessAvgTime", "LoginFailureNumOps", "LoginFailureAvgTime", "GetGroupsNumOps", "GetGroupsAvgTime"}},
	{"jmx-rm", "Hadoop:service=ResourceManager,name=MetricsSystem,sub=Stats", []string{"NumActiveSources", "NumAllSources", "NumActiveSinks", "NumAllSinks", "SnapshotNumOps", "SnapshotAvgTime", "PublishNumOps", "PublishAvgTime", "DroppedPubAll"}},
	{"jmx-rm", "Hadoop:service=ResourceManager,name=MetricsSystem,sub=Control", nil},
	{"jmx-rm", "Hadoop:service=ResourceManager,name=QueueMetrics,q0=root,q1=default", []string{"AppsRunning", "AllocatedMB", "PendingMB", "AvailableMB"}},
	{"jmx-rm", "Hadoop:service=ResourceManager,name=RpcActivityForPort8032", []string{"ReceivedBytes", "SentBytes", "RpcQueueTimeNumOps", "RpcQueueTimeAvgTime", "RpcProcessingTimeNumOps", "RpcProcessingTimeAvgTime", "NumOpenConnections", "CallQueueLength", "RpcAuthenticationFailures", "RpcAuthorizationSuccesses"}},
	{"jmx-rm", "Hadoop:service=ResourceManager,name=JvmMetrics", []string{"MemHeapUsedM", "MemHeapCommittedM", "GcCount", "GcTimeMillis", "ThreadsRunnable", "LogError", "LogWarn"}},
	{"jmx-rm", "java.lang:type=Runtime", []string{"StartTime", "Uptime"}},
	{"jmx-nm", "Hadoop:service=NodeManager,name=NodeManagerMetrics", []string{"ContainersLaunched", "ContainersCompleted", "ContainersFailed", "ContainersKilled", "ContainersIniting", "ContainersRunning", "AllocatedGB", "AllocatedContainers", "AvailableGB", "AllocatedVCores", "AvailableVCores"}},
	{"jmx-nm", "Hadoop:service=NodeManager,name=ShuffleMetrics", []string{"ShuffleOutputBytes", "ShuffleOutputsFailed", "ShuffleOutputsOK", "ShuffleConnections"}},
	{"jmx-nm", "Hadoop:service=NodeManager,name=JvmMetrics", []string{"MemHeapUsedM", "GcCount"}},
	{"jmx-nm", "Hadoop:service=NodeManager,name=UgiMetrics", []string{"LoginSuccessNumOps", "LoginFailureNumOps", "GetGroupsNumOps", "GetGroupsAvgTime"}},
	{"jmx-nm", "Hadoop:service=NodeManager,name=MetricsSystem,sub=Stats", []string{"NumAllSources", "SnapshotNumOps", "PublishNumOps", "DroppedPubAll"}},
}

// compareJMX checks jmxBeans in both clusters' /jmx.
func compareJMX(t *testing.T, apache, bobbin map[string]restResponse) {
	t.Helper()
	beans := func(body string) map[string]map[string]any {
		var all struct{ Beans []map[string]any }
		json.Unmarshal([]byte(body), &all)
		out := map[string]map[string]any{}
		for _, b := range all.Beans {
			if n, ok := b["name"].(string); ok {
				out[n] = b
			}
		}
		return out
	}
	for _, f := range []string{"jmx-rm", "jmx-nm"} {
		a, b := beans(apache[f].body), beans(bobbin[f].body)
		for _, want := range jmxBeans {
			if want.file != f {
				continue
			}
			ab, bb := a[want.name], b[want.name]
			if ab == nil || bb == nil {
				t.Errorf("bean %s: in Apache's /jmx %v, in Bobbin's %v", want.name, ab != nil, bb != nil)
				continue
			}
			for _, k := range want.attrs {
				if _, ok := ab[k]; !ok {
					t.Errorf("bean %s: Apache's has no %s (the test's list is wrong)", want.name, k)
				}
				if _, ok := bb[k]; !ok {
					t.Errorf("bean %s: Bobbin's lacks %s", want.name, k)
				}
			}
			var lacking []string
			for k := range ab {
				if _, ok := bb[k]; !ok {
					lacking = append(lacking, k)
				}
			}
			sort.Strings(lacking)
			if len(lacking) > 0 {
				t.Logf("bean %s: Apache's attributes Bobbin does not report: %v", want.name, lacking)
			}
		}
	}
}

type restResponse struct {
	status   int
	body     string
	location string // the redirect's target, for the proxy's answers
}

// restSnapshot runs the scenario on one RM and returns each resource's status and body.
func restSnapshot(t *testing.T, version string, apacheRM bool) map[string]restResponse {
	t.Helper()
	c := newNSClusterVersion(t, version)
	c.apacheRM = apacheRM
	c.bobbinNM = !apacheRM // all Apache, or all Bobbin
	c.secondNM = true
	c.nmProps = func(_ int, p map[string]string) {
		p["yarn.node-labels.enabled"] = "true"
		p["yarn.node-labels.fs-store.root-dir"] = "file://" + c.path("node-labels")
	}
	writeMapredSite(t, c)
	var fetch strings.Builder
	// The label first, so that every resource shows a labelled node.
	if version == hadoop3 {
		fmt.Fprintf(&fetch, "curl -s -o /dev/null -w '%%{http_code}' -X POST -H 'Content-Type: application/json' -d '{\"nodeLabelInfo\":[{\"name\":\"gpu\",\"exclusivity\":true}]}' \"$W/ws/v1/cluster/add-node-labels?user.name=root\" > %[1]s/rest-label-add.status\n", c.dir)
		fmt.Fprintf(&fetch, "curl -s -o /dev/null -w '%%{http_code}' -X POST \"$W/ws/v1/cluster/nodes/$NODE/replace-labels?labels=gpu&user.name=root\" > %[1]s/rest-label-replace.status\n", c.dir)
	} else {
		fmt.Fprintf(&fetch, "$HADOOP_HOME/bin/yarn rmadmin -addToClusterNodeLabels gpu > %[1]s/label-add.log 2>&1; echo $? > %[1]s/rest-label-add.status\n", c.dir)
		fmt.Fprintf(&fetch, "$HADOOP_HOME/bin/yarn rmadmin -replaceLabelsOnNode \"$NODE=gpu\" > %[1]s/label-replace.log 2>&1; echo $? > %[1]s/rest-label-replace.status\n", c.dir)
	}
	for _, e := range labelEndpoints {
		fmt.Fprintf(&fetch, "curl -s -o %[1]s/rest-%[2]s.json -w '%%{http_code}' \"$W%[3]s\" > %[1]s/rest-%[2]s.status\n", c.dir, e.file, e.path)
	}
	for _, e := range restEndpoints {
		base := "$W"
		if strings.HasPrefix(e.path, "/ws/v1/node") {
			base = "$N"
		}
		fmt.Fprintf(&fetch, "curl -s -o %[1]s/rest-%[2]s.json -w '%%{http_code}' \"%[4]s%[3]s\" > %[1]s/rest-%[2]s.status\n", c.dir, e.file, e.path, base)
	}
	// Both daemons' MBeans.
	fmt.Fprintf(&fetch, "curl -s -o %[1]s/rest-jmx-rm.json -w '%%{http_code}' \"$W/jmx\" > %[1]s/rest-jmx-rm.status\n", c.dir)
	fmt.Fprintf(&fetch, "curl -s -o %[1]s/rest-jmx-nm.json -w '%%{http_code}' \"$N/jmx\" > %[1]s/rest-jmx-nm.status\n", c.dir)
	// A container's log file over the NM's REST API (text).
	fmt.Fprintf(&fetch, "curl -s -o %[1]s/rest-nm-log.json -w '%%{http_code}' \"$N/ws/v1/node/containerlogs/$CONT/stdout\" > %[1]s/rest-nm-log.status\n", c.dir)
	for _, e := range proxyEndpoints {
		fmt.Fprintf(&fetch, "curl -s -o %[1]s/rest-%[2]s.json -w '%%{http_code} %%{redirect_url}' \"$W%[3]s\" > %[1]s/rest-%[2]s.status\n", c.dir, e.file, e.path)
	}
	out, err := c.run(t, 6*time.Minute, fmt.Sprintf(`W=http://127.0.0.1:8088
timeout 200 $HADOOP_HOME/bin/hadoop jar %[1]s pi 2 10 > %[3]s/pi.log 2>&1 &
PI=$!
# While pi runs, the MR AM's own REST resource and job page through the RM's web proxy.
for i in $(seq 1 600); do
  A=$(curl -s "$W/ws/v1/cluster/apps?states=RUNNING" | grep -o 'application_[0-9]*_[0-9]*' | head -1)
  if [ -n "$A" ] && [ "$(curl -s -o %[3]s/rest-proxy-am-info.json -w '%%{http_code}' "$W/proxy/$A/ws/v1/mapreduce/info")" = 200 ]; then
    echo 200 > %[3]s/rest-proxy-am-info.status
    curl -s -o %[3]s/rest-proxy-am-page.json -w '%%{http_code}' "$W/proxy/$A/mapreduce" > %[3]s/rest-proxy-am-page.status
    break
  fi
  kill -0 $PI 2>/dev/null || break
  sleep 0.2
done
wait $PI
echo "pi exit $?"
timeout 200 %[2]s -shell_command 'sleep 120' -num_containers 1 -master_memory 256 -container_memory 128 > %[3]s/dshell.log 2>&1 &
DS=$!
RUN=
for i in $(seq 1 120); do
  RUN=$(curl -s "$W/ws/v1/cluster/apps?states=RUNNING" | grep -o 'application_[0-9]*_[0-9]*' | head -1)
  [ -n "$RUN" ] && [ "$(curl -s "$W/ws/v1/cluster/apps/$RUN" | grep -o '"runningContainers":[0-9]*')" = '"runningContainers":2' ] && break
  sleep 0.5
done
FIN=$(curl -s "$W/ws/v1/cluster/apps?states=FINISHED" | grep -o 'application_[0-9]*_[0-9]*' | head -1)
NODE=$(curl -s "$W/ws/v1/cluster/nodes" | grep -o '"id":"[^"]*"' | head -1 | cut -d'"' -f4)
# The RM counts the shell's container running once allocated: wait for its NM's, and
# read the NodeManager resources from that one.
N=http://127.0.0.1:8042
for i in $(seq 1 120); do
  for N in http://127.0.0.1:8042 http://127.0.0.1:8052; do
    CONT=$(curl -s "$N/ws/v1/node/containers" | grep -o "container_[e0-9_]*${RUN#application_}_01_000002" | head -1)
    [ -n "$CONT" ] && break 2
  done
  sleep 0.5
done
echo "running $RUN finished $FIN node $NODE container $CONT on $N"
%[4]s
curl -s -o %[3]s/rest-kill.json -w '%%{http_code}' -X PUT -H 'Content-Type: application/json' -d '{"state":"KILLED"}' "$W/ws/v1/cluster/apps/$RUN/state?user.name=root" > %[3]s/rest-kill.status
wait $DS
echo "dshell exit $?"
`, c.examplesJar(), c.dshellCommand(), c.dir, fetch.String()))
	if err != nil || !strings.Contains(out, "pi exit 0") || !strings.Contains(out, "running application_") {
		c.keep(t)
		t.Fatalf("scenario on the %s RM (%s): %v\n%s\nRM log:\n%s", map[bool]string{true: "Apache", false: "Bobbin"}[apacheRM], version, err, out, c.logTail("rm.log", 40))
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "running ") {
			t.Logf("%s RM: %s", map[bool]string{true: "Apache", false: "Bobbin"}[apacheRM], l)
		}
	}
	res := map[string]restResponse{}
	names := []string{"kill", "proxy-am-info", "proxy-am-page", "nm-log", "label-add", "label-replace", "jmx-rm", "jmx-nm"}
	for _, e := range labelEndpoints {
		names = append(names, e.file)
	}
	for _, e := range append(append([]struct{ file, path string }{}, restEndpoints...), proxyEndpoints...) {
		names = append(names, e.file)
	}
	for _, name := range names {
		body, _ := os.ReadFile(filepath.Join(c.dir, "rest-"+name+".json"))
		st, _ := os.ReadFile(filepath.Join(c.dir, "rest-"+name+".status"))
		var code int
		var location string
		fmt.Sscan(string(st), &code, &location)
		res[name] = restResponse{status: code, body: string(body), location: location}
	}
	return res
}

// compareRESTKeys compares the endpoints' answers of the Apache RM with Bobbin's: the
// statuses agree, and every key the Apache RM sends Bobbin sends too (restMissingOK lists
// the exceptions, logged). Bobbin's additions are logged.
func compareRESTKeys(t *testing.T, v string, endpoints []struct{ file, path string }, apache, bobbin map[string]restResponse) {
	t.Helper()
	var missing, added []string
	for _, e := range endpoints {
		a, b := apache[e.file], bobbin[e.file]
		if a.status != b.status {
			t.Errorf("%s: Apache answers %d, Bobbin %d\nApache: %s\nBobbin: %s", e.path, a.status, b.status, a.body, b.body)
		}
		ak, bk := jsonKeys(t, e.file, a.body), jsonKeys(t, e.file, b.body)
		shown := false
		for k := range ak {
			if !bk[k] {
				missing = append(missing, e.file+": "+k)
				if _, ok := missingOK(k); !ok && !shown {
					shown = true
					t.Logf("%s: Apache's answer %.1500s\nBobbin's %.1500s", e.path, a.body, b.body)
				}
			}
		}
		for k := range bk {
			if !ak[k] {
				added = append(added, e.file+": "+k)
			}
		}
	}
	sort.Strings(missing)
	sort.Strings(added)
	t.Logf("Bobbin's additions to the Apache %s RM's keys (%d):\n%s", v, len(added), strings.Join(added, "\n"))
	var bad []string
	for _, m := range missing {
		key := m[strings.Index(m, ": ")+2:]
		if why, ok := missingOK(key); ok {
			t.Logf("left out on purpose: %s (%s)", m, why)
			continue
		}
		bad = append(bad, m)
	}
	if len(bad) > 0 {
		t.Errorf("keys the Apache %s RM sends and Bobbin does not (%d):\n%s", v, len(bad), strings.Join(bad, "\n"))
	}
}

// jsonKeys lists every key path in a JSON document ("app.timeouts.timeout.type"); list
// elements share their list's path.
func jsonKeys(t *testing.T, name, body string) map[string]bool {
	var v any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Errorf("%s is not JSON: %v\n%s", name, err, body)
		return nil
	}
	out := map[string]bool{}
	var walk func(v any, prefix string)
	walk = func(v any, prefix string) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				out[p] = true
				walk(x, p)
			}
		case []any:
			for _, x := range v {
				walk(x, prefix)
			}
		}
	}
	walk(v, "")
	return out
}
