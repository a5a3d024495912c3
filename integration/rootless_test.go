package integration

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A NodeManager on a borrowed server runs as an ordinary user: no root, no capabilities,
// no setuid helper (the source documents' promise for such servers). rootlessUser is
// that user in a namespace cluster: an entry of its own in the cluster's /etc/passwd and
// /etc/group (bind-mounted over the host's in the cluster's mount namespace, so nothing
// of the host changes), the NodeManager's directories its own, and copies of what it
// runs where it can reach them (the test's binary and a kernel built under root's home
// are not).
type rootlessUser struct {
	name     string
	uid, gid int
	home     string // its home directory, in the cluster's directory
	hadoop   string // the cluster's Hadoop distribution, bind-mounted where the user reaches it
	bin      string // the bobbin binary, copied
}

// runAs is the command prefix that runs a command as the user, with no capability in
// any set and no way to gain one.
func (u *rootlessUser) runAs() string {
	return fmt.Sprintf("setpriv --reuid=%d --regid=%d --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs env HOME=%s USER=%s LOGNAME=%s",
		u.uid, u.gid, u.home, u.name, u.name)
}

// hadoopEnv is the Hadoop environment of the user's commands: the bind-mounted
// distribution.
func (u *rootlessUser) hadoopEnv(confDir string) string {
	return fmt.Sprintf("HADOOP_HOME=%[1]s HADOOP_PREFIX=%[1]s HADOOP_COMMON_HOME=%[1]s HADOOP_HDFS_HOME=%[1]s HADOOP_YARN_HOME=%[1]s HADOOP_MAPRED_HOME=%[1]s HADOOP_CONF_DIR=%[2]s YARN_CONF_DIR=%[2]s HADOOP_LOG_DIR=%[3]s YARN_LOG_DIR=%[3]s",
		u.hadoop, confDir, filepath.Join(u.home, "logs"))
}

// freeUID is the first uid from 1500 on that the host's /etc/passwd does not name.
func freeUID(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/etc/passwd")
	if err != nil {
		t.Fatal(err)
	}
	used := map[int]bool{}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		if f := strings.Split(sc.Text(), ":"); len(f) > 3 {
			if n, err := strconv.Atoi(f[2]); err == nil {
				used[n] = true
			}
			if n, err := strconv.Atoi(f[3]); err == nil {
				used[n] = true
			}
		}
	}
	for uid := 1500; ; uid++ {
		if !used[uid] {
			return uid
		}
	}
}

// withRootlessNM makes the cluster's Bobbin NodeManager run as a new unprivileged user;
// kernel, when set, is a UML kernel to copy where the user can run it (its new path is
// returned).
func (c *nsCluster) withRootlessNM(t *testing.T, kernel string) (*rootlessUser, string) {
	t.Helper()
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("needs setpriv (util-linux) to run the NodeManager as an unprivileged user")
	}
	uid := freeUID(t)
	u := &rootlessUser{name: "bobbinrl", uid: uid, gid: uid, home: c.path("home"), hadoop: c.path("hadoop"), bin: c.path("bin/bobbin")}
	// The test's temporary directories are 0700: the user must traverse them to its own.
	for d := c.dir; d != "/" && strings.HasPrefix(d, os.TempDir()+"/"); d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	for _, d := range []string{"home", "hadoop", "bin", "staging", "app-logs", filepath.Join("conf", "tmp")} {
		os.MkdirAll(c.path(d), 0o755)
	}
	copyExecutable(t, bobbinBinary(t), u.bin)
	if kernel != "" {
		k := c.path("bin/linux.uml")
		copyExecutable(t, kernel, k)
		kernel = k
	}
	c.mountNS = true
	// The user's entries, its directories, and the distribution where it can read it.
	c.preStart += fmt.Sprintf(`
cp /etc/passwd %[1]s/passwd && echo "%[2]s:x:%[3]d:%[4]d:rootless NodeManager:%[5]s:/bin/bash" >> %[1]s/passwd && mount --bind %[1]s/passwd /etc/passwd
cp /etc/group %[1]s/group && echo "%[2]s:x:%[4]d:" >> %[1]s/group && mount --bind %[1]s/group /etc/group
mount --bind %[6]s %[7]s && mount -o remount,bind,ro %[7]s
chown -R %[3]d:%[4]d %[1]s/nm-local %[1]s/nm-logs %[1]s/home %[1]s/staging %[1]s/app-logs %[1]s/work %[1]s/conf/tmp
`, c.dir, u.name, u.uid, u.gid, u.home, c.home, u.hadoop)
	c.nmUser = u
	return u, kernel
}

func copyExecutable(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestRootlessNodeManager: Bobbin's RM as root and Bobbin's NodeManager as an ordinary
// user (uid ≥ 1000, no capabilities), with the process executor and, where the UML
// probe passes, the UML executor; MapReduce pi (2.7.3 and 3.1.1) and a distributed
// shell whose container exits 3 are submitted by that user. Pi completes; the shell's
// exit status 3 reaches its AM and the client fails the job; no process of the
// NodeManager — it, its containers, UML guests and their helpers — runs as root.
func TestRootlessNodeManager(t *testing.T) {
	for _, tc := range []struct {
		executor, version string
	}{
		{"process", hadoop2}, {"process", hadoop3}, {"uml", hadoop2}, {"uml", hadoop3},
	} {
		t.Run(tc.executor+"-"+tc.version, func(t *testing.T) {
			kernel := ""
			if tc.executor == "uml" {
				kernel = requireUML(t)
			}
			t.Parallel() // its own network namespace: see parallelism in cluster_test.go
			c := newNSClusterVersion(t, tc.version)
			c.bobbinNM = true
			u, kernel := c.withRootlessNM(t, kernel)
			c.nmProps = func(_ int, p map[string]string) {
				// Logs aggregated by the user's NodeManager, read back by the user's yarn logs.
				p["yarn.log-aggregation-enable"] = "true"
				p["yarn.nodemanager.remote-app-log-dir"] = c.path("app-logs")
				// Borrowed mode: the owner's load measured as the user (thresholds that
				// never take the node away from the jobs on this small machine).
				for k, v := range map[string]string{"enabled": "true", "interval-ms": "500", "window-ms": "2000", "leave-below": "0",
					"rejoin-above": "0", "evict-external-cpu": "1", "memory-reserve-mb": "256", "disk-min-free-mb": "0"} {
					p["bobbin.nodemanager.borrowed."+k] = v
				}
				if kernel != "" {
					umlNM(c, kernel, p)
				}
			}
			writeMapredSiteWith(t, c, prop("yarn.app.mapreduce.am.env", "HADOOP_MAPRED_HOME="+u.hadoop)+
				prop("mapreduce.map.env", "HADOOP_MAPRED_HOME="+u.hadoop)+
				prop("mapreduce.reduce.env", "HADOOP_MAPRED_HOME="+u.hadoop))
			examples := strings.Replace(c.examplesJar(), c.home, u.hadoop, 1)
			dshell := strings.Replace(c.dshellJar(), c.home, u.hadoop, 1)
			as := u.runAs() + " " + u.hadoopEnv(c.confDir)
			// What needs root is refused at start, naming the key: containers run as
			// their submitters (LinuxContainerExecutor), and cgroups outside a subtree
			// delegated to the user.
			refusals := ""
			refused := map[string][2]string{
				"lce":     {"yarn.nodemanager.container-executor.class", "org.apache.hadoop.yarn.server.nodemanager.LinuxContainerExecutor"},
				"cgroups": {"yarn.nodemanager.resource.memory.enabled", "true"},
			}
			if tc.executor == "process" && tc.version == hadoop2 {
				for name, kv := range refused {
					props := nmConf(c.dir)
					props[kv[0]] = kv[1]
					dir := c.path("conf-" + name)
					os.MkdirAll(dir, 0o755)
					writeConf(t, dir, props)
					refusals += fmt.Sprintf("timeout 30 %[1]s %[2]s nodemanager --conf %[3]s > %[4]s 2>&1; echo \"refuse-%[5]s exit $?\"\n",
						u.runAs(), u.bin, dir, c.path("refuse-"+name+".log"), name)
				}
			}
			start := time.Now()
			out, err := c.run(t, 20*time.Minute, refusals+fmt.Sprintf(`
# Every process of the NodeManager's, as ps sees it, while the jobs run.
(while :; do echo "=== ps" >> %[4]s/ps.log; ps -eo uid=,pid=,ppid=,args= -ww | cut -c1-400 >> %[4]s/ps.log; sleep 1; done) &
PS=$!
timeout 600 %[1]s %[5]s/bin/hadoop jar %[2]s pi 2 10 > %[4]s/pi.log 2>&1
echo "pi exit $?"
timeout 300 %[1]s %[5]s/bin/yarn jar %[3]s -jar %[3]s -shell_command 'echo about to fail; exit 3' -num_containers 1 -master_memory 256 -container_memory 128 > %[4]s/ds.log 2>&1
echo "dshell exit $?"
for i in $(seq 1 120); do [ -n "$(ls %[4]s/app-logs/%[6]s/logs/application_*_0002/ 2>/dev/null)" ] && break; sleep 0.5; done
timeout 120 %[1]s %[5]s/bin/yarn logs -applicationId $(ls %[4]s/app-logs/%[6]s/logs | sort | tail -1) > %[4]s/yarnlogs.log 2>&1
echo "yarn logs exit $?"
curl -s http://127.0.0.1:8042/ws/v1/node/borrowed > %[4]s/borrowed.json
kill $PS
$HADOOP_HOME/bin/yarn application -list -appStates ALL 2>&1 | grep application_
`, as, examples, dshell, c.dir, u.hadoop, u.name))
			took := time.Since(start)
			piLog, _ := os.ReadFile(c.path("pi.log"))
			fail := func(what string) {
				c.keep(t)
				t.Fatalf("%s\nerr %v\noutput:\n%s\nNM log:\n%s\npi (tail):\n%s\ndshell (tail):\n%s", what, err, out, c.logTail("nm.log", 60),
					tail(string(piLog), 40), c.logTail("ds.log", 30))
			}
			if !strings.Contains(out, "pi exit 0") || !strings.Contains(string(piLog), "Estimated value of Pi is 3.8") {
				fail("pi did not succeed")
			}
			if strings.Contains(out, "dshell exit 0") || !strings.Contains(out, "dshell exit ") {
				fail("the distributed shell whose container exits 3 did not fail")
			}
			for name, kv := range refused {
				if refusals == "" {
					break
				}
				log, _ := os.ReadFile(c.path("refuse-" + name + ".log"))
				if strings.Contains(out, "refuse-"+name+" exit 0") || strings.Contains(out, "refuse-"+name+" exit 124") || !strings.Contains(string(log), kv[0]) {
					fail(fmt.Sprintf("the rootless NodeManager with %s=%s did not refuse to start naming the key:\n%s", kv[0], kv[1], tail(string(log), 10)))
				}
				t.Logf("refused: %s", tail(strings.TrimSpace(string(log)), 1))
			}
			// The shell's logs, aggregated by the NodeManager as its user, read by the user.
			if yl, _ := os.ReadFile(c.path("yarnlogs.log")); !strings.Contains(out, "yarn logs exit 0") || !strings.Contains(string(yl), "about to fail") {
				fail(fmt.Sprintf("yarn logs as the user does not show the shell's aggregated output:\n%s", tail(string(yl), 20)))
			}
			// The owner's load, measured by the user's NodeManager all along.
			var borrowed struct {
				Borrowed struct {
					Enabled bool
					History []struct {
						External float64 `json:"externalCpuShare"`
						Job      float64 `json:"jobCpuShare"`
					}
				}
			}
			if b, _ := os.ReadFile(c.path("borrowed.json")); json.Unmarshal(b, &borrowed) != nil || !borrowed.Borrowed.Enabled || len(borrowed.Borrowed.History) < 10 {
				fail(fmt.Sprintf("the rootless NodeManager's borrowed-mode measurements: %+v", borrowed))
			}
			// Its containers' CPU (a guest's: every host process of it) seen as the jobs'.
			jobSeen := false
			for _, p := range borrowed.Borrowed.History {
				jobSeen = jobSeen || p.Job > 0
			}
			if !jobSeen {
				fail(fmt.Sprintf("the rootless NodeManager never measured its containers' CPU: %+v", borrowed.Borrowed.History))
			}
			// The applications, pi's and the shell's, as the RM listed them.
			apps := slices.Compact(slices.Sorted(slices.Values(regexp.MustCompile(`application_\d+_\d+`).FindAllString(out, -1))))
			if len(apps) != 2 {
				fail(fmt.Sprintf("%d applications listed, want 2: %v", len(apps), apps))
			}
			// The RM handed the shell's AM exit status 3 (in allocate's completed
			// statuses), and the AM failed the job for it.
			if !regexp.MustCompile(`containers completed.*containers="?[^"]*\b` + containerOf(apps[1], 2) + `:3[ "\n]`).MatchString(c.logTail("rm.log", 100000)) {
				fail("the RM did not hand the shell's AM exit status 3")
			}
			if !strings.Contains(c.logTail("ds.log", 50), "Application failed to complete successfully") {
				fail("the shell's client did not report the job failed")
			}
			// Who ran what: the NodeManager, its containers, and the guests with their
			// helpers.
			psLog, _ := os.ReadFile(c.path("ps.log"))
			counts, err := nodeManagerProcesses(string(psLog), u)
			if err != nil {
				fail(err.Error())
			}
			// A guest's processes are the kernel's on the host (its command line).
			inside := map[string]string{"process": "container", "uml": "guest"}[tc.executor]
			if counts["nodemanager"] == 0 || counts[inside] == 0 {
				fail(fmt.Sprintf("ps saw too little to judge: %v", counts))
			}
			for _, l := range strings.Split(string(piLog), "\n") {
				if strings.Contains(l, "Job Finished in") {
					t.Logf("%s executor, Hadoop %s: pi %s; whole run %v; ps samples as uid %d: %v", tc.executor, tc.version, strings.TrimSpace(l), took.Round(time.Second), u.uid, counts)
				}
			}
		})
	}
}

// nodeManagerProcesses reads ps snapshots ("=== ps", then "uid pid ppid args" lines)
// and counts, by kind, the rootless NodeManager's processes and all their descendants
// (containers, UML kernels and their helpers: slirp, vde_plug), over every snapshot; any
// of them not running as the user's uid is an error.
func nodeManagerProcesses(log string, u *rootlessUser) (map[string]int, error) {
	counts := map[string]int{}
	for _, snap := range strings.Split(log, "=== ps\n") {
		type proc struct {
			uid, ppid int
			args      string
		}
		procs := map[int]proc{}
		children := map[int][]int{}
		var roots []int
		for _, l := range strings.Split(snap, "\n") {
			f := strings.Fields(l)
			if len(f) < 4 {
				continue
			}
			uid, e1 := strconv.Atoi(f[0])
			pid, e2 := strconv.Atoi(f[1])
			ppid, e3 := strconv.Atoi(f[2])
			if e1 != nil || e2 != nil || e3 != nil {
				continue
			}
			args := strings.Join(f[3:], " ")
			procs[pid] = proc{uid, ppid, args}
			children[ppid] = append(children[ppid], pid)
			if strings.HasPrefix(args, u.bin+" nodemanager") {
				roots = append(roots, pid)
			}
		}
		for _, root := range roots {
			todo := []int{root}
			for len(todo) > 0 {
				pid := todo[0]
				todo = append(todo[1:], children[pid]...)
				p := procs[pid]
				kind := "container"
				switch prog := filepath.Base(strings.Fields(p.args + " x")[0]); {
				case pid == root:
					kind = "nodemanager"
				case prog == "linux.uml" || prog == "vde_plug" || strings.HasPrefix(prog, "slirp"):
					kind = "guest"
				}
				if p.uid != u.uid {
					return counts, fmt.Errorf("a %s process of the rootless NodeManager runs as uid %d, not its user's %d: %s", kind, p.uid, u.uid, p.args)
				}
				counts[kind]++
			}
		}
	}
	return counts, nil
}
