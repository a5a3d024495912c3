package rmcore

import (
	"sync"
	"time"

	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

// amGoneExit is the exit status a resumed attempt fails with when its AM container did
// not survive the restart: the cluster lost it, so it does not count toward max-attempts.
const amGoneExit = exitcode.Aborted

// recoveryGate holds scheduling back after a work-preserving restart until the
// NodeManagers that were running have registered again with their containers — or until
// yarn.resourcemanager.work-preserving-recovery.scheduling-wait-ms has passed. The Java RM
// always waits the whole interval (10 s by default); Bobbin knows which nodes to expect
// and opens as soon as the last one is back. A nil gate is open.
type recoveryGate struct {
	mu       sync.Mutex
	since    time.Time
	deadline time.Time
	opened   bool
	expected int
	missing  map[string]bool
	// amWait are the resumed attempts whose AM container no NodeManager has reported yet.
	amWait map[records.ContainerID]records.AttemptID
	// releasedEarly are containers AMs released (re-sending their releases as they
	// re-registered) before their NodeManager came back: they are killed, not rebuilt.
	releasedEarly map[records.ContainerID]bool
	// amSlots lets AM calls through amCallsWhileAwaiting at a time while NodeManagers
	// are awaited (admitAM); nodesDone is closed (closeNodesDone) once every awaited node
	// is back or the gate opened, and the AM calls go freely again.
	amSlots   chan struct{}
	nodesDone chan struct{}
}

// amCallsWhileAwaiting is how many AM calls are handled at once while a restart awaits
// its NodeManagers. Nothing can be allocated until they are back, and their
// registrations (each books hundreds of containers) are what the restart waits for: with
// 10,000 AMs registering again and re-sending their asks at the same moment, the AMs'
// thousands of handlers took the CPU from the 2,000 registrations, which then took 20 s
// on two cores. One at a time, the AMs' calls queue instead, a few milliseconds each.
const amCallsWhileAwaiting = 1

func newRecoveryGate(nodes []string, since, deadline time.Time) *recoveryGate {
	g := &recoveryGate{since: since, deadline: deadline, expected: len(nodes), missing: map[string]bool{}, amWait: map[records.ContainerID]records.AttemptID{},
		releasedEarly: map[records.ContainerID]bool{}, amSlots: make(chan struct{}, amCallsWhileAwaiting), nodesDone: make(chan struct{})}
	for _, n := range nodes {
		g.missing[n] = true
	}
	if len(nodes) == 0 {
		g.closeNodesDoneLocked()
	}
	return g
}

// closeNodesDoneLocked ends the AM calls' queueing (once); g.mu is held.
func (g *recoveryGate) closeNodesDoneLocked() {
	select {
	case <-g.nodesDone: // closed already
	default:
		close(g.nodesDone)
	}
}

// admitAM lets an AM call through: at once when no NodeManager is awaited, else when a
// slot is free or the nodes are back (or the gate opened). The call runs, then calls
// the returned release.
func (g *recoveryGate) admitAM() (release func()) {
	if g == nil {
		return func() {}
	}
	select {
	case <-g.nodesDone:
		return func() {}
	default:
	}
	select {
	case g.amSlots <- struct{}{}:
		return func() { <-g.amSlots }
	case <-g.nodesDone:
		return func() {}
	}
}

// awaitAM notes a resumed attempt and its AM container.
func (g *recoveryGate) awaitAM(att records.AttemptID, am records.ContainerID) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.opened {
		g.amWait[am] = att
	}
}

// nodeBack notes a registered node and the containers it reported; it reports whether
// every expected node is back now.
func (g *recoveryGate) nodeBack(node string, containers []records.ContainerID) bool {
	if g == nil {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.missing, node)
	for _, id := range containers {
		delete(g.amWait, id)
	}
	if len(g.missing) == 0 {
		g.closeNodesDoneLocked()
	}
	return len(g.missing) == 0
}

// noteRelease records a release of a container the RM does not hold (yet).
func (g *recoveryGate) noteRelease(id records.ContainerID) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.releasedEarly[id] = true
}

// released reports (once) whether an AM released id before its node came back.
func (g *recoveryGate) released(id records.ContainerID) bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.releasedEarly[id]
	delete(g.releasedEarly, id)
	return r
}

// check reports whether scheduling may go on at now. The call that opens the gate also
// gets, in lost, the resumed attempts whose AM container no node reported — only when
// every expected node came back (else an AM may run on a node still to come, and the AM
// liveness monitor decides).
// The nodes that did not come back in time are returned in gone.
// waiting reports, without opening it, that the gate stays closed at now: NodeManagers
// are still awaited and the deadline has not come.
func (g *recoveryGate) waiting(now time.Time) bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return !g.opened && len(g.missing) > 0 && now.Before(g.deadline)
}

func (g *recoveryGate) check(now time.Time) (open, justOpened bool, lost []records.AttemptID, gone []string) {
	if g == nil {
		return true, false, nil, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.opened {
		return true, false, nil, nil
	}
	allBack := len(g.missing) == 0
	if !allBack && now.Before(g.deadline) {
		return false, false, nil, nil
	}
	g.opened = true
	g.closeNodesDoneLocked()
	if allBack && g.expected > 0 {
		for _, att := range g.amWait {
			lost = append(lost, att)
		}
	}
	for n := range g.missing {
		gone = append(gone, n)
	}
	g.amWait, g.missing = nil, nil
	return true, true, lost, gone
}
