package integration

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/yarn/aggregatedlog"
)

// TestContainerLogFilesCannotReachOtherFiles: a container run by LinuxContainerExecutor
// (as nobody) leaves in its log dir a link to a root 0600 file, a link to another user's
// log, a FIFO; root adds a device node and hard links to files nobody does not own (what
// a container could leave where hard links are not protected). The NodeManager's REST
// log resource and log page refuse each with 403 and a reason, without hanging on the
// FIFO, list none of them, serve the container's own stdout, and log aggregation copies
// only the container's own files, into a file the container's user owns.
func TestContainerLogFilesCannotReachOtherFiles(t *testing.T) {
	other, nobodyUID, otherUID := containerUsers(t)

	files := t.TempDir()
	secret := filepath.Join(files, "shadow")
	os.WriteFile(secret, []byte("root-only-secret"), 0o600)
	otherLog := filepath.Join(files, "daemon.log")
	os.WriteFile(otherLog, []byte("daemon-private-log"), 0o600)
	os.Chown(otherLog, otherUID, otherUID)
	gate := filepath.Join(files, "go")
	remote := filepath.Join(t.TempDir(), "app-logs")

	c := startBobbinCluster(t, "yarn.nodemanager.container-executor.class", "org.apache.hadoop.yarn.server.nodemanager.LinuxContainerExecutor",
		"yarn.log-aggregation-enable", "true", "yarn.nodemanager.remote-app-log-dir", remote,
		"yarn.nodemanager.delete.debug-delay-sec", "600")
	openToContainers(t, c, files)

	// The demo redirects the command's last part: the group makes it all of it. The
	// container waits for the gate, or for the test's directory to go.
	cmd := fmt.Sprintf(`{ echo own-output; ln -s %s $LOG_DIRS/shadow.log; ln -s %s $LOG_DIRS/other.log; mkfifo $LOG_DIRS/fifo.log; `+
		`while [ -d %s ] && [ ! -e %s ]; do sleep 0.1; done; }`, secret, otherLog, files, gate)
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := c.demo(t, "--containers", "1", "--command", cmd)
		done <- result{out, err}
	}()
	released := false
	release := func() {
		if !released {
			released = true
			os.WriteFile(gate, nil, 0o644)
		}
	}
	defer release()

	var dir string
	if !testutil.PollEvery(60*time.Second, 100*time.Millisecond, func() bool {
		if m, _ := filepath.Glob(filepath.Join(c.logDir, "application_*", "container_*", "fifo.log")); len(m) == 1 {
			dir = filepath.Dir(m[0])
			return true
		}
		select {
		case r := <-done:
			t.Fatalf("demo ended before its container was ready: %v\n%s\nNM log:\n%s", r.err, r.out, tail(c.nm.Log(), 30))
		default:
		}
		return false
	}) {
		t.Fatalf("the container did not prepare its log dir\nNM log:\n%s", tail(c.nm.Log(), 30))
	}
	cid := filepath.Base(dir)
	if err := syscall.Mknod(filepath.Join(dir, "null.log"), syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Fatal(err)
	}
	os.Chown(filepath.Join(dir, "null.log"), nobodyUID, nobodyUID)
	for name, target := range map[string]string{"hard-shadow.log": secret, "hard-other.log": otherLog} {
		if err := os.Link(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}

	client := &http.Client{Timeout: 10 * time.Second}
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := client.Get("http://" + c.nmWeb + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/ws/v1/node/containerlogs/" + cid + "/stdout"); code != 200 || body != "own-output\n" {
		t.Fatalf("own stdout: %d %q", code, body)
	}
	refused := map[string]string{"shadow.log": "symbolic link", "other.log": "symbolic link", "fifo.log": "FIFO", "null.log": "device",
		"hard-shadow.log": "owned by uid 0", "hard-other.log": "owned by uid " + other.Uid}
	for name, why := range refused {
		for _, path := range []string{"/ws/v1/node/containerlogs/" + cid + "/" + name, "/node/containerlogs/" + cid + "/root/" + name} {
			code, body := get(path)
			if code != http.StatusForbidden || !strings.Contains(body, why) || strings.Contains(body, "secret") || strings.Contains(body, "daemon-private") {
				t.Errorf("GET %s: %d, want 403 saying %q:\n%.300s", path, code, why, body)
			}
		}
	}
	_, info := get("/ws/v1/node/containers/" + cid)
	for name := range refused {
		if strings.Contains(info, name) {
			t.Errorf("the container's info lists %s: %s", name, info)
		}
	}
	if code, _ := get("/ws/v1/node/info"); code != 200 {
		t.Fatalf("NodeManager after the probes: %d", code)
	}
	if !strings.Contains(c.nm.Log(), "container log file refused") {
		t.Errorf("no refusal logged:\n%s", tail(c.nm.Log(), 20))
	}

	release()
	r := <-done
	if r.err != nil {
		t.Fatalf("demo: %v\n%s", r.err, r.out)
	}
	app := regexp.MustCompile(`application_\d+_\d+`).FindString(r.out)
	appDir := filepath.Join(remote, "root", "logs", app)
	var agg string
	var m []string
	if !testutil.Poll(30*time.Second, func() bool {
		m, _ = filepath.Glob(filepath.Join(appDir, "*"))
		return len(m) == 1 && !strings.HasSuffix(m[0], aggregatedlog.TmpSuffix)
	}) {
		t.Fatalf("no aggregated log in %s: %v\nNM log:\n%s", appDir, m, tail(c.nm.Log(), 30))
	}
	agg = m[0]
	b, err := os.ReadFile(agg)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "secret") || strings.Contains(string(b), "daemon-private") {
		t.Fatalf("the aggregated log holds a file the container does not own")
	}
	f, err := aggregatedlog.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ctr := range f.Containers {
		if ctr.ID != cid {
			continue
		}
		for _, lf := range ctr.Logs {
			names = append(names, lf.Type)
		}
	}
	// The container's own files and those its launch script wrote (docs/protocol.md §5.4),
	// none of the links, pipes, devices or others' files planted beside them.
	if strings.Join(names, ",") != "directory.info,launch_container.sh,prelaunch.err,prelaunch.out,stderr,stdout" {
		t.Errorf("aggregated files of %s: %v, want the launch script's files, stderr and stdout only", cid, names)
	}
	for _, p := range []string{agg, appDir, filepath.Join(remote, "root")} {
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil || int(st.Uid) != nobodyUID {
			t.Errorf("%s is owned by uid %d, want %d (the user the containers ran as): %v", p, st.Uid, nobodyUID, err)
		}
	}
	if !strings.Contains(c.nm.Log(), "container log file not aggregated") {
		t.Errorf("the skipped files are not logged:\n%s", tail(c.nm.Log(), 20))
	}
}

// TestAggregationActsAsTheContainerUser: with LinuxContainerExecutor and a local remote
// log dir, the NodeManager aggregates as the user the containers ran as (nobody). That
// user owns its dir under the world-writable root, so it could leave a link there; a
// link to a directory only root may write (its "logs" suffix dir pointing there) makes
// the aggregation fail, with nothing written through it. A user dir another user made
// first (the root is 1777) is refused too.
func TestAggregationActsAsTheContainerUser(t *testing.T) {
	other, nobodyUID, otherUID := containerUsers(t)
	remote := filepath.Join(t.TempDir(), "app-logs")
	os.Mkdir(remote, 0o755)
	os.Chmod(remote, 0o777|os.ModeSticky)
	protected := filepath.Join(t.TempDir(), "root-only")
	os.Mkdir(protected, 0o700)
	userDir := filepath.Join(remote, "root") // the demo submits as root; its containers run as nobody
	os.Mkdir(userDir, 0o770)
	os.Chown(userDir, nobodyUID, 0)
	os.Symlink(protected, filepath.Join(userDir, "logs"))

	c := startBobbinCluster(t, "yarn.nodemanager.container-executor.class", "org.apache.hadoop.yarn.server.nodemanager.LinuxContainerExecutor",
		"yarn.log-aggregation-enable", "true", "yarn.nodemanager.remote-app-log-dir", remote)
	openToContainers(t, c, filepath.Dir(remote), filepath.Dir(protected))
	run := func(want string) {
		t.Helper()
		before := strings.Count(c.nm.Log(), "log aggregation failed")
		if out, err := c.demo(t, "--containers", "1", "--command", "echo own-output"); err != nil {
			t.Fatalf("demo: %v\n%s", err, out)
		}
		testutil.Eventually(t, 30*time.Second, "aggregation refused: "+want, func() bool {
			log := c.nm.Log()
			return strings.Count(log, "log aggregation failed") > before && strings.Contains(log, want)
		})
	}
	run("permission denied")
	if entries, _ := os.ReadDir(protected); len(entries) != 0 {
		t.Fatalf("aggregation wrote through the user's link into a root-only dir: %v", entries)
	}
	os.RemoveAll(userDir)
	os.Mkdir(userDir, 0o777)
	os.Chmod(userDir, 0o777)
	os.Chown(userDir, otherUID, otherUID)
	run("owned by uid " + other.Uid)
	if entries, _ := os.ReadDir(userDir); len(entries) != 0 {
		t.Fatalf("aggregation wrote into another user's dir: %v", entries)
	}
}

// containerUsers are the users of the LinuxContainerExecutor tests: nobody, whom the
// containers run as, and daemon (other), another user; the test skips without root or them.
func containerUsers(t *testing.T) (other *user.User, nobodyUID, otherUID int) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("LinuxContainerExecutor needs the NodeManager to run as root")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("no user nobody: %v", err)
	}
	other, err = user.Lookup("daemon")
	if err != nil {
		t.Skipf("no user daemon: %v", err)
	}
	nobodyUID, _ = strconv.Atoi(nobody.Uid)
	otherUID, _ = strconv.Atoi(other.Uid)
	return other, nobodyUID, otherUID
}

// openToContainers lets the containers' user reach the NodeManager's dirs, the demo's AM
// (the bobbin binary, run as that user too) and dirs: t.TempDir's are 0700. $TMPDIR
// itself is never changed.
func openToContainers(t *testing.T, c *bobbinCluster, dirs ...string) {
	t.Helper()
	for _, d := range append([]string{c.logDir, filepath.Dir(bobbinBinary(t))}, dirs...) {
		for ; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
			os.Chmod(d, 0o755)
		}
	}
	for _, sub := range []string{"nm-local", "nm-logs"} {
		os.Chmod(filepath.Join(filepath.Dir(c.confDir), sub), 0o755)
	}
}
