// The container table's side facing allocate answers: what an answer takes, and what
// it leaves for the status applier to settle.

package rmstate

import (
	"time"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
)

// Settlement is what DrainUnsettled leaves for later, so that an allocate call holds the table's
// lock for a few map operations rather than a few per container: the containers its
// call acknowledged, which their NodeManagers may now forget, and those it handed out,
// whose allocation-expiry clocks start at At.
type Settlement struct {
	acked, handed []*Container
	At            time.Time
}

// Size is how many containers s touches.
func (s Settlement) Size() int { return len(s.acked) + len(s.handed) }

// DrainUnsettled takes what an attempt's allocate answer carries: its newly allocated
// containers (handed out now: they may expire unused from here, once the Settlement is
// settled), its completed statuses (which the next allocate acknowledges) as the
// answer's completed_container_statuses bytes, and the nodes it needs NMTokens for. The
// caller passes the Settlement to Settle.
func (t *Containers) DrainUnsettled(att records.AttemptID, now time.Time) (allocated []*Container, completed []byte, need []*yarnpb.NodeIdProto, s Settlement) {
	s.At = now
	b := t.boxes.get(att)
	if b == nil {
		return nil, nil, nil, s
	}
	var done []doneStatus
	allocated, done, s.acked, need = b.take()
	s.handed = allocated
	// The statuses are built outside the box's lock: done is this call's alone now, and what
	// they read of their containers (ids) never changes.
	if len(done) > 0 {
		completed = make([]byte, 0, len(done)*completedEntryBytes)
	}
	for _, d := range done {
		completed = d.appendEntry(completed)
	}
	return allocated, completed, need, s
}

// Settle applies settlements under one hold of the lock: acknowledged containers are
// forgotten, and handed-out ones that have neither ended nor been reported by their
// NodeManager meanwhile start their expiry clocks.
func (t *Containers) Settle(ss []Settlement) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, s := range ss {
		for _, c := range s.acked {
			t.forgetLocked(c)
		}
		for _, rc := range s.handed {
			if !rc.done() && !rc.reported && rc.handedOut == 0 {
				t.handOutLocked(rc, s.At)
			}
		}
	}
}
