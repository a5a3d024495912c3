package capacity

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/conf/fairscheduler"
)

// The Fair Scheduler's class reads fair-scheduler.xml from the configuration directory
// into a tree Bobbin's scheduler runs, with the file's placement policy.
func TestFairSchedulerFileBecomesTheTree(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile("../fairscheduler/testdata/three-queues.xml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fair-scheduler.xml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	c := conf.Empty()
	c.Set(KeySchedulerClass, fairscheduler.Class)
	tree, err := Load(c, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !tree.Fair || tree.Source != filepath.Join(dir, "fair-scheduler.xml") || tree.Placement == nil {
		t.Fatalf("tree fair=%v source=%q", tree.Fair, tree.Source)
	}
	var sum float64
	for _, name := range []string{"small", "medium", "large"} {
		q, ok := tree.Queue("root." + name)
		if !ok {
			t.Fatalf("no root.%s", name)
		}
		sum += q.AbsoluteCapacity
	}
	if q, _ := tree.Queue("root.large"); math.Abs(q.AbsoluteCapacity-3.0/7) > 1e-6 || q.MaxRunningApps != -1 || q.AbsoluteMaximumCapacity != 0.9 {
		t.Errorf("large: %+v", q)
	}
	if q, _ := tree.Queue("root.small"); q.MaxRunningApps != 2 {
		t.Errorf("small maxRunningApps %d", q.MaxRunningApps)
	}
	if tree.UserMaxRunning("carol") != 1 || tree.UserMaxRunning("dave") != 5 {
		t.Errorf("user bounds carol %d dave %d", tree.UserMaxRunning("carol"), tree.UserMaxRunning("dave"))
	}
	if q, create, err := tree.Placement("bob", "", func() []string { return nil }); q != "root.small" || create || err != nil {
		t.Errorf("bob placed in %q %v %v", q, create, err)
	}
	// A created queue is part of the tree built with it.
	tree, err = LoadFair(c, dir, []string{"root.dave"})
	if err != nil {
		t.Fatal(err)
	}
	if q, ok := tree.Queue("root.dave"); !ok || !q.IsLeaf() {
		t.Fatalf("root.dave not created")
	}
	// No file: the defaults, as the Java RM runs without one.
	tree, err = Load(c, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if q, create, err := tree.Placement("erin", "default", nil); q != "root.erin" || !create || err != nil {
		t.Errorf("without a file, erin goes to %q create=%v %v", q, create, err)
	}
	// A broken file names itself.
	if err := os.WriteFile(filepath.Join(dir, "fair-scheduler.xml"), []byte("<allocations><queue name=\"x\"><weight>-1</weight></queue></allocations>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(c, dir); err == nil || !strings.Contains(err.Error(), "fair-scheduler.xml") || !strings.Contains(err.Error(), "weight") {
		t.Errorf("bad file: %v", err)
	}
}
