package integration

import (
	"encoding/json"
	"fmt"
	"io"
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
		"yarn.nodemanager.delete.debug-delay-sec", "0", "yarn.log.server.url", "http://jhs.example:19888/jobhistory/logs")
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
	if !testutil.Poll(30*time.Second, func() bool {
		files, _ = filepath.Glob(filepath.Join(dir, "*"))
		return len(files) == 1 && !strings.HasSuffix(files[0], aggregatedlog.TmpSuffix)
	}) {
		t.Fatalf("no aggregated log in %s: %v\nNM log:\n%s", dir, files, tail(c.nm.Log(), 30))
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
	// The NodeManager's log page still shows the logs, read from the aggregated file; a
	// container it cannot find there goes to yarn.log.server.url, as on a Java NM.
	page := func(path string) (int, string, string) {
		t.Helper()
		cl := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := cl.Get("http://" + c.nmWeb + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header.Get("Location")
	}
	if code, body, _ := page("/node/containerlogs/" + worker + "/" + me + "/stdout"); code != 200 || !strings.Contains(body, "hello from "+worker) ||
		!strings.Contains(body, "they were aggregated to file://"+dir) {
		t.Errorf("the NodeManager's page of an aggregated container's stdout: %d\n%.3000s", code, body)
	}
	if code, body, _ := page("/node/containerlogs/" + worker + "/" + me); code != 200 || !strings.Contains(body, `href="/node/containerlogs/`+worker+`/`+me+`/stdout"`) {
		t.Errorf("the NodeManager's list of an aggregated container's logs: %d\n%.3000s", code, body)
	}
	gone := strings.Replace(worker, "_00000", "_00009", 1)
	if code, _, loc := page("/node/containerlogs/" + gone + "/" + me); code != http.StatusFound ||
		loc != "http://jhs.example:19888/jobhistory/logs/"+nmNodeID(t, c)+"/"+gone+"/"+gone+"/"+me {
		t.Errorf("a container with no logs here or aggregated: %d to %q, want Java's redirect to yarn.log.server.url", code, loc)
	}
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
	// Past the point where a success would have deleted the local logs: the NM says it
	// keeps them.
	kept := regexp.MustCompile(`logs kept for yarn.nodemanager.log.retain-seconds".*application=` + app)
	testutil.Eventually(t, 20*time.Second, "the NodeManager did not say it keeps the logs of "+app, func() bool { return kept.MatchString(c.nm.Log()) })
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

// TestLogAggregationOfPi is issue 18's aggregation acceptance with a real job: pi 2 10 on
// Bobbin's RM and NodeManager with aggregation to file:// and to a real HDFS (the 2.7.3
// NameNode and DataNode; with fs.defaultFS there, a distributed shell first runs a script
// it uploaded to HDFS, which the NodeManager localizes from hdfs://). The unchanged 2.7.3 and 3.1.1 `yarn logs -applicationId` print
// the AM's syslog and every task's stdout and syslog (3.1.1 leaves out the tasks' empty
// stdout, as it does for a Java NodeManager's files), `-containerId` one container's, and
// the node's local copies are gone.
func TestLogAggregationOfPi(t *testing.T) {
	t.Parallel() // its subtests join the other clusters' tests, not a batch of their own
	for _, fsName := range []string{"file", "hdfs"} {
		t.Run(fsName, func(t *testing.T) {
			t.Parallel() // its own network namespace: see parallelism in cluster_test.go
			c := newNSCluster(t)
			c.bobbinNM = true
			hdfsUp, hdfsDown := "", ""
			remote := "file://" + c.path("app-logs")
			if fsName == "hdfs" {
				remote = "/tmp/logs" // on fs.defaultFS, the HDFS
			}
			// The whole conf dir now, before core-site.xml names the HDFS (c.run leaves it).
			props := nmConf(c.dir)
			props["yarn.log-aggregation-enable"] = "true"
			props["yarn.nodemanager.remote-app-log-dir"] = remote
			writeConf(t, c.confDir, props)
			if fsName == "hdfs" {
				if _, err := os.Stat(filepath.Join(c.home, "share", "hadoop", "hdfs", "hadoop-hdfs-2.7.3.jar")); err != nil {
					t.Skipf("needs the HDFS jar to run a NameNode and DataNode: %v", err)
				}
				script := c.path("hello.sh")
				os.WriteFile(script, []byte("#!/bin/bash\necho hello from hdfs $CONTAINER_ID\n"), 0o755)
				core := "<?xml version=\"1.0\"?>\n<configuration>\n" + prop("fs.defaultFS", "hdfs://127.0.0.1:9000") +
					prop("hadoop.tmp.dir", c.path("hadoop-tmp")) + "</configuration>\n"
				hdfs := "<?xml version=\"1.0\"?>\n<configuration>\n" + prop("dfs.replication", "1") +
					prop("dfs.namenode.name.dir", c.path("nn")) + prop("dfs.datanode.data.dir", c.path("dn")) +
					prop("dfs.namenode.rpc-address", "127.0.0.1:9000") + "</configuration>\n"
				os.WriteFile(filepath.Join(c.confDir, "core-site.xml"), []byte(core), 0o644)
				os.WriteFile(filepath.Join(c.confDir, "hdfs-site.xml"), []byte(hdfs), 0o644)
				hdfsUp = fmt.Sprintf(`H=$HADOOP_HOME/bin/hdfs
$H namenode -format -force -nonInteractive > %[1]s/format.log 2>&1
$H namenode > %[1]s/nn.log 2>&1 &
NN=$!
$H datanode > %[1]s/dn.log 2>&1 &
DN=$!
for i in $(seq 1 60); do $H dfsadmin -report 2>/dev/null | grep -q "Live datanodes (1)" && break; sleep 1; done
# Localization from HDFS: distributed shell uploads its AM jar and a script there. One
# container: 2.7.3's shell AM adds its requests one by one while its heartbeat thread
# already runs, so an ask for 1 and then for 2 can reach the RM, which (Java's or Bobbin's)
# then allocates 3, and the AM waits forever for a count it never reaches.
timeout 150 $HADOOP_HOME/bin/yarn jar %[2]s -jar %[2]s -shell_script %[3]s -num_containers 1 -master_memory 256 -container_memory 128 > %[1]s/client.log 2>&1
echo "dshell exit $?"
$H dfs -ls -R /user 2>&1 | grep -c AppMaster.jar | sed 's/^/jars on hdfs: /'`, c.dir, c.dshellJar(), script)
				hdfsDown = "$H dfs -ls -R /tmp/logs > " + c.path("remote.ls") + " 2>&1\nkill $NN $DN"
			}
			writeMapredSite(t, c)
			logs3 := "echo 3.1.1 absent"
			if h3 := hadoopHomeIfPresent(hadoop3); h3 != "" {
				logs3 = fmt.Sprintf(`env HADOOP_HOME=%[1]s HADOOP_PREFIX=%[1]s HADOOP_COMMON_HOME=%[1]s HADOOP_HDFS_HOME=%[1]s HADOOP_YARN_HOME=%[1]s HADOOP_MAPRED_HOME=%[1]s %[1]s/bin/yarn logs -applicationId $APP > %[2]s/logs3.all 2>&1; echo "yarn3 logs exit $?"`, h3, c.dir)
			}
			out, err := c.run(t, 8*time.Minute, fmt.Sprintf(`%[3]s
timeout 200 $HADOOP_HOME/bin/hadoop jar %[1]s pi 2 10 > %[2]s/pi.out 2>&1
echo "pi exit $?"
APP=$($HADOOP_HOME/bin/yarn application -list -appStates ALL 2>/dev/null | awk '/QuasiMonteCarlo/ {print $1}' | tail -1)
echo "app $APP"
for i in $(seq 1 120); do grep -q "application finished on this node; cleaned up\" application=$APP" %[2]s/nm.log && break; sleep 0.25; done
sleep 1
echo "local logs left: $(ls %[2]s/nm-logs/$APP 2>/dev/null | wc -l)"
$HADOOP_HOME/bin/yarn logs -applicationId $APP > %[2]s/logs2.all 2>&1; echo "yarn2 logs exit $?"
MAP=$(grep -o 'container_[0-9_]*_01_000002' %[2]s/logs2.all | head -1)
$HADOOP_HOME/bin/yarn logs -applicationId $APP -containerId $MAP -nodeAddress localhost:8041 > %[2]s/logs2.one 2>&1; echo "yarn2 logs one exit $?"
%[4]s
DS=$($HADOOP_HOME/bin/yarn application -list -appStates ALL 2>/dev/null | awk '/DistributedShell/ {print $1}' | tail -1)
[ -n "$DS" ] && $HADOOP_HOME/bin/yarn logs -applicationId $DS > %[2]s/logs2.dshell 2>&1
%[5]s`, c.examplesJar(), c.dir, hdfsUp, logs3, hdfsDown))
			t.Logf("%s", out)
			fail := func(why string) {
				c.keep(t)
				t.Fatalf("%s\n%s\n--- nm:\n%s\n--- logs2:\n%s", why, out, c.logTail("nm.log", 40), c.logTail("logs2.all", 40))
			}
			if err != nil || !strings.Contains(out, "pi exit 0") {
				fail(fmt.Sprintf("pi: %v", err))
			}
			if !strings.Contains(out, "local logs left: 0") {
				fail("local container logs left after aggregation")
			}
			app := regexp.MustCompile(`app (application_\d+_\d+)`).FindStringSubmatch(out)
			if app == nil {
				fail("no application id")
			}
			containers := func(log string) map[string]map[string]bool {
				got := map[string]map[string]bool{}
				cur := ""
				for _, l := range strings.Split(log, "\n") {
					if m := regexp.MustCompile(`^Container: (container_\S+) on`).FindStringSubmatch(l); m != nil {
						cur = m[1]
						if got[cur] == nil {
							got[cur] = map[string]bool{}
						}
					}
					if m := regexp.MustCompile(`^LogType:\s*(\S+)`).FindStringSubmatch(l); m != nil && cur != "" {
						got[cur][m[1]] = true
					}
				}
				return got
			}
			nmLog, _ := os.ReadFile(c.path("nm.log"))
			launched := map[string]bool{}
			for _, m := range regexp.MustCompile(`msg="container launched" application=`+app[1]+` \S+ container=(\S+)`).FindAllStringSubmatch(string(nmLog), -1) {
				launched[m[1]] = true
			}
			amContainer := regexp.MustCompile(`_\d+_000001$`)
			if len(launched) > 4 {
				// An AM attempt failed (CI once saw pi's first AM end with exit 137 while
				// the machine stalled): the test goes on, and says so.
				t.Logf("pi ran %d containers (an attempt was retried); the NM's log:\n%s", len(launched), c.logTail("nm.log", 60))
			}
			for _, name := range []string{"logs2.all", "logs3.all"} {
				if name == "logs3.all" && strings.Contains(out, "3.1.1 absent") {
					continue
				}
				b, _ := os.ReadFile(c.path(name))
				got := containers(string(b))
				// Every container the NM ran for pi: the AM, two maps and the reduce (more
				// when an attempt was retried: all its containers' logs are kept too).
				if len(got) != len(launched) || len(got) < 4 {
					fail(fmt.Sprintf("%s: %d containers, want the %d the NM launched (AM, two maps, reduce at least): %v", name, len(got), len(launched), got))
				}
				for id := range launched {
					if got[id] == nil {
						fail(fmt.Sprintf("%s: container %s the NM ran is missing", name, id))
					}
				}
				for id, types := range got {
					// 3.1.1's yarn logs leaves out empty files, and pi's tasks print
					// nothing to stdout; 2.7.3's prints them.
					want := []string{"stdout", "syslog"}
					if amContainer.MatchString(id) || name == "logs3.all" {
						want = []string{"syslog"}
					}
					for _, w := range want {
						if !types[w] {
							fail(fmt.Sprintf("%s: %s has no %s (%v)", name, id, w, types))
						}
					}
				}
				if !strings.Contains(string(b), "MRAppMaster") {
					fail(name + ": the AM's syslog is not printed")
				}
				t.Logf("%s: %d containers, %d lines", name, len(got), strings.Count(string(b), "\n"))
			}
			// 2.7.3 prints one container's files without a Container: header: its syslog is
			// a map's, with none of the AM's or the reduce's lines.
			one, _ := os.ReadFile(c.path("logs2.one"))
			if !strings.Contains(string(one), "LogType:syslog") || !regexp.MustCompile(`_m_00000\d_0`).Match(one) ||
				strings.Contains(string(one), "MRAppMaster") || regexp.MustCompile(`_r_000000_0`).Match(one) {
				fail(fmt.Sprintf("yarn logs -containerId did not print the one map's logs:\n%s", one))
			}
			if fsName == "hdfs" {
				// The shell's AM jar and script were localized from HDFS; its container ran
				// the script, as its aggregated stdout shows.
				if !strings.Contains(out, "dshell exit 0") || strings.Contains(out, "jars on hdfs: 0") {
					fail("distributed shell with its resources on HDFS failed:\n" + c.logTail("client.log", 30))
				}
				ds, _ := os.ReadFile(c.path("logs2.dshell"))
				if n := len(regexp.MustCompile(`hello from hdfs container_`).FindAll(ds, -1)); n != 1 {
					fail(fmt.Sprintf("%d containers ran the script localized from HDFS:\n%s", n, ds))
				}
				ls, _ := os.ReadFile(c.path("remote.ls"))
				if !strings.Contains(string(ls), app[1]+"/localhost_8041") {
					fail(fmt.Sprintf("no aggregated file on HDFS:\n%s", ls))
				}
			}
		})
	}
}

// TestRollingLogAggregation: with yarn.nodemanager.log-aggregation.roll-monitoring-interval-seconds
// (2 s, allowed by debug-enabled) a running container's log is uploaded while it runs, as
// <node>_<time>, and the rest when the application ends in a further file; together they
// hold all of it once, and `yarn logs` (2.7.3, when present) prints it whole.
func TestRollingLogAggregation(t *testing.T) {
	remote := filepath.Join(t.TempDir(), "app-logs")
	c := startBobbinCluster(t, "yarn.log-aggregation-enable", "true", "yarn.nodemanager.remote-app-log-dir", remote,
		"yarn.nodemanager.log-aggregation.roll-monitoring-interval-seconds", "2", "yarn.nodemanager.log-aggregation.debug-enabled", "true")
	out, err := c.demo(t, "--containers", "1", "--command", `{ echo first; sleep 5; echo second; }`)
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	app := regexp.MustCompile(`application_\d+_\d+`).FindString(out)
	u, _ := user.Current()
	dir := filepath.Join(remote, u.Username, "logs", app)
	testutil.Eventually(t, 20*time.Second, "the RM does not report log aggregation SUCCEEDED", func() bool {
		return appLogAggregation(t, c, app) == "SUCCEEDED"
	})
	files, _ := filepath.Glob(filepath.Join(dir, aggregatedlog.NodeFileName(nmNodeID(t, c))+"_*"))
	if len(files) < 2 {
		t.Fatalf("rolled files %v, want at least one upload while the container ran and one at the end\nNM:\n%s", files, tail(c.nm.Log(), 30))
	}
	var firsts, seconds int
	for _, f := range files {
		b, _ := os.ReadFile(f)
		parsed, err := aggregatedlog.Parse(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, ct := range parsed.Containers {
			for _, l := range ct.Logs {
				if l.Type == "stdout" {
					firsts += strings.Count(string(l.Data), "first")
					seconds += strings.Count(string(l.Data), "second")
				}
			}
		}
	}
	if firsts < 1 || seconds != 1 {
		t.Fatalf("rolled files hold %d firsts and %d seconds", firsts, seconds)
	}
	t.Logf("%d rolled files", len(files))
	if home := hadoopHomeIfPresent(hadoop2); home != "" {
		cmd := exec.Command(filepath.Join(home, "bin", "yarn"), "logs", "-applicationId", app)
		cmd.Env = hadoopEnv(home, c.confDir)
		o, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(o), "first") || !strings.Contains(string(o), "second") {
			t.Fatalf("2.7.3 yarn logs of rolled files: %v\n%s", err, o)
		}
	}
}
