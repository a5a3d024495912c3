package rmcore

import (
	"time"

	"github.com/bobbin-yarn/bobbin/conf/capacity"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
)

// QueueFigures are one queue's figures, summed up the tree, as the Java RM's QueueMetrics
// keep them: the /jmx QueueMetrics beans and the QueueStatistics of getQueueInfo (which
// `yarn top` reads) both report them.
type QueueFigures struct {
	Submitted, Completed, Killed, Failed int64
	Running, Pending                     int64
	RunningFor                           [4]int64 // running_0, _60, _300, _1440 (minutes)
	Allocated, PendingRes, Available     scheduler.Resource
	Containers, PendingContainers        int64
	ActiveUsers                          int
	// Since the RM started: containers allocated (and by scheduler.Locality), ended,
	// and preempted, with the MB- and vcore-seconds the preempted ones had held.
	ContainersAllocated, ContainersReleased, ContainersPreempted int64
	AllocatedByLocality                                          [3]int64
	PreemptedMBSeconds, PreemptedVcoreSeconds                    int64
}

// queueSums are QueueFigures while they are summed (users counted once up the tree).
type queueSums struct {
	QueueFigures
	users map[string]bool
}

func (f *queueSums) add(o *queueSums) {
	f.Submitted += o.Submitted
	f.Completed += o.Completed
	f.Killed += o.Killed
	f.Failed += o.Failed
	f.Running += o.Running
	f.Pending += o.Pending
	for i := range f.RunningFor {
		f.RunningFor[i] += o.RunningFor[i]
	}
	f.Allocated = f.Allocated.Add(o.Allocated)
	f.PendingRes = f.PendingRes.Add(o.PendingRes)
	f.Containers += o.Containers
	f.PendingContainers += o.PendingContainers
	f.ContainersAllocated += o.ContainersAllocated
	f.ContainersReleased += o.ContainersReleased
	f.ContainersPreempted += o.ContainersPreempted
	for i := range f.AllocatedByLocality {
		f.AllocatedByLocality[i] += o.AllocatedByLocality[i]
	}
	f.PreemptedMBSeconds += o.PreemptedMBSeconds
	f.PreemptedVcoreSeconds += o.PreemptedVcoreSeconds
	for u := range o.users {
		f.users[u] = true
	}
}

// QueueFigures computes every queue's figures now, keyed by the queue of the current tree.
// Available is what Java's QueueMetrics report as available to the queue (QueueStatistics,
// the AvailableMB MBean attribute, what `yarn top` adds up): see guaranteedLeft.
func (rm *Core) QueueFigures() map[*capacity.Queue]QueueFigures {
	now := rm.opts.Now()
	leaves := map[string]*queueSums{}
	leaf := func(q string) *queueSums {
		f := leaves[q]
		if f == nil {
			f = &queueSums{users: map[string]bool{}}
			leaves[q] = f
		}
		return f
	}
	for q, c := range rm.metrics.Queues() {
		f := leaf(q)
		f.Submitted, f.Completed, f.Killed, f.Failed = c.Submitted, c.Completed, c.Killed, c.Failed
		f.ContainersAllocated, f.AllocatedByLocality = c.Allocated, c.ByLocality
	}
	for q, e := range rm.containers.QueueEnds() {
		f := leaf(q)
		f.ContainersReleased, f.ContainersPreempted = e.Ended, e.Preempted
		f.PreemptedMBSeconds, f.PreemptedVcoreSeconds = e.PreemptedSeconds[scheduler.Memory], e.PreemptedSeconds[scheduler.VCores]
	}
	live := map[records.ApplicationID]bool{}
	queueOf := map[records.ApplicationID]string{}
	rm.apps.Each(func(a *rmstate.App) {
		f := leaf(a.Queue)
		switch a.State() {
		case yarnpb.YarnApplicationStateProto_RUNNING:
			f.Running++
			f.users[a.User] = true
			mins := now.Sub(time.UnixMilli(a.StartTime)).Minutes()
			switch {
			case mins < 60:
				f.RunningFor[0]++
			case mins < 300:
				f.RunningFor[1]++
			case mins < 1440:
				f.RunningFor[2]++
			default:
				f.RunningFor[3]++
			}
		case yarnpb.YarnApplicationStateProto_NEW, yarnpb.YarnApplicationStateProto_NEW_SAVING,
			yarnpb.YarnApplicationStateProto_SUBMITTED, yarnpb.YarnApplicationStateProto_ACCEPTED:
			f.Pending++
			f.users[a.User] = true
		default:
			return
		}
		live[a.ID], queueOf[a.ID] = true, a.Queue
	})
	for id, u := range rm.containers.LiveUsage(live) {
		leaf(queueOf[id]).Containers += int64(u.Containers)
	}
	for q, g := range rm.engine.GroupStats() {
		f := leaf(q)
		for _, used := range g.Used {
			f.Allocated = f.Allocated.Add(used)
		}
		f.PendingRes, f.PendingContainers = g.PendingResource, int64(g.Pending)
	}
	st := rm.engine.Stats()
	types := rm.engine.Types()
	memoryOnly := rm.engine.FitsByMemory()
	out := map[*capacity.Queue]QueueFigures{}
	var walk func(q *capacity.Queue) *queueSums
	walk = func(q *capacity.Queue) *queueSums {
		f := &queueSums{users: map[string]bool{}}
		if q.IsLeaf() {
			if l := leaves[q.Name]; l != nil {
				f.add(l)
			}
		}
		for _, c := range q.Children {
			f.add(walk(c))
		}
		f.Available = guaranteedLeft(q, st.Total, f.Allocated, types, memoryOnly)
		f.ActiveUsers = len(f.users)
		out[q] = f.QueueFigures
		return f
	}
	walk(rm.Queues().Root)
	return out
}

// guaranteedLeft is what the Java Capacity Scheduler (3.1 to 3.4) reports as available to
// queue q (CSQueueUtils.getMaxAvailableResourceToQueuePartition): its guaranteed resources
// less what it uses, each type at least 0, and nothing once it uses its guarantee or more
// as the resource calculator compares them (memory alone under the default calculator,
// the dominant share under DRF). The guarantee is its absolute capacity of the cluster,
// multiplied as Java multiplies, in float and rounded down (70 % of 4096 MB is 2867 MB), or
// its absolute-resource capacity; the root's is the cluster. Maximum capacity, which lets a
// queue go past its guarantee, plays no part.
func guaranteedLeft(q *capacity.Queue, total, used scheduler.Resource, types scheduler.Types, memoryOnly bool) scheduler.Resource {
	var guaranteed scheduler.Resource
	switch {
	case q.Parent == nil:
		guaranteed = total
	case q.CapacityResource != nil:
		if v, err := types.Vector(q.CapacityResource); err == nil {
			guaranteed = v
		}
	default:
		for i := range guaranteed {
			guaranteed[i] = int64(float32(total[i]) * float32(q.AbsoluteCapacity))
		}
	}
	var out scheduler.Resource
	n := types.Len()
	if memoryOnly {
		if guaranteed[scheduler.Memory] <= used[scheduler.Memory] {
			return out
		}
	} else if !scheduler.DominantShare(used, total, n, false).Less(scheduler.DominantShare(guaranteed, total, n, false)) {
		return out
	}
	for i := 0; i < n; i++ {
		out[i] = max(0, guaranteed[i]-used[i])
	}
	return out
}

// SchedulerStats are the engine's figures now: the cluster's totals, each queue's and
// partition's use.
func (rm *Core) SchedulerStats() scheduler.Stats { return rm.engine.Stats() }

// GroupStats are the engine's figures of each quota group.
func (rm *Core) GroupStats() map[string]scheduler.GroupStats { return rm.engine.GroupStats() }

// PreemptionEnabled: the engine preempts (yarn.resourcemanager.scheduler.monitor.enable).
func (rm *Core) PreemptionEnabled() bool { return rm.engine.Config().Preemption.Enabled }

// EngineTypes are the resource types in the engine's order, for reading configured
// vectors (a queue's minimum and maximum resources).
func (rm *Core) EngineTypes() scheduler.Types { return rm.engine.Types() }

// NodeAllocationTags counts, per node, the allocation tags of its containers.
func (rm *Core) NodeAllocationTags() map[string]map[string]int64 { return rm.engine.NodeTags() }

// PendingAsksOf are the outstanding asks of each of apps as the engine holds them, read
// at once.
func (rm *Core) PendingAsksOf(apps []records.ApplicationID) map[records.ApplicationID][]scheduler.Ask {
	ids := make([]scheduler.AppID, len(apps))
	for i, a := range apps {
		ids[i] = EngineID(a)
	}
	got := rm.engine.AppsAsks(ids)
	out := make(map[records.ApplicationID][]scheduler.Ask, len(got))
	for i, a := range apps {
		if asks, ok := got[ids[i]]; ok {
			out[a] = asks
		}
	}
	return out
}
