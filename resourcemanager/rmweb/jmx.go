package rmweb

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	metrics "github.com/rcrowley/go-metrics"

	"github.com/bobbin-yarn/bobbin/conf/capacity"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmcore"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/yarn/webapp"
)

// RPCServer is one of the RM's IPC servers, for its RpcActivityForPort<port> bean.
type RPCServer struct {
	Port     int
	Name     string // the server's name in its calls' timers (rpc.<name>.<protocol>.<method>)
	Activity func() rpc.Activity
}

// Beans are the Java RM's MBeans that monitoring reads, computed from the core:
// ClusterMetrics (NodeManagers by state), QueueMetrics for every queue
// (q0=root,q1=...) and RpcActivityForPort<port> for each IPC server.
func Beans(rm *rmcore.Core, host string, servers []RPCServer) []webapp.Bean {
	var out []webapp.Bean
	const svc = "Hadoop:service=ResourceManager,"
	c := rm.NodeCounts()
	launch, register := rm.Metrics().AMLaunchDelay.Snapshot(), rm.Metrics().AMRegisterDelay.Snapshot()
	out = append(out, webapp.Bean{Name: svc + "name=ClusterMetrics", ModelerType: "ClusterMetrics", Attrs: []webapp.Attr{
		{Key: "tag.ClusterMetrics", Value: "ResourceManager"}, {Key: "tag.Context", Value: "yarn"}, {Key: "tag.Hostname", Value: host},
		{Key: "NumActiveNMs", Value: c[yarnpb.NodeStateProto_NS_RUNNING]},
		{Key: "NumDecommissioningNMs", Value: c[yarnpb.NodeStateProto_NS_DECOMMISSIONING]},
		{Key: "NumDecommissionedNMs", Value: c[yarnpb.NodeStateProto_NS_DECOMMISSIONED]},
		{Key: "NumLostNMs", Value: c[yarnpb.NodeStateProto_NS_LOST]},
		{Key: "NumUnhealthyNMs", Value: c[yarnpb.NodeStateProto_NS_UNHEALTHY]},
		{Key: "NumRebootedNMs", Value: c[yarnpb.NodeStateProto_NS_REBOOTED]},
		{Key: "NumShutdownNMs", Value: c[yarnpb.NodeStateProto_NS_SHUTDOWN]},
		// How long AM launches take, and AMs to register after (ms, as Java's MutableRate).
		{Key: "AMLaunchDelayNumOps", Value: launch.Count()}, {Key: "AMLaunchDelayAvgTime", Value: launch.Mean() / 1e6},
		{Key: "AMRegisterDelayNumOps", Value: register.Count()}, {Key: "AMRegisterDelayAvgTime", Value: register.Mean() / 1e6},
	}})
	out = append(out, queueBeans(rm, host)...)
	out = append(out, nmInfoBean(rm))
	for _, s := range servers {
		out = append(out, webapp.RPCActivityBean("ResourceManager", host, s.Port, s.Activity()))
		out = append(out, detailedBean(rm.Registry(), host, s))
	}
	return out
}

func queueBeans(rm *rmcore.Core, host string) []webapp.Bean {
	figures := rm.QueueFigures()
	var out []webapp.Bean
	var walk func(q *capacity.Queue, path []string)
	walk = func(q *capacity.Queue, path []string) {
		path = append(path, q.Name)
		f := figures[q]
		name := "Hadoop:service=ResourceManager,name=QueueMetrics"
		for i, p := range path {
			name += ",q" + strconv.Itoa(i) + "=" + p
		}
		out = append(out, webapp.Bean{Name: name, ModelerType: "QueueMetrics," + qTags(path), Attrs: []webapp.Attr{
			{Key: "tag.Queue", Value: strings.Join(path, ".")}, {Key: "tag.Context", Value: "yarn"}, {Key: "tag.Hostname", Value: host},
			{Key: "running_0", Value: f.RunningFor[0]}, {Key: "running_60", Value: f.RunningFor[1]},
			{Key: "running_300", Value: f.RunningFor[2]}, {Key: "running_1440", Value: f.RunningFor[3]},
			{Key: "AppsSubmitted", Value: f.Submitted}, {Key: "AppsRunning", Value: f.Running}, {Key: "AppsPending", Value: f.Pending},
			{Key: "AppsCompleted", Value: f.Completed}, {Key: "AppsKilled", Value: f.Killed}, {Key: "AppsFailed", Value: f.Failed},
			{Key: "AllocatedMB", Value: f.Allocated[scheduler.Memory]}, {Key: "AllocatedVCores", Value: f.Allocated[scheduler.VCores]},
			{Key: "AllocatedContainers", Value: f.Containers},
			{Key: "AvailableMB", Value: f.Available[scheduler.Memory]}, {Key: "AvailableVCores", Value: f.Available[scheduler.VCores]},
			{Key: "PendingMB", Value: f.PendingRes[scheduler.Memory]}, {Key: "PendingVCores", Value: f.PendingRes[scheduler.VCores]},
			{Key: "PendingContainers", Value: f.PendingContainers},
			// Bobbin's engine places a container or leaves the ask waiting; it never holds a
			// node's room for one (a reservation), so these are always none.
			{Key: "ReservedMB", Value: 0}, {Key: "ReservedVCores", Value: 0}, {Key: "ReservedContainers", Value: 0},
			{Key: "ActiveUsers", Value: f.ActiveUsers}, {Key: "ActiveApplications", Value: f.Running},
			{Key: "AggregateContainersAllocated", Value: f.ContainersAllocated},
			{Key: "AggregateNodeLocalContainersAllocated", Value: f.AllocatedByLocality[scheduler.NodeLocal]},
			{Key: "AggregateRackLocalContainersAllocated", Value: f.AllocatedByLocality[scheduler.RackLocal]},
			{Key: "AggregateOffSwitchContainersAllocated", Value: f.AllocatedByLocality[scheduler.OffSwitch]},
			{Key: "AggregateContainersReleased", Value: f.ContainersReleased},
			{Key: "AggregateContainersPreempted", Value: f.ContainersPreempted},
			{Key: "AggregateMemoryMBSecondsPreempted", Value: f.PreemptedMBSeconds},
			{Key: "AggregateVcoreSecondsPreempted", Value: f.PreemptedVcoreSeconds},
		}})
		for _, c := range q.Children {
			walk(c, path)
		}
	}
	walk(rm.Queues().Root, nil)
	return out
}

// qTags is the modelerType suffix of a queue bean: q0=root,q1=default.
func qTags(path []string) string {
	parts := make([]string, len(path))
	for i, p := range path {
		parts[i] = "q" + strconv.Itoa(i) + "=" + p
	}
	return strings.Join(parts, ",")
}

// liveNM is one entry of RMNMInfo's LiveNodeManagers, in Java's order.
type liveNM struct {
	HostName           string
	Rack               string
	State              string
	NodeID             string `json:"NodeId"`
	NodeHTTPAddress    string
	LastHealthUpdate   int64
	HealthReport       string
	NodeManagerVersion string
	NumContainers      int64
	UsedMemoryMB       int64
	AvailableMemoryMB  int64
}

// nmInfoBean is RMNMInfo: the NodeManagers the RM holds active (not lost, decommissioned,
// rebooted or shut down), as a JSON string, which Hadoop's tools parse.
func nmInfoBean(rm *rmcore.Core) webapp.Bean {
	usage := rm.NodeUsage()
	live := []liveNM{}
	for _, rep := range rm.NodeReports(nil) {
		switch rep.GetNodeState() {
		case yarnpb.NodeStateProto_NS_LOST, yarnpb.NodeStateProto_NS_DECOMMISSIONED, yarnpb.NodeStateProto_NS_REBOOTED, yarnpb.NodeStateProto_NS_SHUTDOWN:
			continue
		}
		key := rmstate.NodeKey(rep.GetNodeId())
		n, _ := rm.NodeSnapshot(key)
		u := usage[key]
		capacity := rm.ResourceOf(rep.GetCapability())
		live = append(live, liveNM{HostName: rep.GetNodeId().GetHost(), Rack: rep.GetRackName(), State: strings.TrimPrefix(rep.GetNodeState().String(), "NS_"),
			NodeID: key, NodeHTTPAddress: rep.GetHttpAddress(), LastHealthUpdate: rep.GetLastHealthReportTime(), HealthReport: rep.GetHealthReport(),
			NodeManagerVersion: n.Version, NumContainers: int64(u.Containers), UsedMemoryMB: u.Used[scheduler.Memory],
			AvailableMemoryMB: capacity[scheduler.Memory] - u.Used[scheduler.Memory]})
	}
	b, _ := json.Marshal(live) // strings and numbers only: it cannot fail
	return webapp.Bean{Name: "Hadoop:service=ResourceManager,name=RMNMInfo", ModelerType: "org.apache.hadoop.yarn.server.resourcemanager.RMNMInfo",
		Attrs: []webapp.Attr{{Key: "LiveNodeManagers", Value: string(b)}}}
}

// detailedBean is RpcDetailedActivityForPort<port>: each method the server answered, its
// calls (<Method>NumOps) and their mean time in milliseconds (<Method>AvgTime), from the
// server's call timers.
func detailedBean(reg metrics.Registry, host string, s RPCServer) webapp.Bean {
	port := strconv.Itoa(s.Port)
	attrs := []webapp.Attr{{Key: "tag.port", Value: port}, {Key: "tag.Context", Value: "rpcdetailed"}, {Key: "tag.Hostname", Value: host}}
	var methods []webapp.Attr
	if reg != nil && s.Name != "" {
		reg.Each(func(name string, m any) {
			parts := strings.Split(name, ".")
			t, ok := m.(metrics.Timer)
			if !ok || len(parts) != 4 || parts[0] != "rpc" || parts[1] != s.Name || parts[3] == "" {
				return
			}
			snap := t.Snapshot()
			method := strings.ToUpper(parts[3][:1]) + parts[3][1:]
			methods = append(methods, webapp.Attr{Key: method + "NumOps", Value: snap.Count()}, webapp.Attr{Key: method + "AvgTime", Value: snap.Mean() / 1e6})
		})
	}
	sort.Slice(methods, func(i, j int) bool { return methods[i].Key < methods[j].Key })
	return webapp.Bean{Name: "Hadoop:service=ResourceManager,name=RpcDetailedActivityForPort" + port, ModelerType: "RpcDetailedActivityForPort" + port,
		Attrs: append(attrs, methods...)}
}
