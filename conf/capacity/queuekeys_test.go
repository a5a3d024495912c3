package capacity

import (
	"strings"
	"testing"
)

func TestQueueExtras(t *testing.T) {
	c := confWith("root.queues", "a,b", "root.a.capacity", "50", "root.b.capacity", "50",
		"root.maximum-allocation-mb", "8192", "root.b.maximum-allocation-mb", "2048", "root.b.maximum-allocation-vcores", "2",
		"root.a.ordering-policy", "fair", "root.b.ordering-policy", "org.apache.hadoop.yarn.server.resourcemanager.scheduler.policy.FifoOrderingPolicy",
		"root.a.auto-create-child-queue.enabled", "false", "root.a.priority", "2", "root.ordering-policy", "utilization",
		"root.a.ordering-policy.fair.enable-size-based-weight", "true")
	tr, err := Parse(c)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := tr.Queue("a")
	b, _ := tr.Queue("b")
	if a.MaximumAllocationMB != 8192 || a.MaximumAllocationVCores != 0 || b.MaximumAllocationMB != 2048 || b.MaximumAllocationVCores != 2 {
		t.Fatalf("maximum allocations: a %d/%d, b %d/%d", a.MaximumAllocationMB, a.MaximumAllocationVCores, b.MaximumAllocationMB, b.MaximumAllocationVCores)
	}
	if a.OrderingPolicy != OrderingFair || b.OrderingPolicy != OrderingFIFO || !a.FairSizeBasedWeight || b.FairSizeBasedWeight {
		t.Fatalf("ordering policies: %q %q", a.OrderingPolicy, b.OrderingPolicy)
	}
	for key, want := range map[string]string{
		"root.a.ordering-policy":                               "must be fifo or fair",
		"root.a.maximum-allocation-mb":                         "must be a positive whole number",
		"root.auto-create-child-queue.enabled":                 "does not create leaf queues",
		"root.a.reservable":                                    "no reservation system",
		"root.a.priority":                                      "must be a whole number",
		"root.ordering-policy":                                 "queue priorities are not implemented",
		"root.a.ordering-policy.fair.enable-size-based-weight": "must be true or false",
	} {
		v := "true"
		switch key {
		case "root.a.ordering-policy":
			v = "lottery"
		case "root.a.maximum-allocation-mb":
			v = "lots"
		case "root.a.priority":
			v = "high"
		case "root.ordering-policy":
			v = "priority-utilization"
		case "root.a.ordering-policy.fair.enable-size-based-weight":
			v = "sometimes"
		}
		c := confWith("root.queues", "a", "root.a.capacity", "100", key, v)
		if _, err := Parse(c); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), Prefix+key) {
			t.Errorf("%s=%s: %v", key, v, err)
		}
	}
}
