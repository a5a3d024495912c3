// Package integration runs Bobbin's daemons as real processes against real Hadoop clients.
// Tests that need a real Hadoop distribution (2.7.3 or 3.1.1) skip with a message when it is
// absent (README.md, "On a fresh machine", says how to get them; .ci/run unpacks both).
package integration

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/internal/testutil"
)

// The real Hadoop versions the integration tests run against.
const (
	hadoop2 = "2.7.3"
	hadoop3 = "3.1.1"
)

// hadoopVersions lists both versions; tests that run for each take their home from
// requireHadoopVersion, which skips the version that is not installed.
var hadoopVersions = []string{hadoop2, hadoop3}

// requireHadoop returns the Hadoop 2.7.3 distribution or skips the test.
func requireHadoop(t *testing.T) string {
	t.Helper()
	return requireHadoopVersion(t, hadoop2)
}

// requireHadoopVersion returns the home of the Hadoop distribution of version v or skips
// the test. HADOOP_HOME is used when it holds v; otherwise HADOOP2_HOME (2.7.3) or
// HADOOP3_HOME (3.1.1). .ci/run unpacks both and sets them.
func requireHadoopVersion(t *testing.T, v string) string {
	t.Helper()
	home := hadoopHomeIfPresent(v)
	alt := "HADOOP2_HOME"
	if v == hadoop3 {
		alt = "HADOOP3_HOME"
	}
	if home == "" {
		t.Skipf("no Hadoop %s: neither HADOOP_HOME nor %s holds it; skipping the real-Hadoop test (see README.md; .ci/run unpacks both versions)", v, alt)
	}
	if _, err := os.Stat(filepath.Join(home, "bin", "yarn")); err != nil {
		t.Fatalf("Hadoop %s at %s has no bin/yarn: %v", v, home, err)
	}
	if _, err := exec.LookPath("java"); err != nil && os.Getenv("JAVA_HOME") == "" {
		t.Fatalf("Hadoop %s is at %s but no java is on PATH and JAVA_HOME is unset", v, home)
	}
	return home
}

// hadoopHomeIfPresent is the home of the Hadoop distribution of version v, or "" (for a
// test whose real-Hadoop part is optional).
func hadoopHomeIfPresent(v string) string {
	var cands []string
	if h := os.Getenv("HADOOP_HOME"); h != "" {
		cands = append(cands, h)
	}
	alt := "HADOOP2_HOME"
	if v == hadoop3 {
		alt = "HADOOP3_HOME"
	}
	if h := os.Getenv(alt); h != "" {
		cands = append(cands, h)
	}
	home := ""
	for _, h := range cands {
		if _, err := os.Stat(filepath.Join(h, "share", "hadoop", "common", "hadoop-common-"+v+".jar")); err == nil {
			home = h
			break
		}
	}

	return home
}

// hadoopJar is a jar of the distribution at home (version v): dir under share/hadoop and
// the jar's name before the version, e.g. hadoopJar(home, v, "mapreduce",
// "hadoop-mapreduce-examples").
func hadoopJar(home, v, dir, name string) string {
	return filepath.Join(home, "share", "hadoop", dir, name+"-"+v+".jar")
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// bobbinBinary builds cmd/bobbin once per test run.
func bobbinBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "bobbin-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "bobbin")
		out, err := exec.Command("go", "build", "-o", binPath, "../cmd/bobbin").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	return testutil.FreePort(t)
}

func prop(k, v string) string {
	return fmt.Sprintf("  <property><name>%s</name><value>%s</value></property>\n", k, v)
}

// configXML is a Hadoop configuration file holding props.
func configXML(props map[string]string) string {
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\"?>\n<configuration>\n")
	for k, v := range props {
		b.WriteString(prop(k, v))
	}
	b.WriteString("</configuration>\n")
	return b.String()
}

// loopbackRMSite is yarn-site.xml's keys for an RM on 127.0.0.1 with every server on a
// free port.
func loopbackRMSite(t *testing.T) map[string]string {
	t.Helper()
	site := map[string]string{"yarn.resourcemanager.hostname": "127.0.0.1"}
	for _, key := range []string{"address", "resource-tracker.address", "scheduler.address", "webapp.address", "admin.address"} {
		site["yarn.resourcemanager."+key] = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	}
	return site
}

// writeConf writes a conf dir that the Hadoop clients and Bobbin both read.
func writeConf(t *testing.T, dir string, yarnProps map[string]string) {
	t.Helper()
	files := map[string]string{
		"core-site.xml": "<?xml version=\"1.0\"?>\n<configuration>\n" + prop("fs.defaultFS", "file:///") +
			prop("hadoop.tmp.dir", filepath.Join(dir, "tmp")) + "</configuration>\n",
		"yarn-site.xml": configXML(yarnProps),
		"capacity-scheduler.xml": "<?xml version=\"1.0\"?>\n<configuration>\n" +
			prop("yarn.scheduler.capacity.root.queues", "default,analytics") +
			prop("yarn.scheduler.capacity.root.default.capacity", "70") +
			prop("yarn.scheduler.capacity.root.default.maximum-capacity", "90") +
			// One user's jobs may use default's whole 90 % (the default factor, 1, would
			// hold them to its 70 %, on Apache's RMs as on Bobbin's).
			prop("yarn.scheduler.capacity.root.default.user-limit-factor", "2") +
			prop("yarn.scheduler.capacity.root.analytics.capacity", "30") + "</configuration>\n",
		"log4j.properties": "log4j.rootLogger=WARN,console\nlog4j.appender.console=org.apache.log4j.ConsoleAppender\n" +
			"log4j.appender.console.target=System.err\nlog4j.appender.console.layout=org.apache.log4j.PatternLayout\n" +
			"log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %p %c: %m%n\n" +
			// An Apache NM's registrations and resyncs, for a failed recovery test's kept log.
			"log4j.logger.org.apache.hadoop.yarn.server.nodemanager.NodeStatusUpdaterImpl=INFO\n" +
			// And how it takes containers back after a restart ("Reacquiring … with pid").
			"log4j.logger.org.apache.hadoop.yarn.server.nodemanager.ContainerExecutor=INFO\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// writeCapacityScheduler replaces the conf dir's capacity-scheduler.xml with props.
func writeCapacityScheduler(t *testing.T, dir string, props map[string]string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "capacity-scheduler.xml"), []byte(configXML(props)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// daemon is a Bobbin process started by a test; Stop sends SIGTERM and checks a clean exit.
type daemon struct {
	cmd  *exec.Cmd
	log  *bytes.Buffer
	mu   *sync.Mutex
	done chan error
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func startDaemon(t *testing.T, args ...string) *daemon {
	t.Helper()
	d := &daemon{log: &bytes.Buffer{}, mu: &sync.Mutex{}, done: make(chan error, 1)}
	d.cmd = exec.Command(bobbinBinary(t), args...)
	d.cmd.Stdout = lockedWriter{d.mu, d.log}
	d.cmd.Stderr = lockedWriter{d.mu, d.log}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.done <- d.cmd.Wait() }()
	t.Cleanup(func() {
		if d.cmd.ProcessState == nil {
			if t.Failed() {
				// A Go daemon prints every goroutine's stack on SIGQUIT: a failed test's log
				// then shows where a stuck daemon was.
				d.cmd.Process.Signal(syscall.SIGQUIT)
				select {
				case <-d.done:
				case <-time.After(3 * time.Second):
					d.cmd.Process.Kill()
					<-d.done
				}
			} else {
				d.cmd.Process.Kill()
				<-d.done
			}
		}
		if t.Failed() {
			t.Logf("daemon log:\n%s", d.Log())
		}
	})
	return d
}

func (d *daemon) Log() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.log.String()
}

func (d *daemon) waitListening(t *testing.T, addr string) {
	t.Helper()
	if !testutil.PollEvery(20*time.Second, 50*time.Millisecond, func() bool {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return true
		}
		select {
		case err := <-d.done:
			t.Fatalf("daemon exited before listening on %s: %v\n%s", addr, err, d.Log())
		default:
		}
		return false
	}) {
		t.Fatalf("daemon not listening on %s after 20 s\n%s", addr, d.Log())
	}
}

func (d *daemon) stop(t *testing.T) {
	t.Helper()
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-d.done:
		if err != nil {
			t.Fatalf("daemon exit after SIGTERM: %v\n%s", err, d.Log())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("daemon did not stop within 30 s of SIGTERM")
	}
}

// javaOpts are the options of every JVM the tests start (clients, Apache daemons, AMs and
// tasks): the opening without which Hadoop 2.7 dies on Java 17, and a JVM that is cheap
// to start — C1 only and the serial collector. The tests' JVMs live for seconds, and on
// two cores the C2 compiler threads and parallel GC took a third of a short JVM's CPU
// (a local pi: 2.5 s of CPU with them, 1.6 s without), CPU the parallel tests share.
// Hadoop's own jars are trusted, so their bytecode is not verified as it loads: another
// tenth of a short JVM's CPU (a local pi 1 10: 1.80 s of CPU verified, 1.55 s not).
const javaOpts = "--add-opens java.base/java.lang=ALL-UNNAMED -XX:TieredStopAtLevel=1 -XX:+UseSerialGC " +
	"-XX:+UnlockDiagnosticVMOptions -XX:-BytecodeVerificationRemote"

// hadoopEnv is the environment for Hadoop client commands.
func hadoopEnv(home, confDir string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HADOOP_TOKEN_FILE_LOCATION=") {
			env = append(env, kv)
		}
	}
	// 2.x reads YARN_OPTS, 3.x HADOOP_OPTS.
	for _, k := range []string{"HADOOP_OPTS", "YARN_OPTS"} {
		if v := os.Getenv(k); !strings.Contains(v, javaOpts) {
			env = append(env, k+"="+strings.TrimSpace(v+" "+javaOpts))
		}
	}
	env = append(env, "HADOOP_CONF_DIR="+confDir, "YARN_CONF_DIR="+confDir,
		"HADOOP_HOME="+home, "HADOOP_PREFIX="+home, "HADOOP_COMMON_HOME="+home, "HADOOP_HDFS_HOME="+home,
		"HADOOP_YARN_HOME="+home, "HADOOP_MAPRED_HOME="+home)
	if os.Getenv("JAVA_HOME") == "" {
		if java, err := exec.LookPath("java"); err == nil {
			if real, err := filepath.EvalSymlinks(java); err == nil {
				env = append(env, "JAVA_HOME="+filepath.Dir(filepath.Dir(real)))
			}
		}
	}
	return append(env, extra...)
}

// yarnCLI runs $HADOOP_HOME/bin/yarn and returns its exit code and combined output.
func yarnCLI(t *testing.T, home, confDir string, env []string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(home, "bin", "yarn"), args...)
	cmd.Env = append(hadoopEnv(home, confDir), env...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("yarn %v: %v", args, err)
	}
	return code, string(out)
}
