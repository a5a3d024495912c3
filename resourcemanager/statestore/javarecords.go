package statestore

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"time"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/rpc/token"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

// The Java RM's records (yarn_server_resourcemanager_recovery.proto), as FileSystem-,
// ZK- and LeveldbRMStateStore keep them: an application's record and one per attempt.
// An AppRecord becomes them and comes back from them, whichever RM wrote them last:
//
//   - what Java's records say is taken from them; what Bobbin knows that they have no field
//     for rides in their `bobbin` fields, which a Java RM drops when it writes the record
//     again, so they never contradict a change it made;
//   - what changes while an application runs and only Bobbin's fields would say (its
//     state, an attempt's registration) is derived again when they are gone: an unfinished
//     attempt with an AM container is LAUNCHED (its AM registers again, as after a Java RM's
//     restart), an application is RUNNING only when its attempt says it registered;
//   - the attempt failures that count toward max-attempts are the FAILED attempts whose AM
//     exit status counts, as the Java RM counts them on recovery.

// Keys of AppRecord.Extra the records give their own fields to.
const (
	ExtraKeepTokens     = "keep_tokens"
	ExtraLaunchTime     = "launch_time"
	ExtraLogAggregation = "log_aggregation_status"
)

// clientTokenKeyAlias is the secret in app_attempt_tokens holding the attempt's
// client-to-AM token master key (RMStateStore.AM_CLIENT_TOKEN_MASTER_KEY_NAME); the Java
// RM has one only with security on.
const clientTokenKeyAlias = "YARN_CLIENT_TOKEN_MASTER_KEY"

// javaAttemptRecord is one attempt's record and its id.
type javaAttemptRecord struct {
	attempt int32
	data    []byte
}

// encodeJavaApp is rec as the Java RM's records: the application's and one per attempt
// that has an AM container (or an unmanaged AM) or has ended, as the Java RM stores an
// attempt once its AM container is allocated.
func encodeJavaApp(rec *AppRecord) ([]byte, []javaAttemptRecord, error) {
	id, err := records.ParseApplicationID(rec.ID)
	if err != nil {
		return nil, nil, fmt.Errorf("application %q: %w", rec.ID, err)
	}
	asc := &yarnpb.ApplicationSubmissionContextProto{ApplicationId: id.Proto(), ApplicationName: proto.String(rec.Name),
		Queue: proto.String(rec.Queue), Priority: &yarnpb.PriorityProto{Priority: proto.Int32(rec.Priority)},
		CancelTokensWhenComplete: proto.Bool(rec.Extra[ExtraKeepTokens] == 0), UnmanagedAm: proto.Bool(rec.Unmanaged),
		MaxAppAttempts: proto.Int32(int32(rec.MaxAttempts)), ApplicationType: proto.String(rec.Type), ApplicationTags: rec.Tags,
		NodeLabelExpression: rec.LabelExpr}
	if rec.FailuresValidity > 0 {
		asc.AttemptFailuresValidityInterval = proto.Int64(rec.FailuresValidity)
	}
	if len(rec.AMSpec) > 0 {
		asc.AmContainerSpec = &yarnpb.ContainerLaunchContextProto{}
		if err := proto.Unmarshal(rec.AMSpec, asc.AmContainerSpec); err != nil {
			return nil, nil, fmt.Errorf("application %s: launch context: %w", rec.ID, err)
		}
	}
	if len(rec.AMResource) > 0 {
		asc.Resource = &yarnpb.ResourceProto{}
		if err := proto.Unmarshal(rec.AMResource, asc.Resource); err != nil {
			return nil, nil, fmt.Errorf("application %s: AM resource: %w", rec.ID, err)
		}
	}
	if rec.AMLabelExpr != nil {
		asc.AmContainerResourceRequest = []*yarnpb.ResourceRequestProto{{Priority: &yarnpb.PriorityProto{Priority: proto.Int32(0)},
			ResourceName: proto.String("*"), Capability: asc.Resource, NumContainers: proto.Int32(1), RelaxLocality: proto.Bool(true),
			NodeLabelExpression: rec.AMLabelExpr}}
	}
	st := &yarnpb.ApplicationStateDataProto{SubmitTime: proto.Int64(rec.SubmitTime), ApplicationSubmissionContext: asc,
		User: proto.String(rec.User), StartTime: proto.Int64(rec.StartTime), Diagnostics: proto.String(rec.Diagnostics),
		FinishTime: proto.Int64(rec.FinishTime)}
	if t := rec.Extra[ExtraLaunchTime]; t != 0 {
		st.LaunchTime = proto.Int64(t) // 3.2+ read it; earlier ones read past it
	}
	if s, ok := javaAppState[yarnpb.YarnApplicationStateProto(rec.State)]; ok {
		st.ApplicationState = s.Enum()
	}
	for _, k := range sortedTimeoutTypes(rec.Timeouts) {
		st.ApplicationTimeouts = append(st.ApplicationTimeouts, &yarnpb.ApplicationTimeoutMapProto{
			ApplicationTimeoutType: yarnpb.ApplicationTimeoutTypeProto(k).Enum(), Timeout: proto.Int64(rec.Timeouts[k])})
	}
	ext := &yarnpb.BobbinApplicationProto{Version: proto.Uint64(rec.Version), Final: yarnpb.FinalApplicationStatusProto(rec.Final).Enum()}
	if rec.Runtime > 0 {
		ext.RuntimeMs = proto.Int64(rec.Runtime.Milliseconds())
	}
	for _, k := range sortedKeys(rec.Extra) {
		ext.Extra = append(ext.Extra, &yarnpb.StringLongMapProto{Key: proto.String(k), Value: proto.Int64(rec.Extra[k])})
	}
	st.Bobbin = ext
	appBytes, err := proto.Marshal(st)
	if err != nil {
		return nil, nil, fmt.Errorf("application %s: %w", rec.ID, err)
	}
	var attempts []javaAttemptRecord
	for i := range rec.Attempts {
		ar := &rec.Attempts[i]
		state := yarnpb.YarnApplicationAttemptStateProto(ar.State)
		final, ended := javaAttemptState[state]
		if !ended && ar.AMContainer == "" && !rec.Unmanaged {
			continue // no AM container yet: the Java RM has no record of it either
		}
		b, err := encodeJavaAttempt(rec, id, ar, final, ended, i == len(rec.Attempts)-1)
		if err != nil {
			return nil, nil, err
		}
		attempts = append(attempts, javaAttemptRecord{ar.Attempt, b})
	}
	return appBytes, attempts, nil
}

func encodeJavaAttempt(rec *AppRecord, id records.ApplicationID, ar *AttemptRecord, final yarnpb.RMAppAttemptStateProto, ended, last bool) ([]byte, error) {
	att := id.Attempt(ar.Attempt)
	creds := token.NewCredentials()
	if len(ar.ClientKey) > 0 {
		creds.Secrets[clientTokenKeyAlias] = ar.ClientKey
	}
	st := &yarnpb.ApplicationAttemptStateDataProto{AttemptId: att.Proto(), AppAttemptTokens: creds.Bytes(),
		Diagnostics: proto.String(ar.Diagnostics), StartTime: proto.Int64(ar.StartTime), FinishTime: proto.Int64(ar.FinishTime),
		AmContainerExitStatus: proto.Int32(exitcode.Invalid)}
	if ar.AMContainer != "" {
		cid, err := records.ParseContainerID(ar.AMContainer)
		if err != nil {
			return nil, fmt.Errorf("application %s: attempt %d: %w", rec.ID, ar.Attempt, err)
		}
		c := &yarnpb.ContainerProto{Id: cid.Proto(), NodeHttpAddress: proto.String(ar.AMNodeHTTP),
			Priority: &yarnpb.PriorityProto{Priority: proto.Int32(0)}}
		if ar.AMNode != "" {
			c.NodeId = records.NodeIDFromKey(ar.AMNode)
		}
		if len(rec.AMResource) > 0 {
			c.Resource = &yarnpb.ResourceProto{}
			if err := proto.Unmarshal(rec.AMResource, c.Resource); err != nil {
				return nil, fmt.Errorf("application %s: AM resource: %w", rec.ID, err)
			}
		}
		st.MasterContainer = c
	}
	if ended {
		st.AppAttemptState = final.Enum()
		st.AmContainerExitStatus = proto.Int32(ar.AMExitStatus)
		st.FinalTrackingUrl = proto.String(ar.TrackingURL)
		fs := yarnpb.FinalApplicationStatusProto_APP_FAILED
		switch {
		case final == yarnpb.RMAppAttemptStateProto_RMATTEMPT_KILLED:
			fs = yarnpb.FinalApplicationStatusProto_APP_KILLED
		case last && final == yarnpb.RMAppAttemptStateProto_RMATTEMPT_FINISHED:
			fs = yarnpb.FinalApplicationStatusProto(rec.Final)
		}
		st.FinalApplicationStatus = fs.Enum()
	}
	st.Bobbin = &yarnpb.BobbinAttemptProto{State: yarnpb.YarnApplicationAttemptStateProto(ar.State).Enum(), Registered: proto.Bool(ar.Registered),
		Unregistered: proto.Bool(ar.Unregistered), Host: proto.String(ar.Host), RpcPort: proto.Int32(ar.RPCPort), TrackingUrl: proto.String(ar.TrackingURL)}
	return proto.Marshal(st)
}

// decodeJavaApp is the AppRecord of an application's record and its attempts' (any
// order). path names where they were read, for errors.
func decodeJavaApp(path string, appData []byte, attemptData map[string][]byte) (*AppRecord, error) {
	var st yarnpb.ApplicationStateDataProto
	if err := proto.Unmarshal(appData, &st); err != nil {
		return nil, fmt.Errorf("%s: not an ApplicationStateDataProto: %w", path, err)
	}
	asc := st.GetApplicationSubmissionContext()
	if asc == nil || asc.GetApplicationId() == nil {
		return nil, fmt.Errorf("%s: the application's record has no submission context (no application id)", path)
	}
	id := records.AppIDFromProto(asc.GetApplicationId())
	rec := &AppRecord{ID: id.String(), User: st.GetUser(), Queue: asc.GetQueue(), Name: asc.GetApplicationName(), Type: asc.GetApplicationType(),
		Tags: asc.GetApplicationTags(), Priority: asc.GetPriority().GetPriority(), MaxAttempts: int(asc.GetMaxAppAttempts()),
		Unmanaged: asc.GetUnmanagedAm(), FailuresValidity: asc.GetAttemptFailuresValidityInterval(), SubmitTime: st.GetSubmitTime(),
		StartTime: st.GetStartTime(), FinishTime: st.GetFinishTime(), Diagnostics: st.GetDiagnostics(), LabelExpr: asc.NodeLabelExpression}
	if st.Diagnostics == nil {
		rec.Diagnostics = ""
	}
	if rec.FailuresValidity < 0 {
		rec.FailuresValidity = 0
	}
	var err error
	if asc.AmContainerSpec != nil {
		if rec.AMSpec, err = proto.Marshal(asc.AmContainerSpec); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if asc.Resource != nil {
		if rec.AMResource, err = proto.Marshal(asc.Resource); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	for _, r := range asc.AmContainerResourceRequest {
		if r.NodeLabelExpression != nil {
			rec.AMLabelExpr = proto.String(r.GetNodeLabelExpression())
		}
	}
	for _, t := range st.ApplicationTimeouts {
		if rec.Timeouts == nil {
			rec.Timeouts = map[int32]int64{}
		}
		rec.Timeouts[int32(t.GetApplicationTimeoutType())] = t.GetTimeout()
	}
	if ext := st.Bobbin; ext != nil {
		rec.Version = ext.GetVersion()
		rec.Runtime = time.Duration(ext.GetRuntimeMs()) * time.Millisecond
		rec.Final = int32(ext.GetFinal())
		for _, e := range ext.Extra {
			if rec.Extra == nil {
				rec.Extra = map[string]int64{}
			}
			rec.Extra[e.GetKey()] = e.GetValue()
		}
	}
	if t := st.GetLaunchTime(); t != 0 && rec.Extra[ExtraLaunchTime] == 0 {
		if rec.Extra == nil {
			rec.Extra = map[string]int64{}
		}
		rec.Extra[ExtraLaunchTime] = t
	}
	if !asc.GetCancelTokensWhenComplete() {
		if rec.Extra == nil {
			rec.Extra = map[string]int64{}
		}
		rec.Extra[ExtraKeepTokens] = 1
	}

	// The attempts, in order.
	for name, data := range attemptData {
		var at yarnpb.ApplicationAttemptStateDataProto
		if err := proto.Unmarshal(data, &at); err != nil {
			return nil, fmt.Errorf("%s/%s: not an ApplicationAttemptStateDataProto: %w", path, name, err)
		}
		aid := records.AttemptIDFromProto(at.GetAttemptId())
		if aid.App != id {
			return nil, fmt.Errorf("%s/%s: the record is of attempt %s, not of application %s", path, name, aid, id)
		}
		ar, err := decodeJavaAttempt(&at, rec.Unmanaged)
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", path, name, err)
		}
		rec.Attempts = append(rec.Attempts, ar)
	}
	sort.Slice(rec.Attempts, func(i, j int) bool { return rec.Attempts[i].Attempt < rec.Attempts[j].Attempt })
	// An unfinished attempt that is not the last one (an RM stopped before storing how it
	// ended) failed, as the Java RM takes it; its exit status, unknown, counts.
	for i := 0; i+1 < len(rec.Attempts); i++ {
		if ar := &rec.Attempts[i]; !ended(ar.State) {
			ar.State = int32(yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FAILED)
			ar.Registered, ar.Unregistered, ar.AMExitStatus = false, false, exitcode.Invalid
		}
	}

	// What the records say of the application's state.
	switch st.GetApplicationState() {
	case yarnpb.RMAppStateProto_RMAPP_FINISHED, yarnpb.RMAppStateProto_RMAPP_FAILED, yarnpb.RMAppStateProto_RMAPP_KILLED:
		rec.State = int32(bobbinAppState[st.GetApplicationState()])
		if st.Bobbin == nil {
			// Java keeps the final status with the last attempt.
			rec.Final = int32(yarnpb.FinalApplicationStatusProto_APP_FAILED)
			switch {
			case st.GetApplicationState() == yarnpb.RMAppStateProto_RMAPP_KILLED:
				rec.Final = int32(yarnpb.FinalApplicationStatusProto_APP_KILLED)
			case st.GetApplicationState() == yarnpb.RMAppStateProto_RMAPP_FINISHED && len(rec.Attempts) > 0:
				rec.Final = rec.Attempts[len(rec.Attempts)-1].final
			}
		}
	default:
		rec.State = int32(yarnpb.YarnApplicationStateProto_ACCEPTED)
		rec.Final = int32(yarnpb.FinalApplicationStatusProto_APP_UNDEFINED)
		if n := len(rec.Attempts); n > 0 && rec.Attempts[n-1].Registered && !ended(rec.Attempts[n-1].State) {
			rec.State = int32(yarnpb.YarnApplicationStateProto_RUNNING)
		}
	}
	for _, ar := range rec.Attempts {
		if yarnpb.YarnApplicationAttemptStateProto(ar.State) == yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FAILED && CountsAsFailure(ar.AMExitStatus) {
			rec.Failures = append(rec.Failures, ar.FinishTime)
		}
	}
	return rec, nil
}

func decodeJavaAttempt(at *yarnpb.ApplicationAttemptStateDataProto, unmanaged bool) (AttemptRecord, error) {
	ar := AttemptRecord{Attempt: at.GetAttemptId().GetAttemptId(), Diagnostics: at.GetDiagnostics(), StartTime: at.GetStartTime(),
		FinishTime: at.GetFinishTime(), AMExitStatus: at.GetAmContainerExitStatus(), final: int32(at.GetFinalApplicationStatus())}
	if at.Diagnostics == nil {
		ar.Diagnostics = ""
	}
	if c := at.MasterContainer; c != nil && c.Id != nil {
		ar.AMContainer = records.ContainerIDFromProto(c.Id).String()
		if n := c.GetNodeId(); n.GetHost() != "" {
			ar.AMNode = net.JoinHostPort(n.GetHost(), strconv.Itoa(int(n.GetPort())))
		}
		ar.AMNodeHTTP = c.GetNodeHttpAddress()
	}
	if len(at.AppAttemptTokens) > 0 {
		creds, err := token.ReadCredentials(at.AppAttemptTokens)
		if err != nil {
			return ar, fmt.Errorf("app_attempt_tokens: %w", err)
		}
		ar.ClientKey = creds.Secrets[clientTokenKeyAlias]
	}
	if ext := at.Bobbin; ext != nil {
		ar.State = int32(ext.GetState())
		ar.Registered, ar.Unregistered = ext.GetRegistered(), ext.GetUnregistered()
		ar.Host, ar.RPCPort, ar.TrackingURL = ext.GetHost(), ext.GetRpcPort(), ext.GetTrackingUrl()
	}
	switch s := at.GetAppAttemptState(); {
	case at.AppAttemptState != nil:
		b, ok := bobbinAttemptState[s]
		if !ok {
			return ar, fmt.Errorf("attempt %d: stored state %s is not a final one", ar.Attempt, s)
		}
		if !ended(ar.State) || at.Bobbin == nil {
			ar.State = int32(b)
		}
		if ar.TrackingURL == "" {
			ar.TrackingURL = at.GetFinalTrackingUrl()
		}
	case at.Bobbin == nil || ended(ar.State):
		// Written by a Java RM while it ran: its AM container was allocated, and is
		// waited for (its AM registers again).
		if ar.AMContainer == "" && !unmanaged {
			return ar, fmt.Errorf("attempt %d: unfinished, with no AM container", ar.Attempt)
		}
		ar.State = int32(yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_LAUNCHED)
		ar.Registered, ar.Unregistered = false, false
	}
	return ar, nil
}

// CountsAsFailure reports whether an attempt failed with its AM container's exit status
// counts toward the application's max-attempts: not when the container was preempted,
// aborted, lost to failed disks or killed by the RM (the Java RM's
// RMAppAttemptImpl.shouldCountTowardsMaxAttemptRetry). The RM counts an attempt's failure
// by it, and decodeJavaApp derives the failures again from the stored attempts by it.
func CountsAsFailure(exit int32) bool {
	switch exit {
	case exitcode.Aborted, exitcode.Preempted, exitcode.DisksFailed, exitcode.KilledByResourceManager:
		return false
	}
	return true
}

func ended(s int32) bool {
	switch yarnpb.YarnApplicationAttemptStateProto(s) {
	case yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FINISHING, yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FINISHED,
		yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FAILED, yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_KILLED:
		return true
	}
	return false
}

// javaAppState is the final states of an application as the Java RM stores them.
var javaAppState = map[yarnpb.YarnApplicationStateProto]yarnpb.RMAppStateProto{
	yarnpb.YarnApplicationStateProto_FINISHED: yarnpb.RMAppStateProto_RMAPP_FINISHED,
	yarnpb.YarnApplicationStateProto_FAILED:   yarnpb.RMAppStateProto_RMAPP_FAILED,
	yarnpb.YarnApplicationStateProto_KILLED:   yarnpb.RMAppStateProto_RMAPP_KILLED,
}

var bobbinAppState = map[yarnpb.RMAppStateProto]yarnpb.YarnApplicationStateProto{
	yarnpb.RMAppStateProto_RMAPP_FINISHED: yarnpb.YarnApplicationStateProto_FINISHED,
	yarnpb.RMAppStateProto_RMAPP_FAILED:   yarnpb.YarnApplicationStateProto_FAILED,
	yarnpb.RMAppStateProto_RMAPP_KILLED:   yarnpb.YarnApplicationStateProto_KILLED,
}

// javaAttemptState is the final states of an attempt as the Java RM stores them: an
// attempt whose AM unregistered is FINISHED while its container exits.
var javaAttemptState = map[yarnpb.YarnApplicationAttemptStateProto]yarnpb.RMAppAttemptStateProto{
	yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FINISHING: yarnpb.RMAppAttemptStateProto_RMATTEMPT_FINISHED,
	yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FINISHED:  yarnpb.RMAppAttemptStateProto_RMATTEMPT_FINISHED,
	yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FAILED:    yarnpb.RMAppAttemptStateProto_RMATTEMPT_FAILED,
	yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_KILLED:    yarnpb.RMAppAttemptStateProto_RMATTEMPT_KILLED,
}

var bobbinAttemptState = map[yarnpb.RMAppAttemptStateProto]yarnpb.YarnApplicationAttemptStateProto{
	yarnpb.RMAppAttemptStateProto_RMATTEMPT_FINISHED: yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FINISHED,
	yarnpb.RMAppAttemptStateProto_RMATTEMPT_FAILED:   yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FAILED,
	yarnpb.RMAppAttemptStateProto_RMATTEMPT_KILLED:   yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_KILLED,
}

func sortedTimeoutTypes(m map[int32]int64) []int32 {
	keys := make([]int32, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	return keys
}

func sortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
