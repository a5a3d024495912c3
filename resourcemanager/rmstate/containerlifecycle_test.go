package rmstate

import (
	"errors"
	"testing"

	"github.com/bobbin-yarn/bobbin/records"
)

// The container's table, walked: each (phase, event) pair moves as the table says or is
// refused and changes nothing; every phase is reachable from allocated, and released is
// the only one nothing leaves; done and awaitingAck read the phase as the table means it.
func TestContainerLifecycle(t *testing.T) {
	id := records.ContainerID{Attempt: records.AttemptID{App: records.ApplicationID{ClusterTimestamp: 1, ID: 1}, Attempt: 1}, ID: 2}
	want := map[[2]int]containerPhase{
		{int(cAllocated), int(cReportedRunning)}: cRunning,
		{int(cAllocated), int(cEnded)}:           cCompleted,
		{int(cRunning), int(cEnded)}:             cCompleted,
		{int(cAllocated), int(cKilledWithApp)}:   cKilled,
		{int(cRunning), int(cKilledWithApp)}:     cKilled,
		{int(cCompleted), int(cAcknowledged)}:    cReleased,
		{int(cKilled), int(cAcknowledged)}:       cReleased,
	}
	for p := range nContainerPhases {
		for ev := range nContainerEvents {
			c := &Container{ID: id, phase: p}
			err := c.move(ev)
			to, allowed := want[[2]int{int(p), int(ev)}]
			switch {
			case allowed && (err != nil || c.phase != to):
				t.Errorf("%v on %v: %v, phase %v; want %v", p, ev, err, c.phase, to)
			case !allowed && (!errors.As(err, new(*TransitionError)) || c.phase != p):
				t.Errorf("%v on %v: %v, phase %v; want refused and unchanged", p, ev, err, c.phase)
			}
		}
	}
	reached := map[containerPhase]bool{cAllocated: true}
	for changed := true; changed; {
		changed = false
		for p := range nContainerPhases {
			for ev := range nContainerEvents {
				if to := containerMoves[p][ev]; to != noMove && reached[p] && !reached[to] {
					reached[to], changed = true, true
				}
			}
		}
	}
	for p := range nContainerPhases {
		if !reached[p] {
			t.Errorf("%v: not reachable from allocated", p)
		}
		leaves := false
		for ev := range nContainerEvents {
			leaves = leaves || containerMoves[p][ev] != noMove
		}
		if leaves == (p == cReleased) {
			t.Errorf("%v: leaves %v", p, leaves)
		}
		c := &Container{phase: p}
		if c.done() != (p == cCompleted || p == cKilled || p == cReleased) || c.awaitingAck() != (p == cCompleted) {
			t.Errorf("%v: done %v, awaiting its ack %v", p, c.done(), c.awaitingAck())
		}
	}
}
