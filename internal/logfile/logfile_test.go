package logfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Past its maximum the file rolls over, as log4j's RollingFileAppender: name.1 is the
// newest backup, the oldest beyond the count is gone, and nothing is lost in between.
func TestRotation(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs")
	w, err := Open(dir, "yarn-u-resourcemanager-h.log", 100, 2)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Repeat("x", 39) + "\n" // 40 bytes: two a file
	for i := range 7 {
		if _, err := w.Write([]byte(string(rune('a'+i)) + line[1:])); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return "<" + err.Error() + ">"
		}
		var firsts []byte
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			firsts = append(firsts, l[0])
		}
		return string(firsts)
	}
	// a b | c d | e f | g: the first file went past the two backups.
	if got := read("yarn-u-resourcemanager-h.log") + " " + read("yarn-u-resourcemanager-h.log.1") + " " + read("yarn-u-resourcemanager-h.log.2"); got != "g ef cd" {
		t.Errorf("files hold %q, want \"g ef cd\"", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "yarn-u-resourcemanager-h.log.3")); !os.IsNotExist(err) {
		t.Errorf("a third backup: %v", err)
	}
	// Reopened, it appends.
	w, err = Open(dir, "yarn-u-resourcemanager-h.log", 1000, 2)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("h" + line[1:]))
	w.Close()
	if got := read("yarn-u-resourcemanager-h.log"); got != "gh" {
		t.Errorf("reopened file holds %q, want gh", got)
	}
	if w.LogDir() != dir {
		t.Errorf("LogDir = %s", w.LogDir())
	}
}
