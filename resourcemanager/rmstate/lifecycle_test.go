package rmstate

import (
	"errors"
	"testing"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
)

func mustMove(t *testing.T, a *App, ev AppEvent) {
	t.Helper()
	if err := a.Move(ev); err != nil {
		t.Fatal(err)
	}
}

// The application's table, walked: every (state, event) pair either moves as the table
// says or is refused with a TransitionError, leaving the state; the final states have no
// move; every state the table names is reachable from NEW.
func TestApplicationLifecycle(t *testing.T) {
	states := []yarnpb.YarnApplicationStateProto{appNew}
	for v := range yarnpb.YarnApplicationStateProto_name {
		states = append(states, yarnpb.YarnApplicationStateProto(v))
	}
	for _, from := range states {
		for ev := range appEventNames {
			a := &App{ID: records.ApplicationID{ClusterTimestamp: 1, ID: 1}, state: from}
			to, allowed := appMoves[appMove{from, ev}]
			err := a.Move(ev)
			switch {
			case allowed && (err != nil || a.State() != to):
				t.Errorf("%v on %v: %v, state %v; want %v", from, ev, err, a.State(), to)
			case !allowed && (!errors.As(err, new(*TransitionError)) || a.State() != from):
				t.Errorf("%v on %v: %v, state %v; want refused and unchanged", from, ev, err, a.State())
			}
		}
	}
	final := map[yarnpb.YarnApplicationStateProto]bool{appFinished: true, appFailed: true, appKilled: true}
	reached := map[yarnpb.YarnApplicationStateProto]bool{appNew: true}
	for changed := true; changed; {
		changed = false
		for m, to := range appMoves {
			if final[m.from] {
				t.Errorf("a final state moves: %v on %v", m.from, m.on)
			}
			if reached[m.from] && !reached[to] {
				reached[to], changed = true, true
			}
		}
	}
	for m, to := range appMoves {
		if !reached[m.from] || !reached[to] {
			t.Errorf("%v on %v → %v: not reachable from NEW", m.from, m.on, to)
		}
	}
	for st := range final {
		if !reached[st] {
			t.Errorf("final state %v is never reached", st)
		}
		if !(&App{state: st}).Finished() {
			t.Errorf("%v is not Finished()", st)
		}
	}
	// The life of an application whose first attempt failed and whose second finished.
	a := &App{}
	for _, ev := range []AppEvent{AppAccepted, AppAMRegistered, AppAttemptRetried, AppAMRegistered, AppAMUnregistered} {
		mustMove(t, a, ev)
	}
	if a.State() != appFinished {
		t.Fatalf("state %v", a.State())
	}
}

// The attempt's table, walked as the application's.
func TestAttemptLifecycle(t *testing.T) {
	var states []yarnpb.YarnApplicationAttemptStateProto
	for v := range yarnpb.YarnApplicationAttemptStateProto_name {
		states = append(states, yarnpb.YarnApplicationAttemptStateProto(v))
	}
	id := records.ApplicationID{ClusterTimestamp: 1, ID: 1}.Attempt(1)
	for _, from := range states {
		for ev := range attemptEventNames {
			at := &Attempt{ID: id, state: from}
			to, allowed := attemptMoves[attemptMove{from, ev}]
			err := at.Move(ev)
			switch {
			case allowed && (err != nil || at.State() != to):
				t.Errorf("%v on %v: %v, state %v; want %v", from, ev, err, at.State(), to)
			case !allowed && (!errors.As(err, new(*TransitionError)) || at.State() != from):
				t.Errorf("%v on %v: %v, state %v; want refused and unchanged", from, ev, err, at.State())
			}
		}
	}
	reached := map[yarnpb.YarnApplicationAttemptStateProto]bool{attScheduled: true}
	for changed := true; changed; {
		changed = false
		for m, to := range attemptMoves {
			if (&Attempt{state: m.from}).Ended() {
				t.Errorf("an ended attempt moves: %v on %v", m.from, m.on)
			}
			if reached[m.from] && !reached[to] {
				reached[to], changed = true, true
			}
		}
	}
	for _, st := range []yarnpb.YarnApplicationAttemptStateProto{attFinished, attFailed, attKilled} {
		if !reached[st] || !(&Attempt{state: st}).Ended() {
			t.Errorf("final state %v: reached %v, Ended %v", st, reached[st], (&Attempt{state: st}).Ended())
		}
	}
	// A managed AM's whole life, and an unmanaged one's.
	managed := NewAttempt(id, 0)
	for _, ev := range []AttemptEvent{AttemptAMAllocated, AttemptAMLaunched, AttemptAMRegistered, AttemptAMUnregistered, AttemptAMExited} {
		if err := managed.Move(ev); err != nil {
			t.Fatal(err)
		}
	}
	unmanaged := NewAttempt(id, 0)
	for _, ev := range []AttemptEvent{AttemptAMLaunched, AttemptAMRegistered, AttemptAMUnregistered, AttemptAMExited} {
		if err := unmanaged.Move(ev); err != nil {
			t.Fatal(err)
		}
	}
	if managed.State() != attFinished || unmanaged.State() != attFinished {
		t.Fatalf("managed %v, unmanaged %v", managed.State(), unmanaged.State())
	}
	if err := managed.Move(AttemptKilled); err == nil || managed.State() != attFinished {
		t.Fatalf("a finished attempt killed: %v, %v", err, managed.State())
	}
}

// The node's table, walked: each (state, event) pair moves as the table says or is
// refused; a node registers only in its start states; every state the table names is
// reachable from those.
func TestNodeLifecycle(t *testing.T) {
	for v := range yarnpb.NodeStateProto_name {
		from := yarnpb.NodeStateProto(v)
		for ev := range nodeEventNames {
			n := &Node{NodeAddr: &NodeAddr{Key: "h:1"}, state: from}
			to, allowed := nodeMoves[nodeMove{from, ev}]
			err := n.move(ev)
			switch {
			case allowed && (err != nil || n.State() != to):
				t.Errorf("%v on %v: %v, state %v; want %v", from, ev, err, n.State(), to)
			case !allowed && (!errors.As(err, new(*TransitionError)) || n.State() != from):
				t.Errorf("%v on %v: %v, state %v; want refused and unchanged", from, ev, err, n.State())
			}
		}
		if err := (&Node{NodeAddr: &NodeAddr{Key: "h:1"}}).start(from); (err == nil) != nodeStarts[from] {
			t.Errorf("registering in %v: %v", from, err)
		}
	}
	reached := map[yarnpb.NodeStateProto]bool{}
	for st := range nodeStarts {
		reached[st] = true
	}
	for changed := true; changed; {
		changed = false
		for m, to := range nodeMoves {
			if reached[m.from] && !reached[to] {
				reached[to], changed = true, true
			}
		}
	}
	for m, to := range nodeMoves {
		if !reached[m.from] || !reached[to] {
			t.Errorf("%v on %v → %v: not reachable from a registration", m.from, m.on, to)
		}
	}
	// The per-state counts follow the moves.
	r := NewNodes()
	n := &Node{NodeAddr: &NodeAddr{Key: "h:1"}}
	if _, err := r.Put("h:1", n, nodeRunning); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	err := r.moveLocked(n, NodeDecommission)
	r.mu.Unlock()
	if err != nil || r.byState[nodeRunning] != 0 || r.byState[nodeDecommissioning] != 1 || r.running.Load() != 0 {
		t.Fatalf("after decommissioning: %v, counts %v", err, r.byState)
	}
}
