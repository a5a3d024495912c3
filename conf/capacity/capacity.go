// Package capacity reads capacity-scheduler.xml into a validated queue tree: the hierarchy,
// capacities that sum to 100 under each parent, maximum capacities, states, ACLs and the
// node-label keys. The scheduler turns leaf queues into quota groups; this package only
// checks and holds what the administrator wrote.
package capacity

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/bobbin-yarn/bobbin/conf"
)

// Prefix is the key prefix of every queue property.
const Prefix = "yarn.scheduler.capacity."

// Root is the name of the root queue.
const Root = "root"

// State is a queue's state.
type State string

// Queue states, as capacity-scheduler.xml writes them.
const (
	Running State = "RUNNING"
	Stopped State = "STOPPED"
)

// ACL is a Hadoop AccessControlList: "user1,user2 group1,group2", "*" for everyone,
// " " (or empty) for no one.
type ACL struct {
	All    bool
	Users  []string
	Groups []string
	Source string // as written
}

// ParseACL parses the AccessControlList syntax.
func ParseACL(s string) ACL {
	a := ACL{Source: s}
	if strings.TrimSpace(s) == "*" {
		a.All = true
		return a
	}
	s = strings.TrimLeft(s, "\t\r\n")
	users, groups, _ := strings.Cut(s, " ")
	a.Users = splitList(users)
	a.Groups = splitList(groups)
	return a
}

// Allows reports whether user (in groups) is on the list.
func (a ACL) Allows(user string, groups []string) bool {
	if a.All {
		return true
	}
	for _, u := range a.Users {
		if u == user {
			return true
		}
	}
	for _, g := range a.Groups {
		for _, ug := range groups {
			if g == ug {
				return true
			}
		}
	}
	return false
}

func (a ACL) String() string {
	if a.All {
		return "*"
	}
	return strings.Join(a.Users, ",") + " " + strings.Join(a.Groups, ",")
}

// LabelShare is a queue's share of one node-label partition.
type LabelShare struct {
	Capacity        float64 // percent of the parent's share of the label
	MaximumCapacity float64 // percent, 100 when unset
	Weight          float64 // the capacity written as a weight ("2w"), -1 when not
}

// Queue is one queue of the tree. Capacities are percentages of the parent, as written;
// the Absolute fields are fractions of the whole cluster (partition).
type Queue struct {
	Name     string
	Path     string // "root.a.b"
	Parent   *Queue
	Children []*Queue

	Capacity        float64
	MaximumCapacity float64
	// Weight is the capacity written as a weight (Hadoop 3.3+, "2w"): the queue's share
	// of its parent is its weight over its siblings' sum, which Capacity then holds as a
	// percentage. -1 when the capacity is not a weight.
	Weight float64
	// CapacityResource is set when capacity is written as an absolute resource,
	// "[memory=10240,vcores=12]" (resource name -> amount; memory in MB). Capacity is
	// then 0 and the scheduler derives the quota from the cluster's size.
	CapacityResource        map[string]int64
	AbsoluteCapacity        float64
	AbsoluteMaximumCapacity float64
	State                   State

	UserLimitFactor          float64
	MinimumUserLimitPercent  float64
	MaximumApplications      int
	MaximumAMResourcePercent float64
	// MaxRunningApps (3.3+'s max-parallel-apps, else max-parallel-apps for every queue;
	// the Fair Scheduler's maxRunningApps, as bobbin.max-running-apps) bounds the
	// applications of the queue and its descendants that run at once; the others are
	// accepted and wait. -1: no bound.
	MaxRunningApps int

	SubmitACL     ACL
	AdministerACL ACL

	// AccessibleNodeLabels lists the labels the queue may use ("*" = all); inherited from
	// the parent when unset. The default partition ("") is always accessible.
	AccessibleNodeLabels       []string
	Labels                     map[string]LabelShare
	DefaultNodeLabelExpression string

	// DefaultApplicationPriority is default-application-priority (3.x): the priority of
	// an application submitted to the leaf without one.
	DefaultApplicationPriority int32
	// MaxAppLifetime and DefaultAppLifetime are maximum- and default-application-lifetime
	// (3.x, seconds; 0 or less: none); see Lifetime.
	MaxAppLifetime, DefaultAppLifetime int64
	// OrderingPolicy is the leaf's ordering-policy: "" (unset), OrderingFIFO or
	// OrderingFair (class names are read as their short names).
	OrderingPolicy string
	// FairSizeBasedWeight: ordering-policy.fair.enable-size-based-weight.
	FairSizeBasedWeight bool
	// DisablePreemption: disable_preemption, inherited from the parent (root: false):
	// the queue's containers are never taken by preemption.
	DisablePreemption bool
	// FairPolicy is the Fair Scheduler's schedulingPolicy ("fair", "DRF", "FIFO").
	FairPolicy string
	// MaximumAllocationMB and MaximumAllocationVCores are the queue's
	// maximum-allocation-mb and -vcores (0: the cluster's; inherited from the parent).
	MaximumAllocationMB     int64
	MaximumAllocationVCores int64
	// MinimumResource and MaximumResource are absolute floors and ceilings (resource name
	// -> amount; nil: none), the Fair Scheduler's minResources and maxResources
	// (bobbin.minimum-resource, bobbin.maximum-resource).
	MinimumResource, MaximumResource map[string]int64
	// FairWeight is the Fair Scheduler's <weight> of a queue read from its allocation
	// file (0 for the Capacity Scheduler's queues).
	FairWeight float64
	// Priority is the queue's priority (3.x): reported; it orders nothing, as the
	// priority-utilization ordering that would read it is refused.
	Priority int32
}

// IsLeaf reports whether the queue has no children.
func (q *Queue) IsLeaf() bool { return len(q.Children) == 0 }

// Tree is a validated queue hierarchy.
type Tree struct {
	Root *Queue
	// byName holds every queue under its short name (leaf names are unique) and its path.
	byName map[string]*Queue
	// Source is the file the tree was read from, or "built-in default".
	Source string
	// Conf is the configuration the tree was parsed from (site files plus
	// capacity-scheduler.xml), for the scheduler's own per-queue keys.
	Conf *conf.Configuration
	// MaximumSystemApplications is yarn.scheduler.capacity.maximum-applications: the
	// unfinished applications the whole cluster accepts (default 10000).
	MaximumSystemApplications int
	// Mappings are queue-mappings in order; MappingsOverride lets them replace a queue
	// the submission names (queue-mappings-override.enable), not only "default".
	Mappings         []QueueMapping
	MappingsOverride bool
	// UserMaxRunningApps bounds each named user's running applications over the cluster,
	// and UserMaxRunningAppsDefault every other user's (-1: no bound); the Fair
	// Scheduler's <user><maxRunningApps> and userMaxAppsDefault.
	UserMaxRunningApps        map[string]int
	UserMaxRunningAppsDefault int
	// Placement, when set, places submissions instead of the queue mappings: the Fair
	// Scheduler's queuePlacementPolicy (Fair is true for a tree read from its file).
	Placement func(user, requested string, groups func() []string) (queue string, create bool, err error)
	Fair      bool
	// FairCreated are the queues the Fair Scheduler's placement policy created.
	FairCreated []string
}

// MaximumApplicationsPerUser is the unfinished applications one user may have in leaf q,
// as the Capacity Scheduler computes it: maximum-applications ×
// minimum-user-limit-percent/100 × user-limit-factor.
func (q *Queue) MaximumApplicationsPerUser() int {
	return int(float32(q.MaximumApplications) * float32(q.MinimumUserLimitPercent/100) * float32(q.UserLimitFactor))
}

// Queue finds a queue by short name or full path.
func (t *Tree) Queue(name string) (*Queue, bool) {
	q, ok := t.byName[name]
	return q, ok
}

// Queues returns every queue, depth first in configuration order.
func (t *Tree) Queues() []*Queue {
	var out []*Queue
	var walk func(*Queue)
	walk = func(q *Queue) {
		out = append(out, q)
		for _, c := range q.Children {
			walk(c)
		}
	}
	walk(t.Root)
	return out
}

// Leaves returns the leaf queues in configuration order.
func (t *Tree) Leaves() []*Queue {
	var out []*Queue
	for _, q := range t.Queues() {
		if q.IsLeaf() {
			out = append(out, q)
		}
	}
	return out
}

// DefaultXML is what Hadoop ships as capacity-scheduler.xml: one queue, "default", with
// the whole cluster. It applies when the configuration directory has no such file.
const DefaultXML = `<configuration>
  <property><name>yarn.scheduler.capacity.root.queues</name><value>default</value></property>
  <property><name>yarn.scheduler.capacity.root.default.capacity</name><value>100</value></property>
</configuration>`

// Load reads dir/capacity-scheduler.xml over base (the daemon's configuration, as Hadoop's
// CapacitySchedulerConfiguration does) and builds the tree. Without the file, the
// single-queue default applies.
func Load(base *conf.Configuration, dir string) (*Tree, error) {
	if UsesFairScheduler(base) {
		return LoadFair(base, dir, nil)
	}
	c := base.Clone()
	source := "built-in default"
	path := filepath.Join(dir, "capacity-scheduler.xml")
	if _, err := os.Stat(path); dir != "" && err == nil {
		if err := c.AddFile(path); err != nil {
			return nil, err
		}
		source = path
	} else if err := c.AddXML("built-in capacity-scheduler.xml", []byte(DefaultXML)); err != nil {
		return nil, err
	}
	t, err := Parse(c)
	if err != nil {
		return nil, err
	}
	t.Source = source
	return t, nil
}

// Parse builds and validates the tree from a configuration holding the
// yarn.scheduler.capacity.* keys. It returns every problem found, each naming its key.
func Parse(c *conf.Configuration) (*Tree, error) {
	p := &parser{c: c, t: &Tree{byName: map[string]*Queue{}, Conf: c}}
	p.t.MaximumSystemApplications = int(p.float(Prefix+"maximum-applications", 10000))
	p.userRunningBounds()
	if v, ok := p.lookup(Prefix + "application.fail-fast"); ok && strings.EqualFold(strings.TrimSpace(v), "true") {
		p.errorf(Prefix+"application.fail-fast", v, "not implemented: set it to false")
	}
	p.t.Root = p.queue(nil, Root, Root, 0)
	p.validate(p.t.Root)
	p.mappings()
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	return p.t, nil
}

type parser struct {
	c    *conf.Configuration
	t    *Tree
	errs []error
}

func (p *parser) fail(err error) { p.errs = append(p.errs, err) }

func (p *parser) errorf(key, value, format string, args ...any) {
	p.fail(&conf.ValueError{Source: p.c.Source(key), Key: key, Value: value, Reason: fmt.Sprintf(format, args...)})
}

// maxDepth bounds the hierarchy, so a configuration that names a queue inside itself
// cannot recurse without end.
const maxDepth = 64

func (p *parser) queue(parent *Queue, name, path string, depth int) *Queue {
	q := &Queue{Name: name, Path: path, Parent: parent, Labels: map[string]LabelShare{}, Weight: -1}
	pre := Prefix + path + "."
	if depth > maxDepth {
		p.errorf(pre+"queues", "", "queue hierarchy deeper than %d levels", maxDepth)
		return q
	}
	if prev, dup := p.t.byName[name]; dup {
		p.errorf(pre+"queues", name, "queue name %q is used twice (%s and %s); queue names must be unique", name, prev.Path, path)
	}
	p.t.byName[name] = q
	p.t.byName[path] = q

	if parent == nil {
		q.Capacity = 100
	} else if raw, _ := p.lookup(pre + "capacity"); strings.HasPrefix(strings.TrimSpace(raw), "[") {
		q.CapacityResource = p.absolute(pre+"capacity", raw)
	} else {
		q.Capacity, q.Weight = p.capacity(pre+"capacity", math.NaN())
	}
	q.MaximumCapacity = p.percent(pre+"maximum-capacity", 100)
	if q.MaximumCapacity == -1 { // Hadoop's "undefined"
		q.MaximumCapacity = 100
	}
	switch st := strings.ToUpper(p.str(pre+"state", string(Running))); st {
	case string(Running), string(Stopped):
		q.State = State(st)
	default:
		p.errorf(pre+"state", st, "state must be RUNNING or STOPPED")
	}
	p.queueExtras(q, parent, pre)
	q.UserLimitFactor = p.float(pre+"user-limit-factor", 1)
	if q.UserLimitFactor <= 0 {
		raw, _ := p.c.Raw(pre + "user-limit-factor")
		p.errorf(pre+"user-limit-factor", raw, "must be greater than 0")
	}
	q.MinimumUserLimitPercent = p.float(pre+"minimum-user-limit-percent", 100)
	q.MaximumAMResourcePercent = p.float(Prefix+"maximum-am-resource-percent", 0.1)
	q.MaximumAMResourcePercent = p.float(pre+"maximum-am-resource-percent", q.MaximumAMResourcePercent)
	q.MaximumApplications = int(p.float(pre+"maximum-applications", -1))
	q.MaxRunningApps = p.maxParallel(pre)

	defaultACL := " " // sub-queues inherit access through their parents
	if parent == nil {
		defaultACL = "*"
	}
	q.SubmitACL = ParseACL(p.str(pre+"acl_submit_applications", defaultACL))
	q.AdministerACL = ParseACL(p.str(pre+"acl_administer_queue", defaultACL))

	if v, ok := p.lookup(pre + "accessible-node-labels"); ok {
		q.AccessibleNodeLabels = splitList(v)
		if len(q.AccessibleNodeLabels) == 0 {
			q.AccessibleNodeLabels = []string{}
		}
	} else if parent != nil {
		q.AccessibleNodeLabels = parent.AccessibleNodeLabels
	} else {
		q.AccessibleNodeLabels = []string{"*"}
	}
	q.DefaultNodeLabelExpression = strings.TrimSpace(p.str(pre+"default-node-label-expression", ""))
	for _, label := range p.labelKeys(pre) {
		lp := pre + "accessible-node-labels." + label + "."
		share := LabelShare{MaximumCapacity: p.percent(lp+"maximum-capacity", 100)}
		share.Capacity, share.Weight = p.capacity(lp+"capacity", 0)
		if parent == nil {
			share.Capacity = 100
		}
		q.Labels[label] = share
	}

	children := splitList(p.str(pre+"queues", ""))
	if parent == nil && len(children) == 0 {
		p.errorf(pre+"queues", "", "the root queue has no child queues")
	}
	for _, child := range children {
		if !validQueueName(child) {
			p.errorf(pre+"queues", child, "queue name %q may not contain '.', spaces or be empty", child)
			continue
		}
		q.Children = append(q.Children, p.queue(q, child, path+"."+child, depth+1))
	}
	return q
}

// labelKeys finds the labels with per-queue keys under pre+"accessible-node-labels.".
func (p *parser) labelKeys(pre string) []string {
	set := map[string]bool{}
	lp := pre + "accessible-node-labels."
	for _, k := range p.c.Keys() {
		if !strings.HasPrefix(k, lp) {
			continue
		}
		rest := k[len(lp):]
		label, field, ok := strings.Cut(rest, ".")
		if ok && (field == "capacity" || field == "maximum-capacity") && label != "" {
			set[label] = true
		}
	}
	for _, l := range p.accessible(pre) {
		if l != "*" {
			set[l] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

func (p *parser) accessible(pre string) []string {
	v, _ := p.lookup(pre + "accessible-node-labels")
	return splitList(v)
}

func (p *parser) validate(q *Queue) {
	pre := Prefix + q.Path + "."
	if q.Parent != nil {
		if math.IsNaN(q.Capacity) {
			p.errorf(pre+"capacity", "", "every queue needs a capacity (percent of its parent, or [memory=..,vcores=..])")
			q.Capacity = 0
		}
		q.AbsoluteCapacity = q.Parent.AbsoluteCapacity * q.Capacity / 100
		q.AbsoluteMaximumCapacity = q.Parent.AbsoluteMaximumCapacity * q.MaximumCapacity / 100
	} else {
		q.AbsoluteCapacity, q.AbsoluteMaximumCapacity = 1, q.MaximumCapacity/100
	}
	if q.MaximumCapacity < q.Capacity {
		raw, _ := p.c.Raw(pre + "maximum-capacity")
		p.errorf(pre+"maximum-capacity", raw, "maximum-capacity %g is below capacity %g", q.MaximumCapacity, q.Capacity)
	}
	if q.IsLeaf() && q.MaximumApplications < 0 {
		// Unset on a leaf: the system-wide limit scaled by the queue's absolute capacity.
		q.MaximumApplications = int(p.float(Prefix+"maximum-applications", 10000) * q.AbsoluteCapacity)
	}
	for label, share := range q.Labels {
		if share.MaximumCapacity < share.Capacity {
			key := pre + "accessible-node-labels." + label + ".maximum-capacity"
			raw, _ := p.c.Raw(key)
			p.errorf(key, raw, "maximum-capacity %g for label %s is below its capacity %g", share.MaximumCapacity, label, share.Capacity)
		}
		if q.Parent != nil && !q.CanAccess(label) {
			key := pre + "accessible-node-labels." + label + ".capacity"
			raw, _ := p.c.Raw(key)
			p.errorf(key, raw, "queue %s sets a capacity for label %s it cannot access (accessible-node-labels = %q)", q.Path, label, strings.Join(q.AccessibleNodeLabels, ","))
		}
	}
	if len(q.Children) == 0 {
		return
	}
	p.resolveWeights(q)
	var sum float64
	absolute := 0
	for _, c := range q.Children {
		p.validate(c)
		sum += c.Capacity
		if c.CapacityResource != nil {
			absolute++
		}
	}
	if absolute > 0 {
		// Absolute capacities: all siblings must use them, and within a parent that has
		// one they must fit inside it.
		if absolute != len(q.Children) {
			p.errorf(pre+"queues", strings.Join(childNames(q), ","), "children of %s mix percentage and absolute-resource capacities", q.Path)
		} else if q.CapacityResource != nil {
			total := map[string]int64{}
			for _, c := range q.Children {
				for k, v := range c.CapacityResource {
					total[k] += v
				}
			}
			for k, v := range total {
				if v > q.CapacityResource[k] {
					p.errorf(pre+"capacity", fmt.Sprint(q.CapacityResource), "children of %s ask for %d %s, more than its %d", q.Path, v, k, q.CapacityResource[k])
				}
			}
		}
	} else if math.Abs(sum-100) > 1e-3 && !(sum == 0 && q.Capacity == 0) {
		var parts []string
		for _, c := range q.Children {
			parts = append(parts, fmt.Sprintf("%s=%g", c.Name, c.Capacity))
		}
		p.errorf(pre+"queues", strings.Join(childNames(q), ","), "capacities of the children of %s sum to %g, not 100 (%s)", q.Path, sum, strings.Join(parts, ", "))
	}
	// Per label: the children that can use a label the parent has must share all of it.
	for label := range q.Labels {
		var lsum float64
		var users int
		for _, c := range q.Children {
			if share, ok := c.Labels[label]; ok {
				lsum += share.Capacity
				users++
			}
		}
		if users > 0 && math.Abs(lsum-100) > 1e-3 && lsum != 0 {
			p.errorf(pre+"queues", strings.Join(childNames(q), ","), "capacities for label %s of the children of %s sum to %g, not 100", label, q.Path, lsum)
		}
	}
}

// CanAccess reports whether q may use node label label (its accessible-node-labels name it
// or hold *).
func (q *Queue) CanAccess(label string) bool {
	for _, l := range q.AccessibleNodeLabels {
		if l == "*" || l == label {
			return true
		}
	}
	return false
}

func childNames(q *Queue) []string {
	var out []string
	for _, c := range q.Children {
		out = append(out, c.Name)
	}
	return out
}

func (p *parser) lookup(key string) (string, bool) {
	v, ok, err := p.c.Lookup(key)
	if err != nil {
		p.fail(err)
		return "", false
	}
	return v, ok
}

func (p *parser) str(key, def string) string {
	if v, ok := p.lookup(key); ok {
		return v
	}
	return def
}

func (p *parser) float(key string, def float64) float64 {
	v, ok := p.lookup(key)
	if !ok || strings.TrimSpace(v) == "" {
		return def
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		p.errorf(key, v, "not a number")
		return def
	}
	return f
}

// capacity reads a capacity: a percentage, or (Hadoop 3.3+) a weight written "<w>w",
// returned as weight with the percentage left for resolveWeights (NaN). weight is -1
// for a percentage.
func (p *parser) capacity(key string, def float64) (percent, weight float64) {
	v, _ := p.lookup(key)
	if w, ok := strings.CutSuffix(strings.TrimSpace(v), "w"); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(w), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
			p.errorf(key, v, "a weight must be a number of at least 0 followed by w (2w)")
			return 0, -1
		}
		return math.NaN(), f
	}
	return p.percent(key, def), -1
}

// resolveWeights turns the weights of q's children (capacity "<w>w", and per label) into
// the percentages of q they stand for: each child's weight over the children's sum.
// Children either all use weights or none does, as in Apache's (default) legacy queue
// mode.
func (p *parser) resolveWeights(q *Queue) {
	pre := Prefix + q.Path + "."
	weighted, sum := 0, 0.0
	for _, c := range q.Children {
		if c.Weight >= 0 {
			weighted++
			sum += c.Weight
		}
	}
	if weighted > 0 && weighted != len(q.Children) {
		p.errorf(pre+"queues", strings.Join(childNames(q), ","), "children of %s mix weights (capacity <w>w) and other capacities; give all of them weights or none", q.Path)
	}
	for _, c := range q.Children {
		if c.Weight >= 0 {
			c.Capacity = 0
			if sum > 0 {
				c.Capacity = 100 * c.Weight / sum
			}
		}
	}
	for label := range q.Labels {
		weighted, sum := 0, 0.0
		users := 0
		for _, c := range q.Children {
			if share, ok := c.Labels[label]; ok {
				users++
				if share.Weight >= 0 {
					weighted++
					sum += share.Weight
				}
			}
		}
		if weighted > 0 && weighted != users {
			p.errorf(pre+"queues", strings.Join(childNames(q), ","), "children of %s mix weights and percentages for label %s; give all of them weights or none", q.Path, label)
		}
		for _, c := range q.Children {
			if share, ok := c.Labels[label]; ok && share.Weight >= 0 {
				share.Capacity = 0
				if sum > 0 {
					share.Capacity = 100 * share.Weight / sum
				}
				c.Labels[label] = share
			}
		}
	}
}

// percent reads a 0..100 percentage (-1 is accepted for maximum-capacity: "undefined").
func (p *parser) percent(key string, def float64) float64 {
	v, ok := p.lookup(key)
	if !ok || strings.TrimSpace(v) == "" {
		return def
	}
	f := p.float(key, def)
	if math.IsNaN(f) {
		return 0 // present but not a number: already reported
	}
	if f == -1 && strings.HasSuffix(key, "maximum-capacity") {
		return f
	}
	if f < 0 || f > 100 {
		p.errorf(key, v, "must be a percentage from 0 to 100")
		return def
	}
	return f
}

func validQueueName(n string) bool {
	return n != "" && !strings.ContainsAny(n, ". \t")
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}
