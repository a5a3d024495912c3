package nodemanager

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/nodemanager/auxservices"
	"github.com/bobbin-yarn/bobbin/nodemanager/containers"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/rpc/token"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
	"github.com/bobbin-yarn/bobbin/yarn/protocol"
)

type containerManager struct{ nm *NodeManager }

func newContainerManager(nm *NodeManager) (*rpc.Protocol, error) {
	m := &containerManager{nm: nm}
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
	}, func(method string) error {
		return rpc.Errorf(exceptions.YarnException, "%s is not supported by this NodeManager", method)
	})
}

// caller is who a call speaks for: the NMToken's attempt, or (SIMPLE allowed) nobody in
// particular.
type caller struct {
	attempt records.AttemptID
	token   bool
}

func (m *containerManager) caller(ctx context.Context) (caller, error) {
	c, _ := rpc.CallerFrom(ctx)
	if c != nil && c.Auth == rpc.AuthToken && c.TokenKind == token.KindNM {
		var id yarnpb.NMTokenIdentifierProto
		if err := proto.Unmarshal(c.TokenID, &id); err != nil {
			return caller{}, rpc.Errorf(rpc.ClassInvalidToken, "malformed NMTokenIdentifier")
		}
		return caller{attempt: records.AttemptIDFromProto(id.GetAppAttemptId()), token: true}, nil
	}
	if m.nm.settings.AllowSimple {
		return caller{}, nil
	}
	return caller{}, rpc.Errorf(rpc.ClassInvalidToken, "No NMToken sent for %s", m.nm.NodeID())
}

func failure(id *yarnpb.ContainerIdProto, class, format string, args ...any) *yarnpb.ContainerExceptionMapProto {
	msg := fmt.Sprintf(format, args...)
	return &yarnpb.ContainerExceptionMapProto{ContainerId: id, Exception: &yarnpb.SerializedExceptionProto{
		Message: proto.String(msg), Trace: proto.String(class + ": " + msg), ClassName: proto.String(class)}}
}

func (m *containerManager) startContainers(ctx context.Context, req *yarnpb.StartContainersRequestProto) (*yarnpb.StartContainersResponseProto, error) {
	nm := m.nm
	if !nm.isRegistered() {
		return nil, rpc.Errorf(exceptions.NMNotYetReady, "Rejecting new containers as NodeManager has not yet connected with ResourceManager")
	}
	who, err := m.caller(ctx)
	if err != nil {
		return nil, err
	}
	resp := &yarnpb.StartContainersResponseProto{ServicesMetaData: nm.aux.Meta()}
	for _, r := range req.GetStartContainerRequest() {
		id, f := m.start(who, r)
		if f != nil {
			resp.FailedRequests = append(resp.FailedRequests, f)
			continue
		}
		resp.SucceededRequests = append(resp.SucceededRequests, id)
	}
	return resp, nil
}

// start validates one request and starts its container; a failure is returned for the
// response.
func (m *containerManager) start(who caller, r *yarnpb.StartContainerRequestProto) (cidp *yarnpb.ContainerIdProto, f *yarnpb.ContainerExceptionMapProto) {
	nm := m.nm
	tok := token.FromProto(r.GetContainerToken())
	var ident yarnpb.ContainerTokenIdentifierProto
	if tok == nil || proto.Unmarshal(tok.Identifier, &ident) != nil || ident.GetContainerId() == nil {
		return nil, failure(nil, rpc.ClassInvalidToken, "Invalid container token")
	}
	cidp = ident.GetContainerId()
	cid := records.ContainerIDFromProto(cidp)
	now := nm.opts.Now().UnixMilli()
	key, known := nm.keys.ContainerKey(ident.GetMasterKeyId())
	rmID, nodeID, dup := nm.startCheck(cid)
	switch {
	case !known || string(token.Password(key, tok.Identifier)) != string(tok.Password):
		return cidp, failure(cidp, rpc.ClassInvalidToken, "Invalid container token used for starting container on : %s", nodeID)
	case ident.GetExpiryTimeStamp() < now:
		return cidp, failure(cidp, exceptions.YarnException, "This token is expired. current time is %d found %d\nNote: System times on machines may be out of sync. Check system time and time zones.", now, ident.GetExpiryTimeStamp())
	case ident.GetNmHostAddr() != nodeID:
		return cidp, failure(cidp, exceptions.YarnException, "Container token for %s is for node %s, not this node %s", cid, ident.GetNmHostAddr(), nodeID)
	case ident.GetRmIdentifier() != rmID:
		return cidp, failure(cidp, exceptions.InvalidContainer, "Container %s rejected as it is allocated by a previous RM", cid)
	case who.token && who.attempt.App != cid.Attempt.App:
		return cidp, failure(cidp, exceptions.YarnException, "Unauthorized request to start container. \nNMToken for application attempt : %s was used for starting container with container token issued for application attempt : %s", who.attempt, cid.Attempt)
	case dup:
		return cidp, failure(cidp, exceptions.YarnException, "Container %s already is running on this node!!", cid)
	}
	clc := r.GetContainerLaunchContext()
	for _, sd := range clc.GetServiceData() {
		if !nm.aux.Has(sd.GetKey()) {
			return cidp, failure(cidp, exceptions.InvalidAuxService, "The auxService:%s does not exist", sd.GetKey())
		}
	}
	user := ident.GetAppSubmitter()
	app := cid.Attempt.App
	// Each service the launch context names learns what it brings (the MapReduce
	// shuffle: the job's token), as the Java NM's APPLICATION_INIT does per container.
	var serviceData map[string][]byte
	for _, sd := range clc.GetServiceData() {
		if err := nm.aux.InitializeApplication(sd.GetKey(), auxservices.AppInit{App: app, User: user, Data: sd.GetValue()}); err != nil {
			return cidp, failure(cidp, exceptions.YarnException, "%v", err)
		}
		if serviceData == nil {
			serviceData = map[string][]byte{}
		}
		serviceData[sd.GetKey()] = sd.GetValue()
	}
	request, err := proto.Marshal(r)
	if err != nil {
		return cidp, failure(cidp, exceptions.YarnException, "Container %s: %v", cid, err)
	}
	c := containers.New(nm.ctx, containers.Spec{ID: cid, Ident: &ident, User: user, CLC: clc, Request: request, Dirs: nm.dirsFor(cid, user)})
	if !nm.table.Add(c, serviceData) { // recorded before the AM hears it was accepted
		c.Release()
		return cidp, failure(cidp, exceptions.YarnException, "Container %s already is running on this node!!", cid)
	}
	nm.log.WithFields(map[string]any{"container": cid.String(), "application": app.String(), "user": user}).Info("start container request")
	nm.spawn(func() { nm.run(c) })
	return cidp, nil
}

// authorizeFor checks that an NMToken caller asks about its own application's container.
func (m *containerManager) authorizeFor(who caller, id records.ContainerID) error {
	if who.token && who.attempt.App != id.Attempt.App {
		return fmt.Errorf("Unauthorized request to %s by %s", id, who.attempt)
	}
	return nil
}

func (m *containerManager) stopContainers(ctx context.Context, req *yarnpb.StopContainersRequestProto) (*yarnpb.StopContainersResponseProto, error) {
	who, err := m.caller(ctx)
	if err != nil {
		return nil, err
	}
	resp := &yarnpb.StopContainersResponseProto{}
	for _, p := range req.GetContainerId() {
		id := records.ContainerIDFromProto(p)
		if err := m.authorizeFor(who, id); err != nil {
			resp.FailedRequests = append(resp.FailedRequests, failure(p, exceptions.YarnException, "%v", err))
			continue
		}
		c := m.nm.table.Get(id)
		if c == nil {
			resp.FailedRequests = append(resp.FailedRequests, failure(p, exceptions.YarnException, "Container %s is not handled by this NodeManager", id))
			continue
		}
		// Stopping is asynchronous in the Java NM too: the call returns, the status follows.
		m.nm.spawn(func() { m.nm.kill(c, exitcode.KilledByAppMaster, "Container killed by the ApplicationMaster.") })
		resp.SucceededRequests = append(resp.SucceededRequests, p)
	}
	return resp, nil
}

func (m *containerManager) getContainerStatuses(ctx context.Context, req *yarnpb.GetContainerStatusesRequestProto) (*yarnpb.GetContainerStatusesResponseProto, error) {
	who, err := m.caller(ctx)
	if err != nil {
		return nil, err
	}
	resp := &yarnpb.GetContainerStatusesResponseProto{}
	for _, p := range req.GetContainerId() {
		id := records.ContainerIDFromProto(p)
		if err := m.authorizeFor(who, id); err != nil {
			resp.FailedRequests = append(resp.FailedRequests, failure(p, exceptions.YarnException, "%v", err))
			continue
		}
		v, ok := m.nm.table.View(id)
		if !ok {
			resp.FailedRequests = append(resp.FailedRequests, failure(p, exceptions.YarnException, "Container %s is not handled by this NodeManager", id))
			continue
		}
		resp.Status = append(resp.Status, v.Status())
	}
	return resp, nil
}

// startCheck is what a start request is checked against: the RM's identifier, this
// node's id, and whether the container is already here.
func (nm *NodeManager) startCheck(id records.ContainerID) (rmIdentifier int64, nodeID string, dup bool) {
	dup = nm.table.Get(id) != nil
	nm.mu.Lock()
	defer nm.mu.Unlock()
	return nm.rmIdentifier, nm.nodeID, dup
}
