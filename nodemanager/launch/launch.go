// Package launch is the NodeManager's launch contract (docs/protocol.md §5): the
// environment a container gets and the launch_container.sh that sets it up and execs its
// command, as the Java NM's ContainerLaunch and UnixShellScriptBuilder write them. It
// computes text from what it is given and touches nothing.
package launch

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Node is what the node puts into every container's environment.
type Node struct {
	Host           string
	Port, HTTPPort int32
	UserHome       string            // yarn.nodemanager.user-home-dir
	AdminEnv       []string          // yarn.nodemanager.admin-env, "KEY=value"
	Whitelist      []string          // yarn.nodemanager.env-whitelist
	ServiceEnv     map[string]string // the auxiliary services' (NM_AUX_SERVICE_<name>)
	// DebugInfo is yarn.nodemanager.log-container-debug-info.enabled: the script copies
	// itself and lists the work dir into the log dir.
	DebugInfo bool
	// AddOpens replaces <ADD_OPENS> (Hadoop 3.4+ clients put it in JVM command lines):
	// JDK17AddOpens when containers' Java is 17 or newer, else "".
	AddOpens string
	// Getenv reads the NodeManager's own environment (os.LookupEnv): HADOOP_CONF_DIR and
	// the whitelisted variables a container did not set.
	Getenv func(string) (string, bool)
}

// Container is what a container brings: its ids, its directories and its launch
// context's environment and command.
type Container struct {
	ID, User string
	AppDirs  []string // <local>/usercache/<user>/appcache/<app>
	LogDirs  []string // <log>/<app>/<container>
	Work     string   // its work dir ($PWD)
	Env      map[string]string
	Command  []string
}

var crossPlatformVar = regexp.MustCompile(`\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}`)

// JDK17AddOpens is what the 3.4 Java NodeManager running on Java 17 or newer puts for
// <ADD_OPENS> (ContainerLaunch.expandEnvironment).
const JDK17AddOpens = "--add-opens=java.base/java.lang=ALL-UNNAMED --add-exports=java.base/sun.net.dns=ALL-UNNAMED --add-exports=java.base/sun.net.util=ALL-UNNAMED"

// expand applies the NodeManager's markers: <LOG_DIR>, <CPS>, <ADD_OPENS> and {{VAR}}.
func expand(s, logDir, addOpens string) string {
	s = strings.ReplaceAll(s, "<LOG_DIR>", logDir)
	s = strings.ReplaceAll(s, "<CPS>", ":")
	s = strings.ReplaceAll(s, "<ADD_OPENS>", addOpens)
	return crossPlatformVar.ReplaceAllString(s, "$$$1")
}

// Var is one exported variable.
type Var struct{ Key, Value string }

// Env is the environment written into the launch script: the node's variables (which a
// container cannot override), then the container's, in an order where a value referring
// to another variable comes after it.
func Env(n Node, c Container) []Var {
	getenv := n.Getenv
	if getenv == nil {
		getenv = func(string) (string, bool) { return "", false }
	}
	logDir := c.LogDirs[0]
	forced := map[string]string{
		"CONTAINER_ID":               c.ID,
		"NM_HOST":                    n.Host,
		"NM_PORT":                    strconv.Itoa(int(n.Port)),
		"NM_HTTP_PORT":               strconv.Itoa(int(n.HTTPPort)),
		"LOCAL_DIRS":                 strings.Join(c.AppDirs, ","),
		"LOG_DIRS":                   strings.Join(c.LogDirs, ","),
		"USER":                       c.User,
		"LOGNAME":                    c.User,
		"HOME":                       n.UserHome,
		"PWD":                        c.Work,
		"HADOOP_TOKEN_FILE_LOCATION": filepath.Join(c.Work, "container_tokens"),
		"JVM_PID":                    "$$",
	}
	if v, ok := getenv("HADOOP_CONF_DIR"); ok {
		forced["HADOOP_CONF_DIR"] = v
	}
	for k, v := range n.ServiceEnv {
		forced[k] = v
	}
	for _, kv := range n.AdminEnv {
		if k, v, ok := strings.Cut(kv, "="); ok {
			forced[k] = v
		}
	}
	clc := map[string]string{}
	for k, v := range c.Env {
		clc[k] = expand(v, logDir, n.AddOpens)
	}
	for _, k := range n.Whitelist {
		if _, set := clc[k]; !set {
			if v, ok := getenv(k); ok {
				if _, f := forced[k]; !f {
					clc[k] = v
				}
			}
		}
	}
	for k := range forced {
		delete(clc, k)
	}
	out := make([]Var, 0, len(forced)+len(clc))
	for _, k := range sortedKeys(forced) {
		out = append(out, Var{k, forced[k]})
	}
	return append(out, dependencyOrder(clc)...)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

var varRef = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`)

// dependencyOrder sorts variables so that each comes after the variables of the same set
// its value refers to ($X or ${X}); cycles fall back to name order.
func dependencyOrder(env map[string]string) []Var {
	deps := map[string][]string{}
	for k, v := range env {
		for _, m := range varRef.FindAllStringSubmatch(v, -1) {
			if _, ok := env[m[1]]; ok && m[1] != k {
				deps[k] = append(deps[k], m[1])
			}
		}
	}
	var out []Var
	done, visiting := map[string]bool{}, map[string]bool{}
	var visit func(k string)
	visit = func(k string) {
		if done[k] || visiting[k] {
			return
		}
		visiting[k] = true
		for _, d := range deps[k] {
			visit(d)
		}
		visiting[k] = false
		done[k] = true
		out = append(out, Var{k, env[k]})
	}
	for _, k := range sortedKeys(env) {
		visit(k)
	}
	return out
}

// The files the launch script writes into the container's first log dir, as the 3.x Java
// NodeManager's do: what the script itself prints before its command runs (and what the
// command prints without redirecting), and, with DebugInfo, a copy of the script and a
// listing of the work dir.
const (
	PrelaunchOut  = "prelaunch.out"
	PrelaunchErr  = "prelaunch.err"
	ScriptName    = "launch_container.sh"
	DirectoryInfo = "directory.info"
)

// Script is launch_container.sh, as the 3.x Java NodeManager's UnixShellScriptBuilder
// writes it: stop at the first failing step (set -e), the script's own output into
// prelaunch.out and prelaunch.err, the exports of Env (values unescaped in double quotes,
// so $VAR references expand), the links to the localized resources (link name ->
// target), with DebugInfo the copy of the script and the work dir's listing, then exec of
// the command through bash so redirections and && work.
func Script(n Node, c Container, links map[string]string) string {
	logDir := c.LogDirs[0]
	var b strings.Builder
	b.WriteString("#!/bin/bash\n\nset -o pipefail -e\n")
	fmt.Fprintf(&b, "export PRELAUNCH_OUT=\"%s\"\nexec >\"${PRELAUNCH_OUT}\"\n", filepath.Join(logDir, PrelaunchOut))
	fmt.Fprintf(&b, "export PRELAUNCH_ERR=\"%s\"\nexec 2>\"${PRELAUNCH_ERR}\"\n", filepath.Join(logDir, PrelaunchErr))
	b.WriteString("echo \"Setting up env variables\"\n")
	for _, e := range Env(n, c) {
		fmt.Fprintf(&b, "export %s=\"%s\"\n", e.Key, e.Value)
	}
	b.WriteString("echo \"Setting up job resources\"\n")
	for _, link := range sortedKeys(links) {
		if dir := filepath.Dir(link); dir != "." {
			fmt.Fprintf(&b, "mkdir -p \"%s\"\n", dir)
		}
		fmt.Fprintf(&b, "ln -sf -- \"%s\" \"%s\"\n", links[link], link)
	}
	if n.DebugInfo {
		copyPath, info := filepath.Join(logDir, ScriptName), filepath.Join(logDir, DirectoryInfo)
		b.WriteString("echo \"Copying debugging information\"\n# Creating copy of launch script\n")
		fmt.Fprintf(&b, "cp \"%s\" \"%s\"\nchmod 640 \"%s\"\n", ScriptName, copyPath, copyPath)
		b.WriteString("# Determining directory contents\n")
		fmt.Fprintf(&b, "echo \"ls -l:\" 1>\"%s\"\n", info)
		// A listing that stumbles (a link loop in an unpacked archive, an unreadable dir)
		// must not end the container under set -e, as it would the Java NM's.
		for _, step := range []string{"ls -l", `echo "find -L . -maxdepth 5 -ls:"`, "find -L . -maxdepth 5 -ls",
			`echo "broken symlinks(find -L . -maxdepth 5 -type l -ls):"`, "find -L . -maxdepth 5 -type l -ls"} {
			fmt.Fprintf(&b, "%s 1>>\"%s\" || true\n", step, info)
		}
	}
	b.WriteString("echo \"Launching container\"\n")
	cmd := make([]string, 0, len(c.Command))
	for _, part := range c.Command {
		cmd = append(cmd, expand(part, logDir, n.AddOpens))
	}
	fmt.Fprintf(&b, "exec /bin/bash -c \"%s\"\n", strings.Join(cmd, " "))
	return b.String()
}
