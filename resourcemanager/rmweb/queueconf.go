package rmweb

import (
	"math"
	"strconv"
	"strings"

	"github.com/bobbin-yarn/bobbin/conf/capacity"
)

// queueConf is what Hadoop 3.3+'s CapacitySchedulerQueueInfo (and CapacitySchedulerInfo,
// for the root) adds to a queue: its configuration as the scheduler reads it. Every
// figure comes from the queue's keys. Bobbin creates no queues at run time (auto-creation
// is refused at start), so every queue is static, none is eligible for auto-creation and
// the templates are empty.
type queueConf struct {
	QueuePath               string              `json:"queuePath"`
	Weight                  float64             `json:"weight"`
	NormalizedWeight        float64             `json:"normalizedWeight"`
	QueueCapacityVectorInfo *capacityVectorInfo `json:"queueCapacityVectorInfo,omitempty"` // the root's only
	MaxParallelApps         int                 `json:"maxParallelApps"`
	IsAbsoluteResource      bool                `json:"isAbsoluteResource"`
	MaximumAllocation       *resourceInfo       `json:"maximumAllocation"`
	QueueAcls               queueAcls           `json:"queueAcls"`
	QueuePriority           int32               `json:"queuePriority"`
	OrderingPolicyInfo      string              `json:"orderingPolicyInfo"`
	// Not the root's (CapacitySchedulerInfo has neither): nil there.
	AutoCreateChildQueueEnabled       *bool     `json:"autoCreateChildQueueEnabled,omitempty"`
	LeafQueueTemplate                 *struct{} `json:"leafQueueTemplate,omitempty"`
	Mode                              string    `json:"mode"`
	QueueType                         string    `json:"queueType"`
	CreationMethod                    string    `json:"creationMethod"`
	AutoCreationEligibility           string    `json:"autoCreationEligibility"`
	AutoQueueTemplateProperties       struct{}  `json:"autoQueueTemplateProperties"`
	AutoQueueParentTemplateProperties struct{}  `json:"autoQueueParentTemplateProperties"`
	AutoQueueLeafTemplateProperties   struct{}  `json:"autoQueueLeafTemplateProperties"`
}

// capacityVectorInfo is QueueCapacityVectorInfo: the capacity as configured, per
// resource type ("[memory-mb=3.0w,vcores=3.0w]").
type capacityVectorInfo struct {
	ConfiguredCapacityVector string                `json:"configuredCapacityVector"`
	CapacityVectorEntries    []capacityVectorEntry `json:"capacityVectorEntries"`
}

type capacityVectorEntry struct {
	ResourceName  string `json:"resourceName"`
	ResourceValue string `json:"resourceValue"`
}

type queueAcls struct {
	QueueACL []queueACL `json:"queueAcl"`
}

type queueACL struct {
	AccessType        string `json:"accessType"`
	AccessControlList string `json:"accessControlList"`
}

// javaFloat prints v as Java's Float.toString does ("3.0", "37.5", "1.0E7").
func javaFloat(v float64) string {
	f := float32(v)
	if a := math.Abs(float64(f)); a != 0 && (a < 1e-3 || a >= 1e7) {
		s := strconv.FormatFloat(float64(f), 'E', -1, 32)
		mant, exp, _ := strings.Cut(s, "E")
		if !strings.Contains(mant, ".") {
			mant += ".0"
		}
		sign, digits := "", strings.TrimPrefix(exp, "+")
		if strings.HasPrefix(digits, "-") {
			sign, digits = "-", digits[1:]
		}
		return mant + "E" + sign + strings.TrimLeft(digits, "0")
	}
	s := strconv.FormatFloat(float64(f), 'f', -1, 32)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// conf34 is q's queueConf. Its weight, normalized weight and (for the root) capacity
// vector are those of the default partition's entry, def.
func (b *treeBuilder) conf34(q *capacity.Queue, def partitionCapacities) queueConf {
	rm := b.s.rm
	c := queueConf{QueuePath: q.Path, MaxParallelApps: math.MaxInt32, QueuePriority: q.Priority,
		MaximumAllocation: resource(rm, rm.MaximumAllocationOf(q)), CreationMethod: "static", AutoCreationEligibility: "off",
		QueueType: "leaf", OrderingPolicyInfo: capacity.OrderingFIFO}
	if q.MaxRunningApps >= 0 {
		c.MaxParallelApps = q.MaxRunningApps
	}
	if !q.IsLeaf() {
		c.QueueType, c.OrderingPolicyInfo = "parent", "utilization"
	} else if q.OrderingPolicy != "" {
		c.OrderingPolicyInfo = q.OrderingPolicy
	}
	c.Weight, c.NormalizedWeight = def.Weight, def.NormalizedWeight
	if q.Parent == nil {
		c.QueueCapacityVectorInfo = def.QueueCapacityVectorInfo
	} else {
		c.AutoCreateChildQueueEnabled, c.LeafQueueTemplate = new(bool), &struct{}{}
	}
	switch {
	case q.CapacityResource != nil:
		c.Mode, c.IsAbsoluteResource = "absolute", true
	case c.Weight >= 0:
		c.Mode = "weight"
	default:
		c.Mode = "percentage"
	}
	// As CapacitySchedulerQueueInfo.getSortedQueueAclInfoList: the queue's own ACLs, by
	// access type. Application priority ACLs other than * are refused at start.
	c.QueueAcls.QueueACL = []queueACL{{"ADMINISTER_QUEUE", q.AdministerACL.String()}, {"APPLICATION_MAX_PRIORITY", "*"},
		{"SUBMIT_APP", q.SubmitACL.String()}}
	return c
}

// weights are q's weight in partition label (-1: its capacity is not a weight) and its
// share of its siblings' weights (0 when not a weight), as QueueCapacities reports them.
func weights(q *capacity.Queue, label string) (weight, normalized float64) {
	weightOf := func(c *capacity.Queue) float64 {
		if label == "" {
			return c.Weight
		}
		if s, ok := c.Labels[label]; ok {
			return s.Weight
		}
		return -1
	}
	weight = weightOf(q)
	if q.Parent == nil || weight < 0 {
		return -1, 0
	}
	sum := 0.0
	for _, s := range q.Parent.Children {
		if w := weightOf(s); w > 0 {
			sum += w
		}
	}
	if sum > 0 {
		normalized = weight / sum
	}
	return weight, normalized
}

// capacityVector is q's capacity in partition label as configured, for every resource
// type: a percentage ("37.5%"), a weight ("3.0w") or, for the default partition of a
// queue written in absolute resources, the amount of each type.
func (b *treeBuilder) capacityVector(q *capacity.Queue, label string) *capacityVectorInfo {
	value, suffix := 100.0, "%"
	if q.Parent != nil {
		share := capacity.LabelShare{Capacity: q.Capacity, Weight: q.Weight}
		if label != "" {
			share = q.Labels[label]
		}
		value = share.Capacity
		if share.Weight >= 0 {
			value, suffix = share.Weight, "w"
		}
	}
	v := &capacityVectorInfo{}
	var parts []string
	for _, t := range b.s.rm.Types().All() {
		text := javaFloat(value) + suffix
		if q.CapacityResource != nil && label == "" {
			text = javaFloat(float64(absoluteAmount(q.CapacityResource, t.Name)))
		}
		v.CapacityVectorEntries = append(v.CapacityVectorEntries, capacityVectorEntry{ResourceName: t.Name, ResourceValue: text})
		parts = append(parts, t.Name+"="+text)
	}
	v.ConfiguredCapacityVector = "[" + strings.Join(parts, ",") + "]"
	return v
}

// absoluteAmount is a resource type's amount in an absolute capacity, whose memory may
// be written "memory" or "memory-mb".
func absoluteAmount(r map[string]int64, name string) int64 {
	if v, ok := r[name]; ok {
		return v
	}
	if name == "memory-mb" {
		return r["memory"]
	}
	return 0
}
