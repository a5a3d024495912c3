package gcfloor

import (
	"github.com/bobbin-yarn/bobbin/internal/testutil"

	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		live, floor uint64
		base, want  int
	}{
		{0, 256 * mb, 100, 100},        // nothing measured yet
		{40 * mb, 256 * mb, 100, 540},  // a small heap grows to the floor
		{200 * mb, 256 * mb, 100, 100}, // 28 %: the base is higher
		{600 * mb, 256 * mb, 100, 100}, // above the floor: the base
		{1 * mb, 256 * mb, 100, 10000}, // bounded
		{40 * mb, 256 * mb, 800, 800},  // a higher base stands
		{40 * mb, 0, 100, 100},         // no floor
	} {
		if got := Percent(c.live, c.floor, c.base); got != c.want {
			t.Errorf("Percent(%d MB, %d MB, %d) = %d, want %d", c.live/mb, c.floor/mb, c.base, got, c.want)
		}
	}
}

func TestAuto(t *testing.T) {
	for nodes, want := range map[int]uint64{0: 0, -1: 0, 2000: 2000 * PerNode, 10000: 10000 * PerNode, 20000: 20000 * PerNode, 21000: MaxAuto, 50000: MaxAuto} {
		if got := Auto(nodes); got != want {
			t.Errorf("Auto(%d) = %d, want %d", nodes, got, want)
		}
	}
}

// Run follows the floor it is given: none (no NodeManager yet) keeps the base; a floor
// no test heap reaches raises the percentage to its bound; the floor gone again, the base
// comes back; and the base is left when Run stops.
func TestRunFollowsTheFloorThenRestores(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	runtime.GC() // a live-heap figure to work from
	var floor atomic.Uint64
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, floor.Load, 100, time.Millisecond)
	}()
	var p int
	floor.Store(1 << 40)
	if !testutil.PollEvery(5*time.Second, time.Millisecond, func() bool { p = gogc(); return p == maxPercent }) {
		t.Fatalf("percentage %d, want %d", p, maxPercent)
	}
	floor.Store(0)
	if !testutil.PollEvery(5*time.Second, time.Millisecond, func() bool { p = gogc(); return p == 100 }) {
		t.Fatalf("the floor gone: percentage %d, want the base 100", p)
	}
	floor.Store(1 << 40)
	if !testutil.PollEvery(5*time.Second, time.Millisecond, func() bool { p = gogc(); return p == maxPercent }) {
		t.Fatalf("percentage %d, want %d", p, maxPercent)
	}
	cancel()
	<-done
	if p := gogc(); p != 100 {
		t.Fatalf("after Run: %d, want the base 100", p)
	}
}

// gogc reads the percentage without setting it.
func gogc() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}
