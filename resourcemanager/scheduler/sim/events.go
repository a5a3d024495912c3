package sim

import (
	"time"

	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
)

// eventKind is what happens at an event: an application's submission, a container's
// end, or a periodic scheduling tick.
type eventKind int

const (
	evSubmit eventKind = iota
	evDone
	evTick
)

// event is one entry of the simulation's time-ordered queue; seq breaks ties so the
// order (and so every report) is deterministic.
type event struct {
	at   time.Time
	kind eventKind
	seq  int
	app  int                   // trace app index (submit)
	cid  scheduler.ContainerID // done
}

// eventQueue is a container/heap of events, earliest first.
type eventQueue []*event

func (q eventQueue) Len() int { return len(q) }

func (q eventQueue) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].seq < q[j].seq
}

func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }

func (q *eventQueue) Push(x any) { *q = append(*q, x.(*event)) }

func (q *eventQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}
