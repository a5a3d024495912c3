package resourcemanager

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/conf"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
)

// hostLists are the include and exclude files (yarn.resourcemanager.nodes.include-path,
// .exclude-path): a host may register when the include list is empty or names it, and the
// exclude list does not.
type hostLists struct {
	include, exclude map[string]bool
}

// readHostFile reads a Hadoop hosts file: names separated by white space, "#" starts a
// comment. An empty path is an empty list.
func readHostFile(key, path string) (map[string]bool, error) {
	out := map[string]bool{}
	if path == "" {
		return out, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		for _, h := range strings.Fields(line) {
			out[h] = true
		}
	}
	return out, nil
}

func loadHostLists(include, exclude string) (*hostLists, error) {
	in, err := readHostFile("yarn.resourcemanager.nodes.include-path", include)
	if err != nil {
		return nil, err
	}
	ex, err := readHostFile("yarn.resourcemanager.nodes.exclude-path", exclude)
	if err != nil {
		return nil, err
	}
	return &hostLists{include: in, exclude: ex}, nil
}

// allows reports whether a node (host, or "host:port") may be part of the cluster.
func (h *hostLists) allows(host, key string) bool {
	if h.exclude[host] || h.exclude[key] {
		return false
	}
	return len(h.include) == 0 || h.include[host] || h.include[key]
}

func (rm *ResourceManager) hostsAllow(host, key string) bool {
	rm.nodeAdminMu.Lock()
	defer rm.nodeAdminMu.Unlock()
	return rm.hosts.allows(host, key)
}

// RefreshNodes re-reads the include and exclude files (their paths from yarn-site.xml in
// the configuration directory when there is one, as the Java RM does) and decommissions
// the nodes no longer allowed: at once (their containers end as ABORTED), or gracefully
// — no new containers, DECOMMISSIONED when their last container ends or timeout passes
// (timeout <= 0: no limit). Nodes allowed again return to service.
func (rm *ResourceManager) RefreshNodes(graceful bool, timeout time.Duration) error {
	include, exclude := rm.settings.IncludePath, rm.settings.ExcludePath
	if rm.opts.ConfDir != "" {
		c, _, err := conf.LoadDir(rm.opts.ConfDir)
		if err != nil {
			return err
		}
		if include, err = c.Trimmed("yarn.resourcemanager.nodes.include-path"); err != nil {
			return err
		}
		if exclude, err = c.Trimmed("yarn.resourcemanager.nodes.exclude-path"); err != nil {
			return err
		}
	}
	lists, err := loadHostLists(include, exclude)
	if err != nil {
		return err
	}
	rm.nodeAdminMu.Lock()
	rm.hosts = lists
	rm.nodeAdminMu.Unlock()

	now := rm.opts.Now()
	decommissionNow, changed := rm.nodes.applyHostLists(lists, graceful, timeout, now)
	sort.Strings(decommissionNow)
	for _, key := range decommissionNow {
		rm.log.WithField("node", key).Warn("node decommissioned by refreshNodes")
		rm.nodeLost(key, "Container released on a *decommissioned* node")
	}
	for _, key := range changed {
		rm.syncSchedulable(key)
	}
	rm.log.WithFields(map[string]any{"include": len(lists.include), "exclude": len(lists.exclude), "decommissioned": len(decommissionNow),
		"changed": len(changed)}).Info("nodes refreshed")
	return nil
}

// checkDecommissioning finishes graceful decommissions: a DECOMMISSIONING node with no
// live container, or past its deadline, becomes DECOMMISSIONED.
func (rm *ResourceManager) checkDecommissioning(now time.Time) {
	candidates, deadline := rm.nodes.decommissioning(now)
	if len(candidates) == 0 {
		return
	}
	busy := rm.containers.nodeUsage() // nodes with live containers
	for _, key := range candidates {
		if busy[key].containers > 0 && !deadline[key] {
			continue
		}
		if rm.nodes.finishDecommission(key) {
			rm.log.WithFields(map[string]any{"node": key, "timed_out": deadline[key]}).Info("graceful decommission complete")
			rm.nodeLost(key, "Container released on a *decommissioned* node")
		}
	}
}

// syncSchedulable tells the engine a node's current capacity, label and static flag, and
// whether it takes new containers (only RUNNING nodes with some capacity do).
func (rm *ResourceManager) syncSchedulable(key string) {
	n, ok := rm.nodes.snapshot(key)
	if !ok {
		return
	}
	spec := scheduler.NodeSpec{ID: key, Rack: n.rack, Capacity: rm.resourceOf(n.capability), Static: n.static,
		Partition:     rm.labels.partitionOf(n.id),
		Unschedulable: n.state != yarnpb.NodeStateProto_NS_RUNNING || n.capability.GetMemory() <= 0 || n.capability.GetVirtualCores() <= 0}
	if err := rm.engine.UpdateNode(spec); err != nil {
		rm.log.WithError(err).WithField("node", key).Debug("node not updated in the scheduler")
	}
	rm.kickScheduler()
}

// labelStore is the cluster's node labels (RMNodeLabelsManager): the labels that exist
// and which node ids carry them. A node id with port 0 labels every NodeManager on its
// host.
type labelStore struct {
	mu      sync.Mutex
	cluster map[string]bool
	onNode  map[string][]string // "host:port" -> labels
}

func newLabelStore(initial []string) *labelStore {
	s := &labelStore{cluster: map[string]bool{}, onNode: map[string][]string{}}
	for _, l := range initial {
		if l != "" {
			s.cluster[l] = true
		}
	}
	return s
}

// labelsOf returns a node's labels: its own, or its host's (port 0).
func (s *labelStore) labelsOf(id *yarnpb.NodeIdProto) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.onNode[nodeKey(id)]; ok {
		return append([]string(nil), l...)
	}
	return append([]string(nil), s.onNode[id.GetHost()+":0"]...)
}

// partitionOf is the engine partition of a node: its label, "" for none.
func (s *labelStore) partitionOf(id *yarnpb.NodeIdProto) string {
	if l := s.labelsOf(id); len(l) > 0 {
		return l[0]
	}
	return ""
}

func (s *labelStore) clusterLabels() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.cluster))
	for l := range s.cluster {
		out = append(out, l)
	}
	sort.Strings(out)
	return out
}

// labelName is CommonNodeLabelsManager's rule for label names.
var labelName = regexp.MustCompile(`^[0-9a-zA-Z][0-9a-zA-Z-_]*$`)

func checkLabelName(l string) error {
	if len(l) > 255 {
		return fmt.Errorf("label added is more than 255 characters: %s", l)
	}
	if !labelName.MatchString(l) {
		return fmt.Errorf("label name should only contains {0-9, a-z, A-Z, -, _} and should not started with {-,_}, now it is=%s", l)
	}
	return nil
}

func (s *labelStore) add(labels []string) error {
	for _, l := range labels {
		if err := checkLabelName(l); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range labels {
		s.cluster[l] = true
	}
	return nil
}

// remove drops labels that no queue uses; nodes carrying them lose them. It returns the
// node ids whose labels changed.
func (s *labelStore) remove(labels []string, usedBy func(string) string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range labels {
		if !s.cluster[l] {
			return nil, fmt.Errorf("Node label=%s is not exists", l)
		}
		if q := usedBy(l); q != "" {
			return nil, fmt.Errorf("Cannot remove label=%s, because queue=%s is using this label. Please remove label on queue before remove the label", l, q)
		}
	}
	var changed []string
	for _, l := range labels {
		delete(s.cluster, l)
		for node, ls := range s.onNode {
			kept := ls[:0]
			for _, x := range ls {
				if x != l {
					kept = append(kept, x)
				}
			}
			if len(kept) != len(ls) {
				changed = append(changed, node)
			}
			if len(kept) == 0 {
				delete(s.onNode, node)
			} else {
				s.onNode[node] = kept
			}
		}
	}
	return changed, nil
}

// replace sets the labels of node ids ("host:port", port 0 = the whole host); every label
// must exist and a node carries at most one (a node belongs to one partition).
func (s *labelStore) replace(m map[string][]string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for node, ls := range m {
		if len(ls) > 1 {
			return fmt.Errorf("%d labels specified on node=%s, please note that we do not support specifying multiple labels on a single host for now", len(ls), node)
		}
		for _, l := range ls {
			if !s.cluster[l] {
				return fmt.Errorf("Label=%s for NodeId=%s, is not exist in cluster node labels collection", l, node)
			}
		}
	}
	for node, ls := range m {
		if len(ls) == 0 {
			delete(s.onNode, node)
		} else {
			s.onNode[node] = append([]string(nil), ls...)
		}
	}
	return nil
}

// snapshot copies the node-to-labels map.
func (s *labelStore) snapshot() map[string][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string][]string, len(s.onNode))
	for k, v := range s.onNode {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// nodeIDOf parses "host:port" back into a NodeIdProto.
func nodeIDOf(key string) *yarnpb.NodeIdProto {
	i := strings.LastIndexByte(key, ':')
	port := 0
	fmt.Sscanf(key[i+1:], "%d", &port)
	return &yarnpb.NodeIdProto{Host: proto.String(key[:i]), Port: proto.Int32(int32(port))}
}

// labelError is how label administration fails: a YarnException with the manager's
// message (rmadmin does not retry it, unlike an IOException).
func labelError(err error) error {
	return rpc.Errorf(exceptions.YarnException, "%v", err)
}

// relabel re-syncs the engine partition of every registered node matching the changed
// node ids (a host id "host:0" matches all of its NodeManagers).
func (rm *ResourceManager) relabel(changed []string) {
	want := map[string]bool{}
	for _, c := range changed {
		want[c] = true
	}
	for _, k := range rm.nodes.keysMatching(want) {
		rm.syncSchedulable(k)
	}
}
