package rmcore

import (
	"github.com/bobbin-yarn/bobbin/conf/capacity"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
)

// FairBounds are a Fair Scheduler queue's figures as FSQueue reports them (the REST
// view's fairQueue, and QueueInfo for 3.4 clients' `yarn queue -status`): its
// minResources, its maxResources within the cluster (the cluster's size for root), and
// its steady fair share, its weight's share of the cluster.
type FairBounds struct {
	Min, Max, SteadyFair scheduler.Resource
}

// FairBoundsOf computes q's FairBounds in a cluster of total.
func (rm *Core) FairBoundsOf(q *capacity.Queue, total scheduler.Resource) FairBounds {
	b := FairBounds{Max: total.Scaled(q.AbsoluteMaximumCapacity), SteadyFair: total.Scaled(q.AbsoluteCapacity)}
	types := rm.EngineTypes()
	if q.MinimumResource != nil {
		b.Min, _ = types.Vector(q.MinimumResource)
	}
	if q.MaximumResource != nil {
		// As FairSchedulerQueueInfo: the ceiling, within the cluster.
		ceiling, _ := types.Ceiling(q.MaximumResource)
		for i, x := range ceiling {
			if x >= 0 {
				b.Max[i] = min(b.Max[i], x)
			}
		}
	}
	if q.Parent == nil {
		b.Max, b.SteadyFair = total, total
	}
	return b
}
