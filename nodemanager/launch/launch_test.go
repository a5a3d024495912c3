package launch

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func testNode() Node {
	env := map[string]string{"HADOOP_CONF_DIR": "/etc/hadoop", "JAVA_HOME": "/usr/lib/jvm/x", "PATH": "/usr/bin"}
	return Node{Host: "node1", Port: 8041, HTTPPort: 8042, UserHome: "/home/", AdminEnv: []string{"MALLOC_ARENA_MAX=4"},
		Whitelist: []string{"JAVA_HOME", "PATH"}, ServiceEnv: map[string]string{"NM_AUX_SERVICE_mapreduce_shuffle": "AAA="},
		Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
}

func testContainer() Container {
	return Container{ID: "container_1_0001_01_000002", User: "alice", AppDirs: []string{"/l1/app", "/l2/app"}, LogDirs: []string{"/logs/app/c2", "/logs2/app/c2"},
		Work: "/l1/app/c2", Env: map[string]string{"CLASSPATH": "$PWD<CPS>{{JAVA_HOME}}/lib", "B": "${A}/b", "A": "a", "USER": "mallory", "PATH": "/opt/bin"},
		Command: []string{"java", "Main", "1><LOG_DIR>/stdout", "2><LOG_DIR>/stderr"}}
}

// The node's variables win over a container's (it cannot pose as another user); a
// whitelisted variable comes from the node only when the container did not set it; the
// markers expand; a variable comes after those its value refers to.
func TestEnv(t *testing.T) {
	got := map[string]string{}
	pos := map[string]int{}
	for i, v := range Env(testNode(), testContainer()) {
		if _, dup := got[v.Key]; dup {
			t.Errorf("%s exported twice", v.Key)
		}
		got[v.Key], pos[v.Key] = v.Value, i
	}
	for k, want := range map[string]string{
		"CONTAINER_ID": "container_1_0001_01_000002", "NM_HOST": "node1", "NM_PORT": "8041", "NM_HTTP_PORT": "8042",
		"LOCAL_DIRS": "/l1/app,/l2/app", "LOG_DIRS": "/logs/app/c2,/logs2/app/c2", "USER": "alice", "LOGNAME": "alice",
		"HOME": "/home/", "PWD": "/l1/app/c2", "HADOOP_TOKEN_FILE_LOCATION": "/l1/app/c2/container_tokens", "JVM_PID": "$$",
		"HADOOP_CONF_DIR": "/etc/hadoop", "NM_AUX_SERVICE_mapreduce_shuffle": "AAA=", "MALLOC_ARENA_MAX": "4",
		"CLASSPATH": "$PWD:$JAVA_HOME/lib", "JAVA_HOME": "/usr/lib/jvm/x", "PATH": "/opt/bin", "A": "a", "B": "${A}/b",
	} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q", k, got[k], want)
		}
	}
	if pos["A"] > pos["B"] {
		t.Errorf("B refers to A but is exported first: %v", pos)
	}
}

// The script stops at its first failing step, sends its own output to prelaunch.out and
// prelaunch.err, exports, links the localized resources (making their dirs) and execs the
// expanded command through bash; with DebugInfo it first copies itself and lists the work
// dir into the log dir, as the 3.x Java NodeManager's does.
func TestScript(t *testing.T) {
	links := map[string]string{"job.jar": "/cache/1/job.jar", "lib/x.jar": "/cache/2/x.jar"}
	s := Script(testNode(), testContainer(), links)
	order := []string{
		"#!/bin/bash\n\nset -o pipefail -e\n",
		"export PRELAUNCH_OUT=\"/logs/app/c2/prelaunch.out\"\nexec >\"${PRELAUNCH_OUT}\"\n",
		"export PRELAUNCH_ERR=\"/logs/app/c2/prelaunch.err\"\nexec 2>\"${PRELAUNCH_ERR}\"\n",
		"echo \"Setting up env variables\"\n",
		"export USER=\"alice\"\n",
		"echo \"Setting up job resources\"\n",
		"ln -sf -- \"/cache/1/job.jar\" \"job.jar\"\n",
		"mkdir -p \"lib\"\nln -sf -- \"/cache/2/x.jar\" \"lib/x.jar\"\n",
		"echo \"Launching container\"\n",
		"exec /bin/bash -c \"java Main 1>/logs/app/c2/stdout 2>/logs/app/c2/stderr\"\n",
	}
	at := 0
	for _, want := range order {
		i := strings.Index(s[at:], want)
		if i < 0 {
			t.Fatalf("script lacks %q after byte %d:\n%s", want, at, s)
		}
		at += i + len(want)
	}
	if at != len(s) || strings.Contains(s, "directory.info") {
		t.Errorf("the exec ends the script, and without DebugInfo nothing is copied:\n%s", s)
	}

	n := testNode()
	n.DebugInfo = true
	s = Script(n, testContainer(), links)
	debug := "echo \"Copying debugging information\"\n# Creating copy of launch script\n" +
		"cp \"launch_container.sh\" \"/logs/app/c2/launch_container.sh\"\nchmod 640 \"/logs/app/c2/launch_container.sh\"\n" +
		"# Determining directory contents\necho \"ls -l:\" 1>\"/logs/app/c2/directory.info\"\nls -l 1>>\"/logs/app/c2/directory.info\" || true\n"
	if i := strings.Index(s, debug); i < 0 || i < strings.Index(s, "ln -sf") || i > strings.Index(s, "echo \"Launching container\"") ||
		!strings.Contains(s, "find -L . -maxdepth 5 -type l -ls 1>>\"/logs/app/c2/directory.info\" || true\n") {
		t.Errorf("the debugging copy comes after the links, before the launch:\n%s", s)
	}
}

// Run by bash, the script with DebugInfo launches its command even when the listing
// stumbles on a link loop (an unpacked archive may hold one), and leaves its files.
func TestScriptRunsPastALinkLoop(t *testing.T) {
	root := t.TempDir()
	work, logs := filepath.Join(root, "work"), filepath.Join(root, "logs")
	for _, d := range []string{filepath.Join(work, "d"), logs} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("..", filepath.Join(work, "d", "up")); err != nil {
		t.Fatal(err)
	}
	n := testNode()
	n.DebugInfo = true
	c := Container{ID: "container_1_0001_01_000002", User: "alice", AppDirs: []string{root}, LogDirs: []string{logs}, Work: work,
		Command: []string{"echo ran 1><LOG_DIR>/stdout"}}
	script := filepath.Join(work, ScriptName)
	if err := os.WriteFile(script, []byte(Script(n, c, nil)), 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/bash", script)
	cmd.Dir = work
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("script: %v %s", err, out)
	}
	for name, want := range map[string]string{"stdout": "ran\n", PrelaunchOut: "Launching container\n", DirectoryInfo: "broken symlinks", ScriptName: "set -o pipefail -e"} {
		if b, _ := os.ReadFile(filepath.Join(logs, name)); !strings.Contains(string(b), want) {
			t.Errorf("%s holds %q, want %q in it", name, b, want)
		}
	}
}

// <ADD_OPENS>, which Hadoop 3.4+ clients put into JVM command lines and environments,
// becomes the node's JDK 17 options, or nothing on an older Java.
func TestAddOpensMarker(t *testing.T) {
	c := testContainer()
	c.Command = []string{"java <ADD_OPENS> -Xmx200m Main"}
	c.Env = map[string]string{"JAVA_OPTS": "<ADD_OPENS>"}
	n := testNode()
	n.AddOpens = JDK17AddOpens
	if s := Script(n, c, nil); !strings.Contains(s, "java "+JDK17AddOpens+" -Xmx200m Main") || !strings.Contains(s, "export JAVA_OPTS=\""+JDK17AddOpens+"\"") {
		t.Errorf("on Java 17:\n%s", s)
	}
	if s := Script(testNode(), c, nil); !strings.Contains(s, "java  -Xmx200m Main") || strings.Contains(s, "ADD_OPENS") {
		t.Errorf("on an older Java:\n%s", s)
	}
}
