package statestore

import (
	"sync"
)

// groupCommit combines the application writes of concurrent callers into one
// transaction, so one commit (two fsyncs) serves them all. Each transaction costs the
// same whether it writes one record or a thousand, and without it every caller's write
// waited for every earlier caller's own commit: after a restart with 10,000 running
// applications, their AMs registering again (each registration is written) queued for
// one commit each.
//
// There is no goroutine of its own: the first caller to find no commit running leads,
// committing what is pending until nothing is, while the others wait for their batch's
// result. A caller alone commits at once, so an idle store adds no delay.
type groupCommit struct {
	// commit writes records in one transaction.
	commit func(recs []encodedApp) error

	mu      sync.Mutex
	pending []*appWrite
	leading bool // a caller is committing
}

// encodedApp is an application's record and its encoding (made by its caller, so
// callers encode in parallel and the commit only writes).
type encodedApp struct {
	rec  *AppRecord
	data []byte
}

// appWrite is one caller's records and, once committed, their result.
type appWrite struct {
	recs []encodedApp
	err  error
	done chan struct{}
}

// maxGroup bounds the records in one transaction, so a burst of writers does not
// build one huge one.
const maxGroup = 2048

// put writes recs, grouped with whatever other callers write meanwhile, and returns
// their result.
func (g *groupCommit) put(recs []encodedApp) error {
	w := &appWrite{recs: recs, done: make(chan struct{})}
	g.mu.Lock()
	g.pending = append(g.pending, w)
	if g.leading {
		g.mu.Unlock()
		<-w.done
		return w.err
	}
	g.leading = true
	for len(g.pending) > 0 {
		batch := g.take()
		g.mu.Unlock()
		g.run(batch)
		g.mu.Lock()
	}
	g.leading = false
	g.mu.Unlock()
	return w.err // its batch ran in the loop
}

// take removes the next batch from pending; g.mu is held.
func (g *groupCommit) take() []*appWrite {
	n, count := 0, 0
	for n < len(g.pending) && (n == 0 || count+len(g.pending[n].recs) <= maxGroup) {
		count += len(g.pending[n].recs)
		n++
	}
	batch := g.pending[:n:n]
	g.pending = append([]*appWrite(nil), g.pending[n:]...)
	return batch
}

// run commits a batch in one transaction. If that fails, each caller's records are
// committed alone, so a caller hears only its own write's error.
func (g *groupCommit) run(batch []*appWrite) {
	defer func() {
		for _, w := range batch {
			close(w.done)
		}
	}()
	if len(batch) == 1 {
		batch[0].err = g.commit(batch[0].recs)
		return
	}
	var all []encodedApp
	for _, w := range batch {
		all = append(all, w.recs...)
	}
	if g.commit(all) == nil {
		return
	}
	for _, w := range batch {
		w.err = g.commit(w.recs)
	}
}
