package rmstate

import (
	"sort"
	"time"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/statestore"
)

// extraLogAggregation is the AppRecord.Extra key of an application's final log
// aggregation status.
const extraLogAggregation = statestore.ExtraLogAggregation

// Log aggregation status, as the Java RM's RMAppImpl reports it (3.x field
// log_aggregation_status): every node an application ran on starts NOT_START; the
// NodeManagers' heartbeats report RUNNING, SUCCEEDED or FAILED (with a reason) per node;
// the application's status is derived from its nodes'. A finished application whose
// nodes have not all reported within yarn.log-aggregation-status.time-out.ms is TIME_OUT.
// Once every node reported a final status the application's is final, and stored.

// LogAggregationSettings are the RM's log aggregation keys.
type LogAggregationSettings struct {
	Enabled bool          // yarn.log-aggregation-enable
	Timeout time.Duration // yarn.log-aggregation-status.time-out.ms
}

// nodeLogAggregation is one node's aggregation of an application's logs.
type nodeLogAggregation struct {
	Status      yarnpb.LogAggregationStatusProto
	Diagnostics string
}

// NodeLogAggregation is one node's log aggregation of an application, for the web UI.
type NodeLogAggregation struct {
	Node, Status, Diagnostics string
}

// SetLogAggregation sets how application reports show log aggregation.
func (r *Apps) SetLogAggregation(s LogAggregationSettings) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logAgg = s
}

// RanOn notes that an application has a container on node: the node will aggregate its
// logs when it ends.
func (r *Apps) RanOn(id records.ApplicationID, node string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ranOnLocked(id, node)
}

func (r *Apps) ranOnLocked(id records.ApplicationID, node string) {
	a, ok := r.apps[id]
	if !ok || !r.logAgg.Enabled || a.logAggFinal != 0 {
		return
	}
	if a.logAgg == nil {
		a.logAgg = map[string]*nodeLogAggregation{}
	}
	if _, ok := a.logAgg[node]; !ok {
		a.logAgg[node] = &nodeLogAggregation{Status: yarnpb.LogAggregationStatusProto_LOG_NOT_START}
	}
}

// AppNode is an application and a node it ran a container on.
type AppNode struct {
	App  records.ApplicationID
	Node string
}

// RanOnAll is RanOn for each pair (repeats are harmless), under one hold of the lock.
func (r *Apps) RanOnAll(pairs []AppNode) {
	if len(pairs) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range pairs {
		r.ranOnLocked(p.App, p.Node)
	}
}

// LogAggregationReports applies a node heartbeat's log aggregation reports; it returns
// the reports that failed, for the RM's log.
func (r *Apps) LogAggregationReports(node string, reports []*yarnpb.LogAggregationReportProto) (failed []*yarnpb.LogAggregationReportProto) {
	if len(reports) == 0 {
		return nil
	}
	var recs []*statestore.AppRecord
	r.mu.Lock()
	for _, rep := range reports {
		a, ok := r.apps[records.AppIDFromProto(rep.GetApplicationId())]
		if !ok || !r.logAgg.Enabled || a.logAggFinal != 0 {
			continue
		}
		if a.logAgg == nil {
			a.logAgg = map[string]*nodeLogAggregation{}
		}
		n, ok := a.logAgg[node]
		if !ok {
			n = &nodeLogAggregation{}
			a.logAgg[node] = n
		}
		n.Status = rep.GetLogAggregationStatus()
		if d := rep.GetDiagnostics(); d != "" {
			n.Diagnostics = d
		}
		if n.Status == yarnpb.LogAggregationStatusProto_LOG_FAILED {
			failed = append(failed, rep)
		}
		if st := a.logAggregationStatus(r.now(), r.logAgg); a.Finished() && isFinalLogAggregation(st) && allFinal(a.logAgg) {
			a.logAggFinal = st
			recs = append(recs, r.changedLocked(a))
		}
	}
	r.mu.Unlock()
	r.writeOrReport(recs...)
	return failed
}

// LogAggregationOf is an application's status and each node's, for the web UI.
func (r *Apps) LogAggregationOf(id records.ApplicationID) (yarnpb.LogAggregationStatusProto, []NodeLogAggregation, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.apps[id]
	if !ok {
		return 0, nil, false
	}
	var nodes []NodeLogAggregation
	for node, n := range a.logAgg {
		nodes = append(nodes, NodeLogAggregation{Node: node, Status: logAggName(n.Status), Diagnostics: n.Diagnostics})
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Node < nodes[j].Node })
	return a.logAggregationStatus(r.now(), r.logAgg), nodes, true
}

func logAggName(s yarnpb.LogAggregationStatusProto) string {
	n := s.String()
	if len(n) > 4 && n[:4] == "LOG_" {
		return n[4:]
	}
	return n
}

func isFinalLogAggregation(s yarnpb.LogAggregationStatusProto) bool {
	switch s {
	case yarnpb.LogAggregationStatusProto_LOG_SUCCEEDED, yarnpb.LogAggregationStatusProto_LOG_FAILED, yarnpb.LogAggregationStatusProto_LOG_TIME_OUT:
		return true
	}
	return false
}

func allFinal(nodes map[string]*nodeLogAggregation) bool {
	for _, n := range nodes {
		if !isFinalLogAggregation(n.Status) {
			return false
		}
	}
	return true
}

// logAggregationStatus is the application's status as RMAppImpl derives it.
func (a *App) logAggregationStatus(now time.Time, s LogAggregationSettings) yarnpb.LogAggregationStatusProto {
	switch {
	case !s.Enabled:
		return yarnpb.LogAggregationStatusProto_LOG_DISABLED
	case a.logAggFinal != 0:
		return a.logAggFinal
	case len(a.logAgg) == 0:
		return yarnpb.LogAggregationStatusProto_LOG_NOT_START
	}
	var notStart, succeeded, failed, runningWithFailure int
	for _, n := range a.logAgg {
		switch n.Status {
		case yarnpb.LogAggregationStatusProto_LOG_NOT_START:
			notStart++
		case yarnpb.LogAggregationStatusProto_LOG_SUCCEEDED:
			succeeded++
		case yarnpb.LogAggregationStatusProto_LOG_FAILED:
			failed++
		case yarnpb.LogAggregationStatusProto_LOG_RUNNING_WITH_FAILURE:
			runningWithFailure++
		}
	}
	timedOut := a.Finished() && a.FinishTime > 0 && s.Timeout > 0 && now.Sub(time.UnixMilli(a.FinishTime)) > s.Timeout
	switch {
	case succeeded == len(a.logAgg):
		return yarnpb.LogAggregationStatusProto_LOG_SUCCEEDED
	case failed > 0 && failed+succeeded == len(a.logAgg):
		return yarnpb.LogAggregationStatusProto_LOG_FAILED
	case timedOut:
		return yarnpb.LogAggregationStatusProto_LOG_TIME_OUT
	case notStart == len(a.logAgg):
		return yarnpb.LogAggregationStatusProto_LOG_NOT_START
	case failed > 0 || runningWithFailure > 0:
		return yarnpb.LogAggregationStatusProto_LOG_RUNNING_WITH_FAILURE
	}
	return yarnpb.LogAggregationStatusProto_LOG_RUNNING
}

// Running reports whether an application is known and has not ended.
func (r *Apps) Running(id records.ApplicationID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.apps[id]
	return ok && !a.Finished()
}
