package javahost

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/nodemanager/auxservices"
	"github.com/bobbin-yarn/bobbin/records"
)

// hadoopJars is a Hadoop distribution's common and YARN jars (HADOOP3_HOME, else
// HADOOP_HOME), or skips the test.
func hadoopJars(t *testing.T) []string {
	t.Helper()
	home := os.Getenv("HADOOP3_HOME")
	if home == "" {
		home = os.Getenv("HADOOP_HOME")
	}
	if home == "" {
		t.Skip("needs a Hadoop distribution (HADOOP3_HOME or HADOOP_HOME) for AuxiliaryService's classes; .ci/run unpacks one")
	}
	if _, err := exec.LookPath("javac"); err != nil {
		t.Skip("needs a JDK (javac) to compile the test service")
	}
	var cp []string
	for _, d := range []string{"common", "yarn"} {
		base := filepath.Join(home, "share", "hadoop", d)
		cp = append(cp, filepath.Join(base, "*"), filepath.Join(base, "lib", "*"))
	}
	return cp
}

// compileRecordingService compiles testdata/RecordingService.java into dir/classes.
func compileRecordingService(t *testing.T, jars []string, dir string) string {
	t.Helper()
	classes := filepath.Join(dir, "classes")
	src, _ := filepath.Abs("testdata/RecordingService.java")
	if out, err := exec.Command("javac", "-nowarn", "-d", classes, "-cp", strings.Join(jars, ":"), src).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	return classes
}

// The helper runs a real AuxiliaryService through its lifecycle: loaded from its own
// classpath in a class loader of its own, init with the node's configuration and a
// recovery path, start, the metadata AMs get, an application's
// service data (and the service's refusal of bad data as an error), containers, the
// application's end, stop; what the service prints stays out of the protocol.
func TestJavaServiceLifecycle(t *testing.T) {
	jars := hadoopJars(t)
	dir := t.TempDir()
	classes := compileRecordingService(t, jars, dir)
	record := filepath.Join(dir, "calls")
	confDir := filepath.Join(dir, "conf")
	os.MkdirAll(confDir, 0o755)
	os.WriteFile(filepath.Join(confDir, "yarn-site.xml"), []byte("<configuration><property><name>recording.file</name><value>"+record+"</value></property></configuration>"), 0o644)
	s := New(Config{Name: "recording", Class: "RecordingService", Java: "java", Classpath: append([]string{confDir}, jars...), ServiceClasspath: classes,
		RecoveryDir: filepath.Join(dir, "recovery"), WorkDir: filepath.Join(dir, "work"), StartTimeout: time.Minute, CallTimeout: 30 * time.Second,
		Logger: testutil.QuietLogger().WithField("test", t.Name())})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if string(s.Meta()) != "meta:recording" {
		t.Errorf("meta %q", s.Meta())
	}
	app := records.ApplicationID{ClusterTimestamp: 1795900000000, ID: 7}
	ctr := records.ContainerID{Attempt: app.Attempt(1), ID: 1<<40 | 2} // epoch 1: container_e01_...
	if err := s.InitializeApplication(auxservices.AppInit{App: app, User: "alice", Data: []byte("secret")}); err != nil {
		t.Fatal(err)
	}
	if err := s.InitializeApplication(auxservices.AppInit{App: app, User: "alice", Data: []byte("bad")}); err == nil ||
		!strings.Contains(err.Error(), "IllegalArgumentException: bad service data for "+app.String()) {
		t.Errorf("bad service data: %v", err)
	}
	s.InitializeContainer(ctr, "alice")
	s.StopContainer(ctr, "alice")
	s.StopApplication(app)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(record)
	want := "init recovery=true isolated=true\ninitApp " + app.String() + " alice secret\ninitContainer " + ctr.String() + " alice\nstopContainer " + ctr.String() +
		" alice\nstopApp " + app.String() + "\nstop\n"
	if string(got) != want {
		t.Errorf("the service saw:\n%s\nwant:\n%s", got, want)
	}
	if _, err := s.call("meta"); err == nil {
		t.Error("a call after stop answered")
	}
}

// A class that is not there fails the start with Java's reason.
func TestJavaServiceThatCannotLoad(t *testing.T) {
	jars := hadoopJars(t)
	dir := t.TempDir()
	s := New(Config{Name: "nosuch", Class: "org.example.NoSuchService", Java: "java", Classpath: jars, WorkDir: dir,
		StartTimeout: time.Minute, CallTimeout: time.Second, Logger: testutil.QuietLogger().WithField("test", t.Name())})
	err := s.Start()
	if err == nil || !strings.Contains(err.Error(), "ClassNotFoundException: org.example.NoSuchService") {
		t.Fatalf("start: %v", err)
	}
}

// A service's classpath means what it means to the Java NodeManager: DIR is a directory
// of classes, not of jars; DIR/* is its jars; entries are split on ':'.
func TestJavaServiceClasspathAsJavaReadsIt(t *testing.T) {
	jars := hadoopJars(t)
	if _, err := exec.LookPath("jar"); err != nil {
		t.Skip("needs a JDK (jar) to package the test service")
	}
	dir := t.TempDir()
	classes := compileRecordingService(t, jars, dir)
	lib := filepath.Join(dir, "lib")
	os.MkdirAll(lib, 0o755)
	if out, err := exec.Command("jar", "cf", filepath.Join(lib, "recording.jar"), "-C", classes, ".").CombinedOutput(); err != nil {
		t.Fatalf("jar: %v\n%s", err, out)
	}
	confDir := filepath.Join(dir, "conf")
	os.MkdirAll(confDir, 0o755)
	os.WriteFile(filepath.Join(confDir, "yarn-site.xml"), []byte("<configuration><property><name>recording.file</name><value>"+filepath.Join(dir, "calls")+"</value></property></configuration>"), 0o644)
	start := func(cp string) (*Service, error) {
		s := New(Config{Name: "recording", Class: "RecordingService", Java: "java", Classpath: append([]string{confDir}, jars...), ServiceClasspath: cp,
			WorkDir: filepath.Join(dir, "work"), StartTimeout: time.Minute, CallTimeout: 30 * time.Second,
			Logger: testutil.QuietLogger().WithField("test", t.Name())})
		return s, s.Start()
	}
	if s, err := start(lib); err == nil || !strings.Contains(err.Error(), "ClassNotFoundException: RecordingService") {
		t.Errorf("a directory of jars without /*: %v, want ClassNotFoundException", err)
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			s.Stop(ctx)
			cancel()
		}
	}
	s, err := start(filepath.Join(dir, "nothing-here") + ":" + lib + "/*")
	if err != nil {
		t.Fatalf("DIR/* after an entry that is not there: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "calls")); !strings.HasPrefix(string(got), "init recovery=false isolated=true\n") {
		t.Errorf("the service saw:\n%s", got)
	}
}
