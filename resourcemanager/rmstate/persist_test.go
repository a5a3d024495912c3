package rmstate

import (
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
		if ok, _, err := r.Submit(&App{ID: id, User: "u", Queue: "default", State: yarnpb.YarnApplicationStateProto_ACCEPTED}, nil); !ok || err != nil {
			t.Fatal(ok, err)
		}
		r.With(id, func(a *App, _ bool) {
			a.State, a.FinishTime = yarnpb.YarnApplicationStateProto_FINISHED, time.Now().UnixMilli()
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
