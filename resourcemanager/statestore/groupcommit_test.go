package statestore

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
)

// Writers that come while a commit runs share the next one; a caller alone commits at
// once; a failing record fails only its own caller.
func TestGroupCommitSharesTransactions(t *testing.T) {
	var (
		mu      sync.Mutex
		commits [][]string
		written = map[string]bool{}
	)
	first := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	g := &groupCommit{commit: func(recs []encodedApp) error {
		once.Do(func() { close(first); <-release }) // hold the first commit until all wait
		var ids []string
		for _, r := range recs {
			if r.rec.ID == "bad" {
				return errors.New("refused")
			}
			ids = append(ids, r.rec.ID)
		}
		mu.Lock()
		defer mu.Unlock()
		commits = append(commits, ids)
		for _, id := range ids {
			written[id] = true
		}
		return nil
	}}
	g.perRecord = func(error) bool { return true }
	put := func(id string) error { return g.put([]encodedApp{{rec: &AppRecord{ID: id}}}) }
	lead := make(chan error, 1)
	go func() { lead <- put("leader") }()
	<-first
	const n = 50
	errs := make(map[string]error)
	var emu sync.Mutex
	var wg sync.WaitGroup
	for i := range n + 1 {
		id := fmt.Sprint("app-", i)
		if i == n {
			id = "bad"
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := put(id)
			emu.Lock()
			errs[id] = err
			emu.Unlock()
		}()
	}
	// Every writer is queued behind the held commit before it is let go.
	for {
		g.mu.Lock()
		queued := len(g.pending)
		g.mu.Unlock()
		if queued == n+1 {
			break
		}
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	if err := <-lead; err != nil {
		t.Fatal(err)
	}
	for id, err := range errs {
		if (id == "bad") != (err != nil) {
			t.Errorf("%s: %v", id, err)
		}
	}
	if len(written) != n+1 { // the leader's and the 50 good ones
		t.Fatalf("%d records written, want %d", len(written), n+1)
	}
	// The leader's own commit, the shared one that failed (then each alone: 51), none
	// else.
	if len(commits) != 1+n {
		t.Fatalf("%d commits: %v", len(commits), commits)
	}
	if len(commits[0]) != 1 || commits[0][0] != "leader" {
		t.Fatalf("first commit %v", commits[0])
	}
}

// Concurrent writers through the embedded store: every record is stored.
func TestEmbeddedConcurrentPutApps(t *testing.T) {
	s, err := OpenEmbedded(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("application_1_%04d", i)
			for v := uint64(1); v <= 3; v++ {
				if err := s.PutApp(&AppRecord{ID: id, Version: v, Name: fmt.Sprint("v", v)}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	st, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Apps) != 200 {
		t.Fatalf("%d applications stored", len(st.Apps))
	}
	for _, a := range st.Apps {
		if a.Version != 3 || a.Name != "v3" {
			t.Fatalf("%s stored at version %d (%s), want its last", a.ID, a.Version, a.Name)
		}
	}
}

// A commit that panics (bbolt does on some corrupt pages) fails its callers' writes with
// an error and leaves the store's writers able to go on.
func TestGroupCommitSurvivesAPanic(t *testing.T) {
	calls := 0
	g := &groupCommit{commit: func(recs []encodedApp) error {
		calls++
		if calls == 1 {
			panic("corrupt page")
		}
		return nil
	}}
	if err := g.put([]encodedApp{{rec: &AppRecord{ID: "a"}}}); err == nil {
		t.Fatal("a panicking commit reported success")
	}
	if err := g.put([]encodedApp{{rec: &AppRecord{ID: "b"}}}); err != nil {
		t.Fatalf("after the panic: %v", err)
	}
	if g.leading || len(g.pending) != 0 {
		t.Fatalf("left leading %v with %d pending", g.leading, len(g.pending))
	}
}
