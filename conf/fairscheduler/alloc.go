// Package fairscheduler reads the Fair Scheduler's allocation file (fair-scheduler.xml,
// yarn.scheduler.fair.allocation.file) as the Java RM's AllocationFileLoaderService does,
// and maps it onto the Capacity Scheduler's keys that Bobbin's group scheduler runs:
// weights become capacities, maxRunningApps and the user limits Bobbin keys, the queue
// placement policy a placement of its own (Place). What it cannot honour it refuses, naming
// the element.
package fairscheduler

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/beevik/etree"
)

// Class is the scheduler class that selects the allocation file.
const Class = "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler"

// Keys of yarn-site.xml the Fair Scheduler reads.
const (
	KeyAllocationFile    = "yarn.scheduler.fair.allocation.file"
	KeyPreemption        = "yarn.scheduler.fair.preemption"
	KeyUserAsDefault     = "yarn.scheduler.fair.user-as-default-queue"
	KeyAllowUndeclared   = "yarn.scheduler.fair.allow-undeclared-pools"
	DefaultAllocationXML = "fair-scheduler.xml"
)

// Queue is one queue of the file. Unset numbers are -1 (NaN for fractions).
type Queue struct {
	Path           string // "root.a.b"
	Parent         bool   // type="parent" or has child queues
	Weight         float64
	MaxRunningApps int
	MaxAMShare     float64
	MaxShare       float64 // maxResources as a fraction of the cluster (NaN: unset)
	// MinResources and MaxResources are minResources and maxResources written as amounts
	// (resource name -> amount, memory in MB; nil: unset).
	MinResources, MaxResources map[string]int64
	Policy                     string // fair, drf, fifo ("" : the default)
	SubmitACL                  *string
	AdminACL                   *string
	// FairSharePreemptionThreshold is the share of its fair share below which the queue
	// is starved (NaN: the default).
	FairSharePreemptionThreshold float64
	Children                     []*Queue
}

// newQueue is a queue at path with every setting at its default (weight 1, the rest unset).
func newQueue(path string) *Queue {
	return &Queue{Path: path, Weight: 1, MaxRunningApps: -1, MaxAMShare: math.NaN(), MaxShare: math.NaN(), FairSharePreemptionThreshold: math.NaN()}
}

// Allocations is a parsed allocation file.
type Allocations struct {
	Source              string
	Root                *Queue
	UserMaxApps         map[string]int
	UserMaxAppsDefault  int
	QueueMaxAppsDefault int
	QueueMaxAMShare     float64 // queueMaxAMShareDefault (0.5)
	DefaultPolicy       string
	FairShareThreshold  float64 // defaultFairSharePreemptionThreshold (0.5)
	// Placement is the queuePlacementPolicy (nil: the default built from yarn-site.xml).
	Placement []Rule
}

// Load reads the allocation file at path.
func Load(path string) (*Allocations, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("fair scheduler allocation file: %w", err)
	}
	return Parse(path, b)
}

// Parse reads an allocation file's bytes; source names it in errors.
func Parse(source string, b []byte) (*Allocations, error) {
	doc := etree.NewDocument()
	if err := doc.ReadFromBytes(b); err != nil {
		return nil, fmt.Errorf("%s: bad allocation file: %w", source, err)
	}
	top := doc.Root()
	if top == nil || top.Tag != "allocations" {
		return nil, fmt.Errorf("%s: bad fair scheduler config file: top-level element not <allocations>", source)
	}
	p := &parser{source: source}
	a := &Allocations{Source: source, UserMaxApps: map[string]int{}, UserMaxAppsDefault: math.MaxInt32, QueueMaxAppsDefault: math.MaxInt32,
		QueueMaxAMShare: 0.5, DefaultPolicy: "fair", FairShareThreshold: 0.5}
	a.Root = newQueue("root")
	a.Root.Parent = true
	for _, el := range top.ChildElements() {
		switch el.Tag {
		case "queue", "pool":
			name := el.SelectAttrValue("name", "")
			if name == "root" {
				p.queueBody(el, a.Root)
				continue
			}
			p.queue(el, a.Root)
		case "user":
			name := el.SelectAttrValue("name", "")
			for _, c := range el.ChildElements() {
				if c.Tag == "maxRunningApps" {
					a.UserMaxApps[name] = p.integer(c)
				}
			}
		case "userMaxAppsDefault":
			a.UserMaxAppsDefault = p.integer(el)
		case "queueMaxAppsDefault":
			a.QueueMaxAppsDefault = p.integer(el)
		case "queueMaxAMShareDefault":
			a.QueueMaxAMShare = p.amShare(el)
		case "defaultQueueSchedulingPolicy", "defaultQueueSchedulingMode":
			a.DefaultPolicy = p.policy(el)
		case "defaultFairSharePreemptionThreshold":
			a.FairShareThreshold = p.fraction(el)
		case "defaultFairSharePreemptionTimeout", "fairSharePreemptionTimeout":
			p.seconds(el) // Bobbin's hysteresis preemption acts without the wait (docs)
		case "defaultMinSharePreemptionTimeout":
			p.seconds(el)
		case "queuePlacementPolicy":
			a.Placement = p.rules(el)
		case "queueMaxResourcesDefault", "reservation-agent", "reservation-policy", "reservation-planner":
			p.refuse(el, "is not supported by Bobbin")
		default:
			p.refuse(el, "is not a known allocation file element")
		}
	}
	// The Fair Scheduler always has root.default.
	if !hasChild(a.Root, "root.default") {
		a.Root.Children = append(a.Root.Children, newQueue("root.default"))
	}
	if len(p.errs) > 0 {
		return nil, fmt.Errorf("%s: %s", source, strings.Join(p.errs, "; "))
	}
	return a, nil
}

func hasChild(q *Queue, path string) bool {
	for _, c := range q.Children {
		if c.Path == path {
			return true
		}
	}
	return false
}

type parser struct {
	source string
	errs   []string
}

func (p *parser) refuse(el *etree.Element, why string) {
	p.errs = append(p.errs, fmt.Sprintf("<%s> %s", el.Tag, why))
}

func (p *parser) queue(el *etree.Element, parent *Queue) {
	name := strings.TrimSpace(el.SelectAttrValue("name", ""))
	if name == "" || strings.Contains(name, ".") || strings.TrimSpace(name) != name {
		p.errs = append(p.errs, fmt.Sprintf("<queue name=%q> under %s: a queue name must be non-empty and contain no period", name, parent.Path))
		return
	}
	q := newQueue(parent.Path + "." + name)
	q.Parent = el.SelectAttrValue("type", "") == "parent"
	parent.Children = append(parent.Children, q)
	p.queueBody(el, q)
}

func (p *parser) queueBody(el *etree.Element, q *Queue) {
	for _, c := range el.ChildElements() {
		switch c.Tag {
		case "queue", "pool":
			q.Parent = true
			p.queue(c, q)
		case "weight":
			if q.Weight = p.float(c); q.Weight <= 0 {
				p.errs = append(p.errs, fmt.Sprintf("queue %s: <weight> must be positive", q.Path))
			}
		case "maxRunningApps":
			q.MaxRunningApps = p.integer(c)
		case "maxAMShare":
			q.MaxAMShare = p.amShare(c)
		case "schedulingPolicy", "schedulingMode":
			q.Policy = p.policy(c)
		case "aclSubmitApps":
			v := c.Text()
			q.SubmitACL = &v
		case "aclAdministerApps":
			v := c.Text()
			q.AdminACL = &v
		case "maxResources":
			if amounts := p.amounts(c, q.Path); amounts != nil {
				q.MaxResources = amounts
			} else {
				q.MaxShare = p.share(c, q.Path)
			}
		case "fairSharePreemptionThreshold":
			q.FairSharePreemptionThreshold = p.fraction(c)
		case "fairSharePreemptionTimeout", "minSharePreemptionTimeout":
			p.seconds(c) // replaced by Bobbin's hysteresis preemption (docs)
		case "minResources":
			if q.MinResources = p.amounts(c, q.Path); q.MinResources == nil {
				p.errs = append(p.errs, fmt.Sprintf("queue %s: <minResources> %q: write it as amounts (\"10240 mb, 10 vcores\" or \"memory-mb=10240, vcores=10\")", q.Path, c.Text()))
			}
		default:
			p.errs = append(p.errs, fmt.Sprintf("queue %s: <%s> is not a known queue element", q.Path, c.Tag))
		}
	}
}

func (p *parser) float(el *etree.Element) float64 {
	v, err := strconv.ParseFloat(strings.TrimSpace(el.Text()), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		p.errs = append(p.errs, fmt.Sprintf("<%s> %q is not a number", el.Tag, el.Text()))
	}
	return v
}

func (p *parser) integer(el *etree.Element) int {
	v, err := strconv.Atoi(strings.TrimSpace(el.Text()))
	if err != nil || v < 0 {
		p.errs = append(p.errs, fmt.Sprintf("<%s> %q is not a non-negative integer", el.Tag, el.Text()))
	}
	return v
}

func (p *parser) fraction(el *etree.Element) float64 {
	v := p.float(el)
	if v < 0 || v > 1 {
		p.errs = append(p.errs, fmt.Sprintf("<%s> %q must be between 0 and 1", el.Tag, el.Text()))
	}
	return v
}

// amShare is a maxAMShare: a fraction, or -1 for no AM limit.
func (p *parser) amShare(el *etree.Element) float64 {
	v := p.float(el)
	if v != -1 && (v < 0 || v > 1) {
		p.errs = append(p.errs, fmt.Sprintf("<%s> %q must be between 0 and 1, or -1 (no limit)", el.Tag, el.Text()))
	}
	return v
}

func (p *parser) seconds(el *etree.Element) time.Duration {
	v := p.integer(el)
	return time.Duration(v) * time.Second
}

func (p *parser) policy(el *etree.Element) string {
	switch v := strings.ToLower(strings.TrimSpace(el.Text())); v {
	case "fair", "drf", "fifo":
		return v
	default:
		p.errs = append(p.errs, fmt.Sprintf("<%s> %q: the scheduling policy must be fair, drf or fifo", el.Tag, el.Text()))
		return ""
	}
}

var (
	// "1024 mb, 4 vcores" (both Hadoop lines; a fraction is dropped, as Java drops it).
	mbRE     = regexp.MustCompile(`(?i)(\d+)(\.\d*)?\s*mb`)
	vcoresRE = regexp.MustCompile(`(?i)(\d+)(\.\d*)?\s*vcores`)
	// "memory-mb=1024, vcores=4" (3.x), any resource type by name.
	namedRE = regexp.MustCompile(`^\s*([A-Za-z][A-Za-z0-9._/-]*)\s*=\s*(\d+)\s*$`)
)

// amounts reads a minResources or maxResources written as amounts, as
// FairSchedulerConfiguration.parseResourceConfigValue does; nil when it is written as
// percentages (or is not a resource at all, which share then reports).
func (p *parser) amounts(el *etree.Element, path string) map[string]int64 {
	text := strings.TrimSpace(el.Text())
	if strings.Contains(text, "%") {
		return nil
	}
	out := map[string]int64{}
	if strings.Contains(text, "=") {
		for _, part := range strings.Split(text, ",") {
			m := namedRE.FindStringSubmatch(part)
			if m == nil {
				p.errs = append(p.errs, fmt.Sprintf("queue %s: <%s> %q: each part must be name=amount", path, el.Tag, text))
				return out
			}
			n, _ := strconv.ParseInt(m[2], 10, 64)
			name := m[1]
			if name == "memory-mb" || name == "memory" {
				name = "memory"
			}
			out[name] = n
		}
		return out
	}
	for _, unit := range []struct {
		name string
		re   *regexp.Regexp
	}{{"memory", mbRE}, {"vcores", vcoresRE}} {
		name := unit.name
		m := unit.re.FindStringSubmatch(text)
		if m == nil {
			if text != "" && !mbRE.MatchString(text) && !vcoresRE.MatchString(text) {
				return nil // neither unit: not amounts (share reports it)
			}
			p.errs = append(p.errs, fmt.Sprintf("queue %s: <%s> %q: Missing resource: %s", path, el.Tag, text, map[string]string{"memory": "mb", "vcores": "vcores"}[name]))
			return out
		}
		n, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			p.errs = append(p.errs, fmt.Sprintf("queue %s: <%s> %q: %v", path, el.Tag, text, err))
		}
		out[name] = n
	}
	return out
}

var percentRE = regexp.MustCompile(`^\s*([0-9.]+)\s*%\s*(memory|cpu)?\s*$`)

// share reads a maxResources written as a share of the cluster: "50%" or "50% memory, 50%
// cpu" (3.x; amounts are read by amounts).
func (p *parser) share(el *etree.Element, path string) float64 {
	v := math.NaN()
	for _, part := range strings.Split(el.Text(), ",") {
		m := percentRE.FindStringSubmatch(part)
		if m == nil {
			p.errs = append(p.errs, fmt.Sprintf("queue %s: <maxResources> %q: write it as amounts (\"10240 mb, 10 vcores\") or as a share of the cluster (\"50%%\" or \"50%% memory, 50%% cpu\")", path, el.Text()))
			return math.NaN()
		}
		f, err := strconv.ParseFloat(m[1], 64)
		if err != nil || f < 0 || f > 100 {
			p.errs = append(p.errs, fmt.Sprintf("queue %s: <maxResources> %q: a percentage must be between 0 and 100", path, el.Text()))
			return math.NaN()
		}
		if !math.IsNaN(v) && v != f/100 {
			p.errs = append(p.errs, fmt.Sprintf("queue %s: <maxResources> %q: Bobbin's ceiling is one share for every resource", path, el.Text()))
			return math.NaN()
		}
		v = f / 100
	}
	return v
}
