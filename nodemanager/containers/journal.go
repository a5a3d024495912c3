package containers

import (
	"sync"

	"github.com/bobbin-yarn/bobbin/nodemanager/nmstore"
)

// Journal orders the NodeManager's writes to its recovery store
// (yarn.nodemanager.recovery.enabled): one at a time, none after Close. A failed write is
// reported to onErr and the node goes on: its containers are not at risk now, but a
// restart would not know what the write would have said.
type Journal struct {
	mu     sync.Mutex
	store  *nmstore.Store // nil: no recovery
	closed bool
	onErr  func(err error, what string)
}

// NewJournal is a journal with no store yet (Open gives it one).
func NewJournal(onErr func(err error, what string)) *Journal {
	return &Journal{onErr: onErr}
}

// Open makes s the store written to.
func (j *Journal) Open(s *nmstore.Store) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.store = s
}

// Enabled reports whether the node keeps a recovery store (closed or not).
func (j *Journal) Enabled() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.store != nil
}

// Location names the store ("" without one).
func (j *Journal) Location() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.store == nil {
		return ""
	}
	return j.store.Location()
}

// Write runs one write on the store, if there is one; what names it in a failure.
func (j *Journal) Write(what string, f func(*nmstore.Store) error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.store == nil || j.closed {
		return
	}
	if err := f(j.store); err != nil && j.onErr != nil {
		j.onErr(err, what)
	}
}

// Close closes the store; later writes do nothing.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.store == nil || j.closed {
		return nil
	}
	j.closed = true
	return j.store.Close()
}
