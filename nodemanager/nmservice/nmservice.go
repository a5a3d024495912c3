// Package nmservice is the NodeManager's ContainerManagementProtocol: it reads who a call
// speaks for (the NMToken's attempt), turns each request into a call on Node, and each
// answer or YARN fact (yarn/exceptions) into the response or per-container failure an AM
// or the RM's launcher expects. What a call does belongs to the node.
package nmservice

import (
	"context"
	"errors"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/rpc/token"
	"github.com/bobbin-yarn/bobbin/yarn/audit"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
	"github.com/bobbin-yarn/bobbin/yarn/protocol"
)

// Caller is who a call speaks for: the NMToken's attempt, or (SIMPLE allowed) nobody in
// particular.
type Caller struct {
	Attempt records.AttemptID
	Token   bool
	// User is the connection's user (the NMToken's application submitter for a token
	// caller), IP its host: what the audit lines name.
	User, IP string
}

// Node is what the protocol asks of the NodeManager. Its errors are YARN facts
// (exceptions.Error, else a YarnException).
type Node interface {
	// NodeID is the node's "host:port".
	NodeID() string
	// AllowSimple: calls without an NMToken are served (bobbin.nodemanager.allow-simple-auth).
	AllowSimple() bool
	// Ready refuses new containers until the node has registered with an RM.
	Ready() error
	// Start checks one request and starts its container; id is the request's container
	// (nil when its token says none).
	Start(who Caller, r *yarnpb.StartContainerRequestProto) (id *yarnpb.ContainerIdProto, err error)
	// ServicesMeta is the auxiliary services' metadata a start answers with.
	ServicesMeta() []*yarnpb.StringBytesMapProto
	// Stop has a container killed (asynchronously: its status follows).
	Stop(who Caller, id records.ContainerID) error
	// Status is a container's status now.
	Status(who Caller, id records.ContainerID) (*yarnpb.ContainerStatusProto, error)
	// LocalizationStatuses is where the localization of a container's resources stands.
	LocalizationStatuses(who Caller, id records.ContainerID) ([]*yarnpb.LocalizationStatusProto, error)
	// Signal sends a running container's processes a signal.
	Signal(who Caller, id records.ContainerID, cmd yarnpb.SignalContainerCommandProto) error
}

type service struct{ node Node }

// New is ContainerManagementProtocol over node.
func New(node Node) (*rpc.Protocol, error) {
	m := &service{node: node}
	sd := yarnpb.File_yarn_containermanagement_protocol_proto.Services().ByName("ContainerManagementProtocolService")
	return rpc.ServiceProtocol(protocol.ContainerManagement, sd, map[string]rpc.Method{
		"startContainers":      rpc.Unary(m.startContainers),
		"stopContainers":       rpc.Unary(m.stopContainers),
		"getContainerStatuses": rpc.Unary(m.getContainerStatuses),
		// Hadoop 3.x
		"signalToContainer":            rpc.Unary(m.signalToContainer),
		"updateContainer":              rpc.Unary(m.updateContainer),
		"increaseContainersResource":   rpc.Unary(m.increaseContainersResource),
		"localize":                     rpc.Unary(m.localize),
		"reInitializeContainer":        rpc.Unary(m.reInitializeContainer),
		"restartContainer":             rpc.Unary(m.restartContainer),
		"rollbackLastReInitialization": rpc.Unary(m.rollbackLastReInitialization),
		"commitLastReInitialization":   rpc.Unary(m.commitLastReInitialization),
		// Hadoop 3.3+
		"getLocalizationStatuses": rpc.Unary(m.getLocalizationStatuses),
	}, func(method string) error {
		return rpc.Errorf(exceptions.YarnException, "%s is not supported by this NodeManager", method)
	})
}

func (m *service) caller(ctx context.Context) (Caller, error) {
	c, _ := rpc.CallerFrom(ctx)
	var who Caller
	if c != nil {
		who.User, who.IP = c.User, audit.IP(c.RemoteAddr)
	}
	if c != nil && c.Auth == rpc.AuthToken && c.TokenKind == token.KindNM {
		var id yarnpb.NMTokenIdentifierProto
		if err := proto.Unmarshal(c.TokenID, &id); err != nil {
			return Caller{}, rpc.Errorf(rpc.ClassInvalidToken, "malformed NMTokenIdentifier")
		}
		who.Attempt, who.Token = records.AttemptIDFromProto(id.GetAppAttemptId()), true
		if u := id.GetAppSubmitter(); u != "" {
			who.User = u
		}
		return who, nil
	}
	if m.node.AllowSimple() {
		return who, nil
	}
	return Caller{}, rpc.Errorf(rpc.ClassInvalidToken, "No NMToken sent for %s", m.node.NodeID())
}

// failure is a per-container failure of class with message.
func failure(id *yarnpb.ContainerIdProto, class, msg string) *yarnpb.ContainerExceptionMapProto {
	return &yarnpb.ContainerExceptionMapProto{ContainerId: id, Exception: &yarnpb.SerializedExceptionProto{
		Message: proto.String(msg), Trace: proto.String(class + ": " + msg), ClassName: proto.String(class)}}
}

// failureOf is the per-container failure an error of the node's stands for.
func failureOf(id *yarnpb.ContainerIdProto, err error) *yarnpb.ContainerExceptionMapProto {
	class, msg, ok := exceptions.ClassOf(err)
	if !ok {
		class, msg = exceptions.YarnException, err.Error()
	}
	return failure(id, class, msg)
}

// callError is the call's error an error of the node's stands for: its YARN class as it is,
// any other error a YarnException.
func callError(err error) error {
	var je rpc.JavaException
	if errors.As(err, &je) {
		return err
	}
	return rpc.Errorf(exceptions.YarnException, "%v", err)
}

func (m *service) startContainers(ctx context.Context, req *yarnpb.StartContainersRequestProto) (*yarnpb.StartContainersResponseProto, error) {
	if err := m.node.Ready(); err != nil {
		return nil, callError(err)
	}
	who, err := m.caller(ctx)
	if err != nil {
		return nil, err
	}
	resp := &yarnpb.StartContainersResponseProto{ServicesMetaData: m.node.ServicesMeta()}
	for _, r := range req.GetStartContainerRequest() {
		id, err := m.node.Start(who, r)
		if err != nil {
			resp.FailedRequests = append(resp.FailedRequests, failureOf(id, err))
			continue
		}
		resp.SucceededRequests = append(resp.SucceededRequests, id)
	}
	return resp, nil
}

func (m *service) stopContainers(ctx context.Context, req *yarnpb.StopContainersRequestProto) (*yarnpb.StopContainersResponseProto, error) {
	who, err := m.caller(ctx)
	if err != nil {
		return nil, err
	}
	resp := &yarnpb.StopContainersResponseProto{}
	for _, p := range req.GetContainerId() {
		if err := m.node.Stop(who, records.ContainerIDFromProto(p)); err != nil {
			resp.FailedRequests = append(resp.FailedRequests, failureOf(p, err))
			continue
		}
		resp.SucceededRequests = append(resp.SucceededRequests, p)
	}
	return resp, nil
}

// getLocalizationStatuses answers, per container asked for, its resources' localization
// (a container not here, or not the caller's: a failed request, as getContainerStatuses).
func (m *service) getLocalizationStatuses(ctx context.Context, req *yarnpb.GetLocalizationStatusesRequestProto) (*yarnpb.GetLocalizationStatusesResponseProto, error) {
	who, err := m.caller(ctx)
	if err != nil {
		return nil, err
	}
	resp := &yarnpb.GetLocalizationStatusesResponseProto{}
	for _, p := range req.GetContainerId() {
		st, err := m.node.LocalizationStatuses(who, records.ContainerIDFromProto(p))
		if err != nil {
			resp.FailedRequests = append(resp.FailedRequests, failureOf(p, err))
			continue
		}
		resp.CntnLocalizationStatuses = append(resp.CntnLocalizationStatuses, &yarnpb.ContainerLocalizationStatusesProto{ContainerId: p, LocalizationStatuses: st})
	}
	return resp, nil
}

func (m *service) getContainerStatuses(ctx context.Context, req *yarnpb.GetContainerStatusesRequestProto) (*yarnpb.GetContainerStatusesResponseProto, error) {
	who, err := m.caller(ctx)
	if err != nil {
		return nil, err
	}
	resp := &yarnpb.GetContainerStatusesResponseProto{}
	for _, p := range req.GetContainerId() {
		st, err := m.node.Status(who, records.ContainerIDFromProto(p))
		if err != nil {
			resp.FailedRequests = append(resp.FailedRequests, failureOf(p, err))
			continue
		}
		resp.Status = append(resp.Status, st)
	}
	return resp, nil
}
