package integration

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// killPhases are the moments of a MapReduce job at which TestRMKilledAtEachPhaseOfPi kills
// the RM, each reached by an observable event (the REST state, a container's log
// directory), never by a sleep. filler is the memory a distributed shell's container holds
// on the 1536 MB node (its AM takes 256): the node is full until the shell is killed after
// the restart, which holds pi where the phase left it.
var killPhases = []struct {
	name   string
	filler int    // MB; 0: no shell
	wait   string // shell that returns once the phase is reached; $APP is pi's application then
}{
	// Accepted: no room for pi's AM (512) until the shell goes.
	{"accepted", 1280, `for i in $(seq 1 480); do APP=$(curl -s 'http://127.0.0.1:8088/ws/v1/cluster/apps?states=ACCEPTED' | grep -o 'application_[0-9]*_[0-9]*' | head -1); [ -n "$APP" ] && break; sleep 0.25; done`},
	// The AM's JVM starting: its container's log directory exists, it has not registered.
	{"am-starting", 0, `for i in $(seq 1 960); do D=$(ls -d nm-logs/application_*_0002/container_*_0002_01_000001 2>/dev/null | head -1); [ -n "$D" ] && break; sleep 0.05; done; APP=$(basename "$(dirname "$D")")`},
	// Registered, before any container: room for the AM only (issue 44's NMToken bug).
	{"registered", 768, `for i in $(seq 1 480); do APP=$(running_app $FILLER); [ -n "$APP" ] && break; sleep 0.25; done`},
	// Both maps (the shell's two containers) running.
	{"maps", 0, `for i in $(seq 1 480); do [ "$(ls -d nm-logs/application_*_0002/container_*_0002_01_00000[23] 2>/dev/null | wc -l)" -ge 2 ] && break; sleep 0.25; done; APP=$(running_app)`},
	// The reduce running (fetching the maps' output).
	{"reduce", 0, `for i in $(seq 1 480); do ls -d nm-logs/application_*_0002/container_*_0002_01_000004 >/dev/null 2>&1 && break; sleep 0.25; done; APP=$(running_app)`},
	// The AM has unregistered (the application's final status is recorded); its container
	// is still exiting.
	{"unregistered", 0, `for i in $(seq 1 480); do APP=$(running_app); [ -n "$APP" ] && break; sleep 0.25; done
for i in $(seq 1 4800); do curl -s http://127.0.0.1:8088/ws/v1/cluster/apps/$APP | grep -q '"finalStatus":"SUCCEEDED"' && break; sleep 0.05; done`},
}

// killJob is the job a kill-matrix run disturbs: its command (run in the cluster's
// directory, its output in job.out), what its output shows on success (besides its exit
// status; "" for nothing), and how many containers a run that repeats nothing has.
type killJob struct {
	name, command, success string
	containers             int
	// reasks: the AM re-sends asks for containers it already has after the restart,
	// and runs what it is given (the 2.7.3 distributed shell never removes a granted
	// request from its AMRMClient, whose resync sends the whole table, to the Java RM
	// too): the job has at least containers, no check on more.
	reasks bool
}

func piJob(c *nsCluster) killJob {
	return killJob{"pi", fmt.Sprintf("$HADOOP_HOME/bin/hadoop jar %s pi 2 10", c.examplesJar()), "Estimated value of Pi is", 4, false}
}

// dshellJob runs two containers that sleep 8 s, so the kill finds them running.
func dshellJob(c *nsCluster) killJob {
	return killJob{"dshell", c.dshellCommand() + " -shell_command 'sleep 8' -num_containers 2 -master_memory 256 -container_memory 128", "", 3, true}
}

// TestRMKilledAtEachPhaseOfPi is issue 44's kill matrix for the RM (work-preserving
// recovery, FileSystemRMStateStore on file://, SIGKILL, restart 2 s later): pi with
// Bobbin's NodeManager at every phase above, with the 2.7.3 and the 3.1.1 clients, and
// with Apache's 3.1.1 NodeManager at the registered one. Each time pi succeeds on its first
// attempt with four containers (AM, two maps, reduce: no task ran twice), it is listed
// SUCCEEDED, no container went without an NMToken, and the NodeManager ends with no
// container running.
func TestRMKilledAtEachPhaseOfPi(t *testing.T) {
	t.Parallel() // its subtests are clusters in their own network namespaces
	for _, v := range []string{hadoop2, hadoop3} {
		for i := range killPhases {
			killRMAt(t, v, true, i, piJob)
		}
	}
	killRMAt(t, hadoop3, false, 2, piJob)
}

// TestRMKilledAtEachPhaseOfDShell is the same for the distributed shell (2.7.3, Bobbin's
// NodeManager) at the phases it has: accepted, its AM starting, registered before any
// container, its two containers running, and unregistered.
func TestRMKilledAtEachPhaseOfDShell(t *testing.T) {
	t.Parallel() // its subtests are clusters in their own network namespaces
	for i, ph := range killPhases {
		if ph.name == "reduce" {
			continue
		}
		killRMAt(t, hadoop2, true, i, dshellJob)
	}
}

// killRMAt runs one cell of the matrix as a parallel subtest of t.
func killRMAt(t *testing.T, version string, bobbinNM bool, phase int, job func(*nsCluster) killJob) {
	ph := killPhases[phase]
	nm := "apache-nm"
	if bobbinNM {
		nm = "bobbin-nm"
	}
	t.Run(fmt.Sprintf("%s-%s-%s", ph.name, version, nm), func(t *testing.T) {
		t.Parallel() // its own network namespace: see parallelism in cluster_test.go
		c := newNSClusterVersion(t, version)
		c.bobbinNM = bobbinNM
		c.nmMemoryMB = 1536
		c.nmProps = func(_ int, p map[string]string) {
			p["yarn.resourcemanager.recovery.enabled"] = "true"
			p["yarn.resourcemanager.fs.state-store.uri"] = "file://" + c.path("rmstore")
		}
		c.capacityProps = map[string]string{
			"yarn.scheduler.capacity.maximum-am-resource-percent":   "1",
			"yarn.scheduler.capacity.root.queues":                   "default",
			"yarn.scheduler.capacity.root.default.capacity":         "100",
			"yarn.scheduler.capacity.root.default.maximum-capacity": "100",
		}
		writeMapredSite(t, c)
		j := job(c)
		filler, release := "", ""
		if ph.filler > 0 {
			filler = fmt.Sprintf(`%s -shell_command 'sleep 600' -num_containers 1 -master_memory 256 -container_memory %d > filler.log 2>&1 &
for i in $(seq 1 240); do ls -d nm-logs/application_*_0001/container_*_0001_01_000002 >/dev/null 2>&1 && break; sleep 0.25; done
FILLER=$(running_app)`, c.dshellCommand(), ph.filler)
			release = `$Y application -kill $FILLER 2>&1 | grep -v INFO`
		} else {
			// Application 1 is a finished one, so the job is application 2 in every run.
			filler = fmt.Sprintf(`$Y jar %s -jar %[1]s -shell_command true -num_containers 1 -master_memory 256 -container_memory 128 > filler.log 2>&1
FILLER=none`, c.dshellJar())
		}
		wait := ph.wait
		rm := fmt.Sprintf("%s resourcemanager --conf %s", bobbinBinary(t), c.confDir)
		out, err := c.run(t, 8*time.Minute, fmt.Sprintf(`Y=$HADOOP_HOME/bin/yarn
cd %[1]s
%[2]s
timeout 180 %[3]s > job.out 2>&1 &
JOB=$!
%[4]s
echo "=== phase %[5]s reached: $APP state $(curl -s http://127.0.0.1:8088/ws/v1/cluster/apps/$APP | grep -o '"state":"[A-Z]*"' | head -1) containers $(app_containers $APP)"
kill -9 $RM
wait $RM 2>/dev/null
sleep 2
%[6]s > rm2.log 2>&1 &
RM=$!
for i in $(seq 1 600); do (exec 3<>/dev/tcp/127.0.0.1/8032) 2>/dev/null && break; sleep 0.02; done
%[7]s
wait $JOB
RC=$?
echo "job exit $RC"
[ $RC -ne 0 ] && { %[8]s; }
echo "=== attempts $($Y applicationattempt -list $APP 2>/dev/null | grep -c appattempt_)"
echo "=== final $($Y application -status $APP 2>/dev/null | grep -o 'Final-State : [A-Z]*')"
echo "=== containers $(ls -d nm-logs/$APP/container_* 2>/dev/null | wc -l)"
grep -c 'No NMToken sent' job.out nm-logs/$APP/*/syslog nm-logs/$APP/*/AppMaster.stderr 2>/dev/null | awk -F: '{s+=$NF} END {print "=== no-nmtoken " s+0}'
for i in $(seq 1 120); do N=$(curl -s http://127.0.0.1:8042/ws/v1/node/containers | grep -o '"state":"RUNNING"' | wc -l); [ "$N" -eq 0 ] && break; sleep 0.25; done
echo "=== running on the node $N"`, c.dir, filler, j.command, wait, ph.name, rm, release, nmHeartbeatThreads))
		fail := func(why string) {
			c.keep(t)
			t.Fatalf("%s\nerr %v\n%s\n--- job:\n%s\n--- rm2:\n%s", why, err, out, c.logTail("job.out", 40), c.logTail("rm2.log", 40))
		}
		if err != nil {
			fail("cluster script failed")
		}
		skipOnApacheNMResyncRace(t, c, out)
		if !strings.Contains(out, "=== phase "+ph.name+" reached: application_") {
			fail("the phase was not reached")
		}
		if !strings.Contains(out, "job exit 0") || !strings.Contains(c.logTail("job.out", 40), j.success) {
			fail(j.name + " did not succeed across the restart")
		}
		for _, want := range []string{"=== attempts 1", "=== final Final-State : SUCCEEDED", "=== no-nmtoken 0", "=== running on the node 0"} {
			if !strings.Contains(out, want) {
				fail("missing: " + want)
			}
		}
		m := regexp.MustCompile(`=== containers (\d+)`).FindStringSubmatch(out)
		if m == nil {
			fail("no container count")
		}
		n, _ := strconv.Atoi(m[1])
		if n != j.containers && (!j.reasks || n < j.containers) {
			fail(fmt.Sprintf("%s ran %d containers, want %d: a task ran twice", j.name, n, j.containers))
		}
	})
}
