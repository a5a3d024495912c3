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
}

func newRecoveryGate(nodes []string, since, deadline time.Time) *recoveryGate {
	g := &recoveryGate{since: since, deadline: deadline, expected: len(nodes), missing: map[string]bool{}, amWait: map[records.ContainerID]records.AttemptID{}}
	for _, n := range nodes {
		g.missing[n] = true
	}
	return g
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
	return len(g.missing) == 0
}

// check reports whether scheduling may go on at now. The call that opens the gate also
// gets, in lost, the resumed attempts whose AM container no node reported — only when
// every expected node came back (else an AM may run on a node still to come, and the AM
// liveness monitor decides).
func (g *recoveryGate) check(now time.Time) (open, justOpened bool, lost []records.AttemptID, allBack bool) {
	if g == nil {
		return true, false, nil, true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.opened {
		return true, false, nil, true
	}
	allBack = len(g.missing) == 0
	if !allBack && now.Before(g.deadline) {
		return false, false, nil, false
	}
	g.opened = true
	if allBack && g.expected > 0 {
		for _, att := range g.amWait {
			lost = append(lost, att)
		}
	}
	g.amWait, g.missing = nil, nil
	return true, true, lost, allBack
}
