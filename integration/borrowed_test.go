package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The second NodeManager of these clusters listens on 127.0.0.1:8051; `yarn node -status`
// takes its id, named as the Java NodeManager names itself: by the address's canonical name.
const secondNodeID = "localhost:8051"

// staticNM is a NodeManager of the node's owner's own: not borrowed, automatic labels on,
// so it labels itself static and AM containers go there.
func staticNM(p map[string]string) {
	p["bobbin.nodemanager.auto-labels.enabled"] = "true"
	p["bobbin.nodemanager.auto-labels.window-ms"] = "3000"
	// Everything on this test machine counts as "external" load (the RM, the client
	// JVM, the other NodeManager's guests): the static mark must allow for it.
	p["bobbin.nodemanager.auto-labels.static-max-share"] = "1"
	p["bobbin.nodemanager.auto-labels.high-load-share"] = "0"
	p["bobbin.nodemanager.borrowed.interval-ms"] = "500"
}

// borrowedNM measures its owner's load every half second, leaves the schedulable set
// above 65 % owner CPU (35 % left), rejoins at 50 %, and evicts above 60 % owner CPU.
func borrowedNM(p map[string]string) {
	p["bobbin.nodemanager.borrowed.enabled"] = "true"
	p["bobbin.nodemanager.auto-labels.enabled"] = "true"
	p["bobbin.nodemanager.borrowed.interval-ms"] = "500"
	p["bobbin.nodemanager.borrowed.window-ms"] = "3000"
	p["bobbin.nodemanager.borrowed.memory-reserve-mb"] = "256"
	p["bobbin.nodemanager.borrowed.leave-below"] = "0.35"
	p["bobbin.nodemanager.borrowed.rejoin-above"] = "0.5"
	// On this small machine everything else (the RM, the AM on the other node, the
	// client's JVM) is the owner's load too: thresholds sit above what that alone makes.
	p["bobbin.nodemanager.borrowed.evict-external-cpu"] = "0.6"
	p["bobbin.nodemanager.borrowed.disk-min-free-mb"] = "100"
}

var cpuCapacity = regexp.MustCompile(`CPU-Capacity : (\d+) vcores`)

// capacities are the CPU-Capacity values of `yarn node -status` lines tagged tag.
func capacities(out, tag string) []int {
	var v []int
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, tag+" ") {
			if m := cpuCapacity.FindStringSubmatch(l); m != nil {
				n, _ := strconv.Atoi(m[1])
				v = append(v, n)
			}
		}
	}
	return v
}

// TestBorrowedNodeEvictsAndPiCompletes is the borrowed-server acceptance with real load
// and the real MapReduce pi on Bobbin's RM and two Bobbin NodeManagers: a static one with
// room for the MR AM only, and a borrowed one whose tasks run in UML guests.
//   - The AM goes to the static node (automatic labels; the RM sends AMs to static nodes).
//   - Once a map runs on the borrowed node, busy processes outside any container start:
//     within a few heartbeats `yarn node -status` shows the borrowed node's vcores drop,
//     the node leaves the schedulable set, and the running task is evicted with
//     PREEMPTED.
//   - When the load stops the capacity the RM holds for the node comes back (read over
//     REST, since a CLI JVM is owner load itself), the evicted task is rescheduled and
//     pi completes, with the task counted as killed, not failed.
func TestBorrowedNodeEvictsAndPiCompletes(t *testing.T) {
	kernel := requireUML(t)
	c := newNSCluster(t)
	c.bobbinNM, c.secondNM = true, true
	c.nmProps = func(i int, p map[string]string) {
		if i == 0 {
			staticNM(p)
			p["yarn.nodemanager.resource.memory-mb"] = "640" // the MR AM's 512 MB, no 256 MB task
			return
		}
		borrowedNM(p)
		umlNM(c, kernel, p)
		p["yarn.nodemanager.resource.memory-mb"] = "2048"
	}
	writeMapredSite(t, c)
	examples := c.examplesJar()
	start := time.Now()
	out, err := c.run(t, 15*time.Minute, fmt.Sprintf(`Y=$HADOOP_HOME/bin/yarn
status() { echo "$1 $($Y node -status %[3]s 2>/dev/null | tr '\n' ' ' | sed 's/\t/ /g')"; }
# capacity prints the vcores the RM holds for the borrowed node, read over REST: a yarn
# CLI JVM is itself owner load enough on two cores to push the node's capacity down.
capacity() {
  N=$(curl -s http://127.0.0.1:8088/ws/v1/cluster/nodes/%[3]s)
  U=$(echo "$N" | grep -o '"usedVirtualCores":-\?[0-9]*' | cut -d: -f2)
  A=$(echo "$N" | grep -o '"availableVirtualCores":-\?[0-9]*' | cut -d: -f2)
  echo $(( ${U:-0} + ${A:-0} ))
}
# Start from a quiet node: its capacity back after the daemons' start-up.
for i in $(seq 1 240); do
  V=$(capacity)
  [ "$V" -ge 2 ] && break
  sleep 0.25
done
# And from a static node the RM knows as static (its automatic label needs a window of
# measurements): before that the AM could go to the borrowed node.
for i in $(seq 1 240); do
  curl -s http://127.0.0.1:8088/ws/v1/cluster/nodes/localhost:8041 | grep -o '"nodeLabels":\[[^]]*\]' | grep -q '"static"' && break
  sleep 0.25
done
echo "before CPU-Capacity : $V vcores"
timeout 600 $HADOOP_HOME/bin/hadoop jar %[1]s pi 2 10 > %[2]s 2>&1 &
PI=$!
# Wait for a map task's guest on the borrowed node.
for i in $(seq 1 480); do
  grep -q 'container launched.*container_[0-9_]*_01_00000[2-9]' %[4]s/nm2.log && break
  sleep 0.25
done
echo "load starts"
LOAD=
# Twelve busy loops: the UML guests of the maps compete for the two cores too, and the
# owner's share must pass the eviction threshold while a map still runs.
for i in $(seq 1 12); do (while :; do :; done) & LOAD="$LOAD $!"; done
for i in $(seq 1 180); do
  grep -q 'evicted by the NodeManager' %[4]s/nm2.log && [ "$(grep -c 'leaves the schedulable set' %[4]s/nm2.log)" -ge 1 ] && break
  sleep 0.5
done
status during
kill $LOAD
echo "load stops"
LAST=
for i in $(seq 1 480); do
  V=$(capacity)
  [ "$V" != "$LAST" ] && echo "after CPU-Capacity : $V vcores" && LAST=$V
  [ "$V" -ge 2 ] && break
  sleep 0.25
done
wait $PI
echo "pi exit $?"
$Y node -status localhost:8041 2>&1 | grep -i label`, examples, c.path("pi.log"), secondNodeID, c.dir))
	t.Logf("run took %v", time.Since(start))
	piLog := c.logTail("pi.log", 100000)
	fail := func(what string) {
		c.keep(t)
		t.Fatalf("%s\nerr %v\noutput:\n%s\nstatic NM log:\n%s\nborrowed NM log:\n%s\nRM log:\n%s\npi (tail):\n%s", what, err, out,
			c.logTail("nm.log", 20), c.logTail("nm2.log", 60), c.logTail("rm.log", 30), tail(piLog, 50))
	}
	before, during, after := capacities(out, "before"), capacities(out, "during"), capacities(out, "after")
	if len(before) == 0 || len(during) == 0 || len(after) == 0 {
		fail("no CPU-Capacity read from yarn node -status")
	}
	low := during[0]
	for _, v := range during {
		low = min(low, v)
	}
	if low >= before[0] || low > 1 {
		fail(fmt.Sprintf("vcores did not drop under load: before %v, during %v", before, during))
	}
	back := 0
	for _, v := range after {
		back = max(back, v)
	}
	if back < 2 {
		fail(fmt.Sprintf("capacity did not come back after the load: %v", after))
	}
	nm2 := c.logTail("nm2.log", 100000)
	if !strings.Contains(nm2, "evicted by the NodeManager") || !strings.Contains(nm2, `exit_status=-102`) {
		fail("no container was evicted with PREEMPTED")
	}
	if !strings.Contains(out, "pi exit 0") || !strings.Contains(piLog, "Estimated value of Pi is 3.8") {
		fail("pi did not complete")
	}
	// The job history the MR AM wrote: evicted attempts are KILLED, none FAILED.
	hist, _ := filepath.Glob(filepath.Join(c.path("staging"), "history", "done_intermediate", "*", "job_*.jhist"))
	if len(hist) != 1 {
		fail(fmt.Sprintf("job history files %v", hist))
	}
	jh, _ := os.ReadFile(hist[0])
	killed := regexp.MustCompile(`"NUM_KILLED_(MAPS|REDUCES)","displayName":"Killed (map|reduce) tasks","value":([1-9]\d*)`).FindStringSubmatch(string(jh))
	if killed == nil || regexp.MustCompile(`"type":"[A-Z]*_ATTEMPT_FAILED"`).MatchString(string(jh)) || !strings.Contains(string(jh), `"failedMaps":0`) || !strings.Contains(string(jh), `"failedReduces":0`) {
		fail("the evicted task was not counted as killed, or a task failure was counted, in the job history")
	}
	// The AM ran on the static node, the tasks in guests on the borrowed node.
	app := ""
	if m := regexp.MustCompile(`job_(\d+_\d+)`).FindStringSubmatch(filepath.Base(hist[0])); m != nil {
		app = "application_" + m[1]
	}
	onStatic, _ := filepath.Glob(filepath.Join(c.path("nm-logs"), app, containerOf(app, 1)))
	onBorrowed, _ := filepath.Glob(filepath.Join(c.path("nm2"), "nm-logs", app, containerOf(app, 1)))
	if app == "" || len(onStatic) != 1 || len(onBorrowed) != 0 {
		fail(fmt.Sprintf("the MR AM container of %q did not run on the static node (static %v, borrowed %v)", app, onStatic, onBorrowed))
	}
	guests, _ := filepath.Glob(filepath.Join(c.path("nm2"), "nm-local", "usercache", "*", "appcache", app, "container_*", ".bobbin-uml", "up"))
	if len(guests) < 3 {
		fail(fmt.Sprintf("%d task guests came up on the borrowed node, want at least 3 (2 maps, 1 reduce)", len(guests)))
	}
	if !strings.Contains(out, "static") {
		fail("the static node does not show its static label in yarn node -status")
	}
	t.Logf("vcores of the borrowed node: before %v, during load %v, after %v; %d task guests; job history: %s killed %s attempt(s), none failed",
		before, during, after, len(guests), killed[2], killed[3])
	// The borrowed node's own account (on this one machine the AM and the client JVMs
	// are its owner's load too, so it may leave again while the job reruns).
	for _, l := range strings.Split(nm2, "\n") {
		if strings.Contains(l, "leaves the schedulable set") || strings.Contains(l, "rejoins the schedulable set") || strings.Contains(l, "evicted by") {
			if i := strings.Index(l, "msg="); i >= 0 {
				t.Log(l[:min(len(l), i+170)])
			}
		}
	}
	for _, l := range strings.Split(piLog, "\n") {
		if strings.Contains(l, "Job Finished in") {
			t.Log(strings.TrimSpace(l))
		}
	}
}

// TestCriticalHoursOfferNoCapacity: a borrowed node inside its critical hours (a window
// around the current time) reports zero capacity; one whose window is elsewhere in the
// day reports its measured capacity.
func TestCriticalHoursOfferNoCapacity(t *testing.T) {
	c := newNSCluster(t)
	c.bobbinNM, c.secondNM = true, true
	now := time.Now().UTC()
	window := func(from, to time.Time) string { return from.Format("15:04") + "-" + to.Format("15:04") }
	c.nmProps = func(i int, p map[string]string) {
		borrowedNM(p)
		// The CLI's JVMs load this small machine: the node must not leave the set for it.
		p["bobbin.nodemanager.borrowed.leave-below"] = "0"
		p["bobbin.nodemanager.borrowed.rejoin-above"] = "0"
		p["bobbin.nodemanager.borrowed.time-zone"] = "UTC"
		if i == 0 {
			p["bobbin.nodemanager.borrowed.critical-hours"] = window(now.Add(-30*time.Minute), now.Add(30*time.Minute))
		} else {
			p["bobbin.nodemanager.borrowed.critical-hours"] = window(now.Add(3*time.Hour), now.Add(4*time.Hour))
		}
	}
	out, err := c.run(t, 3*time.Minute, fmt.Sprintf(`Y=$HADOOP_HOME/bin/yarn
sleep 3
echo "inside $($Y node -status localhost:8041 2>/dev/null | tr '\n' ' ' | sed 's/\t/ /g')"
echo "outside $($Y node -status %s 2>/dev/null | tr '\n' ' ' | sed 's/\t/ /g')"`, secondNodeID))
	inside, outside := capacities(out, "inside"), capacities(out, "outside")
	memory := regexp.MustCompile(`(inside|outside) .*Memory-Capacity : (\d+)MB`).FindAllStringSubmatch(out, -1)
	if err != nil || len(inside) != 1 || len(outside) != 1 || inside[0] != 0 || len(memory) != 2 || memory[0][2] != "0" || memory[1][2] != "4096" {
		t.Fatalf("inside %v outside %v, err %v\n%s\nNM log:\n%s", inside, outside, err, out, c.logTail("nm.log", 20))
	}
	if !strings.Contains(c.logTail("nm.log", 1000), "critical hours") {
		t.Errorf("the NodeManager did not log why it offers nothing:\n%s", c.logTail("nm.log", 20))
	}
	t.Logf("inside the window: %d vcores, %s MB; outside: %d vcores, %s MB", inside[0], memory[0][2], outside[0], memory[1][2])
}
