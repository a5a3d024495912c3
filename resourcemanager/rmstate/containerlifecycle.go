package rmstate

// A container's life in the RM, as one table of moves (the Java RM's RMContainerImpl, in
// fewer states): where a container is in its life is its phase, changed only by move. What
// else the container table keeps of it — on its node's starting list, its allocation-expiry
// clock, in the index — are memberships the table keeps beside the phase.
//
//	allocated ─reported-running→ running ─completed→ completed ─acknowledged→ released
//	allocated ─completed→ completed (it ended, or expired, before its NodeManager said it ran)
//	allocated, running ─killed→ killed (its application ended) ─acknowledged→ released
//
// completed: the AM has yet to hear of it; released: its NodeManager is told to forget it.
// The table is an array indexed by phase and event: it is on the heartbeat's path.

// containerPhase is where a container is in its life.
type containerPhase uint8

const (
	cAllocated containerPhase = iota // allocated; its NodeManager has not said it runs
	cRunning                         // its NodeManager reported it running
	cCompleted                       // it ended; its status waits for its AM
	cKilled                          // killed with its application; no AM waits for it
	cReleased                        // done with: its NodeManager is told to forget it
	nContainerPhases
)

var containerPhaseNames = [nContainerPhases]string{"allocated", "running", "completed", "killed", "released"}

func (p containerPhase) String() string { return containerPhaseNames[p] }

// containerEvent is what moves a container.
type containerEvent uint8

const (
	cReportedRunning containerEvent = iota // its NodeManager reported it running
	cEnded                                 // it completed, failed, was released or expired
	cKilledWithApp                         // its application ended and the RM kills it
	cAcknowledged                          // its AM heard it ended, or nobody needs to
	nContainerEvents
)

var containerEventNames = [nContainerEvents]string{"reported-running", "completed", "killed", "acknowledged"}

func (e containerEvent) String() string { return containerEventNames[e] }

// noMove marks a move the table does not allow.
const noMove = nContainerPhases

// containerMoves are every allowed move of a container; noMove elsewhere.
var containerMoves = func() (t [nContainerPhases][nContainerEvents]containerPhase) {
	for p := range t {
		for e := range t[p] {
			t[p][e] = noMove
		}
	}
	t[cAllocated][cReportedRunning] = cRunning
	t[cAllocated][cEnded] = cCompleted
	t[cRunning][cEnded] = cCompleted
	t[cAllocated][cKilledWithApp] = cKilled
	t[cRunning][cKilledWithApp] = cKilled
	t[cCompleted][cAcknowledged] = cReleased
	t[cKilled][cAcknowledged] = cReleased
	return t
}()

// move applies ev to the container. A move the table does not allow changes nothing and
// is an error naming the container, its phase and the event.
func (c *Container) move(ev containerEvent) error {
	to := containerMoves[c.phase][ev]
	if to == noMove {
		return &TransitionError{What: c.ID.String(), From: c.phase.String(), Event: ev.String()}
	}
	c.phase = to
	return nil
}

// done: the container ended (completed, killed or released).
func (c *Container) done() bool { return c.phase >= cCompleted }

// awaitingAck: it ended and its NodeManager is told to forget it only once the AM has had
// its completed status (see drainFor).
func (c *Container) awaitingAck() bool { return c.phase == cCompleted }
