package rmservice

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmcore"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/rpc/token"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
	"github.com/bobbin-yarn/bobbin/yarn/protocol"
	"github.com/bobbin-yarn/bobbin/yarn/security"
)

// amService answers ApplicationMasterProtocol (yarn.resourcemanager.scheduler.address).
// The attempt a call is for comes only from the connection's AMRMToken (protocol.md
// §2.5, §4.2).
type amService struct {
	rm *rmcore.Core
}

func NewAMService(rm *rmcore.Core) (*rpc.Protocol, error) {
	s := &amService{rm: rm}
	sd := yarnpb.File_yarn_applicationmaster_protocol_proto.Services().ByName("ApplicationMasterProtocolService")
	return rpc.ServiceProtocol(protocol.ApplicationMaster, sd, map[string]rpc.Method{
		"registerApplicationMaster": rpc.Unary(s.register),
		"allocate":                  rpc.UnaryEncoded[*yarnpb.AllocateRequestProto, *yarnpb.AllocateResponseProto](s.allocate),
		"finishApplicationMaster":   rpc.Unary(s.finish),
	}, func(method string) error {
		return rpc.Errorf(exceptions.YarnException, "%s is not supported", method)
	})
}

// caller returns the attempt of the connection's AMRMToken.
func (s *amService) caller(ctx context.Context) (records.AttemptID, error) {
	att, _, err := s.callerKey(ctx)
	return att, err
}

// callerKey returns the attempt of the connection's AMRMToken and the key it was signed
// with.
func (s *amService) callerKey(ctx context.Context) (records.AttemptID, int32, error) {
	c, _ := rpc.CallerFrom(ctx)
	if c == nil || c.Auth != rpc.AuthToken || c.TokenKind != token.KindAMRM {
		user := ""
		if c != nil {
			user = c.User
		}
		return records.AttemptID{}, 0, rpc.Errorf(exceptions.YarnException, "No AMRMToken found for user %s", user)
	}
	att, err := security.AttemptOf(c.TokenID)
	return att, security.KeyIDOf(c.TokenID), err
}

func (s *amService) register(ctx context.Context, req *yarnpb.RegisterApplicationMasterRequestProto) (*yarnpb.RegisterApplicationMasterResponseProto, error) {
	att, err := s.caller(ctx)
	if err != nil {
		return nil, err
	}
	reg, err := s.rm.RegisterAM(att, req.GetHost(), req.GetRpcPort(), req.GetTrackingUrl(), len(req.GetPlacementConstraints()))
	if err != nil {
		return nil, err
	}
	return &yarnpb.RegisterApplicationMasterResponseProto{
		MaximumCapability:        s.rm.MaximumCapabilityIn(reg.Queue),
		Queue:                    proto.String(reg.Queue),
		ClientToAmTokenMasterKey: reg.ClientKey,
		SchedulerResourceTypes:   []yarnpb.SchedulerResourceTypes{yarnpb.SchedulerResourceTypes_MEMORY},
		// 3.x AMRM clients take the cluster's resource types from here.
		ResourceTypes: s.rm.Types.InfoProtos(),
	}, nil
}

// allocate follows the response-id rules: a retried call gets the last answer again; one
// further behind is refused. The answer is returned marshalled (see allocateSerialized).
func (s *amService) allocate(ctx context.Context, req *yarnpb.AllocateRequestProto) ([]byte, error) {
	att, keyID, err := s.callerKey(ctx)
	if err != nil {
		return nil, err
	}
	var b []byte
	if !s.rm.Apps.Serialize(att, func() { b, err = s.allocateSerialized(att, keyID, req) }) {
		return nil, rmcore.AttemptNotFound(att)
	}
	return b, err
}

// allocateSerialized answers one allocate, with the attempt's own lock held: it checks the
// attempt's standing and the response id, validates the request, gives the engine the
// asks, blacklist and releases, and takes what the attempt has to collect; the registry
// is locked only to read and to record the attempt's fields.
// The answer is returned marshalled, its allocated containers written as bytes from the
// start (rmcore.DrainFor).
func (s *amService) allocateSerialized(att records.AttemptID, keyID int32, req *yarnpb.AllocateRequestProto) ([]byte, error) {
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
	found := s.rm.Apps.WithAttempt(att, func(a *rmstate.App, at *rmstate.Attempt) {
		if !at.Registered {
			rerr = rpc.Errorf(exceptions.AMNotRegistered, "AM is not registered for known application attempt: %s or RM had restarted after AM registered . AM should re-register.", att)
			return
		}
		at.LastPing = s.rm.Opts.Now()
		lastID, user, priority, lastSize = at.LastResponseID, a.User, a.Priority, len(at.LastResponse)
		queue, appLabel = a.Queue, a.LabelExpr
		if p := req.GetProgress(); p >= 0 && p <= 1 {
			at.Progress = p
		}
		switch {
		case req.GetResponseId()+1 == lastID && at.LastResponse != nil:
			replay = at.LastResponse // the AM retried: the same answer
		case req.GetResponseId() != lastID:
			rerr = rpc.Errorf(exceptions.InvalidAMRequest, "Invalid responseId in AllocateRequest from application attempt: %s, expect responseId to be %d, but get %d", att, lastID, req.GetResponseId())
		default:
			spare, at.SpareResponse = at.SpareResponse, nil
		}
	})
	switch {
	case !found:
		return nil, rmcore.AttemptNotFound(att)
	case rerr != nil:
		return nil, rerr
	case replay != nil:
		return replay, nil
	}
	if err := s.rm.CheckSchedulingRequests(att, len(req.GetSchedulingRequests())); err != nil {
		return nil, err
	}
	// Asks are held to the cluster's maximum, not the queue's: the Java RM (2.7.3 and
	// 3.1.1 alike) tells the AM its queue's maximum at registration but validates asks
	// against yarn.scheduler.maximum-allocation-* (TestAskLimitsLikeApache).
	maxMB, maxVCores := int64(s.rm.Settings.MaxAllocationMB), int64(s.rm.Settings.MaxAllocationCore)
	for _, ask := range req.GetAsk() {
		if ask.GetCapability().GetMemory() > maxMB || int64(ask.GetCapability().GetVirtualCores()) > maxVCores ||
			ask.GetCapability().GetMemory() < 0 || ask.GetCapability().GetVirtualCores() < 0 || ask.GetNumContainers() < 0 {
			return nil, rpc.Errorf(exceptions.InvalidResourceRequest, "Invalid resource request, requested memory < 0, or requested memory > max configured, requestedMemory=%d, maxMemory=%d", ask.GetCapability().GetMemory(), maxMB)
		}
		if err := s.rm.CheckExtraTypes(ask.GetCapability()); err != nil {
			return nil, err
		}
	}
	if err := s.rm.CheckLabels(queue, req.GetAsk(), appLabel); err != nil {
		s.rm.Log.WithFields(map[string]any{"attempt": att.String(), "queue": queue}).WithError(err).Warn("invalid resource ask: its node label")
		return nil, err
	}
	if err := rmcore.CheckRelease(att, req.GetRelease()); err != nil {
		return nil, err
	}
	appID := rmcore.EngineID(att.App)
	if err := s.rm.Engine.UpdateAsks(appID, s.rm.AsksFrom(req.GetAsk())); err != nil {
		return nil, rpc.Errorf(exceptions.InvalidResourceRequest, "%v", err)
	}
	if bl := req.GetBlacklistRequest(); bl != nil {
		s.rm.Engine.UpdateBlacklist(appID, s.rm.Nodes.HostsToNodes(bl.GetBlacklistAdditions()), s.rm.Nodes.HostsToNodes(bl.GetBlacklistRemovals()))
	}
	s.rm.Release(req.GetRelease())
	if len(req.GetAsk()) > 0 {
		s.rm.KickScheduler()
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
	b, need := s.rm.DrainFor(b, att)
	// Then the rest in field order: the fields before nm_tokens, the NMTokens written as
	// bytes, the fields after.
	total, used := s.rm.Engine.Totals()
	before := &yarnpb.AllocateResponseProto{
		NumClusterNodes: proto.Int32(s.rm.Nodes.Running()),
		Preempt:         s.rm.TakePreemptions(att),
		// Headroom: what the cluster has free (MR ramps reducers and preempts its own
		// reducers from it, so it must not read 0 while room exists).
		Limit: s.rm.ResourceProto(total.Sub(used)),
	}
	if b, err = (proto.MarshalOptions{}).MarshalAppend(b, before); err != nil {
		return nil, fmt.Errorf("allocate response of %s: %w", att, err)
	}
	b = s.rm.AppendNMTokens(b, att, user, need)
	after := &yarnpb.AllocateResponseProto{
		// 3.x AMs (MapReduce's RMContainerAllocator) read it on every answer.
		ApplicationPriority: &yarnpb.PriorityProto{Priority: proto.Int32(priority)},
	}
	if tok, ok := s.rm.AMRM.IssueNext(att, keyID); ok {
		// A key roll is under way: the AM switches to a token of the next key.
		after.AmRmToken = tok.Proto()
	}
	if b, err = (proto.MarshalOptions{}).MarshalAppend(b, after); err != nil {
		return nil, fmt.Errorf("allocate response of %s: %w", att, err)
	}
	s.rm.Apps.WithAttempt(att, func(_ *rmstate.App, at *rmstate.Attempt) {
		at.SpareResponse, at.LastResponse, at.LastResponseID = at.LastResponse, b, lastID+1
	})
	return b, nil
}

func (s *amService) finish(ctx context.Context, req *yarnpb.FinishApplicationMasterRequestProto) (*yarnpb.FinishApplicationMasterResponseProto, error) {
	att, err := s.caller(ctx)
	if err != nil {
		return nil, err
	}
	done, err := s.rm.FinishAM(att, req.GetFinalApplicationStatus(), req.GetDiagnostics(), req.GetTrackingUrl())
	if err != nil {
		return nil, err
	}
	return &yarnpb.FinishApplicationMasterResponseProto{IsUnregistered: proto.Bool(done)}, nil
}
