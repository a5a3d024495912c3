package scheduler

import (
	"fmt"
	"sync"
)

// The inbox keeps the RM's allocate handlers off e.mu. An AM's allocate call changes its
// asks, says which containers it was handed and edits its blacklist; were each to take
// e.mu, it would wait behind a whole scheduling pass (at saturation, most of an
// allocate's tail). Instead the calls queue their changes here, under a lock held only
// for an append, and whoever takes e.mu next — the next pass first of all — applies the
// queue in arrival order before doing anything else. Every reader of engine state takes
// e.mu through lock, so no caller can see the engine without the changes it queued: to a
// caller the engine behaves exactly as if each change had been applied when queued.
type inbox struct {
	mu    sync.Mutex
	ops   []inboxOp
	spare []inboxOp          // the slice applied last, reused for the next queue
	known map[AppID]struct{} // the engine's applications, so a change for none is refused at once
}

// inboxOp is one queued change of one application.
type inboxOp struct {
	app       AppID
	kind      inboxKind
	asks      []Ask         // opAsks
	delivered []ContainerID // opDelivered
	add, drop []string      // opBlacklist
}

type inboxKind uint8

const (
	opAsks inboxKind = iota
	opDelivered
	opBlacklist
)

// push queues op; it fails when the application is not (or no longer) the engine's.
func (q *inbox) push(op inboxOp) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.known[op.app]; !ok {
		return fmt.Errorf("application %s: %w", op.app, ErrUnknownApp)
	}
	q.ops = append(q.ops, op)
	return nil
}

// take hands over the queued changes and starts a new queue in the previous batch's
// slice; the caller gives the batch back with recycle once applied.
func (q *inbox) take() []inboxOp {
	q.mu.Lock()
	defer q.mu.Unlock()
	ops := q.ops
	q.ops, q.spare = q.spare[:0], nil
	return ops
}

// recycle keeps an applied batch's slice for a later queue, its references cleared.
func (q *inbox) recycle(ops []inboxOp) {
	clear(ops)
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.spare == nil {
		q.spare = ops[:0]
	}
}

// setKnown records that the engine holds (or, with false, no longer holds) application id.
func (q *inbox) setKnown(id AppID, held bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.known == nil {
		q.known = map[AppID]struct{}{}
	}
	if held {
		q.known[id] = struct{}{}
	} else {
		delete(q.known, id)
	}
}

// lock takes e.mu and applies the queued changes: every method that reads or writes
// engine state enters through it.
func (e *Engine) lock() {
	e.mu.Lock()
	ops := e.inbox.take()
	if len(ops) == 0 {
		e.inbox.recycle(ops)
		return
	}
	for _, op := range ops {
		a, ok := e.apps[op.app]
		if !ok {
			continue // removed after queueing: its changes went with it
		}
		switch op.kind {
		case opAsks:
			e.updateAsks(a, op.asks)
		case opDelivered:
			e.delivered(a, op.delivered)
		case opBlacklist:
			e.updateBlacklist(a, op.add, op.drop)
		}
	}
	e.inbox.recycle(ops)
}

// UpdateAsks replaces the application's table entries for the given asks: each carries the
// absolute outstanding count for its (priority, resource name, capability), 0 cancels.
// The engine keeps asks; the caller must not change them afterwards.
func (e *Engine) UpdateAsks(appID AppID, asks []Ask) error {
	for _, ask := range asks {
		if ask.Count < 0 || ask.Capability.AnyNegative() {
			return fmt.Errorf("application %s: negative ask %+v", appID, ask)
		}
	}
	if len(asks) == 0 {
		return e.inbox.holds(appID)
	}
	return e.inbox.push(inboxOp{app: appID, kind: opAsks, asks: asks})
}

// Delivered records that the AM of appID was handed these containers (the RM's allocate
// answer carried them): asks it sends from now on have seen them.
func (e *Engine) Delivered(appID AppID, ids []ContainerID) {
	_ = e.inbox.push(inboxOp{app: appID, kind: opDelivered, delivered: ids}) // a removed app has no undelivered containers
}

// UpdateBlacklist adds and removes nodes (by node id) from an application's blacklist
// (AllocateRequest.blacklist_request).
func (e *Engine) UpdateBlacklist(appID AppID, additions, removals []string) error {
	return e.inbox.push(inboxOp{app: appID, kind: opBlacklist, add: additions, drop: removals})
}

// holds fails when the engine does not hold application id.
func (q *inbox) holds(id AppID) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.known[id]; !ok {
		return fmt.Errorf("application %s: %w", id, ErrUnknownApp)
	}
	return nil
}
