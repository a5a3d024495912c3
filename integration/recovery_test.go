package integration

import (
	"context"
	"fmt"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/client/rmclient"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/rpc"
)

// TestRMKilledDuringPiRecovers is issue 16's acceptance run: `bobbin resourcemanager`
// with recovery on (the embedded store, work-preserving by default) is killed with
// SIGKILL while pi's maps run and started again two seconds later, on Hadoop 2.7.3 and
// 3.1.1, with an Apache NodeManager and with Bobbin's. The NodeManager keeps its
// containers and reports them as it registers again; pi's AM re-registers with its
// AMRMToken and re-sends its asks. pi must SUCCEED on its one attempt with no task attempt
// killed, and every earlier application must still be listed with its final state. The
// times of an undisturbed pi and of the disturbed one are logged (docs/benchmarks.md).
func TestRMKilledDuringPiRecovers(t *testing.T) {
	t.Parallel() // its subtests join the other clusters' tests, not a batch of their own
	for _, tc := range []struct {
		name, version      string
		bobbinNM, apacheRM bool
	}{
		{"2.7.3-apache-nm", hadoop2, false, false},
		{"2.7.3-bobbin-nm", hadoop2, true, false},
		{"3.1.1-apache-nm", hadoop3, false, false},
		{"3.1.1-bobbin-nm", hadoop3, true, false},
		// The same run against the Apache RM, for docs/benchmarks.md's comparison.
		{"2.7.3-apache-rm", hadoop2, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.apacheRM && os.Getenv("BOBBIN_COMPARE_APACHE_RM") == "" {
				t.Skip("the Apache RM's run is a comparison for docs/benchmarks.md: set BOBBIN_COMPARE_APACHE_RM=1")
			}
			t.Parallel() // its own network namespace: see parallelism in cluster_test.go
			c := newNSClusterVersion(t, tc.version)
			c.bobbinNM, c.apacheRM = tc.bobbinNM, tc.apacheRM
			killRMDuringPi(t, c)
		})
	}
}

func killRMDuringPi(t *testing.T, c *nsCluster) {
	props := nmConf(c.dir)
	props["yarn.resourcemanager.recovery.enabled"] = "true"
	props["yarn.resourcemanager.fs.state-store.uri"] = "file://" + c.path("rmstore")
	// The Java clients (NodeManager, AM) whose connection to the RM dies sleep
	// yarn.resourcemanager.connect.retry-interval.ms (30 s) before they call again. The
	// Bobbin RM's connection keeper spares them that (their connections do not die); the
	// Apache RM's run measures it. BOBBIN_RECOVERY_CLIENT_RETRY_MS sets the interval.
	if ms := os.Getenv("BOBBIN_RECOVERY_CLIENT_RETRY_MS"); ms != "" {
		props["yarn.resourcemanager.connect.retry-interval.ms"] = ms
	}
	writeConf(t, c.confDir, props)
	writeMapredSite(t, c)
	rm := fmt.Sprintf("%s resourcemanager --conf %s", bobbinBinary(t), c.confDir)
	if c.apacheRM {
		rm = c.home + "/bin/yarn resourcemanager"
	}
	out, err := c.run(t, 8*time.Minute, fmt.Sprintf(`Y=$HADOOP_HOME/bin/yarn
# An application that ends before the crash; with BOBBIN_RECOVERY_BASELINE=1 an
# undisturbed pi, for the time to compare with (docs/benchmarks.md), else a quick one.
T0=$(date +%%s.%%N)
if [ -n "%[5]s" ]; then
  timeout 150 $HADOOP_HOME/bin/hadoop jar %[1]s pi 2 10 > %[4]s/pi0.out 2>&1
else
  timeout 150 $HADOOP_HOME/bin/hadoop jar %[1]s pi 1 1 > %[4]s/pi0.out 2>&1
fi
echo "pi0 exit $?"
echo "undisturbed pi took $(echo "$(date +%%s.%%N) - $T0" | bc) s"
T0=$(date +%%s.%%N)
timeout 150 $HADOOP_HOME/bin/hadoop jar %[1]s pi 2 10 > %[4]s/pi.out 2>&1 &
PI=$!
# Until both maps of the second pi run (containers 2 and 3 of its first attempt have
# log directories).
for i in $(seq 1 240); do
  [ "$(ls -d %[4]s/nm-logs/application_*_0002/container_*_01_00000[23] 2>/dev/null | wc -l)" -ge 2 ] && break
  sleep 0.25
done
echo "maps running after $(echo "$(date +%%s.%%N) - $T0" | bc) s"
kill -9 $RM
wait $RM 2>/dev/null
T1=$(date +%%s.%%N)
sleep 2
%[3]s > %[4]s/rm2.log 2>&1 &
RM=$!
for i in $(seq 1 600); do (exec 3<>/dev/tcp/127.0.0.1/8032) 2>/dev/null && break; sleep 0.02; done
echo "rm listening $(echo "$(date +%%s.%%N) - $T1" | bc) s after the kill (2 s of it the pause before the restart)"
for i in $(seq 1 100); do $Y application -list >/dev/null 2>&1 && break; sleep 0.1; done
echo "rm answering the yarn CLI $(echo "$(date +%%s.%%N) - $T1" | bc) s after the kill"
wait $PI
PIRC=$?
echo "pi exit $PIRC"
[ $PIRC -ne 0 ] && { %[6]s; }
echo "disturbed pi took $(echo "$(date +%%s.%%N) - $T0" | bc) s"
echo "=== list"
$Y application -list -appStates ALL 2>&1 | grep application_
echo "=== end list"
echo "=== containers"
ls %[4]s/nm-logs/application_*_0002
echo "=== end containers"
echo "=== attempts"
$Y applicationattempt -list "$($Y application -list -appStates ALL 2>/dev/null | awk '/QuasiMonteCarlo/ {print $1}' | sort | tail -1)" 2>&1 | grep appattempt_
echo "=== end attempts"
`, c.examplesJar(), "", rm, c.dir, os.Getenv("BOBBIN_RECOVERY_BASELINE"), nmHeartbeatThreads))
	t.Logf("%s", out)
	fail := func(why string) {
		c.keep(t)
		t.Fatalf("%s\n%s\n--- pi0:\n%s\n--- pi:\n%s\n--- rm:\n%s\n--- rm2:\n%s\n--- nm:\n%s", why, out, c.logTail("pi0.out", 30), c.logTail("pi.out", 60), c.logTail("rm.log", 30), c.logTail("rm2.log", 60), c.logTail("nm.log", 40))
	}
	if err != nil {
		fail(fmt.Sprintf("cluster script: %v", err))
	}
	skipOnApacheNMResyncRace(t, c, out)
	if !strings.Contains(out, "pi0 exit 0") || !strings.Contains(out, "pi exit 0") {
		fail("pi failed")
	}
	if !strings.Contains(c.logTail("pi.out", 80), "Estimated value of Pi is") {
		fail("pi printed no estimate")
	}
	// One AM, two maps, one reduce: a task attempt killed by the restart would have
	// been run again in a fifth container.
	containers := out[strings.Index(out, "=== containers"):strings.Index(out, "=== end containers")]
	if n := strings.Count(containers, "container_"); n != 4 {
		fail(fmt.Sprintf("the disturbed pi ran %d containers, want 4 (AM, two maps, reduce): a task was run again", n))
	}
	list := out[strings.Index(out, "=== list"):strings.Index(out, "=== end list")]
	if n := len(regexp.MustCompile(`FINISHED\s+SUCCEEDED`).FindAllString(list, -1)); n != 2 {
		fail(fmt.Sprintf("%d applications FINISHED/SUCCEEDED after the restart, want both pis", n))
	}
	attempts := out[strings.Index(out, "=== attempts"):strings.Index(out, "=== end attempts")]
	if n := strings.Count(attempts, "appattempt_"); n != 1 {
		fail(fmt.Sprintf("the disturbed pi ran %d attempts, want 1", n))
	}
	if !c.apacheRM && !strings.Contains(c.logTail("rm2.log", 400), "container recovered") {
		fail("the restarted RM recovered no container")
	}
	// The connection keeper held the NodeManager's and the AM's connections: the
	// restarted RM served them without their clients' 30 s retry sleep.
	if m := regexp.MustCompile(`connections kept across the restart taken over.* connections=(\d+)`).FindStringSubmatch(c.logTail("rm2.log", 400)); !c.apacheRM && (m == nil || m[1] == "0") {
		fail("the restarted RM took over no connection from its keeper")
	}
}

// TestRMKilledKeepsConnections: `bobbin resourcemanager` with recovery on hands its
// sockets to its connection keeper, so after SIGKILL and a restart a client's
// connection and the NodeManager's are the same ones: a call made while no RM runs is
// answered by the restarted one, and the NodeManager is told to resync on its next
// heartbeat instead of finding its connection broken. Needs no Hadoop.
func TestRMKilledKeepsConnections(t *testing.T) {
	store := t.TempDir()
	c := startBobbinCluster(t, "yarn.resourcemanager.recovery.enabled", "true",
		"yarn.resourcemanager.fs.state-store.uri", "file://"+store)
	var wire testutil.Wire
	cl := rmclient.New(c.rmAddr, "alice", rpc.ClientOptions{Logger: testutil.QuietLogger(), ConnectRetries: -1, Dial: wire.Dial})
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	app, err := cl.GetNewApplication(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c.rm.cmd.Process.Kill()
	<-c.rm.done
	type answer struct {
		nodes int32
		err   error
	}
	answered := make(chan answer, 1)
	before := wire.Writes.Load()
	go func() { // made while no RM runs
		m, err := cl.GetClusterMetrics(ctx)
		answered <- answer{m.GetNumNodeManagers(), err}
	}()
	testutil.Eventually(t, 10*time.Second, "the call written while no RM runs", func() bool { return wire.Writes.Load() > before })
	restart := time.Now()
	rm2 := startDaemon(t, "resourcemanager", "--conf", c.confDir)
	a := <-answered
	if a.err != nil {
		t.Fatalf("the call made while the RM was down: %v\n%s", a.err, rm2.Log())
	}
	t.Logf("answered %v after the restart", time.Since(restart))
	// The NodeManager's kept heartbeat connection gets RESYNC and it registers again.
	for {
		m, err := cl.GetClusterMetrics(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m.GetNumNodeManagers() == 1 {
			break
		}
		if time.Since(restart) > 20*time.Second {
			t.Fatalf("the NodeManager did not register again\n%s", rm2.Log())
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("NodeManager registered again %v after the restart", time.Since(restart))
	// Answered by the new process: ids carry its cluster timestamp.
	next, err := cl.GetNewApplication(ctx)
	if err != nil || next.GetApplicationId().GetClusterTimestamp() == app.GetApplicationId().GetClusterTimestamp() {
		t.Fatalf("new application after the restart: %v (before: %v), %v", next.GetApplicationId(), app.GetApplicationId(), err)
	}
	if n := wire.Dials.Load(); n != 1 {
		t.Fatalf("the client connected %d times; its connection should have survived the restart", n)
	}
	taken := 0
	if m := regexp.MustCompile(`connections kept across the restart taken over.* connections=(\d+)`).FindStringSubmatch(rm2.Log()); m != nil {
		taken, _ = strconv.Atoi(m[1])
	}
	if taken < 2 {
		t.Fatalf("want the client's and the NodeManager's connections taken over:\n%s", rm2.Log())
	}
	// A clean stop lets the ports go.
	rm2.stop(t)
	if !testutil.Poll(5*time.Second, func() bool {
		var ln net.Listener
		if ln, err = net.Listen("tcp", c.rmAddr); err == nil {
			ln.Close()
		}
		return err == nil
	}) {
		t.Fatalf("%s still bound after the RM stopped: %v", c.rmAddr, err)
	}
}
