package nodemanager

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/nodemanager/borrowed"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
	"github.com/bobbin-yarn/bobbin/yarn/protocol"
)

// rmLink is the NodeManager's side of ResourceTracker: register, then heartbeat at the
// interval the RM asks for, carrying every container's status and applying the RM's
// directives.
type rmLink struct {
	nm         *NodeManager
	rt         *rpc.Client
	tracker    int // index in settings.RMTrackers of the RM rt talks to
	responseID int32
	interval   time.Duration
	util       *utilization
}

func newRMLink(nm *NodeManager) *rmLink {
	l := &rmLink{nm: nm, interval: time.Second, util: newUtilization()}
	l.rt = l.dial()
	return l
}

// dial connects to the current RM. With one RM the connection retries as long as a Java
// NM's does; with several (HA) a refused connection moves on to the next RM at once.
func (l *rmLink) dial() *rpc.Client {
	retries := 30
	if len(l.nm.settings.RMTrackers) > 1 {
		retries = -1
	}
	addr := l.nm.settings.RMTrackers[l.tracker]
	return rpc.NewClient(rpc.ClientOptions{Addr: addr, Protocol: protocol.ResourceTracker,
		User: "yarn", Kerberos: l.nm.krb.towardsRM(addr), ConnectRetries: retries, RetryInterval: time.Second, Logger: l.nm.opts.Logger})
}

// failover moves to the next RM after a failed call when the RMs are in HA and the call
// failed for a reason another RM may not have: no connection, or a standby's
// StandbyException. It reports whether it moved.
func (l *rmLink) failover(err error) bool {
	trackers := l.nm.settings.RMTrackers
	if len(trackers) < 2 {
		return false
	}
	var re *rpc.RemoteError
	if errors.As(err, &re) && re.Class != rpc.ClassStandby {
		return false
	}
	l.rt.Close()
	l.tracker = (l.tracker + 1) % len(trackers)
	l.rt = l.dial()
	l.nm.log.WithError(err).WithField("rm", trackers[l.tracker]).Info("failing over to the next ResourceManager")
	return true
}

func (l *rmLink) nodeID() *yarnpb.NodeIdProto {
	port, _ := l.nm.ports()
	return &yarnpb.NodeIdProto{Host: proto.String(l.nm.settings.Host), Port: proto.Int32(port)}
}

func (l *rmLink) register(ctx context.Context) error {
	nm := l.nm
	_, httpPort := nm.ports()
	var resp yarnpb.RegisterNodeManagerResponseProto
	req := &yarnpb.RegisterNodeManagerRequestProto{NodeId: l.nodeID(), HttpPort: proto.Int32(httpPort),
		Resource:  nm.settings.Types.Proto(nm.settings.Offer),
		NmVersion: proto.String(nmVersion)}
	// Containers kept across an RM restart are reported so that a work-preserving RM
	// rebuilds them (and kills the ones it does not want).
	req.ContainerStatuses = nm.table.RegistrationStatuses()
	// The applications with containers here: a Java RM keeps a re-registering node's
	// containers only when it lists some (otherwise it takes the node for a new one).
	req.RunningApplications = nm.table.RunningApps()
	// The machine itself (3.x's physicalResource), which the RM's node utilization is a
	// share of; the Java NM sends it when it can read the machine, as here.
	if h, err := borrowed.ReadHost("/proc", nil); err == nil && h.MemTotal > 0 && h.Cores > 0 {
		req.PhysicalResource = &yarnpb.ResourceProto{Memory: proto.Int64(h.MemTotal >> 20), VirtualCores: proto.Int32(int32(h.Cores))}
	}
	err := l.rt.Call(ctx, "registerNodeManager", req, &resp)
	// With RMs in HA the active one may be any of them, or none yet (an election under
	// way): they are tried in turn, a second between rounds, for as long as one RM's
	// connection retries last (30 s).
	n := len(nm.settings.RMTrackers)
	for tries := 1; err != nil && tries < 30*n && ctx.Err() == nil && l.failover(err); tries++ {
		if tries%n == 0 {
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
		err = l.rt.Call(ctx, "registerNodeManager", req, &resp)
	}
	if err != nil {
		return fmt.Errorf("nodemanager: registerNodeManager with %s: %w", nm.settings.RMTrackers[l.tracker], err)
	}
	if resp.GetNodeAction() == yarnpb.NodeActionProto_SHUTDOWN {
		return fmt.Errorf("nodemanager: the ResourceManager refused the node: %s", resp.GetDiagnosticsMessage())
	}
	// The keys first: the RM may launch a container here as soon as it registered the
	// node, and a start is refused until the node is registered.
	nm.updateKeys(resp.GetContainerTokenMasterKey(), resp.GetNmTokenMasterKey())
	nm.setRegistered(true, resp.GetRmIdentifier())
	l.responseID = 0
	nm.log.WithFields(map[string]any{"rm_identifier": resp.GetRmIdentifier(), "rm_version": resp.GetRmVersion()}).Info("registered with the ResourceManager")
	return nil
}

// run heartbeats until ctx ends or the RM shuts the node down; it reports whether the RM
// did.
func (l *rmLink) run(ctx context.Context) (shutdown bool) {
	defer l.rt.Close()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(l.interval):
		}
		if !l.heartbeat(ctx) {
			return ctx.Err() == nil
		}
	}
}

// heartbeat sends one heartbeat and applies the answer; false means stop.
func (l *rmLink) heartbeat(ctx context.Context) bool {
	nm := l.nm
	statuses, completed := nm.table.Statuses()
	st := &yarnpb.NodeStatusProto{NodeId: l.nodeID(), ResponseId: proto.Int32(l.responseID), ContainersStatuses: statuses}
	l.util.sample(nm, st, nm.opts.Now())
	st.NodeHealthStatus = nm.healthStatus()
	req := &yarnpb.NodeHeartbeatRequestProto{NodeStatus: st, LogAggregationReportsForApps: nm.logs.Take()}
	nm.heartbeatExtras(req)
	req.LastKnownContainerTokenMasterKey, req.LastKnownNmTokenMasterKey = nm.keys.LastKnown()
	var resp yarnpb.NodeHeartbeatResponseProto
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	err := l.rt.Call(cctx, "nodeHeartbeat", req, &resp)
	cancel()
	if err != nil {
		nm.logs.Requeue(req.LogAggregationReportsForApps)
		if ctx.Err() != nil {
			return false
		}
		if !l.failover(err) {
			nm.log.WithError(err).Warn("heartbeat failed; retrying")
		}
		return true
	}
	switch resp.GetNodeAction() {
	case yarnpb.NodeActionProto_SHUTDOWN:
		nm.log.WithField("diagnostics", resp.GetDiagnosticsMessage()).Error("the ResourceManager shut this node down")
		nm.killAll(exitcode.KilledByResourceManager, "Container killed: the ResourceManager shut the node down")
		return false
	case yarnpb.NodeActionProto_RESYNC:
		// The RM lost this node (it restarted, or expired the node). With work-preserving
		// recovery the containers keep running and are reported as the node registers
		// again; without it they are killed, as the Java NM does.
		nm.setRegistered(false, 0)
		if nm.settings.KeepOnResync {
			nm.log.WithField("diagnostics", resp.GetDiagnosticsMessage()).Warn("the ResourceManager asked to resync: keeping containers and registering again")
		} else {
			nm.log.WithField("diagnostics", resp.GetDiagnosticsMessage()).Warn("the ResourceManager asked to resync: killing containers and registering again")
			nm.killAll(exitcode.KilledByResourceManager, "Container killed on ResourceManager resync")
			nm.table.ForgetAllCompleted()
		}
		for ctx.Err() == nil {
			if err := l.register(ctx); err == nil {
				break
			} else {
				nm.log.WithError(err).Warn("re-registration failed")
			}
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
		return ctx.Err() == nil
	}
	l.responseID = resp.GetResponseId()
	nm.table.MarkReported(completed)
	if iv := resp.GetNextHeartBeatInterval(); iv > 0 {
		l.interval = time.Duration(iv) * time.Millisecond
	}
	nm.updateKeys(resp.GetContainerTokenMasterKey(), resp.GetNmTokenMasterKey())
	nm.table.ForgetCompleted(resp.GetContainersToBeRemovedFromNm())
	for _, id := range resp.GetContainersToCleanup() {
		if c := nm.table.Get(records.ContainerIDFromProto(id)); c != nil {
			nm.spawn(func() { nm.kill(c, exitcode.KilledByResourceManager, "Container Killed by ResourceManager") })
		}
	}
	for _, s := range resp.GetContainersToSignal() {
		id, cmd := records.ContainerIDFromProto(s.GetContainerId()), s.GetCommand()
		nm.spawn(func() {
			if err := nm.signal(id, cmd); err != nil {
				nm.log.WithError(err).WithField("container", id.String()).Warn("signal from the ResourceManager not delivered")
			}
		})
	}
	for _, a := range resp.GetApplicationsToCleanup() {
		app := records.AppIDFromProto(a)
		nm.spawn(func() { nm.finishApp(app) })
	}
	return true
}

// ports are the node's IPC and HTTP ports once bound.
func (nm *NodeManager) ports() (port, httpPort int32) {
	nm.mu.Lock()
	defer nm.mu.Unlock()
	return nm.port, nm.httpPort
}

// setRegistered records whether the node is registered with the RM, and the RM's identifier
// (its start time, which container tokens must carry) when it is.
func (nm *NodeManager) setRegistered(ok bool, rmIdentifier int64) {
	nm.mu.Lock()
	defer nm.mu.Unlock()
	nm.registered = ok
	if ok {
		nm.rmIdentifier = rmIdentifier
	}
}

// isRegistered reports whether the node is registered with the RM (it refuses containers
// until it is).
func (nm *NodeManager) isRegistered() bool {
	nm.mu.Lock()
	defer nm.mu.Unlock()
	return nm.registered
}

// healthStatus is the node's health for a heartbeat: its disks'.
func (nm *NodeManager) healthStatus() *yarnpb.NodeHealthStatusProto {
	nm.mu.Lock()
	defer nm.mu.Unlock()
	return &yarnpb.NodeHealthStatusProto{IsNodeHealthy: proto.Bool(nm.disks.healthy()), HealthReport: proto.String(nm.disks.report),
		LastHealthReportTime: proto.Int64(nm.opts.Now().UnixMilli())}
}
