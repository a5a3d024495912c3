package capacity

import (
	"strconv"
	"strings"
)

// queueExtras reads the per-queue keys beyond capacities and limits that change what a
// queue means: ordering-policy (leaves), maximum-allocation-mb/-vcores (inherited), and
// the 3.x features Bobbin does not have, refused by name rather than ignored:
// auto-created leaf queues, reservations, queue priorities and size-based fair weights.
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
	switch v := strings.TrimSpace(p.str(pre+"ordering-policy", "")); v {
	case "":
	case OrderingFIFO, "org.apache.hadoop.yarn.server.resourcemanager.scheduler.policy.FifoOrderingPolicy":
		q.OrderingPolicy = OrderingFIFO
	case OrderingFair, "org.apache.hadoop.yarn.server.resourcemanager.scheduler.policy.FairOrderingPolicy":
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
	refuse("ordering-policy.fair.enable-size-based-weight", "the fair ordering's size-based weights are not implemented; set it to false")
	if v, ok := p.lookup(pre + "priority"); ok && strings.TrimSpace(v) != "" && strings.TrimSpace(v) != "0" {
		p.errorf(pre+"priority", v, "queue priorities are not implemented (Bobbin orders sibling groups by their share over quota); remove it or set 0")
	}
}
