package scheduler

import (
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
