package rpc

import (
	"sync"
	"sync/atomic"
)

// DefaultReadBudget bounds the request bytes a server's connections hold at once, read or
// being read, when ServerOptions.ReadBudget is not set: four frames of
// ipc.maximum.data.length's default.
const DefaultReadBudget = 4 * DefaultMaxDataLength

// PreAuthMaxFrame is the largest frame a connection may send before it is established
// (preamble, SASL exchange, connection context): every legitimate handshake frame is a
// few kilobytes (a Kerberos ticket with a large PAC some 64 KiB), so an unauthenticated
// peer cannot make the server allocate ipc.maximum.data.length for it.
const PreAuthMaxFrame = 1 << 20

// PreAuthBudget bounds the bytes a server holds of frames from connections not yet
// established (a few kilobytes each when legitimate); when unauthenticated peers have
// spent it, their frames are refused rather than waited for.
const PreAuthBudget = 16 << 20

// readChunk is the room first made for a frame's body, doubled as its bytes arrive:
// memory follows the bytes that arrive, not the length a peer announces.
const readChunk = 64 << 10

// ReadBudget bounds the request bytes held in memory across connections (of one server, or
// of all a daemon's servers sharing it). A reader takes a frame's length from it before it
// reads the body and gives it back when the call is done with the bytes; when it is spent,
// readers wait (the connections' bytes stay in the kernel, and TCP slows their senders)
// instead of allocating. A frame larger than the whole budget is still read when nothing
// else is held, so no frame that ipc.maximum.data.length admits waits forever.
type ReadBudget struct {
	limit int64
	used  atomic.Int64
	// waiters counts readers waiting for bytes; release wakes them (closing freed) only
	// when there are some, so the common path takes no lock.
	waiters atomic.Int32
	mu      sync.Mutex
	freed   chan struct{} // closed and replaced when bytes are given back to waiters
}

// NewReadBudget returns a budget of limit bytes (DefaultReadBudget when limit <= 0).
func NewReadBudget(limit int64) *ReadBudget {
	if limit <= 0 {
		limit = DefaultReadBudget
	}
	return &ReadBudget{limit: limit, freed: make(chan struct{})}
}

// take takes n bytes if they fit (or nothing is held).
func (b *ReadBudget) take(n int64) bool {
	for {
		u := b.used.Load()
		if u+n > b.limit && u != 0 {
			return false
		}
		if b.used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

// acquire takes n bytes, waiting while they do not fit; false when stop closed first.
func (b *ReadBudget) acquire(n int64, stop <-chan struct{}) bool {
	if b.take(n) {
		return true
	}
	b.waiters.Add(1)
	defer b.waiters.Add(-1)
	for {
		b.mu.Lock()
		freed := b.freed
		b.mu.Unlock()
		// Registered as a waiter before this try: a release after it wakes us, one
		// before it left room this try sees.
		if b.take(n) {
			return true
		}
		select {
		case <-freed:
		case <-stop:
			return false
		}
	}
}

// release gives back n bytes.
func (b *ReadBudget) release(n int64) {
	if n == 0 {
		return
	}
	b.used.Add(-n)
	if b.waiters.Load() > 0 {
		b.mu.Lock()
		close(b.freed)
		b.freed = make(chan struct{})
		b.mu.Unlock()
	}
}

// InUse is how many bytes are held now.
func (b *ReadBudget) InUse() int64 { return b.used.Load() }
