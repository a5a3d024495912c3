package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/container"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
)

// TestNMKilledDuringPiKeepsContainers is issue 18's work-preserving NodeManager restart:
// `bobbin nodemanager` with yarn.nodemanager.recovery.enabled is killed with SIGKILL while
// a map of pi runs and started again a second later, under Bobbin's RM and under the
// Apache 2.7.3 RM. The restarted NodeManager takes the running containers back without
// restarting them (its log says so, and launches none of them again), re-registers
// listing them, and pi SUCCEEDS with no failed or killed task attempt (one AM, two maps,
// one reduce). After the job no process of this NodeManager's containers is left.
//
// With containers in User-Mode Linux guests the job is a distributed shell whose
// container sleeps in its guest while the NodeManager is killed: MapReduce cannot run in
// guests here, since each guest's slirp network reaches the host but not another guest,
// so tasks could not reach an AM in a guest, restart or not.
func TestNMKilledDuringPiKeepsContainers(t *testing.T) {
	t.Parallel() // its subtests join the other clusters' tests, not a batch of their own
	for _, tc := range []struct {
		name          string
		apacheRM, uml bool
	}{
		{"bobbin-rm", false, false},
		{"apache-rm", true, false},
		{"bobbin-rm-uml", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kernel := ""
			if tc.uml {
				kernel = requireUML(t)
			}
			t.Parallel() // its own network namespace: see parallelism in cluster_test.go
			c := newNSCluster(t)
			c.bobbinNM, c.apacheRM = true, tc.apacheRM
			c.nmProps = func(_ int, p map[string]string) {
				p["yarn.nodemanager.recovery.enabled"] = "true"
				p["yarn.nodemanager.recovery.dir"] = c.path("nm-recovery")
				if tc.uml {
					umlNM(c, kernel, p)
				}
			}
			if tc.uml {
				killNMDuringDShell(t, c)
				return
			}
			killNMDuringPi(t, c)
		})
	}
}

func killNMDuringPi(t *testing.T, c *nsCluster) {
	writeMapredSite(t, c)
	out, err := c.run(t, 12*time.Minute, fmt.Sprintf(`Y=$HADOOP_HOME/bin/yarn
# Maps of 10⁸ samples each run for several seconds: one is still running when the NodeManager
# comes back.
timeout 400 $HADOOP_HOME/bin/hadoop jar %[1]s pi 2 100000000 > %[2]s/pi.out 2>&1 &
PI=$!
# Until a map runs: container 2's task JVM has written its syslog.
for i in $(seq 1 1200); do
  [ -s "$(ls -d %[2]s/nm-logs/application_*_0001/container_*_01_000002 2>/dev/null | head -1)/syslog" ] && break
  sleep 0.25
done
%[3]s
wait $PI
echo "pi exit $?"
%[4]s
echo "=== attempts"
$Y applicationattempt -list "$($Y application -list -appStates ALL 2>/dev/null | awk '/QuasiMonteCarlo/ {print $1}' | sort | tail -1)" 2>&1 | grep appattempt_
echo "=== end attempts"
`, c.examplesJar(), c.dir, killAndRestartNM(t, c), afterJob(c)))
	t.Logf("%s", out)
	fail := func(why string) {
		c.keep(t)
		t.Fatalf("%s\n%s\n--- pi:\n%s\n--- rm:\n%s\n--- nm:\n%s\n--- nm2:\n%s", why, out, c.logTail("pi.out", 60), c.logTail("rm.log", 30),
			c.logTail("nm.log", 30), c.logTail("nm2.log", 60))
	}
	if err != nil {
		fail(fmt.Sprintf("cluster script: %v", err))
	}
	pi := c.logTail("pi.out", 200)
	if !strings.Contains(out, "pi exit 0") || !strings.Contains(pi, "Estimated value of Pi is") {
		fail("pi did not succeed across the NodeManager's restart")
	}
	// The AM's account of its task attempts: three succeeded, none failed or was killed.
	amLogs, _ := filepath.Glob(c.path("nm-logs/application_*_0001/container_*_01_000001/syslog"))
	if len(amLogs) != 1 {
		fail(fmt.Sprintf("AM syslog: %v", amLogs))
	}
	am, _ := os.ReadFile(amLogs[0])
	ended := regexp.MustCompile(`(attempt_\S+) TaskAttempt Transitioned from \S+ to (SUCCEEDED|FAILED|KILLED)`).FindAllStringSubmatch(string(am), -1)
	succeeded := 0
	for _, m := range ended {
		if m[2] != "SUCCEEDED" {
			fail(fmt.Sprintf("task attempt %s ended %s", m[1], m[2]))
		}
		succeeded++
	}
	if succeeded != 3 {
		fail(fmt.Sprintf("%d task attempts SUCCEEDED, want 3 (two maps, one reduce)", succeeded))
	}
	if n := strings.Count(section(out, "containers"), "container_"); n != 4 {
		fail(fmt.Sprintf("pi ran %d containers, want 4 (AM, two maps, reduce)", n))
	}
	if n := strings.Count(section(out, "attempts"), "appattempt_"); n != 1 {
		fail(fmt.Sprintf("pi ran %d attempts, want 1", n))
	}
	// The running containers were taken back, not started again.
	running, ids := takenBack(t, c, fail)
	if !running["_01_000001"] || len(running) < 2 {
		fail(fmt.Sprintf("the restarted NodeManager took back %v, want the running AM and a running map at least", ids))
	}
	t.Logf("containers taken back by the restarted NodeManager: %v", ids)
	if strays := section(out, "strays"); strings.Contains(strays, "/proc/") {
		fail("container processes left after the job:\n" + strays)
	}
	if b, _ := os.ReadFile(filepath.Join(c.path("nm-recovery"), "bobbin-nmstate.db")); len(b) == 0 {
		fail("no recovery store was written")
	}
}

// killAndRestartNM is the script that kills the NodeManager ($NMS) with SIGKILL, lists
// the application's containers so far (=== before kill) and starts it again a second
// later, logging to nm2.log.
func killAndRestartNM(t *testing.T, c *nsCluster) string {
	return fmt.Sprintf(`echo "=== before kill"
ls %[1]s/nm-logs/application_*_0001
kill -9 $NMS
sleep 1
%[2]s > %[1]s/nm2.log 2>&1 &
NMS=$!`, c.dir, c.bobbinNMCommand(t, c.confDir))
}

// afterJob is the script that follows a job in these tests: it waits until the restarted
// NodeManager has ended the application (its AM exits a few seconds after the client),
// then lists the live processes carrying this NodeManager's owner mark (=== strays) and
// the application's container log dirs (=== containers).
func afterJob(c *nsCluster) string {
	return fmt.Sprintf(`for i in $(seq 1 240); do grep -q "application finished on this node" %[1]s/nm2.log && break; sleep 0.25; done
echo "=== strays"
grep -lz '^%[2]s=%[3]s$' /proc/[0-9]*/environ 2>/dev/null | while read f; do d=${f%%/environ}; grep -q ') Z ' $d/stat 2>/dev/null || echo "$d $(tr '\0' ' ' < $d/cmdline | head -c 120)"; done
echo "=== end strays"
echo "=== containers"
ls %[1]s/nm-logs/application_*_0001
echo "=== end containers"`, c.dir, container.OwnerEnv, c.path("nm-local"))
}

// section is what a script printed between "=== name" and "=== end name".
func section(out, name string) string {
	i, j := strings.Index(out, "=== "+name+"\n"), strings.Index(out, "=== end "+name)
	if i < 0 || j < i {
		return ""
	}
	return out[i:j]
}

// takenBack reads the restarted NodeManager's log (nm2.log): the containers it took back
// (ids with their pids, for the test's log) and, by the suffix of their ids
// ("_01_000001"), those still running when it did. A container taken back and launched
// again fails the test.
func takenBack(t *testing.T, c *nsCluster, fail func(string)) (running map[string]bool, ids []string) {
	nm2, _ := os.ReadFile(c.path("nm2.log"))
	running = map[string]bool{}
	for _, l := range strings.Split(string(nm2), "\n") {
		if !strings.Contains(l, "container recovered: taken back") {
			continue
		}
		m := regexp.MustCompile(`container=(container_\S+_(01_\d+)).* pid=(\d+)`).FindStringSubmatch(l)
		if m == nil {
			continue
		}
		ids = append(ids, m[1]+" (pid "+m[3]+")")
		if regexp.MustCompile(`container launched.* container=` + regexp.QuoteMeta(m[1]) + `\s`).Match(nm2) {
			fail(m[1] + " was taken back and launched again")
		}
		if m[3] != "0" { // 0: it had ended while no NodeManager ran
			running["_"+m[2]] = true
		}
	}
	return running, ids
}

// killNMDuringDShell kills the NodeManager while a distributed shell's container sleeps
// in its UML guest and restarts it: the guest runs on, its output shows it ran once to the
// end, the job succeeds, and no guest process is left.
func killNMDuringDShell(t *testing.T, c *nsCluster) {
	out, err := c.run(t, 12*time.Minute, fmt.Sprintf(`Y=$HADOOP_HOME/bin/yarn
timeout 500 %[1]s -shell_command 'sleep 20; echo survived' -num_containers 1 -master_memory 256 -container_memory 128 > %[2]s/ds.out 2>&1 &
DS=$!
# Until the shell container's guest is up.
for i in $(seq 1 2400); do
  ls %[2]s/nm-local/usercache/*/appcache/application_*_0001/container_*_01_000002/.bobbin-uml/up >/dev/null 2>&1 && break
  sleep 0.25
done
sleep 2
%[3]s
wait $DS
echo "dshell exit $?"
%[4]s
`, c.dshellCommand(), c.dir, killAndRestartNM(t, c), afterJob(c)))
	t.Logf("%s", out)
	fail := func(why string) {
		c.keep(t)
		t.Fatalf("%s\n%s\n--- dshell:\n%s\n--- rm:\n%s\n--- nm:\n%s\n--- nm2:\n%s", why, out, c.logTail("ds.out", 40), c.logTail("rm.log", 30),
			c.logTail("nm.log", 30), c.logTail("nm2.log", 60))
	}
	if err != nil {
		fail(fmt.Sprintf("cluster script: %v", err))
	}
	if !strings.Contains(out, "dshell exit 0") {
		fail("the distributed shell did not succeed across the NodeManager's restart")
	}
	if n := strings.Count(section(out, "containers"), "container_"); n != 2 {
		fail(fmt.Sprintf("the shell ran %d containers, want 2 (AM, shell): one was run again", n))
	}
	stdout, _ := filepath.Glob(c.path("nm-logs/application_*_0001/container_*_01_000002/stdout"))
	if len(stdout) != 1 {
		fail(fmt.Sprintf("shell container stdout: %v", stdout))
	}
	if b, _ := os.ReadFile(stdout[0]); string(b) != "survived\n" {
		fail(fmt.Sprintf("the shell container's stdout is %q: it did not run once to its end", b))
	}
	running, ids := takenBack(t, c, fail)
	if !running["_01_000001"] || !running["_01_000002"] {
		fail(fmt.Sprintf("the restarted NodeManager took back %v, want the running AM and shell container", ids))
	}
	t.Logf("guests taken back by the restarted NodeManager: %v", ids)
	if strays := section(out, "strays"); strings.Contains(strays, "/proc/") {
		fail("container processes left after the job:\n" + strays)
	}
}

// TestNMRestartWithCorruptStore: a NodeManager with recovery on is killed with SIGKILL
// while its containers run, and its recovery store is overwritten with garbage before it
// starts again. It must start without recovery, say why in its log, move the bad store
// aside, and kill the containers it left running, which it can no longer account for;
// then it runs new containers as before. Needs no Hadoop.
func TestNMRestartWithCorruptStore(t *testing.T) {
	store := t.TempDir()
	c := startBobbinCluster(t, "yarn.nodemanager.address", fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"yarn.nodemanager.recovery.enabled", "true", "yarn.nodemanager.recovery.dir", store)
	go c.demo(t, "--containers", "2", "--command", "setsid sleep 300 & sleep 301")
	var app string
	if !testutil.Poll(30*time.Second, func() bool {
		out, _ := exec.Command(bobbinBinary(t), "client", "--rm", c.rmAddr, "apps").Output()
		if m := regexp.MustCompile(`application_\d+_\d+`).FindString(string(out)); m != "" {
			app = m
		}
		return app != "" && len(containerProcesses(app, "_000002", "_000003")) >= 4
	}) {
		t.Fatalf("containers never ran (app %q)\nNM:\n%s", app, c.nm.Log())
	}
	c.nm.cmd.Process.Kill()
	<-c.nm.done
	before := containerProcesses(app, "")
	if len(before) < 4 {
		t.Fatalf("the containers did not outlive the killed NodeManager: %v", before)
	}
	db := filepath.Join(store, "bobbin-nmstate.db")
	if err := os.WriteFile(db, []byte(strings.Repeat("not a recovery store ", 1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	c.nm = startDaemon(t, "nodemanager", "--conf", c.confDir)
	if !testutil.Poll(30*time.Second, func() bool { return strings.Contains(c.nm.Log(), "registered with the ResourceManager") }) {
		t.Fatalf("NodeManager did not register after the corrupt store:\n%s", c.nm.Log())
	}
	log := c.nm.Log()
	if !regexp.MustCompile(`recovery store unusable: starting without recovery.*cannot be opened`).MatchString(log) {
		t.Fatalf("the NodeManager did not say why it started without recovery:\n%s", log)
	}
	if moved, _ := filepath.Glob(db + ".corrupt-*"); len(moved) != 1 {
		t.Fatalf("the corrupt store was not moved aside: %v", moved)
	}
	if left := containerProcesses(app, ""); len(left) != 0 {
		t.Fatalf("container processes the NodeManager could not account for were left running: %v\n%s", left, log)
	}
	if n := strings.Count(log, "killing a container process the NodeManager cannot account for"); n < 2 {
		t.Fatalf("%d orphan kills logged, want the AM's and both task containers'\n%s", n, log)
	}
	t.Logf("%d processes of %s killed as unaccounted for", len(before), app)
	exec.Command(bobbinBinary(t), "client", "--rm", c.rmAddr, "kill", app).Run()
	if out, err := c.demo(t, "--containers", "1", "--command", "echo after"); err != nil {
		t.Fatalf("a job after the restart: %v\n%s\nNM:\n%s", err, out, c.nm.Log())
	}
}
