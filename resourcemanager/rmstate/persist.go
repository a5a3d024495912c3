package rmstate

import (
	"fmt"
	"reflect"
	"sort"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/statestore"
)

// Journal is where the registry writes what it changed: the state store.
type Journal interface {
	PutApp(rec *statestore.AppRecord) error
	PutApps(recs []*statestore.AppRecord) error
	RemoveApps(ids []string) error
}

// persisted is what the registry keeps per application to know when to write it.
type persisted struct {
	version uint64
	last    *statestore.AppRecord // the last record written, without the launch context
	spec    []byte                // the AM's launch context and resource, marshalled once
	res     []byte
	dropped bool // removed from the store (state-store.max-completed-applications): never written again
}

// SetJournal makes the registry write every application whose stored fields a call
// changed, after the call and outside the registry's lock. Submit returns the write's
// error; other calls have no caller to tell, so their write errors go to onErr.
func (r *Apps) SetJournal(j Journal, onErr func(error)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.journal, r.journalErr = j, onErr
}

// SetStoreLimit bounds the finished applications kept in the store
// (yarn.resourcemanager.state-store.max-completed-applications); negative: no bound of
// its own (the in-memory limit applies).
func (r *Apps) SetStoreLimit(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.storeKeep = n
}

// extraKeepTokens is the AppRecord.Extra key of App.KeepTokens (1 when set).
const (
	extraKeepTokens = statestore.ExtraKeepTokens
	extraLaunchTime = statestore.ExtraLaunchTime
)

// record is what is stored of a, without the launch context and AM resource (which never
// change after submission and are added when writing).
func (a *App) record() *statestore.AppRecord {
	rec := &statestore.AppRecord{ID: a.ID.String(), Version: a.saved.version, User: a.User, Queue: a.Queue, Name: a.Name, Type: a.AppType,
		Tags: a.Tags, Priority: a.Priority, MaxAttempts: a.MaxAttempts, Unmanaged: a.Unmanaged, Failures: a.Failures,
		FailuresValidity: a.FailuresValidity, State: int32(a.State()), Final: int32(a.Final), SubmitTime: a.SubmitTime, StartTime: a.StartTime,
		FinishTime: a.FinishTime, Diagnostics: a.Diagnostics, LabelExpr: a.LabelExpr, AMLabelExpr: a.AMLabelExpr, Runtime: a.Runtime}
	if a.logAggFinal != 0 {
		rec.Extra = map[string]int64{extraLogAggregation: int64(a.logAggFinal)}
	}
	if a.KeepTokens {
		if rec.Extra == nil {
			rec.Extra = map[string]int64{}
		}
		rec.Extra[extraKeepTokens] = 1
	}
	if a.LaunchTime != 0 {
		if rec.Extra == nil {
			rec.Extra = map[string]int64{}
		}
		rec.Extra[extraLaunchTime] = a.LaunchTime
	}
	if len(a.Timeouts) > 0 {
		rec.Timeouts = make(map[int32]int64, len(a.Timeouts))
		for k, v := range a.Timeouts {
			rec.Timeouts[int32(k)] = v
		}
	}
	rec.Attempts = make([]statestore.AttemptRecord, len(a.Attempts))
	for i, at := range a.Attempts {
		ar := statestore.AttemptRecord{Attempt: at.ID.Attempt, State: int32(at.State()), Registered: at.Registered, Unregistered: at.Unregistered,
			Host: at.Host, RPCPort: at.RPCPort, TrackingURL: at.TrackingURL, Diagnostics: at.Diagnostics, StartTime: at.StartTime, FinishTime: at.FinishTime, ClientKey: at.ClientKey,
			AMNode: at.AMNode, AMNodeHTTP: at.AMNodeHTTP, AMExitStatus: at.AMExitStatus}
		if at.AMContainer != nil {
			ar.AMContainer = at.AMContainer.String()
		}
		rec.Attempts[i] = ar
	}
	return rec
}

// changedLocked returns the record to write for a when its stored fields changed since
// the last write (nil otherwise, or without a journal). The registry's lock is held.
func (r *Apps) changedLocked(a *App) *statestore.AppRecord {
	if r.journal == nil || a == nil || a.saved.dropped {
		return nil
	}
	rec := a.record()
	if a.saved.last != nil && reflect.DeepEqual(rec, a.saved.last) {
		return nil
	}
	a.saved.version++
	rec.Version = a.saved.version
	a.saved.last = rec
	if a.Attempt != nil {
		// What is written now is what the store says: no longer the record that said
		// the AM had registered.
		a.Attempt.RegisteredBefore = false
	}
	if a.saved.spec == nil && a.AMSpec != nil {
		a.saved.spec, _ = proto.Marshal(a.AMSpec)
	}
	if a.saved.res == nil && a.AMResource != nil {
		a.saved.res, _ = proto.Marshal(a.AMResource)
	}
	w := *rec
	w.AMSpec, w.AMResource = a.saved.spec, a.saved.res
	return &w
}

// Rederive runs fn like With, for changes a restart derives again from the stored
// record, and writes nothing for them: resuming an attempt after a restart clears its
// registration (its AM must register again), which the next restart would clear again
// from the record as stored. A restart with 10,000 running applications would otherwise
// rewrite every one before it serves (a second on ZooKeeper). A change made before fn
// and not yet written is written as With would.
func (r *Apps) Rederive(id records.ApplicationID, fn func(a *App, ok bool)) {
	r.mu.Lock()
	a, ok := r.apps[id]
	settled := ok && r.journal != nil && !a.saved.dropped && a.saved.last != nil && reflect.DeepEqual(a.record(), a.saved.last)
	fn(a, ok)
	var rec *statestore.AppRecord
	switch {
	case settled:
		// What is stored stands for the new state: the next change is compared with it
		// as changed, and written with the stored version's successor.
		a.saved.last = a.record()
	case ok:
		rec = r.changedLocked(a)
	}
	r.mu.Unlock()
	r.writeOrReport(rec)
}

// RederiveAttempt is Rederive for att, the current attempt of its application (false,
// running nothing, when it is not): an AM registering again after a restart, with the
// store's record already saying it registered, writes nothing.
func (r *Apps) RederiveAttempt(att records.AttemptID, fn func(a *App, at *Attempt)) bool {
	found := false
	r.Rederive(att.App, func(a *App, ok bool) {
		if ok && a.Attempt != nil && a.Attempt.ID == att {
			found = true
			fn(a, a.Attempt)
		}
	})
	return found
}

// write stores records taken under the lock; it runs after the lock is released.
func (r *Apps) write(recs ...*statestore.AppRecord) error {
	var first error
	for _, rec := range recs {
		if rec == nil {
			continue
		}
		if err := r.journal.PutApp(rec); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// writeOrReport is write for calls that cannot return the error (a refused record is
// kept for RetryUnsaved); while a batch is open the records are kept for Flush instead.
func (r *Apps) writeOrReport(recs ...*statestore.AppRecord) {
	r.batchMu.Lock()
	if r.batching {
		for _, rec := range recs {
			if rec != nil {
				r.batch[rec.ID] = rec // the newest version of each application
			}
		}
		r.batchMu.Unlock()
		return
	}
	r.batchMu.Unlock()
	var first error
	for _, rec := range recs {
		if rec == nil {
			continue
		}
		err := r.journal.PutApp(rec)
		r.unsaved.note(rec, err) // a refused write is kept for RetryUnsaved
		if err != nil && first == nil {
			first = err
		}
	}
	if first != nil && r.journalErr != nil {
		r.journalErr(first)
	}
}

// AppFromRecord rebuilds an application from the state store. Its attempts come back as
// they were stored, without AMRMTokens (the RM decides what becomes of them).
func AppFromRecord(rec *statestore.AppRecord) (*App, error) {
	id, err := records.ParseApplicationID(rec.ID)
	if err != nil {
		return nil, fmt.Errorf("stored application %q: %w", rec.ID, err)
	}
	a := &App{ID: id, User: rec.User, Queue: rec.Queue, Name: rec.Name, AppType: rec.Type, Tags: rec.Tags, Priority: rec.Priority,
		MaxAttempts: rec.MaxAttempts, Unmanaged: rec.Unmanaged, Failures: rec.Failures, FailuresValidity: rec.FailuresValidity,
		state: yarnpb.YarnApplicationStateProto(rec.State), Final: yarnpb.FinalApplicationStatusProto(rec.Final), SubmitTime: rec.SubmitTime,
		StartTime: rec.StartTime, FinishTime: rec.FinishTime, Diagnostics: rec.Diagnostics, LabelExpr: rec.LabelExpr, AMLabelExpr: rec.AMLabelExpr,
		Runtime: rec.Runtime, logAggFinal: yarnpb.LogAggregationStatusProto(rec.Extra[extraLogAggregation]), KeepTokens: rec.Extra[extraKeepTokens] != 0, LaunchTime: rec.Extra[extraLaunchTime]}
	if len(rec.AMSpec) > 0 {
		a.AMSpec = &yarnpb.ContainerLaunchContextProto{}
		if err := proto.Unmarshal(rec.AMSpec, a.AMSpec); err != nil {
			return nil, fmt.Errorf("stored application %s: launch context: %w", rec.ID, err)
		}
	}
	if len(rec.AMResource) > 0 {
		a.AMResource = &yarnpb.ResourceProto{}
		if err := proto.Unmarshal(rec.AMResource, a.AMResource); err != nil {
			return nil, fmt.Errorf("stored application %s: AM resource: %w", rec.ID, err)
		}
	}
	if len(rec.Timeouts) > 0 {
		a.Timeouts = map[yarnpb.ApplicationTimeoutTypeProto]int64{}
		for k, v := range rec.Timeouts {
			a.Timeouts[yarnpb.ApplicationTimeoutTypeProto(k)] = v
		}
	}
	for _, ar := range rec.Attempts {
		at := &Attempt{ID: id.Attempt(ar.Attempt), state: yarnpb.YarnApplicationAttemptStateProto(ar.State), Registered: ar.Registered,
			Unregistered: ar.Unregistered, Host: ar.Host, RPCPort: ar.RPCPort, TrackingURL: ar.TrackingURL, Diagnostics: ar.Diagnostics,
			StartTime: ar.StartTime, FinishTime: ar.FinishTime, ClientKey: ar.ClientKey, AMNode: ar.AMNode, AMNodeHTTP: ar.AMNodeHTTP, AMExitStatus: ar.AMExitStatus}
		if ar.AMContainer != "" {
			cid, err := records.ParseContainerID(ar.AMContainer)
			if err != nil {
				return nil, fmt.Errorf("stored application %s: attempt %d: %w", rec.ID, ar.Attempt, err)
			}
			at.AMContainer = &cid
		}
		a.Attempts = append(a.Attempts, at)
	}
	if n := len(a.Attempts); n > 0 {
		a.Attempt = a.Attempts[n-1]
	}
	a.saved = persisted{version: rec.Version, spec: rec.AMSpec, res: rec.AMResource}
	a.saved.last = a.record()
	a.saved.last.Version = rec.Version
	return a, nil
}

// Restore puts recovered applications in the registry, finished ones in retirement
// order, without writing them back.
func (r *Apps) Restore(apps []*App) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range apps {
		r.apps[a.ID] = a
	}
	// Oldest finish first, so the limit on completed applications drops the oldest.
	var done []*App
	for _, a := range apps {
		if a.Finished() {
			done = append(done, a)
		}
	}
	sortByFinish(done)
	for _, a := range done {
		if r.retired == nil {
			r.retired = map[records.ApplicationID]bool{}
		}
		r.retired[a.ID] = true
		r.finishedOrder = append(r.finishedOrder, a.ID)
	}
}

func sortByFinish(apps []*App) {
	sort.SliceStable(apps, func(i, j int) bool { return apps[i].FinishTime < apps[j].FinishTime })
}

// BeginBatch holds the writes of calls that cannot return an error (With, WithAttempt)
// until Flush, which stores them in one transaction: a restart that changes thousands of
// applications (attempts resumed or retried) writes them at once instead of one fsync
// each.
func (r *Apps) BeginBatch() {
	r.batchMu.Lock()
	defer r.batchMu.Unlock()
	r.batching, r.batch = true, map[string]*statestore.AppRecord{}
}

// Flush writes the held records and ends the batch.
func (r *Apps) Flush() error {
	r.mu.Lock()
	r.batchMu.Lock()
	recs := make([]*statestore.AppRecord, 0, len(r.batch))
	for _, rec := range r.batch {
		// An application retired (and removed from the store) during the batch stays out.
		if id, err := records.ParseApplicationID(rec.ID); err == nil {
			if a := r.apps[id]; a != nil && !a.saved.dropped {
				recs = append(recs, rec)
			}
		}
	}
	r.batching, r.batch = false, nil
	r.batchMu.Unlock()
	r.mu.Unlock()
	if len(recs) == 0 || r.journal == nil {
		return nil
	}
	return r.journal.PutApps(recs)
}
