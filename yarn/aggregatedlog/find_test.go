package aggregatedlog

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// osDir is the local disk as a Dir.
type osDir struct{}

func (osDir) ReadDir(p string) ([]os.FileInfo, error) {
	ents, err := os.ReadDir(p)
	if err != nil {
		return nil, err
	}
	var out []os.FileInfo
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			return nil, err
		}
		out = append(out, fi)
	}
	return out, nil
}

func (osDir) Open(p string) (io.ReadCloser, error) { return os.Open(p) }

// writeNodeFile writes one node's aggregated file of logs (container -> type -> text).
func writeNodeFile(t *testing.T, path string, logs map[string]map[string]string, mod time.Time) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, "alice", []ACL{{"VIEW_APP", "bob"}})
	if err != nil {
		t.Fatal(err)
	}
	for id, files := range logs {
		var lf []LogFile
		for _, typ := range []string{"stderr", "stdout", "syslog"} {
			if text, ok := files[typ]; ok {
				lf = append(lf, LogFile{Name: typ, Length: fileOf([]byte(text)).Length, Open: fileOf([]byte(text)).Open})
			}
		}
		if err := w.Append(id, lf); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(path, mod, mod)
}

// A container's logs are found in its node's file, its rolled uploads joined in upload
// order; another node's container is not taken for it; a file being written is skipped.
func TestContainerLogsFromTheAppDirectory(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	c1, c2 := "container_1_0001_01_000002", "container_1_0001_01_000003"
	writeNodeFile(t, filepath.Join(dir, "nm1_8041_1000"), map[string]map[string]string{c1: {"stdout": "first part\n"}}, t0)
	writeNodeFile(t, filepath.Join(dir, "nm1_8041_2000"), map[string]map[string]string{c1: {"stdout": "second part\n", "stderr": "oops\n"}}, t0.Add(time.Hour))
	writeNodeFile(t, filepath.Join(dir, "nm2_8041"), map[string]map[string]string{c2: {"syslog": "elsewhere\n"}}, t0)
	os.WriteFile(filepath.Join(dir, "nm1_8041"+TmpSuffix), []byte("half written"), 0o644)

	f, err := ContainerLogs(osDir{}, dir, c1, "nm1_8041")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, l := range f.Logs {
		got[l.Type] = string(l.Data)
	}
	if got["stdout"] != "first part\nsecond part\n" || got["stderr"] != "oops\n" || len(got) != 2 || f.Owner != "alice" || len(f.ACLs) != 1 || len(f.Files) != 2 {
		t.Errorf("found %v from %v (owner %q, ACLs %v)", got, f.Files, f.Owner, f.ACLs)
	}
	if f, err := ContainerLogs(osDir{}, dir, c2, ""); err != nil || len(f.Logs) != 1 || string(f.Logs[0].Data) != "elsewhere\n" {
		t.Errorf("any node's: %+v %v", f, err)
	}
	if _, err := ContainerLogs(osDir{}, dir, c2, "nm1_8041"); !errors.Is(err, ErrNoLogs) {
		t.Errorf("another node's container: %v, want ErrNoLogs", err)
	}
	if _, err := ContainerLogs(osDir{}, filepath.Join(dir, "gone"), c1, ""); !errors.Is(err, ErrNoLogs) {
		t.Errorf("no directory: %v, want ErrNoLogs", err)
	}
}
