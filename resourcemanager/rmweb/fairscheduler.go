package rmweb

import (
	"github.com/bobbin-yarn/bobbin/conf/capacity"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
)

// /ws/v1/cluster/scheduler under the Fair Scheduler class: the queue tree as 3.1.1's
// FairSchedulerInfo writes it (2.7.3 wrote the same fields, less the 3.x ones, with
// childQueues broken below the first level, YARN-2336). Every figure is Bobbin's: the
// weights became the groups' capacities, so the steady fair share is a queue's capacity
// of the cluster, and the instantaneous fair share is the group's quota, which the engine
// keeps at the Fair Scheduler's fair share.

type fairSchedulerInfo struct {
	Type      string     `json:"type"`
	RootQueue *fairQueue `json:"rootQueue"`
}

// fairQueue is FairSchedulerQueueInfo; a leaf (FairSchedulerLeafQueueInfo) adds the type
// and the application counts.
type fairQueue struct {
	Type                string         `json:"type,omitempty"`
	MaxApps             int            `json:"maxApps"`
	MinResources        *resourceInfo  `json:"minResources"`
	MaxResources        *resourceInfo  `json:"maxResources"`
	UsedResources       *resourceInfo  `json:"usedResources"`
	AMUsedResources     *resourceInfo  `json:"amUsedResources"`
	AMMaxResources      *resourceInfo  `json:"amMaxResources"`
	DemandResources     *resourceInfo  `json:"demandResources"`
	SteadyFairResources *resourceInfo  `json:"steadyFairResources"`
	FairResources       *resourceInfo  `json:"fairResources"`
	ClusterResources    *resourceInfo  `json:"clusterResources"`
	ReservedResources   *resourceInfo  `json:"reservedResources"`
	AllocatedContainers int            `json:"allocatedContainers"`
	ReservedContainers  int            `json:"reservedContainers"`
	QueueName           string         `json:"queueName"`
	SchedulingPolicy    string         `json:"schedulingPolicy"`
	Preemptable         bool           `json:"preemptable"`
	ChildQueues         *fairQueueList `json:"childQueues,omitempty"`
	NumPendingApps      *int           `json:"numPendingApps,omitempty"`
	NumActiveApps       *int           `json:"numActiveApps,omitempty"`
}

type fairQueueList struct {
	Queue []*fairQueue `json:"queue"`
}

// fairInfo builds the Fair Scheduler's view from the same counts as the Capacity
// Scheduler's.
func (b *treeBuilder) fairInfo(root *capacity.Queue) fairSchedulerInfo {
	return fairSchedulerInfo{Type: "fairScheduler", RootQueue: b.fairQueue(root, b.total)}
}

func (b *treeBuilder) fairQueue(q *capacity.Queue, fair scheduler.Resource) *fairQueue {
	rm := b.s.rm
	zero := resource(rm, scheduler.Resource{})
	used := b.used(q)
	policy := q.FairPolicy
	if policy == "" {
		policy = "fair"
	}
	maxApps := int(q.RunningBound())
	bounds := rm.FairBoundsOf(q, b.total)
	fq := &fairQueue{MaxApps: maxApps, MinResources: resource(rm, bounds.Min), MaxResources: resource(rm, bounds.Max),
		UsedResources: resource(rm, used), DemandResources: resource(rm, used.Add(b.pending(q))),
		SteadyFairResources: resource(rm, bounds.SteadyFair), FairResources: resource(rm, fair),
		ClusterResources: resource(rm, b.total), ReservedResources: zero, QueueName: q.Name, SchedulingPolicy: policy,
		Preemptable: true, AMUsedResources: zero, AMMaxResources: zero}
	if q.IsLeaf() {
		g := b.groups[q.Name]
		counts := b.apps[q.Name]
		active, pending := counts[0], counts[1]
		fq.Type, fq.NumActiveApps, fq.NumPendingApps = "fairSchedulerLeafQueueInfo", &active, &pending
		fq.AllocatedContainers = b.containers[q.Name]
		fq.AMUsedResources = resource(rm, g.AMUsed)
		fq.AMMaxResources = resource(rm, b.scaled(g.Quota[""]*q.MaximumAMResourcePercent))
		return fq
	}
	fq.ChildQueues = &fairQueueList{}
	for _, c := range q.Children {
		ci := b.fairQueue(c, b.fairShare(c))
		fq.ChildQueues.Queue = append(fq.ChildQueues.Queue, ci)
		fq.AllocatedContainers += ci.AllocatedContainers
	}
	return fq
}

// fairShare is q's instantaneous fair share: its group's quota, which the engine keeps at
// the Fair Scheduler's fair share, or its leaves' added up.
func (b *treeBuilder) fairShare(q *capacity.Queue) scheduler.Resource {
	if q.IsLeaf() {
		return b.scaled(b.groups[q.Name].Quota[""])
	}
	var sum scheduler.Resource
	for _, c := range q.Children {
		sum = sum.Add(b.fairShare(c))
	}
	return sum
}
