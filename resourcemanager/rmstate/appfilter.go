package rmstate

import (
	"sort"
	"strings"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
)

// AppFilter is GetApplicationsRequest's selection.
type AppFilter struct {
	States map[yarnpb.YarnApplicationStateProto]bool
	Types  map[string]bool // lower-cased, as YARN compares types case-insensitively
	Users  map[string]bool
	Queues map[string]bool
	Tags   map[string]bool
	Limit  int64
	Name   string // 3.x: exact application name
	// Start and finish time ranges in ms (0 = open).
	StartBegin, StartEnd, FinishBegin, FinishEnd int64
}

// queueMatches reports whether an application of queue q passes the queue filter: by
// the name it is kept under, or by a path that ends in it (a Capacity Scheduler leaf is
// kept by its name, which is unique, and 3.3+ clients name it by its path, root.default).
func (f *AppFilter) queueMatches(q string) bool {
	if f.Queues[q] {
		return true
	}
	for name := range f.Queues {
		if strings.HasSuffix(name, "."+q) {
			return true
		}
	}
	return false
}

func (f *AppFilter) match(a *App) bool {
	if len(f.States) > 0 && !f.States[a.State()] {
		return false
	}
	if len(f.Types) > 0 && !f.Types[strings.ToLower(a.AppType)] {
		return false
	}
	if len(f.Users) > 0 && !f.Users[a.User] {
		return false
	}
	if len(f.Queues) > 0 && !f.queueMatches(a.Queue) {
		return false
	}
	if f.Name != "" && a.Name != f.Name {
		return false
	}
	if (f.StartBegin > 0 && a.StartTime < f.StartBegin) || (f.StartEnd > 0 && a.StartTime > f.StartEnd) {
		return false
	}
	if (f.FinishBegin > 0 && a.FinishTime < f.FinishBegin) || (f.FinishEnd > 0 && (a.FinishTime == 0 || a.FinishTime > f.FinishEnd)) {
		return false
	}
	if len(f.Tags) > 0 {
		hit := false
		for _, t := range a.Tags {
			hit = hit || f.Tags[strings.ToLower(t)]
		}
		if !hit {
			return false
		}
	}
	return true
}

// List returns the reports of the matching applications in id order.
func (r *Apps) List(f *AppFilter) []*yarnpb.ApplicationReportProto {
	r.mu.Lock()
	defer r.mu.Unlock()
	var hits []*App
	for _, a := range r.apps {
		if f.match(a) {
			hits = append(hits, a)
		}
	}
	sort.Slice(hits, func(i, j int) bool { return hits[i].ID.ID < hits[j].ID.ID })
	if f.Limit > 0 && int64(len(hits)) > f.Limit {
		hits = hits[:f.Limit]
	}
	out := make([]*yarnpb.ApplicationReportProto, len(hits))
	for i, a := range hits {
		out[i] = a.report(r.now(), r.web, r.logAgg)
	}
	return out
}
