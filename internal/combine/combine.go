// Package combine applies the work of concurrent callers in batches, one batch at a
// time, by whichever caller arrives first (flat combining).
//
// It exists for state behind a lock that thousands of short calls a second take: under
// load Go's sync.Mutex turns to handing the lock from one waiter to the next, and each
// handoff waits for the next waiter to get a processor; with the processors busy (an RM
// at saturation) the lock spends more time being handed over than held. A Batcher takes
// such calls' work into one batch per hold of the lock instead, and each caller waits on
// its own channel.
package combine

import "sync"

// Batcher collects items from concurrent Do calls and applies them in batches.
type Batcher[T any] struct {
	apply func(batch []T)
	mu    sync.Mutex
	// pending are the waiters of the next batch; busy is set while a caller is applying
	// one (only that caller touches items and spare then).
	pending, spare []*waiter[T]
	busy           bool
	items          []T
	waiters        sync.Pool
}

type waiter[T any] struct {
	item T
	// wake gets one value: done (the waiter's batch was applied), lead (apply the
	// next batch) or what apply panicked with.
	wake chan any
}

type signal int

const (
	done signal = iota
	lead
)

// New is a Batcher that applies batches with apply. apply sees each item once, in the
// order of their Do calls; it may keep nothing of the batch slice after it returns.
func New[T any](apply func(batch []T)) *Batcher[T] {
	return &Batcher[T]{apply: apply}
}

// Do adds item to a batch and returns once that batch has been applied. If apply
// panics, every Do of its batch panics with the same value.
func (b *Batcher[T]) Do(item T) {
	w, _ := b.waiters.Get().(*waiter[T])
	if w == nil {
		w = &waiter[T]{wake: make(chan any, 1)}
	}
	w.item = item
	b.mu.Lock()
	b.pending = append(b.pending, w)
	if b.busy {
		b.mu.Unlock()
		switch v := <-w.wake; v {
		case done:
			b.release(w)
			return
		case lead:
			b.mu.Lock()
		default:
			b.release(w)
			panic(v)
		}
	}
	b.busy = true
	batch := b.pending
	b.pending = b.spare[:0]
	b.mu.Unlock()
	b.applyBatch(w, batch)
	b.release(w)
}

// applyBatch applies batch, whose caller is own, wakes its other waiters and hands the
// next batch, if any, to its first waiter.
func (b *Batcher[T]) applyBatch(own *waiter[T], batch []*waiter[T]) {
	var failure any
	defer func() {
		for _, w := range batch {
			if w != own {
				if failure != nil {
					w.wake <- failure
				} else {
					w.wake <- done
				}
			}
		}
		clear(batch)
		b.mu.Lock()
		b.spare = batch[:0]
		if len(b.pending) > 0 {
			next := b.pending[0]
			b.mu.Unlock()
			next.wake <- lead
		} else {
			b.busy = false
			b.mu.Unlock()
		}
		if failure != nil {
			panic(failure)
		}
	}()
	defer func() {
		if r := recover(); r != nil {
			failure = r
		}
	}()
	items := b.items[:0]
	for _, w := range batch {
		items = append(items, w.item)
	}
	b.apply(items)
	clear(items)
	b.items = items[:0]
}

func (b *Batcher[T]) release(w *waiter[T]) {
	var zero T
	w.item = zero
	b.waiters.Put(w)
}
