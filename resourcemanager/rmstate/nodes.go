package rmstate

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
)

// Node is the RM's record of one NodeManager.
type Node struct {
	// nodeAddr is its id, key ("host:port") and web address ("host:httpPort"), shared
	// with its containers.
	*NodeAddr
	Rack       string
	Capability *yarnpb.ResourceProto
	// Physical is the machine's resource as the NodeManager registered it (3.x; nil:
	// not sent): node utilization is a share of it.
	Physical      *yarnpb.ResourceProto
	state         yarnpb.NodeStateProto // moved by move only (lifecycle.go)
	Version       string
	healthReport  string
	HealthTime    int64
	LastHeartbeat time.Time
	running       int32 // containers not complete in the last heartbeat
	lastResponse  *yarnpb.NodeHeartbeatResponseProto
	// DecommissionBy ends a graceful decommission (zero: no deadline).
	DecommissionBy time.Time
	// AutoLabels are the labels a Bobbin NodeManager reports of itself (high_mem,
	// high_load, static): attributes, not partitions. static marks a stable node, where
	// AM containers go.
	AutoLabels []string
	Static     bool
	// Measured: a Bobbin NodeManager on a borrowed server sends the capacity it measures
	// from its owner's load; every type of it then decides what fits there.
	Measured bool
	// nodeUtil and containersUtil are what the NodeManager last measured of the machine
	// and of its containers (2.8+ NMs send them in every heartbeat).
	nodeUtil, containersUtil *yarnpb.ResourceUtilizationProto
}

// report is the node's NodeReport without what the container table knows (Used, and
// NumContainers as the scheduler counts them): getClusterNodes fills those in.
func (n *Node) report(labels []string) *yarnpb.NodeReportProto {
	return &yarnpb.NodeReportProto{
		NodeId:                n.ID,
		HttpAddress:           proto.String(n.HTTP),
		RackName:              proto.String(n.Rack),
		Capability:            n.Capability,
		NumContainers:         proto.Int32(n.running),
		NodeState:             n.state.Enum(),
		HealthReport:          proto.String(n.healthReport),
		LastHealthReportTime:  proto.Int64(n.HealthTime),
		NodeLabels:            append(append([]string(nil), labels...), n.AutoLabels...),
		NodeUtilization:       n.nodeUtil,
		ContainersUtilization: n.containersUtil,
	}
}

// Nodes holds the NodeManagers by "host:port". Node states change only through
// setStateLocked and putLocked, which keep the per-state counts every AM heartbeat and
// cluster-metrics call read.
type Nodes struct {
	mu      sync.Mutex
	nodes   map[string]*Node
	byState map[yarnpb.NodeStateProto]int32
	// running is byState[NS_RUNNING], read without the lock by every allocate answer.
	running atomic.Int32
}

func NewNodes() *Nodes {
	return &Nodes{nodes: map[string]*Node{}, byState: map[yarnpb.NodeStateProto]int32{}}
}

// moveLocked applies ev to a registered node, keeping the per-state counts; r.mu is held.
func (r *Nodes) moveLocked(n *Node, ev NodeEvent) error {
	from := n.state
	if err := n.move(ev); err != nil {
		return err
	}
	r.byState[from]--
	r.byState[n.state]++
	r.running.Store(r.byState[yarnpb.NodeStateProto_NS_RUNNING])
	return nil
}

// putLocked registers n under key in its first state st, replacing an earlier node; it
// reports whether there was one. r.mu is held.
func (r *Nodes) putLocked(key string, n *Node, st yarnpb.NodeStateProto) (bool, error) {
	if err := n.start(st); err != nil {
		return false, err
	}
	old, again := r.nodes[key]
	if again {
		r.byState[old.state]--
	}
	r.nodes[key] = n
	r.byState[n.state]++
	r.running.Store(r.byState[yarnpb.NodeStateProto_NS_RUNNING])
	return again, nil
}

func NodeKey(id *yarnpb.NodeIdProto) string { return fmt.Sprintf("%s:%d", id.GetHost(), id.GetPort()) }

// Reports lists node reports in the given states (all when none), sorted by node id.
func (r *Nodes) Reports(states []yarnpb.NodeStateProto, labels *Labels) []*yarnpb.NodeReportProto {
	want := map[yarnpb.NodeStateProto]bool{}
	for _, s := range states {
		want[s] = true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	keys := make([]string, 0, len(r.nodes))
	for k := range r.nodes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []*yarnpb.NodeReportProto
	for _, k := range keys {
		n := r.nodes[k]
		if len(want) == 0 || want[n.state] {
			out = append(out, n.report(labels.labelsOf(n.ID)))
		}
	}
	return out
}

// Counts returns the number of nodes per state.
func (r *Nodes) Counts() map[yarnpb.NodeStateProto]int32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[yarnpb.NodeStateProto]int32, len(r.byState))
	for st, n := range r.byState {
		out[st] = n
	}
	return out
}

// Running is the number of RUNNING nodes (AllocateResponse.num_cluster_nodes).
func (r *Nodes) Running() int32 {
	return r.running.Load()
}

// Expire marks RUNNING nodes silent for longer than expiry LOST and returns them.
func (r *Nodes) Expire(now time.Time, expiry time.Duration) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var lost []string
	for k, n := range r.nodes {
		if n.state == yarnpb.NodeStateProto_NS_RUNNING && now.Sub(n.LastHeartbeat) > expiry {
			_ = r.moveLocked(n, NodeExpired) // RUNNING: checked
			n.lastResponse = nil
			lost = append(lost, k)
		}
	}
	sort.Strings(lost)
	return lost
}

// Known reports whether a NodeManager with this id (any port when the port is 0) is
// registered.
func (r *Nodes) Known(id *yarnpb.NodeIdProto) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if id.GetPort() != 0 {
		_, ok := r.nodes[NodeKey(id)]
		return ok
	}
	for _, n := range r.nodes {
		if n.ID.GetHost() == id.GetHost() {
			return true
		}
	}
	return false
}

// AddrOf is a registered node's addresses.
func (r *Nodes) AddrOf(key string) (*NodeAddr, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, ok := r.nodes[key]
	if !ok {
		return nil, false
	}
	return n.NodeAddr, true
}

// HostsToNodes maps blacklisted host names to the node ids on them.
func (r *Nodes) HostsToNodes(hosts []string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, h := range hosts {
		for k, n := range r.nodes {
			if n.ID.GetHost() == h || strings.EqualFold(k, h) {
				out = append(out, k)
			}
		}
	}
	return out
}

// Put registers (or re-registers) a node in its first state (RUNNING; DECOMMISSIONING
// when it registers again while decommissioning; DECOMMISSIONED when a restarted RM lists
// it again); it reports whether the node was known.
func (r *Nodes) Put(key string, n *Node, st yarnpb.NodeStateProto) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.putLocked(key, n, st)
}

// beatVerdict is what one heartbeat did to its node: an answer to send as is (unknown,
// decommissioned, retried or stale heartbeats), or the changes the RM must act on.
type beatVerdict struct {
	Action *yarnpb.NodeHeartbeatResponseProto
	Known  bool // the node was registered
	// First: the node's first heartbeat since it registered. Only then does the node
	// take containers: it has applied its registration answer (the NM-token and
	// container-token master keys) by the time it heartbeats, as in the Java RM, which
	// places containers only on node heartbeats.
	First                              bool
	HealthChanged, Resized, Relabelled bool
	State                              yarnpb.NodeStateProto
	Capability                         *yarnpb.ResourceProto
	AutoLabels                         []string
}

// Beat applies a heartbeat to its node's record: liveness, utilization, health, the
// measured capacity and labels of a borrowed node, and the response-id protocol.
// running counts the running containers the request's statuses leave out (decoded by
// id only, see nmheartbeat). log is the RM's: Beat adds the node to what it logs, which is
// rare, so the common heartbeat makes no log entry.
func (r *Nodes) Beat(key string, req *yarnpb.NodeHeartbeatRequestProto, running int, now time.Time, log *logrus.Entry) (v beatVerdict) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := req.GetNodeStatus()
	n, ok := r.nodes[key]
	v.Known = ok
	var action *yarnpb.NodeHeartbeatResponseProto
	switch {
	case ok && (n.state == yarnpb.NodeStateProto_NS_DECOMMISSIONED):
		msg := fmt.Sprintf("Disallowed NodeManager nodeId: %s hostname: %s", key, st.GetNodeId().GetHost())
		action = &yarnpb.NodeHeartbeatResponseProto{ResponseId: proto.Int32(0), NodeAction: yarnpb.NodeActionProto_SHUTDOWN.Enum(), DiagnosticsMessage: proto.String(msg)}
	case !ok || (n.state != yarnpb.NodeStateProto_NS_RUNNING && n.state != yarnpb.NodeStateProto_NS_DECOMMISSIONING && n.state != yarnpb.NodeStateProto_NS_UNHEALTHY):
		// Unknown or LOST: the NodeManager must register again.
		log.WithField("node", key).Info("heartbeat from an unregistered node: asking it to resync")
		action = &yarnpb.NodeHeartbeatResponseProto{ResponseId: proto.Int32(0), NodeAction: yarnpb.NodeActionProto_RESYNC.Enum(),
			DiagnosticsMessage: proto.String("Node not found resyncing " + key)}
	case n.lastResponse != nil && st.GetResponseId()+1 == n.lastResponse.GetResponseId():
		action = n.lastResponse // a retried heartbeat: answer it again
	case n.lastResponse != nil && st.GetResponseId()+1 < n.lastResponse.GetResponseId():
		msg := fmt.Sprintf("Too far behind rm response id:%d nm response id:%d", n.lastResponse.GetResponseId(), st.GetResponseId())
		log.WithField("node", key).Warn(msg)
		_ = r.moveLocked(n, NodeRebooted) // RUNNING, DECOMMISSIONING or UNHEALTHY: checked above
		action = &yarnpb.NodeHeartbeatResponseProto{ResponseId: proto.Int32(0), NodeAction: yarnpb.NodeActionProto_RESYNC.Enum(), DiagnosticsMessage: proto.String(msg)}
	}
	if action != nil {
		v.Action = action
		return v
	}
	n.LastHeartbeat = now
	v.First = n.lastResponse == nil
	if u := st.GetNodeUtilization(); u != nil {
		n.nodeUtil = u
	}
	if u := st.GetContainersUtilization(); u != nil {
		n.containersUtil = u
	}
	// Only the count is kept: holding every node's last statuses would keep a whole
	// cluster's running containers' protos alive.
	n.running = int32(running)
	for _, c := range st.GetContainersStatuses() {
		if c.GetState() != yarnpb.ContainerStateProto_C_COMPLETE {
			n.running++
		}
	}
	if h := st.GetNodeHealthStatus(); h != nil {
		n.healthReport, n.HealthTime = h.GetHealthReport(), h.GetLastHealthReportTime()
		healthy := h.GetIsNodeHealthy()
		switch {
		case !healthy:
			v.HealthChanged = r.moveLocked(n, NodeUnhealthy) == nil // from RUNNING only
		default:
			v.HealthChanged = r.moveLocked(n, NodeHealthy) == nil // from UNHEALTHY only
		}
	}
	v.Resized, v.Relabelled = n.applyMeasurements(req)
	v.State, v.Capability, v.AutoLabels = n.state, n.Capability, n.AutoLabels
	return v
}

// SetLastResponse keeps a node's last heartbeat answer, to answer a retried heartbeat
// with it again.
func (r *Nodes) SetLastResponse(key string, resp *yarnpb.NodeHeartbeatResponseProto) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n, ok := r.nodes[key]; ok {
		n.lastResponse = resp
	}
}

// Shutdown marks a node SHUTDOWN (it unregistered); false if it is unknown.
func (r *Nodes) Shutdown(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, ok := r.nodes[key]
	if ok {
		_ = r.moveLocked(n, NodeShutdown) // no move when it is SHUTDOWN already
		n.lastResponse = nil
	}
	return ok
}

// ApplyHostLists applies refreshed include/exclude lists: nodes no longer allowed become
// DECOMMISSIONED at once (decommissionNow) or, when graceful, DECOMMISSIONING until their
// containers end or timeout passes; a DECOMMISSIONING node allowed again is RUNNING again.
// changed lists the nodes whose schedulability changed otherwise.
func (r *Nodes) ApplyHostLists(lists *HostLists, graceful bool, timeout time.Duration, now time.Time) (decommissionNow, changed []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for key, n := range r.nodes {
		allowed := lists.Allows(n.ID.GetHost(), key)
		switch {
		case !allowed && (n.state == yarnpb.NodeStateProto_NS_RUNNING || n.state == yarnpb.NodeStateProto_NS_UNHEALTHY ||
			n.state == yarnpb.NodeStateProto_NS_DECOMMISSIONING):
			if graceful {
				if r.moveLocked(n, NodeDecommission) == nil { // not DECOMMISSIONING already
					n.DecommissionBy = time.Time{}
					if timeout > 0 {
						n.DecommissionBy = now.Add(timeout)
					}
					changed = append(changed, key)
				}
				continue
			}
			_ = r.moveLocked(n, NodeDecommissioned) // RUNNING, UNHEALTHY or DECOMMISSIONING: checked above
			decommissionNow = append(decommissionNow, key)
		case allowed && r.moveLocked(n, NodeRecommissioned) == nil: // it was DECOMMISSIONING
			changed = append(changed, key)
		}
	}
	return decommissionNow, changed
}

// Decommissioning lists the DECOMMISSIONING nodes and which of them are past their
// deadline.
func (r *Nodes) Decommissioning(now time.Time) (keys []string, pastDeadline map[string]bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	pastDeadline = map[string]bool{}
	for key, n := range r.nodes {
		if n.state == yarnpb.NodeStateProto_NS_DECOMMISSIONING {
			keys = append(keys, key)
			pastDeadline[key] = !n.DecommissionBy.IsZero() && now.After(n.DecommissionBy)
		}
	}
	return keys, pastDeadline
}

// FinishDecommission makes a DECOMMISSIONING node DECOMMISSIONED; false if it is not (any
// more) decommissioning.
func (r *Nodes) FinishDecommission(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, ok := r.nodes[key]
	if !ok || n.state != yarnpb.NodeStateProto_NS_DECOMMISSIONING {
		return false
	}
	return r.moveLocked(n, NodeDecommissioned) == nil
}

// Snapshot is a copy of a node's record, to read without the registry's lock.
func (r *Nodes) Snapshot(key string) (Node, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, ok := r.nodes[key]
	if !ok {
		return Node{}, false
	}
	return *n, true
}

// KeysMatching lists the registered nodes whose id is in want, or whose host is, as
// "host:0" (a label on a host applies to all of its NodeManagers).
func (r *Nodes) KeysMatching(want map[string]bool) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var keys []string
	for key, n := range r.nodes {
		if want[key] || want[n.ID.GetHost()+":0"] {
			keys = append(keys, key)
		}
	}
	return keys
}

// SetCapability replaces a node's capability (yarn rmadmin -updateNodeResource); false
// if the node is unknown.
func (r *Nodes) SetCapability(key string, c *yarnpb.ResourceProto) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, ok := r.nodes[key]
	if ok {
		n.Capability = c
	}
	return ok
}

// applyMeasurements takes what a Bobbin NodeManager measured of itself: the capacity a
// borrowed node offers now (the NodeReport capability shows it; zero takes it out of
// scheduling) and its automatic labels. Called with the node registry's lock held.
func (n *Node) applyMeasurements(req *yarnpb.NodeHeartbeatRequestProto) (resized, relabelled bool) {
	if r := req.GetBobbinSchedulableResource(); r != nil && r.GetMemory() >= 0 && r.GetVirtualCores() >= 0 {
		if !n.Measured {
			n.Measured, resized = true, true
		}
		if r.GetMemory() != n.Capability.GetMemory() || r.GetVirtualCores() != n.Capability.GetVirtualCores() {
			// Only memory and vcores are measured: other types (GPUs) keep what the node
			// registered.
			c := proto.Clone(n.Capability).(*yarnpb.ResourceProto)
			c.Memory, c.VirtualCores = proto.Int64(r.GetMemory()), proto.Int32(r.GetVirtualCores())
			n.Capability = c
			resized = true
		}
	}
	if ls := req.GetNodeLabels(); ls != nil {
		var names []string
		static := false
		for _, l := range ls.GetNodeLabels() {
			names = append(names, l.GetName())
			static = static || l.GetName() == "static"
		}
		sort.Strings(names)
		if !slices.Equal(names, n.AutoLabels) || static != n.Static {
			n.AutoLabels, n.Static = names, static
			relabelled = true
		}
	}
	return resized, relabelled
}
