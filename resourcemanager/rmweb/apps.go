package rmweb

import (
	"fmt"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/bobbin-yarn/bobbin/yarn/audit"
	"github.com/bobbin-yarn/bobbin/yarn/webapp"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmcore"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
	"github.com/bobbin-yarn/bobbin/yarn/webuser"
)

// appStates are the application states /apps accepts, in the Java error's order.
var appStates = []string{"NEW", "NEW_SAVING", "SUBMITTED", "ACCEPTED", "RUNNING", "FINISHED", "FAILED", "KILLED"}

// params splits a set-valued query parameter: repeated and/or comma-separated, trimmed,
// empty values dropped.
func params(r *http.Request, name string) []string {
	var out []string
	for _, v := range r.URL.Query()[name] {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// timeParam reads a non-negative millisecond time parameter (0 when absent).
func timeParam(r *http.Request, name string) (int64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, webapp.BadRequest("%s must be a number!", name)
	}
	if n < 0 {
		return 0, webapp.BadRequest("%s must be greater than 0", name)
	}
	return n, nil
}

// appFilter reads /apps's query parameters as the Java RM does.
func (s *rest) appFilter(r *http.Request) (*rmstate.AppFilter, map[string]bool, error) {
	f := &rmstate.AppFilter{States: map[yarnpb.YarnApplicationStateProto]bool{}, Types: map[string]bool{}, Users: map[string]bool{},
		Queues: map[string]bool{}, Tags: map[string]bool{}}
	for _, st := range append(params(r, "state"), params(r, "states")...) {
		v, ok := yarnpb.YarnApplicationStateProto_value[strings.ToUpper(st)]
		if !ok {
			return nil, nil, webapp.BadRequest("Invalid application-state %s specified. It should be one of [%s]", st, strings.Join(appStates, ", "))
		}
		f.States[yarnpb.YarnApplicationStateProto(v)] = true
	}
	if u := r.URL.Query().Get("user"); u != "" {
		f.Users[u] = true
	}
	if q := r.URL.Query().Get("queue"); q != "" {
		if _, ok := s.rm.Queues().Queue(q); !ok {
			return nil, nil, webapp.BadRequest("Unknown queue: %s", q)
		}
		f.Queues[q] = true
	}
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, nil, webapp.BadRequest("limit value must be a number!")
		}
		if n <= 0 {
			return nil, nil, webapp.BadRequest("limit value must be greater then 0")
		}
		f.Limit = n
	}
	var err error
	for _, p := range []struct {
		name string
		dst  *int64
	}{{"startedTimeBegin", &f.StartBegin}, {"startedTimeEnd", &f.StartEnd}, {"finishedTimeBegin", &f.FinishBegin}, {"finishedTimeEnd", &f.FinishEnd}} {
		if *p.dst, err = timeParam(r, p.name); err != nil {
			return nil, nil, err
		}
	}
	if f.StartEnd > 0 && f.StartBegin > f.StartEnd {
		return nil, nil, webapp.BadRequest("startedTimeEnd must be greater than startTimeBegin")
	}
	if f.FinishEnd > 0 && f.FinishBegin > f.FinishEnd {
		return nil, nil, webapp.BadRequest("finishTimeEnd must be greater than finishTimeBegin")
	}
	for _, t := range params(r, "applicationTypes") {
		f.Types[strings.ToLower(t)] = true
	}
	for _, t := range params(r, "applicationTags") {
		f.Tags[strings.ToLower(t)] = true
	}
	var final map[string]bool
	if v := r.URL.Query().Get("finalStatus"); v != "" {
		up := strings.ToUpper(v)
		if _, ok := yarnpb.FinalApplicationStatusProto_value["APP_"+up]; !ok {
			return nil, nil, &webapp.Error{Class: "java.lang.IllegalArgumentException", Msg: "No enum constant org.apache.hadoop.yarn.api.records.FinalApplicationStatus." + v}
		}
		final = map[string]bool{up: true}
	}
	return f, final, nil
}

func (s *rest) apps(w http.ResponseWriter, r *http.Request) {
	list, err := s.appInfos(r)
	if err != nil {
		webapp.WriteError(w, r, err)
		return
	}
	if len(list) == 0 {
		webapp.Write(w, r, http.StatusOK, map[string]any{"apps": struct{}{}})
		return
	}
	webapp.Write(w, r, http.StatusOK, map[string]any{"apps": map[string]any{"app": list}})
}

// appInfos are the applications the request's filters select.
func (s *rest) appInfos(r *http.Request) ([]appInfo, error) {
	f, final, err := s.appFilter(r)
	if err != nil {
		return nil, err
	}
	// The limit applies after the final-status filter.
	limit := f.Limit
	if final != nil {
		f.Limit = 0
	}
	var reports []*yarnpb.ApplicationReportProto
	for _, rep := range s.rm.AppReports(f) {
		if final != nil && !final[finalStatus(rep)] {
			continue
		}
		if limit > 0 && int64(len(reports)) >= limit {
			break
		}
		reports = append(reports, rep)
	}
	s.rm.FillUsage(reports...)
	c := s.context(r)
	ids := make([]records.ApplicationID, 0, len(reports))
	for _, rep := range reports {
		ids = append(ids, records.AppIDFromProto(rep.GetApplicationId()))
	}
	c.asks = s.rm.PendingAsksOf(ids)
	list := make([]appInfo, 0, len(reports))
	for _, rep := range reports {
		list = append(list, s.viewable(r, c.appInfo(rep)))
	}
	return list, nil
}

// appID parses an application id as the 3.x RM does, with its messages.
func appID(s string) (records.ApplicationID, error) {
	id, err := records.ParseApplicationID(s)
	if err != nil {
		if !strings.HasPrefix(s, "application_") {
			return id, &webapp.Error{Class: webapp.ClassBadRequest, Msg: "java.lang.IllegalArgumentException: Invalid ApplicationId prefix: " + s +
				". The valid ApplicationId should start with prefix application"}
		}
		return id, &webapp.Error{Class: webapp.ClassBadRequest, Msg: "java.lang.IllegalArgumentException: Invalid ApplicationId: " + s}
	}
	return id, nil
}

// report looks an application up by the {id} of the path.
func (s *rest) report(r *http.Request) (*yarnpb.ApplicationReportProto, error) {
	id, err := appID(r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	rep, ok := s.rm.AppReport(id)
	if !ok {
		return nil, webapp.NotFound("app with id: %s not found", r.PathValue("id"))
	}
	return rep, nil
}

func (s *rest) app(w http.ResponseWriter, r *http.Request) {
	rep, err := s.report(r)
	if err != nil {
		webapp.WriteError(w, r, err)
		return
	}
	s.rm.FillUsage(rep)
	webapp.Write(w, r, http.StatusOK, map[string]any{"app": s.viewable(r, s.context(r).appInfo(rep))})
}

func finalStatus(rep *yarnpb.ApplicationReportProto) string {
	return strings.TrimPrefix(rep.GetFinalApplicationStatus().String(), "APP_")
}

// appContext is what every AppInfo of one request shares, read once: the cluster's size.
type appContext struct {
	*rest
	total scheduler.Resource
	// asks are the listed applications' outstanding asks, read at once (nil: each
	// application's are read when its info is made).
	asks map[records.ApplicationID][]scheduler.Ask
}

func (s *rest) context(*http.Request) appContext {
	return appContext{rest: s, total: s.rm.SchedulerStats().Total}
}

// appInfo is AppInfo from an application's report (FillUsage done).
func (s appContext) appInfo(rep *yarnpb.ApplicationReportProto) appInfo {
	rm := s.rm
	id := records.AppIDFromProto(rep.GetApplicationId())
	state := rep.GetYarnApplicationState()
	finished := state == yarnpb.YarnApplicationStateProto_FINISHED || state == yarnpb.YarnApplicationStateProto_FAILED ||
		state == yarnpb.YarnApplicationStateProto_KILLED
	ai := appInfo{ID: id.String(), User: rep.GetUser(), Name: rep.GetName(), Queue: rep.GetQueue(), State: state.String(),
		FinalStatus: finalStatus(rep), Progress: float64(rep.GetProgress()) * 100, Diagnostics: rep.GetDiagnostics(),
		ClusterID: rm.ClusterTimestamp(), ApplicationType: rep.GetApplicationType(), ApplicationTags: strings.Join(rep.GetApplicationTags(), ","),
		Priority: rep.GetPriority().GetPriority(), StartedTime: rep.GetStartTime(), LaunchTime: rep.GetLaunchTime(), FinishedTime: rep.GetFinishTime(),
		LogAggregationStatus: strings.TrimPrefix(rep.GetLogAggregationStatus().String(), "LOG_"),
		UnmanagedApplication: rep.GetUnmanagedApplication(), AppNodeLabelExpression: rep.GetAppNodeLabelExpression(),
		AMNodeLabelExpression: rep.GetAmNodeLabelExpression()}
	if rep.LogAggregationStatus == nil {
		ai.LogAggregationStatus = "DISABLED"
	}
	// Times.elapsed: to the finish, or to now while running; -1 without a start.
	switch {
	case ai.StartedTime <= 0:
		ai.ElapsedTime = -1
	case ai.FinishedTime > 0:
		ai.ElapsedTime = ai.FinishedTime - ai.StartedTime
	default:
		ai.ElapsedTime = rm.Now().UnixMilli() - ai.StartedTime
	}
	// AppInfo: no tracking URL ("N/A" too) is UNASSIGNED and left out; otherwise it is
	// the report's (the web proxy's page of the application, as in the Java RM), the AM's
	// while running and its history after.
	ai.TrackingUI = "UNASSIGNED"
	if u := rep.GetTrackingUrl(); u != "" && !strings.EqualFold(u, "N/A") {
		if !strings.Contains(u, "://") {
			u = "http://" + u
		}
		ai.TrackingURL, ai.TrackingUI = u, "ApplicationMaster"
		if rep.GetFinishTime() > 0 {
			ai.TrackingUI = "History"
		}
	}
	if host := rep.GetHost(); host != "" && host != "N/A" && rep.GetRpcPort() > 0 {
		ai.AMRPCAddress = net.JoinHostPort(host, strconv.Itoa(int(rep.GetRpcPort())))
	}
	if att := rep.GetCurrentApplicationAttemptId(); att != nil {
		rm.ViewAttempt(records.AttemptIDFromProto(att), func(_ *rmstate.App, at *rmstate.Attempt) {
			if at.AMContainer != nil && at.AMNodeHTTP != "" {
				ai.AMHostHTTPAddress = at.AMNodeHTTP
				ai.AMContainerLogs = fmt.Sprintf("http://%s/node/containerlogs/%s/%s", at.AMNodeHTTP, at.AMContainer, rep.GetUser())
			}
			ai.MasterNodeID = at.AMNode
		})
	}
	ru := rep.GetAppResource_Usage()
	used := rm.ResourceOf(ru.GetUsedResources())
	if !finished {
		ai.AllocatedMB, ai.AllocatedVCores, ai.RunningContainers = used[scheduler.Memory], used[scheduler.VCores], ru.GetNumUsedContainers()
	} else {
		// The Java RM's figures for an application that has left the scheduler.
		ai.AllocatedMB, ai.AllocatedVCores, ai.RunningContainers = -1, -1, -1
	}
	ai.MemorySeconds, ai.VcoreSeconds = ru.GetMemorySeconds(), ru.GetVcoreSeconds()
	ai.PreemptedMemorySeconds, ai.PreemptedVcoreSeconds = ru.GetPreemptedMemorySeconds(), ru.GetPreemptedVcoreSeconds()
	spent, preempted := map[string]int64{}, map[string]int64{}
	for _, e := range ru.GetApplicationResourceUsageMap() {
		spent[e.GetKey()] = e.GetValue()
	}
	for _, e := range ru.GetApplicationPreemptedResourceUsageMap() {
		preempted[e.GetKey()] = e.GetValue()
	}
	names := rm.Types().Names()
	ai.ResourceSecondsMap = secondsMap(names, func(n string) int64 { return spent[n] })
	ai.PreemptedResourceSecondsMap = secondsMap(names, func(n string) int64 { return preempted[n] })
	if !finished {
		if total := s.total[scheduler.Memory]; total > 0 {
			ai.ClusterUsagePercentage = float64(used[scheduler.Memory]) * 100 / float64(total)
			if q, ok := rm.Queues().Queue(rep.GetQueue()); ok && q.AbsoluteCapacity > 0 {
				ai.QueueUsagePercentage = float64(used[scheduler.Memory]) * 100 / (q.AbsoluteCapacity * float64(total))
			}
		}
	}
	zero := resource(rm, scheduler.Resource{})
	var pending scheduler.Resource
	if !finished {
		reqs := []resourceRequestInfo{}
		asks := s.asks
		if asks == nil {
			asks = rm.PendingAsksOf([]records.ApplicationID{id})
		}
		for _, a := range asks[id] {
			reqs = append(reqs, askInfo(rm, a))
			if a.ResourceName == "*" {
				each := a.Capability
				for i := range each {
					each[i] *= int64(a.Count)
				}
				pending = pending.Add(each)
			}
		}
		ai.ResourceRequests = &reqs
	}
	ai.ResourceInfo = &appResources{ResourceUsagesByPartition: []partitionUsage{{PartitionName: rep.GetAppNodeLabelExpression(),
		Used: resource(rm, used), Reserved: zero, Pending: resource(rm, pending), AMUsed: zero, AMLimit: zero, UserAMLimit: zero}}}
	ai.Timeouts = &appTimeouts{}
	timeouts := map[yarnpb.ApplicationTimeoutTypeProto]*yarnpb.ApplicationTimeoutProto{}
	for _, t := range rep.GetAppTimeouts() {
		timeouts[t.GetApplicationTimeoutType()] = t.GetApplicationTimeout()
	}
	lifetime := appTimeout{Type: "LIFETIME", ExpiryTime: "UNLIMITED", RemainingTimeInSeconds: -1}
	if t := timeouts[yarnpb.ApplicationTimeoutTypeProto_APP_TIMEOUT_LIFETIME]; t != nil && t.GetExpireTime() != "" && t.GetExpireTime() != "UNLIMITED" {
		lifetime.ExpiryTime, lifetime.RemainingTimeInSeconds = t.GetExpireTime(), t.GetRemainingTime()
	}
	ai.Timeouts.Timeout = append(ai.Timeouts.Timeout, lifetime)
	return ai
}

func (s *rest) appAttempts(w http.ResponseWriter, r *http.Request) {
	rep, err := s.report(r)
	if err != nil {
		webapp.WriteError(w, r, err)
		return
	}
	if id := records.AppIDFromProto(rep.GetApplicationId()); !s.rm.MayViewApp(callerOf(r), id) {
		webapp.WriteError(w, r, &webapp.Error{Class: webapp.ClassAuthz, Msg: fmt.Sprintf("User %s does not have privilage to see this application %s", callerOf(r), id)})
		return
	}
	list := s.attemptInfos(rep)
	if len(list) == 0 {
		webapp.Write(w, r, http.StatusOK, map[string]any{"appAttempts": struct{}{}})
		return
	}
	webapp.Write(w, r, http.StatusOK, map[string]any{"appAttempts": map[string]any{"appAttempt": list}})
}

// attemptInfos are an application's attempts, oldest first.
func (s *rest) attemptInfos(rep *yarnpb.ApplicationReportProto) []appAttemptInfo {
	id := records.AppIDFromProto(rep.GetApplicationId())
	var list []appAttemptInfo
	for _, att := range s.rm.AttemptIDs(id) {
		s.rm.ViewPastAttempt(att, func(_ *rmstate.App, at *rmstate.Attempt) {
			info := appAttemptInfo{ID: int32(att.Attempt), StartTime: at.StartTime, FinishedTime: at.FinishTime,
				NodeHTTPAddress: at.AMNodeHTTP, NodeID: at.AMNode, AppAttemptID: att.String(),
				AppAttemptState: strings.TrimPrefix(at.State().String(), "APP_ATTEMPT_")}
			if at.AMContainer != nil {
				info.ContainerID = at.AMContainer.String()
				info.ExportPorts = "null" // Bobbin's NodeManagers expose no container ports
				if at.AMNodeHTTP != "" {
					info.LogsLink = fmt.Sprintf("http://%s/node/containerlogs/%s/%s", at.AMNodeHTTP, at.AMContainer, rep.GetUser())
				}
			}
			list = append(list, info)
		})
	}
	sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
	return list
}

// appStateOf is AppState: the Java RM names its internal state; Bobbin's states are
// YARN's.
type appState struct {
	State       string `json:"state" xml:"state"`
	Diagnostics string `json:"diagnostics,omitempty" xml:"diagnostics,omitempty"`
}

func (s *rest) appStateGet(w http.ResponseWriter, r *http.Request) {
	rep, err := s.report(r)
	if err != nil {
		webapp.WriteError(w, r, err)
		return
	}
	writeBare(w, r, http.StatusOK, "appstate", appState{State: rep.GetYarnApplicationState().String()})
}

// appStatePut kills an application: {"state":"KILLED"} (optionally with diagnostics). The
// caller is user.name (simple authentication; dr.who without it), held to the same ACLs as
// the RPC kill.
func (s *rest) appStatePut(w http.ResponseWriter, r *http.Request) {
	var want appState
	rep, ok := s.changeRequest(w, r, &want)
	if !ok {
		return
	}
	if want.State == "" {
		webapp.WriteError(w, r, webapp.BadRequest("the request names no target state"))
		return
	}
	cur := rep.GetYarnApplicationState().String()
	if strings.EqualFold(want.State, cur) {
		writeBare(w, r, http.StatusOK, "appstate", appState{State: cur})
		return
	}
	if !strings.EqualFold(want.State, "KILLED") {
		webapp.WriteError(w, r, webapp.BadRequest("Only 'KILLED' is allowed as a target state."))
		return
	}
	id := records.AppIDFromProto(rep.GetApplicationId())
	user, ok := s.mayModify(w, r, id, "kill")
	if !ok {
		return
	}
	from := remoteIP(r)
	diag := want.Diagnostics
	if diag == "" {
		diag = fmt.Sprintf("Application %s was killed by user %s at %s", id, user, from)
	}
	if !s.rm.KillApp(id, user, diag) {
		s.rm.Audit().Failure(user, from, "Kill Application Request", "RMWebService", "Trying to kill an absent application", "", audit.KV{Key: "APPID", Value: id.String()})
		webapp.WriteError(w, r, webapp.NotFound("app with id: %s not found", id))
		return
	}
	s.rm.Audit().Success(user, from, "Kill Application Request", "RMWebService", audit.KV{Key: "APPID", Value: id.String()})
	rep, _ = s.rm.AppReport(id)
	writeBare(w, r, http.StatusOK, "appstate", appState{State: rep.GetYarnApplicationState().String()})
}

// changeRequest decodes a PUT's body into body and looks up the application of the path;
// false when it answered an error.
func (s *rest) changeRequest(w http.ResponseWriter, r *http.Request, body any) (*yarnpb.ApplicationReportProto, bool) {
	if err := webapp.ReadJSON(r, body); err != nil {
		webapp.WriteError(w, r, err)
		return nil, false
	}
	rep, err := s.report(r)
	if err != nil {
		webapp.WriteError(w, r, err)
		return nil, false
	}
	return rep, true
}

// mayModify returns the caller when it may change the application (rmcore.MayModifyApp),
// else answers 403 in the Java RM's plain-text words ("Unauthorized attempt to <verb>
// appid ...").
func (s *rest) mayModify(w http.ResponseWriter, r *http.Request, id records.ApplicationID, verb string) (string, bool) {
	user := callerOf(r)
	if !s.rm.MayModifyApp(user, id) {
		msg := fmt.Sprintf("Unauthorized attempt to %s appid %s by remote user %s", verb, id, user)
		s.rm.Audit().Failure(user, remoteIP(r), restOperations[verb], "RMWebService", msg, "MODIFY_APP", audit.KV{Key: "APPID", Value: id.String()})
		http.Error(w, msg, http.StatusForbidden)
		return "", false
	}
	return user, true
}

// restOperations are RMAuditLogger's names of the REST writes, by mayModify's verb.
var restOperations = map[string]string{"kill": "Kill Application Request", "move": "Move Application Request", "change the priority of": "Update Application Priority"}

// remoteIP is a web caller's host.
func remoteIP(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

// callerOf is the web caller as yarn/webuser decided it: the SPNEGO principal's user, the
// pseudo user.name on a simple cluster, else the static web user
// (hadoop.http.staticuser.user, dr.who by default) as Hadoop's filters make it.
func callerOf(r *http.Request) string { return webuser.From(r).Name }

// writeBare writes an object Jersey renders without a root key (AppState, AppQueue, ...);
// root names its XML element.
func writeBare(w http.ResponseWriter, r *http.Request, status int, root string, v any) {
	if webapp.WantsXML(r) {
		webapp.Write(w, r, status, map[string]any{root: v})
		return
	}
	webapp.Write(w, r, status, v)
}

// viewable is ai as the caller may see it: with yarn.acl.enable, someone the application's
// VIEW_APP rules do not admit gets, as from the Java RM's AppInfo without access, only its
// identity, state, progress, tracking URL, diagnostics and times.
func (s *rest) viewable(r *http.Request, ai appInfo) appInfo {
	id, err := records.ParseApplicationID(ai.ID)
	if !s.rm.Settings().ACLEnabled || err != nil || s.rm.MayViewApp(callerOf(r), id) {
		return ai
	}
	return appInfo{ID: ai.ID, User: ai.User, Name: ai.Name, Queue: ai.Queue, State: ai.State, FinalStatus: ai.FinalStatus,
		Progress: ai.Progress, TrackingUI: ai.TrackingUI, TrackingURL: ai.TrackingURL, Diagnostics: ai.Diagnostics, ClusterID: ai.ClusterID,
		ApplicationType: ai.ApplicationType, ApplicationTags: ai.ApplicationTags, StartedTime: ai.StartedTime, FinishedTime: ai.FinishedTime,
		ElapsedTime: ai.ElapsedTime, LogAggregationStatus: ai.LogAggregationStatus, Timeouts: ai.Timeouts}
}

// askInfo is an outstanding ask as ResourceRequestInfo: a SchedulingRequest's with its
// constraint and tags, a ResourceRequest's with its locality and label.
func askInfo(rm *rmcore.Core, a scheduler.Ask) resourceRequestInfo {
	ri := resourceRequestInfo{Priority: a.Priority, AllocationRequestID: a.RequestID, Capability: resource(rm, a.Capability), NumContainers: a.Count,
		ExecutionTypeRequest: &executionTypeRequestInfo{ExecutionType: "GUARANTEED"}}
	if a.Placement != nil {
		ri.PlacementConstraint, ri.AllocationTags = a.Placement.Constraint.String(), a.Placement.Tags
		return ri
	}
	ri.ResourceName, ri.RelaxLocality = a.ResourceName, a.RelaxLocality
	if a.Label != scheduler.DefaultPartition {
		ri.NodeLabelExpression = a.Label
	}
	return ri
}
