package integration

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestHAZooKeeperRestartedUnderLoad is issue 44's ZooKeeper fault: two HA RMs, Bobbin's
// NodeManager, pi with its maps running when ZooKeeper is killed with SIGKILL and started
// again 6 s later — past the RMs' 4 s session timeout, so the active cannot know whether
// it still holds the lock and steps down. While both RMs are polled (every 50 ms, from
// before the kill to the job's end) no poll finds both answering as active; once ZooKeeper
// is back one RM is active again (the time is logged), and pi succeeds on its one attempt,
// with no task run twice.
func TestHAZooKeeperRestartedUnderLoad(t *testing.T) {
	t.Parallel() // its own network namespace: see parallelism in cluster_test.go
	c := newNSCluster(t)
	c.bobbinNM, c.ha = true, true
	c.nmProps = func(_ int, p map[string]string) {
		p["yarn.nodemanager.recovery.enabled"] = "true"
		p["yarn.nodemanager.recovery.dir"] = c.path("nm-recovery")
	}
	writeMapredSite(t, c)
	out, err := c.run(t, 8*time.Minute, fmt.Sprintf(`Y=$HADOOP_HOME/bin/yarn
cd %[1]s
watch_roles > roles.log 2>&1 &
WATCH=$!
timeout 300 $HADOOP_HOME/bin/hadoop jar %[2]s pi 2 10 > job.out 2>&1 &
JOB=$!
for i in $(seq 1 480); do [ "$(ls -d nm-logs/application_*_0001/container_*_01_00000[23] 2>/dev/null | wc -l)" -ge 2 ] && break; sleep 0.25; done
APP=$(running_app)
echo "=== maps running: $APP"
kill -9 $ZK
wait $ZK 2>/dev/null
sleep 6
echo "=== while ZooKeeper was down: rm1 $(ha_state 8088) rm2 $(ha_state 18088)"
start_zk
T=$(date +%%s.%%N)
for i in $(seq 1 600); do echo "$(ha_state 8088) $(ha_state 18088)" | grep -q ACTIVE && break; sleep 0.05; done
echo "=== active again $(echo "$(date +%%s.%%N) - $T" | bc) s after ZooKeeper was back: rm1 $(ha_state 8088) rm2 $(ha_state 18088)"
wait $JOB
echo "job exit $?"
kill $WATCH
roles_seen roles.log
echo "=== attempts $($Y applicationattempt -list $APP 2>/dev/null | grep -c appattempt_)"
echo "=== final $($Y application -status $APP 2>/dev/null | grep -o 'Final-State : [A-Z]*')"
echo "=== containers $(ls -d nm-logs/$APP/container_* 2>/dev/null | wc -l)"
[ "$(ha_state 18088)" = ACTIVE ] && RM=$PID_rm2`, c.dir, c.examplesJar()))
	t.Logf("%s", out)
	fail := func(why string) {
		c.keep(t)
		t.Fatalf("%s\nerr %v\n%s\n--- job:\n%s\n--- rm1:\n%s\n--- rm2:\n%s", why, err, out, c.logTail("job.out", 40), c.logTail("rm1.log", 30), c.logTail("rm2.log", 30))
	}
	if err != nil {
		fail("cluster script failed")
	}
	if strings.Contains(out, "=== rm1 did not become active") {
		fail("rm1 was not the active at the start")
	}
	if !strings.Contains(out, "=== maps running: application_") {
		fail("pi's maps never ran")
	}
	// With ZooKeeper gone no RM can know it holds the lock: none answers as active.
	if !strings.Contains(out, "=== while ZooKeeper was down: rm1 STANDBY rm2 STANDBY") {
		fail("an RM answered as active while ZooKeeper was down")
	}
	if !regexp.MustCompile(`=== active again [0-9.]+ s after ZooKeeper was back: rm1 (ACTIVE rm2 \w*|\w* rm2 ACTIVE)`).MatchString(out) {
		fail("no RM became active again")
	}
	if both, polls := splitBrain(t, out); both > 0 || polls < 100 {
		fail(fmt.Sprintf("%d of %d polls found both RMs answering as active (or too few polls)", both, polls))
	}
	if (!strings.Contains(out, "job exit 0") || !strings.Contains(c.logTail("job.out", 40), "Estimated value of Pi is")) && !jobHistoryMissed(c, out) {
		fail("pi did not succeed across ZooKeeper's restart")
	}
	for _, want := range []string{"=== attempts 1", "=== final Final-State : SUCCEEDED"} {
		if !strings.Contains(out, want) {
			fail("missing: " + want)
		}
	}
	m := regexp.MustCompile(`=== containers (\d+)`).FindStringSubmatch(out)
	if m == nil {
		fail("no container count")
	}
	if n, _ := strconv.Atoi(m[1]); n != 4 {
		fail("pi ran other than four containers: a task ran twice")
	}
}
