package rmcore

import (
	"sync"
	"time"
)

// passMeter measures the scheduling passes over the last minute, second by second: the
// share of wall time they took, which is rmSchedulerBusyPercent (the Java RM's figure is
// its scheduler dispatcher thread's CPU over the last minute), and the containers they
// assigned, of which ClusterMetrics reports the last whole second
// (containerAssignedPerSecond). Its lock is a leaf: nothing is called while it is held.
type passMeter struct {
	mu       sync.Mutex
	sec      [meterSlots]int64 // the Unix second each slot holds
	busy     [meterSlots]time.Duration
	assigned [meterSlots]int64
}

const meterSlots = 60

// slot returns the slot of Unix second s, emptied first if it held an older second.
func (m *passMeter) slot(s int64) int {
	i := int(s % meterSlots)
	if m.sec[i] != s {
		m.sec[i], m.busy[i], m.assigned[i] = s, 0, 0
	}
	return i
}

// add records a slice of a pass that ended at end, took busy and assigned n containers.
func (m *passMeter) add(end time.Time, busy time.Duration, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := m.slot(end.Unix())
	m.busy[i] += busy
	m.assigned[i] += int64(n)
}

// busyPercent is the passes' share of the minute before now, in percent.
func (m *passMeter) busyPercent(now time.Time) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	var sum time.Duration
	for i, s := range m.sec {
		if s > now.Unix()-meterSlots && s <= now.Unix() {
			sum += m.busy[i]
		}
	}
	return int(min(100, sum*100/(meterSlots*time.Second)))
}

// assignedLastSecond is the containers assigned in the last whole second before now.
func (m *passMeter) assignedLastSecond(now time.Time) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := now.Unix() - 1
	if i := int(s % meterSlots); m.sec[i] == s {
		return m.assigned[i]
	}
	return 0
}

// SchedulerBusyPercent is the share of the last minute the scheduling passes took.
func (rm *Core) SchedulerBusyPercent() int { return rm.passes.busyPercent(rm.opts.Now()) }

// ContainersAssignedLastSecond is how many containers the passes assigned in the last
// whole second.
func (rm *Core) ContainersAssignedLastSecond() int64 {
	return rm.passes.assignedLastSecond(rm.opts.Now())
}
