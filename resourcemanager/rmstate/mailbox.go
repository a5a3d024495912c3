package rmstate

import (
	"sync"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
)

// mailbox is what one attempt's next allocate answer takes, under its own lock: an
// allocate call then never waits for the container table's lock, which the status
// applier and the scheduling pass hold in turns at tens of thousands of containers a
// second (traced at saturation: allocate calls spent 4.4 of every 3 s blocked on it).
// Writers hold the table's lock too (the lock order is Containers.mu, mailboxes.mu,
// mailbox.mu); the answer holds only this one.
type mailbox struct {
	mu        sync.Mutex
	allocated []*Container // allocated, not yet handed to the AM
	// completed are the finished containers whose status the attempt has not pulled
	// yet; sentToAM those whose status went out in the attempt's last allocate response.
	// As in the Java RM, a NodeManager forgets a completed container (and stops answering
	// getContainerStatuses for it) only once its AM has had the status and called again.
	completed []doneStatus
	sentToAM  []*Container
	nmTokens  nodeSet // the nodes the attempt has an NMToken for
}

func (b *mailbox) post(rc *Container) {
	b.mu.Lock()
	b.allocated = append(b.allocated, rc)
	b.mu.Unlock()
}

func (b *mailbox) postDone(d doneStatus) {
	b.mu.Lock()
	b.completed = append(b.completed, d)
	b.mu.Unlock()
}

func (b *mailbox) forgetTokens() {
	b.mu.Lock()
	b.nmTokens = nil
	b.mu.Unlock()
}

// take empties the box for an answer: its allocated containers and completed statuses,
// the containers whose statuses the last answer carried (this call acknowledges them),
// and the nodes of the allocated containers the attempt has no NMToken for yet.
func (b *mailbox) take() (allocated []*Container, done []doneStatus, acked []*Container, need []*yarnpb.NodeIdProto) {
	b.mu.Lock()
	defer b.mu.Unlock()
	allocated, done, acked = b.allocated, b.completed, b.sentToAM
	b.allocated, b.completed, b.sentToAM = nil, nil, nil
	if len(done) > 0 {
		b.sentToAM = make([]*Container, len(done))
		for i, d := range done {
			b.sentToAM[i] = d.c
		}
	}
	for _, rc := range allocated {
		if b.nmTokens.add(int(rc.nodeIdx)) {
			need = append(need, rc.At.ID)
		}
	}
	return allocated, done, acked, need
}

// empty takes everything out of a box whose attempt ended and returns the completed
// containers in it, which their NodeManagers may now forget.
func (b *mailbox) empty() (forget []*Container) {
	b.mu.Lock()
	defer b.mu.Unlock()
	forget = b.sentToAM
	for _, d := range b.completed {
		forget = append(forget, d.c)
	}
	b.allocated, b.completed, b.sentToAM, b.nmTokens = nil, nil, nil, nil
	return forget
}

// mailboxes are the attempts' mailboxes. Allocate answers look theirs up under the read
// lock; boxes are made and removed under the write lock, once per attempt.
type mailboxes struct {
	mu sync.RWMutex
	m  map[records.AttemptID]*mailbox
}

// get is att's box, or nil.
func (x *mailboxes) get(att records.AttemptID) *mailbox {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.m[att]
}

// of is att's box, made if it has none.
func (x *mailboxes) of(att records.AttemptID) *mailbox {
	if b := x.get(att); b != nil {
		return b
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	b := x.m[att]
	if b == nil {
		if x.m == nil {
			x.m = map[records.AttemptID]*mailbox{}
		}
		b = &mailbox{}
		x.m[att] = b
	}
	return b
}

// remove takes att's box out (nil if it has none).
func (x *mailboxes) remove(att records.AttemptID) *mailbox {
	x.mu.Lock()
	defer x.mu.Unlock()
	b := x.m[att]
	delete(x.m, att)
	return b
}

// attemptsOf adds to set the attempts of app that have a box.
func (x *mailboxes) attemptsOf(set map[records.AttemptID]bool, app records.ApplicationID) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	for att := range x.m {
		if att.App == app {
			set[att] = true
		}
	}
}

// forgetTokens forgets every attempt's NMTokens.
func (x *mailboxes) forgetTokens() {
	x.mu.RLock()
	defer x.mu.RUnlock()
	for _, b := range x.m {
		b.forgetTokens()
	}
}
