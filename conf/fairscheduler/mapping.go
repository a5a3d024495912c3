package fairscheduler

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// KeyPolicy is the per-queue key (after the queue's prefix) that carries a queue's
// schedulingPolicy, as the Fair Scheduler names it ("fair", "DRF", "FIFO"), to the
// queue tree for the REST view.
const KeyPolicy = "bobbin.fair.scheduling-policy"

// KeyMinimumResource and KeyMaximumResource are the per-queue keys (after the queue's
// prefix) that carry minResources and maxResources written as amounts, as
// "[memory=10240,vcores=12]": the group's floor and ceiling.
const (
	KeyMinimumResource = "bobbin.minimum-resource"
	KeyMaximumResource = "bobbin.maximum-resource"
)

// KeyWeight is the per-queue key (after the queue's prefix) that carries a queue's
// <weight>, which its capacity is computed from, for what clients are told of it.
const KeyWeight = "bobbin.fair.weight"

const prefix = "yarn.scheduler.capacity."

// CapacityKeys maps the allocations onto the Capacity Scheduler's keys (and Bobbin's) that
// run them as Bobbin's groups (docs/configuration.md, "Fair Scheduler"):
//
//   - each queue's capacity is its weight's share among its siblings;
//   - minResources and maxResources written as amounts are bobbin.minimum-resource and
//     bobbin.maximum-resource: the floor and ceiling of the queue's fair share, and the
//     ceiling of what it holds;
//   - maxResources (a share) is its maximum-capacity; maxAMShare its
//     maximum-am-resource-percent; maxRunningApps its bobbin.max-running-apps;
//   - schedulingPolicy fair, drf and fifo are bobbin.policy fair, drf and priority;
//   - aclSubmitApps and aclAdministerApps are the queue ACLs;
//   - users have no resource limit (user-limit-factor lets one fill the cluster), and
//     their maxRunningApps are bobbin.user.<name>.max-running-apps;
//   - fair-share preemption (yarn.scheduler.fair.preemption) is Bobbin's hysteresis
//     preemption, starved below fairSharePreemptionThreshold of the fair share.
//
// created lists queues the placement policy created at run time (full paths), which are
// leaves of weight 1 with the defaults, as the Fair Scheduler creates them.
func (a *Allocations) CapacityKeys(created []string, preemption bool) (map[string]string, error) {
	root := a.withCreated(created)
	keys := map[string]string{
		prefix + "maximum-applications":                 strconv.Itoa(math.MaxInt32),
		prefix + "bobbin.user-max-running-apps-default": limit(a.UserMaxAppsDefault),
		"bobbin.scheduler.preemption.enabled":           strconv.FormatBool(preemption),
		"bobbin.scheduler.preemption.starved-threshold": strconv.FormatFloat(max(a.FairShareThreshold, 0.001), 'g', -1, 64),
		prefix + "root.acl_submit_applications":         "*",
		prefix + "root.acl_administer_queue":            "*",
	}
	for user, n := range a.UserMaxApps {
		keys[prefix+"bobbin.user."+user+".max-running-apps"] = strconv.Itoa(n)
	}
	var errs []string
	var walk func(q *Queue, absCap, absMax float64)
	walk = func(q *Queue, absCap, absMax float64) {
		pre := prefix + q.Path + "."
		if q.SubmitACL != nil {
			keys[pre+"acl_submit_applications"] = *q.SubmitACL
		} else if q.Path != "root" {
			keys[pre+"acl_submit_applications"] = " " // inherited from the parent, as in both schedulers
		}
		if q.AdminACL != nil {
			keys[pre+"acl_administer_queue"] = *q.AdminACL
		} else if q.Path != "root" {
			keys[pre+"acl_administer_queue"] = " "
		}
		// A drf queue under a fair one is taken, as 2.7.3 takes it (3.1.1 logs an error
		// and leaves such a queue out); fifo is for leaves only in both.
		policy := effectivePolicy(q, a)
		if policy == "fifo" && len(q.Children) > 0 {
			errs = append(errs, fmt.Sprintf("queue %s: <schedulingPolicy> fifo is only for leaf queues", q.Path))
		}
		// As FairScheduler's REST view names it (SchedulingPolicy.getName).
		keys[pre+KeyPolicy] = map[string]string{"fair": "fair", "drf": "DRF", "fifo": "FIFO"}[policy]
		keys[pre+KeyWeight] = strconv.FormatFloat(q.Weight, 'g', -1, 64)
		n := q.MaxRunningApps
		if n < 0 && len(q.Children) == 0 && q.Path != "root" {
			n = a.QueueMaxAppsDefault
		}
		keys[pre+"bobbin.max-running-apps"] = limit(n)
		if q.Path != "root" {
			if q.MinResources != nil {
				keys[pre+KeyMinimumResource] = amounts(q.MinResources)
			}
			if q.MaxResources != nil {
				keys[pre+KeyMaximumResource] = amounts(q.MaxResources)
			}
		}
		if !math.IsNaN(q.FairSharePreemptionThreshold) && q.FairSharePreemptionThreshold != a.FairShareThreshold {
			errs = append(errs, fmt.Sprintf("queue %s: <fairSharePreemptionThreshold> %g differs from the default %g: Bobbin's starvation threshold is one for all queues",
				q.Path, q.FairSharePreemptionThreshold, a.FairShareThreshold))
		}
		if len(q.Children) == 0 {
			if q.Path == "root" {
				return
			}
			share := q.MaxAMShare
			if math.IsNaN(share) {
				share = a.QueueMaxAMShare
			}
			if share < 0 { // -1: no AM limit
				share = 1
			}
			keys[pre+"maximum-am-resource-percent"] = strconv.FormatFloat(min(share, 1), 'g', -1, 64)
			keys[pre+"bobbin.policy"] = map[string]string{"fair": "fair", "drf": "drf", "fifo": "priority"}[policy]
			// The Fair Scheduler has no user limit: one user may take what the queue may.
			keys[pre+"user-limit-factor"] = strconv.FormatFloat(math.Ceil(1/max(absCap, 1e-6)), 'f', 0, 64)
			return
		}
		var names []string
		var sum float64
		for _, c := range q.Children {
			names = append(names, c.Path[strings.LastIndexByte(c.Path, '.')+1:])
			sum += c.Weight
		}
		keys[pre+"queues"] = strings.Join(names, ",")
		left := 100.0
		for i, c := range q.Children {
			pct := math.Round(c.Weight/sum*100*1e6) / 1e6
			if i == len(q.Children)-1 {
				pct = math.Round(left*1e6) / 1e6 // the rounding's remainder, so they sum to 100
			}
			left -= pct
			cpre := prefix + c.Path + "."
			keys[cpre+"capacity"] = strconv.FormatFloat(pct, 'f', -1, 64)
			cAbs := absCap * pct / 100
			cMax := absMax
			if !math.IsNaN(c.MaxShare) {
				if c.MaxShare < cAbs-1e-9 {
					errs = append(errs, fmt.Sprintf("queue %s: <maxResources> %g%% is below its weight's share of the cluster, %g%%", c.Path, c.MaxShare*100, cAbs*100))
				}
				cMax = min(c.MaxShare, absMax)
				keys[cpre+"maximum-capacity"] = strconv.FormatFloat(min(100, cMax/absMax*100), 'f', -1, 64)
			}
			walk(c, cAbs, cMax)
		}
	}
	walk(root, 1, 1)
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s: %s", a.Source, strings.Join(errs, "; "))
	}
	return keys, nil
}

// amounts writes resource amounts as capacity-scheduler.xml writes absolute resources,
// "[memory=10240,vcores=12]", in name order.
func amounts(m map[string]int64) string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = k + "=" + strconv.FormatInt(m[k], 10)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// effectivePolicy is q's schedulingPolicy, else the file's default, else fair.
func effectivePolicy(q *Queue, a *Allocations) string {
	switch {
	case q.Policy != "":
		return q.Policy
	case a.DefaultPolicy != "":
		return a.DefaultPolicy
	}
	return "fair"
}

// limit writes a running-application bound (unset or unbounded: -1).
func limit(n int) string {
	if n < 0 || n >= math.MaxInt32 {
		return "-1"
	}
	return strconv.Itoa(n)
}

// withCreated is a copy of the queue tree with the created queues (and any parent they
// need) added as weight-1 leaves.
func (a *Allocations) withCreated(created []string) *Queue {
	root := copyQueue(a.Root)
	for _, path := range created {
		parts := strings.Split(path, ".")
		cur := root
		for i := 1; i < len(parts); i++ {
			p := strings.Join(parts[:i+1], ".")
			var next *Queue
			for _, c := range cur.Children {
				if c.Path == p {
					next = c
				}
			}
			if next == nil {
				next = newQueue(p)
				cur.Children = append(cur.Children, next)
				cur.Parent = true
			}
			cur = next
		}
	}
	return root
}

func copyQueue(q *Queue) *Queue {
	c := *q
	c.Children = make([]*Queue, len(q.Children))
	for i, k := range q.Children {
		c.Children[i] = copyQueue(k)
	}
	return &c
}

// Declared lists every queue path of the file (leaves and parents).
func (a *Allocations) Declared() map[string]bool {
	out := map[string]bool{}
	var walk func(q *Queue)
	walk = func(q *Queue) {
		out[q.Path] = true
		for _, c := range q.Children {
			walk(c)
		}
	}
	walk(a.Root)
	return out
}
