package statestore

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/internal/zktest"
)

// The ZooKeeper store on a real ZooKeeper: what one RM stores another loads; once a
// second RM has opened the store (taken the fence), every write of the first is refused
// with ErrFenced and changes nothing; batches larger than one ZooKeeper request go
// through whole.
func TestZKStoreKeepsStateAndFences(t *testing.T) {
	zks := zktest.Start(t)
	log := testutil.QuietLogger()
	s1, err := OpenZK(zks.Addr, "/rmstore", 5*time.Second, "rm1", log)
	if err != nil {
		t.Fatal(err)
	}
	defer s1.Close()
	if e, err := s1.NextEpoch(); err != nil || e != 0 {
		t.Fatalf("first epoch %d %v", e, err)
	}
	if err := s1.PutApp(&AppRecord{ID: "application_1_0001", Version: 2, User: "alice"}); err != nil {
		t.Fatal(err)
	}
	if err := s1.PutApp(&AppRecord{ID: "application_1_0001", Version: 1, User: "stale"}); err != nil {
		t.Fatal(err)
	}
	if err := s1.PutKeys("amrm", &KeysRecord{Current: KeyRecord{ID: 3, Bytes: []byte("k3")}, LastID: 3}); err != nil {
		t.Fatal(err)
	}
	if err := s1.PutNode(&NodeRecord{ID: "h1:8041"}); err != nil {
		t.Fatal(err)
	}
	// 3,000 records of ~400 bytes: more than one multi-operation.
	var many []*AppRecord
	for i := 2; i <= 3001; i++ {
		many = append(many, &AppRecord{ID: fmt.Sprintf("application_1_%04d", i), Version: 1, User: "bob", Diagnostics: strings.Repeat("d", 300)})
	}
	if err := s1.PutApps(many); err != nil {
		t.Fatal(err)
	}
	if err := s1.RemoveApps([]string{"application_1_0002"}); err != nil {
		t.Fatal(err)
	}

	s2, err := OpenZK(zks.Addr, "/rmstore", 5*time.Second, "rm2", log)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	st, err := s2.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Apps) != 3000 || st.Apps[0].User != "alice" || st.Epoch != 0 || st.Keys["amrm"].Current.ID != 3 || len(st.Nodes) != 1 {
		t.Fatalf("loaded %d apps (first %+v), epoch %d, keys %v, nodes %v", len(st.Apps), st.Apps[0], st.Epoch, st.Keys, st.Nodes)
	}
	// The old RM is fenced off: its writes fail and change nothing.
	for what, err := range map[string]error{
		"PutApp":     s1.PutApp(&AppRecord{ID: "application_1_0001", Version: 9, User: "old-active"}),
		"RemoveApps": s1.RemoveApps([]string{"application_1_0003"}),
		"NextEpoch":  func() error { _, err := s1.NextEpoch(); return err }(),
		"PutNode":    s1.PutNode(&NodeRecord{ID: "h9:8041"}),
	} {
		if !errors.Is(err, ErrFenced) {
			t.Errorf("%s by the fenced RM: %v, want ErrFenced", what, err)
		}
	}
	if e, err := s2.NextEpoch(); err != nil || e != 1 {
		t.Fatalf("epoch of the new active %d %v", e, err)
	}
	st, err = s2.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Apps) != 3000 || st.Apps[0].User != "alice" || len(st.Nodes) != 1 {
		t.Fatalf("the fenced RM changed the store: %d apps, first %+v, nodes %v", len(st.Apps), st.Apps[0], st.Nodes)
	}
}
