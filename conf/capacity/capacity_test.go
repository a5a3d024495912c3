package capacity

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bobbin-yarn/bobbin/conf"
)

func confWith(kv ...string) *conf.Configuration {
	c := conf.New()
	for i := 0; i+1 < len(kv); i += 2 {
		c.Set(Prefix+kv[i], kv[i+1])
	}
	return c
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestHierarchyAndAbsoluteCapacities(t *testing.T) {
	c := confWith(
		"root.queues", "prod, dev",
		"root.prod.capacity", "70",
		"root.prod.queues", "etl,adhoc",
		"root.prod.etl.capacity", "60",
		"root.prod.adhoc.capacity", "40",
		"root.prod.adhoc.maximum-capacity", "80",
		"root.dev.capacity", "30",
		"root.dev.state", "stopped",
		"root.dev.acl_submit_applications", "alice,bob devs",
		"root.acl_submit_applications", " ",
		"maximum-applications", "1000",
	)
	tr, err := Parse(c)
	if err != nil {
		t.Fatal(err)
	}
	etl, _ := tr.Queue("etl")
	if etl.Path != "root.prod.etl" || !near(etl.AbsoluteCapacity, 0.42) || !near(etl.AbsoluteMaximumCapacity, 1) {
		t.Fatalf("etl %+v", etl)
	}
	adhoc, _ := tr.Queue("root.prod.adhoc")
	if !near(adhoc.AbsoluteCapacity, 0.28) || !near(adhoc.AbsoluteMaximumCapacity, 0.8) {
		t.Fatalf("adhoc abs %g max %g", adhoc.AbsoluteCapacity, adhoc.AbsoluteMaximumCapacity)
	}
	if etl.MaximumApplications != 420 {
		t.Fatalf("etl max apps %d", etl.MaximumApplications)
	}
	dev, _ := tr.Queue("dev")
	if dev.State != Stopped || !dev.SubmitACL.Allows("bob", nil) || !dev.SubmitACL.Allows("carol", []string{"devs"}) || dev.SubmitACL.Allows("carol", nil) {
		t.Fatalf("dev %+v", dev)
	}
	if tr.Root.SubmitACL.All || tr.Root.SubmitACL.Allows("x", nil) {
		t.Fatal("root ACL ' ' should allow no one")
	}
	var leaves []string
	for _, q := range tr.Leaves() {
		leaves = append(leaves, q.Name)
	}
	if strings.Join(leaves, ",") != "etl,adhoc,dev" {
		t.Fatalf("leaves %v", leaves)
	}
}

func TestEveryErrorIsReportedWithItsKey(t *testing.T) {
	c := confWith(
		"root.queues", "a,b,c,a.b",
		"root.a.capacity", "50",
		"root.b.capacity", "abc",
		"root.b.maximum-capacity", "150",
		"root.c.capacity", "40",
		"root.c.maximum-capacity", "20",
		"root.c.state", "PAUSED",
	)
	_, err := Parse(c)
	if err == nil {
		t.Fatal("accepted")
	}
	msg := err.Error()
	for _, want := range []string{
		`yarn.scheduler.capacity.root.b.capacity = "abc": not a number`,
		`yarn.scheduler.capacity.root.b.maximum-capacity = "150": must be a percentage from 0 to 100`,
		`yarn.scheduler.capacity.root.c.maximum-capacity = "20": maximum-capacity 20 is below capacity 40`,
		`yarn.scheduler.capacity.root.c.state = "PAUSED": state must be RUNNING or STOPPED`,
		`queue name "a.b" may not contain '.'`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("missing %q in:\n%s", want, msg)
		}
	}
}

func TestCapacitiesMustSumTo100(t *testing.T) {
	_, err := Parse(confWith("root.queues", "a,b", "root.a.capacity", "50", "root.b.capacity", "40"))
	if err == nil || !strings.Contains(err.Error(), "capacities of the children of root sum to 90, not 100 (a=50, b=40)") {
		t.Fatalf("%v", err)
	}
	_, err = Parse(confWith("root.queues", "a,b", "root.a.capacity", "100"))
	if err == nil || !strings.Contains(err.Error(), "root.b.capacity") {
		t.Fatalf("missing capacity: %v", err)
	}
	// Floating-point sums like 33.3+33.3+33.4 are fine.
	if _, err := Parse(confWith("root.queues", "a,b,c", "root.a.capacity", "33.3", "root.b.capacity", "33.3", "root.c.capacity", "33.4")); err != nil {
		t.Fatal(err)
	}
}

func TestDuplicateLeafNames(t *testing.T) {
	_, err := Parse(confWith("root.queues", "a,b", "root.a.capacity", "50", "root.b.capacity", "50",
		"root.a.queues", "x", "root.a.x.capacity", "100", "root.b.queues", "x", "root.b.x.capacity", "100"))
	if err == nil || !strings.Contains(err.Error(), `queue name "x" is used twice (root.a.x and root.b.x)`) {
		t.Fatalf("%v", err)
	}
}

func TestNodeLabels(t *testing.T) {
	c := confWith(
		"root.queues", "a,b",
		"root.accessible-node-labels", "*",
		"root.accessible-node-labels.gpu.capacity", "100",
		"root.a.capacity", "50",
		"root.a.accessible-node-labels", "gpu",
		"root.a.accessible-node-labels.gpu.capacity", "70",
		"root.a.default-node-label-expression", "gpu",
		"root.b.capacity", "50",
		"root.b.accessible-node-labels", "gpu",
		"root.b.accessible-node-labels.gpu.capacity", "30",
		"root.b.accessible-node-labels.gpu.maximum-capacity", "50",
	)
	tr, err := Parse(c)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := tr.Queue("a")
	b, _ := tr.Queue("b")
	if a.Labels["gpu"].Capacity != 70 || b.Labels["gpu"].MaximumCapacity != 50 || a.DefaultNodeLabelExpression != "gpu" {
		t.Fatalf("a %+v b %+v", a.Labels, b.Labels)
	}
	c.Set(Prefix+"root.b.accessible-node-labels.gpu.capacity", "20")
	if _, err := Parse(c); err == nil || !strings.Contains(err.Error(), "for label gpu of the children of root sum to 90") {
		t.Fatalf("label sum: %v", err)
	}
	c.Set(Prefix+"root.b.accessible-node-labels.gpu.capacity", "30")
	c.Set(Prefix+"root.b.accessible-node-labels", "ssd")
	if _, err := Parse(c); err == nil || !strings.Contains(err.Error(), "cannot access") {
		t.Fatalf("inaccessible label: %v", err)
	}
}

func TestLoadDefaultAndFile(t *testing.T) {
	tr, err := Load(conf.New(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d, ok := tr.Queue("default")
	if !ok || d.Capacity != 100 || d.State != Running || !d.SubmitACL.All && !tr.Root.SubmitACL.All {
		t.Fatalf("default queue %+v", d)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "capacity-scheduler.xml"), []byte(`<configuration><property><name>yarn.scheduler.capacity.root.queues</name><value>a</value></property><property><name>yarn.scheduler.capacity.root.a.capacity</name><value>100</value></property></configuration>`), 0o644)
	tr, err = Load(conf.New(), dir)
	if err != nil || tr.Source != filepath.Join(dir, "capacity-scheduler.xml") {
		t.Fatalf("%v %v", tr, err)
	}
	if _, ok := tr.Queue("a"); !ok {
		t.Fatal("queue a missing")
	}
	os.WriteFile(filepath.Join(dir, "capacity-scheduler.xml"), []byte(`<configuration><property>`), 0o644)
	if _, err := Load(conf.New(), dir); err == nil || !strings.Contains(err.Error(), "capacity-scheduler.xml") {
		t.Fatalf("broken file: %v", err)
	}
}

// Hadoop 3.3+'s max-parallel-apps bound a queue's (and its subtree's) running
// applications, with a default for every queue and per-user bounds; they are Bobbin's
// running-application bounds, not ignored.
func TestMaxParallelApps(t *testing.T) {
	tr, err := Parse(confWith(
		"root.queues", "a,b",
		"root.a.capacity", "50", "root.b.capacity", "50",
		"max-parallel-apps", "10",
		"root.a.max-parallel-apps", "2",
		"user.max-parallel-apps", "3",
		"user.alice.max-parallel-apps", "1",
	))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"root": 10, "a": 2, "b": 10} {
		if q, _ := tr.Queue(name); q.MaxRunningApps != want {
			t.Errorf("%s: max running apps %d, want %d", name, q.MaxRunningApps, want)
		}
	}
	if tr.UserMaxRunning("alice") != 1 || tr.UserMaxRunning("bob") != 3 {
		t.Errorf("users: alice %d, bob %d", tr.UserMaxRunning("alice"), tr.UserMaxRunning("bob"))
	}
	if _, err := Parse(confWith("root.queues", "a", "root.a.capacity", "100", "root.a.max-parallel-apps", "-2")); err == nil ||
		!strings.Contains(err.Error(), "root.a.max-parallel-apps") {
		t.Errorf("a negative bound: %v", err)
	}
}

// Hadoop 3.3+'s weights: capacity "<w>w" is a share of the parent in proportion to the
// siblings' weights (labels too); a parent whose children mix weights and percentages,
// or a weight that is not a number, is refused naming the key.
func TestWeightCapacities(t *testing.T) {
	tr, err := Parse(confWith("root.queues", "a,b", "root.a.capacity", "2w", "root.b.capacity", " 1w ",
		"root.a.queues", "x,y", "root.a.x.capacity", "1w", "root.a.y.capacity", "3w", "root.b.maximum-capacity", "50",
		"root.accessible-node-labels", "gpu", "root.accessible-node-labels.gpu.capacity", "100",
		"root.a.accessible-node-labels", "gpu", "root.a.accessible-node-labels.gpu.capacity", "1w",
		"root.b.accessible-node-labels", "gpu", "root.b.accessible-node-labels.gpu.capacity", "4w"))
	if err != nil {
		t.Fatal(err)
	}
	queue := func(name string) *Queue { q, _ := tr.Queue(name); return q }
	for name, want := range map[string][3]float64{"a": {2, 200.0 / 3, 2.0 / 3}, "b": {1, 100.0 / 3, 1.0 / 3}, "x": {1, 25, 2.0 / 3 / 4}, "y": {3, 75, 2.0 / 3 * 3 / 4}} {
		q := queue(name)
		if q.Weight != want[0] || !near(q.Capacity, want[1]) || !near(q.AbsoluteCapacity, want[2]) {
			t.Errorf("%s: weight %g capacity %g absolute %g, want %v", name, q.Weight, q.Capacity, q.AbsoluteCapacity, want)
		}
	}
	if a, b := queue("a").Labels["gpu"], queue("b").Labels["gpu"]; !near(a.Capacity, 20) || !near(b.Capacity, 80) || a.Weight != 1 {
		t.Errorf("label gpu: a %+v b %+v", a, b)
	}
	if queue("root").Weight != -1 {
		t.Errorf("root's weight %g, want -1 (not a weight)", queue("root").Weight)
	}
	for kv, want := range map[[4]string]string{
		{"root.a.capacity", "2w", "root.b.capacity", "50"}:  "root.queues",
		{"root.a.capacity", "-2w", "root.b.capacity", "1w"}: "root.a.capacity",
		{"root.a.capacity", "xw", "root.b.capacity", "1w"}:  "a weight must be a number",
	} {
		_, err := Parse(confWith("root.queues", "a,b", kv[0], kv[1], kv[2], kv[3]))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: %v, want an error naming %q", kv, err, want)
		}
	}
}
