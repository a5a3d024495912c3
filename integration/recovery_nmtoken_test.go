package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestRMKilledAfterAMRegisteredBeforeAnyContainer is issue 44's first failure, at exactly
// its moment: the RM is killed (SIGKILL, restart 2 s later, work-preserving recovery)
// after pi's AM registered and before it had any container. A distributed shell holding
// the rest of the node keeps pi's maps waiting until the RM is back; it is then killed,
// and the maps go to the node where the AM runs. The AM holds no NMToken for that node
// (the RM started its container); the restarted RM took it for one that did and sent
// none, so every map failed with "No NMToken sent for …" and the job failed. Now pi
// succeeds on its first attempt, with the Bobbin NodeManager (2.7.3) and the Apache one
// (3.1.1).
func TestRMKilledAfterAMRegisteredBeforeAnyContainer(t *testing.T) {
	t.Parallel() // its subtests are clusters in their own network namespaces
	for _, tc := range []struct {
		name, version string
		bobbinNM      bool
	}{{"2.7.3-bobbin-nm", hadoop2, true}, {"3.1.1-apache-nm", hadoop3, false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // its own network namespace: see parallelism in cluster_test.go
			c := newNSClusterVersion(t, tc.version)
			c.bobbinNM = tc.bobbinNM
			// 1536 MB: the shell's AM (256) and container (768), then pi's AM (512),
			// and no room for a map.
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
			rm := fmt.Sprintf("%s resourcemanager --conf %s", bobbinBinary(t), c.confDir)
			out, err := c.run(t, 8*time.Minute, fmt.Sprintf(`Y=$HADOOP_HOME/bin/yarn
%[1]s -shell_command 'sleep 600' -num_containers 1 -master_memory 256 -container_memory 768 > %[3]s/filler.log 2>&1 &
for i in $(seq 1 240); do ls -d %[3]s/nm-logs/application_*_0001/container_*_0001_01_000002 >/dev/null 2>&1 && break; sleep 0.25; done
FILLER=$(running_app)
echo "filler $FILLER"
timeout 300 $HADOOP_HOME/bin/hadoop jar %[2]s pi 2 10 > %[3]s/pi.out 2>&1 &
PI=$!
# Until pi's AM has registered (its application RUNNING), with no container of its own.
for i in $(seq 1 480); do APP=$(running_app $FILLER); [ -n "$APP" ] && break; sleep 0.25; done
echo "pi $APP registered; containers $(app_containers $APP)"
kill -9 $RM
wait $RM 2>/dev/null
sleep 2
%[4]s > %[3]s/rm2.log 2>&1 &
RM=$!
for i in $(seq 1 600); do (exec 3<>/dev/tcp/127.0.0.1/8032) 2>/dev/null && break; sleep 0.02; done
$Y application -kill $FILLER 2>&1 | grep -v INFO
wait $PI
echo "pi exit $?"
echo "=== attempts $($Y applicationattempt -list $APP 2>/dev/null | grep -c appattempt_)"
grep -c 'No NMToken sent' %[3]s/pi.out %[3]s/nm-logs/$APP/*/syslog 2>/dev/null | awk -F: '{s+=$NF} END {print "=== no-nmtoken " s+0}'`,
				c.dshellCommand(), c.examplesJar(), c.dir, rm))
			fail := func(why string) {
				c.keep(t)
				t.Fatalf("%s\nerr %v\n%s\n--- pi:\n%s\n--- rm2:\n%s", why, err, out, c.logTail("pi.out", 40), c.logTail("rm2.log", 40))
			}
			if err != nil {
				fail("cluster script failed")
			}
			skipOnApacheNMResyncRace(t, c, out)
			if !strings.Contains(out, "containers 1") {
				fail("the RM was not killed between pi's registration and its first container")
			}
			if !strings.Contains(out, "pi exit 0") || !strings.Contains(c.logTail("pi.out", 40), "Estimated value of Pi is") {
				fail("pi did not succeed across the restart")
			}
			if !strings.Contains(out, "=== attempts 1") || !strings.Contains(out, "=== no-nmtoken 0") {
				fail("pi needed a second attempt or a container had no NMToken")
			}
		})
	}
}
