package nodemanager

// What a container that exits non-zero tells in its diagnostics of its own logs, as the
// 3.x Java NodeManager's ContainerLaunch does: the tail of prelaunch.err (what its launch
// script printed to stderr before the command ran) and the tail of its error file, the
// newest file of its log dir matching yarn.nodemanager.container.stderr.pattern.

import (
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/bobbin-yarn/bobbin/nodemanager/containers"
	"github.com/bobbin-yarn/bobbin/nodemanager/launch"
	"github.com/bobbin-yarn/bobbin/yarn/secureio"
)

// exitTails is exitTails for container c, in its first log dir.
func (nm *NodeManager) exitTails(c *containers.Container, code int) string {
	logDir := c.Dirs.LogDirs[0] // <log dir>/<app>/<container>
	dir, err := secureio.OpenDir(filepath.Dir(filepath.Dir(logDir)), c.ID.Attempt.App.String(), c.ID.String())
	if err != nil {
		nm.log.WithError(err).WithField("container", c.ID.String()).Warn("the failed container's log dir cannot be read for its diagnostics")
		return exitTails(nil, 0, code, nil, 0)
	}
	defer dir.Close()
	return exitTails(dir, nm.ownerOfContainerLogs(c.ID, c.User), code, nm.settings.StderrPattern, nm.settings.StderrTail)
}

// exitTails is the diagnostics' account of a failed container's error files in its log
// dir, beginning with the Java NM's "Container exited with a non-zero exit code N. ". The
// files are the container's own: read through dir (no link followed, no pipe or device
// opened) and only when owner (secureio.AnyOwner, or the user it ran as) owns them.
func exitTails(dir *secureio.Dir, owner, code int, pattern *regexp.Regexp, tail int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Container exited with a non-zero exit code %d. ", code)
	if dir == nil {
		return b.String()
	}
	if t, ok := tailOf(dir, launch.PrelaunchErr, owner, tail); ok {
		fmt.Fprintf(&b, "Error file: %s.\nLast %d bytes of %s :\n%s", launch.PrelaunchErr, tail, launch.PrelaunchErr, t)
	}
	entries, _ := dir.List()
	var matches []secureio.Entry
	for _, e := range entries {
		if pattern != nil && pattern.MatchString(e.Name) {
			matches = append(matches, e)
		}
	}
	if len(matches) == 0 {
		return b.String()
	}
	sort.Slice(matches, func(i, j int) bool { return matches[i].Name < matches[j].Name })
	newest := matches[0]
	if len(matches) > 1 {
		names := make([]string, len(matches))
		for i, m := range matches {
			names[i] = m.Name
			if m.ModTime.After(newest.ModTime) {
				newest = m
			}
		}
		fmt.Fprintf(&b, "Error files: %s.\n", strings.Join(names, ", "))
	}
	t, _ := tailOf(dir, newest.Name, owner, tail)
	fmt.Fprintf(&b, "Last %d bytes of %s :\n%s\n", tail, newest.Name, t)
	if strings.Contains(t, "Error: Could not find or load main class org.apache.hadoop.mapreduce") {
		// The hint the Java NM gives for the most common MapReduce set-up mistake.
		b.WriteString("Please check whether your <HADOOP_HOME>/etc/hadoop/mapred-site.xml contains the below configuration:\n")
		for _, k := range []string{"yarn.app.mapreduce.am.env", "mapreduce.map.env", "mapreduce.reduce.env"} {
			fmt.Fprintf(&b, "<property>\n  <name>%s</name>\n  <value>HADOOP_MAPRED_HOME=${full path of your hadoop distribution directory}</value>\n</property>\n", k)
		}
	}
	return b.String()
}

// tailOf is the last max bytes of the file name in dir (a tail cut inside a character
// shows it replaced, as Java decodes it); ok is false when it cannot be read.
func tailOf(dir *secureio.Dir, name string, owner, max int) (string, bool) {
	f, err := dir.Open(name, owner)
	if err != nil {
		return "", false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", false
	}
	if st.Size() > int64(max) {
		if _, err := f.Seek(st.Size()-int64(max), io.SeekStart); err != nil {
			return "", false
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(max)))
	return strings.ToValidUTF8(string(b), "\uFFFD"), err == nil
}
