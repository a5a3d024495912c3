package nodemanager

import (
	"fmt"
	"net"
	"strings"
	"syscall"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/container"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/nodemanager/auxservices"
	"github.com/bobbin-yarn/bobbin/nodemanager/containers"
	"github.com/bobbin-yarn/bobbin/nodemanager/nmservice"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/rpc/token"
	"github.com/bobbin-yarn/bobbin/yarn/audit"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

// What AMs and the RM's launcher ask of containers over ContainerManagementProtocol
// (package nmservice): start one (its token checked as the Java NM's ContainerManagerImpl
// does), stop one, its status, a signal. The answers are YARN facts; nmservice turns them
// into the protocol's.

// protocolNode is the NodeManager as nmservice sees it.
type protocolNode struct{ nm *NodeManager }

var _ nmservice.Node = protocolNode{}

func (p protocolNode) NodeID() string    { return p.nm.NodeID() }
func (p protocolNode) AllowSimple() bool { return p.nm.settings.AllowSimple }

func (p protocolNode) Ready() error {
	if !p.nm.isRegistered() {
		return exceptions.Errorf(exceptions.NMNotYetReady, "Rejecting new containers as NodeManager has not yet connected with ResourceManager")
	}
	return nil
}

func (p protocolNode) ServicesMeta() []*yarnpb.StringBytesMapProto { return p.nm.aux.Meta() }

// Start checks one request's token and launch context, and starts its container; the
// audit line says how it went (NMAuditLogger's "Start Container Request").
func (p protocolNode) Start(who nmservice.Caller, r *yarnpb.StartContainerRequestProto) (*yarnpb.ContainerIdProto, error) {
	cidp, err := p.start(who, r)
	var ids []audit.KV
	if cidp != nil {
		id := records.ContainerIDFromProto(cidp)
		ids = []audit.KV{{Key: "APPID", Value: id.Attempt.App.String()}, {Key: "CONTAINERID", Value: id.String()}}
	}
	if err != nil {
		p.nm.audit.Failure(who.User, who.IP, "Start Container Request", "ContainerManageImpl", audit.Why(err), "", ids...)
	} else {
		p.nm.audit.Success(who.User, who.IP, "Start Container Request", "ContainerManageImpl", ids...)
	}
	return cidp, err
}

func (p protocolNode) start(who nmservice.Caller, r *yarnpb.StartContainerRequestProto) (cidp *yarnpb.ContainerIdProto, _ error) {
	nm := p.nm
	tok := token.FromProto(r.GetContainerToken())
	var ident yarnpb.ContainerTokenIdentifierProto
	if tok == nil || proto.Unmarshal(tok.Identifier, &ident) != nil || ident.GetContainerId() == nil {
		return nil, exceptions.Errorf(rpc.ClassInvalidToken, "Invalid container token")
	}
	cidp = ident.GetContainerId()
	cid := records.ContainerIDFromProto(cidp)
	now := nm.opts.Now().UnixMilli()
	key, known := nm.keys.ContainerKey(ident.GetMasterKeyId())
	rmID, nodeID, dup := nm.startCheck(cid)
	switch {
	case !known || string(token.Password(key, tok.Identifier)) != string(tok.Password):
		return cidp, exceptions.Errorf(rpc.ClassInvalidToken, "Invalid container token used for starting container on : %s", nodeID)
	case ident.GetExpiryTimeStamp() < now:
		return cidp, exceptions.Errorf(exceptions.YarnException, "This token is expired. current time is %d found %d\nNote: System times on machines may be out of sync. Check system time and time zones.", now, ident.GetExpiryTimeStamp())
	case ident.GetNmHostAddr() != nodeID:
		return cidp, exceptions.Errorf(exceptions.YarnException, "Container token for %s is for node %s, not this node %s", cid, ident.GetNmHostAddr(), nodeID)
	case ident.GetRmIdentifier() != rmID:
		return cidp, exceptions.Errorf(exceptions.InvalidContainer, "Container %s rejected as it is allocated by a previous RM", cid)
	case who.Token && who.Attempt.App != cid.Attempt.App:
		return cidp, exceptions.Errorf(exceptions.YarnException, "Unauthorized request to start container. \nNMToken for application attempt : %s was used for starting container with container token issued for application attempt : %s", who.Attempt, cid.Attempt)
	case dup:
		return cidp, exceptions.Errorf(exceptions.YarnException, "Container %s already is running on this node!!", cid)
	}
	clc := r.GetContainerLaunchContext()
	for _, sd := range clc.GetServiceData() {
		if !nm.aux.Has(sd.GetKey()) {
			return cidp, exceptions.Errorf(exceptions.InvalidAuxService, "The auxService:%s does not exist", sd.GetKey())
		}
	}
	user := ident.GetAppSubmitter()
	app := cid.Attempt.App
	// Each service the launch context names learns what it brings (the MapReduce
	// shuffle: the job's token), as the Java NM's APPLICATION_INIT does per container.
	var serviceData map[string][]byte
	for _, sd := range clc.GetServiceData() {
		if err := nm.aux.InitializeApplication(sd.GetKey(), auxservices.AppInit{App: app, User: user, Data: sd.GetValue()}); err != nil {
			return cidp, exceptions.Errorf(exceptions.YarnException, "%v", err)
		}
		if serviceData == nil {
			serviceData = map[string][]byte{}
		}
		serviceData[sd.GetKey()] = sd.GetValue()
	}
	request, err := proto.Marshal(r)
	if err != nil {
		return cidp, exceptions.Errorf(exceptions.YarnException, "Container %s: %v", cid, err)
	}
	c := containers.New(nm.ctx, containers.Spec{ID: cid, Ident: &ident, User: user, CLC: clc, Request: request, Dirs: nm.dirsFor(cid, user)})
	if !nm.table.Add(c, serviceData) { // recorded before the AM hears it was accepted
		c.Release()
		return cidp, exceptions.Errorf(exceptions.YarnException, "Container %s already is running on this node!!", cid)
	}
	nm.log.WithFields(map[string]any{"container": cid.String(), "application": app.String(), "user": user}).Info("start container request")
	nm.spawn(func() { nm.run(c) })
	return cidp, nil
}

// authorizeFor checks that an NMToken caller asks about its own application's container.
func authorizeFor(who nmservice.Caller, id records.ContainerID) error {
	if who.Token && who.Attempt.App != id.Attempt.App {
		return exceptions.Errorf(exceptions.YarnException, "Unauthorized request to %s by %s", id, who.Attempt)
	}
	return nil
}

// notHandled is the answer about a container the node does not have.
func notHandled(id records.ContainerID) error {
	return exceptions.Errorf(exceptions.YarnException, "Container %s is not handled by this NodeManager", id)
}

func (p protocolNode) Stop(who nmservice.Caller, id records.ContainerID) error {
	ids := []audit.KV{{Key: "APPID", Value: id.Attempt.App.String()}, {Key: "CONTAINERID", Value: id.String()}}
	fail := func(err error) error {
		p.nm.audit.Failure(who.User, who.IP, "Stop Container Request", "ContainerManageImpl", audit.Why(err), "", ids...)
		return err
	}
	if err := authorizeFor(who, id); err != nil {
		return fail(err)
	}
	nm := p.nm
	c := nm.table.Get(id)
	if c == nil {
		return fail(notHandled(id))
	}
	nm.audit.Success(who.User, who.IP, "Stop Container Request", "ContainerManageImpl", ids...)
	// Stopping is asynchronous in the Java NM too: the call returns, the status follows.
	nm.spawn(func() { nm.kill(c, exitcode.KilledByAppMaster, "Container killed by the ApplicationMaster.") })
	return nil
}

func (p protocolNode) Status(who nmservice.Caller, id records.ContainerID) (*yarnpb.ContainerStatusProto, error) {
	if err := authorizeFor(who, id); err != nil {
		return nil, err
	}
	v, ok := p.nm.table.View(id)
	if !ok {
		return nil, notHandled(id)
	}
	st := v.Status()
	if v.Proc != nil {
		// Once launched, the container's address, as the Java NM reports it (ContainerStatus
		// IPS and HOST attributes: the NM's host for a process container): the YARN service
		// AM waits for them before it calls a component instance ready.
		st.ContainerAttributes = p.nm.ipAndHost()
	}
	return st, nil
}

// ipAndHost are the IPS and HOST container attributes of a container run on this node:
// the node's host name and its first address (IPv4 first), as the Java NM's
// ContainerExecutor.getIpAndHost gives for a process on the host.
func (nm *NodeManager) ipAndHost() []*yarnpb.StringStringMapProto {
	// Worked out once: the YARN service AM asks for its containers' statuses every second.
	if attrs := nm.containerAddr.Load(); attrs != nil {
		return *attrs
	}
	host := nm.NodeID()
	if i := strings.LastIndexByte(host, ':'); i > 0 {
		host = host[:i]
	}
	ip := host
	if addrs, err := net.LookupIP(host); err == nil && len(addrs) > 0 {
		ip = addrs[0].String()
		for _, a := range addrs {
			if a.To4() != nil {
				ip = a.String()
				break
			}
		}
	}
	attrs := []*yarnpb.StringStringMapProto{{Key: proto.String("IPS"), Value: proto.String(ip)}, {Key: proto.String("HOST"), Value: proto.String(host)}}
	nm.containerAddr.Store(&attrs)
	return attrs
}

// LocalizationStatuses is where the localization of a container's resources stands.
func (p protocolNode) LocalizationStatuses(who nmservice.Caller, id records.ContainerID) ([]*yarnpb.LocalizationStatusProto, error) {
	if err := authorizeFor(who, id); err != nil {
		return nil, err
	}
	v, ok := p.nm.table.View(id)
	if !ok {
		return nil, notHandled(id)
	}
	return v.LocalizationStatuses(), nil
}

func (p protocolNode) Signal(who nmservice.Caller, id records.ContainerID, cmd yarnpb.SignalContainerCommandProto) error {
	if err := authorizeFor(who, id); err != nil {
		return err
	}
	return p.nm.signal(id, cmd)
}

// startCheck is what a start request is checked against: the RM's identifier, this
// node's id, and whether the container is already here.
func (nm *NodeManager) startCheck(id records.ContainerID) (rmIdentifier int64, nodeID string, dup bool) {
	dup = nm.table.Get(id) != nil
	nm.mu.Lock()
	defer nm.mu.Unlock()
	return nm.rmIdentifier, nm.nodeID, dup
}

// signalOf is the signal the Java NM sends for a SignalContainerCommand
// (ContainerLaunch.translateCommandToSignal).
func signalOf(cmd yarnpb.SignalContainerCommandProto) (syscall.Signal, bool) {
	switch cmd {
	case yarnpb.SignalContainerCommandProto_OUTPUT_THREAD_DUMP:
		return syscall.SIGQUIT, true
	case yarnpb.SignalContainerCommandProto_GRACEFUL_SHUTDOWN:
		return syscall.SIGTERM, true
	case yarnpb.SignalContainerCommandProto_FORCEFUL_SHUTDOWN:
		return syscall.SIGKILL, true
	}
	return 0, false
}

// signal sends cmd's signal to a running container's process group (for an AM, or for the
// RM's heartbeat: `yarn container -signal`). The container is not stopped by the
// NodeManager: if the signal ends it, its exit is reported as usual.
func (nm *NodeManager) signal(id records.ContainerID, cmd yarnpb.SignalContainerCommandProto) error {
	sig, ok := signalOf(cmd)
	if !ok {
		return fmt.Errorf("unknown signal command %v", cmd)
	}
	v, known := nm.table.View(id)
	if !known {
		return notHandled(id)
	}
	if v.Proc == nil {
		return fmt.Errorf("container %s is not running", id)
	}
	s, ok := v.Proc.(container.Signaler)
	if !ok {
		return fmt.Errorf("container %s: its executor cannot signal a running container", id)
	}
	if err := s.Signal(sig); err != nil {
		return err
	}
	nm.log.WithFields(map[string]any{"container": id.String(), "application": id.Attempt.App.String(), "signal": cmd.String()}).Info("container signalled")
	return nil
}
