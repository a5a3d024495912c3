package integration

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
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
var killPhases = []killPhase{
	// Accepted: no room for pi's AM (512) until the shell goes.
	{"accepted", 1280, `for i in $(seq 1 480); do APP=$(curl -s 'http://127.0.0.1:8088/ws/v1/cluster/apps?states=ACCEPTED' | grep -o 'application_[0-9]*_[0-9]*' | head -1); [ -n "$APP" ] && break; sleep 0.25; done`},
	// The AM's container allocated (the attempt names it), at once: the NodeManager is
	// usually still localizing it (the output says whether its log directory existed).
	{"allocated", 0, `for i in $(seq 1 4800); do APP=$(curl -s http://127.0.0.1:8088/ws/v1/cluster/apps | grep -o 'application_[0-9]*_0002' | head -1); [ -n "$APP" ] && curl -s http://127.0.0.1:8088/ws/v1/cluster/apps/$APP/appattempts | grep -q '"containerId":"container_' && break; sleep 0.02; done
echo "=== AM container launched when the phase was reached: $(ls -d nm-logs/$APP/container_* 2>/dev/null | wc -l)"`},
	// The AM's JVM starting: its container's log directory exists, it has not registered.
	{"am-starting", 0, `for i in $(seq 1 960); do D=$(ls -d nm-logs/application_*_0002/container_*_0002_01_000001 2>/dev/null | head -1); [ -n "$D" ] && break; sleep 0.05; done; APP=$(basename "$(dirname "$D")")`},
	// Registered, before any container: room for the AM only (issue 44's NMToken bug); the
	// AM's allocate calls ask and get nothing until the restart.
	{"registered", 768, `for i in $(seq 1 480); do APP=$(running_app $FILLER); [ -n "$APP" ] && break; sleep 0.25; done`},
	// Both maps (the shell's two containers) running.
	{"maps", 0, `for i in $(seq 1 480); do [ "$(ls -d nm-logs/application_*_0002/container_*_0002_01_00000[23] 2>/dev/null | wc -l)" -ge 2 ] && break; sleep 0.25; done; APP=$(running_app)`},
	// The reduce running (fetching the maps' output).
	{"reduce", 0, `for i in $(seq 1 480); do ls -d nm-logs/application_*_0002/container_*_0002_01_000004 >/dev/null 2>&1 && break; sleep 0.25; done; APP=$(running_app)`},
	// The AM's job entered COMMITTING (the reduce is done): the MR AM commits only within
	// yarn.app.mapreduce.am.job.committer.commit-window of a heartbeat the RM answered.
	{"commit", 0, `for i in $(seq 1 9600); do grep -qs 'Transitioned from RUNNING to COMMITTING' nm-logs/application_*_0002/container_*_0002_01_000001/syslog && break; sleep 0.02; done; APP=$(ls -d nm-logs/application_*_0002 | xargs basename)`},
	// The AM has unregistered (the application's final status is recorded); its container
	// is still exiting.
	{"unregistered", 0, `for i in $(seq 1 480); do APP=$(running_app); [ -n "$APP" ] && break; sleep 0.25; done
for i in $(seq 1 4800); do curl -s http://127.0.0.1:8088/ws/v1/cluster/apps/$APP | grep -q '"finalStatus":"SUCCEEDED"' && break; sleep 0.05; done`},
}

// killPhase is a moment of a job: its name, the memory (MB) a distributed shell holds to
// keep the job there until the kill is done with (0: none), and the shell that returns
// once the phase is reached, with $APP the job's application.
type killPhase struct {
	name   string
	filler int
	wait   string
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

// killTarget is what a cell of the kill matrix kills with SIGKILL at its phase.
type killTarget string

const (
	// killRM: the RM (work-preserving recovery, FileSystemRMStateStore on file://),
	// started again 2 s later.
	killRM killTarget = "rm"
	// killNM: the NodeManager (yarn.nodemanager.recovery.enabled), started again 2 s later.
	killNM killTarget = "nm"
	// killBoth: the RM and the NodeManager at once, both started again 2 s later.
	killBoth killTarget = "rm+nm"
	// killActive: the active of two HA RMs (ZooKeeper store and election, a 4 s session);
	// the standby must take over within the session timeout + 1 s.
	killActive killTarget = "ha-active"
	// switchToBobbin: Apache's RM of the cell's version (work-preserving recovery,
	// FileSystemRMStateStore on file://) killed, Bobbin's RM started at once on the same
	// configuration and store (issue 63); switchToJava the other way.
	switchToBobbin killTarget = "java-to-bobbin"
	switchToJava   killTarget = "bobbin-to-java"
	// restartJava: Apache's RM killed and started again at once on its store, the
	// baseline the switches are measured beside.
	restartJava killTarget = "java-to-java"
)

// fullKillMatrix is whether BOBBIN_KILL_MATRIX=full asks for every cell (`make
// kill-matrix`): both Hadoop versions, both NodeManagers, every phase, every target. CI
// runs the subset each test names.
func fullKillMatrix() bool { return os.Getenv("BOBBIN_KILL_MATRIX") == "full" }

// killCell is one cell of the matrix.
type killCell struct {
	target   killTarget
	version  string
	bobbinNM bool
	phase    string
	// store is the RM state store: "" FileSystemRMStateStore on file://, storeZK
	// ZKRMStateStore on a ZooKeeper of the cluster's own (killActive always has one).
	store string
}

// storeZK is a kill cell's ZKRMStateStore.
const storeZK = "zk"

// killMatrix runs, as parallel subtests of t, the cells of job for target: every version,
// NodeManager and phase when the full matrix is asked for, else ci.
func killMatrix(t *testing.T, target killTarget, job func(*nsCluster) killJob, ci []killCell) {
	cells := ci
	if fullKillMatrix() {
		cells = nil
		for _, v := range []string{hadoop2, hadoop3} {
			for _, bobbinNM := range []bool{true, false} {
				for _, ph := range killPhases {
					cells = append(cells, killCell{target: target, version: v, bobbinNM: bobbinNM, phase: ph.name})
				}
			}
		}
	}
	for _, cell := range cells {
		cell.target = target
		killAt(t, cell, job)
	}
}

// bobbinCells is the cells of Bobbin's NodeManager with Hadoop v at the phases named.
func bobbinCells(v string, phases ...string) []killCell {
	var cells []killCell
	for _, ph := range phases {
		cells = append(cells, killCell{version: v, bobbinNM: true, phase: ph})
	}
	return cells
}

// everyPhase is the names of killPhases.
func everyPhase() []string {
	var names []string
	for _, ph := range killPhases {
		names = append(names, ph.name)
	}
	return names
}

// TestRMKilledAtEachPhaseOfPi is issue 44's kill matrix for the RM: pi with Bobbin's
// NodeManager at every phase above, with the 2.7.3 and the 3.1.1 clients, and with
// Apache's 3.1.1 NodeManager at the registered one. Each time pi succeeds on its first
// attempt with four containers (AM, two maps, reduce: no task ran twice), `yarn logs`
// prints all four (log aggregation on), it is listed SUCCEEDED, no container went without
// an NMToken, and the NodeManager ends with no container running.
func TestRMKilledAtEachPhaseOfPi(t *testing.T) {
	t.Parallel() // its subtests are clusters in their own network namespaces
	ci := append(bobbinCells(hadoop2, everyPhase()...), bobbinCells(hadoop3, everyPhase()...)...)
	killMatrix(t, killRM, piJob, append(ci, killCell{version: hadoop3, phase: "registered"}))
}

// TestNMKilledAtEachPhaseOfPi is the matrix for the NodeManager, with NodeManager
// recovery on: the same checks, so the restarted NodeManager took every container back
// (a container run again would be a fifth). CI: Bobbin's NodeManager at the phases where
// it has containers, Apache's 3.1.1 one with its AM running (see skipOnProcpsKill for
// 2.7.3's, skipOnApacheNMPidFileWindow for a container being launched), and with pi
// waiting for room: the filler's end frees the node while the NodeManager restarts, and
// pi's AM goes to a node that refuses it until it has registered again (Core.launchAM).
// That cell failed pi on both its attempts before the RM waited for such a node.
func TestNMKilledAtEachPhaseOfPi(t *testing.T) {
	t.Parallel() // its subtests are clusters in their own network namespaces
	ci := bobbinCells(hadoop2, "am-starting", "registered", "maps", "reduce", "commit")
	killMatrix(t, killNM, piJob, append(ci, killCell{version: hadoop3, phase: "registered"}, killCell{version: hadoop3, phase: "accepted"}))
}

// TestRMAndNMKilledAtEachPhaseOfPi kills both daemons at once.
func TestRMAndNMKilledAtEachPhaseOfPi(t *testing.T) {
	t.Parallel() // its subtests are clusters in their own network namespaces
	killMatrix(t, killBoth, piJob, bobbinCells(hadoop2, "registered", "maps", "reduce"))
}

// TestHAActiveKilledAtEachPhaseOfPi kills the active of two HA RMs: the standby is active
// within ZooKeeper's session timeout + 1 s (the time is printed), and pi succeeds as
// above. CI: the phases TestHAFailoverDuringPi (maps) and TestHAFailoverAfterAMRegistered
// do not cover.
func TestHAActiveKilledAtEachPhaseOfPi(t *testing.T) {
	t.Parallel() // its subtests are clusters in their own network namespaces
	killMatrix(t, killActive, piJob, bobbinCells(hadoop2, "accepted", "am-starting", "reduce", "commit", "unregistered"))
}

// TestRMKilledAtEachPhaseOfDShell is the RM's matrix for the distributed shell (2.7.3,
// Bobbin's NodeManager) at the phases it has: accepted, its AM starting, registered before
// any container, its two containers running, and unregistered. The full matrix runs every
// target, with both Hadoop versions and both NodeManagers.
func TestRMKilledAtEachPhaseOfDShell(t *testing.T) {
	t.Parallel() // its subtests are clusters in their own network namespaces
	targets, versions, bobbinNMs := []killTarget{killRM}, []string{hadoop2}, []bool{true}
	if fullKillMatrix() {
		targets, versions, bobbinNMs = []killTarget{killRM, killNM, killBoth, killActive}, []string{hadoop2, hadoop3}, []bool{true, false}
	}
	for _, target := range targets {
		for _, v := range versions {
			for _, bobbinNM := range bobbinNMs {
				for _, ph := range killPhases {
					if ph.name == "reduce" || ph.name == "commit" {
						continue // a shell has neither
					}
					killAt(t, killCell{target: target, version: v, bobbinNM: bobbinNM, phase: ph.name}, dshellJob)
				}
			}
		}
	}
}

// TestRMSwitchedBetweenJavaAndBobbin is issue 63's switch of a live cluster: Apache's RM
// killed at a phase of pi and Bobbin's started on the same configuration and
// FileSystemRMStateStore, and the other way, with Apache's NodeManagers (a Java cluster
// being switched) of both versions. Each time pi succeeds on its first attempt with no
// task run twice, and is listed SUCCEEDED by the RM it ended on. Apache's RM restarted on
// its own store is the baseline (full matrix).
func TestRMSwitchedBetweenJavaAndBobbin(t *testing.T) {
	t.Parallel() // its subtests are clusters in their own network namespaces
	targets := []killTarget{switchToBobbin, switchToJava}
	if fullKillMatrix() {
		targets = append(targets, restartJava)
	}
	for _, store := range []string{"", storeZK} {
		for _, target := range targets {
			for _, v := range []string{hadoop2, hadoop3} {
				for _, ph := range []string{"am-starting", "registered", "maps"} {
					if store == storeZK && !fullKillMatrix() && ph != "registered" {
						continue // CI: the ZooKeeper store at one phase
					}
					killAt(t, killCell{target: target, version: v, phase: ph, store: store}, piJob)
				}
			}
		}
	}
}

// killScripts are a target's script fragments: kill (at the phase), and back (once the
// killed daemons are serving again, or the standby is active: it prints the failover time).
func killScripts(t *testing.T, c *nsCluster, target killTarget) (kill, back string) {
	rm := fmt.Sprintf("%s resourcemanager --conf %s > rm-restarted.log 2>&1 &\nRM=$!", bobbinBinary(t), c.confDir)
	waitRM := `for i in $(seq 1 600); do (exec 3<>/dev/tcp/127.0.0.1/8032) 2>/dev/null && break; sleep 0.02; done`
	switch target {
	case killNM:
		return "kill -9 $NM0\nwait $NM0 2>/dev/null", "sleep 2\nrestart_nm0"
	case killBoth:
		return "kill -9 $RM $NM0\nwait $RM $NM0 2>/dev/null", "sleep 2\n" + rm + "\nrestart_nm0\n" + waitRM
	case switchToBobbin, switchToJava, restartJava:
		// The other RM starts at once; the time is from the kill to its client port
		// answering (a JVM's start included for Apache's).
		next := fmt.Sprintf("%s resourcemanager --conf %s", bobbinBinary(t), c.confDir)
		switch target {
		case switchToJava:
			// The killed RM's connection keeper holds its ports for a Bobbin RM to take
			// back: they are freed first (docs/migration.md).
			next = fmt.Sprintf("%s release-rm-ports --conf %s > release.log 2>&1; echo \"=== released $?\"\n$HADOOP_HOME/bin/yarn resourcemanager", bobbinBinary(t), c.confDir)
		case restartJava:
			next = "$HADOOP_HOME/bin/yarn resourcemanager"
		}
		return "T1=$(date +%s.%N)\nkill -9 $RM\nwait $RM 2>/dev/null", next + ` > rm-restarted.log 2>&1 &
RM=$!
for i in $(seq 1 1200); do (exec 3<>/dev/tcp/127.0.0.1/8032) 2>/dev/null && break; sleep 0.05; done
echo "=== serving $(echo "$(date +%s.%N) - $T1" | bc) s"`
	case killActive:
		// The failover time is from the kill to rm2's log line saying it is active (a poll's
		// time would add the poll's own delay on a loaded machine).
		return "T1=$(date +%s.%N)\nkill -9 $RM", `for i in $(seq 1 600); do grep -q 'msg="transitioned to active"' rm2.log && break; sleep 0.05; done
T2=$(date -d "$(grep -m1 'msg="transitioned to active"' rm2.log | grep -o 'time="[^"]*"' | cut -d'"' -f2)" +%s.%N)
TW=$(date -d "$(grep -m1 'msg="won the election' rm2.log | grep -o 'time="[^"]*"' | cut -d'"' -f2)" +%s.%N)
echo "=== failover $(echo "$T2 - $T1" | bc) s, lock won $(echo "$TW - $T1" | bc) s"
RM=$PID_rm2`
	}
	return "kill -9 $RM\nwait $RM 2>/dev/null", "sleep 2\n" + rm + "\n" + waitRM
}

// killAt runs one cell of the matrix as a parallel subtest of t.
func killAt(t *testing.T, cell killCell, job func(*nsCluster) killJob) {
	i := slices.IndexFunc(killPhases, func(p killPhase) bool { return p.name == cell.phase })
	if i < 0 {
		t.Fatalf("no kill phase %q", cell.phase)
	}
	ph := killPhases[i]
	nm := "apache-nm"
	if cell.bobbinNM {
		nm = "bobbin-nm"
	}
	name := fmt.Sprintf("%s-%s-%s-%s", cell.target, ph.name, cell.version, nm)
	if cell.store != "" {
		name += "-" + cell.store
	}
	t.Run(name, func(t *testing.T) {
		t.Parallel() // its own network namespace: see parallelism in cluster_test.go
		if !cell.bobbinNM && cell.version == hadoop2 && (cell.target == killNM || cell.target == killBoth) {
			skipOnProcpsKill(t)
		}
		c := newNSClusterVersion(t, cell.version)
		c.bobbinNM = cell.bobbinNM
		c.ha = cell.target == killActive
		c.apacheRM = cell.target == switchToBobbin || cell.target == restartJava
		if cell.store == storeZK {
			c.preStart = c.startZK(t)
		}
		c.nmMemoryMB = 1536
		c.nmProps = func(_ int, p map[string]string) {
			p["yarn.resourcemanager.recovery.enabled"] = "true"
			p["yarn.resourcemanager.fs.state-store.uri"] = "file://" + c.path("rmstore")
			p["yarn.nodemanager.recovery.enabled"] = "true"
			p["yarn.nodemanager.recovery.dir"] = c.path("nm-recovery")
			if cell.store == storeZK {
				p["yarn.resourcemanager.store.class"] = "org.apache.hadoop.yarn.server.resourcemanager.recovery.ZKRMStateStore"
				p["hadoop.zk.address"], p["yarn.resourcemanager.zk-address"] = "127.0.0.1:2181", "127.0.0.1:2181"
			}
			// The containers are counted from what `yarn logs` prints of them.
			p["yarn.log-aggregation-enable"] = "true"
			p["yarn.nodemanager.remote-app-log-dir"] = "file://" + c.path("app-logs")
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
		kill, back := killScripts(t, c, cell.target)
		// An Apache NodeManager's heartbeat threads, for skipOnApacheNMResyncRace: a node
		// that stopped heartbeating can fail a job, or only its clean-up (yarn logs).
		heartbeats := ""
		if !cell.bobbinNM {
			heartbeats = nmHeartbeatThreads
		}
		out, err := c.run(t, 8*time.Minute, fmt.Sprintf(`Y=$HADOOP_HOME/bin/yarn
cd %[1]s
%[2]s
timeout 180 %[3]s > job.out 2>&1 &
JOB=$!
%[4]s
echo "=== phase %[5]s reached: $APP state $(curl -s http://127.0.0.1:8088/ws/v1/cluster/apps/$APP | grep -o '"state":"[A-Z]*"' | head -1) containers $(app_containers $APP)"
%[6]s
%[7]s
%[8]s
wait $JOB
RC=$?
echo "job exit $RC"
%[9]s
echo "=== attempts $($Y applicationattempt -list $APP 2>/dev/null | grep -c appattempt_)"
echo "=== final $($Y application -status $APP 2>/dev/null | grep -o 'Final-State : [A-Z]*')"
# Once the node has uploaded the application's logs (its local copies are gone), the
# containers are those yarn logs prints.
for i in $(seq 1 240); do [ -n "$(ls app-logs/*/logs/$APP 2>/dev/null | grep -v '\.tmp$')" ] && [ ! -d nm-logs/$APP ] && break; sleep 0.25; done
$Y logs -applicationId $APP > yarn-logs.out 2>&1
echo "=== containers $(grep -o '^Container: container_[0-9e_]*' yarn-logs.out | sort -u | wc -l)"
grep -c 'No NMToken sent' job.out yarn-logs.out 2>/dev/null | awk -F: '{s+=$NF} END {print "=== no-nmtoken " s+0}'
for i in $(seq 1 120); do N=$(curl -s http://127.0.0.1:8042/ws/v1/node/containers | grep -o '"state":"RUNNING"' | wc -l); [ "$N" -eq 0 ] && break; sleep 0.25; done
echo "=== running on the node $N"`, c.dir, filler, j.command, ph.wait, ph.name, kill, back, release, heartbeats))
		fail := func(why string) {
			c.keep(t)
			t.Fatalf("%s\nerr %v\n%s\n--- job:\n%s\n--- restarted rm:\n%s\n--- restarted nm:\n%s", why, err, out, c.logTail("job.out", 40),
				c.logTail("rm-restarted.log", 30)+c.logTail("rm2.log", 30), c.logTail("nm-restarted.log", 30))
		}
		if err != nil {
			fail("cluster script failed")
		}
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "=== phase") || strings.HasPrefix(l, "=== AM container") || strings.HasPrefix(l, "=== containers") || strings.HasPrefix(l, "=== serving") {
				t.Log(l)
			}
		}
		skipOnApacheNMResyncRace(t, c, out)
		skipOnApacheNMPidFileWindow(t, c)
		if strings.Contains(out, "=== rm1 did not become active") {
			fail("rm1 was not the active at the start")
		}
		if !strings.Contains(out, "=== phase "+ph.name+" reached: application_") {
			fail("the phase was not reached")
		}
		if cell.target == switchToJava && !strings.Contains(out, "=== released 0") {
			fail("bobbin release-rm-ports failed:\n" + c.logTail("release.log", 10))
		}
		if !strings.Contains(out, "job exit 0") || !strings.Contains(c.logTail("job.out", 40), j.success) {
			if !jobHistoryMissed(c, out) {
				fail(j.name + " did not succeed across the kill")
			}
			t.Logf("%s's client missed its AM's last seconds and found no JobHistoryServer (none runs here); the application ended SUCCEEDED", j.name)
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
		switch {
		case n < j.containers:
			fail(fmt.Sprintf("yarn logs has %d containers of %s, want %d: a container's logs are missing\n%s", n, j.name, j.containers, c.logTail("yarn-logs.out", 20)))
		case n > j.containers && !j.reasks:
			fail(fmt.Sprintf("%s ran %d containers, want %d: a task ran twice", j.name, n, j.containers))
		}
		if c.ha {
			checkFailoverTime(t, out, fail)
		}
	})
}

// checkFailoverTime reads the failover time a killActive cell printed. A failover is two
// parts with their own causes, checked apart:
//   - the lock: ZooKeeper expires the killed active's session (4 s, checked each 250 ms
//     tick) and the standby's watch fires: the standby must win within the session + 1 s;
//     later means the elector waited on something besides the lock (a retry's back-off);
//   - becoming active: a new core built, the store read back, the services started. It took
//     0.04 s on an idle machine and up to 1.4 s on CI's two starved cores (ZooKeeper, four
//     clusters and -race beside it); past 3 s it waits on a timer or re-reads too much.
//
// A single 5 s bound for both failed on CI with a 4.44 s lock and a 0.83 s start.
func checkFailoverTime(t *testing.T, out string, fail func(string)) {
	m := regexp.MustCompile(`=== failover ([0-9.]+) s, lock won ([0-9.]+) s`).FindStringSubmatch(out)
	if m == nil {
		fail("no failover time")
	}
	total, _ := strconv.ParseFloat(m[1], 64)
	won, _ := strconv.ParseFloat(m[2], 64)
	t.Logf("the standby was active %.2f s after the active was killed (lock won at %.2f s, active %.2f s later)", total, won, total-won)
	if won > 5 {
		fail(fmt.Sprintf("the standby won the lock %.2f s after the kill, more than the 4 s session + 1 s", won))
	}
	if total-won > 3 {
		fail(fmt.Sprintf("the standby took %.2f s from winning the lock to being active, more than 3 s", total-won))
	}
}

// skipOnProcpsKill skips a test that restarts Apache 2.7.3's NodeManager where that
// NodeManager cannot take its containers back: it asks whether a container lives with
// `kill -0 -PID` (Shell.getCheckProcessIsAliveCommand), and procps-ng's kill (4.0 here,
// Debian 12) parses "-PID" after the signal as an option, not a process group: it answers
// a live container as gone (and the answer even varies with the pid's digits), so the
// restarted NodeManager declares running containers lost (exit 154) under any RM. 3.1.1's
// NodeManager asks `bash -c "kill -0 -- -PID"`, which reads it right.
func skipOnProcpsKill(t *testing.T) {
	t.Helper()
	if v, _ := exec.Command("kill", "-V").CombinedOutput(); strings.Contains(string(v), "procps-ng") {
		t.Skipf("Apache 2.7.3's NodeManager cannot recover containers with this machine's kill (%s): it asks `kill -0 -PID`, which procps-ng misreads", strings.TrimSpace(string(v)))
	}
}

// skipOnApacheNMPidFileWindow skips a cell in which an Apache NodeManager was killed
// while it launched a container: it records the container LAUNCHED before the launch
// script has written its pid file, and the restarted NodeManager, finding no pid file,
// declares the running container lost (exit 154; RecoveredContainerLaunch, "Unable to
// locate pid file"), so the AM runs its task again — under any RM. Bobbin's NodeManager
// finds such a container by the marker in its environment (docs/recovery.md).
func skipOnApacheNMPidFileWindow(t *testing.T, c *nsCluster) {
	t.Helper()
	if !c.bobbinNM && strings.Contains(c.logTail("nm-restarted.log", 100000), "Unable to locate pid file for container") {
		c.keep(t)
		t.Skip("the Apache NodeManager was killed between recording a container launched and its pid file (upstream window: the restarted NodeManager declares it lost)")
	}
}

// jobHistoryMissed reports whether a MapReduce job client failed only for want of a
// JobHistoryServer, which these clusters do not run, while its application ended
// SUCCEEDED: a 2.7.3 client slowed by a kill (its failover back-off) can ask for the
// counters after the AM has stopped serving them (it serves them 5 s past the job's end),
// and then asks the history server at the default address — to a Java RM too. 2.7.3's
// Configuration ignores mapred-site.xml's empty mapreduce.jobhistory.address.
func jobHistoryMissed(c *nsCluster, out string) bool {
	return strings.Contains(c.logTail("job.out", 200), "to 0.0.0.0:10020 failed on connection exception") &&
		strings.Contains(out, "=== final Final-State : SUCCEEDED")
}
