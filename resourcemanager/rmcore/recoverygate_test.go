package rmcore

import (
	"testing"
	"time"
)

// While NodeManagers are awaited after a restart, AM calls go one at a time; once the
// last node is back (or the gate opens) they go freely, and a waiting call goes on.
func TestRecoveryGateQueuesAMCallsUntilTheNodesAreBack(t *testing.T) {
	now := time.Unix(1000, 0)
	g := newRecoveryGate([]string{"n1:1", "n2:1"}, now, now.Add(10*time.Second))
	release := g.admitAM()
	second := make(chan func())
	go func() { second <- g.admitAM() }()
	select {
	case <-second:
		t.Fatal("a second AM call went through beside the first while nodes were awaited")
	default:
	}
	release()
	r2 := <-second // the slot freed: the waiting call goes on
	third := make(chan func())
	go func() { third <- g.admitAM() }()
	g.nodeBack("n1:1", nil)
	g.nodeBack("n2:1", nil) // every node back: nothing queues any more
	r3 := <-third
	r2()
	r3()
	for range 3 {
		g.admitAM()() // free, and releasing takes nothing
	}
	// A gate that awaits nobody, and no gate, never queue.
	newRecoveryGate(nil, now, now.Add(time.Second)).admitAM()()
	var none *recoveryGate
	none.admitAM()()
	// The deadline opens the gate: queued calls go on.
	g2 := newRecoveryGate([]string{"n3:1"}, now, now.Add(time.Second))
	hold := g2.admitAM()
	fourth := make(chan func())
	go func() { fourth <- g2.admitAM() }()
	if open, _, _, _ := g2.check(now.Add(2 * time.Second)); !open {
		t.Fatal("the gate did not open at its deadline")
	}
	(<-fourth)()
	hold()
}
