package rmweb

import (
	"math"
	"net/http"
	"sort"

	"github.com/bobbin-yarn/bobbin/yarn/webapp"

	"github.com/bobbin-yarn/bobbin/conf/capacity"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmcore"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
)

// /ws/v1/cluster/scheduler: the Capacity Scheduler's queue tree as the Java RM reports it
// (CapacitySchedulerInfo, CapacitySchedulerQueueInfo, CapacitySchedulerLeafQueueInfo),
// each leaf with Bobbin's addition: its quota group (quota, usage, priority value,
// preemption state).

type schedulerInfo struct {
	Type         string         `json:"type"`
	Capacity     float64        `json:"capacity"`
	UsedCapacity float64        `json:"usedCapacity"`
	MaxCapacity  float64        `json:"maxCapacity"`
	QueueName    string         `json:"queueName"`
	Queues       *queueList     `json:"queues"`
	Capacities   *capacitiesDAO `json:"capacities"`
	// Health is 3.x's CapacitySchedulerHealthInfo: what the scheduler did last.
	Health *schedulerHealthInfo `json:"health,omitempty"`
	queueConf
}

// schedulerHealthInfo is CapacitySchedulerHealthInfo, in 3.4's shape (operationsInfo a
// list naming each operation; 3.1.1 wrote it as a map).
type schedulerHealthInfo struct {
	LastRun        int64           `json:"lastrun"`
	OperationsInfo []operationInfo `json:"operationsInfo"`
	LastRunDetails []lastRunDetail `json:"lastRunDetails"`
}

type operationInfo struct {
	Operation   string `json:"operation"`
	NodeID      string `json:"nodeId"`
	ContainerID string `json:"containerId"`
	Queue       string `json:"queue"`
}

type lastRunDetail struct {
	Operation string        `json:"operation"`
	Count     int64         `json:"count"`
	Resources *resourceInfo `json:"resources"`
}

// healthInfo is the scheduler's health as the REST API gives it ("N/A" where an
// operation has not happened, as Java writes it).
func (s *rest) healthInfo() *schedulerHealthInfo {
	h := s.rm.SchedulerHealth()
	na := func(v string) string {
		if v == "" {
			return "N/A"
		}
		return v
	}
	op := func(name string, o rmcore.HealthOp) operationInfo {
		return operationInfo{Operation: name, NodeID: na(o.Node), ContainerID: na(o.Container), Queue: na(o.Queue)}
	}
	info := &schedulerHealthInfo{OperationsInfo: []operationInfo{op("last-allocation", h.LastAllocation), op("last-release", h.LastRelease),
		op("last-preemption", h.LastPreemption), op("last-reservation", h.LastReservation)},
		LastRunDetails: []lastRunDetail{{Operation: "releases", Count: h.Releases, Resources: resource(s.rm, h.Released)},
			{Operation: "allocations", Count: h.Allocations, Resources: resource(s.rm, h.Allocated)},
			{Operation: "reservations", Count: 0, Resources: resource(s.rm, scheduler.Resource{})}}}
	if !h.LastRun.IsZero() {
		info.LastRun = h.LastRun.UnixMilli()
	}
	return info
}

type queueList struct {
	Queue []*queueInfo `json:"queue,omitempty"`
}

type capacitiesDAO struct {
	QueueCapacitiesByPartition []partitionCapacities `json:"queueCapacitiesByPartition"`
}

type partitionCapacities struct {
	PartitionName        string  `json:"partitionName"`
	Capacity             float64 `json:"capacity"`
	UsedCapacity         float64 `json:"usedCapacity"`
	MaxCapacity          float64 `json:"maxCapacity"`
	AbsoluteCapacity     float64 `json:"absoluteCapacity"`
	AbsoluteUsedCapacity float64 `json:"absoluteUsedCapacity"`
	AbsoluteMaxCapacity  float64 `json:"absoluteMaxCapacity"`
	MaxAMLimitPercentage float64 `json:"maxAMLimitPercentage"`
	// 3.3+: the capacity as configured, and the weight and its share of the siblings'.
	QueueCapacityVectorInfo *capacityVectorInfo `json:"queueCapacityVectorInfo"`
	Weight                  float64             `json:"weight"`
	NormalizedWeight        float64             `json:"normalizedWeight"`
	ConfiguredMinResource   *resourceInfo       `json:"configuredMinResource"`
	ConfiguredMaxResource   *resourceInfo       `json:"configuredMaxResource"`
	EffectiveMinResource    *resourceInfo       `json:"effectiveMinResource"`
	EffectiveMaxResource    *resourceInfo       `json:"effectiveMaxResource"`
}

// queueInfo is a parent queue's CapacitySchedulerQueueInfo; a leaf adds the type and
// the fields after MaxEffectiveCapacity (pointers, left out for parents).
type queueInfo struct {
	Type                  string         `json:"type,omitempty"`
	Capacity              float64        `json:"capacity"`
	UsedCapacity          float64        `json:"usedCapacity"`
	MaxCapacity           float64        `json:"maxCapacity"`
	AbsoluteCapacity      float64        `json:"absoluteCapacity"`
	AbsoluteMaxCapacity   float64        `json:"absoluteMaxCapacity"`
	AbsoluteUsedCapacity  float64        `json:"absoluteUsedCapacity"`
	NumApplications       int            `json:"numApplications"`
	QueueName             string         `json:"queueName"`
	State                 string         `json:"state"`
	Queues                *queueList     `json:"queues,omitempty"`
	ResourcesUsed         *resourceInfo  `json:"resourcesUsed"`
	HideReservationQueues bool           `json:"hideReservationQueues"`
	NodeLabels            []string       `json:"nodeLabels,omitempty"`
	AllocatedContainers   int            `json:"allocatedContainers"`
	ReservedContainers    int            `json:"reservedContainers"`
	PendingContainers     int            `json:"pendingContainers"`
	Capacities            *capacitiesDAO `json:"capacities"`
	Resources             *appResources  `json:"resources"`
	MinEffectiveCapacity  *resourceInfo  `json:"minEffectiveCapacity"`
	MaxEffectiveCapacity  *resourceInfo  `json:"maxEffectiveCapacity"`

	NumActiveApplications        *int          `json:"numActiveApplications,omitempty"`
	NumPendingApplications       *int          `json:"numPendingApplications,omitempty"`
	NumContainers                *int          `json:"numContainers,omitempty"`
	MaxApplications              *int          `json:"maxApplications,omitempty"`
	MaxApplicationsPerUser       *int          `json:"maxApplicationsPerUser,omitempty"`
	UserLimit                    *float64      `json:"userLimit,omitempty"`
	Users                        *userList     `json:"users,omitempty"`
	UserLimitFactor              *float64      `json:"userLimitFactor,omitempty"`
	AMResourceLimit              *resourceInfo `json:"AMResourceLimit,omitempty"`
	UsedAMResource               *resourceInfo `json:"usedAMResource,omitempty"`
	UserAMResourceLimit          *resourceInfo `json:"userAMResourceLimit,omitempty"`
	PreemptionDisabled           *bool         `json:"preemptionDisabled,omitempty"`
	IntraQueuePreemptionDisabled *bool         `json:"intraQueuePreemptionDisabled,omitempty"`
	DefaultNodeLabelExpression   *string       `json:"defaultNodeLabelExpression,omitempty"`
	DefaultPriority              *int          `json:"defaultPriority,omitempty"`
	IsAutoCreatedLeafQueue       *bool         `json:"isAutoCreatedLeafQueue,omitempty"`
	// 3.x: maximum-am-resource-percent as configured (a fraction), and the lifetimes in
	// seconds (-1: none).
	ConfiguredMaxAMResourceLimit *float64 `json:"configuredMaxAMResourceLimit,omitempty"`
	MaxApplicationLifetime       *int64   `json:"maxApplicationLifetime,omitempty"`
	DefaultApplicationLifetime   *int64   `json:"defaultApplicationLifetime,omitempty"`
	queueConf
	// QuotaGroup is Bobbin's addition: the leaf as the two-level group scheduler sees it.
	QuotaGroup *quotaGroup `json:"quotaGroup,omitempty"`
}

type userList struct {
	User []userInfo `json:"user,omitempty"`
}

type userInfo struct {
	Username               string        `json:"username"`
	ResourcesUsed          *resourceInfo `json:"resourcesUsed"`
	NumPendingApplications int           `json:"numPendingApplications"`
	NumActiveApplications  int           `json:"numActiveApplications"`
	AMResourceUsed         *resourceInfo `json:"AMResourceUsed"`
	UserResourceLimit      *resourceInfo `json:"userResourceLimit"`
	Resources              *appResources `json:"resources"`
	UserWeight             float64       `json:"userWeight"`
	IsActive               bool          `json:"isActive"`
}

// quotaGroup is a leaf queue as a quota group: its quota share and usage per partition,
// its priority value (share over quota; the smallest is served first, above 1 it is over
// its quota), and its preemption state.
type quotaGroup struct {
	Partitions       []groupPartition `json:"partitions"`
	Policy           string           `json:"policy"`
	PreemptionPolicy string           `json:"preemptionPolicy"`
	Preemption       bool             `json:"preemptionEnabled"`
	LastPreemptedAt  int64            `json:"lastPreemptedAt"` // ms; 0: never
}

type groupPartition struct {
	PartitionName string        `json:"partitionName"`
	QuotaShare    float64       `json:"quotaShare"` // percent of the partition
	Used          *resourceInfo `json:"used"`
	PriorityValue float64       `json:"priorityValue"`
}

// pct rounds a percentage as Java floats print it, and keeps JSON valid.
func pct(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return math.Round(v*1e4) / 1e4
}

func (s *rest) scheduler(w http.ResponseWriter, r *http.Request) {
	b := s.treeBuilder()
	var info any
	if capacity.UsesFairScheduler(s.rm.Conf()) {
		info = b.fairInfo(s.rm.Queues().Root)
	} else {
		info = b.schedulerInfo()
	}
	webapp.Write(w, r, http.StatusOK, map[string]any{"scheduler": map[string]any{"schedulerInfo": info}})
}

// schedulerInfo is the capacity scheduler's tree as /scheduler reports it.
func (s *rest) schedulerInfo() schedulerInfo { return s.treeBuilder().schedulerInfo() }

// treeBuilder gathers what the views of the queue tree count: applications by queue and
// user, containers by queue, and the engine's groups.
func (s *rest) treeBuilder() *treeBuilder {
	rm := s.rm
	st := rm.SchedulerStats()
	groups := rm.GroupStats()
	apps := map[string][2]int{} // queue -> active, pending
	byUser := map[string]map[string][2]int{}
	live := map[records.ApplicationID]bool{}
	queueOf := map[records.ApplicationID]string{}
	rm.EachApp(func(a *rmstate.App) { // counts only: no report is built
		i := -1
		switch a.State() {
		case yarnpb.YarnApplicationStateProto_RUNNING:
			i = 0
		case yarnpb.YarnApplicationStateProto_ACCEPTED, yarnpb.YarnApplicationStateProto_SUBMITTED, yarnpb.YarnApplicationStateProto_NEW,
			yarnpb.YarnApplicationStateProto_NEW_SAVING:
			i = 1
		}
		if i < 0 {
			return
		}
		live[a.ID], queueOf[a.ID] = true, a.Queue
		c := apps[a.Queue]
		c[i]++
		apps[a.Queue] = c
		if byUser[a.Queue] == nil {
			byUser[a.Queue] = map[string][2]int{}
		}
		u := byUser[a.Queue][a.User]
		u[i]++
		byUser[a.Queue][a.User] = u
	})
	b := &treeBuilder{s: s, total: st.Partitions[""], partitions: st.Partitions, groups: groups, apps: apps, byUser: byUser,
		preemption: rm.PreemptionEnabled(), containers: map[string]int{}}
	for id, u := range rm.LiveUsage(live) {
		b.containers[queueOf[id]] += int(u.Containers)
	}
	return b
}

func (b *treeBuilder) schedulerInfo() schedulerInfo {
	root := b.s.rm.Queues().Root
	used := b.used(root)
	caps := b.capacities(root, used)
	info := schedulerInfo{Type: "capacityScheduler", Capacity: 100, MaxCapacity: 100, QueueName: root.Name,
		UsedCapacity: pct(share(used, b.total) * 100), Queues: &queueList{}, Capacities: caps, queueConf: b.conf34(root, caps.QueueCapacitiesByPartition[0]),
		Health: b.s.healthInfo()}
	for _, c := range root.Children {
		info.Queues.Queue = append(info.Queues.Queue, b.queue(c))
	}
	return info
}

type treeBuilder struct {
	s          *rest
	total      scheduler.Resource            // the default partition's
	partitions map[string]scheduler.Resource // every partition's, by label
	groups     map[string]scheduler.GroupStats
	apps       map[string][2]int
	byUser     map[string]map[string][2]int
	preemption bool
	containers map[string]int
}

// share is a resource's memory share of a total (the Capacity Scheduler's default
// calculator measures by memory).
func share(v, total scheduler.Resource) float64 {
	if total[scheduler.Memory] <= 0 {
		return 0
	}
	return float64(v[scheduler.Memory]) / float64(total[scheduler.Memory])
}

// pending sums what the outstanding asks of the leaves under q ask for.
func (b *treeBuilder) pending(q *capacity.Queue) scheduler.Resource {
	if q.IsLeaf() {
		return b.groups[q.Name].PendingResource
	}
	var sum scheduler.Resource
	for _, c := range q.Children {
		sum = sum.Add(b.pending(c))
	}
	return sum
}

// used sums what the leaves under q hold in the default partition.
func (b *treeBuilder) used(q *capacity.Queue) scheduler.Resource {
	return b.usedIn(q, "")
}

// usedIn sums what the leaves under q hold in partition label.
func (b *treeBuilder) usedIn(q *capacity.Queue, label string) scheduler.Resource {
	if q.IsLeaf() {
		return b.groups[q.Name].Used[label]
	}
	var sum scheduler.Resource
	for _, c := range q.Children {
		sum = sum.Add(b.usedIn(c, label))
	}
	return sum
}

func (b *treeBuilder) scaled(frac float64) scheduler.Resource { return b.total.Scaled(frac) }

func (b *treeBuilder) capacities(q *capacity.Queue, used scheduler.Resource) *capacitiesDAO {
	rm := b.s.rm
	// capacity.Queue keeps capacities in percent of the parent and absolute ones as
	// fractions of the cluster; the Java RM reports every one in percent.
	absUsed := share(used, b.total) * 100
	capOf, maxOf, absCap, absMax := q.Capacity, q.MaximumCapacity, q.AbsoluteCapacity*100, q.AbsoluteMaximumCapacity*100
	usedCap := 0.0
	if absCap > 0 {
		usedCap = absUsed / absCap * 100
	}
	if q.Parent == nil {
		capOf, maxOf, absCap, absMax = 100, 100, 100, 100
	}
	weight, normalized := weights(q, "")
	if weight >= 0 {
		capOf = 0 // the Java RM's capacity of a queue written as a weight
	}
	zero := resource(rm, scheduler.Resource{})
	out := &capacitiesDAO{QueueCapacitiesByPartition: []partitionCapacities{{PartitionName: "",
		Capacity: pct(capOf), UsedCapacity: pct(usedCap), MaxCapacity: pct(maxOf), AbsoluteCapacity: pct(absCap),
		AbsoluteUsedCapacity: pct(absUsed), AbsoluteMaxCapacity: pct(absMax), MaxAMLimitPercentage: amLimitPercent(q),
		QueueCapacityVectorInfo: b.capacityVector(q, ""), Weight: weight, NormalizedWeight: pct(normalized),
		ConfiguredMinResource: zero, ConfiguredMaxResource: zero,
		EffectiveMinResource: resource(rm, b.scaled(absCap/100)), EffectiveMaxResource: resource(rm, b.scaled(absMax/100))}}}
	labels := make([]string, 0, len(q.Labels))
	for l := range q.Labels {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	for _, l := range labels {
		out.QueueCapacitiesByPartition = append(out.QueueCapacitiesByPartition, b.labelCapacities(q, l))
	}
	return out
}

// lifetimeOrNone is an application lifetime as the Java RM reports it: -1 for none (0 or
// less).
func lifetimeOrNone(seconds int64) int64 {
	if seconds <= 0 {
		return -1
	}
	return seconds
}

// amLimitPercent is maxAMLimitPercentage: a leaf's maximum-am-resource-percent; a parent
// has none (0), as the Java RM's parent queues report.
func amLimitPercent(q *capacity.Queue) float64 {
	if !q.IsLeaf() {
		return 0
	}
	return pct(q.MaximumAMResourcePercent * 100)
}

// labelCapacities is q's entry for node label l: its accessible-node-labels.<l>.capacity
// and .maximum-capacity, made absolute down from the root as the engine's quota is, and
// what its leaves hold on the label's nodes.
func (b *treeBuilder) labelCapacities(q *capacity.Queue, l string) partitionCapacities {
	rm := b.s.rm
	abs, absMax := 1.0, 1.0
	for cur := q; cur.Parent != nil; cur = cur.Parent {
		share := cur.Labels[l]
		abs, absMax = abs*share.Capacity/100, absMax*share.MaximumCapacity/100
	}
	capOf, maxOf := q.Labels[l].Capacity, q.Labels[l].MaximumCapacity
	if q.Parent == nil {
		capOf, maxOf = 100, 100
	}
	total := b.partitions[l]
	absUsed := share(b.usedIn(q, l), total) * 100
	usedCap := 0.0
	if abs > 0 {
		usedCap = absUsed / (abs * 100) * 100
	}
	scaled := func(frac float64) *resourceInfo {
		var v scheduler.Resource
		for i := range v {
			v[i] = int64(float64(total[i]) * frac)
		}
		return resource(rm, v)
	}
	weight, normalized := weights(q, l)
	if weight >= 0 {
		capOf = 0
	}
	zero := resource(rm, scheduler.Resource{})
	return partitionCapacities{PartitionName: l, Capacity: pct(capOf), UsedCapacity: pct(usedCap), MaxCapacity: pct(maxOf),
		AbsoluteCapacity: pct(abs * 100), AbsoluteUsedCapacity: pct(absUsed), AbsoluteMaxCapacity: pct(absMax * 100),
		MaxAMLimitPercentage: amLimitPercent(q), QueueCapacityVectorInfo: b.capacityVector(q, l),
		Weight: weight, NormalizedWeight: pct(normalized), ConfiguredMinResource: zero, ConfiguredMaxResource: zero,
		EffectiveMinResource: scaled(abs), EffectiveMaxResource: scaled(absMax)}
}

func (b *treeBuilder) queue(q *capacity.Queue) *queueInfo {
	rm := b.s.rm
	used := b.used(q)
	caps := b.capacities(q, used)
	pc := caps.QueueCapacitiesByPartition[0]
	state := "RUNNING"
	if q.State == capacity.Stopped {
		state = "STOPPED"
	}
	qi := &queueInfo{Capacity: pc.Capacity, UsedCapacity: pc.UsedCapacity, MaxCapacity: pc.MaxCapacity, AbsoluteCapacity: pc.AbsoluteCapacity,
		AbsoluteMaxCapacity: pc.AbsoluteMaxCapacity, AbsoluteUsedCapacity: pc.AbsoluteUsedCapacity, QueueName: q.Name, State: state,
		ResourcesUsed: resource(rm, used), NodeLabels: q.AccessibleNodeLabels, Capacities: caps,
		MinEffectiveCapacity: pc.EffectiveMinResource, MaxEffectiveCapacity: pc.EffectiveMaxResource, queueConf: b.conf34(q, pc)}
	zero := resource(rm, scheduler.Resource{})
	if !q.IsLeaf() {
		qi.Queues = &queueList{}
		for _, c := range q.Children {
			ci := b.queue(c)
			qi.Queues.Queue = append(qi.Queues.Queue, ci)
			qi.NumApplications += ci.NumApplications
			qi.AllocatedContainers += ci.AllocatedContainers
			qi.PendingContainers += ci.PendingContainers
		}
		qi.Resources = &appResources{ResourceUsagesByPartition: []partitionUsage{{Used: resource(rm, used), Reserved: zero, Pending: resource(rm, b.pending(q)),
			AMUsed: zero, AMLimit: zero, UserAMLimit: zero}}}
		return qi
	}
	g := b.groups[q.Name]
	counts := b.apps[q.Name]
	active, pendingApps := counts[0], counts[1]
	qi.Type = "capacitySchedulerLeafQueueInfo"
	qi.NumApplications = active + pendingApps
	containers := b.containers[q.Name]
	qi.AllocatedContainers, qi.PendingContainers = containers, g.Pending
	amLimit := b.scaled(q.AbsoluteCapacity * q.MaximumAMResourcePercent)
	userLimitPct := q.MinimumUserLimitPercent
	// The engine's per-user AM limit: the queue's times max(minimum-user-limit-percent,
	// 1/active users) times user-limit-factor.
	userShare := max(userLimitPct/100, 1/float64(max(1, g.ActiveUsers)))
	userAMLimit := b.scaled(q.AbsoluteCapacity * q.MaximumAMResourcePercent * userShare * q.UserLimitFactor)
	qi.Resources = &appResources{ResourceUsagesByPartition: []partitionUsage{{Used: resource(rm, used), Reserved: zero, Pending: resource(rm, b.pending(q)),
		AMUsed: resource(rm, g.AMUsed), AMLimit: resource(rm, amLimit), UserAMLimit: resource(rm, userAMLimit)}}}
	maxApps := q.MaximumApplications
	perUser := int(float64(maxApps) * userLimitPct / 100 * q.UserLimitFactor)
	users := &userList{}
	names := make([]string, 0, len(b.byUser[q.Name]))
	for u := range b.byUser[q.Name] {
		names = append(names, u)
	}
	sort.Strings(names)
	userLimit := g.UserLimit // the engine's, as it stands now
	for _, u := range names {
		c := b.byUser[q.Name][u]
		users.User = append(users.User, userInfo{Username: u, ResourcesUsed: resource(rm, g.UserUsed[u]), NumActiveApplications: c[0],
			NumPendingApplications: c[1], AMResourceUsed: resource(rm, g.UserAMUsed[u]), UserResourceLimit: resource(rm, userLimit), UserWeight: 1, IsActive: c[0] > 0,
			Resources: &appResources{ResourceUsagesByPartition: []partitionUsage{{Used: resource(rm, g.UserUsed[u]), Reserved: zero, Pending: zero,
				AMUsed: resource(rm, g.UserAMUsed[u]), AMLimit: resource(rm, userAMLimit), UserAMLimit: resource(rm, userAMLimit)}}}})
	}
	t := true
	dp, notAuto := int(q.DefaultApplicationPriority), false
	preemptionDisabled := !b.preemption || q.DisablePreemption
	qi.NumActiveApplications, qi.NumPendingApplications, qi.NumContainers = &active, &pendingApps, &containers
	qi.MaxApplications, qi.MaxApplicationsPerUser, qi.UserLimit, qi.Users = &maxApps, &perUser, &userLimitPct, users
	qi.UserLimitFactor, qi.AMResourceLimit, qi.UsedAMResource = &q.UserLimitFactor, resource(rm, amLimit), resource(rm, g.AMUsed)
	qi.UserAMResourceLimit, qi.PreemptionDisabled, qi.IntraQueuePreemptionDisabled = resource(rm, userAMLimit), &preemptionDisabled, &t
	qi.DefaultNodeLabelExpression, qi.DefaultPriority, qi.IsAutoCreatedLeafQueue = &q.DefaultNodeLabelExpression, &dp, &notAuto
	amPct, maxLife, defLife := q.MaximumAMResourcePercent, lifetimeOrNone(q.MaxAppLifetime), lifetimeOrNone(q.DefaultAppLifetime)
	qi.ConfiguredMaxAMResourceLimit, qi.MaxApplicationLifetime, qi.DefaultApplicationLifetime = &amPct, &maxLife, &defLife
	qg := &quotaGroup{Policy: g.Policy, PreemptionPolicy: g.PreemptionPolicy, Preemption: b.preemption}
	if !g.PreemptedAt.IsZero() {
		qg.LastPreemptedAt = g.PreemptedAt.UnixMilli()
	}
	parts := make([]string, 0, len(g.Quota))
	for p := range g.Quota {
		parts = append(parts, p)
	}
	sort.Strings(parts)
	for _, p := range parts {
		qg.Partitions = append(qg.Partitions, groupPartition{PartitionName: p, QuotaShare: pct(g.Quota[p] * 100), Used: resource(rm, g.Used[p]),
			PriorityValue: pct(g.Value[p])})
	}
	qi.QuotaGroup = qg
	return qi
}
