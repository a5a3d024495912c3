package scheduler

import (
	"fmt"
	"maps"

	"github.com/bobbin-yarn/bobbin/conf/capacity"
)

// queue is the engine's own copy of a configured queue: what it schedules by, taken from
// the configuration's tree (conf/capacity) when the engine is built or refreshed, with the
// Fair Scheduler's floor and ceiling already read as amounts. The engine keeps nothing of
// the configuration's objects: a refresh builds a new tree of these and swaps it in whole.
// The fields keep the configuration's names.
type queue struct {
	Name, Path string
	Parent     *queue
	Children   []*queue

	Capacity                float64 // percent of the parent
	AbsoluteCapacity        float64 // fraction of the cluster
	AbsoluteMaximumCapacity float64 // fraction of the cluster
	// CapacityResource is the capacity written as an absolute resource (nil: a percent).
	CapacityResource map[string]int64
	State            capacity.State

	UserLimitFactor          float64
	MinimumUserLimitPercent  float64
	MaximumAMResourcePercent float64
	MaxRunningApps           int // -1: no bound

	Labels                     map[string]capacity.LabelShare
	DefaultNodeLabelExpression string
	FairSizeBasedWeight        bool
	DisablePreemption          bool
	FairPolicy                 string

	// bounds are the Fair Scheduler's minResources and maxResources as amounts.
	bounds queueBounds
}

// IsLeaf reports whether the queue has no children.
func (q *queue) IsLeaf() bool { return len(q.Children) == 0 }

// queueTree is the engine's queues, built from a configured tree.
type queueTree struct {
	root   *queue
	all    []*queue // parents before their children
	leaves []*queue
}

// newQueueTree copies tree's queues, reading each one's floor and ceiling once and
// refusing a resource type the cluster does not have.
func newQueueTree(types Types, tree *capacity.Tree) (*queueTree, error) {
	t := &queueTree{}
	var walk func(c *capacity.Queue, parent *queue) (*queue, error)
	walk = func(c *capacity.Queue, parent *queue) (*queue, error) {
		q := &queue{Name: c.Name, Path: c.Path, Parent: parent,
			Capacity: c.Capacity, AbsoluteCapacity: c.AbsoluteCapacity, AbsoluteMaximumCapacity: c.AbsoluteMaximumCapacity,
			CapacityResource: maps.Clone(c.CapacityResource), State: c.State,
			UserLimitFactor: c.UserLimitFactor, MinimumUserLimitPercent: c.MinimumUserLimitPercent,
			MaximumAMResourcePercent: c.MaximumAMResourcePercent, MaxRunningApps: c.MaxRunningApps,
			Labels: maps.Clone(c.Labels), DefaultNodeLabelExpression: c.DefaultNodeLabelExpression,
			FairSizeBasedWeight: c.FairSizeBasedWeight, DisablePreemption: c.DisablePreemption, FairPolicy: c.FairPolicy}
		if c.MinimumResource != nil {
			r, err := types.Vector(c.MinimumResource)
			if err != nil {
				return nil, fmt.Errorf("scheduler: queue %s minimum resource: %w", c.Path, err)
			}
			q.bounds.floor = &r
		}
		if c.MaximumResource != nil {
			r, err := types.Ceiling(c.MaximumResource)
			if err != nil {
				return nil, fmt.Errorf("scheduler: queue %s maximum resource: %w", c.Path, err)
			}
			q.bounds.ceiling = &r
		}
		t.all = append(t.all, q)
		if c.IsLeaf() {
			t.leaves = append(t.leaves, q)
		}
		for _, cc := range c.Children {
			child, err := walk(cc, q)
			if err != nil {
				return nil, err
			}
			q.Children = append(q.Children, child)
		}
		return q, nil
	}
	root, err := walk(tree.Root, nil)
	if err != nil {
		return nil, err
	}
	t.root = root
	return t, nil
}
