package scheduler

import (
	"errors"
	"fmt"
	"sync"
	"testing"
)

// RPC handlers change asks, release containers and update nodes while passes run; the
// race detector checks the locking and the totals must stay consistent.
func TestConcurrentUse(t *testing.T) {
	e := newEngine(t, StrategyRings, queues(t, "root.queues", "a,b", "root.a.capacity", "50", "root.b.capacity", "50"))
	unitNodes(t, e, 50)
	for i := 0; i < 8; i++ {
		must(t, e.AddApp(AppSpec{ID: AppID(fmt.Sprint("app", i)), Queue: []string{"a", "b"}[i%2]}))
	}
	var wg sync.WaitGroup
	allocated := make(chan ContainerID, 10000)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 200; i++ {
			for _, a := range e.Schedule(0).Allocations {
				allocated <- a.Container
			}
		}
		close(allocated)
	}()
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for k := 0; k < 50; k++ {
				e.UpdateAsks(AppID(fmt.Sprint("app", i)), ask1(k%7))
				e.Stats()
			}
		}(i)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for c := range allocated {
			e.Release(c)
		}
	}()
	wg.Wait()
	s := e.Stats()
	if s.Allocated.AnyNegative() || s.Allocated[VCores] != int64(s.Running) {
		t.Fatalf("inconsistent totals: %+v", s)
	}
	// The lock-free sums agree with the partitions' once the writers are done.
	if total, used := e.Totals(); total != s.Total || used != s.Allocated {
		t.Fatalf("Totals %v / %v, Stats %v / %v", total, used, s.Total, s.Allocated)
	}
	// And after a pass and nodes leaving with containers on them.
	for i := 0; i < 8; i++ {
		must(t, e.UpdateAsks(AppID(fmt.Sprint("app", i)), ask1(5)))
	}
	if n := len(e.Schedule(0).Allocations); n == 0 {
		t.Fatal("nothing placed")
	}
	for i := 0; i < 10; i++ {
		if _, err := e.RemoveNode(fmt.Sprintf("n%02d:8041", i)); err != nil {
			t.Fatal(err)
		}
	}
	s = e.Stats()
	if total, used := e.Totals(); total != s.Total || used != s.Allocated {
		t.Fatalf("after removals: Totals %v / %v, Stats %v / %v", total, used, s.Total, s.Allocated)
	}
}

// An allocate call's changes never wait for e.mu (a pass holds it): they queue, and the
// next caller of any method sees them applied in order, as if each had been applied at
// once. A change for an application the engine does not hold is refused at once.
func TestAllocateChangesQueueBehindAPass(t *testing.T) {
	e := newEngine(t, StrategyRings, queues(t, "root.queues", "a", "root.a.capacity", "100"))
	unitNodes(t, e, 4)
	must(t, e.AddApp(AppSpec{ID: "app1", Queue: "a"}))
	must(t, e.AddApp(AppSpec{ID: "app2", Queue: "a"}))

	e.mu.Lock() // as a pass would: each call below would deadlock if it took e.mu
	must(t, e.UpdateAsks("app1", ask1(3)))
	must(t, e.UpdateAsks("app1", ask1(2))) // the later total wins
	must(t, e.UpdateAsks("app2", ask1(1)))
	must(t, e.UpdateBlacklist("app2", []string{"n0"}, nil))
	if err := e.UpdateAsks("nope", ask1(1)); !errors.Is(err, ErrUnknownApp) {
		t.Fatalf("ask of an unknown application: %v", err)
	}
	if err := e.UpdateAsks("app1", []Ask{{Priority: 1, ResourceName: "*", Capability: res(1024, 1), Count: -1}}); err == nil {
		t.Fatal("a negative ask was queued")
	}
	e.mu.Unlock()

	if s := e.Stats(); s.Pending != 3 {
		t.Fatalf("pending %d after the queued changes, want 2+1", s.Pending)
	}
	// Delivered containers stop counting against the next ask (unseen), in queue order.
	plan := e.Schedule(0)
	if len(plan.Allocations) != 3 {
		t.Fatalf("placed %d, want 3", len(plan.Allocations))
	}
	for _, al := range plan.Allocations {
		if al.App == "app2" && al.Node == "n0" {
			t.Fatal("app2 placed on its blacklisted node")
		}
	}
	var app1 []ContainerID
	for _, al := range plan.Allocations {
		if al.App == "app1" {
			app1 = append(app1, al.Container)
		}
	}
	must(t, e.UpdateAsks("app1", ask1(2))) // sent before the AM saw its 2: nothing new
	e.Delivered("app1", app1)
	must(t, e.UpdateAsks("app1", ask1(1))) // after: one more
	if s := e.Stats(); s.Pending != 1 {
		t.Fatalf("pending %d, want 1", s.Pending)
	}
	// Changes queued for an application removed before they apply go with it.
	e.mu.Lock()
	must(t, e.UpdateAsks("app2", ask1(5)))
	e.mu.Unlock()
	must(t, e.RemoveApp("app2"))
	if s := e.Stats(); s.Pending != 1 {
		t.Fatalf("pending %d after app2 left, want 1", s.Pending)
	}
}
