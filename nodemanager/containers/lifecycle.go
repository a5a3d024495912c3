// Package containers owns the NodeManager's containers and applications: the table of
// them, each container's lifecycle (its phases and the allowed moves, as one table), the
// order of their records in the recovery store, and the lock that guards all of it, which
// nothing outside this package takes. The NodeManager's runner (localize, launch, watch,
// kill), its protocol service and its web pages work through the Table's methods.
//
// A container's whole life:
//
//	Accepted ─launched→ Running ─ended→ Done
//	   │  └────────────ended──────────────↑   (it failed before it ran)
//	   └kill-asked→ Killing ─ended→ Done     (a kill: its process is stopped, or it never starts)
//	Running ─kill-asked→ Killing
//
// Done is final. A restarted NodeManager rebuilds a recovered container through the same
// moves: Accepted, then launched (taken back running) or ended (it ended meanwhile).
package containers

import (
	"fmt"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
)

// Phase is where a container is in its life on this node.
type Phase uint8

const (
	Accepted Phase = iota + 1 // accepted: its resources are localized and its launch prepared
	Running                   // its process runs
	Killing                   // a kill was asked: its process is being stopped, or it never starts
	Done                      // complete: its exit status is known
)

var phaseNames = map[Phase]string{Accepted: "ACCEPTED", Running: "RUNNING", Killing: "KILLING", Done: "DONE"}

func (p Phase) String() string { return phaseNames[p] }

// Event is what moves a container.
type Event uint8

const (
	Launched  Event = iota + 1 // its process started
	KillAsked                  // an AM, the RM or the node asked it to stop
	Ended                      // it completed: its process exited, or it failed or was killed before it ran
)

var eventNames = map[Event]string{Launched: "launched", KillAsked: "kill-asked", Ended: "ended"}

func (e Event) String() string { return eventNames[e] }

type move struct {
	from Phase
	on   Event
}

// moves are every allowed move of a container. A process that started after its
// container was asked to stop (Killing on launched: no move) is stopped by the runner.
var moves = map[move]Phase{
	{Accepted, Launched}:  Running,
	{Accepted, KillAsked}: Killing,
	{Running, KillAsked}:  Killing,
	{Accepted, Ended}:     Done,
	{Running, Ended}:      Done,
	{Killing, Ended}:      Done,
}

// TransitionError is a move the lifecycle does not allow.
type TransitionError struct {
	Container string
	From      Phase
	Event     Event
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("container %s: no move on %s from %s", e.Container, e.Event, e.From)
}

// moveLocked applies ev to c; the table's lock is held.
func (c *Container) moveLocked(ev Event) error {
	to, ok := moves[move{c.phase, ev}]
	if !ok {
		return &TransitionError{Container: c.ID.String(), From: c.phase, Event: ev}
	}
	c.phase = to
	return nil
}

// WireState is the state the RM and AMs are told. As the Java NM (2.7 and 3.x:
// ContainerImpl.getCurrentState) does, a container is RUNNING from the moment it is
// accepted until it is done, localizing included: the 2.7 RM takes any state other than
// RUNNING in a heartbeat for a finished container, and would report a container still
// localizing as completed to its AM. 3.x tells the stages apart in the sub-state.
func (p Phase) WireState() (yarnpb.ContainerStateProto, yarnpb.ContainerSubStateProto) {
	switch p {
	case Done:
		return yarnpb.ContainerStateProto_C_COMPLETE, yarnpb.ContainerSubStateProto_CSS_DONE
	case Killing:
		return yarnpb.ContainerStateProto_C_RUNNING, yarnpb.ContainerSubStateProto_CSS_COMPLETING
	case Running:
		return yarnpb.ContainerStateProto_C_RUNNING, yarnpb.ContainerSubStateProto_CSS_RUNNING
	default:
		return yarnpb.ContainerStateProto_C_RUNNING, yarnpb.ContainerSubStateProto_CSS_SCHEDULED
	}
}

// JavaState names the phase as the Java NM's ContainerState does on its web pages and
// REST API.
func (p Phase) JavaState() string {
	switch p {
	case Accepted:
		return "LOCALIZING"
	case Running:
		return "RUNNING"
	case Killing:
		return "KILLING"
	}
	return "DONE"
}
