package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/conf/capacity"
	"github.com/bobbin-yarn/bobbin/nodemanager"
	"github.com/bobbin-yarn/bobbin/resourcemanager"
)

// runCheckConfig is `bobbin check-config`: it reads a configuration directory as the
// ResourceManager and the NodeManager would, then lists every key the site files set —
// read by Bobbin (with what it does, where documented), or not read (no effect) — and
// every problem that would stop a daemon, so a migration can be planned before the switch.
// It exits 1 when a daemon would refuse the configuration.
func runCheckConfig(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check-config", flag.ContinueOnError)
	fs.SetOutput(stderr)
	confDir := fs.String("conf", "", "configuration directory (default: $YARN_CONF_DIR, then $HADOOP_CONF_DIR)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	files := append(conf.ResourceManagerFiles(), conf.NodeManagerFiles()...)
	c, dir, err := conf.LoadDir(*confDir, dedupe(files)...)
	if err != nil {
		fmt.Fprintf(stderr, "bobbin check-config: %v\n", err)
		return 1
	}
	if dir == "" {
		fmt.Fprintln(stderr, "bobbin check-config: no configuration directory (--conf, YARN_CONF_DIR, HADOOP_CONF_DIR)")
		return 2
	}
	c.Track()
	rmErr := resourcemanager.CheckConf(c, dir)
	nmErr := nodemanager.CheckConf(c, dir)

	docs := map[string]string{}
	for _, d := range conf.Defaults {
		docs[d.Key] = d.Doc
	}
	// The site files' keys, and capacity-scheduler.xml's (read into the queues' own
	// configuration, whose lookups the tracking also sees).
	type entry struct {
		key, value, source string
		read               bool
	}
	var entries []entry
	for _, k := range c.Keys() {
		if src := c.Source(k); src != conf.SourceDefault && src != "set" {
			wasRead := c.Read(k) // before Raw, which is a read itself
			v, _ := c.Raw(k)
			entries = append(entries, entry{k, v, src, wasRead})
		}
	}
	csPath := filepath.Join(dir, "capacity-scheduler.xml")
	if cs := conf.Empty(); capacity.UsesFairScheduler(c) {
		if p, err := capacity.FairFile(c, dir); err == nil {
			fmt.Fprintf(stdout, "Fair Scheduler allocation file %s: read (its elements are checked above and below)\n", p)
		}
	} else if err := cs.AddFileIfExists(csPath); err == nil {
		for _, k := range cs.Keys() {
			v, _ := cs.Raw(k)
			entries = append(entries, entry{k, v, csPath, c.Read(k)})
		}
	}
	sort.SliceStable(entries, func(i, j int) bool {
		if entries[i].source != entries[j].source {
			return entries[i].source < entries[j].source
		}
		return entries[i].key < entries[j].key
	})
	read, unread := 0, 0
	last := ""
	for _, e := range entries {
		if e.source != last {
			fmt.Fprintf(stdout, "\n%s\n", e.source)
			last = e.source
		}
		doc, documented := docs[e.key]
		na, notApplicable := capacity.NotApplicable[strings.TrimPrefix(e.key, capacity.Prefix)]
		switch {
		case notApplicable && strings.HasPrefix(e.key, capacity.Prefix):
			read++
			fmt.Fprintf(stdout, "  n/a     %s = %s\n          %s\n", e.key, shorten(e.value), na)
		case conf.Deprecated[e.key] != "":
			read++
			fmt.Fprintf(stdout, "  read    %s = %s\n          the deprecated name of %s, which it sets\n", e.key, shorten(e.value), conf.Deprecated[e.key])
		case e.read || documented:
			read++
			fmt.Fprintf(stdout, "  read    %s = %s\n", e.key, shorten(e.value))
			if doc != "" {
				fmt.Fprintf(stdout, "          %s\n", doc)
			}
		default:
			unread++
			fmt.Fprintf(stdout, "  unused  %s = %s\n          not read by Bobbin: it has no effect here\n", e.key, shorten(e.value))
		}
	}
	fmt.Fprintf(stdout, "\n%d keys set: %d read by Bobbin (or not applicable to it), %d not read.\n", read+unread, read, unread)
	bad := false
	for _, part := range []struct {
		daemon string
		err    error
	}{{"resourcemanager", rmErr}, {"nodemanager", nmErr}} {
		if part.err == nil {
			fmt.Fprintf(stdout, "%s: starts with this configuration.\n", part.daemon)
			if part.daemon == "nodemanager" {
				nmEnvGaps(stdout, dir)
			}
			continue
		}
		bad = true
		fmt.Fprintf(stdout, "%s: would not start:\n", part.daemon)
		for _, line := range flatten(part.err) {
			fmt.Fprintf(stdout, "  ERROR %s\n", line)
		}
	}
	if bad {
		return 1
	}
	return 0
}

// flatten lists the errors errors.Join put together, one per line.
func flatten(err error) []string {
	var out []string
	var walk func(error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		out = append(out, strings.ReplaceAll(e.Error(), "\n", "; "))
	}
	walk(err)
	return out
}

func shorten(v string) string {
	v = strings.Join(strings.Fields(v), " ")
	if len(v) > 100 {
		return v[:97] + "..."
	}
	return v
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// nmEnvGaps prints what containers of a NodeManager started from this shell, with this
// configuration directory, would lack (the launcher's derivations applied).
func nmEnvGaps(stdout io.Writer, dir string) {
	vars, _ := nodemanager.LauncherEnv(os.LookupEnv, dir, exec.LookPath)
	getenv := func(k string) (string, bool) {
		if v, ok := vars[k]; ok {
			return v, true
		}
		return os.LookupEnv(k)
	}
	for _, gap := range nodemanager.ContainerEnvGaps(getenv) {
		fmt.Fprintf(stdout, "  WARN  %s\n", gap)
	}
}
