package rmcore

import (
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
)

// The monitor's pass on a hand-moved clock: master keys roll at their interval and become
// the signing keys 1.5 x the holders' liveness interval later, never before.
func TestStepRollsAndActivatesKeysOnTheClock(t *testing.T) {
	c := conf.New()
	for k, v := range map[string]string{
		keyAMExpiry: "200", keyNMExpiry: "200",
		KeyAMRMRoll: "1", KeyContainerRoll: "1", KeyNMRoll: "1",
	} {
		c.Set(k, v)
	}
	clock := testutil.NewClock(time.UnixMilli(1732269000000))
	core, err := New(Options{Conf: c, Logger: testutil.QuietLogger(), Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	ids := func() [3]int32 {
		return [3]int32{core.amrm.Keys.Current().ID, core.containerKeys.Current().ID, core.nmKeys.Current().ID}
	}
	start := ids()
	core.Step(clock.Advance(999 * time.Millisecond))
	if _, pending := core.containerKeys.Next(); pending || ids() != start {
		t.Fatalf("rolled before the interval: %v -> %v", start, ids())
	}
	core.Step(clock.Advance(time.Millisecond)) // 1 s: the next keys are made and handed out
	next, pending := core.containerKeys.Next()
	if !pending || ids() != start {
		t.Fatalf("at the interval: next key pending %v, current %v (want a pending key, current unchanged %v)", pending, ids(), start)
	}
	core.Step(clock.Advance(299 * time.Millisecond))
	if ids() != start {
		t.Fatalf("activated before 1.5 x the liveness interval: %v", ids())
	}
	core.Step(clock.Advance(time.Millisecond))
	if got := ids(); got[0] == start[0] || got[1] != next.ID || got[2] == start[2] {
		t.Fatalf("after the activation delay: %v, want every key past %v (container key %d)", got, start, next.ID)
	}
}
