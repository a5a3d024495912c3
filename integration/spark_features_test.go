package integration

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sparkPolls are shell functions for the Spark scripts, over the RM's REST API:
//   - app_field APP FIELD: a string field of the application ("state", "queue", ...);
//   - app_of FILE: the application a spark-submit's output names;
//   - wait_app FILE N: waits until that application holds N containers, prints it;
//   - agg_placed LOGS: "nm1=N nm2=M", the containers of a `yarn logs` output on each node;
//   - aggregated APP: waits until the application's logs are aggregated;
//   - attempts APP: how many attempts it had.
const sparkPolls = `app_field() { curl -s "http://127.0.0.1:8088/ws/v1/cluster/apps/$1" 2>/dev/null | grep -o "\"$2\" *: *\"[^\"]*\"" | head -1 | sed 's/.*: *"//; s/"$//'; }
app_of() { grep -o 'application_[0-9]*_[0-9]*' "$1" 2>/dev/null | head -1; }
wait_app() { local a=; for i in $(seq 1 600); do a=$(app_of "$1"); [ -n "$a" ] && [ "$(app_containers $a)" -ge "$2" ] && break; sleep 0.25; done; echo "$a"; }
agg_placed() { echo "nm1=$(grep -o '^Container: container_[0-9_e]* on localhost_8041' "$1" | sort -u | wc -l) nm2=$(grep -o '^Container: container_[0-9_e]* on localhost_8051' "$1" | sort -u | wc -l)"; }
aggregated() { for i in $(seq 1 240); do [ "$(app_field $1 logAggregationStatus)" = SUCCEEDED ] && break; sleep 0.25; done; }
attempts() { curl -s "http://127.0.0.1:8088/ws/v1/cluster/apps/$1/appattempts" 2>/dev/null | grep -o '"appAttemptId" *: *"[^"]*"' | sort -u | wc -l; }`

// TestSparkFeaturesOnYarn is the rest of issue 46's second item with real Spark 3.5 and
// 4.x on Bobbin's RM and two NodeManagers, on Bobbin's RM with Apache 3.1.1's and on
// Apache 3.1.1's RM with Bobbin's (one release each: skipMixUnlessRun; with
// BOBBIN_SPARK_APACHE=1, on Apache's alone too, the same checks), the first NodeManager
// labelled "lab" (exclusive), log aggregation on:
//   - spark.yarn.queue to the "spark" queue with spark.yarn.am.nodeLabelExpression and
//     spark.yarn.executor.nodeLabelExpression "lab": every container on the lab node, the
//     application in its queue; then `yarn logs -applicationId` prints the driver's and
//     the executor's logs;
//   - spark.yarn.maxAppAttempts=2 with the first AM killed: the second attempt finishes
//     the job;
//   - an executor's process killed: Spark asks for a replacement, gets it, and the job
//     succeeds;
//   - the Spark UI of a running application through the RM's /proxy/<app>/ (its
//     redirects kept inside the proxy; the page with its scripts and styles in headless
//     Chromium), then `yarn application -kill` ends it KILLED.
func TestSparkFeaturesOnYarn(t *testing.T) {
	t.Parallel() // its subtests are namespace clusters: see parallelism in cluster_test.go
	for _, kind := range sparkPairings {
		for _, r := range sparkReleases {
			t.Run(kind.name+"-spark-"+r.version, func(t *testing.T) {
				t.Parallel() // its own network namespace
				kind.skipMixUnlessRun(t, r)
				sparkHome := requireSpark(t, r)
				c := newNSClusterVersion(t, hadoop3)
				c.bobbinNM, c.apacheRM, c.secondNM, c.nmMemoryMB = kind.bobbinNM, kind.apacheRM, true, 2048
				c.capacityProps = map[string]string{
					"yarn.scheduler.capacity.maximum-am-resource-percent":                    "0.5",
					"yarn.scheduler.capacity.root.queues":                                    "default,spark",
					"yarn.scheduler.capacity.root.default.capacity":                          "50",
					"yarn.scheduler.capacity.root.default.maximum-capacity":                  "100",
					"yarn.scheduler.capacity.root.spark.capacity":                            "50",
					"yarn.scheduler.capacity.root.spark.maximum-capacity":                    "100",
					"yarn.scheduler.capacity.root.accessible-node-labels":                    "*",
					"yarn.scheduler.capacity.root.accessible-node-labels.lab.capacity":       "100",
					"yarn.scheduler.capacity.root.spark.accessible-node-labels":              "lab",
					"yarn.scheduler.capacity.root.spark.accessible-node-labels.lab.capacity": "100",
				}
				c.nmProps = func(_ int, props map[string]string) {
					props["yarn.node-labels.enabled"] = "true"
					props["yarn.node-labels.fs-store.root-dir"] = "file://" + c.path("node-labels")
					props["yarn.log-aggregation-enable"] = "true"
					props["yarn.nodemanager.remote-app-log-dir"] = "file://" + c.path("app-logs")
				}
				runSparkFeatures(t, c, r, sparkHome)
			})
		}
	}
}

func runSparkFeatures(t *testing.T, c *nsCluster, r sparkRelease, sparkHome string) {
	jar := sparkJob(t, sparkHome, c.dir)
	submit := sparkSubmit(t, sparkHome, c.dir)
	chromium := "chromium"
	if _, err := os.Stat("/usr/bin/chromium"); err != nil {
		chromium = "" // the browser check is skipped, and says so
	}
	out, err := c.run(t, 10*time.Minute, fmt.Sprintf(`export SPARK_HOME=%[1]s SPARK_SCALA_VERSION=%[2]s SPARK_LOCAL_IP=127.0.0.1 PYSPARK_PYTHON=python3
S=%[3]s
Y=$HADOOP_HOME/bin/yarn
%[5]s
%[6]s
cd %[4]s
$Y rmadmin -addToClusterNodeLabels "lab(exclusive=true)" 2>&1 | grep -v INFO
$Y rmadmin -replaceLabelsOnNode "localhost:8041=lab" 2>&1 | grep -v INFO

# A queue and a partition: the AM and the executor on the lab node, in the spark queue.
timeout 240 $S --deploy-mode cluster --queue spark --num-executors 1 --conf spark.yarn.am.nodeLabelExpression=lab \
  --conf spark.yarn.executor.nodeLabelExpression=lab --class BobbinSparkJob %[7]s pi 4 > labelled.out 2>&1
RC=$?
A=$(app_of labelled.out)
aggregated $A
$Y logs -applicationId $A > labelled.logs 2>&1
echo "=== yarn logs exit $? aggregation $(app_field $A logAggregationStatus)"
echo "=== labelled exit $RC app $A queue $(app_field $A queue) $(agg_placed labelled.logs)"

# The first AM killed: the second attempt runs the job again and finishes it.
timeout 240 $S --deploy-mode cluster --num-executors 1 --conf spark.yarn.maxAppAttempts=2 --class BobbinSparkJob %[7]s sleep 6 2 > attempts.out 2>&1 &
SUB=$!
A=$(wait_app attempts.out 2)
pkill -9 -f "yarn.ApplicationMaster.*container_${A#application_}_01_000001/"
echo "=== am killed $?"
wait $SUB
RC=$?
echo "=== attempts exit $RC app $A final $(app_field $A finalStatus) attempts $(attempts $A)"

# An executor killed: Spark asks for another and the job succeeds.
timeout 240 $S --deploy-mode client --num-executors 1 --class BobbinSparkJob %[7]s sleep 6 2 > replaced.out 2>&1 &
SUB=$!
A=$(wait_app replaced.out 2)
for i in $(seq 1 240); do pgrep -f "CoarseGrainedExecutorBackend.*$A" > /dev/null && break; sleep 0.25; done
pkill -9 -f "CoarseGrainedExecutorBackend.*$A"
echo "=== executor killed $?"
wait $SUB
RC=$?
aggregated $A
$Y logs -applicationId $A > replaced.logs 2>&1
echo "=== replaced exit $RC app $A final $(app_field $A finalStatus) $(agg_placed replaced.logs)"

# A running application's UI through the RM's proxy, then killed with the yarn CLI.
timeout 240 $S --deploy-mode cluster --num-executors 1 --class BobbinSparkJob %[7]s sleep 200 1 > killed.out 2>&1 &
SUB=$!
A=$(wait_app killed.out 2)
P=http://127.0.0.1:8088/proxy/$A
for i in $(seq 1 240); do curl -sL "$P/jobs/" 2>/dev/null | grep -q 'Spark Jobs' && break; sleep 0.25; done
echo "=== proxy root $(curl -s -o root.html -w '%%{http_code}' "$P/") $(grep -c 'Spark Jobs' root.html)"
echo "=== proxy jobs $(curl -s -o ui.html -w '%%{http_code}' "$P/jobs/") $(grep -c 'Spark Jobs' ui.html)"
for asset in $(grep -o '"/proxy/[^"]*static/[^"]*\.\(js\|css\)"' ui.html | tr -d '"' | sort -u | head -8); do
  echo "=== asset $(curl -s -o /dev/null -w '%%{http_code}' "http://127.0.0.1:8088$asset") $asset"
done
if [ -n "%[8]s" ]; then
  %[8]s --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run --user-data-dir=%[4]s/chromium \
    --enable-logging=stderr --v=0 --virtual-time-budget=5000 --dump-dom "$P/jobs/" > ui.dom 2> chromium.log
  echo "=== chromium exit $? jobs $(grep -c 'Spark Jobs' ui.dom) failed $(grep -c 'Failed to load resource' chromium.log)"
fi
$Y application -kill $A > kill.out 2>&1
echo "=== yarn kill exit $?"
wait $SUB
RC=$?
echo "=== killed submit exit $RC state $(app_field $A state) final $(app_field $A finalStatus)"
echo "=== proxy after $(curl -s -o /dev/null -w '%%{http_code} %%{redirect_url}' "$P/")"`,
		sparkHome, r.scala, sparkSubmitPrefix(submit), c.dir, restPolls, sparkPolls, jar, chromium))
	t.Logf("%s", out)
	fail := sparkFailure(t, c, out)
	if err != nil {
		fail(fmt.Sprintf("cluster script: %v", err))
	}
	// line is the fields of the "=== PREFIX..." line, at least n of them (an empty value,
	// an application the script did not find, fails here rather than indexing out of range).
	line := func(prefix string, n int) []string {
		m := regexp.MustCompile(`(?m)^=== ` + prefix + `(.*)$`).FindStringSubmatch(out)
		if m == nil {
			fail("no line " + prefix)
		}
		f := strings.Fields(m[1])
		if len(f) < n {
			fail(fmt.Sprintf("line %q has %d fields, want %d", prefix+m[1], len(f), n))
		}
		return f
	}

	// labelled exit 0 app APP queue spark nm1=2 nm2=0
	if l := line("labelled ", 8); l[1] != "0" || l[5] != "spark" || l[6] != "nm1=2" || l[7] != "nm2=0" {
		fail(fmt.Sprintf("the labelled pi in the spark queue: %v, want exit 0, queue spark, its AM and executor on the lab node", l), "labelled.out")
	}
	logs, _ := os.ReadFile(c.path("labelled.logs"))
	// 3.1.1's yarn logs heads each file with its container.
	headers := map[string]bool{}
	for _, h := range regexp.MustCompile(`(?m)^Container: (container_\S+)`).FindAllSubmatch(logs, -1) {
		headers[string(h[1])] = true
	}
	if l := line("yarn logs ", 2); l[1] != "0" || len(headers) != 2 || !regexp.MustCompile(`Pi is roughly 3\.1`).Match(logs) ||
		!strings.Contains(string(logs), "YarnCoarseGrainedExecutorBackend") {
		fail(fmt.Sprintf("yarn logs: %v, %d containers (want 2: the driver's with its result, the executor's)", l, len(headers)), "labelled.logs")
	}
	if l := line("am killed ", 1); l[0] != "0" {
		fail("no AM process was killed")
	}
	if l := line("attempts ", 8); l[1] != "0" || l[5] != "SUCCEEDED" || l[7] != "2" {
		fail(fmt.Sprintf("after its first AM was killed: %v, want exit 0, SUCCEEDED in 2 attempts", l), "attempts.out")
	}
	if l := line("executor killed ", 1); l[0] != "0" {
		fail("no executor process was killed")
	}
	l := line("replaced ", 8)
	n1, _ := strconv.Atoi(strings.TrimPrefix(l[6], "nm1="))
	n2, _ := strconv.Atoi(strings.TrimPrefix(l[7], "nm2="))
	if l[1] != "0" || l[5] != "SUCCEEDED" || n1+n2 < 3 {
		fail(fmt.Sprintf("after an executor was killed: %v, want exit 0, SUCCEEDED, the AM, the killed executor and its replacement", l), "replaced.out")
	}
	// The proxy: Spark's root redirects to its jobs page at the AM's own address, which
	// the proxy follows, as the Java proxy's HTTP client does: the caller stays inside
	// the proxy.
	if l := line("proxy root ", 2); l[0] != "200" || l[1] == "0" {
		fail(fmt.Sprintf("the UI's root through the proxy: %v, want the jobs page", l), "root.html")
	}
	if l := line("proxy jobs ", 2); l[0] != "200" || l[1] == "0" {
		fail(fmt.Sprintf("the jobs page through the proxy: %v", l), "ui.html")
	}
	assets := regexp.MustCompile(`(?m)^=== asset (\d+) (\S+)$`).FindAllStringSubmatch(out, -1)
	if len(assets) == 0 {
		fail("the jobs page links no script or style under the proxy", "ui.html")
	}
	for _, a := range assets {
		if a[1] != "200" {
			fail(fmt.Sprintf("asset %s through the proxy: %s", a[2], a[1]))
		}
	}
	if strings.Contains(out, "=== chromium ") {
		if l := line("chromium ", 6); l[1] != "0" || l[3] == "0" || l[5] != "0" {
			fail(fmt.Sprintf("the jobs page in Chromium: %v, want it rendered with every resource loaded", l), "chromium.log")
		}
	} else {
		t.Log("no chromium: the UI was checked with curl only")
	}
	if l := line("yarn kill ", 2); l[1] != "0" {
		fail("yarn application -kill failed", "kill.out")
	}
	if l := line("killed submit ", 6); l[1] == "0" || l[3] != "KILLED" || l[5] != "KILLED" {
		fail(fmt.Sprintf("the killed application: %v, want spark-submit failing and the application KILLED", l), "killed.out")
	}
	// After the end, with no history server, the RM's page of the application, as from the
	// Java proxy (whose link names the RM by the local host's name, localhost here, where
	// Bobbin keeps the configured 127.0.0.1).
	if l := line("proxy after ", 2); len(l) != 2 || l[0] != "302" || !regexp.MustCompile(`^http://(localhost|127\.0\.0\.1):8088/cluster/app/application_\d+_0004$`).MatchString(l[1]) {
		fail(fmt.Sprintf("the ended application through the proxy: %v, want a redirect to the RM's page of it", l))
	}
}
