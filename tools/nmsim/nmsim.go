// Package nmsim is a simulated NodeManager: it registers and heartbeats over the real
// ResourceTracker protocol (with any YARN RM, Bobbin's or Apache's), reports its
// containers' statuses the way a Java NM does, obeys the RM's directives (kill, forget,
// application cleanup, key updates, resync, shutdown) and, when asked to, serves
// ContainerManagementProtocol with NMToken authentication and container-token checks, so
// the RM's AM launcher and AMs can start "containers" on it. A container's work is a Go
// function. Tests of the RM and the load generator of `bobbin bench` use it; it is not the
// NodeManager (that is package nodemanager).
package nmsim

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/rpc/token"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
	"github.com/bobbin-yarn/bobbin/yarn/protocol"
	"github.com/bobbin-yarn/bobbin/yarn/security"
)

// Protocol names.
const ()

// Launch is a container started through ContainerManagementProtocol.
type Launch struct {
	ID          records.ContainerID
	Identifier  *yarnpb.ContainerTokenIdentifierProto
	Context     *yarnpb.ContainerLaunchContextProto
	Credentials *token.Credentials // the launch context's tokens, parsed
	Env         map[string]string
}

// RunFunc is a container's work: it returns the exit status and diagnostics, or ends
// early when ctx is cancelled (the container was killed).
type RunFunc func(ctx context.Context, l *Launch) (exit int32, diagnostics string)

// TrackerClient is a ResourceTracker client as a NodeManager dials it (user yarn).
func TrackerClient(addr string, log *logrus.Entry) *rpc.Client {
	return rpc.NewClient(rpc.ClientOptions{Addr: addr, Protocol: protocol.ResourceTracker, User: "yarn", ConnectRetries: 3,
		RetryInterval: 100 * time.Millisecond, Logger: log})
}

// Options configure a simulated NodeManager.
type Options struct {
	TrackerAddr string // the RM's yarn.resourcemanager.resource-tracker.address
	Host        string // NodeId host (default 127.0.0.1)
	// Port is the NodeId port. With Serve and Port 0 the port the server binds is used.
	Port      int32
	HTTPPort  int32
	MemoryMB  int64
	VCores    int32
	Heartbeat time.Duration // default: what the RM says in nextHeartBeatInterval, else 1 s
	// FollowRM: with Heartbeat set, each heartbeat after the first answer waits what the
	// last answer's nextHeartBeatInterval names, as a Java NM's does; Heartbeat is then
	// only the interval until that answer.
	FollowRM bool
	// FirstHeartbeat is the wait before the first heartbeat (default: one interval). A
	// load generator staggers its nodes with it so their heartbeats do not arrive in bursts.
	FirstHeartbeat time.Duration
	// Serve runs ContainerManagementProtocol on Host:Port.
	Serve bool
	// Run is the work of containers started over ContainerManagementProtocol (nil: they
	// run until stopped).
	Run RunFunc
	// Version is the NM version reported at registration.
	Version string
	// KeepOnResync keeps containers running when the RM asks to resync (it restarted
	// with work-preserving recovery) and reports them as the node registers again.
	KeepOnResync bool
	Logger       *logrus.Entry
	// OnHeartbeat, when set, sees the latency of each heartbeat call (for benchmarks).
	OnHeartbeat func(d time.Duration, err error)
	// OnRegister, when set, hears each registration the RM accepted (the first and each
	// after a resync): when it was answered and how many containers it reported. It is
	// called with the NM's lock held, so it must not call the NM.
	OnRegister func(at time.Time, containers int)
	// Tracker, when set, is a ResourceTracker client shared with other simulated NMs: a
	// load generator can multiplex many nodes' calls over a few IPC connections (the RM
	// tells nodes apart by the NodeId in each call). Stop leaves it open. Nil: the NM
	// dials a connection of its own, as a real NodeManager does.
	Tracker *rpc.Client
}

// NodeManager is one simulated NM. Start it with Start; Stop ends it (silently, as a
// crashed NM: the RM only notices by expiry).
type NodeManager struct {
	opts   Options
	nodeID *yarnpb.NodeIdProto
	rt     *rpc.Client
	server *rpc.Server
	keys   *security.NodeKeys
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu sync.Mutex
	// containers are the node's containers in the order they started, by value. Not a
	// map by id, nor pointers: every heartbeat walks them all (as a Java NM reports every
	// container on every heartbeat), and with 300 containers a node and 100,000 new ones
	// a second a map's inserts and walks took a third of the load generator's CPU, and
	// then chasing the pointers a seventh. Lookups by id are rare (tests, kills) and
	// scan; the RM's removals are applied in one pass (dropLocked). A pointer into it is
	// good only while n.mu is held.
	containers []simContainer
	// sent numbers the heartbeats; answered is the highest one the RM answered.
	sent, answered uint64
	responseID     int32
	rmIdentifier   int64
	interval       time.Duration
	finishedApps   []records.ApplicationID
	shutdown       string
	heartbeats     int64
	hbBuf          []byte // the last heartbeat's request bytes, reused
}

// Start registers the NM (serving ContainerManagementProtocol first if asked) and starts
// heartbeating in the background.
func Start(opts Options) (*NodeManager, error) {
	if opts.Host == "" {
		opts.Host = "127.0.0.1"
	}
	if opts.Logger == nil {
		opts.Logger = logrus.NewEntry(logrus.StandardLogger())
	}
	if opts.Version == "" {
		opts.Version = "2.7.3"
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := &NodeManager{opts: opts, keys: security.NewNodeKeys(), ctx: ctx, cancel: cancel,
		interval: opts.Heartbeat}
	if opts.Serve {
		if err := n.serve(); err != nil {
			cancel()
			return nil, err
		}
	}
	n.nodeID = &yarnpb.NodeIdProto{Host: proto.String(opts.Host), Port: proto.Int32(n.opts.Port)}
	n.opts.Logger = opts.Logger.WithField("node", n.Key())
	n.rt = opts.Tracker
	if n.rt == nil {
		n.rt = TrackerClient(opts.TrackerAddr, n.opts.Logger)
	}
	if err := n.registerNM(ctx); err != nil {
		n.Stop()
		return nil, err
	}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		n.heartbeatLoop()
	}()
	return n, nil
}

// Key is the node's "host:port".
func (n *NodeManager) Key() string { return fmt.Sprintf("%s:%d", n.opts.Host, n.opts.Port) }

// NodeID is the node's id.
func (n *NodeManager) NodeID() *yarnpb.NodeIdProto { return n.nodeID }

// Stop ends heartbeats and the server and cancels running containers.
func (n *NodeManager) Stop() {
	n.cancel()
	if n.server != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		n.server.Shutdown(ctx)
		cancel()
	}
	n.wg.Wait()
	if n.opts.Tracker == nil {
		n.rt.Close()
	}
}

// Shutdown is the RM's SHUTDOWN diagnostics, once it sent one.
func (n *NodeManager) Shutdown() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.shutdown
}

// FinishedApps lists the applications the RM told this NM to clean up.
func (n *NodeManager) FinishedApps() []records.ApplicationID {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]records.ApplicationID(nil), n.finishedApps...)
}

// Heartbeats counts successful heartbeats.
func (n *NodeManager) Heartbeats() int64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.heartbeats
}

// ContainerState reports a container's state and exit status as this NM knows it.
func (n *NodeManager) ContainerState(id records.ContainerID) (yarnpb.ContainerStateProto, int32, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := n.findLocked(id)
	if c == nil {
		return 0, 0, false
	}
	c.endIfDue(time.Now().UnixNano())
	return c.state, c.exit, true
}

func (n *NodeManager) registerNM(ctx context.Context) error {
	var resp yarnpb.RegisterNodeManagerResponseProto
	req := &yarnpb.RegisterNodeManagerRequestProto{NodeId: n.nodeID, HttpPort: proto.Int32(n.opts.HTTPPort),
		Resource: &yarnpb.ResourceProto{Memory: proto.Int64(n.opts.MemoryMB), VirtualCores: proto.Int32(n.opts.VCores)}, NmVersion: proto.String(n.opts.Version)}
	// The lock is held across the call: the RM may place and launch a container on the
	// node as soon as it has registered it, and startContainers must wait for the keys
	// the answer carries.
	n.mu.Lock()
	defer n.mu.Unlock()
	// A set, not a scan of the list per container: a node of a large cluster runs
	// hundreds of containers of hundreds of applications.
	named := map[records.ApplicationID]bool{}
	for _, app := range n.finishedApps {
		named[app] = true
	}
	req.ContainerStatuses = make([]*yarnpb.NMContainerStatusProto, 0, len(n.containers))
	for i := range n.containers {
		c := &n.containers[i]
		st := &yarnpb.NMContainerStatusProto{ContainerId: c.id.Proto(), ContainerState: c.state.Enum(), ContainerExitStatus: proto.Int32(c.exit),
			Diagnostics: proto.String(c.diag)}
		if c.ident != nil {
			st.Resource, st.Priority, st.CreationTime = c.ident.GetResource(), c.ident.GetPriority(), c.ident.CreationTime
		} else if c.memoryMB > 0 {
			st.Resource = &yarnpb.ResourceProto{Memory: proto.Int64(c.memoryMB), VirtualCores: proto.Int32(c.vcores)}
		}
		req.ContainerStatuses = append(req.ContainerStatuses, st)
		// As a Java NodeManager does, it names the applications it still holds: those
		// whose end the RM has not told it.
		if app := c.id.Attempt.App; !named[app] {
			named[app] = true
			req.RunningApplications = append(req.RunningApplications, app.Proto())
		}
	}
	if err := n.rt.Call(ctx, "registerNodeManager", req, &resp); err != nil {
		return fmt.Errorf("registerNodeManager: %w", err)
	}
	if resp.GetNodeAction() == yarnpb.NodeActionProto_SHUTDOWN {
		n.shutdown = resp.GetDiagnosticsMessage()
		return fmt.Errorf("the RM refused the node: %s", resp.GetDiagnosticsMessage())
	}
	n.responseID, n.rmIdentifier = 0, resp.GetRmIdentifier()
	n.keys.Update(resp.GetContainerTokenMasterKey(), resp.GetNmTokenMasterKey())
	if n.opts.OnRegister != nil {
		n.opts.OnRegister(time.Now(), len(req.ContainerStatuses))
	}
	return nil
}

func (n *NodeManager) heartbeatLoop() {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for first := true; ; first = false {
		n.mu.Lock()
		d := n.interval
		n.mu.Unlock()
		if d <= 0 {
			d = time.Second
		}
		if first && n.opts.FirstHeartbeat > 0 {
			d = n.opts.FirstHeartbeat
		}
		timer.Reset(d)
		select {
		case <-n.ctx.Done():
			return
		case <-timer.C:
		}
		if !n.heartbeat() {
			return
		}
	}
}

// HeartbeatNow sends one heartbeat at once (tests use it to avoid waiting).
func (n *NodeManager) HeartbeatNow() bool { return n.heartbeat() }

// heartbeat sends one heartbeat and applies the answer; false means stop.
func (n *NodeManager) heartbeat() bool {
	n.mu.Lock()
	now := time.Now()
	// The buffer is taken while the call uses it (a test's HeartbeatNow may run beside
	// the loop's) and given back after: the call copies it into its frame.
	n.sent++
	seq := n.sent
	body, _, err := n.appendHeartbeatLocked(n.hbBuf[:0], now, seq)
	n.hbBuf = nil
	n.mu.Unlock()
	if err != nil {
		n.opts.Logger.WithError(err).Error("heartbeat not encoded")
		return false
	}
	req := &rpc.Encoded{Message: &yarnpb.NodeHeartbeatRequestProto{}, Bytes: body}

	start := time.Now()
	var resp yarnpb.NodeHeartbeatResponseProto
	var removed []records.ContainerID
	raw := &rpc.Encoded{Message: &yarnpb.NodeHeartbeatResponseProto{}}
	ctx, cancel := context.WithTimeout(n.ctx, 30*time.Second)
	err = n.rt.Call(ctx, "nodeHeartbeat", req, raw)
	cancel()
	if err == nil {
		removed, err = decodeHeartbeatResponse(raw.Bytes, &resp)
	}
	n.mu.Lock()
	n.hbBuf = body
	n.mu.Unlock()
	if n.opts.OnHeartbeat != nil {
		n.opts.OnHeartbeat(time.Since(start), err)
	}
	if err != nil {
		if n.ctx.Err() != nil {
			return false
		}
		n.opts.Logger.WithError(err).Debug("heartbeat failed")
		return true
	}
	switch resp.GetNodeAction() {
	case yarnpb.NodeActionProto_SHUTDOWN:
		n.mu.Lock()
		n.shutdown = resp.GetDiagnosticsMessage()
		n.mu.Unlock()
		n.killAll(exitcode.KilledByResourceManager)
		return false
	case yarnpb.NodeActionProto_RESYNC:
		// The RM lost track of the node: unless it recovers work, its containers are gone
		// on the RM's side too.
		if !n.opts.KeepOnResync {
			n.killAll(exitcode.KilledByResourceManager)
			n.mu.Lock()
			clear(n.containers)
			n.containers = n.containers[:0]
			n.mu.Unlock()
		}
		if err := n.registerNM(n.ctx); err != nil {
			n.opts.Logger.WithError(err).Warn("re-registration failed")
			return n.Shutdown() == ""
		}
		return true
	}
	n.mu.Lock()
	n.heartbeats++
	n.responseID = resp.GetResponseId()
	n.answered = max(n.answered, seq)
	if iv := resp.GetNextHeartBeatInterval(); (n.opts.Heartbeat == 0 || n.opts.FollowRM) && iv > 0 {
		n.interval = time.Duration(iv) * time.Millisecond
	}
	n.keys.Update(resp.GetContainerTokenMasterKey(), resp.GetNmTokenMasterKey())
	if ids := resp.GetContainersToBeRemovedFromNm(); len(ids) > 0 || len(removed) > 0 {
		set := idSet(ids)
		for _, id := range removed {
			set[id] = true
		}
		n.dropLocked(set)
	}
	var kill map[records.ContainerID]bool
	if ids := resp.GetContainersToCleanup(); len(ids) > 0 {
		kill = idSet(ids)
	}
	var apps []records.ApplicationID
	for _, a := range resp.GetApplicationsToCleanup() {
		app := records.AppIDFromProto(a)
		n.finishedApps = append(n.finishedApps, app)
		apps = append(apps, app)
	}
	if kill != nil || apps != nil {
		for i := range n.containers {
			if c := &n.containers[i]; kill[c.id] || slices.Contains(apps, c.id.Attempt.App) {
				n.killLocked(c, exitcode.KilledByResourceManager, "Container Killed by ResourceManager")
			}
		}
	}
	n.mu.Unlock()
	return true
}

// serve starts ContainerManagementProtocol. Callers authenticate with NMTokens.
func (n *NodeManager) serve() error {
	ln, err := net.Listen("tcp", net.JoinHostPort(n.opts.Host, strconv.Itoa(int(n.opts.Port))))
	if err != nil {
		return fmt.Errorf("nmsim: listen: %w", err)
	}
	n.opts.Port = int32(ln.Addr().(*net.TCPAddr).Port)
	n.server = rpc.NewServer(rpc.ServerOptions{ErrorClass: exceptions.YarnException, Name: "ContainerManager", SecretManager: n.keys.NMTokens(), TokenRequired: true, Logger: n.opts.Logger})
	sd := yarnpb.File_yarn_containermanagement_protocol_proto.Services().ByName("ContainerManagementProtocolService")
	p, err := rpc.ServiceProtocol(protocol.ContainerManagement, sd, map[string]rpc.Method{
		"startContainers":      rpc.Unary(n.startContainers),
		"stopContainers":       rpc.Unary(n.stopContainers),
		"getContainerStatuses": rpc.Unary(n.getContainerStatuses),
	}, func(method string) error {
		return rpc.Errorf(exceptions.YarnException, "%s is not supported by the simulated NodeManager", method)
	})
	if err != nil {
		ln.Close()
		return err
	}
	n.server.Register(p)
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		if err := n.server.Serve(ln); err != nil && !errors.Is(err, rpc.ErrServerClosed) {
			n.opts.Logger.WithError(err).Warn("container manager stopped")
		}
	}()
	return nil
}

// callerAttempt is the attempt of the caller's NMToken.
func callerAttempt(ctx context.Context) (records.AttemptID, error) {
	c, _ := rpc.CallerFrom(ctx)
	if c == nil || c.TokenKind != token.KindNM {
		return records.AttemptID{}, rpc.Errorf(exceptions.YarnException, "No NMToken sent")
	}
	var id yarnpb.NMTokenIdentifierProto
	if err := proto.Unmarshal(c.TokenID, &id); err != nil {
		return records.AttemptID{}, rpc.Errorf(rpc.ClassInvalidToken, "malformed NMTokenIdentifier")
	}
	return records.AttemptIDFromProto(id.GetAppAttemptId()), nil
}

func failure(id *yarnpb.ContainerIdProto, class, format string, args ...any) *yarnpb.ContainerExceptionMapProto {
	return &yarnpb.ContainerExceptionMapProto{ContainerId: id, Exception: &yarnpb.SerializedExceptionProto{
		Message: proto.String(fmt.Sprintf(format, args...)), ClassName: proto.String(class)}}
}

func (n *NodeManager) startContainers(ctx context.Context, req *yarnpb.StartContainersRequestProto) (*yarnpb.StartContainersResponseProto, error) {
	att, err := callerAttempt(ctx)
	if err != nil {
		return nil, err
	}
	shufflePort := make([]byte, 4)
	binary.BigEndian.PutUint32(shufflePort, 13562)
	resp := &yarnpb.StartContainersResponseProto{ServicesMetaData: []*yarnpb.StringBytesMapProto{{Key: proto.String("mapreduce_shuffle"), Value: shufflePort}}}
	for _, r := range req.GetStartContainerRequest() {
		tok := token.FromProto(r.GetContainerToken())
		var ident yarnpb.ContainerTokenIdentifierProto
		if tok == nil || proto.Unmarshal(tok.Identifier, &ident) != nil {
			resp.FailedRequests = append(resp.FailedRequests, failure(nil, rpc.ClassInvalidToken, "Invalid container token"))
			continue
		}
		cidp := ident.GetContainerId()
		cid := records.ContainerIDFromProto(cidp)
		n.mu.Lock()
		key, known := n.keys.ContainerKey(ident.GetMasterKeyId())
		rmID := n.rmIdentifier
		dup := n.findLocked(cid) != nil
		n.mu.Unlock()
		switch {
		case !known || string(token.Password(key, tok.Identifier)) != string(tok.Password):
			resp.FailedRequests = append(resp.FailedRequests, failure(cidp, rpc.ClassInvalidToken, "Invalid container token used for starting container on : %s", n.Key()))
			continue
		case ident.GetRmIdentifier() != rmID:
			resp.FailedRequests = append(resp.FailedRequests, failure(cidp, exceptions.InvalidContainer, "Container %s rejected as it is allocated by a previous RM", cid))
			continue
		case cid.Attempt.App != att.App:
			resp.FailedRequests = append(resp.FailedRequests, failure(cidp, exceptions.YarnException, "Unauthorized request to start container. NMToken for application attempt : %s was used for starting container with container token issued for application attempt : %s", att, cid.Attempt))
			continue
		case dup:
			resp.FailedRequests = append(resp.FailedRequests, failure(cidp, exceptions.YarnException, "Container %s already is running on this node!!", cid))
			continue
		}
		l := &Launch{ID: cid, Identifier: &ident, Context: r.GetContainerLaunchContext(), Env: map[string]string{}}
		for _, e := range l.Context.GetEnvironment() {
			l.Env[e.GetKey()] = e.GetValue()
		}
		l.Env["CONTAINER_ID"] = cid.String()
		l.Env["NM_HOST"], l.Env["NM_PORT"] = n.opts.Host, strconv.Itoa(int(n.opts.Port))
		l.Env["USER"] = ident.GetAppSubmitter()
		if b := l.Context.GetTokens(); len(b) > 0 {
			if creds, err := token.ReadCredentials(b); err == nil {
				l.Credentials = creds
			}
		}
		n.launch(l)
		resp.SucceededRequests = append(resp.SucceededRequests, cidp)
	}
	return resp, nil
}

func (n *NodeManager) launch(l *Launch) {
	cctx, cancel := context.WithCancel(n.ctx)
	n.mu.Lock()
	n.containers = append(n.containers, simContainer{id: l.ID, ident: l.Identifier, state: yarnpb.ContainerStateProto_C_RUNNING, exit: exitcode.Invalid, cancel: cancel})
	n.mu.Unlock()
	n.opts.Logger.WithField("container", l.ID.String()).Debug("container started")
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		if n.opts.Run == nil {
			<-cctx.Done()
			return
		}
		exit, diag := n.opts.Run(cctx, l)
		if cctx.Err() == nil {
			n.finish(l.ID, exit, diag)
		}
	}()
}

func (n *NodeManager) stopContainers(ctx context.Context, req *yarnpb.StopContainersRequestProto) (*yarnpb.StopContainersResponseProto, error) {
	if _, err := callerAttempt(ctx); err != nil {
		return nil, err
	}
	resp := &yarnpb.StopContainersResponseProto{}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, id := range req.GetContainerId() {
		c := n.findLocked(records.ContainerIDFromProto(id))
		if c == nil {
			resp.FailedRequests = append(resp.FailedRequests, failure(id, exceptions.YarnException, "Container %s is not handled by this NodeManager", records.ContainerIDFromProto(id)))
			continue
		}
		n.killLocked(c, exitcode.KilledByAppMaster, "Container killed by the ApplicationMaster.")
		resp.SucceededRequests = append(resp.SucceededRequests, id)
	}
	return resp, nil
}

func (n *NodeManager) getContainerStatuses(ctx context.Context, req *yarnpb.GetContainerStatusesRequestProto) (*yarnpb.GetContainerStatusesResponseProto, error) {
	if _, err := callerAttempt(ctx); err != nil {
		return nil, err
	}
	resp := &yarnpb.GetContainerStatusesResponseProto{}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, id := range req.GetContainerId() {
		c := n.findLocked(records.ContainerIDFromProto(id))
		if c == nil {
			resp.FailedRequests = append(resp.FailedRequests, failure(id, exceptions.YarnException, "Container %s is not handled by this NodeManager", records.ContainerIDFromProto(id)))
			continue
		}
		resp.Status = append(resp.Status, &yarnpb.ContainerStatusProto{ContainerId: id, State: c.state.Enum(), ExitStatus: proto.Int32(c.exit), Diagnostics: proto.String(c.diag)})
	}
	return resp, nil
}
