package combine

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

type job struct {
	id      int
	applied atomic.Bool
}

func TestEveryItemAppliedOnceBeforeItsCallReturns(t *testing.T) {
	var inApply atomic.Int32
	seen := map[int]int{}
	batches := 0
	b := New(func(batch []*job) {
		if inApply.Add(1) != 1 {
			t.Error("two batches applied at once")
		}
		batches++
		for _, j := range batch {
			seen[j.id]++
			j.applied.Store(true)
		}
		inApply.Add(-1)
	})
	const callers, calls = 16, 2000
	var wg sync.WaitGroup
	for c := range callers {
		wg.Go(func() {
			for i := range calls {
				j := &job{id: c*calls + i}
				b.Do(j)
				if !j.applied.Load() {
					t.Errorf("job %d: Do returned before its batch was applied", j.id)
					return
				}
			}
		})
	}
	wg.Wait()
	if len(seen) != callers*calls {
		t.Fatalf("%d distinct items applied; want %d", len(seen), callers*calls)
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("item %d applied %d times", id, n)
		}
	}
	t.Logf("%d items in %d batches", callers*calls, batches)
}

// waitPending waits until n callers wait for the next batch.
func waitPending[T any](b *Batcher[T], n int) {
	for {
		b.mu.Lock()
		k := len(b.pending)
		b.mu.Unlock()
		if k == n {
			return
		}
		runtime.Gosched()
	}
}

func TestCallersArrivingDuringABatchShareTheNext(t *testing.T) {
	first, release := make(chan struct{}), make(chan struct{})
	var sizes []int
	b := New(func(batch []int) {
		sizes = append(sizes, len(batch))
		if batch[0] == 0 {
			close(first)
			<-release
		}
	})
	var wg sync.WaitGroup
	wg.Go(func() { b.Do(0) })
	<-first
	for i := 1; i <= 5; i++ {
		wg.Go(func() { b.Do(i) })
	}
	waitPending(b, 5)
	close(release)
	wg.Wait()
	if len(sizes) != 2 || sizes[0] != 1 || sizes[1] != 5 {
		t.Errorf("batch sizes %v; want [1 5]", sizes)
	}
}

func TestPanicReachesEveryCallerOfItsBatch(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	b := New(func(batch []string) {
		switch batch[0] {
		case "hold":
			close(started)
			<-release
		case "bad":
			panic("broken batch")
		}
	})
	var wg sync.WaitGroup
	wg.Go(func() { b.Do("hold") })
	<-started
	var panics atomic.Int32
	for range 3 {
		wg.Go(func() {
			defer func() {
				if r := recover(); r == "broken batch" {
					panics.Add(1)
				}
			}()
			b.Do("bad")
		})
	}
	waitPending(b, 3)
	close(release)
	wg.Wait()
	if panics.Load() != 3 {
		t.Errorf("%d of 3 callers saw the panic", panics.Load())
	}
	b.Do("fine") // usable after a failed batch
}

func BenchmarkDo(b *testing.B) {
	var n int
	bt := New(func(batch []int) { n += len(batch) })
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			bt.Do(1)
		}
	})
	if n != b.N {
		b.Fatalf("applied %d of %d", n, b.N)
	}
}
