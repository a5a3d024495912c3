package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestCommandLine(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"version"}, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "Bobbin ") {
		t.Fatalf("version: %d %q", code, out.String())
	}
	// What it was built from and when, as far as the build recorded it.
	if !strings.Contains(out.String(), "\ncommit: ") || !strings.Contains(out.String(), "\nbuilt: ") || !strings.Contains(out.String(), runtime.Version()) {
		t.Errorf("version lacks the commit or the build: %q", out.String())
	}
	out.Reset()
	Commit, BuildDate = "0123abcd", "2026-11-29T12:00:00Z"
	defer func() { Commit, BuildDate = "", "" }()
	run([]string{"version"}, &out, &errb)
	if !strings.Contains(out.String(), "commit: 0123abcd\n") || !strings.Contains(out.String(), "built: 2026-11-29T12:00:00Z with ") {
		t.Errorf("version with the build's flags: %q", out.String())
	}
	if code := run([]string{"frobnicate"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), `unknown command "frobnicate"`) {
		t.Fatalf("unknown command: %d %q", code, errb.String())
	}
	if code := run(nil, &out, &errb); code != 2 {
		t.Fatal("no command accepted")
	}
}

// A broken site file stops the daemon before it binds anything, naming the file.
func TestResourceManagerRefusesBrokenConf(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "yarn-site.xml"), []byte("<configuration><property><name>x</name>"), 0o644)
	var out, errb bytes.Buffer
	code := run([]string{"resourcemanager", "--conf", dir}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), filepath.Join(dir, "yarn-site.xml")) {
		t.Fatalf("exit %d, log:\n%s", code, errb.String())
	}
	os.WriteFile(filepath.Join(dir, "yarn-site.xml"), []byte("<configuration/>"), 0o644)
	os.WriteFile(filepath.Join(dir, "capacity-scheduler.xml"), []byte(`<configuration><property><name>yarn.scheduler.capacity.root.queues</name><value>a</value></property></configuration>`), 0o644)
	errb.Reset()
	code = run([]string{"resourcemanager", "--conf", dir}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "yarn.scheduler.capacity.root.a.capacity") {
		t.Fatalf("exit %d, log:\n%s", code, errb.String())
	}
	// A Bobbin scheduler key with a bad value: file, key and value are named.
	cs := filepath.Join(dir, "capacity-scheduler.xml")
	os.WriteFile(cs, []byte(`<configuration>
<property><name>yarn.scheduler.capacity.root.queues</name><value>a</value></property>
<property><name>yarn.scheduler.capacity.root.a.capacity</name><value>100</value></property>
<property><name>yarn.scheduler.capacity.root.a.bobbin.policy</name><value>lottery</value></property>
<property><name>bobbin.scheduler.preemption.over-threshold</name><value>-1</value></property>
<property><name>yarn.scheduler.capacity.root.a.bobbin.capacity-schedule</name><value>09:00-08:00=x</value></property>
</configuration>`), 0o644)
	errb.Reset()
	code = run([]string{"resourcemanager", "--conf", dir}, &out, &errb)
	for _, want := range []string{
		cs + `: yarn.scheduler.capacity.root.a.bobbin.policy = \"lottery\": unknown policy`,
		cs + `: bobbin.scheduler.preemption.over-threshold = \"-1\"`,
		cs + `: yarn.scheduler.capacity.root.a.bobbin.capacity-schedule = \"09:00-08:00=x\"`,
	} {
		if code != 1 || !strings.Contains(errb.String(), want) {
			t.Errorf("exit %d; log lacks %s:\n%s", code, want, errb.String())
		}
	}
}

// Security modes a daemon does not serve stop it at start, naming the file, key and value:
// a kerberized cluster never gets a web proxy that accepts SIMPLE callers, nor any daemon
// that skips the protection or web authentication it asked for.
func TestDaemonsRefuseUnservedSecurityModes(t *testing.T) {
	dir := t.TempDir()
	core := filepath.Join(dir, "core-site.xml")
	os.WriteFile(core, []byte(`<configuration>
<property><name>hadoop.security.authentication</name><value>kerberos</value></property>
<property><name>hadoop.rpc.protection</name><value>privacy</value></property>
<property><name>hadoop.http.authentication.type</name><value>kerberos</value></property>
</configuration>`), 0o644)
	yarn := filepath.Join(dir, "yarn-site.xml")
	os.WriteFile(yarn, []byte(`<configuration>
<property><name>yarn.nodemanager.container-executor.class</name><value>org.apache.hadoop.yarn.server.nodemanager.DockerContainerExecutor</value></property>
</configuration>`), 0o644)
	var out, errb bytes.Buffer
	if code := run([]string{"nodemanager", "--conf", dir}, &out, &errb); code != 1 ||
		!strings.Contains(errb.String(), yarn+`: yarn.nodemanager.container-executor.class = \"org.apache.hadoop.yarn.server.nodemanager.DockerContainerExecutor\"`) {
		t.Errorf("nodemanager with DockerContainerExecutor: exit %d:\n%s", code, errb.String())
	}
	for _, daemon := range []string{"resourcemanager", "nodemanager", "webproxy"} {
		var out, errb bytes.Buffer
		code := run([]string{daemon, "--conf", dir}, &out, &errb)
		// The RM and NM serve Kerberos and SPNEGO: they stop for the principal they lack.
		wants := []string{"yarn.resourcemanager.principal must be set with hadoop.security.authentication=kerberos"}
		switch daemon {
		case "nodemanager":
			wants = []string{"DockerContainerExecutor"}
		case "webproxy":
			wants = []string{core + `: hadoop.http.authentication.type = \"kerberos\"`, core + `: hadoop.security.authentication = \"kerberos\"`}
		}
		for _, want := range wants {
			if code != 1 || !strings.Contains(errb.String(), want) {
				t.Errorf("%s: exit %d; log lacks %s:\n%s", daemon, code, want, errb.String())
			}
		}
	}
}
