package nodemanager

// What a container that exits non-zero tells in its diagnostics of its own logs, as the
// 3.x Java NodeManager's ContainerLaunch does: the tail of prelaunch.err (what its launch
// script printed to stderr before the command ran) and the tail of its error file, the
// newest file of its log dir matching yarn.nodemanager.container.stderr.pattern.

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/nodemanager/launch"
)

// exitTails is the diagnostics' account of a failed container's error files in logDir,
// beginning with the Java NM's "Container exited with a non-zero exit code N. ".
func exitTails(logDir string, code int, pattern string, tail int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Container exited with a non-zero exit code %d. ", code)
	if t, ok := tailOf(filepath.Join(logDir, launch.PrelaunchErr), tail); ok {
		fmt.Fprintf(&b, "Error file: %s.\nLast %d bytes of %s :\n%s", launch.PrelaunchErr, tail, launch.PrelaunchErr, t)
	}
	matches := errorFiles(logDir, pattern)
	if len(matches) == 0 {
		return b.String()
	}
	newest, newestAt := matches[0], modTime(filepath.Join(logDir, matches[0]))
	if len(matches) > 1 {
		for _, m := range matches[1:] {
			if at := modTime(filepath.Join(logDir, m)); at > newestAt {
				newest, newestAt = m, at
			}
		}
		fmt.Fprintf(&b, "Error files: %s.\n", strings.Join(matches, ", "))
	}
	t, _ := tailOf(filepath.Join(logDir, newest), tail)
	fmt.Fprintf(&b, "Last %d bytes of %s :\n%s\n", tail, newest, t)
	if strings.Contains(t, "Error: Could not find or load main class org.apache.hadoop.mapreduce") {
		// The hint the Java NM gives for the most common MapReduce set-up mistake.
		b.WriteString("Please check whether your <HADOOP_HOME>/etc/hadoop/mapred-site.xml contains the below configuration:\n")
		for _, k := range []string{"yarn.app.mapreduce.am.env", "mapreduce.map.env", "mapreduce.reduce.env"} {
			fmt.Fprintf(&b, "<property>\n  <name>%s</name>\n  <value>HADOOP_MAPRED_HOME=${full path of your hadoop distribution directory}</value>\n</property>\n", k)
		}
	}
	return b.String()
}

// tailOf is the last max bytes of the file at path; ok is false when it cannot be read.
func tailOf(path string, max int) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > int64(max) {
		f.Seek(st.Size()-int64(max), io.SeekStart)
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(max)))
	return string(b), err == nil
}

func modTime(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.ModTime().UnixNano()
}

// errorFiles are the names of logDir's files matching a Hadoop glob, in name order.
func errorFiles(logDir, pattern string) []string {
	entries, err := os.ReadDir(logDir)
	if err != nil {
		return nil
	}
	alts := braceAlternatives(pattern)
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		for _, alt := range alts {
			if ok, _ := filepath.Match(alt, e.Name()); ok {
				out = append(out, e.Name())
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// braceAlternatives expands a Hadoop glob's {a,b} groups (nested ones too) into the plain
// globs filepath.Match reads.
func braceAlternatives(p string) []string {
	open := strings.IndexByte(p, '{')
	if open < 0 {
		return []string{p}
	}
	depth, start := 0, open+1
	var parts []string
	for i := open; i < len(p); i++ {
		switch p[i] {
		case '{':
			depth++
		case ',':
			if depth == 1 {
				parts = append(parts, p[start:i])
				start = i + 1
			}
		case '}':
			depth--
			if depth == 0 {
				parts = append(parts, p[start:i])
				var out []string
				for _, part := range parts {
					out = append(out, braceAlternatives(p[:open]+part+p[i+1:])...)
				}
				return out
			}
		}
	}
	return []string{p} // an unclosed brace: checkGlob refuses it at start
}

// checkGlob refuses a pattern that is not a glob, naming its key.
func checkGlob(c *conf.Configuration, key, pattern string) error {
	bad := strings.Count(pattern, "{") != strings.Count(pattern, "}")
	for _, alt := range braceAlternatives(pattern) {
		if _, err := filepath.Match(alt, ""); err != nil {
			bad = true
		}
	}
	if bad {
		return &conf.ValueError{Source: c.Source(key), Key: key, Value: pattern, Reason: "is not a file name glob"}
	}
	return nil
}
