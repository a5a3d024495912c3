package rmservice

import (
	"context"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmcore"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/rpc/token"
	"github.com/bobbin-yarn/bobbin/yarn/audit"
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
	reg, err := s.rm.RegisterAM(att, req.GetHost(), req.GetRpcPort(), req.GetTrackingUrl(), req.GetPlacementConstraints())
	s.auditAM(ctx, "Register App Master", att, err)
	if err != nil {
		return nil, err
	}
	return &yarnpb.RegisterApplicationMasterResponseProto{
		MaximumCapability:        s.rm.MaximumCapabilityIn(reg.Queue),
		Queue:                    proto.String(s.rm.ReportedQueue(reg.Queue)),
		ClientToAmTokenMasterKey: reg.ClientKey,
		SchedulerResourceTypes:   []yarnpb.SchedulerResourceTypes{yarnpb.SchedulerResourceTypes_MEMORY},
		// 3.x AMRM clients take the cluster's resource types from here.
		ResourceTypes: s.rm.Types().InfoProtos(),
	}, nil
}

// allocate answers an AM heartbeat (rmcore.Core.Allocate): the answer comes marshalled.
func (s *amService) allocate(ctx context.Context, req *yarnpb.AllocateRequestProto) ([]byte, error) {
	att, keyID, err := s.callerKey(ctx)
	if err != nil {
		return nil, err
	}
	return s.rm.Allocate(att, keyID, req)
}

func (s *amService) finish(ctx context.Context, req *yarnpb.FinishApplicationMasterRequestProto) (*yarnpb.FinishApplicationMasterResponseProto, error) {
	att, err := s.caller(ctx)
	if err != nil {
		return nil, err
	}
	done, err := s.rm.FinishAM(att, req.GetFinalApplicationStatus(), req.GetDiagnostics(), req.GetTrackingUrl())
	s.auditAM(ctx, "Unregister App Master", att, err)
	if err != nil {
		return nil, err
	}
	return &yarnpb.FinishApplicationMasterResponseProto{IsUnregistered: proto.Bool(done)}, nil
}

// auditAM writes an AM call's audit line (RMAuditLogger's REGISTER_AM, UNREGISTER_AM).
func (s *amService) auditAM(ctx context.Context, op string, att records.AttemptID, err error) {
	auditCall(ctx, s.rm, op, "ApplicationMasterService", "", err, audit.KV{Key: "APPID", Value: att.App.String()}, audit.KV{Key: "APPATTEMPTID", Value: att.String()})
}
