package rmstate

import (
	"sync"

	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/statestore"
)

// unsavedWrites are the application records and removals the state store refused (a
// full or read-only file system, ZooKeeper unreachable): each is kept, newest version per
// application, until RetryUnsaved stores it, so a change the store missed is not lost
// once the store takes writes again. Its mu is a leaf: nothing else is taken under it.
type unsavedWrites struct {
	mu       sync.Mutex
	recs     map[string]*statestore.AppRecord
	removals map[string]bool
}

// note records the outcome of writing rec: kept when the write failed (unless a newer
// version is kept already), forgotten when it, or a newer version, was stored.
func (u *unsavedWrites) note(rec *statestore.AppRecord, err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	old := u.recs[rec.ID]
	switch {
	case err != nil && (old == nil || old.Version <= rec.Version):
		if u.recs == nil {
			u.recs = map[string]*statestore.AppRecord{}
		}
		u.recs[rec.ID] = rec
	case err == nil && old != nil && old.Version <= rec.Version:
		delete(u.recs, rec.ID)
	}
}

// noteRemovals records removals the store refused (removed: false) or took.
func (u *unsavedWrites) noteRemovals(ids []string, removed bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, id := range ids {
		if removed {
			delete(u.removals, id)
			continue
		}
		if u.removals == nil {
			u.removals = map[string]bool{}
		}
		u.removals[id] = true
		delete(u.recs, id) // a removal outdates any record of it
	}
}

func (u *unsavedWrites) pending() (recs []*statestore.AppRecord, removals []string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, rec := range u.recs {
		recs = append(recs, rec)
	}
	for id := range u.removals {
		removals = append(removals, id)
	}
	return recs, removals
}

func (u *unsavedWrites) has(id string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.recs[id] != nil
}

// Unsaved reports whether the state store lacks application id's latest change (its
// write failed and no retry has stored it yet).
func (r *Apps) Unsaved(id records.ApplicationID) bool { return r.unsaved.has(id.String()) }

// RetryUnsaved writes again what the store refused before; it returns how many records
// and removals it stored now and the first error of those still refused.
func (r *Apps) RetryUnsaved() (stored int, err error) {
	recs, removals := r.unsaved.pending()
	if r.journal == nil || len(recs)+len(removals) == 0 {
		return 0, nil
	}
	for _, rec := range recs {
		if r.droppedFromStore(rec.ID) {
			r.unsaved.note(rec, nil) // retired from the store meanwhile
			continue
		}
		werr := r.journal.PutApp(rec)
		r.unsaved.note(rec, werr)
		if werr == nil {
			stored++
		} else if err == nil {
			err = werr
		}
	}
	if len(removals) > 0 {
		rerr := r.journal.RemoveApps(removals)
		r.unsaved.noteRemovals(removals, rerr == nil)
		if rerr == nil {
			stored += len(removals)
		} else if err == nil {
			err = rerr
		}
	}
	return stored, err
}

// droppedFromStore reports whether the application with this id has left the store for
// good (retired), or is no longer known.
func (r *Apps) droppedFromStore(id string) bool {
	aid, perr := records.ParseApplicationID(id)
	if perr != nil {
		return true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.apps[aid]
	return a == nil || a.saved.dropped
}
