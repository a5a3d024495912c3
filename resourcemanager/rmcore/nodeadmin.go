package rmcore

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/conf"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
)

func (rm *Core) HostsAllow(host, key string) bool {
	rm.nodeAdminMu.Lock()
	defer rm.nodeAdminMu.Unlock()
	return rm.hosts.Allows(host, key)
}

// RefreshNodes re-reads the include and exclude files (their paths from yarn-site.xml in
// the configuration directory when there is one, as the Java RM does) and decommissions
// the nodes no longer allowed: at once (their containers end as ABORTED), or gracefully
// — no new containers, DECOMMISSIONED when their last container ends or timeout passes
// (timeout <= 0: no limit). Nodes allowed again return to service.
func (rm *Core) RefreshNodes(graceful bool, timeout time.Duration) error {
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
	lists, err := rmstate.LoadHostLists(include, exclude)
	if err != nil {
		return err
	}
	rm.nodeAdminMu.Lock()
	rm.hosts = lists
	rm.nodeAdminMu.Unlock()

	now := rm.opts.Now()
	decommissionNow, changed := rm.nodes.ApplyHostLists(lists, graceful, timeout, now)
	sort.Strings(decommissionNow)
	for _, key := range decommissionNow {
		rm.log.WithField("node", key).Warn("node decommissioned by refreshNodes")
		rm.NodeLost(key, "Container released on a *decommissioned* node")
		rm.RememberNode(key) // listed as decommissioned after a restart
	}
	for _, key := range changed {
		rm.SyncSchedulable(key)
		rm.RememberNode(key) // decommissioning (a restart carries on with it), or back in service
	}
	rm.log.WithFields(map[string]any{"include": len(lists.Include), "exclude": len(lists.Exclude), "decommissioned": len(decommissionNow),
		"changed": len(changed)}).Info("nodes refreshed")
	return nil
}

// checkDecommissioning finishes graceful decommissions: a DECOMMISSIONING node with no
// live container, or past its deadline, becomes DECOMMISSIONED.
func (rm *Core) checkDecommissioning(now time.Time) {
	candidates, deadline := rm.nodes.Decommissioning(now)
	if len(candidates) == 0 {
		return
	}
	busy := rm.containers.NodeUsage() // nodes with live containers
	for _, key := range candidates {
		if busy[key].Containers > 0 && !deadline[key] {
			continue
		}
		if rm.nodes.FinishDecommission(key) {
			rm.log.WithFields(map[string]any{"node": key, "timed_out": deadline[key]}).Info("graceful decommission complete")
			rm.NodeLost(key, "Container released on a *decommissioned* node")
			rm.RememberNode(key)
		}
	}
}

// SyncSchedulable tells the engine a node's current capacity, label and static flag, and
// whether it takes new containers (only RUNNING nodes with some capacity do).
//
// It reports false when the engine does not know the node yet: a heartbeat that races
// the node's registration (the 2.7.3 NodeManager's old heartbeat thread still runs while
// it registers again after a resync) comes between the registry's record and the
// engine's; its caller then must not count that heartbeat as the node's first.
func (rm *Core) SyncSchedulable(key string) bool {
	n, ok := rm.nodes.Snapshot(key)
	if !ok {
		return false
	}
	spec := scheduler.NodeSpec{ID: key, Rack: n.Rack, Capacity: rm.ResourceOf(n.Capability), Static: n.Static, Measured: n.Measured,
		Partition:     rm.labels.PartitionOf(n.ID),
		Unschedulable: n.State() != yarnpb.NodeStateProto_NS_RUNNING || n.Capability.GetMemory() <= 0 || n.Capability.GetVirtualCores() <= 0}
	if err := rm.engine.UpdateNode(spec); err != nil {
		rm.log.WithError(err).WithField("node", key).Debug("node not updated in the scheduler")
		return false
	}
	rm.KickScheduler()
	return true
}

// LabelError is how label administration fails: a YarnException with the manager's
// message (rmadmin does not retry it, unlike an IOException).
func LabelError(err error) error {
	return exceptions.Errorf(exceptions.YarnException, "%v", err)
}

// Relabel re-syncs the engine partition of every registered node matching the changed
// node ids (a host id "host:0" matches all of its NodeManagers).
func (rm *Core) Relabel(changed []string) {
	want := map[string]bool{}
	for _, c := range changed {
		want[c] = true
	}
	for _, k := range rm.nodes.KeysMatching(want) {
		rm.SyncSchedulable(k)
	}
}

// IsAdmin applies yarn.admin.acl when yarn.acl.enable is set (everyone is an
// administrator without ACLs, as in the Java RM).
func (rm *Core) IsAdmin(user string) bool {
	return !rm.settings.ACLEnabled || rm.opts.Security.Admins().Allows(user, rm.UserGroups(user))
}

// labelsEnabled refuses node-label administration unless yarn.node-labels.enabled.
func (rm *Core) labelsEnabled() error {
	if !rm.settings.NodeLabels {
		return exceptions.Errorf(exceptions.IOException, "Node-label-based scheduling is disabled. Please check yarn.node-labels.enabled")
	}
	return nil
}

// AddClusterLabels adds labels to the cluster and stores them (rmadmin
// -addToClusterNodeLabels, REST add-node-labels).
func (rm *Core) AddClusterLabels(labels []rmstate.Label) error {
	if err := rm.labelsEnabled(); err != nil {
		return err
	}
	added, err := rm.labels.Add(labels)
	if err != nil {
		return LabelError(err)
	}
	rm.engine.SetNonExclusive(rm.labels.NonExclusive())
	if err := rm.SaveLabels(); err != nil {
		return exceptions.Errorf(exceptions.YarnException, "node labels added but not stored: %v", err)
	}
	if len(added) > 0 {
		rm.log.WithField("labels", fmt.Sprint(added)).Info("cluster node labels added")
	}
	return nil
}

// RemoveClusterLabels removes labels no queue uses from the cluster and its nodes.
func (rm *Core) RemoveClusterLabels(labels []string) error {
	if err := rm.labelsEnabled(); err != nil {
		return err
	}
	tree := rm.Queues()
	changed, err := rm.labels.Remove(labels, func(label string) string {
		for _, q := range tree.Queues() {
			for _, l := range q.AccessibleNodeLabels {
				if l == label {
					return q.Path
				}
			}
		}
		return ""
	})
	if err != nil {
		return LabelError(err)
	}
	rm.Relabel(changed)
	rm.engine.SetNonExclusive(rm.labels.NonExclusive())
	if err := rm.SaveLabels(); err != nil {
		return exceptions.Errorf(exceptions.YarnException, "node labels removed but not stored: %v", err)
	}
	rm.log.WithField("labels", labels).Info("cluster node labels removed")
	return nil
}

// ReplaceNodeLabels sets the labels of nodes ("host:port", or "host:0" for every
// NodeManager of a host); with failOnUnknown every node must be registered.
func (rm *Core) ReplaceNodeLabels(m map[string][]string, failOnUnknown bool) error {
	if err := rm.labelsEnabled(); err != nil {
		return err
	}
	changed := make([]string, 0, len(m))
	var unknown []string
	for key := range m {
		if failOnUnknown && !rm.nodes.Known(records.NodeIDFromKey(key)) {
			unknown = append(unknown, key)
		}
		changed = append(changed, key)
	}
	sort.Strings(changed)
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return exceptions.Errorf(exceptions.IOException, "Failed to replace labels as there are unknown nodes:[%s]", strings.Join(unknown, ", "))
	}
	if err := rm.labels.Replace(m); err != nil {
		return LabelError(err)
	}
	rm.Relabel(changed)
	if err := rm.SaveLabels(); err != nil {
		return exceptions.Errorf(exceptions.YarnException, "labels replaced but not stored: %v", err)
	}
	rm.log.WithField("nodes", changed).Info("labels replaced on nodes")
	return nil
}

// UpdateNodeResource changes a registered node's schedulable capacity (rmadmin
// -updateNodeResource): the whole resource, other types (GPUs) included; running
// containers are kept.
func (rm *Core) UpdateNodeResource(key string, r *yarnpb.ResourceProto) error {
	if r.GetMemory() < 0 || r.GetVirtualCores() < 0 {
		return exceptions.Errorf(exceptions.YarnException, "Invalid resource %v for node %s", r, key)
	}
	if !rm.nodes.SetCapability(key, proto.Clone(r).(*yarnpb.ResourceProto)) {
		return exceptions.Errorf(exceptions.YarnException, "Resource update get failed on all nodes due to change resource on an unrecognized node: %s", key)
	}
	rm.SyncSchedulable(key)
	rm.log.WithFields(map[string]any{"node": key, "memory_mb": r.GetMemory(), "vcores": r.GetVirtualCores()}).Info("node resource updated")
	return nil
}
