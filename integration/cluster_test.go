package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/container"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
)

// nsCluster is a one-node cluster — `bobbin resourcemanager` and an unchanged Apache
// NodeManager — run in a private network namespace, because the NodeManager's shuffle
// handler (and the MapReduce AM) bind wildcard addresses.
type nsCluster struct {
	home, dir, confDir string
	// version is the Hadoop version at home (2.7.3, 3.1.1, or a Maven Central layout:
	// 3.4.2, 3.5.0).
	version string
	// bobbinNM runs `bobbin nodemanager` instead of the Apache NodeManager; apacheRM runs
	// the Apache ResourceManager instead of Bobbin's.
	bobbinNM, apacheRM bool
	// secondNM adds a second NodeManager of the same kind as the first (its own conf
	// dir, ports and dirs); nmMemoryMB, when set, is each NM's memory, so that work must
	// spread over both.
	secondNM   bool
	nmMemoryMB int
	// nmProps, when set, edits NodeManager i's yarn-site (0: the first, 1: the second).
	nmProps func(i int, props map[string]string)
	// nmHome, when set, is another Hadoop distribution (nmVersion) whose Apache
	// NodeManager runs instead of home's: clients of one version, NodeManagers (and the
	// MapReduce framework they give containers) of the other.
	nmHome, nmVersion string
	// capacityProps, when set, replaces writeConf's capacity-scheduler.xml.
	capacityProps map[string]string
	// mountNS runs the cluster in a mount namespace of its own too, and preStart (a
	// script) runs in it before the daemons start: a test's own file systems (a small
	// tmpfs for the state store) are mounted there, seen by nothing else.
	mountNS  bool
	preStart string
	// nmWithoutHadoop starts Bobbin's NodeManagers with no Hadoop in their environment
	// (no HADOOP_* variable, no JAVA_HOME): a borrowed server without a Hadoop install.
	nmWithoutHadoop bool
	// nmUser, when set, runs Bobbin's NodeManagers as that unprivileged user
	// (withRootlessNM).
	nmUser *rootlessUser
	// ha runs two `bobbin resourcemanager`s (rm1, web 8088, the first active; rm2, web
	// 18088) on a private ZooKeeper, everyone configured for HA (haConf); $RM is rm1.
	ha bool
}

// withApacheNM makes the cluster's Apache NodeManager the one of Hadoop version v, or
// skips the test when that distribution is absent.
func (c *nsCluster) withApacheNM(t *testing.T, v string) {
	t.Helper()
	c.nmHome, c.nmVersion = requireHadoopVersion(t, v), v
}

// frameworkHome is the distribution whose NodeManager runs the containers: its MapReduce
// jars are the ones the cluster's jobs run with, as on a real cluster.
func (c *nsCluster) frameworkHome() string {
	if c.nmHome != "" && !c.bobbinNM {
		return c.nmHome
	}
	return c.home
}

// Parallelism: a test whose cluster runs in its own network namespace (ports, addresses)
// and temporary directory shares nothing with another such test, so those tests call
// t.Parallel() and the Makefile runs four at once (go test -parallel 4; each cluster
// mostly waits, using about half a core), which keeps CI within its time. A test whose
// subtests are such clusters is parallel itself, so that its subtests join the pool:
// a serial parent runs them as a batch that waits for its slowest while slots idle. The borrowed-server tests stay serial: their NodeManagers measure the
// host's load, which other tests' JVMs would add to.

// newNSCluster skips unless Hadoop 2.7.3, root and unshare are available, and writes the
// cluster's configuration (nmConf) under a temporary directory.
func newNSCluster(t *testing.T) *nsCluster {
	t.Helper()
	return newNSClusterVersion(t, hadoop2)
}

// newNSClusterVersion is newNSCluster with the Hadoop of version v (clients, and the
// Apache daemons when the cluster runs them): a distribution (2.7.3, 3.1.1) or one laid
// out from Maven Central's jars (3.4.2, 3.5.0: requireCurrentHadoop).
func newNSClusterVersion(t *testing.T, v string) *nsCluster {
	t.Helper()
	var home string
	if isCurrentHadoop(v) {
		home = requireCurrentHadoop(t, v)
	} else {
		home = requireHadoopVersion(t, v)
	}
	if _, err := exec.LookPath("unshare"); err != nil || os.Geteuid() != 0 {
		t.Skip("needs root and unshare for a private network namespace")
	}
	dir := t.TempDir()
	c := &nsCluster{home: home, version: v, dir: dir, confDir: filepath.Join(dir, "conf")}
	for _, d := range []string{"conf", "nm-local", "nm-logs", "logs", "work", "pids"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	writeConf(t, c.confDir, nmConf(dir))
	return c
}

// examplesJar is the distribution's MapReduce examples jar (pi).
func (c *nsCluster) examplesJar() string {
	return hadoopJar(c.home, appsVersion(c.version), "mapreduce", "hadoop-mapreduce-examples")
}

// dshellJar is the distribution's distributed-shell jar.
func (c *nsCluster) dshellJar() string {
	return hadoopJar(c.home, appsVersion(c.version), "yarn", "hadoop-yarn-applications-distributedshell")
}

// dshellCommand is the command line prefix that runs the distributed shell's client:
// `yarn jar JAR -jar JAR`. Under a 2.7.3 NodeManager with 3.1.1 clients it is 2.7.3's shell
// submitted by the 3.1.1 launcher and client libraries: the 3.1.1 shell's AM needs 3.x YARN
// client classes (AMRMClientAsync.AbstractCallbackHandler) that a 2.7.3 node's classpath
// lacks, under any RM, and the 3.1.1 launcher's classpath holds the 3.1.1 shell, whose
// client passes options the 2.7.3 AM refuses (--container_type), unless the 2.7.3 jar
// comes first.
func (c *nsCluster) dshellCommand() string {
	if c.nmHome != "" && !c.bobbinNM && c.nmVersion == hadoop2 && c.version != hadoop2 {
		jar := hadoopJar(c.nmHome, c.nmVersion, "yarn", "hadoop-yarn-applications-distributedshell")
		return fmt.Sprintf("env HADOOP_USER_CLASSPATH_FIRST=true HADOOP_CLASSPATH=%[1]s $HADOOP_HOME/bin/yarn jar %[1]s -jar %[1]s", jar)
	}
	return fmt.Sprintf("$HADOOP_HOME/bin/yarn jar %[1]s -jar %[1]s", c.dshellJar())
}

// path is a file in the cluster's directory.
func (c *nsCluster) path(name string) string { return filepath.Join(c.dir, name) }

// run starts the RM and the NM, waits for the NM to register, runs body (bash, in the
// work directory, with $HADOOP_HOME set) and stops both daemons; the output ends with
// "rm exit N".
func (c *nsCluster) run(t *testing.T, timeout time.Duration, body string) (string, error) {
	t.Helper()
	bobbinNM := func(confDir string) string { return c.bobbinNMCommand(t, confDir) }
	props := nmConf(c.dir)
	if c.nmMemoryMB > 0 || c.nmProps != nil || c.ha {
		c.writeNMConf(t, 0, c.confDir, props)
	}
	if c.capacityProps != nil {
		writeCapacityScheduler(t, c.confDir, c.capacityProps)
	}
	if c.ha {
		c.writeRMConfs(t, props)
	}
	// An Apache NodeManager of its own conf dir and pid dir (Hadoop 3's launcher refuses
	// to start a second nodemanager whose pid file is taken).
	nodeManager := func(confDir, pidDir string) string {
		home := c.home
		switch {
		case c.bobbinNM:
			return bobbinNM(confDir)
		case c.nmHome != "":
			home = c.nmHome
		}
		return fmt.Sprintf("env HADOOP_HOME=%[1]s HADOOP_PREFIX=%[1]s HADOOP_COMMON_HOME=%[1]s HADOOP_HDFS_HOME=%[1]s HADOOP_YARN_HOME=%[1]s HADOOP_MAPRED_HOME=%[1]s HADOOP_CONF_DIR=%[2]s YARN_CONF_DIR=%[2]s HADOOP_PID_DIR=%[3]s YARN_PID_DIR=%[3]s %[1]s/bin/yarn nodemanager",
			home, confDir, pidDir)
	}
	// The first NodeManager is started by a shell function, so that a script can start it
	// again (restart_nm0: its output to nm-restarted.log, $NM0 and $NMS updated).
	nm0 := fmt.Sprintf(`start_nm0() { %s >> %s/$1 2>&1 & NM0=$!; }
restart_nm0() { OLD=$NM0; start_nm0 nm-restarted.log; NMS=$(echo " $NMS " | sed "s/ $OLD / $NM0 /"); }
start_nm0 nm.log`, nodeManager(c.confDir, c.path("pids")), c.dir)
	nms := []string{nm0}
	if c.secondNM {
		dir2 := c.path("nm2")
		for _, d := range []string{"conf", "nm-local", "nm-logs", "pids"} {
			os.MkdirAll(filepath.Join(dir2, d), 0o755)
		}
		props := nmConf(dir2)
		props["yarn.nodemanager.address"] = "127.0.0.1:8051"
		props["yarn.nodemanager.localizer.address"] = "127.0.0.1:8050"
		props["yarn.nodemanager.webapp.address"] = "127.0.0.1:8052"
		// The second shuffle port only in mapred-site.xml (below), where MapReduce admins
		// set it: both kinds of NodeManager must take it from there.
		c.writeNMConf(t, 1, filepath.Join(dir2, "conf"), props)
		// The job's settings (the MapReduce home its containers need) as on the first,
		// and the shuffle port where the Java NM reads it: its shuffle service's JobConf
		// loads mapred-default.xml after yarn-site.xml, so only mapred-site.xml wins.
		mapred := "<?xml version=\"1.0\"?>\n<configuration>\n</configuration>\n"
		if b, err := os.ReadFile(filepath.Join(c.confDir, "mapred-site.xml")); err == nil {
			mapred = string(b)
		}
		mapred = strings.Replace(mapred, "</configuration>", prop("mapreduce.shuffle.port", "13563")+"</configuration>", 1)
		if err := os.WriteFile(filepath.Join(dir2, "conf", "mapred-site.xml"), []byte(mapred), 0o644); err != nil {
			t.Fatal(err)
		}
		nms = append(nms, nodeManager(filepath.Join(dir2, "conf"), filepath.Join(dir2, "pids"))+" > "+c.path("nm2.log")+" 2>&1 &")
	}
	start := ""
	for _, l := range nms {
		start += l + "\nNMS=\"$NMS $!\"\n"
	}
	rm := fmt.Sprintf("%s resourcemanager --conf %s > %s/rm.log 2>&1 &\nRM=$!", bobbinBinary(t), c.confDir, c.dir)
	switch {
	case c.apacheRM:
		rm = fmt.Sprintf("%s/bin/yarn resourcemanager > %s/rm.log 2>&1 &\nRM=$!", c.home, c.dir)
	case c.ha:
		rm = c.startHA(t)
	}
	script := fmt.Sprintf(`set -u
ip link set lo up
%[7]s
%[1]s
NMS=
%[3]s
# Until the NodeManagers are RUNNING, read over the RM's REST API: a yarn CLI JVM per
# poll cost a cluster more CPU than some of its tests.
for i in $(seq 1 360); do [ "$(curl -s http://127.0.0.1:8088/ws/v1/cluster/nodes 2>/dev/null | grep -o '"state" *: *"RUNNING"' | wc -l)" -ge %[5]d ] && break; sleep 0.25; done
cd %[2]s/work
%[6]s
%[4]s
kill $NMS; sleep 1; kill -9 $NMS 2>/dev/null
kill $RM; wait $RM; echo "rm exit $?"
`, rm, c.dir, start, body, len(nms), restPolls, c.preStart)
	return c.exec(t, timeout, script)
}

// scriptResults are a script's "=== key value" lines, by key.
func scriptResults(out string) map[string]string {
	got := map[string]string{}
	for _, m := range scriptResultLine.FindAllStringSubmatch(out, -1) {
		got[m[1]] = strings.TrimSpace(m[2])
	}
	return got
}

var scriptResultLine = regexp.MustCompile(`(?m)^=== (\w+) (.*)$`)

// restPolls are shell functions for scripts that wait on the RM (at 127.0.0.1:8088, as in
// every namespace cluster) over its REST API: polling with a yarn CLI JVM a second cost
// more CPU than the tests' jobs.
//   - running_app [EXCEPT]: the id of a RUNNING application (other than EXCEPT), or "";
//   - app_containers APP: how many containers APP holds now.
const restPolls = `running_app() { curl -s 'http://127.0.0.1:8088/ws/v1/cluster/apps?states=RUNNING' 2>/dev/null | grep -o 'application_[0-9]*_[0-9]*' | grep -vx "${1:-none}" | head -1; }
app_containers() { N=$(curl -s "http://127.0.0.1:8088/ws/v1/cluster/apps/$1" 2>/dev/null | grep -o '"runningContainers" *: *[0-9]*' | grep -o '[0-9]*$'); echo "${N:-0}"; }`

// bobbinNMCommand is the command line that starts `bobbin nodemanager` with a conf dir.
// The yarn launcher exports these for a Java NM; containers' classpaths need them.
func (c *nsCluster) bobbinNMCommand(t *testing.T, confDir string) string {
	if u := c.nmUser; u != nil {
		return fmt.Sprintf("%s %s %s nodemanager --conf %s", u.runAs(), u.hadoopEnv(confDir), u.bin, confDir)
	}
	if c.nmWithoutHadoop {
		return fmt.Sprintf("env -u HADOOP_HOME -u HADOOP_PREFIX -u HADOOP_CONF_DIR -u YARN_CONF_DIR -u HADOOP_COMMON_HOME -u HADOOP_HDFS_HOME -u HADOOP_YARN_HOME -u HADOOP_MAPRED_HOME -u JAVA_HOME %s nodemanager --conf %s",
			bobbinBinary(t), confDir)
	}
	return fmt.Sprintf("env HADOOP_COMMON_HOME=%[1]s HADOOP_HDFS_HOME=%[1]s HADOOP_YARN_HOME=%[1]s HADOOP_MAPRED_HOME=%[1]s %[2]s nodemanager --conf %[3]s",
		c.home, bobbinBinary(t), confDir)
}

// exec runs a bash script in the cluster's own network namespace with the Hadoop
// environment (HADOOP_HOME, conf dir, log and pid dirs), killing everything it started
// when it ends or times out.
func (c *nsCluster) exec(t *testing.T, timeout time.Duration, script string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ns := []string{"-n"}
	if c.mountNS {
		ns = append(ns, "-m") // util-linux makes its mounts private
	}
	cmd := exec.CommandContext(ctx, "unshare", append(ns, "bash", "-c", script)...)
	// Hadoop 3's launcher refuses to start a daemon whose pid file (in HADOOP_PID_DIR,
	// /tmp by default) names a live process: each cluster has its own pid directory, so
	// clusters of parallel tests do not see each other's daemons.
	cmd.Env = append(hadoopEnv(c.home, c.confDir), "USER=root", "YARN_LOG_DIR="+c.path("logs"), "HADOOP_LOG_DIR="+c.path("logs"),
		"HADOOP_PID_DIR="+c.path("pids"), "YARN_PID_DIR="+c.path("pids"))
	// The script, its daemons and their JVMs share one process group, killed whole on a
	// timeout and after the script ends, so no daemon outlives its test.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	killStrays(c.dir)
	return string(out), err
}

// killStrays kills what is left of a cluster's containers once its script has ended: an
// Apache NodeManager starts each container in a session of its own (setsid), out of the
// script's process group, and one killed with -9 leaves them running (a JVM AM that then
// retries a dead RM for minutes, taking CPU from the tests after it). They are found by
// the cluster's directory on their command line or as their working directory (a
// distributed shell's AM names no path of the cluster's, but runs in its container's).
func killStrays(dir string) {
	entries, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, e := range entries {
		b, err := os.ReadFile(e)
		cwd, _ := os.Readlink(filepath.Join(filepath.Dir(e), "cwd"))
		if err != nil || !strings.Contains(string(b), dir+"/") && !strings.HasPrefix(cwd, dir+"/") {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(e))); err == nil && pid != os.Getpid() {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// nmHeartbeatThreads is a script fragment that prints, for each Apache NodeManager in
// $NMS, how many heartbeat threads it still has ("=== nm heartbeat threads: N"): see
// skipOnApacheNMResyncRace.
const nmHeartbeatThreads = `for p in $NMS; do [ -x "$JAVA_HOME/bin/jstack" ] && echo "=== nm heartbeat threads: $("$JAVA_HOME/bin/jstack" $p 2>/dev/null | grep -c '"Node Status Updater"')"; done`

// skipOnApacheNMResyncRace skips a test whose job stuck because an Apache NodeManager
// lost its heartbeat thread while resyncing (out holds nmHeartbeatThreads' lines).
// Upstream: the 2.7.3 and 3.1.1 NodeManagers, resyncing with a restarted or new active
// RM, start the new heartbeat thread before they clear its stop flag
// (NodeStatusUpdaterImpl.rebootNodeStatusUpdaterAndRegisterWithRM, checked in both jars):
// on a loaded host the thread exits at once and the node, registered again, never
// heartbeats, so no RM — the Java one neither — can place the job's next container.
// docs/recovery.md.
func skipOnApacheNMResyncRace(t *testing.T, c *nsCluster, out string) {
	t.Helper()
	if !c.bobbinNM && strings.Contains(out, "=== nm heartbeat threads: 0") {
		c.keep(t)
		t.Skipf("the Apache NodeManager's heartbeat thread died in its resync (upstream race, docs/recovery.md); output:\n%s", out)
	}
}

// logTail returns the last n lines of a file in the cluster's directory.
func (c *nsCluster) logTail(name string, n int) string {
	b, _ := os.ReadFile(c.path(name))
	return tail(string(b), n)
}

// writeNMConf writes a conf dir for NodeManager i of this cluster: props, with the memory
// override and nmProps applied.
func (c *nsCluster) writeNMConf(t *testing.T, i int, dir string, props map[string]string) {
	if c.nmMemoryMB > 0 {
		props["yarn.nodemanager.resource.memory-mb"] = fmt.Sprint(c.nmMemoryMB)
	}
	if c.nmProps != nil {
		c.nmProps(i, props)
	}
	if c.ha {
		haConf(props)
	}
	writeConf(t, dir, props)
}

// keep copies the cluster's directory (logs, container dirs) to $BOBBIN_KEEP_DIR, when
// set, so a failed run can be read after the test removed its temporary directory.
func (c *nsCluster) keep(t *testing.T) {
	if dst := os.Getenv("BOBBIN_KEEP_DIR"); dst != "" {
		to := filepath.Join(dst, t.Name()) // subtests' names hold a slash
		os.MkdirAll(filepath.Dir(to), 0o755)
		out, err := exec.Command("cp", "-a", c.dir, to).CombinedOutput()
		t.Logf("cluster directory kept in %s (%v %s)", to, err, out)
	}
}

// bobbinCluster is `bobbin resourcemanager` and `bobbin nodemanager` processes sharing a
// configuration directory, on loopback with free ports. It needs no Hadoop.
type bobbinCluster struct {
	confDir, rmAddr, schedAddr, adminAddr, logDir string
	rmWeb, nmWeb                                  string // host:port of the web servers
	rm, nm                                        *daemon
}

func startBobbinCluster(t *testing.T, extra ...string) *bobbinCluster {
	t.Helper()
	dir := t.TempDir()
	c := &bobbinCluster{confDir: filepath.Join(dir, "conf"), logDir: filepath.Join(dir, "nm-logs"),
		rmAddr: fmt.Sprintf("127.0.0.1:%d", freePort(t)), schedAddr: fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		adminAddr: fmt.Sprintf("127.0.0.1:%d", freePort(t)), rmWeb: fmt.Sprintf("127.0.0.1:%d", freePort(t)), nmWeb: fmt.Sprintf("127.0.0.1:%d", freePort(t))}
	tracker := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	os.MkdirAll(c.confDir, 0o755)
	props := map[string]string{
		"yarn.resourcemanager.hostname":                           "127.0.0.1",
		"yarn.resourcemanager.address":                            c.rmAddr,
		"yarn.resourcemanager.scheduler.address":                  c.schedAddr,
		"yarn.resourcemanager.resource-tracker.address":           tracker,
		"yarn.resourcemanager.webapp.address":                     c.rmWeb,
		"yarn.resourcemanager.nodemanagers.heartbeat-interval-ms": "200",
		"yarn.scheduler.minimum-allocation-mb":                    "128",
		"yarn.nodemanager.hostname":                               "127.0.0.1",
		"yarn.nodemanager.address":                                "127.0.0.1:0",
		"yarn.nodemanager.webapp.address":                         c.nmWeb,
		"yarn.nodemanager.local-dirs":                             filepath.Join(dir, "nm-local"),
		"yarn.nodemanager.log-dirs":                               c.logDir,
		"yarn.nodemanager.resource.memory-mb":                     "2048",
		"yarn.nodemanager.resource.cpu-vcores":                    "4",
		"yarn.nodemanager.aux-services":                           "mapreduce_shuffle",
		"mapreduce.shuffle.port":                                  "0",
		"yarn.nodemanager.vmem-check-enabled":                     "false", // Go reserves ~1.7 GB of address space
		"yarn.nodemanager.container-monitor.interval-ms":          "200",
		"yarn.resourcemanager.admin.address":                      c.adminAddr,
	}
	for i := 0; i+1 < len(extra); i += 2 {
		props[extra[i]] = extra[i+1]
	}
	writeConf(t, c.confDir, props)
	c.rm = startDaemon(t, "resourcemanager", "--conf", c.confDir)
	c.rm.waitListening(t, tracker)
	c.nm = startDaemon(t, "nodemanager", "--conf", c.confDir)
	if !testutil.Poll(20*time.Second, func() bool { return strings.Contains(c.nm.Log(), "registered with the ResourceManager") }) {
		t.Fatalf("NodeManager did not register:\n%s", c.nm.Log())
	}
	return c
}

func (c *bobbinCluster) demo(t *testing.T, args ...string) (string, error) {
	cmd := exec.Command(bobbinBinary(t), append([]string{"demo", "--rm", c.rmAddr, "--scheduler", c.schedAddr, "--timeout", "60s"}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// containerProcesses lists the pids of live processes carrying the container marker of
// an application's containers whose id ends with one of the suffixes ("" = any).
func containerProcesses(app string, suffixes ...string) []string {
	prefix := container.MarkerEnv + "=container_" + strings.TrimPrefix(app, "application_") + "_"
	var out []string
	entries, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, e := range entries {
		b, err := os.ReadFile(e)
		if err != nil {
			continue
		}
		if st, _ := os.ReadFile(filepath.Join(filepath.Dir(e), "stat")); strings.Contains(string(st), ") Z ") {
			continue
		}
		for _, kv := range strings.Split(string(b), "\x00") {
			if !strings.HasPrefix(kv, prefix) {
				continue
			}
			for _, s := range suffixes {
				if strings.HasSuffix(kv, s) {
					out = append(out, filepath.Base(filepath.Dir(e)))
					break
				}
			}
		}
	}
	return out
}
