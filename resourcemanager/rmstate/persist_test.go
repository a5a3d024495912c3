package rmstate

import (
	"errors"
	"sync"
	"testing"
	"time"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/statestore"
)

// memJournal is a Journal in memory.
type memJournal struct {
	mu   sync.Mutex
	apps map[string]*statestore.AppRecord
	puts int
}

func (j *memJournal) PutApp(rec *statestore.AppRecord) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.apps[rec.ID] = rec
	j.puts++
	return nil
}

func (j *memJournal) PutApps(recs []*statestore.AppRecord) error {
	for _, rec := range recs {
		j.PutApp(rec)
	}
	return nil
}

func (j *memJournal) RemoveApps(ids []string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, id := range ids {
		delete(j.apps, id)
	}
	return nil
}

// The store keeps its own, smaller number of finished applications: the oldest leave it
// (and are never written again) while memory still reports them; memory's limit then
// drops them for good.
func TestStoreKeepsFewerFinishedApplicationsThanMemory(t *testing.T) {
	j := &memJournal{apps: map[string]*statestore.AppRecord{}}
	r := NewApps(1, time.Now)
	r.SetJournal(j, func(err error) { t.Error(err) })
	r.SetStoreLimit(1)
	var ids []string
	for range 3 {
		id := r.NewID()
		ids = append(ids, id.String())
		if ok, _, err := r.Submit(&App{ID: id, User: "u", Queue: "default", state: yarnpb.YarnApplicationStateProto_ACCEPTED}, nil); !ok || err != nil {
			t.Fatal(ok, err)
		}
		r.With(id, func(a *App, _ bool) {
			mustMove(t, a, AppAMUnregistered)
			a.FinishTime = time.Now().UnixMilli()
		})
		r.Retire(id, 3)
	}
	if len(j.apps) != 1 || j.apps[ids[2]] == nil {
		t.Fatalf("store holds %v, want only the newest", j.apps)
	}
	first, _ := r.ReportOf(appID(t, ids[0]))
	if first == nil {
		t.Fatal("memory forgot a finished application within its own limit")
	}
	// A change to an application that left the store does not write it back.
	puts := j.puts
	r.With(appID(t, ids[0]), func(a *App, _ bool) { a.Diagnostics = "late" })
	if j.puts != puts || j.apps[ids[0]] != nil {
		t.Fatal("an application that left the store was written again")
	}
}

func appID(t *testing.T, s string) records.ApplicationID {
	t.Helper()
	id, err := records.ParseApplicationID(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// refusingJournal is a memJournal that refuses every write while refuse is set (a full
// or read-only file system under the store).
type refusingJournal struct {
	memJournal
	refuse bool
}

var errRefused = errors.New("write bobbin-rmstore.db: no space left on device")

func (j *refusingJournal) PutApp(rec *statestore.AppRecord) error {
	if j.refuse {
		return errRefused
	}
	return j.memJournal.PutApp(rec)
}

func (j *refusingJournal) RemoveApps(ids []string) error {
	if j.refuse {
		return errRefused
	}
	return j.memJournal.RemoveApps(ids)
}

// A change the store refused is not lost: the registry keeps it (Unsaved) and
// RetryUnsaved stores it once the store takes writes again; so is a retired application's
// removal.
func TestRefusedWritesAreRetried(t *testing.T) {
	j := &refusingJournal{memJournal: memJournal{apps: map[string]*statestore.AppRecord{}}}
	r := NewApps(1, time.Now)
	var reported []error
	r.SetJournal(j, func(err error) { reported = append(reported, err) })
	r.SetStoreLimit(0) // a finished application leaves the store when retired
	id, other := r.NewID(), r.NewID()
	for _, a := range []records.ApplicationID{id, other} {
		if ok, _, err := r.Submit(&App{ID: a, User: "u", Queue: "default", state: yarnpb.YarnApplicationStateProto_RUNNING}, nil); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	j.refuse = true
	r.With(id, func(a *App, _ bool) {
		mustMove(t, a, AppAMUnregistered)
		a.Final = yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED
	})
	r.With(other, func(a *App, _ bool) {
		mustMove(t, a, AppKilled)
		a.FinishTime = time.Now().UnixMilli()
	})
	r.Retire(other, 10)
	if len(reported) != 3 {
		t.Fatalf("reported %v, want the three refused writes", reported)
	}
	if !r.Unsaved(id) || j.apps[id.String()].State != int32(yarnpb.YarnApplicationStateProto_RUNNING) {
		t.Fatal("the refused final state is not kept as unsaved")
	}
	if n, err := r.RetryUnsaved(); n != 0 || !errors.Is(err, errRefused) || !r.Unsaved(id) {
		t.Fatalf("retry while refusing: stored %d, %v", n, err)
	}
	j.refuse = false
	if n, err := r.RetryUnsaved(); n != 2 || err != nil {
		t.Fatalf("retry once writes are taken: stored %d, %v; want the record and the removal", n, err)
	}
	if r.Unsaved(id) || j.apps[id.String()].State != int32(yarnpb.YarnApplicationStateProto_FINISHED) {
		t.Fatalf("after the retry the store holds %+v", j.apps[id.String()])
	}
	if j.apps[other.String()] != nil {
		t.Fatal("the retired application's removal was not retried")
	}
	if n, err := r.RetryUnsaved(); n != 0 || err != nil {
		t.Fatalf("nothing left to retry, yet stored %d, %v", n, err)
	}
}

// What a restart derives again from the stored record is not written: resuming a running
// attempt clears its registration and writes nothing (a restart with 10,000 applications
// rewrote every one before serving). The AM's registration that follows is written, with
// the stored version's successor; a change pending before Rederive is written by it.
func TestRederiveWritesOnlyWhatTheStoreLacks(t *testing.T) {
	j := &memJournal{apps: map[string]*statestore.AppRecord{}}
	r := NewApps(1, time.Now)
	r.SetJournal(j, func(err error) { t.Error(err) })
	id := records.ApplicationID{ClusterTimestamp: 1, ID: 1}
	am := records.ContainerID{Attempt: id.Attempt(1), ID: 1}
	a, err := AppFromRecord(&statestore.AppRecord{ID: id.String(), Version: 7, User: "u", Queue: "default",
		State: int32(yarnpb.YarnApplicationStateProto_RUNNING), Attempts: []statestore.AttemptRecord{{Attempt: 1,
			State: int32(yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_RUNNING), Registered: true, AMContainer: am.String()}}})
	if err != nil {
		t.Fatal(err)
	}
	r.Restore([]*App{a})
	r.Rederive(id, func(a *App, _ bool) { a.Attempt.Registered = false })
	if j.puts != 0 {
		t.Fatalf("resuming wrote %d records: %+v", j.puts, j.apps[id.String()])
	}
	r.With(id, func(a *App, _ bool) { a.Attempt.Registered = true })
	if rec := j.apps[id.String()]; j.puts != 1 || rec == nil || rec.Version != 8 || !rec.Attempts[0].Registered {
		t.Fatalf("the AM's registration: %d writes, %+v; want one, version 8", j.puts, rec)
	}
	// Pending before Rederive (a change made while batching, say): written all the same.
	r.With(id, func(a *App, _ bool) {}) // nothing changed: nothing written
	a.Diagnostics = "changed outside the registry's methods"
	r.Rederive(id, func(a *App, _ bool) { a.Attempt.Registered = false })
	if rec := j.apps[id.String()]; j.puts != 2 || rec.Diagnostics == "" || rec.Version != 9 {
		t.Fatalf("a pending change: %d writes, %+v; want it written as version 9", j.puts, rec)
	}
}
