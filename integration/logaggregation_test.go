package integration

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/yarn/aggregatedlog"
)

// TestLogAggregationForYarnLogs: with yarn.log-aggregation-enable, Bobbin's NodeManager
// writes a finished application's container logs to the remote log dir (file:// here) as
// one TFile per node, deletes its local copies, and the unchanged `yarn logs` of Hadoop
// 2.7.3 and 3.1.1 print them (all containers, and one with -containerId). The file is
// also checked with Bobbin's own reader, so the part without Hadoop always runs.
func TestLogAggregationForYarnLogs(t *testing.T) {
	remote := filepath.Join(t.TempDir(), "app-logs")
	c := startBobbinCluster(t, "yarn.log-aggregation-enable", "true", "yarn.nodemanager.remote-app-log-dir", remote,
		"yarn.nodemanager.delete.debug-delay-sec", "0")
	out, err := c.demo(t, "--containers", "2", "--command", `echo "hello from $CONTAINER_ID"`)
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	app := regexp.MustCompile(`application_\d+_\d+`).FindString(out)
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	me := u.Username
	dir := filepath.Join(remote, me, "logs", app)
	var files []string
	deadline := time.Now().Add(30 * time.Second)
	for {
		files, _ = filepath.Glob(filepath.Join(dir, "*"))
		if len(files) == 1 && !strings.HasSuffix(files[0], aggregatedlog.TmpSuffix) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no aggregated log in %s: %v\nNM log:\n%s", dir, files, tail(c.nm.Log(), 30))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if want := aggregatedlog.NodeFileName(nmNodeID(t, c)); filepath.Base(files[0]) != want {
		t.Fatalf("aggregated file %s, want %s", files[0], want)
	}
	b, _ := os.ReadFile(files[0])
	f, err := aggregatedlog.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	hellos := 0
	for _, ct := range f.Containers {
		for _, l := range ct.Logs {
			if l.Type == "stdout" && strings.Contains(string(l.Data), "hello from "+ct.ID) {
				hellos++
			}
		}
	}
	if f.Owner != me || len(f.Containers) != 3 || hellos != 2 {
		var b strings.Builder
		for _, ct := range f.Containers {
			for _, l := range ct.Logs {
				fmt.Fprintf(&b, "%s %s: %q\n", ct.ID, l.Type, l.Data)
			}
		}
		t.Fatalf("aggregated: owner %s, %d containers, %d with their hello\n%s", f.Owner, len(f.Containers), hellos, b.String())
	}
	testutil.Eventually(t, 10*time.Second, "local logs not deleted after aggregation", func() bool {
		_, err := os.Stat(filepath.Join(c.logDir, app))
		return os.IsNotExist(err)
	})
	worker := f.Containers[1].ID
	for _, v := range []string{hadoop2, hadoop3} {
		home := hadoopHomeIfPresent(v)
		if home == "" {
			t.Logf("Hadoop %s absent: its yarn logs not run", v)
			continue
		}
		run := func(args ...string) string {
			cmd := exec.Command(filepath.Join(home, "bin", "yarn"), append([]string{"logs"}, args...)...)
			cmd.Env = hadoopEnv(home, c.confDir)
			o, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s yarn logs %v: %v\n%s", v, args, err, o)
			}
			return string(o)
		}
		all := run("-applicationId", app)
		for _, ct := range f.Containers {
			if !strings.Contains(all, ct.ID) {
				t.Fatalf("%s yarn logs -applicationId lacks %s:\n%s", v, ct.ID, all)
			}
		}
		if !strings.Contains(all, "hello from "+worker) || !strings.Contains(all, "LogType:stdout") {
			t.Fatalf("%s yarn logs -applicationId:\n%s", v, all)
		}
		one := run("-applicationId", app, "-containerId", worker, "-nodeAddress", nmNodeID(t, c))
		if !strings.Contains(one, "hello from "+worker) || strings.Contains(one, "hello from "+f.Containers[2].ID) {
			t.Fatalf("%s yarn logs -containerId %s:\n%s", v, worker, one)
		}
		t.Logf("%s yarn logs: %d lines for the application, %d for one container", v, strings.Count(all, "\n"), strings.Count(one, "\n"))
	}
}

// nmNodeID is the Bobbin NodeManager's node id, from its registration log line.
func nmNodeID(t *testing.T, c *bobbinCluster) string {
	t.Helper()
	m := regexp.MustCompile(`registered with the ResourceManager.* node="?([^" ]+)"?`).FindStringSubmatch(c.nm.Log())
	if m == nil {
		t.Fatalf("no node id in the NodeManager's log:\n%s", c.nm.Log())
	}
	return m[1]
}
