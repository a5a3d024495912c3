package statestore

import (
	"fmt"
	"sync"
)

// groupCommit combines the application writes of concurrent callers into one
// transaction, so one commit (two fsyncs) serves them all. Each transaction costs the
// same whether it writes one record or a thousand, and without it every caller's write
// waited for every earlier caller's own commit: after a restart with 10,000 running
// applications, their AMs registering again queued for one commit each.
//
// There is no goroutine of its own: the first caller to find no commit running leads,
// committing what is pending until its own records are committed, then hands the lead to
// the oldest caller still waiting (so no caller leads through a whole burst of others'
// writes). A caller alone commits at once, so an idle store adds no delay.
type groupCommit struct {
	// commit writes records in one transaction.
	commit func(recs []encodedApp) error
	// perRecord says whether a shared commit's error may be one record's (then each
	// caller's records are committed alone, so only the culprit's caller hears it); nil:
	// never, every caller of the batch hears the error.
	perRecord func(err error) bool

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

// appWrite is one caller's records and, once committed, their result. wake tells a
// waiting caller that its records were committed (done) or, if not, that it leads now.
type appWrite struct {
	recs []encodedApp
	err  error
	done bool
	wake chan struct{}
}

// maxGroup bounds the records in one transaction, so a burst of writers does not
// build one huge one.
const maxGroup = 2048

// put writes recs, grouped with whatever other callers write meanwhile, and returns
// their result.
func (g *groupCommit) put(recs []encodedApp) error {
	w := &appWrite{recs: recs, wake: make(chan struct{}, 1)}
	g.mu.Lock()
	g.pending = append(g.pending, w)
	if g.leading {
		g.mu.Unlock()
		<-w.wake
		if w.done {
			return w.err
		}
		g.mu.Lock() // handed the lead, its records still pending
	}
	g.leading = true
	for !w.done {
		batch := g.take()
		g.mu.Unlock()
		g.run(batch, w)
		g.mu.Lock()
	}
	if len(g.pending) > 0 {
		g.pending[0].wake <- struct{}{} // the oldest waiter leads now
	} else {
		g.leading = false
	}
	g.mu.Unlock()
	return w.err
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

// run commits a batch in one transaction for the leader self, and wakes the batch's
// other callers. If it fails with an error that may be one record's, each caller's
// records are committed alone, so a caller hears only its own write's error.
func (g *groupCommit) run(batch []*appWrite, self *appWrite) {
	var all []encodedApp
	for _, w := range batch {
		all = append(all, w.recs...)
	}
	err := g.safeCommit(all)
	if err != nil && len(batch) > 1 && g.perRecord != nil && g.perRecord(err) {
		for _, w := range batch {
			w.err = g.safeCommit(w.recs)
		}
	} else {
		for _, w := range batch {
			w.err = err
		}
	}
	for _, w := range batch {
		w.done = true
		if w != self {
			w.wake <- struct{}{}
		}
	}
}

// safeCommit is commit with a panic (bbolt panics on some corrupt pages) turned into the
// callers' error: the lead must go on, and no caller may hear its write succeeded.
func (g *groupCommit) safeCommit(recs []encodedApp) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("state store commit failed: %v", p)
		}
	}()
	return g.commit(recs)
}
