package integration

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/internal/kdctest"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
)

// TestKerberosNodeManagers: NodeManagers in secure mode register over KERBEROS, with
// keytabs from a real MIT KDC — Bobbin's NM and the Apache 2.7.3 NM with Bobbin's
// kerberized RM, and Bobbin's NM with the Apache 2.7.3 RM in secure mode. Each RM's node
// list, read by the real yarn CLI after kinit, shows its nodes RUNNING.
func TestKerberosNodeManagers(t *testing.T) {
	home := requireHadoop(t)
	k := kdctest.Start(t, "BOBBIN.TEST")
	k.AddPrincipal(t, "alice", "alice-secret")
	rmKeytab := k.Keytab(t, "rm.keytab", "rm/localhost")
	nmKeytab := k.Keytab(t, "nm.keytab", "nm/localhost")
	t.Setenv("KRB5_CONFIG", k.Krb5Conf())
	jvm := javaOpts + " --add-opens java.security.jgss/sun.security.krb5=ALL-UNNAMED -Djava.security.krb5.conf=" + k.Krb5Conf()
	javaEnv := []string{"HADOOP_OPTS=" + jvm, "YARN_OPTS=" + jvm, "KRB5CCNAME=" + filepath.Join(k.Dir, "ccache"), "KRB5_CONFIG=" + k.Krb5Conf()}
	kinit(t, k, "alice", "alice-secret")

	rmSite := func() map[string]string {
		return map[string]string{
			"yarn.resourcemanager.hostname":                           "127.0.0.1",
			"yarn.resourcemanager.address":                            fmt.Sprintf("127.0.0.1:%d", freePort(t)),
			"yarn.resourcemanager.resource-tracker.address":           fmt.Sprintf("127.0.0.1:%d", freePort(t)),
			"yarn.resourcemanager.scheduler.address":                  fmt.Sprintf("127.0.0.1:%d", freePort(t)),
			"yarn.resourcemanager.webapp.address":                     fmt.Sprintf("127.0.0.1:%d", freePort(t)),
			"yarn.resourcemanager.admin.address":                      fmt.Sprintf("127.0.0.1:%d", freePort(t)),
			"yarn.resourcemanager.principal":                          "rm/_HOST@BOBBIN.TEST",
			"yarn.resourcemanager.keytab":                             rmKeytab,
			"yarn.resourcemanager.nodemanagers.heartbeat-interval-ms": "500",
		}
	}
	// An NM's conf dir: the RM's keys and its own ports, principal and keytab.
	nmConfDir := func(rm map[string]string, principal string) string {
		dir := t.TempDir()
		site := map[string]string{}
		for k, v := range rm {
			site[k] = v
		}
		for k, v := range map[string]string{
			"yarn.nodemanager.hostname":           "127.0.0.1",
			"yarn.nodemanager.address":            fmt.Sprintf("127.0.0.1:%d", freePort(t)),
			"yarn.nodemanager.localizer.address":  fmt.Sprintf("127.0.0.1:%d", freePort(t)),
			"yarn.nodemanager.webapp.address":     fmt.Sprintf("127.0.0.1:%d", freePort(t)),
			"yarn.nodemanager.local-dirs":         filepath.Join(dir, "local"),
			"yarn.nodemanager.log-dirs":           filepath.Join(dir, "logs"),
			"yarn.nodemanager.resource.memory-mb": "2048",
			"yarn.nodemanager.principal":          principal,
			"yarn.nodemanager.keytab":             nmKeytab,
			"yarn.nodemanager.recovery.dir":       filepath.Join(dir, "recovery"),
		} {
			site[k] = v
		}
		writeConf(t, dir, site)
		kerberizedCore(t, dir)
		return dir
	}
	nodes := func(confDir string, want int) string {
		var out string
		if !testutil.Poll(90*time.Second, func() bool {
			_, out = yarnCLI(t, home, confDir, javaEnv, "node", "-list")
			return strings.Count(out, "RUNNING") >= want
		}) {
			t.Fatalf("%d RUNNING nodes wanted:\n%s", want, out)
		}
		return out
	}

	t.Run("bobbin-rm", func(t *testing.T) {
		site := rmSite()
		confDir := t.TempDir()
		writeConf(t, confDir, site)
		kerberizedCore(t, confDir)
		rm := startDaemon(t, "resourcemanager", "--conf", confDir)
		rm.waitListening(t, site["yarn.resourcemanager.address"])
		// _HOST in the NM's principal is its host name: 127.0.0.1, named as Java names it.
		nm := startDaemon(t, "nodemanager", "--conf", nmConfDir(site, "nm/_HOST@BOBBIN.TEST"))
		apache := startJavaDaemon(t, home, nmConfDir(site, "nm/localhost@BOBBIN.TEST"), javaEnv, "nodemanager")
		out := nodes(confDir, 2)
		if !strings.Contains(out, "Total Nodes:2") {
			t.Fatalf("node list:\n%s\nBobbin NM:\n%s\nApache NM:\n%s", out, nm.Log(), apache.logTail(40))
		}
		// The node list can show a node the instant the RM stores it, a moment before the
		// RM logs its registration: wait for the line.
		if !testutil.Poll(30*time.Second, func() bool { return strings.Count(rm.Log(), "NodeManager registered") >= 2 }) {
			t.Fatalf("%d registrations in the RM's log:\n%s", strings.Count(rm.Log(), "NodeManager registered"), rm.Log())
		}
		if !strings.Contains(apache.logTail(1000), "Login successful for user nm/localhost@BOBBIN.TEST using keytab file") {
			t.Fatalf("the Apache NM did not log in with its keytab:\n%s", apache.logTail(60))
		}
	})

	t.Run("apache-rm", func(t *testing.T) {
		site := rmSite()
		confDir := t.TempDir()
		writeConf(t, confDir, site)
		kerberizedCore(t, confDir)
		rm := startJavaDaemon(t, home, confDir, javaEnv, "resourcemanager")
		rm.waitListening(t, site["yarn.resourcemanager.resource-tracker.address"])
		nm := startDaemon(t, "nodemanager", "--conf", nmConfDir(site, "nm/_HOST@BOBBIN.TEST"))
		out := nodes(confDir, 1)
		if !strings.Contains(out, "Total Nodes:1") || !strings.Contains(nm.Log(), "registered with the ResourceManager") {
			t.Fatalf("node list:\n%s\nBobbin NM:\n%s\nApache RM:\n%s", out, nm.Log(), rm.logTail(40))
		}
		// The Java RM's SecurityLogger names the method the NM authenticated with.
		if !strings.Contains(rm.logTail(5000), "Auth successful for nm/localhost@BOBBIN.TEST (auth:KERBEROS)") {
			t.Fatalf("the Apache RM did not log the NM's Kerberos login:\n%s", rm.logTail(60))
		}
	})
}

// kerberizedCore writes core-site.xml with hadoop.security.authentication=kerberos and
// hadoop.rpc.protection (authentication when not given).
func kerberizedCore(t *testing.T, dir string, protection ...string) {
	t.Helper()
	qop := "authentication"
	if len(protection) > 0 {
		qop = protection[0]
	}
	body := "<?xml version=\"1.0\"?>\n<configuration>\n" + prop("fs.defaultFS", "file:///") + prop("hadoop.tmp.dir", filepath.Join(dir, "tmp")) +
		prop("hadoop.security.authentication", "kerberos") + prop("hadoop.rpc.protection", qop) + "</configuration>\n"
	if err := os.WriteFile(filepath.Join(dir, "core-site.xml"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	// The Java daemons' keytab logins and the IPC server's authentications, for the checks.
	l4j, err := os.OpenFile(filepath.Join(dir, "log4j.properties"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l4j.Close()
	l4j.WriteString("log4j.logger.org.apache.hadoop.security.UserGroupInformation=INFO\nlog4j.logger.SecurityLogger=INFO\n")
}

// javaDaemon is an Apache daemon (`yarn <name>`, `hdfs <name>`) run in this network namespace, its log
// in a file; the test's cleanup kills its process group.
type javaDaemon struct {
	cmd  *exec.Cmd
	log  string
	done chan error
}

func startJavaDaemon(t *testing.T, home, confDir string, env []string, name string) *javaDaemon {
	t.Helper()
	return startHadoopDaemon(t, home, confDir, env, "yarn", name)
}

// startHadoopDaemon runs `<bin> <name>` (bin: yarn, hdfs) from the distribution at home.
func startHadoopDaemon(t *testing.T, home, confDir string, env []string, bin, name string) *javaDaemon {
	t.Helper()
	dir := t.TempDir()
	d := &javaDaemon{log: filepath.Join(dir, name+".out"), done: make(chan error, 1)}
	logFile, err := os.Create(d.log)
	if err != nil {
		t.Fatal(err)
	}
	d.cmd = exec.Command(filepath.Join(home, "bin", bin), name)
	d.cmd.Env = append(hadoopEnv(home, confDir), env...)
	d.cmd.Env = append(d.cmd.Env, "YARN_LOG_DIR="+dir, "HADOOP_LOG_DIR="+dir, "HADOOP_PID_DIR="+dir, "YARN_PID_DIR="+dir,
		"YARN_ROOT_LOGGER=INFO,console")
	d.cmd.Stdout, d.cmd.Stderr = logFile, logFile
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.done <- d.cmd.Wait(); logFile.Close() }()
	t.Cleanup(func() {
		syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
		<-d.done
		if t.Failed() {
			t.Logf("%s log (tail):\n%s", name, d.logTail(80))
		}
	})
	return d
}

func (d *javaDaemon) logTail(n int) string {
	b, _ := os.ReadFile(d.log)
	return tail(string(b), n)
}

func (d *javaDaemon) waitListening(t *testing.T, addr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return
		}
		select {
		case err := <-d.done:
			t.Fatalf("Java daemon exited before listening on %s: %v\n%s", addr, err, d.logTail(60))
		case <-time.After(200 * time.Millisecond):
		}
	}
	t.Fatalf("Java daemon not listening on %s after 60 s\n%s", addr, d.logTail(60))
}

// TestKerberosPi runs `pi 2 10` on a kerberized Bobbin RM and Bobbin NM with the real
// 2.7.3 job client after kinit: the NM logs in with its keytab, the job client talks
// Kerberos to the RM and, with the client-to-AM token from its application report, to
// the MapReduce AM; the AM and tasks use their tokens. The job succeeds with each
// hadoop.rpc.protection: authentication, integrity and privacy (every RPC after SASL in
// GSSAPI or DIGEST-MD5 tokens — AES-sealed, 3DES — between Java and Bobbin both ways).
func TestKerberosPi(t *testing.T) {
	for _, qop := range []string{"authentication", "integrity", "privacy"} {
		t.Run(qop, func(t *testing.T) { kerberosPi(t, qop) })
	}
}

func kerberosPi(t *testing.T, qop string) {
	s := newSecureYarn(t, qop, nil)
	s.start(t)
	out, err := s.pi(t, 4*time.Minute)
	if err != nil || !strings.Contains(out, "Estimated value of Pi is") {
		s.fatalPi(t, err, out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "Job Finished in") {
			t.Log(strings.TrimSpace(l))
		}
	}
}

// secureYarn is a kerberized Bobbin RM and NM (keytabs from a real MIT KDC, alice kinit'ed)
// with the 2.7.3 MapReduce client configured to run jobs on them.
type secureYarn struct {
	home, dir, confDir string
	k                  *kdctest.KDC
	jvm                string   // the JVM options every Java process here needs
	javaEnv            []string // the Java clients' environment: ticket cache, krb5.conf
	site               map[string]string
	rm, nm             *daemon
}

// newSecureYarn makes the KDC and the configuration (yarn-site.xml with extraSite over the
// defaults, core-site.xml with qop, mapred-site.xml); start starts the daemons.
func newSecureYarn(t *testing.T, qop string, extraSite map[string]string) *secureYarn {
	t.Helper()
	home := requireHadoop(t)
	k := kdctest.Start(t, "BOBBIN.TEST")
	k.AddPrincipal(t, "alice", "alice-secret")
	rmKeytab := k.Keytab(t, "rm.keytab", "rm/localhost")
	nmKeytab := k.Keytab(t, "nm.keytab", "nm/localhost")
	t.Setenv("KRB5_CONFIG", k.Krb5Conf())
	for _, v := range []string{"HADOOP_COMMON_HOME", "HADOOP_HDFS_HOME", "HADOOP_YARN_HOME", "HADOOP_MAPRED_HOME"} {
		t.Setenv(v, home) // the NM's containers' classpath
	}
	jvm := javaOpts + " --add-opens java.security.jgss/sun.security.krb5=ALL-UNNAMED -Djava.security.krb5.conf=" + k.Krb5Conf()
	javaEnv := []string{"HADOOP_OPTS=" + jvm, "YARN_OPTS=" + jvm, "KRB5CCNAME=" + filepath.Join(k.Dir, "ccache"), "KRB5_CONFIG=" + k.Krb5Conf()}
	kinit(t, k, "alice", "alice-secret")

	dir := t.TempDir()
	confDir := filepath.Join(dir, "conf")
	os.MkdirAll(confDir, 0o755)
	site := map[string]string{
		"yarn.resourcemanager.hostname":                           "127.0.0.1",
		"yarn.resourcemanager.address":                            fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"yarn.resourcemanager.resource-tracker.address":           fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"yarn.resourcemanager.scheduler.address":                  fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"yarn.resourcemanager.webapp.address":                     fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"yarn.resourcemanager.admin.address":                      fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"yarn.resourcemanager.principal":                          "rm/_HOST@BOBBIN.TEST",
		"yarn.resourcemanager.keytab":                             rmKeytab,
		"yarn.resourcemanager.nodemanagers.heartbeat-interval-ms": "500",
		"yarn.nodemanager.hostname":                               "127.0.0.1",
		"yarn.nodemanager.address":                                fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"yarn.nodemanager.localizer.address":                      fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"yarn.nodemanager.webapp.address":                         fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"yarn.nodemanager.local-dirs":                             filepath.Join(dir, "nm-local"),
		"yarn.nodemanager.log-dirs":                               filepath.Join(dir, "nm-logs"),
		"yarn.nodemanager.resource.memory-mb":                     "4096",
		"yarn.nodemanager.principal":                              "nm/_HOST@BOBBIN.TEST",
		"yarn.nodemanager.keytab":                                 nmKeytab,
		"yarn.nodemanager.aux-services":                           "mapreduce_shuffle",
		"yarn.nodemanager.aux-services.mapreduce_shuffle.class":   "org.apache.hadoop.mapred.ShuffleHandler",
		"yarn.scheduler.minimum-allocation-mb":                    "128",
		"yarn.nodemanager.vmem-check-enabled":                     "false",
	}
	for key, v := range extraSite {
		site[key] = v
	}
	writeConf(t, confDir, site)
	kerberizedCore(t, confDir, qop)
	os.MkdirAll(filepath.Join(dir, "staging"), 0o755)
	mapred := "<?xml version=\"1.0\"?>\n<configuration>\n" +
		prop("mapreduce.framework.name", "yarn") +
		prop("mapreduce.shuffle.port", fmt.Sprint(freePort(t))) +
		prop("yarn.app.mapreduce.am.staging-dir", filepath.Join(dir, "staging")) +
		prop("yarn.app.mapreduce.am.env", "HADOOP_MAPRED_HOME="+home) +
		prop("mapreduce.map.env", "HADOOP_MAPRED_HOME="+home) +
		prop("mapreduce.reduce.env", "HADOOP_MAPRED_HOME="+home) +
		// Java 17 and Hadoop's reflective read of the Kerberos default realm.
		prop("yarn.app.mapreduce.am.command-opts", "-Xmx256m "+jvm) +
		prop("yarn.app.mapreduce.am.resource.mb", "512") +
		prop("mapreduce.map.memory.mb", "256") +
		prop("mapreduce.reduce.memory.mb", "256") +
		prop("mapreduce.map.java.opts", "-Xmx200m "+jvm) +
		prop("mapreduce.reduce.java.opts", "-Xmx200m "+jvm) +
		prop("mapreduce.job.ubertask.enable", "false") +
		"</configuration>\n"
	if err := os.WriteFile(filepath.Join(confDir, "mapred-site.xml"), []byte(mapred), 0o644); err != nil {
		t.Fatal(err)
	}
	return &secureYarn{home: home, dir: dir, confDir: confDir, k: k, jvm: jvm, javaEnv: javaEnv, site: site}
}

// start starts the RM and the NM and waits for the NM's registration.
func (s *secureYarn) start(t *testing.T) {
	t.Helper()
	s.rm = startDaemon(t, "resourcemanager", "--conf", s.confDir)
	s.rm.waitListening(t, s.site["yarn.resourcemanager.address"])
	s.nm = startDaemon(t, "nodemanager", "--conf", s.confDir)
	if !testutil.Poll(30*time.Second, func() bool { return strings.Contains(s.rm.Log(), "NodeManager registered") }) {
		t.Fatalf("the NM did not register:\n%s\n%s", s.rm.Log(), s.nm.Log())
	}
}

// pi runs the 2.7.3 `hadoop jar ... pi` as alice, with generic options before "2 10".
func (s *secureYarn) pi(t *testing.T, timeout time.Duration, options ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	work := filepath.Join(s.dir, "work")
	os.MkdirAll(work, 0o755)
	args := append([]string{"jar", hadoopJar(s.home, hadoop2, "mapreduce", "hadoop-mapreduce-examples"), "pi"}, options...)
	cmd := exec.CommandContext(ctx, filepath.Join(s.home, "bin", "hadoop"), append(args, "2", "10")...)
	cmd.Dir = work
	cmd.Env = append(hadoopEnv(s.home, s.confDir), s.javaEnv...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (s *secureYarn) fatalPi(t *testing.T, err error, out string) {
	t.Helper()
	logs, _ := exec.Command("bash", "-c", "tail -n 30 "+filepath.Join(s.dir, "nm-logs")+"/application_*/container_*/{syslog,stderr} 2>/dev/null").CombinedOutput()
	t.Fatalf("pi in secure mode: %v\n%s\ncontainer logs:\n%s\nRM:\n%s\nNM:\n%s", err, tail(out, 40), logs, tail(s.rm.Log(), 30), tail(s.nm.Log(), 30))
}
