package resourcemanager

import (
	"sort"
	"sync"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
)

// app is the RM's record of one submitted application.
type app struct {
	id          records.ApplicationID
	user        string
	queue       string
	name        string
	appType     string
	tags        []string
	state       yarnpb.YarnApplicationStateProto
	final       yarnpb.FinalApplicationStatusProto
	startTime   int64
	finishTime  int64
	diagnostics string
}

// appRegistry hands out application ids and holds the applications by id.
type appRegistry struct {
	clusterTimestamp int64

	mu     sync.Mutex
	lastID int32
	apps   map[records.ApplicationID]*app
}

func newAppRegistry(clusterTimestamp int64) *appRegistry {
	return &appRegistry{clusterTimestamp: clusterTimestamp, apps: map[records.ApplicationID]*app{}}
}

// newID returns the next application id of this RM run.
func (r *appRegistry) newID() records.ApplicationID {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastID++
	return records.ApplicationID{ClusterTimestamp: r.clusterTimestamp, ID: r.lastID}
}

func (r *appRegistry) get(id records.ApplicationID) (*app, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.apps[id]
	return a, ok
}

// appFilter is GetApplicationsRequest's selection.
type appFilter struct {
	states map[yarnpb.YarnApplicationStateProto]bool
	types  map[string]bool // lower-cased, as YARN compares types case-insensitively
	users  map[string]bool
	queues map[string]bool
	tags   map[string]bool
	limit  int64
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

// list returns the matching applications in id order.
func (r *appRegistry) list(f *appFilter) []*app {
	r.mu.Lock()
	var out []*app
	for _, a := range r.apps {
		if f.match(a) {
			out = append(out, a)
		}
	}
	r.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].id.ID < out[j].id.ID })
	if f.limit > 0 && int64(len(out)) > f.limit {
		out = out[:f.limit]
	}
	return out
}
