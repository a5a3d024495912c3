package nodemanager

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/yarn/secureio"
)

// A failed container's diagnostics quote the end of prelaunch.err and of its newest error
// file (naming them all when several match), as the 3.x Java NodeManager's do; a link or
// a pipe planted in the log dir is not read (a link could show another file, a pipe would
// block the container's end).
func TestExitTails(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "app", "c1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
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
	secret := filepath.Join(base, "secret")
	os.WriteFile(secret, []byte("do not show"), 0o600)
	os.Symlink(secret, filepath.Join(dir, "zz-stderr-link"))
	if err := syscall.Mkfifo(filepath.Join(dir, "zz-stderr-fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := secureio.OpenDir(base, "app", "c1")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	glob := func(g string) *regexp.Regexp {
		re, err := compileGlob(g)
		if err != nil {
			t.Fatalf("%s: %v", g, err)
		}
		return re
	}

	n := len(missing) // the tail leaves out the first ten bytes
	got := exitTails(d, secureio.AnyOwner, 1, glob("{*stderr*,*STDERR*}"), n)
	want := fmt.Sprintf("Container exited with a non-zero exit code 1. Error file: prelaunch.err.\nLast %d bytes of prelaunch.err :\nln: failed\n", n) +
		fmt.Sprintf("Error files: app.STDERR, stderr.\nLast %d bytes of app.STDERR :\n%s\n", n, missing) +
		"Please check whether your <HADOOP_HOME>/etc/hadoop/mapred-site.xml contains the below configuration:\n<property>\n  <name>yarn.app.mapreduce.am.env</name>\n"
	if !strings.HasPrefix(got, want) || !strings.Contains(got, "<name>mapreduce.reduce.env</name>") || strings.Contains(got, "do not show") {
		t.Errorf("diagnostics:\n%s\nwant them to begin:\n%s", got, want)
	}

	// No prelaunch.err (a container whose script never ran) and one match.
	os.Remove(filepath.Join(dir, "prelaunch.err"))
	if got := exitTails(d, secureio.AnyOwner, 2, glob("std{err,out}"), 4096); got != "Container exited with a non-zero exit code 2. Error files: stderr, stdout.\nLast 4096 bytes of stdout :\nnot an error file\n" {
		t.Errorf("diagnostics: %q", got)
	}
	if got := exitTails(d, secureio.AnyOwner, 3, glob("none*"), 4096); got != "Container exited with a non-zero exit code 3. " {
		t.Errorf("diagnostics without error files: %q", got)
	}
	// A file the container's user does not own is not quoted.
	if got := exitTails(d, os.Geteuid()+1, 4, glob("stdout"), 4096); strings.Contains(got, "not an error file") {
		t.Errorf("another user's file quoted: %q", got)
	}
}

// The pattern and the tail size are checked at start, naming their keys; the pattern is
// a Hadoop glob (GlobPattern's syntax).
func TestErrorFileSettings(t *testing.T) {
	c := conf.New()
	s, err := ReadSettings(c)
	if err != nil || !s.DebugInfo || s.StderrPattern == nil || !s.StderrPattern.MatchString("stderr") || s.StderrTail != 4096 {
		t.Fatalf("defaults: %v %v %d, %v", s.DebugInfo, s.StderrPattern, s.StderrTail, err)
	}
	c.Set("yarn.nodemanager.container.stderr.pattern", "{*stderr*,*STDERR*")
	c.Set("yarn.nodemanager.container.stderr.tail.bytes", "-1")
	_, err = ReadSettings(c)
	if err == nil || !strings.Contains(err.Error(), "yarn.nodemanager.container.stderr.pattern") || !strings.Contains(err.Error(), "yarn.nodemanager.container.stderr.tail.bytes") {
		t.Fatalf("want both bad keys named: %v", err)
	}
	for glob, cases := range map[string]map[string]bool{
		"{*stderr*,*STDERR*}": {"stderr": true, "app.STDERR": true, "stdout": false, "prelaunch.err": false},
		"x{a,{b,c}}":          {"xa": true, "xc": true, "x": false, "xbc": false},
		"{a,b}{1,2}":          {"b2": true, "ab": false},
		"[!x]stderr":          {"ystderr": true, "xstderr": false},
		"[a-c]?":              {"b1": true, "d1": false, "b": false},
		`\{a,b\}`:             {"{a,b}": true, "a": false},
		`{a\,b,c}`:            {"a,b": true, "c": true, "a": false},
		"a}":                  {"a}": true},
		"err.log":             {"err.log": true, "errxlog": false},
		"{,x}y":               {"y": true, "xy": true},
	} {
		re, err := compileGlob(glob)
		if err != nil {
			t.Errorf("%s: %v", glob, err)
			continue
		}
		for name, want := range cases {
			if re.MatchString(name) != want {
				t.Errorf("%s matches %q: %v, want %v", glob, name, !want, want)
			}
		}
	}
	for _, bad := range []string{"{a,b", "[ab", `stderr\`, "*/stderr", "[[a]"} {
		if _, err := compileGlob(bad); err == nil {
			t.Errorf("%s compiled", bad)
		}
	}
}
