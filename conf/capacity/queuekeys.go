package capacity

import (
	"strconv"
	"strings"

	"github.com/bobbin-yarn/bobbin/conf/fairscheduler"
)

// The ordering policies of a leaf (ordering-policy).
const (
	OrderingFIFO = "fifo"
	OrderingFair = "fair"
)

// queueExtras reads the per-queue keys beyond capacities and limits that change what a
// queue means: ordering-policy (leaves), maximum-allocation-mb/-vcores (inherited), and
// the 3.x features Bobbin does not have, refused by name rather than ignored:
// auto-created leaf queues, reservations and queue priorities (a parent's
// priority-utilization ordering).
func (p *parser) queueExtras(q, parent *Queue, pre string) {
	if parent != nil {
		q.MaximumAllocationMB, q.MaximumAllocationVCores = parent.MaximumAllocationMB, parent.MaximumAllocationVCores
	}
	for key, dst := range map[string]*int64{"maximum-allocation-mb": &q.MaximumAllocationMB, "maximum-allocation-vcores": &q.MaximumAllocationVCores} {
		v, ok := p.lookup(pre + key)
		if !ok || strings.TrimSpace(v) == "" {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n <= 0 {
			p.errorf(pre+key, v, "must be a positive whole number")
			continue
		}
		*dst = n
	}
	if v, ok := p.lookup(pre + "default-application-priority"); ok && strings.TrimSpace(v) != "" {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil {
			p.errorf(pre+"default-application-priority", v, "must be a whole number")
		}
		q.DefaultApplicationPriority = int32(n)
	}
	q.FairPolicy = p.str(pre+fairscheduler.KeyPolicy, "")
	q.FairWeight = p.float(pre+fairscheduler.KeyWeight, 0)
	parentQueue := len(splitList(p.str(pre+"queues", ""))) > 0
	switch v := strings.TrimSpace(p.str(pre+"ordering-policy", "")); {
	case v == "":
	case parentQueue && v == "utilization":
		// 3.1's default for a parent: children by used capacity over guaranteed, which is
		// how Bobbin ranks sibling groups.
	case parentQueue && v == "priority-utilization":
		p.errorf(pre+"ordering-policy", v, "queue priorities are not implemented (Bobbin orders sibling groups by their share over quota, as utilization does); use utilization")
	case parentQueue:
		p.errorf(pre+"ordering-policy", v, "a parent queue's must be utilization or priority-utilization")
	case v == OrderingFIFO || v == "org.apache.hadoop.yarn.server.resourcemanager.scheduler.policy.FifoOrderingPolicy":
		q.OrderingPolicy = OrderingFIFO
	case v == OrderingFair || v == "org.apache.hadoop.yarn.server.resourcemanager.scheduler.policy.FairOrderingPolicy":
		q.OrderingPolicy = OrderingFair
	default:
		p.errorf(pre+"ordering-policy", v, "must be fifo or fair")
	}
	refuse := func(key, reason string) {
		v, ok := p.lookup(pre + key)
		if !ok {
			return
		}
		v = strings.TrimSpace(v)
		if b, err := strconv.ParseBool(v); err == nil && !b {
			return
		}
		p.errorf(pre+key, v, "%s", reason)
	}
	refuse("auto-create-child-queue.enabled", "Bobbin does not create leaf queues on submission; set it to false and declare the queues")
	refuse("reservable", "Bobbin has no reservation system (the reservation calls are answered as the Java RM answers them with it off); set it to false")
	if v, ok := p.lookup(pre + "ordering-policy.fair.enable-size-based-weight"); ok && strings.TrimSpace(v) != "" {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			p.errorf(pre+"ordering-policy.fair.enable-size-based-weight", v, "must be true or false")
		}
		q.FairSizeBasedWeight = b
	}
	if parent != nil {
		q.DisablePreemption = parent.DisablePreemption
	}
	if v, ok := p.lookup(pre + "disable_preemption"); ok && strings.TrimSpace(v) != "" {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			p.errorf(pre+"disable_preemption", v, "must be true or false")
		}
		q.DisablePreemption = b
	}
	p.lifetimes(q, pre)
	// The Fair Scheduler's minResources and maxResources, which its allocation file's
	// mapping writes (fairscheduler.CapacityKeys).
	if v, ok := p.lookup(pre + fairscheduler.KeyMinimumResource); ok && strings.TrimSpace(v) != "" {
		q.MinimumResource = p.absolute(pre+fairscheduler.KeyMinimumResource, v)
	}
	if v, ok := p.lookup(pre + fairscheduler.KeyMaximumResource); ok && strings.TrimSpace(v) != "" {
		q.MaximumResource = p.absolute(pre+fairscheduler.KeyMaximumResource, v)
	}
	if v, ok := p.lookup(pre + "acl_application_max_priority"); ok && strings.TrimSpace(v) != "*" {
		p.errorf(pre+"acl_application_max_priority", v, "application priority ACLs are not implemented (any user may ask up to yarn.cluster.max-application-priority); set it to * or remove it")
	}
	// A queue's priority orders it among its siblings only under its parent's
	// priority-utilization ordering, refused above; as on the Java RM it does nothing else.
	if v, ok := p.lookup(pre + "priority"); ok && strings.TrimSpace(v) != "" {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil {
			p.errorf(pre+"priority", v, "must be a whole number")
		}
		q.Priority = int32(n)
	}
}

// lifetimes reads the 3.x maximum-application-lifetime and default-application-lifetime
// (seconds; 0 or less: none) as LeafQueue does: the default may not exceed the maximum,
// and with a maximum but no default the maximum is the default.
func (p *parser) lifetimes(q *Queue, pre string) {
	read := func(key string) int64 {
		v, ok := p.lookup(pre + key)
		if !ok || strings.TrimSpace(v) == "" {
			return -1
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			p.errorf(pre+key, v, "must be a whole number of seconds")
		}
		return n
	}
	q.MaxAppLifetime, q.DefaultAppLifetime = read("maximum-application-lifetime"), read("default-application-lifetime")
	if q.MaxAppLifetime > 0 && q.DefaultAppLifetime > q.MaxAppLifetime {
		raw, _ := p.c.Raw(pre + "default-application-lifetime")
		p.errorf(pre+"default-application-lifetime", raw, "Default lifetime%d can't exceed maximum lifetime %d", q.DefaultAppLifetime, q.MaxAppLifetime)
	}
	if q.DefaultAppLifetime <= 0 {
		q.DefaultAppLifetime = q.MaxAppLifetime
	}
}

// Lifetime is the lifetime (seconds) an application asking for requested (0 or less:
// none) gets in leaf q, as CapacityScheduler.checkAndGetApplicationLifetime decides it:
// capped by the queue's maximum, or the queue's default when it asks for none.
func (q *Queue) Lifetime(requested int64) int64 {
	switch {
	case q.MaxAppLifetime <= 0:
		return requested
	case requested <= 0:
		return q.DefaultAppLifetime
	case requested > q.MaxAppLifetime:
		return q.MaxAppLifetime
	}
	return requested
}

// NotApplicable are capacity-scheduler.xml keys (after the yarn.scheduler.capacity.
// prefix) that tune the Java Capacity Scheduler's heartbeat-driven assignment, which
// Bobbin does not have: it places asynchronously, many containers per pass, whatever the
// keys say. bobbin check-config reports them with these reasons.
var NotApplicable = map[string]string{
	"per-node-heartbeat.maximum-offswitch-assignments": "Bobbin does not assign per node heartbeat: its passes place any number of off-switch containers",
	"per-node-heartbeat.multiple-assignments-enabled":  "Bobbin does not assign per node heartbeat: its passes place many containers",
	"per-node-heartbeat.maximum-container-assignments": "Bobbin does not assign per node heartbeat: its passes place many containers",
	"schedule-asynchronously.enable":                   "Bobbin always schedules asynchronously (its scheduling loop), never on the heartbeat",
	"schedule-asynchronously.maximum-threads":          "Bobbin's scheduling loop is one goroutine",
	"schedule-asynchronously.scheduling-interval-ms":   "Bobbin's scheduling loop runs when asks or room change",
	"lazy-preemption-enabled":                          "Bobbin preempts with its own hysteresis (bobbin.scheduler.preemption.*)",
	"reservations-continue-look-all-nodes":             "Bobbin does not reserve nodes for single containers; it searches all of them",
}

// absolute parses "[memory=10240,vcores=12,yarn.io/gpu=2]".
func (p *parser) absolute(key, raw string) map[string]int64 {
	body := strings.TrimSpace(raw)
	if !strings.HasSuffix(body, "]") {
		p.errorf(key, raw, "absolute capacity must look like [memory=10240,vcores=12]")
		return map[string]int64{}
	}
	out := map[string]int64{}
	for _, part := range strings.Split(body[1:len(body)-1], ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if !ok || err != nil || n < 0 || strings.TrimSpace(k) == "" {
			p.errorf(key, raw, "absolute capacity must look like [memory=10240,vcores=12]")
			return map[string]int64{}
		}
		k = strings.TrimSpace(k)
		if k == "memory-mb" {
			k = "memory"
		}
		out[k] = n
	}
	return out
}
