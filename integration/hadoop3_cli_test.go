package integration

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// cliScript runs, against whatever RM the cluster has, the yarn commands an operator uses
// on a running application, each section headed "=== name". A distributed shell sleeping
// in one container is the running application: for 15 minutes, since the script's 20-odd
// CLI JVMs take minutes on a busy machine and it must still run when it is killed.
const cliScript = `Y=$HADOOP_HOME/bin/yarn
run() { name=$1; shift; echo "=== $name"; "$@" 2>&1 | grep -Ev '^[0-9]{4}-[0-9]{2}-[0-9]{2} |^WARNING: |^$'; echo "exit ${PIPESTATUS[0]}"; }
$Y jar %[1]s -jar %[1]s -shell_command 'sleep 900' -num_containers 1 -master_memory 256 -container_memory 128 > %[2]s 2>&1 &
for i in $(seq 1 240); do
  APP=$(running_app)
  if [ -n "$APP" ]; then
    ATT=appattempt_${APP#application_}_000001
    [ "$(app_containers $APP)" -ge 2 ] && break
  fi
  sleep 0.5
done
sleep 2
run status $Y application -status $APP
W=http://127.0.0.1:8088
NODE=$(curl -s "$W/ws/v1/cluster/nodes" | grep -o '"id":"[^"]*"' | head -1 | cut -d'"' -f4)
rest() { echo "=== rest-$1"; curl -s -w '\n%%{http_code}\n' "$W$2"; }
%[3]srun updatePriority $Y application -updatePriority 3 -appId $APP
run updateLifetime $Y application -updateLifetime 3600 -appId $APP
run statusAfterUpdates $Y application -status $APP
run attempts $Y applicationattempt -list $APP
run attemptStatus $Y applicationattempt -status $ATT
run containers $Y container -list $ATT
run nodes $Y node -list -showDetails
run queue $Y queue -status default
run queueListAll $Y queue -list all
run top bash -c "timeout 8 script -qc '$Y top -delay 2' /dev/null < /dev/null 2>/dev/null | tr -d '\r' | sed 's/\x1b\[[0-9;]*[A-Za-z]//g' | grep -aE '^(NodeManager|Queue\(s\))' | sort -u"
run serviceState $Y rmadmin -getAllServiceState
run nodeAttributes $Y org.apache.hadoop.yarn.client.cli.NodeAttributesCLI -list
run refreshQueues $Y rmadmin -refreshQueues
run kill $Y application -kill $APP
sleep 2
run statusAfterKill $Y application -status $APP
rest app-killed "/ws/v1/cluster/apps/$APP"
run list $Y application -list -appStates KILLED
echo "=== end"
`

// cliRESTEndpoints are the RM's REST resources the CLI script also saves, each as a
// section "rest-<file>" (the body, then the status), while the shell runs ($APP, on
// $NODE); app-killed after the kill. Their key sets are compared as
// TestRESTSchemaMatchesApache compares 2.7.3's and 3.1.1's (compareRESTKeys).
var cliRESTEndpoints = []struct{ file, path string }{
	{"info", "/ws/v1/cluster/info"},
	{"metrics", "/ws/v1/cluster/metrics"},
	{"scheduler", "/ws/v1/cluster/scheduler"},
	{"apps", "/ws/v1/cluster/apps"},
	{"app-running", "/ws/v1/cluster/apps/$APP"},
	{"attempts", "/ws/v1/cluster/apps/$APP/appattempts"},
	{"state", "/ws/v1/cluster/apps/$APP/state"},
	{"nodes", "/ws/v1/cluster/nodes"},
	{"node", "/ws/v1/cluster/nodes/$NODE"},
	{"appstatistics", "/ws/v1/cluster/appstatistics"},
	{"app-unknown", "/ws/v1/cluster/apps/application_1_0099"},
	{"app-killed", "/ws/v1/cluster/apps/$APP"},
}

// cliRESTFetches is the script's lines that save cliRESTEndpoints (app-killed apart).
func cliRESTFetches() string {
	var b strings.Builder
	for _, e := range cliRESTEndpoints {
		if e.file != "app-killed" {
			fmt.Fprintf(&b, "rest %s \"%s\"\n", e.file, e.path)
		}
	}
	return b.String()
}

// restSections takes the "rest-" sections out of a run's sections, as responses.
func restSections(secs map[string]string) map[string]restResponse {
	out := map[string]restResponse{}
	for name, body := range secs {
		file, ok := strings.CutPrefix(name, "rest-")
		if !ok {
			continue
		}
		delete(secs, name)
		body = strings.TrimRight(body, "\n")
		i := strings.LastIndexByte(body, '\n')
		var code int
		fmt.Sscan(body[i+1:], &code)
		out[file] = restResponse{status: code, body: body[:max(i, 0)]}
	}
	return out
}

// cliNormalizers mask what differs between any two runs (ids, times, ports, durations),
// so that what is left is what each RM chose to answer.
var cliNormalizers = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`application_\d+_\d+`), "application_ID"},
	{regexp.MustCompile(`appattempt_\d+_\d+_\d+`), "appattempt_ID"},
	{regexp.MustCompile(`container_(e\d+_)?\d+_\d+_\d+_\d+`), "container_ID"},
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d{4}`), "ISO8601"},
	{regexp.MustCompile(`(?i)(\w{3} \w{3} \d\d \d\d:\d\d:\d\d [+-]?\w+ \d{4})`), "DATE"},
	{regexp.MustCompile(`\b1[6-9]\d{11}\b`), "MILLIS"},
	{regexp.MustCompile(`RemainingTime : \d+seconds`), "RemainingTime : Nseconds"},
	{regexp.MustCompile(`\d+ MB-seconds, \d+ vcore-seconds`), "N MB-seconds, N vcore-seconds"},
	{regexp.MustCompile(`Last-Health-Update : .*`), "Last-Health-Update : DATE"},
	// Measured figures differ from run to run; that they are there is compared.
	{regexp.MustCompile(`PMem:\d+ MB, VMem:\d+ MB, VCores:[0-9.E-]+`), "PMem:N MB, VMem:N MB, VCores:N"},
	// Tracking URLs are both RMs' web proxy pages; the Java RM names its loopback web
	// address by the host's canonical name (localhost), Bobbin by the address configured.
	{regexp.MustCompile(`//localhost:`), "//127.0.0.1:"},
}

func normalizeCLI(s string) string {
	for _, n := range cliNormalizers {
		s = n.re.ReplaceAllString(s, n.with)
	}
	return s
}

// cliSections splits the script's output into its sections.
func cliSections(out string) map[string]string {
	secs := map[string]string{}
	name := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "=== ") {
			name = strings.TrimPrefix(l, "=== ")
			continue
		}
		if name != "" {
			secs[name] += l + "\n"
		}
	}
	return secs
}

// TestHadoop3CLISameAnswersAsApacheRM runs the yarn CLI on a running application against
// the Apache RM and then against Bobbin's RM (each with an unchanged Apache NodeManager),
// all of one version, and compares the answers section by section: Hadoop 3.1.1, and
// today's 3.4.2 from Maven Central (issue 47). The RM's REST resources of the same moment
// are compared by their keys and statuses (cliRESTEndpoints).
func TestHadoop3CLISameAnswersAsApacheRM(t *testing.T) {
	t.Parallel() // its subtests are namespace clusters
	for _, v := range []string{hadoop3, hadoop34} {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			runs := map[string]map[string]string{}
			var mu sync.Mutex
			// The two clusters run side by side, each in a slot of its own (the subtests).
			t.Run("clusters", func(t *testing.T) {
				for _, name := range []string{"apache", "bobbin"} {
					t.Run(name, func(t *testing.T) {
						t.Parallel()
						sections := cliRun(t, name, v)
						mu.Lock()
						runs[name] = sections
						mu.Unlock()
					})
				}
			})
			switch {
			case len(runs) == 0 && !t.Failed():
				t.Skipf("no cluster of Hadoop %s ran (its subtests say why)", v)
			case len(runs) != 2:
				t.FailNow()
			}
			compareCLIRuns(t, v, runs)
		})
	}
}

// cliRun runs cliScript on a cluster of Hadoop v's Apache RM (name "apache") or Bobbin's
// ("bobbin"), with v's Apache NodeManager, and returns its output's sections.
func cliRun(t *testing.T, name, v string) map[string]string {
	c := newNSClusterVersion(t, v)
	c.apacheRM = name == "apache"
	if v == hadoop34 {
		// 3.3+'s weights for capacities, as both RMs read them: default's 3 of 4.
		c.capacityProps = map[string]string{"yarn.scheduler.capacity.root.queues": "default,analytics",
			"yarn.scheduler.capacity.root.default.capacity": "3w", "yarn.scheduler.capacity.root.default.maximum-capacity": "90",
			"yarn.scheduler.capacity.root.default.user-limit-factor": "2", "yarn.scheduler.capacity.root.analytics.capacity": "1w"}
		// 3.3+'s Capacity Scheduler names an application's queue by its path; Bobbin's RM
		// does so with this key (Apache's ignores it).
		c.nmProps = func(_ int, p map[string]string) { p["bobbin.resourcemanager.application-queue-names"] = "path" }
	}
	// Each yarn command starts a JVM: with another test's cluster beside this one
	// (t.Parallel) the script's 20-odd commands take minutes.
	out, err := c.run(t, 12*time.Minute, fmt.Sprintf(cliScript, c.dshellJar(), c.path("ds.log"), cliRESTFetches()))
	if err != nil || !strings.Contains(out, "=== list") {
		t.Fatalf("%s RM: %v\n%s\nRM log:\n%s", name, err, out, c.logTail("rm.log", 40))
	}
	t.Logf("%s RM:\n%s", name, out)
	return cliSections(out)
}

// compareCLIRuns compares the sections of the Apache run with Bobbin's.
func compareCLIRuns(t *testing.T, v string, runs map[string]map[string]string) {
	compareRESTKeys(t, v, cliRESTEndpoints, restSections(runs["apache"]), restSections(runs["bobbin"]))
	var names []string
	for n := range runs["apache"] {
		if n != "end" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		a, b := normalizeCLI(runs["apache"][n]), normalizeCLI(runs["bobbin"][n])
		if a != b {
			t.Errorf("yarn %s differs:\n--- Apache %s RM\n%s--- Bobbin RM\n%s", n, v, a, b)
		}
	}
	// The resource-seconds of the running application differ with how long each run
	// took; both must be counted, and per vcore-second about the same memory. Each RM
	// truncates every container's MB-seconds and vcore-seconds to whole numbers, and the
	// application has run only seconds: with two containers either figure may be short by
	// up to 2, so a run's memory per vcore-second lies between mbs/(vcs+2) and
	// (mbs+2)/vcs. (Read as a plain ratio, a CI run once gave Apache 399 — more than the
	// largest container's 256 MB — and Bobbin 239.) The two ranges, widened by a quarter,
	// must meet.
	agg := regexp.MustCompile(`Aggregate Resource Allocation : (\d+) MB-seconds, (\d+) vcore-seconds`)
	var ratio, lo, hi [2]float64
	for i, name := range []string{"apache", "bobbin"} {
		m := agg.FindStringSubmatch(runs[name]["status"])
		var mbs, vcs float64
		if m != nil {
			fmt.Sscan(m[1], &mbs)
			fmt.Sscan(m[2], &vcs)
		}
		if mbs <= 0 || vcs <= 0 {
			t.Fatalf("%s RM: no resource-seconds in yarn application -status:\n%s", name, runs[name]["status"])
		}
		const containers = 2 // the AM's and the shell's
		ratio[i], lo[i], hi[i] = mbs/vcs, mbs/(vcs+containers), (mbs+containers)/vcs
	}
	if lo[1] > hi[0]*1.25 || hi[1] < lo[0]*0.75 {
		t.Errorf("MB per vcore-second: Apache %.0f (%.0f-%.0f), Bobbin %.0f (%.0f-%.0f)", ratio[0], lo[0], hi[0], ratio[1], lo[1], hi[1])
	}
	t.Logf("MB per vcore-second of the running application: Apache %.0f, Bobbin %.0f", ratio[0], ratio[1])
}
