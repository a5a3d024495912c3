package rmweb

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/yarn/audit"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
	"github.com/bobbin-yarn/bobbin/yarn/webapp"
)

// The REST API's writes besides the state change: a new application id, a submission
// (so a client without Java can run an application), the queue and the priority.

type newApplication struct {
	ApplicationID     string        `json:"application-id"`
	MaximumCapability *resourceInfo `json:"maximum-resource-capability"`
}

func (s *rest) newApplication(w http.ResponseWriter, r *http.Request) {
	rm := s.rm
	id := rm.NewAppID(callerOf(r), "rest")
	writeBare(w, r, http.StatusOK, "NewApplication", newApplication{ApplicationID: id.String(),
		MaximumCapability: resource(rm, rm.ResourceOf(rm.MaximumCapability()))})
}

// submissionInfo is ApplicationSubmissionContextInfo as clients send it.
type submissionInfo struct {
	ApplicationID             string          `json:"application-id"`
	ApplicationName           string          `json:"application-name"`
	Queue                     string          `json:"queue"`
	Priority                  int32           `json:"priority"`
	AMContainerSpec           launchInfo      `json:"am-container-spec"`
	UnmanagedAM               bool            `json:"unmanaged-AM"`
	MaxAppAttempts            int32           `json:"max-app-attempts"`
	Resource                  *resourceInfo   `json:"resource"`
	ApplicationType           string          `json:"application-type"`
	KeepContainers            bool            `json:"keep-containers-across-application-attempts"`
	ApplicationTags           json.RawMessage `json:"application-tags"`
	AttemptFailuresValidity   int64           `json:"attempt-failures-validity-interval"`
	AppNodeLabelExpression    string          `json:"app-node-label-expression"`
	AMContainerNodeLabelExpr  string          `json:"am-container-node-label-expression"`
	ReservationID             string          `json:"reservation-id"`
	LogAggregationContext     json.RawMessage `json:"log-aggregation-context"`
	AMBlackListingRequests    json.RawMessage `json:"am-black-listing-requests"`
	ApplicationTimeouts       json.RawMessage `json:"timeouts"`
	UnknownCredentialsPresent json.RawMessage `json:"credentials"`
}

// launchInfo is ContainerLaunchContextInfo.
type launchInfo struct {
	LocalResources json.RawMessage `json:"local-resources"`
	Environment    json.RawMessage `json:"environment"`
	Commands       json.RawMessage `json:"commands"`
	ServiceData    json.RawMessage `json:"service-data"`
	Credentials    json.RawMessage `json:"credentials"`
	ACLs           json.RawMessage `json:"application-acls"`
}

type localResourceInfo struct {
	Resource   string `json:"resource"`
	Type       string `json:"type"`
	Visibility string `json:"visibility"`
	Size       int64  `json:"size"`
	Timestamp  int64  `json:"timestamp"`
	Pattern    string `json:"pattern"`
}

// entries reads a JAXB map, {"entry": [{"key":..,"value":..}, ...]} or one entry
// without the list.
func entries[V any](raw json.RawMessage) ([]struct {
	Key   string `json:"key"`
	Value V      `json:"value"`
}, error) {
	type kv = struct {
		Key   string `json:"key"`
		Value V      `json:"value"`
	}
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var wrap struct {
		Entry json.RawMessage `json:"entry"`
	}
	if err := json.Unmarshal(raw, &wrap); err != nil {
		return nil, err
	}
	if len(wrap.Entry) == 0 {
		return nil, nil
	}
	var list []kv
	if err := json.Unmarshal(wrap.Entry, &list); err == nil {
		return list, nil
	}
	var one kv
	if err := json.Unmarshal(wrap.Entry, &one); err != nil {
		return nil, err
	}
	return []kv{one}, nil
}

// stringList reads {"<name>": "x"} or {"<name>": ["x", ...]}.
func stringList(raw json.RawMessage, name string) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var wrap map[string]json.RawMessage
	if err := json.Unmarshal(raw, &wrap); err != nil {
		return nil, err
	}
	v, ok := wrap[name]
	if !ok {
		return nil, nil
	}
	var list []string
	if err := json.Unmarshal(v, &list); err == nil {
		return list, nil
	}
	var one string
	if err := json.Unmarshal(v, &one); err != nil {
		return nil, err
	}
	return []string{one}, nil
}

// resourceURL turns "hdfs://nn:8020/p" (or a path) into YARN's URL record.
func resourceURL(s string) (*yarnpb.URLProto, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, err
	}
	out := &yarnpb.URLProto{File: proto.String(u.Path)}
	if u.Scheme != "" {
		out.Scheme = proto.String(u.Scheme)
	}
	if h := u.Hostname(); h != "" {
		out.Host = proto.String(h)
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			return nil, err
		}
		out.Port = proto.Int32(int32(n))
	}
	return out, nil
}

// submissionContext converts a REST submission to the RPC's record.
func (s *rest) submissionContext(in *submissionInfo) (*yarnpb.ApplicationSubmissionContextProto, error) {
	id, err := appID(in.ApplicationID)
	if err != nil {
		return nil, err
	}
	if len(in.UnknownCredentialsPresent) > 0 || len(in.AMContainerSpec.Credentials) > 0 {
		return nil, webapp.BadRequest("credentials in a REST submission are not supported by Bobbin (a cluster without Kerberos needs none)")
	}
	if in.ReservationID != "" {
		return nil, webapp.BadRequest("reservation-id: Bobbin has no reservation system")
	}
	clc := &yarnpb.ContainerLaunchContextProto{}
	res, err := entries[localResourceInfo](in.AMContainerSpec.LocalResources)
	if err != nil {
		return nil, &webapp.Error{Class: webapp.ClassWebAppException, Msg: "javax.xml.bind.UnmarshalException: local-resources: " + err.Error()}
	}
	for _, e := range res {
		u, err := resourceURL(e.Value.Resource)
		if err != nil {
			return nil, webapp.BadRequest("local resource %s: %v", e.Key, err)
		}
		lr := &yarnpb.LocalResourceProto{Resource: u, Size: proto.Int64(e.Value.Size), Timestamp: proto.Int64(e.Value.Timestamp)}
		typ, ok := yarnpb.LocalResourceTypeProto_value[strings.ToUpper(e.Value.Type)]
		if !ok {
			return nil, webapp.BadRequest("local resource %s: unknown type %q", e.Key, e.Value.Type)
		}
		vis, ok := yarnpb.LocalResourceVisibilityProto_value[strings.ToUpper(e.Value.Visibility)]
		if !ok {
			return nil, webapp.BadRequest("local resource %s: unknown visibility %q", e.Key, e.Value.Visibility)
		}
		lr.Type, lr.Visibility = yarnpb.LocalResourceTypeProto(typ).Enum(), yarnpb.LocalResourceVisibilityProto(vis).Enum()
		if e.Value.Pattern != "" {
			lr.Pattern = proto.String(e.Value.Pattern)
		}
		clc.LocalResources = append(clc.LocalResources, &yarnpb.StringLocalResourceMapProto{Key: proto.String(e.Key), Value: lr})
	}
	env, err := entries[string](in.AMContainerSpec.Environment)
	if err != nil {
		return nil, &webapp.Error{Class: webapp.ClassWebAppException, Msg: "javax.xml.bind.UnmarshalException: environment: " + err.Error()}
	}
	for _, e := range env {
		clc.Environment = append(clc.Environment, &yarnpb.StringStringMapProto{Key: proto.String(e.Key), Value: proto.String(e.Value)})
	}
	if clc.Command, err = stringList(in.AMContainerSpec.Commands, "command"); err != nil {
		return nil, &webapp.Error{Class: webapp.ClassWebAppException, Msg: "javax.xml.bind.UnmarshalException: commands: " + err.Error()}
	}
	tags, err := stringList(in.ApplicationTags, "tag")
	if err != nil {
		return nil, &webapp.Error{Class: webapp.ClassWebAppException, Msg: "javax.xml.bind.UnmarshalException: application-tags: " + err.Error()}
	}
	sc := &yarnpb.ApplicationSubmissionContextProto{ApplicationId: id.Proto(), ApplicationName: proto.String(in.ApplicationName),
		Queue: proto.String(in.Queue), Priority: &yarnpb.PriorityProto{Priority: proto.Int32(in.Priority)}, AmContainerSpec: clc,
		UnmanagedAm: proto.Bool(in.UnmanagedAM), MaxAppAttempts: proto.Int32(in.MaxAppAttempts), ApplicationType: proto.String(in.ApplicationType),
		KeepContainersAcrossApplicationAttempts: proto.Bool(in.KeepContainers), ApplicationTags: tags,
		AttemptFailuresValidityInterval: proto.Int64(in.AttemptFailuresValidity)}
	if in.Queue == "" {
		sc.Queue = proto.String("default")
	}
	if in.ApplicationName == "" {
		sc.ApplicationName = proto.String("N/A")
	}
	if in.ApplicationType == "" {
		sc.ApplicationType = proto.String("YARN")
	}
	if in.Resource != nil {
		sc.Resource = &yarnpb.ResourceProto{Memory: proto.Int64(in.Resource.Memory), VirtualCores: proto.Int32(int32(in.Resource.VCores))}
	} else {
		sc.Resource = &yarnpb.ResourceProto{Memory: proto.Int64(int64(s.rm.Settings().MinAllocationMB)), VirtualCores: proto.Int32(1)}
	}
	if in.AppNodeLabelExpression != "" {
		sc.NodeLabelExpression = proto.String(in.AppNodeLabelExpression)
	}
	if in.AMContainerNodeLabelExpr != "" {
		sc.AmContainerResourceRequest = []*yarnpb.ResourceRequestProto{{Priority: &yarnpb.PriorityProto{Priority: proto.Int32(0)},
			ResourceName: proto.String("*"), Capability: sc.Resource, NumContainers: proto.Int32(1), NodeLabelExpression: proto.String(in.AMContainerNodeLabelExpr)}}
	}
	return sc, nil
}

// submit is POST /apps: 202 Accepted with the application's URL, as the Java RM answers.
func (s *rest) submit(w http.ResponseWriter, r *http.Request) {
	var in submissionInfo
	if err := webapp.ReadJSON(r, &in); err != nil {
		webapp.WriteError(w, r, err)
		return
	}
	sc, err := s.submissionContext(&in)
	if err != nil {
		webapp.WriteError(w, r, err)
		return
	}
	if err := s.rm.Submit(sc, callerOf(r)); err != nil {
		// RMWebServices answers the client service's YarnException as BadRequestException;
		// an AccessControlException arrives wrapped, its class in the message.
		if class, msg, ok := exceptions.ClassOf(err); ok {
			if class == exceptions.AccessControl {
				msg = class + ": " + msg
			}
			err = webapp.BadRequest("%s", msg)
		}
		webapp.WriteError(w, r, err)
		return
	}
	id := records.AppIDFromProto(sc.GetApplicationId())
	w.Header().Set("Location", fmt.Sprintf("http://%s/ws/v1/cluster/apps/%s", r.Host, id))
	w.WriteHeader(http.StatusAccepted)
}

type appQueue struct {
	Queue string `json:"queue"`
}

func (s *rest) appQueueGet(w http.ResponseWriter, r *http.Request) {
	rep, err := s.report(r)
	if err != nil {
		webapp.WriteError(w, r, err)
		return
	}
	writeBare(w, r, http.StatusOK, "appqueue", appQueue{Queue: rep.GetQueue()})
}

// appQueuePut moves an application to another leaf queue, as moveApplicationAcrossQueues.
func (s *rest) appQueuePut(w http.ResponseWriter, r *http.Request) {
	var want appQueue
	rep, ok := s.changeRequest(w, r, &want)
	if !ok {
		return
	}
	id := records.AppIDFromProto(rep.GetApplicationId())
	user, ok := s.mayModify(w, r, id, "move")
	if !ok {
		return
	}
	if err := s.rm.MoveApp(id, want.Queue, user); err != nil {
		s.rm.Audit().Failure(user, remoteIP(r), "Move Application Request", "RMWebService", audit.Why(err), "", audit.KV{Key: "APPID", Value: id.String()})
		webapp.WriteError(w, r, webapp.FromRPC(err))
		return
	}
	s.rm.Audit().Success(user, remoteIP(r), "Move Application Request", "RMWebService", audit.KV{Key: "APPID", Value: id.String()},
		audit.KV{Key: "QUEUENAME", Value: want.Queue})
	rep, _ = s.rm.AppReport(id)
	writeBare(w, r, http.StatusOK, "appqueue", appQueue{Queue: rep.GetQueue()})
}

type appPriority struct {
	Priority int32 `json:"priority"`
}

func (s *rest) appPriorityGet(w http.ResponseWriter, r *http.Request) {
	rep, err := s.report(r)
	if err != nil {
		webapp.WriteError(w, r, err)
		return
	}
	writeBare(w, r, http.StatusOK, "applicationpriority", appPriority{Priority: rep.GetPriority().GetPriority()})
}

func (s *rest) appPriorityPut(w http.ResponseWriter, r *http.Request) {
	var want appPriority
	rep, ok := s.changeRequest(w, r, &want)
	if !ok {
		return
	}
	id := records.AppIDFromProto(rep.GetApplicationId())
	user, ok := s.mayModify(w, r, id, "change the priority of")
	if !ok {
		return
	}
	got, _ := s.rm.SetAppPriority(id, want.Priority, user)
	s.rm.Audit().Success(user, remoteIP(r), "Update Application Priority", "RMWebService", audit.KV{Key: "APPID", Value: id.String()})
	writeBare(w, r, http.StatusOK, "applicationpriority", appPriority{Priority: got})
}

// appStatistics is /appstatistics: how many applications are in each state, for at most
// one application type ("*" = any), as the Java RM counts them.
func (s *rest) appStatistics(w http.ResponseWriter, r *http.Request) {
	types := params(r, "applicationTypes")
	if len(types) > 1 {
		webapp.WriteError(w, r, webapp.BadRequest("# of applicationTypes = %d, we temporarily support at most one applicationType", len(types)))
		return
	}
	typ := "*"
	if len(types) == 1 {
		typ = strings.ToLower(types[0])
	}
	states := params(r, "states")
	if len(states) == 0 {
		states = appStates
	}
	counts := map[string]int{}
	for _, st := range states {
		up := strings.ToUpper(st)
		if _, ok := yarnpb.YarnApplicationStateProto_value[up]; !ok {
			webapp.WriteError(w, r, webapp.BadRequest("Invalid application-state %s specified. It should be one of [%s]", st, strings.Join(appStates, ", ")))
			return
		}
		counts[up] = 0
	}
	s.rm.EachApp(func(a *rmstate.App) {
		if typ != "*" && strings.ToLower(a.AppType) != typ {
			return
		}
		if _, ok := counts[a.State().String()]; ok {
			counts[a.State().String()]++
		}
	})
	type item struct {
		State string `json:"state"`
		Type  string `json:"type"`
		Count int    `json:"count"`
	}
	var list []item
	for _, st := range appStates {
		if n, ok := counts[st]; ok {
			list = append(list, item{State: st, Type: typ, Count: n})
		}
	}
	webapp.Write(w, r, http.StatusOK, map[string]any{"appStatInfo": map[string]any{"statItem": list}})
}
