package nodemanager

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/conf"
)

// A failed container's diagnostics quote the end of prelaunch.err and of its newest error
// file (naming them all when several match), as the 3.x Java NodeManager's do.
func TestExitTails(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string, age time.Duration) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(-age)
		os.Chtimes(p, at, at)
	}
	write("prelaunch.err", "ln: failed\n", time.Hour)
	write("stderr", "old failure\n", time.Hour)
	const missing = "Error: Could not find or load main class org.apache.hadoop.mapreduce.v2.app.MRAppMaster"
	write("app.STDERR", "0123456789"+missing, time.Minute)
	write("stdout", "not an error file", 0)

	n := len(missing) // the tail leaves out the first ten bytes
	got := exitTails(dir, 1, "{*stderr*,*STDERR*}", n)
	want := fmt.Sprintf("Container exited with a non-zero exit code 1. Error file: prelaunch.err.\nLast %d bytes of prelaunch.err :\nln: failed\n", n) +
		fmt.Sprintf("Error files: app.STDERR, stderr.\nLast %d bytes of app.STDERR :\n%s\n", n, missing) +
		"Please check whether your <HADOOP_HOME>/etc/hadoop/mapred-site.xml contains the below configuration:\n<property>\n  <name>yarn.app.mapreduce.am.env</name>\n"
	if !strings.HasPrefix(got, want) || !strings.Contains(got, "<name>mapreduce.reduce.env</name>") {
		t.Errorf("diagnostics:\n%s\nwant them to begin:\n%s", got, want)
	}

	// No prelaunch.err (a container whose script never ran) and one match.
	os.Remove(filepath.Join(dir, "prelaunch.err"))
	if got := exitTails(dir, 2, "std{err,out}", 4096); got != "Container exited with a non-zero exit code 2. Error files: stderr, stdout.\nLast 4096 bytes of stdout :\nnot an error file\n" {
		t.Errorf("diagnostics: %q", got)
	}
	if got := exitTails(dir, 3, "none*", 4096); got != "Container exited with a non-zero exit code 3. " {
		t.Errorf("diagnostics without error files: %q", got)
	}
}

// The pattern and the tail size are checked at start, naming their keys.
func TestErrorFileSettings(t *testing.T) {
	c := conf.New()
	s, err := ReadSettings(c)
	if err != nil || !s.DebugInfo || s.StderrPattern != "{*stderr*,*STDERR*}" || s.StderrTail != 4096 {
		t.Fatalf("defaults: %v %q %d, %v", s.DebugInfo, s.StderrPattern, s.StderrTail, err)
	}
	c.Set("yarn.nodemanager.container.stderr.pattern", "{*stderr*,[*STDERR*}")
	c.Set("yarn.nodemanager.container.stderr.tail.bytes", "-1")
	_, err = ReadSettings(c)
	if err == nil || !strings.Contains(err.Error(), "yarn.nodemanager.container.stderr.pattern") || !strings.Contains(err.Error(), "yarn.nodemanager.container.stderr.tail.bytes") {
		t.Fatalf("want both bad keys named: %v", err)
	}
	for pattern, alts := range map[string]string{"a": "a", "{a,b}c": "ac bc", "x{a,{b,c}}": "xa xb xc", "{a,b}{1,2}": "a1 a2 b1 b2"} {
		if got := strings.Join(braceAlternatives(pattern), " "); got != alts {
			t.Errorf("%s expands to %q, want %q", pattern, got, alts)
		}
	}
}
