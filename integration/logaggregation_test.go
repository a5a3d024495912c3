package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
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
	// The RM reports the aggregation's outcome (the 3.x report field, REST's
	// logAggregationStatus).
	testutil.Eventually(t, 10*time.Second, "the RM does not report log aggregation SUCCEEDED", func() bool {
		return appLogAggregation(t, c, app) == "SUCCEEDED"
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
		if v == hadoop3 {
			// 3.x selects log types, and its CLI shows the RM's aggregation status.
			files := run("-applicationId", app, "-containerId", worker, "-log_files", "stdout")
			if !strings.Contains(files, "hello from "+worker) || strings.Contains(files, "LogType:stderr") {
				t.Fatalf("%s yarn logs -log_files stdout:\n%s", v, files)
			}
			cmd := exec.Command(filepath.Join(home, "bin", "yarn"), "application", "-status", app)
			cmd.Env = hadoopEnv(home, c.confDir)
			o, _ := cmd.CombinedOutput()
			if !regexp.MustCompile(`Log Aggregation Status\s*:\s*SUCCEEDED`).Match(o) {
				t.Fatalf("%s yarn application -status does not show the aggregation SUCCEEDED:\n%s", v, o)
			}
		}
	}
}

// appLogAggregation is the RM's logAggregationStatus of an application (REST).
func appLogAggregation(t *testing.T, c *bobbinCluster, app string) string {
	t.Helper()
	resp, err := http.Get("http://" + c.rmWeb + "/ws/v1/cluster/apps/" + app)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		App struct {
			LogAggregationStatus string `json:"logAggregationStatus"`
		} `json:"app"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	return body.App.LogAggregationStatus
}

// TestLogAggregationFailureKeepsLocalLogs: when the remote log dir cannot be written (a
// path through a regular file, which even root cannot create), the NodeManager reports
// the aggregation FAILED with the reason, the RM reports the application's status FAILED
// and logs the reason, and the container logs stay on the node.
func TestLogAggregationFailureKeepsLocalLogs(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(blocker, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startBobbinCluster(t, "yarn.log-aggregation-enable", "true", "yarn.nodemanager.remote-app-log-dir", filepath.Join(blocker, "app-logs"),
		"yarn.nodemanager.delete.debug-delay-sec", "0")
	out, err := c.demo(t, "--containers", "1", "--command", `echo "hello from $CONTAINER_ID"`)
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	app := regexp.MustCompile(`application_\d+_\d+`).FindString(out)
	testutil.Eventually(t, 20*time.Second, "the RM does not report log aggregation FAILED", func() bool {
		return appLogAggregation(t, c, app) == "FAILED"
	})
	if !regexp.MustCompile(`log aggregation failed on the node.*application=` + app + `.*not a directory`).MatchString(c.rm.Log()) {
		t.Fatalf("the RM's log does not name the failure's reason:\n%s", tail(c.rm.Log(), 20))
	}
	time.Sleep(time.Second) // past the clean-up that deletes local logs after a success
	dirs, _ := filepath.Glob(filepath.Join(c.logDir, app, "container_*"))
	logs, _ := filepath.Glob(filepath.Join(c.logDir, app, "container_*", "stdout"))
	if len(dirs) != 2 || len(logs) != 1 {
		t.Fatalf("local container logs after the failed aggregation: %v %v", dirs, logs)
	}
	if b, _ := os.ReadFile(logs[0]); !strings.Contains(string(b), "hello from container_") {
		t.Fatalf("the kept stdout holds %q", b)
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
