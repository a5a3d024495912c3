package rmcore

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/conf/capacity"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
)

// FillUsage adds to reports what running applications hold and what every application
// has used over time (its aggregate resource allocation, preempted included).
func (rm *Core) FillUsage(reports ...*yarnpb.ApplicationReportProto) {
	if len(reports) == 0 {
		return
	}
	ids := make(map[records.ApplicationID]bool, len(reports))
	for _, r := range reports {
		ids[records.AppIDFromProto(r.GetApplicationId())] = true
	}
	byApp := rm.containers.LiveUsage(ids)
	for _, r := range reports {
		u := byApp[records.AppIDFromProto(r.GetApplicationId())]
		ru := r.AppResource_Usage
		if st := r.GetYarnApplicationState(); st == yarnpb.YarnApplicationStateProto_RUNNING || st == yarnpb.YarnApplicationStateProto_ACCEPTED {
			used := rm.ResourceProto(u.Used)
			ru = &yarnpb.ApplicationResourceUsageReportProto{NumUsedContainers: proto.Int32(u.Containers), NumReservedContainers: proto.Int32(0),
				UsedResources: used, NeededResources: used, ReservedResources: rm.ResourceProto(scheduler.Resource{})}
			r.AppResource_Usage = ru
		}
		// 2.x clients read memory_seconds and vcore_seconds; 3.x clients the maps, by type.
		ru.MemorySeconds, ru.VcoreSeconds = proto.Int64(u.Spent[scheduler.Memory]/1000), proto.Int64(u.Spent[scheduler.VCores]/1000)
		ru.PreemptedMemorySeconds, ru.PreemptedVcoreSeconds = proto.Int64(u.Preempted[scheduler.Memory]/1000), proto.Int64(u.Preempted[scheduler.VCores]/1000)
		ru.ApplicationResourceUsageMap, ru.ApplicationPreemptedResourceUsageMap = nil, nil
		for i, name := range rm.types.Names() {
			ru.ApplicationResourceUsageMap = append(ru.ApplicationResourceUsageMap, &yarnpb.StringLongMapProto{Key: proto.String(name), Value: proto.Int64(u.Spent[i] / 1000)})
			ru.ApplicationPreemptedResourceUsageMap = append(ru.ApplicationPreemptedResourceUsageMap, &yarnpb.StringLongMapProto{Key: proto.String(name), Value: proto.Int64(u.Preempted[i] / 1000)})
		}
	}
}

func (rm *Core) MaximumCapability() *yarnpb.ResourceProto {
	return rm.ResourceProto(rm.maxAllocation())
}

// MaxAllocationIn is the largest container's memory and vcores in queue: the queue's
// maximum-allocation-mb and -vcores where set, else the cluster's.
func (rm *Core) MaxAllocationIn(queue string) (mb, vcores int64) {
	v := rm.maxAllocation()
	if q, ok := rm.Queues().Queue(queue); ok {
		v = rm.MaximumAllocationOf(q)
	}
	return v[scheduler.Memory], v[scheduler.VCores]
}

// MaximumCapabilityIn is MaximumCapability for an application in queue (its AM's
// register answer).
func (rm *Core) MaximumCapabilityIn(queue string) *yarnpb.ResourceProto {
	v := rm.maxAllocation()
	v[scheduler.Memory], v[scheduler.VCores] = rm.MaxAllocationIn(queue)
	return rm.ResourceProto(v)
}

// checkQueueMaxAllocation refuses a queue maximum allocation above the cluster's, as the
// Java Capacity Scheduler does when it reads the queues.
func checkQueueMaxAllocation(tree *capacity.Tree, s Settings) error {
	for _, q := range tree.Queues() {
		if q.MaximumAllocationMB > int64(s.MaxAllocationMB) || q.MaximumAllocationVCores > int64(s.MaxAllocationCore) {
			return fmt.Errorf("Queue maximum allocation cannot be larger than the cluster setting for queue %s max allocation per queue: <memory:%d, vCores:%d> cluster setting: <memory:%d, vCores:%d>",
				q.Path, q.MaximumAllocationMB, q.MaximumAllocationVCores, s.MaxAllocationMB, s.MaxAllocationCore)
		}
	}
	return nil
}

// CheckExtraTypes refuses an ask for more of a resource-types.xml type than its
// maximum-allocation, or a negative amount, with 3.1.1's exception.
func (rm *Core) CheckExtraTypes(r *yarnpb.ResourceProto) error {
	if rm.types.Len() <= 2 {
		return nil
	}
	v := rm.ResourceOf(r)
	for i, t := range rm.types.All() {
		if i < 2 {
			continue
		}
		if v[i] < 0 || v[i] > t.Max {
			return exceptions.Errorf(exceptions.InvalidResourceRequest, "Invalid resource request, requested resource type=[%s] < 0 or greater than maximum allowed allocation. Requested resource=%s, maximum allowed allocation=%s",
				t.Name, rm.engine.Types().Format(v), rm.engine.Types().Format(rm.maxAllocation()))
		}
	}
	return nil
}

// MaximumAllocationOf is the largest container in queue q: its maximum-allocation-mb
// and -vcores where set (inherited), else the cluster's; other types the cluster's.
func (rm *Core) MaximumAllocationOf(q *capacity.Queue) scheduler.Resource {
	v := rm.maxAllocation()
	if q.MaximumAllocationMB > 0 {
		v[scheduler.Memory] = q.MaximumAllocationMB
	}
	if q.MaximumAllocationVCores > 0 {
		v[scheduler.VCores] = q.MaximumAllocationVCores
	}
	return v
}

// maxAllocation is the largest container, in every type.
func (rm *Core) maxAllocation() scheduler.Resource {
	var v scheduler.Resource
	for i, t := range rm.types.All() {
		v[i] = t.Max
	}
	v[scheduler.Memory], v[scheduler.VCores] = int64(rm.settings.MaxAllocationMB), int64(rm.settings.MaxAllocationCore)
	return v
}

// ClampPriority applies the cluster's maximum application priority
// (yarn.cluster.max-application-priority) as the Capacity Scheduler does: a higher
// priority becomes the maximum.
func (rm *Core) ClampPriority(p int32) int32 {
	return min(p, rm.settings.MaxAppPriority)
}
