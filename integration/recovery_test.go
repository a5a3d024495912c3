package integration

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestRMKilledDuringPiRecovers is issue 16's first run, on Hadoop 2.7.3 with an Apache
// NodeManager: `bobbin resourcemanager` with recovery on (the embedded store) is killed
// with SIGKILL while pi's maps run and started again two seconds later. The RM's recovery
// here is not work-preserving: it kills the containers the NodeManager kept, gives pi's
// application a second attempt, and MapReduce's AM recovers the job. pi must SUCCEED and every earlier
// application must still be listed with its final state.
//
// Not yet passing, so it runs only with BOBBIN_RECOVERY_E2E=1: the RM recovers both
// applications and pi's second attempt FINISHES/SUCCEEDS, but the Apache NodeManager keeps
// the first attempt's AM running although the restarted RM sends it for cleanup on every
// heartbeat, and pi's job client keeps polling that AM. Work-preserving recovery (the AM
// keeps running and re-registers) is the way through.
func TestRMKilledDuringPiRecovers(t *testing.T) {
	if os.Getenv("BOBBIN_RECOVERY_E2E") == "" {
		t.Skip("set BOBBIN_RECOVERY_E2E=1: work in progress (issue 16), see the comment")
	}
	t.Parallel() // its own network namespace: see parallelism in cluster_test.go
	c := newNSCluster(t)
	// The RM reads its own conf dir: recovery on, not work-preserving. The NodeManager
	// keeps YARN's default (work-preserving): told to resync, it keeps its containers and
	// reports them when it registers again, and the RM kills those it does not know. (A
	// 2.7.3 NodeManager with work-preserving off stays unregistered for minutes after a
	// resync while it waits on containers it is killing.)
	props := nmConf(c.dir)
	props["yarn.resourcemanager.recovery.enabled"] = "true"
	props["yarn.resourcemanager.fs.state-store.uri"] = "file://" + c.path("rmstore")
	props["yarn.resourcemanager.work-preserving-recovery.enabled"] = "false"
	c.rmConfDir = c.path("rmconf")
	os.MkdirAll(c.rmConfDir, 0o755)
	writeConf(t, c.rmConfDir, props)
	writeMapredSite(t, c)
	rm := fmt.Sprintf("%s resourcemanager --conf %s", bobbinBinary(t), c.rmConfDir)
	out, err := c.run(t, 8*time.Minute, fmt.Sprintf(`Y=$HADOOP_HOME/bin/yarn
# The job client asks the JobHistory server for a job whose AM it lost track of (the first
# attempt died with the RM's resync): run one, as a cluster would.
$HADOOP_HOME/sbin/mr-jobhistory-daemon.sh start historyserver > %[4]s/jhs.out 2>&1
# An application that ends before the crash.
timeout 150 $Y jar %[2]s -jar %[2]s -shell_command 'echo hello' -num_containers 1 -master_memory 256 -container_memory 128 > %[4]s/dshell.out 2>&1
echo "dshell exit $?"
T0=$(date +%%s.%%N)
timeout 150 $HADOOP_HOME/bin/hadoop jar %[1]s pi 2 10 > %[4]s/pi.out 2>&1 &
PI=$!
# Until both maps run (containers 2 and 3 of the first attempt have log directories).
for i in $(seq 1 240); do
  [ "$(ls -d %[4]s/nm-logs/application_*/container_*_01_00000[23] 2>/dev/null | wc -l)" -ge 2 ] && break
  sleep 0.25
done
echo "maps running after $(echo "$(date +%%s.%%N) - $T0" | bc) s"
kill -9 $RM
wait $RM 2>/dev/null
sleep 2
%[3]s > %[4]s/rm2.log 2>&1 &
RM=$!
T1=$(date +%%s.%%N)
for i in $(seq 1 100); do $Y application -list >/dev/null 2>&1 && break; sleep 0.1; done
echo "rm serving after $(echo "$(date +%%s.%%N) - $T1" | bc) s"
wait $PI
echo "pi exit $?"
echo "pi took $(echo "$(date +%%s.%%N) - $T0" | bc) s"
echo "=== list"
$Y application -list -appStates ALL 2>&1 | grep application_
echo "=== end list"
PIAPP=$($Y application -list -appStates ALL 2>/dev/null | awk '/QuasiMonteCarlo/ {print $1}' | head -1)
echo "=== attempts"
$Y applicationattempt -list "$PIAPP" 2>&1 | grep appattempt_
echo "=== end attempts"
$HADOOP_HOME/sbin/mr-jobhistory-daemon.sh stop historyserver > /dev/null 2>&1
`, c.examplesJar(), c.dshellJar(), rm, c.dir))
	t.Logf("%s", out)
	fail := func(why string) {
		c.keep(t)
		t.Fatalf("%s\n%s\n--- pi:\n%s\n--- rm:\n%s\n--- rm2:\n%s\n--- nm:\n%s", why, out, c.logTail("pi.out", 40), c.logTail("rm.log", 30), c.logTail("rm2.log", 40), c.logTail("nm.log", 30))
	}
	if err != nil {
		fail(fmt.Sprintf("cluster script: %v", err))
	}
	if !strings.Contains(out, "dshell exit 0") || !strings.Contains(out, "pi exit 0") {
		fail("distributed shell or pi failed")
	}
	if !strings.Contains(c.logTail("pi.out", 40), "Estimated value of Pi is") {
		fail("pi printed no estimate")
	}
	list := out[strings.Index(out, "=== list"):strings.Index(out, "=== end list")]
	if n := len(regexp.MustCompile(`FINISHED\s+SUCCEEDED`).FindAllString(list, -1)); n != 2 {
		fail(fmt.Sprintf("%d applications FINISHED/SUCCEEDED after the restart, want the shell (before the crash) and pi", n))
	}
	if !strings.Contains(c.logTail("rm2.log", 200), "state recovered") {
		fail("the restarted RM logged no recovery")
	}
}
