package resourcemanager

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/rpc/token"
)

// app is the RM's record of one submitted application. Its fields change only under the
// registry's lock; reports are copies made under it.
type app struct {
	id          records.ApplicationID
	user        string
	queue       string
	name        string
	appType     string
	tags        []string
	runtime     time.Duration // declared runtime estimate for backfilling (0: unknown)
	priority    int32
	amResource  *yarnpb.ResourceProto
	maxAttempts int
	unmanaged   bool
	amSpec      *yarnpb.ContainerLaunchContextProto // the AM's launch context, for managed AMs
	attempt     *attempt                            // the current attempt, nil before one exists
	attempts    []*attempt                          // every attempt, oldest first
	// failures are the times (ms) of the attempt failures that count toward maxAttempts;
	// with a validity interval only those inside it count (protocol.md §7.3).
	failures         []int64
	failuresValidity int64 // attempt_failures_validity_interval in ms; <= 0: all count
	state            yarnpb.YarnApplicationStateProto
	final            yarnpb.FinalApplicationStatusProto
	submitTime       int64
	// timeouts are the application's expiry times (ms) by type: its lifetime, from the
	// submission or `yarn application -updateLifetime`.
	timeouts map[yarnpb.ApplicationTimeoutTypeProto]int64
	// labelExpr and amLabelExpr are the submission's node-label expressions (nil: not set).
	labelExpr, amLabelExpr *string
	startTime              int64
	finishTime             int64
	diagnostics            string
}

// attempt is one application attempt: its AMRMToken, its state and what its AM registered.
type attempt struct {
	id           records.AttemptID
	token        *token.Token
	state        yarnpb.YarnApplicationAttemptStateProto
	registered   bool
	unregistered bool
	host         string
	rpcPort      int32
	trackingURL  string
	diagnostics  string
	startTime    int64
	finishTime   int64
	// lastResponse is the last allocate answer, marshalled, for an AM that retries
	// the call (same responseId) to get it again; kept as bytes because it carries
	// every container it handed out, and hundreds of AMs keep one each.
	lastResponse   []byte
	lastResponseID int32
	progress       float32              // what the AM last reported in allocate
	amContainer    *records.ContainerID // the AM's container, once allocated (managed AMs)
	launched       bool
	// lastPing is the AM's last sign of life (launch, register, allocate); the liveness
	// monitor expires attempts silent for yarn.am.liveness-monitor.expiry-interval-ms.
	// Zero while the AM container is not launched yet.
	lastPing time.Time
}

// ended reports whether the attempt reached a final state.
func (at *attempt) ended() bool {
	switch at.state {
	case yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FINISHED, yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FAILED,
		yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_KILLED:
		return true
	}
	return false
}

// finished reports whether the app reached a final state.
func (a *app) finished() bool {
	switch a.state {
	case yarnpb.YarnApplicationStateProto_FINISHED, yarnpb.YarnApplicationStateProto_FAILED, yarnpb.YarnApplicationStateProto_KILLED:
		return true
	}
	return false
}

// report is the ApplicationReport clients see (protocol.md §7.2): before an AM
// registers, host "N/A", rpc port -1, final status UNDEFINED.
func (a *app) report(now time.Time) *yarnpb.ApplicationReportProto {
	r := &yarnpb.ApplicationReportProto{
		ApplicationId:          a.id.Proto(),
		User:                   proto.String(a.user),
		Queue:                  proto.String(a.queue),
		Name:                   proto.String(a.name),
		Host:                   proto.String("N/A"),
		RpcPort:                proto.Int32(-1),
		YarnApplicationState:   a.state.Enum(),
		TrackingUrl:            proto.String("N/A"),
		Diagnostics:            proto.String(a.diagnostics),
		StartTime:              proto.Int64(a.startTime),
		FinishTime:             proto.Int64(a.finishTime),
		FinalApplicationStatus: a.final.Enum(),
		Progress:               proto.Float32(progressOf(a)),
		ApplicationType:        proto.String(a.appType),
		ApplicationTags:        append([]string(nil), a.tags...),
		Priority:               &yarnpb.PriorityProto{Priority: proto.Int32(a.priority)},
		SubmitTime:             proto.Int64(a.submitTime),
		AppResource_Usage:      &yarnpb.ApplicationResourceUsageReportProto{NumUsedContainers: proto.Int32(0), NumReservedContainers: proto.Int32(0)},
		AppTimeouts:            a.timeoutReports(now),
		// Bobbin's NodeManagers keep logs on their nodes (no aggregation): the Java RM
		// reports DISABLED then.
		LogAggregationStatus:   yarnpb.LogAggregationStatusProto_LOG_DISABLED.Enum(),
		UnmanagedApplication:   proto.Bool(a.unmanaged),
		AppNodeLabelExpression: proto.String(labelReport(a.labelExpr)),
		// The Java RM gives the AM request the default partition when nothing was asked.
		AmNodeLabelExpression: proto.String(labelReport(cmpOr(a.amLabelExpr, ""))),
	}
	if at := a.attempt; at != nil {
		r.CurrentApplicationAttemptId = at.id.Proto()
		if at.registered && a.state != yarnpb.YarnApplicationStateProto_KILLED {
			// From registration on, clients reach the AM at what it registered (an AM
			// that registered no tracking URL shows N/A, as in the Java RM).
			r.Host, r.RpcPort = proto.String(at.host), proto.Int32(at.rpcPort)
			r.TrackingUrl, r.OriginalTrackingUrl = proto.String(cmpOrString(at.trackingURL, "N/A")), proto.String(at.trackingURL)
		}
		if a.unmanaged && !a.finished() {
			// An unmanaged AM is run by the client, which takes its AMRMToken from here.
			r.AmRmToken = at.token.Proto()
		}
	}
	return r
}

// withAttempt runs fn on the application and current attempt att under the registry lock.
// It returns false when att is not the current attempt of a known application.
func (r *appRegistry) withAttempt(att records.AttemptID, fn func(a *app, at *attempt)) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.apps[att.App]
	if !ok || a.attempt == nil || a.attempt.id != att {
		return false
	}
	fn(a, a.attempt)
	return true
}

// labelReport is how the Java RM reports a node-label expression: "<Not set>" when none
// was given, "<DEFAULT_PARTITION>" when it is empty.
func labelReport(e *string) string {
	switch {
	case e == nil:
		return "<Not set>"
	case strings.TrimSpace(*e) == "":
		return "<DEFAULT_PARTITION>"
	}
	return *e
}

// cmpOr is p, or a pointer to def when p is nil.
func cmpOr(p *string, def string) *string {
	if p == nil {
		return &def
	}
	return p
}

// cmpOrString is s, or def when s is empty.
func cmpOrString(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// progressOf is the application's progress as its AM last reported it; a finished,
// failed or killed application shows 100%, as from the Java RM.
func progressOf(a *app) float32 {
	if a.finished() {
		return 1
	}
	if a.attempt != nil {
		return a.attempt.progress
	}
	return 0
}

// submit records a new application; an id already known is not replaced (a client's
// retried submission), and submit reports false.
func (r *appRegistry) submit(a *app) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.apps[a.id]; ok {
		return false
	}
	r.apps[a.id] = a
	return true
}

// reportOf returns a copy of an application's report.
func (r *appRegistry) reportOf(id records.ApplicationID) (*yarnpb.ApplicationReportProto, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.apps[id]
	if !ok {
		return nil, false
	}
	return a.report(r.now()), true
}

// kill moves an unfinished application to KILLED. It reports whether it did and whether
// the app exists.
func (r *appRegistry) kill(id records.ApplicationID, now int64, diagnostics string) (killed, found bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.apps[id]
	if !ok {
		return false, false
	}
	if !a.finished() {
		killed = true
		a.state, a.final = yarnpb.YarnApplicationStateProto_KILLED, yarnpb.FinalApplicationStatusProto_APP_KILLED
		a.finishTime, a.diagnostics = now, diagnostics
		if at := a.attempt; at != nil && !at.ended() {
			at.state, at.finishTime, at.diagnostics = yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_KILLED, now, diagnostics
		}
	}
	return killed, true
}

// move changes an unfinished application's queue.
func (r *appRegistry) move(id records.ApplicationID, queue string) (found, finished bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.apps[id]
	if !ok {
		return false, false
	}
	if a.finished() {
		return true, true
	}
	a.queue = queue
	return true, false
}

// appRegistry hands out application ids and holds the applications by id.
type appRegistry struct {
	clusterTimestamp int64
	now              func() time.Time // the RM's clock, for the seconds a lifetime has left

	mu     sync.Mutex
	lastID int32
	apps   map[records.ApplicationID]*app
	// finishedOrder lists ended applications oldest first, for retire.
	finishedOrder []records.ApplicationID
	retired       map[records.ApplicationID]bool
}

func newAppRegistry(clusterTimestamp int64, now func() time.Time) *appRegistry {
	return &appRegistry{clusterTimestamp: clusterTimestamp, now: now, apps: map[records.ApplicationID]*app{}}
}

// newID returns the next application id of this RM run.
func (r *appRegistry) newID() records.ApplicationID {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastID++
	return records.ApplicationID{ClusterTimestamp: r.clusterTimestamp, ID: r.lastID}
}

func (r *appRegistry) exists(id records.ApplicationID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.apps[id]
	return ok
}

// appFilter is GetApplicationsRequest's selection.
type appFilter struct {
	states map[yarnpb.YarnApplicationStateProto]bool
	types  map[string]bool // lower-cased, as YARN compares types case-insensitively
	users  map[string]bool
	queues map[string]bool
	tags   map[string]bool
	limit  int64
	name   string // 3.x: exact application name
	// Start and finish time ranges in ms (0 = open).
	startBegin, startEnd, finishBegin, finishEnd int64
}

func (f *appFilter) match(a *app) bool {
	if len(f.states) > 0 && !f.states[a.state] {
		return false
	}
	if len(f.types) > 0 && !f.types[lower(a.appType)] {
		return false
	}
	if len(f.users) > 0 && !f.users[a.user] {
		return false
	}
	if len(f.queues) > 0 && !f.queues[a.queue] {
		return false
	}
	if f.name != "" && a.name != f.name {
		return false
	}
	if (f.startBegin > 0 && a.startTime < f.startBegin) || (f.startEnd > 0 && a.startTime > f.startEnd) {
		return false
	}
	if (f.finishBegin > 0 && a.finishTime < f.finishBegin) || (f.finishEnd > 0 && (a.finishTime == 0 || a.finishTime > f.finishEnd)) {
		return false
	}
	if len(f.tags) > 0 {
		hit := false
		for _, t := range a.tags {
			hit = hit || f.tags[lower(t)]
		}
		if !hit {
			return false
		}
	}
	return true
}

// list returns the reports of the matching applications in id order.
func (r *appRegistry) list(f *appFilter) []*yarnpb.ApplicationReportProto {
	r.mu.Lock()
	defer r.mu.Unlock()
	var hits []*app
	for _, a := range r.apps {
		if f.match(a) {
			hits = append(hits, a)
		}
	}
	sort.Slice(hits, func(i, j int) bool { return hits[i].id.ID < hits[j].id.ID })
	if f.limit > 0 && int64(len(hits)) > f.limit {
		hits = hits[:f.limit]
	}
	out := make([]*yarnpb.ApplicationReportProto, len(hits))
	for i, a := range hits {
		out[i] = a.report(r.now())
	}
	return out
}

// attemptReport reports one attempt of an application, current or past.
func (r *appRegistry) attemptReport(att records.AttemptID) (*yarnpb.ApplicationAttemptReportProto, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.apps[att.App]
	if !ok {
		return nil, false
	}
	for _, at := range a.attempts {
		if at.id == att {
			return at.report(), true
		}
	}
	return nil, false
}

// attemptReports reports every attempt of an application, oldest first.
func (r *appRegistry) attemptReports(id records.ApplicationID) []*yarnpb.ApplicationAttemptReportProto {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.apps[id]
	if !ok {
		return nil
	}
	out := make([]*yarnpb.ApplicationAttemptReportProto, 0, len(a.attempts))
	for _, at := range a.attempts {
		out = append(out, at.report())
	}
	return out
}

func (at *attempt) report() *yarnpb.ApplicationAttemptReportProto {
	host, port := "N/A", int32(-1)
	if at.registered {
		host, port = at.host, at.rpcPort
	}
	r := &yarnpb.ApplicationAttemptReportProto{
		ApplicationAttemptId:        at.id.Proto(),
		Host:                        proto.String(host),
		RpcPort:                     proto.Int32(port),
		TrackingUrl:                 proto.String(at.trackingURL),
		OriginalTrackingUrl:         proto.String(at.trackingURL),
		Diagnostics:                 proto.String(at.diagnostics),
		YarnApplicationAttemptState: at.state.Enum(),
		StartTime:                   proto.Int64(at.startTime),
		FinishTime:                  proto.Int64(at.finishTime),
	}
	if at.amContainer != nil {
		r.AmContainerId = at.amContainer.Proto()
	}
	return r
}

// attemptIDs lists an application's attempts.
func (r *appRegistry) attemptIDs(id records.ApplicationID) []records.AttemptID {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.apps[id]
	if !ok {
		return nil
	}
	out := make([]records.AttemptID, len(a.attempts))
	for i, at := range a.attempts {
		out[i] = at.id
	}
	return out
}

// retire notes that id finished and forgets the oldest finished applications beyond
// keep (yarn.resourcemanager.max-completed-applications), returning them.
func (r *appRegistry) retire(id records.ApplicationID, keep int) []records.ApplicationID {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.retired[id] {
		return nil
	}
	if r.retired == nil {
		r.retired = map[records.ApplicationID]bool{}
	}
	r.retired[id] = true
	r.finishedOrder = append(r.finishedOrder, id)
	var gone []records.ApplicationID
	for len(r.finishedOrder) > keep {
		old := r.finishedOrder[0]
		r.finishedOrder = r.finishedOrder[1:]
		delete(r.apps, old)
		delete(r.retired, old)
		gone = append(gone, old)
	}
	return gone
}

// liveAttempt is an application's current attempt and user, if it has one and has not
// finished.
func (r *appRegistry) liveAttempt(id records.ApplicationID) (records.AttemptID, string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if app, ok := r.apps[id]; ok && app.attempt != nil && !app.finished() {
		return app.attempt.id, app.user, true
	}
	return records.AttemptID{}, "", false
}

// RuntimeTag is the application tag that declares a runtime estimate for backfilling
// (docs/scheduling.md §5): bobbin.runtime=<duration>, e.g. -Dmapreduce.job.tags=bobbin.runtime=20m.
const RuntimeTag = "bobbin.runtime="

// declaredRuntime is an application's runtime estimate for backfilling: its
// bobbin.runtime tag, else its lifetime (lifetimeMs, when positive), else 0 (unknown: never
// started ahead of anyone). A tag that is not a positive duration is refused.
func declaredRuntime(tags []string, lifetimeMs int64) (time.Duration, error) {
	for _, t := range tags {
		v, ok := strings.CutPrefix(strings.ToLower(strings.TrimSpace(t)), RuntimeTag)
		if !ok {
			continue
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			if secs, err2 := strconv.ParseInt(v, 10, 64); err2 == nil {
				d, err = time.Duration(secs)*time.Second, nil
			}
		}
		if err != nil || d <= 0 {
			return 0, fmt.Errorf("application tag %q: %s needs a positive duration such as 20m or 90s", t, RuntimeTag)
		}
		return d, nil
	}
	if lifetimeMs > 0 {
		return time.Duration(lifetimeMs) * time.Millisecond, nil
	}
	return 0, nil
}

// with runs fn under the registry's lock with the application (nil, false when unknown).
func (r *appRegistry) with(id records.ApplicationID, fn func(a *app, ok bool)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.apps[id]
	fn(a, ok)
}

// each runs fn under the registry's lock for every application.
func (r *appRegistry) each(fn func(a *app)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range r.apps {
		fn(a)
	}
}
