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
//   - Full: while pi runs, the file system is filled. pi goes on and succeeds; a
//     submission meanwhile is refused with an error naming the store and the cause; once
//     space returns the RM stores what it could not (pi's final state: the AM is told it
//     is not unregistered until then) and takes submissions again.
//   - Read-only: the file system turns read-only (ext4's abort, as after an I/O error). A
//     submission is refused naming the store and the cause, and the RM goes on serving.
//   - Then the RM is killed, the file system checked and mounted again, and the RM
//     restarted on it: every application the RM accepted is listed with its final state,
//     the refused ones are not.
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
refusal() { grep -o 'could not record the submission.*' $1 | head -1 | cut -c1-300; }
timeout 300 $HADOOP_HOME/bin/hadoop jar %[2]s pi 2 10 > pi.out 2>&1 &
PI=$!
for i in $(seq 1 480); do APP=$(running_app); [ -n "$APP" ] && break; sleep 0.25; done
echo "=== pi running: $APP"
dd if=/dev/zero of=%[3]s/fill bs=64k > /dev/null 2>&1
echo "=== full: $(df -k %[3]s | awk 'NR == 2 {print $4}') KB free"
# A record larger than the pages the store has free (the shell's AM command carries its
# environment), so that the store must grow the file: a small one can reuse pages the
# store's earlier writes freed, full disk or not.
%[4]s -shell_env PAD=$(head -c 100000 /dev/zero | tr '\0' x) > refused-full.out 2>&1
echo "=== submission while full: $(outcome $?); $(refusal refused-full.out)"
wait $PI
echo "=== pi exit $?; RM serving: $(curl -s -o /dev/null -w '%%{http_code}' http://127.0.0.1:8088/ws/v1/cluster/info)"
rm -f %[3]s/fill
for i in $(seq 1 240); do [ "$(app_state $APP)" = "FINISHED SUCCEEDED " ] && break; sleep 0.25; done
echo "=== pi once space returned: $(app_state $APP)"
%[4]s > accepted.out 2>&1
echo "=== submission once space returned: $(outcome $?)"
mount -o remount,abort %[3]s
%[4]s > refused-ro.out 2>&1
echo "=== submission while read-only: $(outcome $?); $(refusal refused-ro.out)"
echo "=== RM serving while read-only: $(curl -s -o /dev/null -w '%%{http_code}' http://127.0.0.1:8088/ws/v1/cluster/apps)"
kill -9 $RM
wait $RM 2>/dev/null
umount %[3]s
e2fsck -fy %[3]s.img > /dev/null 2>&1
mount -o loop %[3]s.img %[3]s
%[5]s resourcemanager --conf %[6]s > rm-restarted.log 2>&1 &
RM=$!
for i in $(seq 1 600); do (exec 3<>/dev/tcp/127.0.0.1/8032) 2>/dev/null && break; sleep 0.05; done
echo "=== after the restart"
$Y application -list -appStates ALL 2>/dev/null | grep application_ | awk '{print $1, $2, $6, $7}'
echo "=== end after the restart"`, c.dir, c.examplesJar(), fs, ds, bobbinBinary(t), c.confDir))
	t.Logf("%s", out)
	fail := func(why string) {
		c.keep(t)
		t.Fatalf("%s\nerr %v\n%s\n--- pi:\n%s\n--- rm:\n%s", why, err, out, c.logTail("pi.out", 30), c.logTail("rm.log", 30))
	}
	if err != nil || strings.Contains(out, "=== no file system") {
		fail("cluster script failed")
	}
	store := fs + "/rmstore/bobbin-rmstore.db"
	for _, want := range []string{
		"=== pi running: application_",
		"=== full: 0 KB free",
		"=== submission while full: refused; could not record the submission: application application_",
		"=== pi exit 0; RM serving: 200",
		"=== pi once space returned: FINISHED SUCCEEDED",
		"=== submission once space returned: accepted",
		"=== submission while read-only: refused; could not record the submission: application application_",
		"=== RM serving while read-only: 200",
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
	// Accepted: pi (application 1) and the shell once space returned (3); refused: 2 and 4.
	listed := section(out, "after the restart")
	for _, want := range []string{"_0001 QuasiMonteCarlo FINISHED SUCCEEDED", "_0003 DistributedShell FINISHED SUCCEEDED"} {
		if !strings.Contains(listed, want) {
			fail("after the restart, missing: " + want)
		}
	}
	if n := strings.Count(listed, "application_"); n != 2 {
		fail(fmt.Sprintf("after the restart %d applications are listed, want the 2 accepted", n))
	}
	if !strings.Contains(c.logTail("pi.out", 40), "Estimated value of Pi is") {
		fail("pi printed no estimate")
	}
}
