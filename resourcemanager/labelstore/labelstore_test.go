package labelstore

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/bobbin-yarn/bobbin/conf"
)

func openDir(t *testing.T, dir string) *Store {
	t.Helper()
	c := conf.New()
	c.Set(KeyRootDir, "file://"+dir)
	s, err := Open(c, "yarn")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// copyJavaStore copies the store the Java 3.1.1 RM wrote (testdata/README.md).
func copyJavaStore(t *testing.T) string {
	dir := t.TempDir()
	for _, n := range []string{mirrorName, editlogName} {
		b, err := os.ReadFile(filepath.Join("testdata", "java-3.1.1", n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

var javaState = State{
	Labels: []Label{{Name: "gpu", Exclusive: true}, {Name: "shared", Exclusive: false}},
	OnNode: map[string][]string{"localhost:8041": {"gpu"}, "hostb:0": {"shared"}},
}

// TestReadsTheJavaRMsStore: the labels a Java RM stored — added with their exclusivity,
// put on nodes, one removed (and with it its node's entry) — are what Bobbin loads.
func TestReadsTheJavaRMsStore(t *testing.T) {
	s := openDir(t, copyJavaStore(t))
	got, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, javaState) {
		t.Fatalf("loaded %+v, want %+v", got, javaState)
	}
}

// TestSaveWritesWhatTheJavaRMReads: Save leaves a mirror in the Java RM's layout (the
// add request with both fields, then the replace request) and an empty edit log, and
// loads back the same; a change after it replaces it whole.
func TestSaveWritesWhatTheJavaRMReads(t *testing.T) {
	dir := copyJavaStore(t)
	s := openDir(t, dir)
	if err := s.Save(javaState); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, editlogName)); len(b) != 0 {
		t.Fatalf("edit log holds %d bytes after a save", len(b))
	}
	b, _ := os.ReadFile(filepath.Join(dir, mirrorName))
	r := bufio.NewReader(bytes.NewReader(b))
	first := newState()
	if err := first.readMirror(r); err != nil {
		t.Fatal(err)
	}
	if got := first.state(); !reflect.DeepEqual(got, javaState) {
		t.Fatalf("mirror %+v", got)
	}
	if _, err := os.Stat(filepath.Join(dir, oldName)); !os.IsNotExist(err) {
		t.Fatalf("the old mirror was left: %v", err)
	}
	next := State{Labels: []Label{{Name: "gpu", Exclusive: true}}, OnNode: map[string][]string{}}
	if err := s.Save(next); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Load(); err != nil || !reflect.DeepEqual(got, next) {
		t.Fatalf("after a second save: %+v, %v", got, err)
	}
}

// TestDamagedStoreIsAnError: a truncated edit log or an unknown record type is an error
// naming the file, never a panic or a silently partial state.
func TestDamagedStoreIsAnError(t *testing.T) {
	dir := copyJavaStore(t)
	b, _ := os.ReadFile(filepath.Join(dir, editlogName))
	os.WriteFile(filepath.Join(dir, editlogName), b[:len(b)-2], 0o644)
	if _, err := openDir(t, dir).Load(); err == nil {
		t.Fatal("a truncated edit log loaded")
	}
	os.WriteFile(filepath.Join(dir, editlogName), []byte{0, 0, 0, 9, 0}, 0o644)
	if _, err := openDir(t, dir).Load(); err == nil {
		t.Fatal("an unknown record type loaded")
	}
}

// FuzzReplay: whatever bytes the edit log holds, replaying them ends in a state or an
// error.
func FuzzReplay(f *testing.F) {
	b, _ := os.ReadFile(filepath.Join("testdata", "java-3.1.1", editlogName))
	f.Add(b)
	f.Add([]byte{0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, data []byte) {
		st := newState()
		_ = st.replay(bufio.NewReader(bytes.NewReader(data)))
		_ = st.readMirror(bufio.NewReader(bytes.NewReader(data)))
	})
}
