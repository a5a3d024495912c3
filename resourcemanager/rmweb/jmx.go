package rmweb

import (
	"strconv"
	"strings"
	"time"

	"github.com/bobbin-yarn/bobbin/conf/capacity"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmcore"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/yarn/webapp"
)

// RPCServer is one of the RM's IPC servers, for its RpcActivityForPort<port> bean.
type RPCServer struct {
	Port     int
	Activity func() rpc.Activity
}

// Beans are the Java RM's MBeans that monitoring reads, computed from the core:
// ClusterMetrics (NodeManagers by state), QueueMetrics for every queue
// (q0=root,q1=...) and RpcActivityForPort<port> for each IPC server.
func Beans(rm *rmcore.Core, host string, servers []RPCServer) []webapp.Bean {
	var out []webapp.Bean
	const svc = "Hadoop:service=ResourceManager,"
	c := rm.Nodes.Counts()
	out = append(out, webapp.Bean{Name: svc + "name=ClusterMetrics", ModelerType: "ClusterMetrics", Attrs: []webapp.Attr{
		{Key: "tag.ClusterMetrics", Value: "ResourceManager"}, {Key: "tag.Context", Value: "yarn"}, {Key: "tag.Hostname", Value: host},
		{Key: "NumActiveNMs", Value: c[yarnpb.NodeStateProto_NS_RUNNING]},
		{Key: "NumDecommissioningNMs", Value: c[yarnpb.NodeStateProto_NS_DECOMMISSIONING]},
		{Key: "NumDecommissionedNMs", Value: c[yarnpb.NodeStateProto_NS_DECOMMISSIONED]},
		{Key: "NumLostNMs", Value: c[yarnpb.NodeStateProto_NS_LOST]},
		{Key: "NumUnhealthyNMs", Value: c[yarnpb.NodeStateProto_NS_UNHEALTHY]},
		{Key: "NumRebootedNMs", Value: c[yarnpb.NodeStateProto_NS_REBOOTED]},
		{Key: "NumShutdownNMs", Value: c[yarnpb.NodeStateProto_NS_SHUTDOWN]},
	}})
	out = append(out, queueBeans(rm, host)...)
	for _, s := range servers {
		out = append(out, webapp.RPCActivityBean("ResourceManager", host, s.Port, s.Activity()))
	}
	return out
}

// queueFigures are one queue's QueueMetrics, summed up the tree.
type queueFigures struct {
	submitted, completed, killed, failed int64
	running, pending                     int64
	runningFor                           [4]int64 // running_0, _60, _300, _1440 (minutes)
	allocated, pendingRes                scheduler.Resource
	containers, pendingContainers        int64
	activeUsers                          map[string]bool
}

func (f *queueFigures) add(o *queueFigures) {
	f.submitted += o.submitted
	f.completed += o.completed
	f.killed += o.killed
	f.failed += o.failed
	f.running += o.running
	f.pending += o.pending
	for i := range f.runningFor {
		f.runningFor[i] += o.runningFor[i]
	}
	f.allocated = f.allocated.Add(o.allocated)
	f.pendingRes = f.pendingRes.Add(o.pendingRes)
	f.containers += o.containers
	f.pendingContainers += o.pendingContainers
	for u := range o.activeUsers {
		f.activeUsers[u] = true
	}
}

func queueBeans(rm *rmcore.Core, host string) []webapp.Bean {
	now := rm.Opts.Now()
	leaves := map[string]*queueFigures{}
	leaf := func(q string) *queueFigures {
		f := leaves[q]
		if f == nil {
			f = &queueFigures{activeUsers: map[string]bool{}}
			leaves[q] = f
		}
		return f
	}
	for q, c := range rm.Metrics.Queues() {
		f := leaf(q)
		f.submitted, f.completed, f.killed, f.failed = c.Submitted, c.Completed, c.Killed, c.Failed
	}
	live := map[records.ApplicationID]bool{}
	queueOf := map[records.ApplicationID]string{}
	rm.Apps.Each(func(a *rmstate.App) {
		f := leaf(a.Queue)
		switch a.State {
		case yarnpb.YarnApplicationStateProto_RUNNING:
			f.running++
			f.activeUsers[a.User] = true
			mins := now.Sub(time.UnixMilli(a.StartTime)).Minutes()
			switch {
			case mins < 60:
				f.runningFor[0]++
			case mins < 300:
				f.runningFor[1]++
			case mins < 1440:
				f.runningFor[2]++
			default:
				f.runningFor[3]++
			}
		case yarnpb.YarnApplicationStateProto_NEW, yarnpb.YarnApplicationStateProto_NEW_SAVING,
			yarnpb.YarnApplicationStateProto_SUBMITTED, yarnpb.YarnApplicationStateProto_ACCEPTED:
			f.pending++
			f.activeUsers[a.User] = true
		default:
			return
		}
		live[a.ID], queueOf[a.ID] = true, a.Queue
	})
	for id, u := range rm.Containers.LiveUsage(live) {
		leaf(queueOf[id]).containers += int64(u.Containers)
	}
	for q, g := range rm.Engine.GroupStats() {
		f := leaf(q)
		for _, used := range g.Used {
			f.allocated = f.allocated.Add(used)
		}
		f.pendingRes, f.pendingContainers = g.PendingResource, int64(g.Pending)
	}
	st := rm.Engine.Stats()
	free := st.Total.Sub(st.Allocated)
	var out []webapp.Bean
	var walk func(q *capacity.Queue, path []string) *queueFigures
	walk = func(q *capacity.Queue, path []string) *queueFigures {
		path = append(path, q.Name)
		f := &queueFigures{activeUsers: map[string]bool{}}
		if q.IsLeaf() {
			if l := leaves[q.Name]; l != nil {
				f.add(l)
			}
		}
		for _, c := range q.Children {
			f.add(walk(c, path))
		}
		// Available: what the queue may still take, its maximum capacity of the cluster
		// less its use, and no more than the cluster has free.
		absMax := q.AbsoluteMaximumCapacity
		if q.Parent == nil {
			absMax = 1
		}
		var avail scheduler.Resource
		for i := range avail {
			avail[i] = max(0, min(int64(float64(st.Total[i])*absMax)-f.allocated[i], free[i]))
		}
		name := "Hadoop:service=ResourceManager,name=QueueMetrics"
		for i, p := range path {
			name += ",q" + strconv.Itoa(i) + "=" + p
		}
		out = append(out, webapp.Bean{Name: name, ModelerType: "QueueMetrics," + qTags(path), Attrs: []webapp.Attr{
			{Key: "tag.Queue", Value: strings.Join(path, ".")}, {Key: "tag.Context", Value: "yarn"}, {Key: "tag.Hostname", Value: host},
			{Key: "running_0", Value: f.runningFor[0]}, {Key: "running_60", Value: f.runningFor[1]},
			{Key: "running_300", Value: f.runningFor[2]}, {Key: "running_1440", Value: f.runningFor[3]},
			{Key: "AppsSubmitted", Value: f.submitted}, {Key: "AppsRunning", Value: f.running}, {Key: "AppsPending", Value: f.pending},
			{Key: "AppsCompleted", Value: f.completed}, {Key: "AppsKilled", Value: f.killed}, {Key: "AppsFailed", Value: f.failed},
			{Key: "AllocatedMB", Value: f.allocated[scheduler.Memory]}, {Key: "AllocatedVCores", Value: f.allocated[scheduler.VCores]},
			{Key: "AllocatedContainers", Value: f.containers},
			{Key: "AvailableMB", Value: avail[scheduler.Memory]}, {Key: "AvailableVCores", Value: avail[scheduler.VCores]},
			{Key: "PendingMB", Value: f.pendingRes[scheduler.Memory]}, {Key: "PendingVCores", Value: f.pendingRes[scheduler.VCores]},
			{Key: "PendingContainers", Value: f.pendingContainers},
			{Key: "ActiveUsers", Value: len(f.activeUsers)}, {Key: "ActiveApplications", Value: f.running},
		}})
		return f
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
