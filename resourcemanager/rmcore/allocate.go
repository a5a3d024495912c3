package rmcore

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
)

// Allocate answers one AM heartbeat of att (keyID: the key its AMRMToken was signed
// with), following the response-id rules: a retried call gets the last answer again; one
// further behind is refused. The answer is returned marshalled (see allocateSerialized).
func (rm *Core) Allocate(att records.AttemptID, keyID int32, req *yarnpb.AllocateRequestProto) ([]byte, error) {
	defer rm.recovery.admitAM()() // after a restart, the NodeManagers' registrations first
	var b []byte
	var err error
	if !rm.apps.Serialize(att, func() { b, err = rm.allocateSerialized(att, keyID, req) }) {
		return nil, attemptNotFound(att)
	}
	return b, err
}

// allocateSerialized answers one allocate, with the attempt's own lock held: it checks the
// attempt's standing and the response id, validates the request, gives the engine the
// asks, blacklist and releases, and takes what the attempt has to collect; the registry
// is locked only to read and to record the attempt's fields.
// The answer is returned marshalled, its allocated containers written as bytes from the
// start (DrainFor).
func (rm *Core) allocateSerialized(att records.AttemptID, keyID int32, req *yarnpb.AllocateRequestProto) ([]byte, error) {
	var (
		lastID   int32
		lastSize int // the size of the attempt's last answer
		user     string
		priority int32
		queue    string
		appLabel *string // the submission's node-label expression
		replay   []byte
		spare    []byte // a buffer for the answer
		rerr     error
	)
	found := rm.apps.WithAttempt(att, func(a *rmstate.App, at *rmstate.Attempt) {
		if !at.Registered {
			rerr = exceptions.Errorf(exceptions.AMNotRegistered, "AM is not registered for known application attempt: %s or RM had restarted after AM registered . AM should re-register.", att)
			return
		}
		at.LastPing = rm.opts.Now()
		lastID, user, priority, lastSize = at.LastResponseID, a.User, a.Priority, len(at.LastResponse)
		queue, appLabel = a.Queue, a.LabelExpr
		if p := req.GetProgress(); p >= 0 && p <= 1 {
			at.Progress = p
		}
		switch {
		case req.GetResponseId()+1 == lastID && at.LastResponse != nil:
			replay = at.LastResponse // the AM retried: the same answer
		case req.GetResponseId() != lastID:
			rerr = exceptions.Errorf(exceptions.InvalidAMRequest, "Invalid responseId in AllocateRequest from application attempt: %s, expect responseId to be %d, but get %d", att, lastID, req.GetResponseId())
		default:
			spare, at.SpareResponse = at.SpareResponse, nil
		}
	})
	switch {
	case !found:
		return nil, attemptNotFound(att)
	case rerr != nil:
		return nil, rerr
	case replay != nil:
		return replay, nil
	}
	scheduling, commitScheduling, err := rm.SchedulingAsks(att, req.GetSchedulingRequests())
	if err != nil {
		return nil, err
	}
	// Asks are held to the cluster's maximum, not the queue's: the Java RM (2.7.3 and
	// 3.1.1 alike) tells the AM its queue's maximum at registration but validates asks
	// against yarn.scheduler.maximum-allocation-* (TestAskLimitsLikeApache).
	maxMB, maxVCores := int64(rm.settings.MaxAllocationMB), int64(rm.settings.MaxAllocationCore)
	for _, ask := range req.GetAsk() {
		if ask.GetCapability().GetMemory() > maxMB || int64(ask.GetCapability().GetVirtualCores()) > maxVCores ||
			ask.GetCapability().GetMemory() < 0 || ask.GetCapability().GetVirtualCores() < 0 || ask.GetNumContainers() < 0 {
			return nil, exceptions.Errorf(exceptions.InvalidResourceRequest, "Invalid resource request, requested memory < 0, or requested memory > max configured, requestedMemory=%d, maxMemory=%d", ask.GetCapability().GetMemory(), maxMB)
		}
		if err := rm.CheckExtraTypes(ask.GetCapability()); err != nil {
			return nil, err
		}
	}
	if err := rm.CheckLabels(queue, req.GetAsk(), appLabel); err != nil {
		rm.log.WithFields(map[string]any{"attempt": att.String(), "queue": queue}).WithError(err).Warn("invalid resource ask: its node label")
		return nil, err
	}
	if err := CheckRelease(att, req.GetRelease()); err != nil {
		return nil, err
	}
	appID := EngineID(att.App)
	if err := rm.engine.UpdateAsks(appID, append(rm.AsksFrom(req.GetAsk()), scheduling...)); err != nil {
		return nil, exceptions.Errorf(exceptions.InvalidResourceRequest, "%v", err)
	}
	commitScheduling()
	if bl := req.GetBlacklistRequest(); bl != nil {
		rm.engine.UpdateBlacklist(appID, rm.nodes.HostsToNodes(bl.GetBlacklistAdditions()), rm.nodes.HostsToNodes(bl.GetBlacklistRemovals()))
	}
	rm.Release(req.GetRelease())
	if len(req.GetAsk()) > 0 || len(scheduling) > 0 {
		rm.KickScheduler()
	}
	// Fields up to response_id, the allocated containers (field 3) and completed statuses
	// (4), then the rest: the order proto.Marshal writes a whole answer in. The answer
	// is written in one buffer sized like the attempt's last (answers come every second
	// and change slowly); the bytes kept for a retry are the ones sent.
	head := &yarnpb.AllocateResponseProto{ResponseId: proto.Int32(lastID + 1)}
	if cap(spare) < lastSize+512 {
		spare = make([]byte, 0, lastSize+512)
	}
	b, err := proto.MarshalOptions{}.MarshalAppend(spare[:0], head)
	if err != nil {
		return nil, fmt.Errorf("allocate response of %s: %w", att, err)
	}
	b, need := rm.DrainFor(b, att)
	// Then the rest in field order: the fields before nm_tokens, the NMTokens written as
	// bytes, the fields after.
	total, used := rm.engine.Totals()
	before := &yarnpb.AllocateResponseProto{
		NumClusterNodes: proto.Int32(rm.nodes.Running()),
		Preempt:         rm.TakePreemptions(att),
		// Headroom: what the cluster has free (MR ramps reducers and preempts its own
		// reducers from it, so it must not read 0 while room exists).
		Limit: rm.ResourceProto(total.Sub(used)),
	}
	if b, err = (proto.MarshalOptions{}).MarshalAppend(b, before); err != nil {
		return nil, fmt.Errorf("allocate response of %s: %w", att, err)
	}
	b = rm.AppendNMTokens(b, att, user, need)
	after := &yarnpb.AllocateResponseProto{
		// 3.x AMs (MapReduce's RMContainerAllocator) read it on every answer.
		ApplicationPriority: &yarnpb.PriorityProto{Priority: proto.Int32(priority)},
		UpdateErrors:        rm.UpdateErrors(att, req.GetUpdateRequests()),
	}
	if tok, ok := rm.amrm.IssueNext(att, keyID); ok {
		// A key roll is under way: the AM switches to a token of the next key.
		after.AmRmToken = tok.Proto()
	}
	if b, err = (proto.MarshalOptions{}).MarshalAppend(b, after); err != nil {
		return nil, fmt.Errorf("allocate response of %s: %w", att, err)
	}
	rm.apps.WithAttempt(att, func(_ *rmstate.App, at *rmstate.Attempt) {
		at.SpareResponse, at.LastResponse, at.LastResponseID = at.LastResponse, b, lastID+1
	})
	return b, nil
}
