package nodemanager

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/bobbin-yarn/bobbin/nodemanager/containers"
)

// The launch contract (protocol.md §5): the environment a container gets and the
// launch_container.sh that sets it up and execs the command.

var crossPlatformVar = regexp.MustCompile(`\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}`)

// expand applies the NodeManager's markers: <LOG_DIR>, <CPS> and {{VAR}}.
func expand(s, logDir string) string {
	s = strings.ReplaceAll(s, "<LOG_DIR>", logDir)
	s = strings.ReplaceAll(s, "<CPS>", ":")
	return crossPlatformVar.ReplaceAllString(s, "$$$1")
}

type envVar struct{ key, value string }

// containerEnv is the environment written into the launch script, in an order where a
// value referring to another variable comes after it.
func (nm *NodeManager) containerEnv(c *containers.Container) []envVar {
	s, d := nm.settings, c.Dirs
	logDir := d.LogDirs[0]
	forced := map[string]string{
		"CONTAINER_ID":               c.ID.String(),
		"NM_HOST":                    s.Host,
		"NM_PORT":                    strconv.Itoa(int(nm.port)),
		"NM_HTTP_PORT":               strconv.Itoa(int(nm.httpPort)),
		"LOCAL_DIRS":                 strings.Join(d.AppDirs, ","),
		"LOG_DIRS":                   strings.Join(d.LogDirs, ","),
		"USER":                       c.User,
		"LOGNAME":                    c.User,
		"HOME":                       s.UserHome,
		"PWD":                        d.Work,
		"HADOOP_TOKEN_FILE_LOCATION": filepath.Join(d.Work, "container_tokens"),
		"JVM_PID":                    "$$",
	}
	if v, ok := os.LookupEnv("HADOOP_CONF_DIR"); ok {
		forced["HADOOP_CONF_DIR"] = v
	}
	for k, v := range nm.aux.Env() {
		forced[k] = v
	}
	for _, kv := range s.AdminEnv {
		if k, v, ok := strings.Cut(kv, "="); ok {
			forced[k] = v
		}
	}
	clc := map[string]string{}
	for _, e := range c.CLC.GetEnvironment() {
		clc[e.GetKey()] = expand(e.GetValue(), logDir)
	}
	for _, k := range s.EnvWhitelist {
		if _, set := clc[k]; !set {
			if v, ok := os.LookupEnv(k); ok {
				if _, f := forced[k]; !f {
					clc[k] = v
				}
			}
		}
	}
	for k := range forced {
		delete(clc, k)
	}
	out := make([]envVar, 0, len(forced)+len(clc))
	for _, k := range sortedKeys(forced) {
		out = append(out, envVar{k, forced[k]})
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
func dependencyOrder(env map[string]string) []envVar {
	deps := map[string][]string{}
	for k, v := range env {
		for _, m := range varRef.FindAllStringSubmatch(v, -1) {
			if _, ok := env[m[1]]; ok && m[1] != k {
				deps[k] = append(deps[k], m[1])
			}
		}
	}
	var out []envVar
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
		out = append(out, envVar{k, env[k]})
	}
	for _, k := range sortedKeys(env) {
		visit(k)
	}
	return out
}

// launchScript writes what Java's UnixShellScriptBuilder writes: exports (values
// unescaped in double quotes, so $VAR references expand), the resource links, then
// exec of the command through bash so redirections and && work.
func (nm *NodeManager) launchScript(c *containers.Container, links map[string]string) string {
	d := c.Dirs
	var b strings.Builder
	b.WriteString("#!/bin/bash\n\n")
	for _, e := range nm.containerEnv(c) {
		fmt.Fprintf(&b, "export %s=\"%s\"\n", e.key, e.value)
	}
	for _, link := range sortedKeys(links) {
		if dir := filepath.Dir(link); dir != "." {
			fmt.Fprintf(&b, "mkdir -p \"%s\" || exit $?\n", dir)
		}
		fmt.Fprintf(&b, "ln -sf \"%s\" \"%s\" || exit $?\n", links[link], link)
	}
	cmd := make([]string, 0, len(c.CLC.GetCommand()))
	for _, part := range c.CLC.GetCommand() {
		cmd = append(cmd, expand(part, d.LogDirs[0]))
	}
	fmt.Fprintf(&b, "exec /bin/bash -c \"%s\"\n", strings.Join(cmd, " "))
	return b.String()
}
