package nmstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/nodemanager/localizer"
)

// What is written is read back after the store is closed and opened again (a restart);
// what is removed stays removed.
func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	app := &AppRecord{ID: "application_1_0001", User: "alice", ShuffleSecret: []byte("secret"), ACLs: [][]byte{{1, 2}}}
	c1 := &ContainerRecord{ID: "container_1_0001_01_000001", Request: []byte{9}, User: "alice", State: Launched, Pid: 42, WorkDir: "/w", LogDirs: []string{"/l"}}
	c2 := &ContainerRecord{ID: "container_1_0001_01_000002", User: "alice", State: Completed, Exit: -105, KillExit: -105, Reported: true}
	res := localizer.CachedResource{Visibility: yarnpb.LocalResourceVisibilityProto_PUBLIC, URL: "file:///a", Timestamp: 7, Dir: "/c/filecache/3", Path: "/c/filecache/3/a", Size: 1, LastUsed: time.UnixMilli(5).UTC()}
	for _, err := range []error{s.PutApp(app), s.PutContainer(c1), s.PutContainer(c2), s.PutResource(res),
		s.PutKeys(&KeysRecord{Container: []KeyRecord{{ID: 3, Bytes: []byte("k")}}}), s.PutApp(&AppRecord{ID: "application_1_0002"})} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RemoveApp("application_1_0002"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Apps) != 1 || string(st.Apps[0].ShuffleSecret) != "secret" || len(st.Apps[0].ACLs) != 1 {
		t.Fatalf("apps %+v", st.Apps)
	}
	if len(st.Containers) != 2 || st.Containers[0].Pid != 42 || st.Containers[1].Exit != -105 || !st.Containers[1].Reported {
		t.Fatalf("containers %+v %+v", st.Containers[0], st.Containers[1])
	}
	if len(st.Resources) != 1 || st.Resources[0] != res {
		t.Fatalf("resources %+v", st.Resources)
	}
	if st.Keys == nil || st.Keys.Container[0].ID != 3 {
		t.Fatalf("keys %+v", st.Keys)
	}
	if err := s.RemoveContainers([]string{c1.ID, c2.ID}); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.Load(); len(st.Containers) != 0 {
		t.Fatalf("removed containers back: %+v", st.Containers)
	}
}

// A file that is not a store, or a store holding a record that does not decode, is an
// error naming the file; Quarantine moves it aside so a fresh store opens.
func TestCorruptStore(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	os.WriteFile(path, []byte(strings.Repeat("garbage ", 2000)), 0o600)
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("garbage opened: %v", err)
	}
	to, err := Quarantine(dir, time.Unix(100, 0))
	if err != nil || !strings.HasSuffix(to, ".corrupt-100") {
		t.Fatalf("quarantine %q %v", to, err)
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.PutContainer(&ContainerRecord{ID: "container_1_0001_01_000001", State: "EXPLODED"})
	if _, err := s.Load(); err == nil || !strings.Contains(err.Error(), "unknown state") {
		t.Fatalf("bad record loaded: %v", err)
	}
	s.Close()
}
