package resourcemanager

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/sirupsen/logrus"
)

// rmNode is the RM's record of one NodeManager.
type rmNode struct {
	// nodeAddr is its id, key ("host:port") and web address ("host:httpPort"), shared
	// with its containers.
	*nodeAddr
	rack          string
	capability    *yarnpb.ResourceProto
	state         yarnpb.NodeStateProto
	version       string
	healthReport  string
	healthTime    int64
	lastHeartbeat time.Time
	running       int32 // containers not complete in the last heartbeat
	lastResponse  *yarnpb.NodeHeartbeatResponseProto
	// decommissionBy ends a graceful decommission (zero: no deadline).
	decommissionBy time.Time
	// autoLabels are the labels a Bobbin NodeManager reports of itself (high_mem,
	// high_load, static): attributes, not partitions. static marks a stable node, where
	// AM containers go.
	autoLabels []string
	static     bool
	// nodeUtil and containersUtil are what the NodeManager last measured of the machine
	// and of its containers (2.8+ NMs send them in every heartbeat).
	nodeUtil, containersUtil *yarnpb.ResourceUtilizationProto
}

// report is the node's NodeReport without what the container table knows (Used, and
// NumContainers as the scheduler counts them): getClusterNodes fills those in.
func (n *rmNode) report(labels []string) *yarnpb.NodeReportProto {
	return &yarnpb.NodeReportProto{
		NodeId:                n.id,
		HttpAddress:           proto.String(n.http),
		RackName:              proto.String(n.rack),
		Capability:            n.capability,
		NumContainers:         proto.Int32(n.running),
		NodeState:             n.state.Enum(),
		HealthReport:          proto.String(n.healthReport),
		LastHealthReportTime:  proto.Int64(n.healthTime),
		NodeLabels:            append(append([]string(nil), labels...), n.autoLabels...),
		NodeUtilization:       n.nodeUtil,
		ContainersUtilization: n.containersUtil,
	}
}

// nodeRegistry holds the NodeManagers by "host:port". Node states change only through
// setStateLocked and putLocked, which keep the per-state counts every AM heartbeat and
// cluster-metrics call read.
type nodeRegistry struct {
	mu      sync.Mutex
	nodes   map[string]*rmNode
	byState map[yarnpb.NodeStateProto]int32
}

func newNodeRegistry() *nodeRegistry {
	return &nodeRegistry{nodes: map[string]*rmNode{}, byState: map[yarnpb.NodeStateProto]int32{}}
}

// setStateLocked moves a registered node to state st; r.mu is held.
func (r *nodeRegistry) setStateLocked(n *rmNode, st yarnpb.NodeStateProto) {
	r.byState[n.state]--
	n.state = st
	r.byState[st]++
}

// putLocked registers n under key, replacing an earlier node; it reports whether there
// was one. r.mu is held.
func (r *nodeRegistry) putLocked(key string, n *rmNode) bool {
	old, again := r.nodes[key]
	if again {
		r.byState[old.state]--
	}
	r.nodes[key] = n
	r.byState[n.state]++
	return again
}

func nodeKey(id *yarnpb.NodeIdProto) string { return fmt.Sprintf("%s:%d", id.GetHost(), id.GetPort()) }

// reports lists node reports in the given states (all when none), sorted by node id.
func (r *nodeRegistry) reports(states []yarnpb.NodeStateProto, labels *labelStore) []*yarnpb.NodeReportProto {
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
			out = append(out, n.report(labels.labelsOf(n.id)))
		}
	}
	return out
}

// counts returns the number of nodes per state.
func (r *nodeRegistry) counts() map[yarnpb.NodeStateProto]int32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[yarnpb.NodeStateProto]int32, len(r.byState))
	for st, n := range r.byState {
		out[st] = n
	}
	return out
}

// running is the number of RUNNING nodes (AllocateResponse.num_cluster_nodes).
func (r *nodeRegistry) running() int32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byState[yarnpb.NodeStateProto_NS_RUNNING]
}

// expire marks RUNNING nodes silent for longer than expiry LOST and returns them.
func (r *nodeRegistry) expire(now time.Time, expiry time.Duration) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var lost []string
	for k, n := range r.nodes {
		if n.state == yarnpb.NodeStateProto_NS_RUNNING && now.Sub(n.lastHeartbeat) > expiry {
			r.setStateLocked(n, yarnpb.NodeStateProto_NS_LOST)
			n.lastResponse = nil
			lost = append(lost, k)
		}
	}
	sort.Strings(lost)
	return lost
}

// known reports whether a NodeManager with this id (any port when the port is 0) is
// registered.
func (r *nodeRegistry) known(id *yarnpb.NodeIdProto) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if id.GetPort() != 0 {
		_, ok := r.nodes[nodeKey(id)]
		return ok
	}
	for _, n := range r.nodes {
		if n.id.GetHost() == id.GetHost() {
			return true
		}
	}
	return false
}

// addrOf is a registered node's addresses.
func (r *nodeRegistry) addrOf(key string) (*nodeAddr, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, ok := r.nodes[key]
	if !ok {
		return nil, false
	}
	return n.nodeAddr, true
}

// hostsToNodes maps blacklisted host names to the node ids on them.
func (r *nodeRegistry) hostsToNodes(hosts []string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, h := range hosts {
		for k, n := range r.nodes {
			if n.id.GetHost() == h || strings.EqualFold(k, h) {
				out = append(out, k)
			}
		}
	}
	return out
}

// put registers (or re-registers) a node; it reports whether the node was known.
func (r *nodeRegistry) put(key string, n *rmNode) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.putLocked(key, n)
}

// beatVerdict is what one heartbeat did to its node: an answer to send as is (unknown,
// decommissioned, retried or stale heartbeats), or the changes the RM must act on.
type beatVerdict struct {
	action                             *yarnpb.NodeHeartbeatResponseProto
	known                              bool // the node was registered
	healthChanged, resized, relabelled bool
	state                              yarnpb.NodeStateProto
	capability                         *yarnpb.ResourceProto
	autoLabels                         []string
}

// beat applies a heartbeat to its node's record: liveness, utilization, health, the
// measured capacity and labels of a borrowed node, and the response-id protocol.
func (r *nodeRegistry) beat(key string, req *yarnpb.NodeHeartbeatRequestProto, now time.Time, log *logrus.Entry) (v beatVerdict) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := req.GetNodeStatus()
	n, ok := r.nodes[key]
	v.known = ok
	var action *yarnpb.NodeHeartbeatResponseProto
	switch {
	case ok && (n.state == yarnpb.NodeStateProto_NS_DECOMMISSIONED):
		msg := fmt.Sprintf("Disallowed NodeManager nodeId: %s hostname: %s", key, st.GetNodeId().GetHost())
		action = &yarnpb.NodeHeartbeatResponseProto{ResponseId: proto.Int32(0), NodeAction: yarnpb.NodeActionProto_SHUTDOWN.Enum(), DiagnosticsMessage: proto.String(msg)}
	case !ok || (n.state != yarnpb.NodeStateProto_NS_RUNNING && n.state != yarnpb.NodeStateProto_NS_DECOMMISSIONING && n.state != yarnpb.NodeStateProto_NS_UNHEALTHY):
		// Unknown or LOST: the NodeManager must register again.
		log.Info("heartbeat from an unregistered node: asking it to resync")
		action = &yarnpb.NodeHeartbeatResponseProto{ResponseId: proto.Int32(0), NodeAction: yarnpb.NodeActionProto_RESYNC.Enum(),
			DiagnosticsMessage: proto.String("Node not found resyncing " + key)}
	case n.lastResponse != nil && st.GetResponseId()+1 == n.lastResponse.GetResponseId():
		action = n.lastResponse // a retried heartbeat: answer it again
	case n.lastResponse != nil && st.GetResponseId()+1 < n.lastResponse.GetResponseId():
		msg := fmt.Sprintf("Too far behind rm response id:%d nm response id:%d", n.lastResponse.GetResponseId(), st.GetResponseId())
		log.Warn(msg)
		r.setStateLocked(n, yarnpb.NodeStateProto_NS_REBOOTED)
		action = &yarnpb.NodeHeartbeatResponseProto{ResponseId: proto.Int32(0), NodeAction: yarnpb.NodeActionProto_RESYNC.Enum(), DiagnosticsMessage: proto.String(msg)}
	}
	if action != nil {
		v.action = action
		return v
	}
	n.lastHeartbeat = now
	if u := st.GetNodeUtilization(); u != nil {
		n.nodeUtil = u
	}
	if u := st.GetContainersUtilization(); u != nil {
		n.containersUtil = u
	}
	// Only the count is kept: holding every node's last statuses would keep a whole
	// cluster's running containers' protos alive.
	n.running = 0
	for _, c := range st.GetContainersStatuses() {
		if c.GetState() != yarnpb.ContainerStateProto_C_COMPLETE {
			n.running++
		}
	}
	if h := st.GetNodeHealthStatus(); h != nil {
		n.healthReport, n.healthTime = h.GetHealthReport(), h.GetLastHealthReportTime()
		healthy := h.GetIsNodeHealthy()
		switch {
		case !healthy && n.state == yarnpb.NodeStateProto_NS_RUNNING:
			r.setStateLocked(n, yarnpb.NodeStateProto_NS_UNHEALTHY)
			v.healthChanged = true
		case healthy && n.state == yarnpb.NodeStateProto_NS_UNHEALTHY:
			r.setStateLocked(n, yarnpb.NodeStateProto_NS_RUNNING)
			v.healthChanged = true
		}
	}
	v.resized, v.relabelled = n.applyMeasurements(req)
	v.state, v.capability, v.autoLabels = n.state, n.capability, n.autoLabels
	return v
}

// setLastResponse keeps a node's last heartbeat answer, to answer a retried heartbeat
// with it again.
func (r *nodeRegistry) setLastResponse(key string, resp *yarnpb.NodeHeartbeatResponseProto) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n, ok := r.nodes[key]; ok {
		n.lastResponse = resp
	}
}

// shutdown marks a node SHUTDOWN (it unregistered); false if it is unknown.
func (r *nodeRegistry) shutdown(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, ok := r.nodes[key]
	if ok {
		r.setStateLocked(n, yarnpb.NodeStateProto_NS_SHUTDOWN)
		n.lastResponse = nil
	}
	return ok
}

// applyHostLists applies refreshed include/exclude lists: nodes no longer allowed become
// DECOMMISSIONED at once (decommissionNow) or, when graceful, DECOMMISSIONING until their
// containers end or timeout passes; a DECOMMISSIONING node allowed again is RUNNING again.
// changed lists the nodes whose schedulability changed otherwise.
func (r *nodeRegistry) applyHostLists(lists *hostLists, graceful bool, timeout time.Duration, now time.Time) (decommissionNow, changed []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for key, n := range r.nodes {
		allowed := lists.allows(n.id.GetHost(), key)
		switch {
		case !allowed && (n.state == yarnpb.NodeStateProto_NS_RUNNING || n.state == yarnpb.NodeStateProto_NS_UNHEALTHY ||
			n.state == yarnpb.NodeStateProto_NS_DECOMMISSIONING):
			if graceful {
				if n.state != yarnpb.NodeStateProto_NS_DECOMMISSIONING {
					r.setStateLocked(n, yarnpb.NodeStateProto_NS_DECOMMISSIONING)
					n.decommissionBy = time.Time{}
					if timeout > 0 {
						n.decommissionBy = now.Add(timeout)
					}
					changed = append(changed, key)
				}
				continue
			}
			r.setStateLocked(n, yarnpb.NodeStateProto_NS_DECOMMISSIONED)
			decommissionNow = append(decommissionNow, key)
		case allowed && n.state == yarnpb.NodeStateProto_NS_DECOMMISSIONING:
			r.setStateLocked(n, yarnpb.NodeStateProto_NS_RUNNING) // recommissioned
			changed = append(changed, key)
		}
	}
	return decommissionNow, changed
}

// decommissioning lists the DECOMMISSIONING nodes and which of them are past their
// deadline.
func (r *nodeRegistry) decommissioning(now time.Time) (keys []string, pastDeadline map[string]bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	pastDeadline = map[string]bool{}
	for key, n := range r.nodes {
		if n.state == yarnpb.NodeStateProto_NS_DECOMMISSIONING {
			keys = append(keys, key)
			pastDeadline[key] = !n.decommissionBy.IsZero() && now.After(n.decommissionBy)
		}
	}
	return keys, pastDeadline
}

// finishDecommission makes a DECOMMISSIONING node DECOMMISSIONED; false if it is not (any
// more) decommissioning.
func (r *nodeRegistry) finishDecommission(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, ok := r.nodes[key]
	if !ok || n.state != yarnpb.NodeStateProto_NS_DECOMMISSIONING {
		return false
	}
	r.setStateLocked(n, yarnpb.NodeStateProto_NS_DECOMMISSIONED)
	return true
}

// snapshot is a copy of a node's record, to read without the registry's lock.
func (r *nodeRegistry) snapshot(key string) (rmNode, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, ok := r.nodes[key]
	if !ok {
		return rmNode{}, false
	}
	return *n, true
}

// keysMatching lists the registered nodes whose id is in want, or whose host is, as
// "host:0" (a label on a host applies to all of its NodeManagers).
func (r *nodeRegistry) keysMatching(want map[string]bool) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var keys []string
	for key, n := range r.nodes {
		if want[key] || want[n.id.GetHost()+":0"] {
			keys = append(keys, key)
		}
	}
	return keys
}

// setCapability replaces a node's capability (yarn rmadmin -updateNodeResource); false
// if the node is unknown.
func (r *nodeRegistry) setCapability(key string, c *yarnpb.ResourceProto) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, ok := r.nodes[key]
	if ok {
		n.capability = c
	}
	return ok
}
