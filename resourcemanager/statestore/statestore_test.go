package statestore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	if s.Location() != filepath.Join(dir, FileName) {
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
