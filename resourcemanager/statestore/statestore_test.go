package statestore

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/bobbin-yarn/bobbin/conf"
)

func TestEmbeddedStoreKeepsAppsAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenEmbedded(dir)
	if err != nil {
		t.Fatal(err)
	}
	if e, err := s.NextEpoch(); err != nil || e != 0 {
		t.Fatalf("first epoch %d, %v", e, err)
	}
	rec := &AppRecord{ID: "application_1_0001", Version: 2, User: "alice", State: 5,
		Attempts: []AttemptRecord{{Attempt: 1, State: 3, AMContainer: "container_1_0001_01_000001"}}}
	if err := s.PutApp(rec); err != nil {
		t.Fatal(err)
	}
	// An older version never replaces a newer one (two writers raced).
	if err := s.PutApp(&AppRecord{ID: rec.ID, Version: 1, User: "stale"}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutApp(&AppRecord{ID: "application_1_0002", Version: 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveApps([]string{"application_1_0002"}); err != nil {
		t.Fatal(err)
	}
	keys := &KeysRecord{Current: KeyRecord{ID: 7, Bytes: []byte("secret-7")}, Previous: &KeyRecord{ID: 6, Bytes: []byte("secret-6")}, LastID: 7}
	if err := s.PutKeys("amrm", keys); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"h1:8041", "h2:8041"} {
		if err := s.PutNode(&NodeRecord{ID: n}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RemoveNode("h1:8041"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = OpenEmbedded(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Apps) != 1 || st.Apps[0].User != "alice" || st.Apps[0].Attempts[0].AMContainer != "container_1_0001_01_000001" {
		t.Fatalf("loaded %+v", st.Apps)
	}
	if k := st.Keys["amrm"]; k == nil || k.Current.ID != 7 || string(k.Current.Bytes) != "secret-7" || k.Previous == nil || k.Previous.ID != 6 || k.Next != nil || k.LastID != 7 {
		t.Fatalf("keys %+v", st.Keys)
	}
	if len(st.Nodes) != 1 || st.Nodes[0].ID != "h2:8041" {
		t.Fatalf("nodes %+v", st.Nodes)
	}
	if e, err := s.NextEpoch(); err != nil || e != 1 {
		t.Fatalf("epoch after a restart %d, %v", e, err)
	}
}

// A torn or foreign store file is refused with its name, never replaced by an empty one.
func TestCorruptStoreIsRefused(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenEmbedded(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.PutApp(&AppRecord{ID: "application_1_0001", Version: 1})
	s.Close()
	path := filepath.Join(dir, FileName)
	data, _ := os.ReadFile(path)
	for name, bad := range map[string][]byte{"truncated": data[:100], "garbage": []byte(strings.Repeat("not a bbolt file ", 600))} {
		if err := os.WriteFile(path, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := OpenEmbedded(dir)
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s store: err = %v, want an error naming %s", name, err, path)
		}
		if after, _ := os.ReadFile(path); string(after) != string(bad) {
			t.Errorf("%s store was rewritten", name)
		}
	}
}

func TestStoreFromHadoopKeys(t *testing.T) {
	dir := t.TempDir()
	c := conf.New()
	if s, err := Open(c, "test", nil); s != nil || err != nil {
		t.Fatalf("recovery off: %v %v", s, err)
	}
	c.Set(KeyRecovery, "true")
	c.Set(KeyFSURI, "file://"+dir)
	s, err := Open(c, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Location() != "file://"+filepath.Join(dir, "FSRMStateRoot") {
		t.Errorf("location %s", s.Location())
	}
	s.Close()
	for class, want := range map[string]string{
		"org.apache.hadoop.yarn.server.resourcemanager.recovery.ZKRMStateStore": "hadoop.zk.address",
		"org.example.Mine": KeyStoreClass,
	} {
		c.Set(KeyStoreClass, class)
		if _, err := Open(c, "test", nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", class, err)
		}
	}
	c.Set(KeyStoreClass, "org.apache.hadoop.yarn.server.resourcemanager.recovery.FileSystemRMStateStore")
	c.Set(KeyFSURI, "hdfs://nn:8020/rmstore")
	if _, err := Open(c, "test", nil); err == nil || !strings.Contains(err.Error(), KeyFSURI) {
		t.Errorf("hdfs uri: %v", err)
	}
	c.Set(KeyStoreClass, "org.apache.hadoop.yarn.server.resourcemanager.recovery.NullRMStateStore")
	if s, err := Open(c, "test", nil); s != nil || err != nil {
		t.Errorf("null store: %v %v", s, err)
	}
}

// A store damaged below its records — emptied, truncated, a page overwritten — or with a
// record that does not decode is refused at start with an error naming the store, never
// loaded as empty and never a crash (bbolt panics, or faults reading past a truncated
// file, where nothing guards it), and the file is left as it was.
func TestDamagedStoreIsRefused(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenEmbedded(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Enough applications for the store to span many pages.
	for i := 1; i <= 400; i++ {
		rec := &AppRecord{ID: fmt.Sprintf("application_1_%04d", i), Version: 1, User: "alice", Diagnostics: strings.Repeat("d", 200)}
		if err := s.PutApp(rec); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	path := filepath.Join(dir, FileName)
	whole, _ := os.ReadFile(path)
	if len(whole) < 64<<10 {
		t.Fatalf("store of %d bytes: too small to damage its pages", len(whole))
	}
	pages := func(from int, garbage byte) []byte {
		b := append([]byte(nil), whole...)
		for i := from * 4096; i < len(b) && i < (from+8)*4096; i++ {
			b[i] = garbage
		}
		return b
	}
	cases := map[string][]byte{
		"empty":        {},
		"truncated":    whole[:len(whole)/2],
		"leaf pages":   pages(len(whole)/4096/2, 0x5a),
		"branch pages": pages(2, 0xff),
	}
	for name, bad := range cases {
		// A directory each: a panic inside bbolt's Open leaves its file lock held by this
		// process (the RM exits on the error, so that lock dies with it).
		dir := t.TempDir()
		path := filepath.Join(dir, FileName)
		if err := os.WriteFile(path, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		err := openAndLoad(dir)
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s store: err = %v, want an error naming %s", name, err, path)
		} else {
			t.Logf("%s store: %v", name, err)
		}
		if after, _ := os.ReadFile(path); string(after) != string(bad) {
			t.Errorf("%s store was rewritten", name)
		}
	}
	// A record that does not decode names the store and the record.
	s, err = OpenEmbedded(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketApps).Put([]byte("application_1_0007"), []byte(`{"ID": "applica`))
	})
	s.Close()
	if err := openAndLoad(dir); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "application_1_0007") {
		t.Errorf("corrupt record: err = %v, want an error naming %s and application_1_0007", err, path)
	}
}

func openAndLoad(dir string) error {
	s, err := OpenEmbedded(dir)
	if err != nil {
		return err
	}
	defer s.Close()
	_, err = s.Load()
	return err
}
