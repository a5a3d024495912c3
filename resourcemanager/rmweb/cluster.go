package rmweb

import (
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/bobbin-yarn/bobbin/conf/capacity"
	"github.com/bobbin-yarn/bobbin/yarn/webapp"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmcore"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
	"github.com/bobbin-yarn/bobbin/resourcemanager/statestore"
)

// rest serves /ws/v1/cluster for one core.
type rest struct {
	rm   *rmcore.Core
	opts Options
}

func (s *rest) clusterInfo(w http.ResponseWriter, r *http.Request) {
	webapp.Write(w, r, http.StatusOK, map[string]any{"clusterInfo": s.clusterInfoNow()})
}

// clusterInfoNow is ClusterInfo: the REST resource and the About page.
func (s *rest) clusterInfoNow() clusterInfo {
	rm := s.rm
	info := clusterInfo{ID: rm.ClusterTimestamp(), StartedOn: rm.ClusterTimestamp(), State: "STARTED", HAState: "ACTIVE",
		RMStateStoreName:       statestore.ClassName(rm.Conf()),
		ResourceManagerVersion: rmcore.Version, ResourceManagerBuildVersion: "Bobbin " + rmcore.Version, ResourceManagerVersionBuiltOn: "",
		HadoopVersion: rmcore.Version, HadoopBuildVersion: "Bobbin " + rmcore.Version, HadoopVersionBuiltOn: "",
		HAZooKeeperConnectionState: "ResourceManager HA is not enabled."}
	if s.opts.HA {
		info.HAZooKeeperConnectionState = "CONNECTED" // an active HA core holds its ZooKeeper lock
	}
	info.RMStateStoreLocation = rm.StoreLocation()
	return info
}

func (s *rest) clusterMetrics(w http.ResponseWriter, r *http.Request) {
	webapp.Write(w, r, http.StatusOK, map[string]any{"clusterMetrics": s.metricsInfo()})
}

// metricsInfo is ClusterMetricsInfo, every figure computed now.
func (s *rest) metricsInfo() clusterMetricsInfo {
	rm := s.rm
	c := rm.NodeCounts()
	st := rm.SchedulerStats()
	m := rm.Metrics()
	var pending, running int64
	rm.EachApp(func(a *rmstate.App) { // counts only: no report is built
		switch a.State() {
		case yarnpb.YarnApplicationStateProto_NEW, yarnpb.YarnApplicationStateProto_NEW_SAVING,
			yarnpb.YarnApplicationStateProto_SUBMITTED, yarnpb.YarnApplicationStateProto_ACCEPTED:
			pending++
		case yarnpb.YarnApplicationStateProto_RUNNING:
			running++
		}
	})
	var total int32
	for _, n := range c {
		total += n
	}
	free := st.Total.Sub(st.Allocated)
	var pendingRes scheduler.Resource
	for _, g := range rm.GroupStats() {
		pendingRes = pendingRes.Add(g.PendingResource)
	}
	utilMB, utilVCores := clusterUtilization(rm)
	percent := func(part, whole int64) int64 {
		if whole <= 0 {
			return 0
		}
		return part * 100 / whole
	}
	return clusterMetricsInfo{
		AppsSubmitted: m.AppsSubmitted.Count(), AppsCompleted: m.AppsCompleted.Count(), AppsPending: pending, AppsRunning: running,
		AppsFailed: m.AppsFailed.Count(), AppsKilled: m.AppsKilled.Count(),
		AvailableMB: free[scheduler.Memory], AllocatedMB: st.Allocated[scheduler.Memory],
		AvailableVirtualCores: free[scheduler.VCores], AllocatedVirtualCores: st.Allocated[scheduler.VCores],
		ContainersAllocated: int64(st.Running), ContainersPending: int64(st.Pending),
		TotalMB: st.Total[scheduler.Memory], TotalVirtualCores: st.Total[scheduler.VCores],
		// Java's totalNodes counts the active ones (unhealthy and decommissioning
		// included); the inactive ones have their own counts.
		TotalNodes: c[yarnpb.NodeStateProto_NS_RUNNING] + c[yarnpb.NodeStateProto_NS_UNHEALTHY] + c[yarnpb.NodeStateProto_NS_DECOMMISSIONING],
		LostNodes:  c[yarnpb.NodeStateProto_NS_LOST], UnhealthyNodes: c[yarnpb.NodeStateProto_NS_UNHEALTHY],
		DecommissioningNodes: c[yarnpb.NodeStateProto_NS_DECOMMISSIONING], DecommissionedNodes: c[yarnpb.NodeStateProto_NS_DECOMMISSIONED],
		RebootedNodes: c[yarnpb.NodeStateProto_NS_REBOOTED], ActiveNodes: c[yarnpb.NodeStateProto_NS_RUNNING],
		ShutdownNodes:                        c[yarnpb.NodeStateProto_NS_SHUTDOWN],
		TotalUsedResourcesAcrossPartition:    resource(rm, st.Allocated),
		TotalClusterResourcesAcrossPartition: resource(rm, st.Total),
		// The engine reserves nothing on a node: it plans whole passes (scheduling.md).
		TotalReservedResourcesAcrossPartition:   resource(rm, scheduler.Resource{}),
		TotalAllocatedContainersAcrossPartition: int64(st.Running),
		// As the Java RM's: the Capacity Scheduler's root queue reports them, the Fair
		// Scheduler's not (Bobbin's figures are the same under both).
		CrossPartitionMetricsAvailable: !capacity.UsesFairScheduler(rm.Conf()),
		PendingMB:                      pendingRes[scheduler.Memory], PendingVirtualCores: pendingRes[scheduler.VCores],
		UtilizedMB: utilMB, UtilizedVirtualCores: utilVCores,
		UtilizedMBPercent: percent(utilMB, st.Total[scheduler.Memory]), UtilizedVirtualCoresPercent: percent(utilVCores, st.Total[scheduler.VCores]),
		RMSchedulerBusyPercent: int64(rm.SchedulerBusyPercent()), ContainerAssignedPerSecond: int64(rm.ContainersAssignedLastSecond()),
	}
}

// nodeStates parses the states parameter of /nodes (comma-separated or repeated, any
// case); none lists every node, as the 2.7+ RM does.
func nodeStates(r *http.Request) ([]yarnpb.NodeStateProto, error) {
	var out []yarnpb.NodeStateProto
	for _, v := range r.URL.Query()["states"] {
		for _, s := range strings.Split(v, ",") {
			s = strings.ToUpper(strings.TrimSpace(s))
			if s == "" {
				continue
			}
			st, ok := yarnpb.NodeStateProto_value["NS_"+s]
			if !ok {
				return nil, &webapp.Error{Class: "java.lang.IllegalArgumentException", Msg: "No enum constant org.apache.hadoop.yarn.api.records.NodeState." + s}
			}
			out = append(out, yarnpb.NodeStateProto(st))
		}
	}
	return out, nil
}

func (s *rest) nodes(w http.ResponseWriter, r *http.Request) {
	states, err := nodeStates(r)
	if err != nil {
		webapp.WriteError(w, r, err)
		return
	}
	list := s.nodeInfos(states, "")
	if len(list) == 0 {
		webapp.Write(w, r, http.StatusOK, map[string]any{"nodes": struct{}{}})
		return
	}
	webapp.Write(w, r, http.StatusOK, map[string]any{"nodes": map[string]any{"node": list}})
}

func (s *rest) node(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	list := s.nodeInfos(nil, id)
	if len(list) == 0 {
		webapp.WriteError(w, r, webapp.NotFound("nodeId, %s, is not found", id))
		return
	}
	webapp.Write(w, r, http.StatusOK, map[string]any{"node": list[0]})
}

// nodeInfos reports the nodes in states (all with none), or only the node key only.
func (s *rest) nodeInfos(states []yarnpb.NodeStateProto, only string) []nodeInfo {
	rm := s.rm
	usage := rm.NodeUsage()
	tags := rm.NodeAllocationTags()
	var out []nodeInfo
	for _, rep := range rm.NodeReports(states) {
		key := rmstate.NodeKey(rep.GetNodeId())
		if only != "" && key != only {
			continue
		}
		n, _ := rm.NodeSnapshot(key)
		u := usage[key]
		capacity := rm.ResourceOf(rep.GetCapability())
		free := capacity.Sub(u.Used)
		state := strings.TrimPrefix(rep.GetNodeState().String(), "NS_")
		info := nodeInfo{Rack: rep.GetRackName(), State: state, ID: key, NodeHostName: rep.GetNodeId().GetHost(),
			NodeHTTPAddress: rep.GetHttpAddress(), LastHealthUpdate: rep.GetLastHealthReportTime(), Version: n.Version,
			HealthReport: rep.GetHealthReport(), NumContainers: u.Containers,
			UsedMemoryMB: u.Used[scheduler.Memory], AvailMemoryMB: free[scheduler.Memory],
			UsedVirtualCores: u.Used[scheduler.VCores], AvailableVirtualCores: free[scheduler.VCores],
			UsedResource: resource(rm, u.Used), AvailableResource: resource(rm, free)}
		// Java leaves the web address of nodes that are gone empty.
		switch rep.GetNodeState() {
		case yarnpb.NodeStateProto_NS_LOST, yarnpb.NodeStateProto_NS_DECOMMISSIONED, yarnpb.NodeStateProto_NS_REBOOTED:
			info.NodeHTTPAddress = ""
		}
		info.NodeLabels = labelsOnly(rep.GetNodeLabels(), n.AutoLabels)
		for _, tag := range slices.Sorted(maps.Keys(tags[key])) {
			info.AllocationTags.Info = append(info.AllocationTags.Info, allocationTagInfo{Tag: tag, Count: tags[key][tag]})
		}
		info.TotalResource = resource(rm, capacity)
		info.MemUtilization, info.CPUUtilization = nodeUtilizationPercent(rm, rep, n)
		if nu, cu := rep.GetNodeUtilization(), rep.GetContainersUtilization(); nu != nil || cu != nil {
			info.ResourceUtilization = &nodeUtilization{NodePhysicalMemoryMB: int64(nu.GetPmem()), NodeVirtualMemoryMB: int64(nu.GetVmem()),
				NodeCPUUsage: float64(nu.GetCpu()), AggregatedContainersPhysicalMemoryMB: int64(cu.GetPmem()),
				AggregatedContainersVirtualMemoryMB: int64(cu.GetVmem()), ContainersCPUUsage: float64(cu.GetCpu())}
		}
		if len(n.AutoLabels) > 0 || n.Static {
			info.Bobbin = &bobbinNodeDetails{AutoLabels: n.AutoLabels, Static: n.Static}
		}
		out = append(out, info)
	}
	return out
}

// nodeUtilizationPercent is NodeInfo's memUtilization and cpuUtilization: the machine's
// measured memory in percent of its physical memory, and its CPU (in cores) in percent of
// its physical cores. A node that did not register its physical resource is taken to be
// its capacity, as RMNodeImpl takes it.
func nodeUtilizationPercent(rm *rmcore.Core, rep *yarnpb.NodeReportProto, n rmstate.Node) (mem, cpu float32) {
	nu := rep.GetNodeUtilization()
	if nu == nil {
		return 0, 0
	}
	phys := physicalOf(rm, rep, n)
	physMB, cores := phys[scheduler.Memory], phys[scheduler.VCores]
	if physMB > 0 {
		mem = float32(nu.GetPmem()) * 100 / float32(physMB)
	}
	if cores > 0 {
		cpu = nu.GetCpu() * 100 / float32(cores)
	}
	return mem, cpu
}

// physicalOf is the machine's resource as the node registered it, or its capacity when it
// registered none (RMNodeImpl's fallback).
func physicalOf(rm *rmcore.Core, rep *yarnpb.NodeReportProto, n rmstate.Node) scheduler.Resource {
	if n.Physical != nil {
		return rm.ResourceOf(n.Physical)
	}
	return rm.ResourceOf(rep.GetCapability())
}

// clusterUtilization is ClusterMetrics' utilizedMB and utilizedVirtualCores: each active
// node's measured use scaled from its physical resource to its capacity, summed
// (RMNodeImpl.updateClusterUtilizationMetrics).
func clusterUtilization(rm *rmcore.Core) (mb, vcores int64) {
	for _, rep := range rm.NodeReports([]yarnpb.NodeStateProto{yarnpb.NodeStateProto_NS_RUNNING, yarnpb.NodeStateProto_NS_UNHEALTHY,
		yarnpb.NodeStateProto_NS_DECOMMISSIONING}) {
		nu := rep.GetNodeUtilization()
		if nu == nil {
			continue
		}
		total := rm.ResourceOf(rep.GetCapability())
		n, _ := rm.NodeSnapshot(rmstate.NodeKey(rep.GetNodeId()))
		phys := physicalOf(rm, rep, n)
		mb += int64(float32(nu.GetPmem()) / max(1, float32(phys[scheduler.Memory])) * float32(total[scheduler.Memory]))
		vcores += int64(nu.GetCpu() / max(1, float32(phys[scheduler.VCores])) * float32(total[scheduler.VCores]))
	}
	return mb, vcores
}

// labelsOnly drops the measured labels a report appends after the partition labels.
func labelsOnly(all, auto []string) []string {
	if len(auto) == 0 {
		return all
	}
	skip := map[string]bool{}
	for _, a := range auto {
		skip[a] = true
	}
	var out []string
	for _, l := range all {
		if !skip[l] {
			out = append(out, l)
		}
	}
	return out
}
