package rmstate

import (
	"sync"
	"time"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
	"github.com/bobbin-yarn/bobbin/resourcemanager/statestore"
	"github.com/bobbin-yarn/bobbin/rpc/token"
)

// App is the RM's record of one submitted application. Its fields change only under the
// registry's lock; reports are copies made under it.
type App struct {
	ID          records.ApplicationID
	User        string
	Queue       string
	Name        string
	AppType     string
	Tags        []string
	Runtime     time.Duration // declared runtime estimate for backfilling (0: unknown)
	Priority    int32
	AMResource  *yarnpb.ResourceProto
	MaxAttempts int
	Unmanaged   bool
	AMSpec      *yarnpb.ContainerLaunchContextProto // the AM's launch context, for managed AMs
	// KeepTokens is the submission's cancel_tokens_when_complete=false: the delegation
	// tokens it carries are not cancelled when it ends.
	KeepTokens bool
	Attempt    *Attempt   // the current attempt, nil before one exists
	Attempts   []*Attempt // every attempt, oldest first
	// Failures are the times (ms) of the attempt failures that count toward maxAttempts;
	// with a validity interval only those inside it count (protocol.md §7.3).
	Failures         []int64
	FailuresValidity int64                            // attempt_failures_validity_interval in ms; <= 0: all count
	state            yarnpb.YarnApplicationStateProto // moved by Move only (lifecycle.go)
	Final            yarnpb.FinalApplicationStatusProto
	SubmitTime       int64
	// Timeouts are the application's expiry times (ms) by type: its lifetime, from the
	// submission or `yarn application -updateLifetime`.
	Timeouts map[yarnpb.ApplicationTimeoutTypeProto]int64
	// LabelExpr and amLabelExpr are the submission's node-label expressions (nil: not set).
	LabelExpr, AMLabelExpr *string
	StartTime              int64
	// LaunchTime is when its first AM container was launched (ms; 0: not yet), as the
	// Java RM's RMAppImpl.launchTime: application reports and REST show it.
	LaunchTime  int64
	FinishTime  int64
	Diagnostics string

	// logAgg is each node's log aggregation of the application (nil: none yet);
	// logAggFinal its settled status once every node's is final (0: not yet).
	logAgg      map[string]*nodeLogAggregation
	logAggFinal yarnpb.LogAggregationStatusProto

	saved persisted // what the state store has of it
}

// Attempt is one application attempt: its AMRMToken, its state and what its AM registered.
type Attempt struct {
	ID         records.AttemptID
	Token      *token.Token
	state      yarnpb.YarnApplicationAttemptStateProto // moved by Move only (lifecycle.go)
	Registered bool
	// RegisteredBefore: a restart resumed the attempt from a record that says its AM
	// had registered. The AM's registration again changes nothing the store needs
	// (RederiveAttempt), as the Java RM, which stores nothing at registration, writes
	// nothing either: after a restart with 10,000 AMs it would be 10,000 writes.
	RegisteredBefore bool
	Unregistered     bool
	Host             string
	RPCPort          int32
	TrackingURL      string
	Diagnostics      string
	StartTime        int64
	FinishTime       int64
	// LastResponse is the last allocate answer, marshalled, for an AM that retries
	// the call (same responseId) to get it again; kept as bytes because it carries
	// every container it handed out, and hundreds of AMs keep one each.
	LastResponse   []byte
	LastResponseID int32
	// SpareResponse is the answer before LastResponse: the AM has had it (its next call
	// carried the id of the one after), so its buffer is reused for the next answer
	// instead of allocating one as large (hundreds of KB at 100,000 containers a second).
	SpareResponse []byte
	Progress      float32              // what the AM last reported in allocate
	AMContainer   *records.ContainerID // the AM's container, once allocated (managed AMs)
	// AMNode and AMNodeHTTP are the AM container's node: its id and web address.
	AMNode, AMNodeHTTP string
	Launched           bool
	LaunchedAt         time.Time // when the NodeManager answered the AM's launch (zero: not yet)
	// ClientKey signs client-to-AM tokens on a kerberized RM (handed to the AM at register).
	ClientKey []byte
	// AMExitStatus is the AM container's exit status once the attempt failed
	// (exitcode.Invalid: none), which says whether the failure counted.
	AMExitStatus int32
	// LastPing is the AM's last sign of life (launch, register, allocate); the liveness
	// monitor expires attempts silent for yarn.am.liveness-monitor.expiry-interval-ms.
	// Zero while the AM container is not launched yet.
	LastPing time.Time
	// Constraints are the placement constraints the AM registered, by source tag; and
	// SchedulingRequests its pending SchedulingRequests without their counts, by key, so
	// that a request changing more than its count is refused (rmcore/placement.go).
	Constraints        map[string]*scheduler.Constraint
	SchedulingRequests map[SchedulingKey]*yarnpb.SchedulingRequestProto

	// serial orders the attempt's allocate calls and its failure (Apps.Serialize).
	serial sync.Mutex
}

// SchedulingKey keys an attempt's SchedulingRequests as the Java RM's SchedulerRequestKey.
type SchedulingKey struct {
	Priority  int32
	RequestID int64
}

// serialize runs fn holding the attempt's own lock.
func (at *Attempt) serialize(fn func()) {
	at.serial.Lock()
	defer at.serial.Unlock()
	fn()
}

// WithAttempt runs fn on the application and current attempt att under the registry lock.
// It returns false when att is not the current attempt of a known application.
func (r *Apps) WithAttempt(att records.AttemptID, fn func(a *App, at *Attempt)) bool {
	r.mu.Lock()
	a, ok := r.apps[att.App]
	if !ok || a.Attempt == nil || a.Attempt.ID != att {
		r.mu.Unlock()
		return false
	}
	fn(a, a.Attempt)
	rec := r.changedLocked(a)
	r.mu.Unlock()
	r.writeOrReport(rec)
	return true
}

// Serialize runs fn holding attempt att's own lock, not the registry's: one allocate at a
// time runs for an attempt, and the attempt does not fail halfway through one (the Java
// RM's AllocateResponseLock). fn takes the registry's lock itself as it needs to. It
// reports false, without running fn, when att is not its application's current attempt.
func (r *Apps) Serialize(att records.AttemptID, fn func()) bool {
	r.mu.Lock()
	var at *Attempt
	if a, ok := r.apps[att.App]; ok && a.Attempt != nil && a.Attempt.ID == att {
		at = a.Attempt
	}
	r.mu.Unlock()
	if at == nil {
		return false
	}
	at.serialize(fn)
	return true
}

// Submit records a new application; an id already known is not replaced (a client's
// retried submission), and submit reports false. An unfinished application is first
// checked by limits (nil: none) against the unfinished applications already recorded,
// under the same hold of the lock, so concurrent submissions cannot both take the last
// place; a reason it returns fails the application (FAILED, the reason its diagnostics,
// its attempt dropped) and is returned too.
func (r *Apps) Submit(a *App, limits func(total, inQueue, byUser int) string) (bool, string, error) {
	r.mu.Lock()
	if _, ok := r.apps[a.ID]; ok {
		r.mu.Unlock()
		return false, "", nil
	}
	var rejected string
	if limits != nil && !a.Finished() {
		if rejected = limits(r.liveCountsLocked(a.Queue, a.User)); rejected != "" {
			if err := a.Move(AppRejected); err != nil {
				r.mu.Unlock()
				return false, "", err
			}
			a.Final, a.FinishTime, a.Diagnostics = yarnpb.FinalApplicationStatusProto_APP_FAILED, r.now().UnixMilli(), rejected
			a.Attempt, a.Attempts = nil, nil
		}
	}
	r.apps[a.ID] = a
	rec := r.changedLocked(a)
	r.mu.Unlock()
	if err := r.write(rec); err != nil {
		// Not stored, not accepted: the client hears the error and nothing is lost.
		r.mu.Lock()
		delete(r.apps, a.ID)
		r.mu.Unlock()
		return false, "", err
	}
	return true, rejected, nil
}

// liveCountsLocked counts the unfinished applications: all of them, those in queue, and
// those of user in queue (the Capacity Scheduler's submission limits); r.mu is held.
func (r *Apps) liveCountsLocked(queue, user string) (total, inQueue, byUser int) {
	for _, a := range r.apps {
		if a.Finished() {
			continue
		}
		total++
		if a.Queue == queue {
			inQueue++
			if a.User == user {
				byUser++
			}
		}
	}
	return total, inQueue, byUser
}

// Kill moves an unfinished application to KILLED. It reports whether it did and whether
// the app exists.
func (r *Apps) Kill(id records.ApplicationID, now int64, diagnostics string) (killed, found bool) {
	r.With(id, func(a *App, ok bool) {
		if found = ok; !ok || a.Finished() {
			return
		}
		if a.Move(AppKilled) != nil {
			return
		}
		killed = true
		a.Final, a.FinishTime, a.Diagnostics = yarnpb.FinalApplicationStatusProto_APP_KILLED, now, diagnostics
		if at := a.Attempt; at != nil && at.Move(AttemptKilled) == nil {
			at.FinishTime, at.Diagnostics = now, diagnostics
		}
	})
	return killed, found
}

// Move changes an unfinished application's queue.
func (r *Apps) Move(id records.ApplicationID, queue string) (found, finished bool) {
	r.With(id, func(a *App, ok bool) {
		if found = ok; !ok {
			return
		}
		if finished = a.Finished(); !finished {
			a.Queue = queue
		}
	})
	return found, finished
}

// Apps hands out application ids and holds the applications by id.
type Apps struct {
	clusterTimestamp int64
	now              func() time.Time // the RM's clock, for the seconds a lifetime has left
	web              webBases         // guarded by mu
	logAgg           LogAggregationSettings

	mu     sync.Mutex
	lastID int32
	apps   map[records.ApplicationID]*App
	// finishedOrder lists ended applications oldest first, for retire.
	finishedOrder []records.ApplicationID
	retired       map[records.ApplicationID]bool

	journal    Journal     // nil: nothing is stored
	journalErr func(error) // where write errors without a caller go
	// storeKeep bounds the finished applications kept in the store
	// (yarn.resourcemanager.state-store.max-completed-applications; negative: as many as
	// in memory); the first unstored of finishedOrder have left the store already.
	storeKeep, unstored int
	// batchMu guards batching and batch (BeginBatch, Flush); it is taken after mu.
	batchMu  sync.Mutex
	batching bool
	batch    map[string]*statestore.AppRecord
	// unsaved holds the writes the store refused, until RetryUnsaved stores them.
	unsaved unsavedWrites
}

func NewApps(clusterTimestamp int64, now func() time.Time) *Apps {
	return &Apps{clusterTimestamp: clusterTimestamp, now: now, apps: map[records.ApplicationID]*App{}, storeKeep: -1}
}

// NewID returns the next application id of this RM run.
func (r *Apps) NewID() records.ApplicationID {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastID++
	return records.ApplicationID{ClusterTimestamp: r.clusterTimestamp, ID: r.lastID}
}

func (r *Apps) Exists(id records.ApplicationID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.apps[id]
	return ok
}

// AttemptIDs lists an application's attempts.
func (r *Apps) AttemptIDs(id records.ApplicationID) []records.AttemptID {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.apps[id]
	if !ok {
		return nil
	}
	out := make([]records.AttemptID, len(a.Attempts))
	for i, at := range a.Attempts {
		out[i] = at.ID
	}
	return out
}

// Retire notes that id finished and forgets the oldest finished applications beyond
// keep (yarn.resourcemanager.max-completed-applications), returning them.
func (r *Apps) Retire(id records.ApplicationID, keep int) []records.ApplicationID {
	r.mu.Lock()
	if r.retired[id] {
		r.mu.Unlock()
		return nil
	}
	if r.retired == nil {
		r.retired = map[records.ApplicationID]bool{}
	}
	r.retired[id] = true
	r.finishedOrder = append(r.finishedOrder, id)
	var gone []records.ApplicationID
	var ids []string
	for len(r.finishedOrder) > keep {
		old := r.finishedOrder[0]
		r.finishedOrder = r.finishedOrder[1:]
		delete(r.apps, old)
		delete(r.retired, old)
		gone = append(gone, old)
		if r.unstored > 0 {
			r.unstored-- // it left the store before it left memory
		} else {
			ids = append(ids, old.String())
		}
	}
	if r.journal != nil && r.storeKeep >= 0 && len(r.finishedOrder)-r.unstored > r.storeKeep {
		// The store keeps fewer finished applications than memory: the oldest leave it
		// now and are never written again (a restart will not bring them back).
		for _, old := range r.finishedOrder[r.unstored : len(r.finishedOrder)-r.storeKeep] {
			ids = append(ids, old.String())
			if a := r.apps[old]; a != nil {
				a.saved.dropped = true
			}
		}
		r.unstored = len(r.finishedOrder) - r.storeKeep
	}
	journal, onErr := r.journal, r.journalErr
	r.mu.Unlock()
	// The store is written outside the registry's lock, as every other write is.
	if journal != nil && len(ids) > 0 {
		err := journal.RemoveApps(ids)
		r.unsaved.noteRemovals(ids, err == nil)
		if err != nil && onErr != nil {
			onErr(err)
		}
	}
	return gone
}

// LiveAttempt is an application's current attempt and user, if it has one and has not
// finished.
func (r *Apps) LiveAttempt(id records.ApplicationID) (records.AttemptID, string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if app, ok := r.apps[id]; ok && app.Attempt != nil && !app.Finished() {
		return app.Attempt.ID, app.User, true
	}
	return records.AttemptID{}, "", false
}

// With runs fn under the registry's lock with the application (nil, false when unknown).
func (r *Apps) With(id records.ApplicationID, fn func(a *App, ok bool)) {
	r.mu.Lock()
	a, ok := r.apps[id]
	fn(a, ok)
	var rec *statestore.AppRecord
	if ok {
		rec = r.changedLocked(a)
	}
	r.mu.Unlock()
	r.writeOrReport(rec)
}

// View runs fn under the registry's lock with the application, if known; fn only reads.
func (r *Apps) View(id records.ApplicationID, fn func(a *App)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a, ok := r.apps[id]; ok {
		fn(a)
	}
}

// Each runs fn under the registry's lock for every application; fn only reads (changes
// go through With or WithAttempt, which write them to the state store). The monitor scans
// every application each tick: a scan that journalled would build a record per
// application per tick.
func (r *Apps) Each(fn func(a *App)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range r.apps {
		fn(a)
	}
}

// ViewAttempt runs fn under the registry's lock with att's application and attempt when
// att is its application's current attempt; fn only reads. It reports whether it ran fn.
func (r *Apps) ViewAttempt(att records.AttemptID, fn func(a *App, at *Attempt)) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.apps[att.App]
	if !ok || a.Attempt == nil || a.Attempt.ID != att {
		return false
	}
	fn(a, a.Attempt)
	return true
}

// ViewPastAttempt runs fn on any attempt of an application, the current one or one that
// ended before it (false: no such attempt); fn reads, as ViewAttempt's does.
func (r *Apps) ViewPastAttempt(att records.AttemptID, fn func(a *App, at *Attempt)) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.apps[att.App]
	if !ok {
		return false
	}
	for _, at := range a.Attempts {
		if at.ID == att {
			fn(a, at)
			return true
		}
	}
	return false
}

// CountedFailures is how many counted failures lie inside the validity window.
func (a *App) CountedFailures(nowMs int64) int {
	if a.FailuresValidity <= 0 {
		return len(a.Failures)
	}
	n := 0
	for _, t := range a.Failures {
		if t > nowMs-a.FailuresValidity {
			n++
		}
	}
	return n
}

// ISO8601 is Hadoop's Times.formatISO8601 layout (SimpleDateFormat
// "yyyy-MM-dd'T'HH:mm:ss.SSSZ"), in which lifetimes travel.
const ISO8601 = "2006-01-02T15:04:05.000-0700"

// Apache's texts for an application without a lifetime.
const (
	timeoutUnlimited = "UNLIMITED"
	timeoutUnknown   = -1
)
