package integration

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestStateStoreFullOrReadOnly is issue 44's store faults. The RM's FileSystemRMStateStore
// (file://) lives on an 8 MB ext4 file system of the test's own (a loop mount in a private
// mount namespace), Bobbin's NodeManager beside it.
//   - Full: while pi runs, the file system is filled. A submission is refused with an
//     error naming the store and the cause; pi goes on and succeeds; once space returns
//     the RM stores what it could not, pi is FINISHED and SUCCEEDED, and the RM takes
//     submissions again.
//   - Read-only: while a second pi runs, the file system turns read-only (ext4's abort, as
//     after an I/O error). A submission is refused naming the store and the cause, the RM
//     goes on serving, and pi's AM, unregistering, is told it is not unregistered yet
//     while its final state cannot be stored (as the Java RM answers until FINAL_SAVED).
//   - Then the RM is killed, the file system checked and mounted again, and the RM
//     restarted on it: the second pi's AM, still asking, registers again and finishes;
//     every application the RM accepted is listed with its final state, the refused ones
//     are not.
func TestStateStoreFullOrReadOnly(t *testing.T) {
	t.Parallel() // its own network and mount namespaces: see parallelism in cluster_test.go
	for _, tool := range []string{"mkfs.ext4", "losetup", "e2fsck"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s for the test's own file system", tool)
		}
	}
	c := newNSCluster(t)
	c.bobbinNM, c.mountNS = true, true
	fs := c.path("storefs")
	c.preStart = fmt.Sprintf(`truncate -s 8M %[1]s.img && mkfs.ext4 -q %[1]s.img && mkdir -p %[1]s && mount -o loop %[1]s.img %[1]s || echo "=== no file system"`, fs)
	c.nmProps = func(_ int, p map[string]string) {
		p["yarn.resourcemanager.recovery.enabled"] = "true"
		p["yarn.resourcemanager.store.class"] = "org.apache.hadoop.yarn.server.resourcemanager.recovery.FileSystemRMStateStore"
		p["yarn.resourcemanager.fs.state-store.uri"] = "file://" + fs + "/rmstore"
	}
	writeMapredSite(t, c)
	ds := fmt.Sprintf("timeout 120 $HADOOP_HOME/bin/yarn jar %[1]s -jar %[1]s -shell_command true -num_containers 1 -master_memory 256 -container_memory 128", c.dshellJar())
	out, err := c.run(t, 8*time.Minute, fmt.Sprintf(`Y=$HADOOP_HOME/bin/yarn
cd %[1]s
app_state() { curl -s http://127.0.0.1:8088/ws/v1/cluster/apps/$1 | grep -o '"\(state\|finalStatus\)":"[A-Z]*"' | cut -d'"' -f4 | tr '\n' ' '; }
outcome() { [ $1 = 0 ] && echo accepted || echo refused; }
refusal() { grep -o 'could not record the submission.*' $1 | head -1 | cut -c1-700; }
PAD=$(head -c 100000 /dev/zero | tr '\0' x)
timeout 300 $HADOOP_HOME/bin/hadoop jar %[2]s pi 2 10 > pi.out 2>&1 &
PI=$!
for i in $(seq 1 480); do APP=$(running_app); [ -n "$APP" ] && break; sleep 0.25; done
echo "=== pi running: $APP"
dd if=/dev/zero of=%[3]s/fill bs=64k > /dev/null 2>&1
echo "=== full: $(df -k %[3]s | awk 'NR == 2 {print $4}') KB free"
# A record larger than the pages the store has free (the shell's AM command carries its
# environment), so that the store must grow the file: a small one can reuse pages the
# store's earlier writes freed, full disk or not.
%[4]s -shell_env PAD=$PAD > refused-full.out 2>&1
echo "=== submission while full: $(outcome $?); $(refusal refused-full.out)"
wait $PI
echo "=== pi exit $?; RM serving while full: $(curl -s -o /dev/null -w '%%{http_code}' http://127.0.0.1:8088/ws/v1/cluster/info)"
rm -f %[3]s/fill
for i in $(seq 1 240); do [ "$(app_state $APP)" = "FINISHED SUCCEEDED " ] && break; sleep 0.25; done
echo "=== pi once space returned: $(app_state $APP)"
%[4]s > accepted.out 2>&1
echo "=== submission once space returned: $(outcome $?)"
# Read-only: every write fails. A second pi registers, then the file system turns
# read-only under it.
timeout 300 $HADOOP_HOME/bin/hadoop jar %[2]s pi 2 10 > pi2.out 2>&1 &
PI2=$!
for i in $(seq 1 480); do APP2=$(running_app); [ -n "$APP2" ] && break; sleep 0.25; done
mount -o remount,abort %[3]s
%[4]s > refused-ro.out 2>&1
echo "=== submission while read-only: $(outcome $?); $(refusal refused-ro.out)"
# Its AM unregisters while its final state cannot be stored: it is told it is not
# unregistered yet, and asks again.
for i in $(seq 1 960); do grep -q 'its final state is not stored yet' rm.log && break; sleep 0.25; done
echo "=== finish while read-only: $(grep -c "its final state is not stored yet.* application=$APP2" rm.log | sed 's/^[1-9][0-9]*$/not unregistered yet/')"
echo "=== RM serving while read-only: $(curl -s -o /dev/null -w '%%{http_code}' http://127.0.0.1:8088/ws/v1/cluster/apps)"
# The RM killed; the file system checked and mounted again; the RM restarted on it. The
# second pi's AM, still asking to unregister, registers again and finishes.
kill -9 $RM
wait $RM 2>/dev/null
umount %[3]s
e2fsck -fy %[3]s.img > /dev/null 2>&1
mount -o loop %[3]s.img %[3]s
%[5]s resourcemanager --conf %[6]s > rm-restarted.log 2>&1 &
RM=$!
for i in $(seq 1 600); do (exec 3<>/dev/tcp/127.0.0.1/8032) 2>/dev/null && break; sleep 0.05; done
for i in $(seq 1 480); do [ "$(app_state $APP2)" = "FINISHED SUCCEEDED " ] && break; sleep 0.25; done
wait $PI2
echo "=== second pi exit $?"
echo "=== after the restart"
$Y application -list -appStates ALL 2>/dev/null | grep application_ | awk '{print $1, $2, $6, $7}'
echo "=== end after the restart"`, c.dir, c.examplesJar(), fs, ds, bobbinBinary(t), c.confDir, c.frameworkHome()))
	t.Logf("%s", out)
	fail := func(why string) {
		c.keep(t)
		t.Fatalf("%s\nerr %v\n%s\n--- pi:\n%s\n--- rm:\n%s", why, err, out, c.logTail("pi.out", 30), c.logTail("rm.log", 30))
	}
	if err != nil || strings.Contains(out, "=== no file system") {
		fail("cluster script failed")
	}
	store := fs + "/rmstore/FSRMStateRoot"
	for _, want := range []string{
		"=== pi running: application_",
		"=== full: 0 KB free",
		"=== submission while full: refused; could not record the submission: state store file://" + fs + "/rmstore/FSRMStateRoot: application application_",
		"=== pi exit 0; RM serving while full: 200",
		"=== pi once space returned: FINISHED SUCCEEDED",
		"=== submission once space returned: accepted",
		"=== submission while read-only: refused; could not record the submission: state store file://" + fs + "/rmstore/FSRMStateRoot: application application_",
		"=== finish while read-only: not unregistered yet",
		"=== RM serving while read-only: 200",
		"=== second pi exit 0",
	} {
		if !strings.Contains(out, want) {
			fail("missing: " + want)
		}
	}
	for _, cause := range []string{"no space left on device", "read-only file system"} {
		if !strings.Contains(out, store) || !strings.Contains(out, cause) {
			fail("a refusal does not name the store " + store + " and " + cause)
		}
	}
	// Accepted: pi (application 1), the shell once space returned (3) and the second pi
	// (4); refused: 2 and 5.
	listed := section(out, "after the restart")
	for _, want := range []string{"_0001 QuasiMonteCarlo FINISHED SUCCEEDED", "_0003 DistributedShell FINISHED SUCCEEDED", "_0004 QuasiMonteCarlo FINISHED SUCCEEDED"} {
		if !strings.Contains(listed, want) {
			fail("after the restart, missing: " + want)
		}
	}
	if n := strings.Count(listed, "application_"); n != 3 {
		fail(fmt.Sprintf("after the restart %d applications are listed, want the 3 accepted", n))
	}
	for _, f := range []string{"pi.out", "pi2.out"} {
		if !strings.Contains(c.logTail(f, 40), "Estimated value of Pi is") {
			fail(f + ": pi printed no estimate")
		}
	}
}
