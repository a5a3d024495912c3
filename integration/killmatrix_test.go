package integration

import (
	"fmt"
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
	// Both maps running.
	{"maps", 0, `for i in $(seq 1 480); do [ "$(ls -d nm-logs/application_*_0002/container_*_0002_01_00000[23] 2>/dev/null | wc -l)" -ge 2 ] && break; sleep 0.25; done; APP=$(running_app)`},
	// The reduce running (fetching the maps' output).
	{"reduce", 0, `for i in $(seq 1 480); do ls -d nm-logs/application_*_0002/container_*_0002_01_000004 >/dev/null 2>&1 && break; sleep 0.25; done; APP=$(running_app)`},
}

// TestRMKilledAtEachPhaseOfPi is issue 44's kill matrix for the RM (work-preserving
// recovery, FileSystemRMStateStore on file://, SIGKILL, restart 2 s later), 2.7.3's pi
// with Bobbin's NodeManager at every phase above, and 3.1.1's with Apache's NodeManager
// at the registered one. Each time pi succeeds on its first attempt with four
// containers (AM, two maps, reduce: no task ran twice), no container went without an
// NMToken, and the NodeManager ends with no container running.
func TestRMKilledAtEachPhaseOfPi(t *testing.T) {
	t.Parallel() // its subtests are clusters in their own network namespaces
	type run struct {
		version  string
		bobbinNM bool
		phase    int
	}
	var runs []run
	for i := range killPhases {
		runs = append(runs, run{hadoop2, true, i})
	}
	runs = append(runs, run{hadoop3, false, 2})
	for _, r := range runs {
		ph := killPhases[r.phase]
		nm := "apache-nm"
		if r.bobbinNM {
			nm = "bobbin-nm"
		}
		t.Run(fmt.Sprintf("%s-%s-%s", ph.name, r.version, nm), func(t *testing.T) {
			t.Parallel() // its own network namespace: see parallelism in cluster_test.go
			c := newNSClusterVersion(t, r.version)
			c.bobbinNM = r.bobbinNM
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
			filler, release := "FILLER=none", ""
			if ph.filler > 0 {
				filler = fmt.Sprintf(`%s -shell_command 'sleep 600' -num_containers 1 -master_memory 256 -container_memory %d > filler.log 2>&1 &
for i in $(seq 1 240); do ls -d nm-logs/application_*_0001/container_*_0001_01_000002 >/dev/null 2>&1 && break; sleep 0.25; done
FILLER=$(running_app)`, c.dshellCommand(), ph.filler)
				release = `$Y application -kill $FILLER 2>&1 | grep -v INFO`
			} else {
				// Application 1 is a finished one, so pi is application 2 in every run.
				filler = fmt.Sprintf(`$Y jar %s -jar %[1]s -shell_command true -num_containers 1 -master_memory 256 -container_memory 128 > filler.log 2>&1
FILLER=none`, c.dshellJar())
			}
			rm := fmt.Sprintf("%s resourcemanager --conf %s", bobbinBinary(t), c.confDir)
			out, err := c.run(t, 8*time.Minute, fmt.Sprintf(`Y=$HADOOP_HOME/bin/yarn
cd %[1]s
%[2]s
timeout 300 $HADOOP_HOME/bin/hadoop jar %[3]s pi 2 10 > pi.out 2>&1 &
PI=$!
%[4]s
echo "=== phase %[5]s reached: $APP state $(curl -s http://127.0.0.1:8088/ws/v1/cluster/apps/$APP | grep -o '"state":"[A-Z]*"' | head -1) containers $(app_containers $APP)"
kill -9 $RM
wait $RM 2>/dev/null
sleep 2
%[6]s > rm2.log 2>&1 &
RM=$!
for i in $(seq 1 600); do (exec 3<>/dev/tcp/127.0.0.1/8032) 2>/dev/null && break; sleep 0.02; done
%[7]s
wait $PI
echo "pi exit $?"
echo "=== attempts $($Y applicationattempt -list $APP 2>/dev/null | grep -c appattempt_)"
echo "=== containers $(ls -d nm-logs/$APP/container_* 2>/dev/null | wc -l)"
grep -c 'No NMToken sent' pi.out nm-logs/$APP/*/syslog 2>/dev/null | awk -F: '{s+=$NF} END {print "=== no-nmtoken " s+0}'
for i in $(seq 1 120); do N=$(curl -s http://127.0.0.1:8042/ws/v1/node/containers | grep -o '"state":"RUNNING"' | wc -l); [ "$N" -eq 0 ] && break; sleep 0.25; done
echo "=== running on the node $N"`, c.dir, filler, c.examplesJar(), ph.wait, ph.name, rm, release))
			fail := func(why string) {
				c.keep(t)
				t.Fatalf("%s\nerr %v\n%s\n--- pi:\n%s\n--- rm2:\n%s", why, err, out, c.logTail("pi.out", 40), c.logTail("rm2.log", 40))
			}
			if err != nil {
				fail("cluster script failed")
			}
			skipOnApacheNMResyncRace(t, c, out)
			if !strings.Contains(out, "=== phase "+ph.name+" reached: application_") {
				fail("the phase was not reached")
			}
			if !strings.Contains(out, "pi exit 0") || !strings.Contains(c.logTail("pi.out", 40), "Estimated value of Pi is") {
				fail("pi did not succeed across the restart")
			}
			for _, want := range []string{"=== attempts 1", "=== containers 4", "=== no-nmtoken 0", "=== running on the node 0"} {
				if !strings.Contains(out, want) {
					fail("missing: " + want)
				}
			}
		})
	}
}
