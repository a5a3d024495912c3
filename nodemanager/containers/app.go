package containers

import (
	"sort"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/nodemanager/nmstore"
	"github.com/bobbin-yarn/bobbin/records"
)

// App is an application with containers on this node. Its id, user, ACLs and log
// aggregation context are taken from its first container here (as the Java NM's
// ApplicationImpl takes them) and never change; the rest changes through the Table.
type App struct {
	ID         records.ApplicationID
	User       string
	ACLs       []*yarnpb.ApplicationACLMapProto
	LogContext *yarnpb.LogAggregationContextProto

	// Under the table's lock.
	// serviceData is what its containers brought each auxiliary service, by name.
	serviceData map[string][]byte
	// legacySecret is a MapReduce shuffle job token recorded without service data.
	legacySecret []byte
	finished     bool // the RM said it ended here; its clean-up is under way
	// uploaded are the log file versions a rolling aggregation uploaded, rolled how many
	// rolled files it wrote.
	uploaded map[string]bool
	rolled   int
}

// RestoredApp is an application read back from the recovery store.
func RestoredApp(rec *nmstore.AppRecord) (*App, error) {
	id, err := records.ParseApplicationID(rec.ID)
	if err != nil {
		return nil, err
	}
	a := &App{ID: id, User: rec.User, serviceData: rec.ServiceData, legacySecret: rec.ShuffleSecret, finished: rec.Finished}
	for _, b := range rec.ACLs {
		acl := &yarnpb.ApplicationACLMapProto{}
		if proto.Unmarshal(b, acl) == nil {
			a.ACLs = append(a.ACLs, acl)
		}
	}
	if len(rec.LogContext) > 0 {
		a.LogContext = &yarnpb.LogAggregationContextProto{}
		if proto.Unmarshal(rec.LogContext, a.LogContext) != nil {
			a.LogContext = nil
		}
	}
	return a, nil
}

// RestoreApp puts back an application read from the recovery store; it returns what its
// containers brought the auxiliary services, for them to initialize it again, and a
// MapReduce shuffle job token an older NodeManager recorded in its place.
func (t *Table) RestoreApp(a *App) (serviceData map[string][]byte, legacySecret []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.apps[a.ID] = a
	return a.serviceData, a.legacySecret
}

// App looks an application up.
func (t *Table) App(id records.ApplicationID) (*App, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	a, ok := t.apps[id]
	return a, ok
}

// UserOf is the user of an application the node knows ("" if none).
func (t *Table) UserOf(id records.ApplicationID) string {
	if a, ok := t.App(id); ok {
		return a.User
	}
	return ""
}

// RunningApps are the applications with containers here that have not ended.
func (t *Table) RunningApps() []*yarnpb.ApplicationIdProto {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]*yarnpb.ApplicationIdProto, 0, len(t.apps))
	for id, a := range t.apps {
		if !a.finished {
			out = append(out, id.Proto())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetId() < out[j].GetId() })
	return out
}

// Unfinished are the applications whose end the RM has not told.
func (t *Table) Unfinished() []*App {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*App
	for _, a := range t.apps {
		if !a.finished {
			out = append(out, a)
		}
	}
	return out
}

// FinishedApps are the applications whose end a restart interrupted.
func (t *Table) FinishedApps() []records.ApplicationID {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []records.ApplicationID
	for id, a := range t.apps {
		if a.finished {
			out = append(out, id)
		}
	}
	return out
}

// AppSummary is an application with the containers it has here.
type AppSummary struct {
	*App
	Containers []string // container ids, sorted
}

// Summaries lists the applications by id, each with its containers.
func (t *Table) Summaries() []AppSummary {
	t.mu.Lock()
	defer t.mu.Unlock()
	byApp := map[records.ApplicationID][]string{}
	for id := range t.cs {
		byApp[id.Attempt.App] = append(byApp[id.Attempt.App], id.String())
	}
	out := make([]AppSummary, 0, len(t.apps))
	for id, a := range t.apps {
		ids := byApp[id]
		sort.Strings(ids)
		out = append(out, AppSummary{App: a, Containers: ids})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID.String() < out[j].ID.String() })
	return out
}

// EndApp takes an application off the node as the RM said it ended: it returns it (nil
// if unknown) and its containers still live, for the runner to kill. The application is
// marked finished, and its record says so, so that a restart resumes the clean-up.
func (t *Table) EndApp(id records.ApplicationID) (*App, []*Container) {
	t.mu.Lock()
	a := t.apps[id]
	delete(t.apps, id)
	var live []*Container
	for cid, c := range t.cs {
		if cid.Attempt.App == id && c.phase != Done {
			live = append(live, c)
		}
	}
	mark := a != nil && !a.finished
	if mark {
		a.finished = true
	}
	t.mu.Unlock()
	if mark {
		t.SaveApp(a)
	}
	return a, live
}

// SaveApp writes an application's record.
func (t *Table) SaveApp(a *App) {
	t.mu.Lock()
	rec := &nmstore.AppRecord{ID: a.ID.String(), User: a.User, ShuffleSecret: a.legacySecret, Finished: a.finished}
	if len(a.serviceData) > 0 {
		rec.ServiceData = make(map[string][]byte, len(a.serviceData))
		for k, v := range a.serviceData {
			rec.ServiceData[k] = v
		}
	}
	t.mu.Unlock()
	for _, acl := range a.ACLs {
		if b, err := proto.Marshal(acl); err == nil {
			rec.ACLs = append(rec.ACLs, b)
		}
	}
	if a.LogContext != nil {
		rec.LogContext, _ = proto.Marshal(a.LogContext)
	}
	t.journal.Write("record application "+rec.ID, func(s *nmstore.Store) error { return s.PutApp(rec) })
}

// ForgetApp removes an application's record: its clean-up is done.
func (t *Table) ForgetApp(id records.ApplicationID) {
	t.journal.Write("forget application "+id.String(), func(s *nmstore.Store) error { return s.RemoveApp(id.String()) })
}

// Uploaded is what a rolling log aggregation of a uploaded so far: the log file versions
// (a copy) and how many rolled files it wrote.
func (t *Table) Uploaded(a *App) (map[string]bool, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]bool, len(a.uploaded))
	for k := range a.uploaded {
		out[k] = true
	}
	return out, a.rolled
}

// NoteUploaded records one more rolled file of a's logs, with the versions it holds.
func (t *Table) NoteUploaded(a *App, keys []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if a.uploaded == nil {
		a.uploaded = map[string]bool{}
	}
	for _, k := range keys {
		a.uploaded[k] = true
	}
	a.rolled++
}
