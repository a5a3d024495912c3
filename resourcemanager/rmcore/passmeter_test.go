package rmcore

import (
	"testing"
	"time"
)

// The meter keeps the last minute: busy time in percent of it, and the containers of the
// last whole second; older seconds fall out as their slots are reused.
func TestPassMeter(t *testing.T) {
	var m passMeter
	t0 := time.Unix(1_000_000, 0)
	m.add(t0, 3*time.Second, 5)
	m.add(t0.Add(500*time.Millisecond), 3*time.Second, 2)
	m.add(t0.Add(time.Second), 6*time.Second, 4)
	now := t0.Add(1500 * time.Millisecond)
	if got := m.busyPercent(now); got != 20 { // 12 s of 60
		t.Errorf("busy %d%%, want 20", got)
	}
	if got := m.assignedLastSecond(now); got != 7 {
		t.Errorf("assigned in the last second %d, want 7", got)
	}
	later := t0.Add(60 * time.Second) // t0's second has left the window; t0+1's not yet
	if got := m.busyPercent(later); got != 10 {
		t.Errorf("a minute on: busy %d%%, want 10", got)
	}
	if got := m.assignedLastSecond(later); got != 0 {
		t.Errorf("a minute on: assigned %d, want 0", got)
	}
	m.add(t0.Add(60*time.Second), 0, 1) // reuses t0's slot
	if got := m.assignedLastSecond(later.Add(time.Second)); got != 1 {
		t.Errorf("after reuse: assigned %d, want 1", got)
	}
}
