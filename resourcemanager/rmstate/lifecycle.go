package rmstate

import (
	"fmt"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

// The application, attempt and node lifecycles: their states, the events that move them
// and every allowed move, as tables (event × state → state), like the Java RM's
// StateMachineFactory for RMAppImpl, RMAppAttemptImpl and RMNodeImpl but in the wire's
// states. A state changes only here (the structure test holds every other file to it);
// what a move does besides — times, diagnostics, the engine, the store — its caller does.
// (A container's life in the RM: containerlifecycle.go.)
//
//	application:  NEW ─accepted→ ACCEPTED ─am-registered→ RUNNING ─am-unregistered→ FINISHED
//	                 └rejected→ FAILED     ↑ attempt-retried ┘  ├failed→ FAILED
//	                                                            └killed→ KILLED
//	attempt:      SCHEDULED ─am-allocated→ ALLOCATED ─am-launched→ LAUNCHED ─am-registered→ RUNNING
//	              RUNNING ─am-unregistered→ FINISHING ─am-exited→ FINISHED
//	              any of the live ones ─failed→ FAILED, ─killed→ KILLED
//	node:         (registers) RUNNING ⇄ UNHEALTHY; RUNNING ─expired→ LOST; ─rebooted→ REBOOTED
//	              RUNNING, UNHEALTHY ─decommission→ DECOMMISSIONING ─decommissioned→ DECOMMISSIONED
//	              DECOMMISSIONING ─recommissioned→ RUNNING; ─shutdown→ SHUTDOWN

// appNew is an application not accepted yet: being built from its submission. It is no
// state of the wire's, which starts at NEW (1) and never shows this one.
const appNew = yarnpb.YarnApplicationStateProto(0)

// AppEvent is what moves an application.
type AppEvent uint8

const (
	AppAccepted       AppEvent = iota + 1 // its submission is admitted
	AppRejected                           // its submission is refused (limits, tokens that cannot be renewed)
	AppAMRegistered                       // its current attempt's AM registered
	AppAMUnregistered                     // its AM unregistered: the outcome is the AM's
	AppAttemptRetried                     // an attempt ended and the next one starts (or a restart runs it again)
	AppFailed                             // an attempt failed with none left, or it cannot go on after a restart
	AppKilled                             // a user or the RM killed it
)

var appEventNames = map[AppEvent]string{AppAccepted: "accepted", AppRejected: "rejected", AppAMRegistered: "am-registered",
	AppAMUnregistered: "am-unregistered", AppAttemptRetried: "attempt-retried", AppFailed: "failed", AppKilled: "killed"}

func (e AppEvent) String() string { return appEventNames[e] }

// move is one line of a lifecycle's table: from a state, on an event.
type move[S, E comparable] struct {
	from S
	on   E
}

// next is where a lifecycle's table leads from a state on an event; a move it does not
// allow is a TransitionError naming what moves, the state and the event.
func next[S interface {
	comparable
	String() string
}, E interface {
	comparable
	String() string
}](table map[move[S, E]]S, what string, from S, on E) (S, error) {
	to, ok := table[move[S, E]{from, on}]
	if !ok {
		return from, &TransitionError{What: what, From: from.String(), Event: on.String()}
	}
	return to, nil
}

type appMove = move[yarnpb.YarnApplicationStateProto, AppEvent]

const (
	appAccepted = yarnpb.YarnApplicationStateProto_ACCEPTED
	appRunning  = yarnpb.YarnApplicationStateProto_RUNNING
	appFinished = yarnpb.YarnApplicationStateProto_FINISHED
	appFailed   = yarnpb.YarnApplicationStateProto_FAILED
	appKilled   = yarnpb.YarnApplicationStateProto_KILLED
)

// appMoves are every allowed move of an application.
var appMoves = map[appMove]yarnpb.YarnApplicationStateProto{
	{appNew, AppAccepted}: appAccepted,
	{appNew, AppRejected}: appFailed,
	// Refused by the submission limits, checked as it is stored.
	{appAccepted, AppRejected}: appFailed,

	{appAccepted, AppAMRegistered}: appRunning,
	// An AM registering again: after a work-preserving restart or failover.
	{appRunning, AppAMRegistered}: appRunning,

	{appRunning, AppAMUnregistered}: appFinished,
	// An AM may unregister with the application still ACCEPTED (the Java RM's
	// ACCEPTED → FINAL_SAVING on ATTEMPT_UNREGISTERED).
	{appAccepted, AppAMUnregistered}: appFinished,

	{appAccepted, AppAttemptRetried}: appAccepted,
	{appRunning, AppAttemptRetried}:  appAccepted,

	{appAccepted, AppFailed}: appFailed,
	{appRunning, AppFailed}:  appFailed,

	{appNew, AppKilled}:      appKilled,
	{appAccepted, AppKilled}: appKilled,
	{appRunning, AppKilled}:  appKilled,
}

// Move applies ev to the application. A move the table does not allow changes nothing
// and is an error naming the state and the event.
func (a *App) Move(ev AppEvent) error {
	to, err := next(appMoves, a.ID.String(), a.state, ev)
	a.state = to
	return err
}

// State is the application's state.
func (a *App) State() yarnpb.YarnApplicationStateProto { return a.state }

// Ended reports whether the attempt reached a final state.
func (at *Attempt) Ended() bool {
	switch at.state {
	case yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FINISHED, yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FAILED,
		yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_KILLED:
		return true
	}
	return false
}

// Finished reports whether the app reached a final state.
func (a *App) Finished() bool {
	switch a.state {
	case yarnpb.YarnApplicationStateProto_FINISHED, yarnpb.YarnApplicationStateProto_FAILED, yarnpb.YarnApplicationStateProto_KILLED:
		return true
	}
	return false
}

// Over reports whether nothing of the application runs any more: it reached a final
// state and no AM container is left to exit. After its AM unregistered an application is
// FINISHED to clients, but its attempt is FINISHING until the AM container exits (a
// MapReduce AM serves its client for 5 s more): that container is the application's still,
// as the Java RM's FINISHING application is not in a final state.
func (a *App) Over() bool {
	return a.Finished() && (a.Attempt == nil || a.Attempt.State() != yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FINISHING)
}

// AttemptEvent is what moves an application attempt.
type AttemptEvent uint8

const (
	AttemptAMAllocated    AttemptEvent = iota + 1 // its AM container was allocated
	AttemptAMLaunched                             // its AM container was started (an unmanaged AM: as the attempt exists)
	AttemptAMRegistered                           // its AM registered
	AttemptAMUnregistered                         // its AM unregistered; its container may still run
	AttemptAMExited                               // after unregistering, its AM container exited (or is given up on)
	AttemptFailed                                 // its AM failed, expired, or a restart cannot carry it on
	AttemptKilled                                 // its application was killed
)

var attemptEventNames = map[AttemptEvent]string{AttemptAMAllocated: "am-allocated", AttemptAMLaunched: "am-launched",
	AttemptAMRegistered: "am-registered", AttemptAMUnregistered: "am-unregistered", AttemptAMExited: "am-exited",
	AttemptFailed: "failed", AttemptKilled: "killed"}

func (e AttemptEvent) String() string { return attemptEventNames[e] }

type attemptMove = move[yarnpb.YarnApplicationAttemptStateProto, AttemptEvent]

const (
	attScheduled = yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_SCHEDULED
	attAllocated = yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_ALLOCATED
	attLaunched  = yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_LAUNCHED
	attRunning   = yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_RUNNING
	attFinishing = yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FINISHING
	attFinished  = yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FINISHED
	attFailed    = yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FAILED
	attKilled    = yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_KILLED
)

// attemptMoves are every allowed move of an attempt.
var attemptMoves = map[attemptMove]yarnpb.YarnApplicationAttemptStateProto{
	{attScheduled, AttemptAMAllocated}: attAllocated,

	{attAllocated, AttemptAMLaunched}: attLaunched,
	// An unmanaged AM is launched by its client: its attempt is launched as it exists.
	{attScheduled, AttemptAMLaunched}: attLaunched,
	// The AM registered before the launch's answer was handled: it stays RUNNING.
	{attRunning, AttemptAMLaunched}: attRunning,

	{attAllocated, AttemptAMRegistered}: attRunning,
	{attLaunched, AttemptAMRegistered}:  attRunning,
	// Again, after a work-preserving restart or failover.
	{attRunning, AttemptAMRegistered}: attRunning,

	{attRunning, AttemptAMUnregistered}: attFinishing,
	{attFinishing, AttemptAMExited}:     attFinished,

	{attScheduled, AttemptFailed}: attFailed,
	{attAllocated, AttemptFailed}: attFailed,
	{attLaunched, AttemptFailed}:  attFailed,
	{attRunning, AttemptFailed}:   attFailed,

	{attScheduled, AttemptKilled}: attKilled,
	{attAllocated, AttemptKilled}: attKilled,
	{attLaunched, AttemptKilled}:  attKilled,
	{attRunning, AttemptKilled}:   attKilled,
}

// NewAttempt is an application's attempt as it starts: SCHEDULED, its AM container to be
// asked for.
func NewAttempt(id records.AttemptID, now int64) *Attempt {
	return &Attempt{ID: id, state: attScheduled, StartTime: now, AMExitStatus: exitcode.Invalid}
}

// Move applies ev to the attempt. A move the table does not allow changes nothing and is
// an error naming the state and the event.
func (at *Attempt) Move(ev AttemptEvent) error {
	to, err := next(attemptMoves, at.ID.String(), at.state, ev)
	at.state = to
	return err
}

// State is the attempt's state.
func (at *Attempt) State() yarnpb.YarnApplicationAttemptStateProto { return at.state }

// TransitionError is a move a lifecycle does not allow (the Java RM's
// InvalidStateTransitionException).
type TransitionError struct {
	What, From, Event string
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("%s: no move on %s from state %s", e.What, e.Event, e.From)
}

// NodeEvent is what moves a NodeManager's node.
type NodeEvent uint8

const (
	NodeExpired        NodeEvent = iota + 1 // silent past yarn.nm.liveness-monitor.expiry-interval-ms
	NodeRebooted                            // its heartbeat fell too far behind: it must register again
	NodeUnhealthy                           // its health check failed
	NodeHealthy                             // its health check passes again
	NodeShutdown                            // it unregistered
	NodeDecommission                        // excluded gracefully: it decommissions as its containers end
	NodeDecommissioned                      // excluded at once, or its graceful decommission ended
	NodeRecommissioned                      // allowed again while decommissioning
)

var nodeEventNames = map[NodeEvent]string{NodeExpired: "expired", NodeRebooted: "rebooted", NodeUnhealthy: "unhealthy", NodeHealthy: "healthy",
	NodeShutdown: "shutdown", NodeDecommission: "decommission", NodeDecommissioned: "decommissioned", NodeRecommissioned: "recommissioned"}

func (e NodeEvent) String() string { return nodeEventNames[e] }

type nodeMove = move[yarnpb.NodeStateProto, NodeEvent]

const (
	nodeRunning         = yarnpb.NodeStateProto_NS_RUNNING
	nodeUnhealthy       = yarnpb.NodeStateProto_NS_UNHEALTHY
	nodeDecommissioning = yarnpb.NodeStateProto_NS_DECOMMISSIONING
	nodeDecommissioned  = yarnpb.NodeStateProto_NS_DECOMMISSIONED
	nodeLost            = yarnpb.NodeStateProto_NS_LOST
	nodeRebooted        = yarnpb.NodeStateProto_NS_REBOOTED
	nodeShutdown        = yarnpb.NodeStateProto_NS_SHUTDOWN
)

// nodeMoves are every allowed move of a node. A node starts RUNNING as it registers
// (DECOMMISSIONING when it registers again while decommissioning, DECOMMISSIONED when a
// restarted RM lists it again); one that registers again starts anew.
var nodeMoves = map[nodeMove]yarnpb.NodeStateProto{
	{nodeRunning, NodeExpired}: nodeLost,

	{nodeRunning, NodeRebooted}:         nodeRebooted,
	{nodeUnhealthy, NodeRebooted}:       nodeRebooted,
	{nodeDecommissioning, NodeRebooted}: nodeRebooted,

	{nodeRunning, NodeUnhealthy}: nodeUnhealthy,
	{nodeUnhealthy, NodeHealthy}: nodeRunning,

	{nodeRunning, NodeShutdown}:         nodeShutdown,
	{nodeUnhealthy, NodeShutdown}:       nodeShutdown,
	{nodeDecommissioning, NodeShutdown}: nodeShutdown,
	{nodeDecommissioned, NodeShutdown}:  nodeShutdown,
	{nodeLost, NodeShutdown}:            nodeShutdown,
	{nodeRebooted, NodeShutdown}:        nodeShutdown,

	{nodeRunning, NodeDecommission}:   nodeDecommissioning,
	{nodeUnhealthy, NodeDecommission}: nodeDecommissioning,

	{nodeRunning, NodeDecommissioned}:         nodeDecommissioned,
	{nodeUnhealthy, NodeDecommissioned}:       nodeDecommissioned,
	{nodeDecommissioning, NodeDecommissioned}: nodeDecommissioned,

	{nodeDecommissioning, NodeRecommissioned}: nodeRunning,
}

// nodeStarts are the states a node is registered in.
var nodeStarts = map[yarnpb.NodeStateProto]bool{nodeRunning: true, nodeDecommissioning: true, nodeDecommissioned: true}

// start gives a node being registered its first state.
func (n *Node) start(st yarnpb.NodeStateProto) error {
	if !nodeStarts[st] {
		return &TransitionError{What: n.Key, From: "(registering)", Event: st.String()}
	}
	n.state = st
	return nil
}

// move applies ev to the node; the registry's lock is held (Nodes.moveLocked keeps the
// per-state counts).
func (n *Node) move(ev NodeEvent) error {
	to, err := next(nodeMoves, n.Key, n.state, ev)
	n.state = to
	return err
}

// State is the node's state.
func (n *Node) State() yarnpb.NodeStateProto { return n.state }
