package nmphase

import (
	"fmt"
	"testing"
	"time"
)

// beat models nodes that heartbeat as the Java NM does: each waits the interval its
// answer named after that answer comes back, rtt after it sent. All start in the same
// millisecond, as after an RM restart. It returns the most heartbeats that arrive in any
// 10 ms window during the last interval of rounds.
func beat(t *testing.T, s Spreader, nodes, rounds int, rtt time.Duration) int {
	t.Helper()
	start := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	sent := make([]time.Time, nodes)
	for i := range sent {
		sent[i] = start
	}
	bins := map[int64]int{}
	for r := range rounds {
		for i := range sent {
			node := fmt.Sprintf("host%05d.example.com:8041", i)
			arrival := sent[i].Add(rtt / 2)
			next := s.Next(node, arrival)
			if lo, hi := (s.Interval - s.MaxShift).Milliseconds(), (s.Interval + s.MaxShift).Milliseconds(); next < lo || next > hi {
				t.Fatalf("node %s: interval %d ms, outside [%d, %d]", node, next, lo, hi)
			}
			if r == rounds-1 {
				bins[arrival.Sub(start).Milliseconds()%s.Interval.Milliseconds()/10]++
			}
			sent[i] = arrival.Add(rtt / 2).Add(time.Duration(next) * time.Millisecond)
		}
	}
	most := 0
	for _, n := range bins {
		most = max(most, n)
	}
	return most
}

func TestBunchedNodesSpreadOverTheInterval(t *testing.T) {
	const nodes = 10000 // 100 per 10 ms window when spread evenly
	if most := beat(t, New(time.Second, 0), nodes, 10, 4*time.Millisecond); most != nodes {
		t.Errorf("without spreading, %d of %d nodes share a 10 ms window; want all (the model is wrong)", most, nodes)
	}
	// 10 % moves a node by up to 100 ms an answer: the farthest place, 500 ms away, is
	// reached in five or six heartbeats (each round trip adds a little to cover).
	for _, rounds := range []int{7, 50} {
		if most := beat(t, New(time.Second, 10), nodes, rounds, 4*time.Millisecond); most > 150 {
			t.Errorf("after %d heartbeats at most %d of %d nodes share a 10 ms window; want at most 150 (100 on average)", rounds, most, nodes)
		}
	}
}

func TestNodeInPlaceKeepsTheInterval(t *testing.T) {
	s := New(time.Second, 10)
	node := "nm1.example.com:45454"
	at := time.Unix(1800000000, 0).Add(Place(node, s.Interval))
	if got := s.Next(node, at); got != 1000 {
		t.Errorf("in place: %d ms; want 1000", got)
	}
	if got := s.Next(node, at.Add(30*time.Millisecond)); got != 970 {
		t.Errorf("30 ms late: %d ms; want 970", got)
	}
	if got := s.Next(node, at.Add(-400*time.Millisecond)); got != 1100 {
		t.Errorf("400 ms early: %d ms; want 1100 (the bound)", got)
	}
	if got := (Spreader{Interval: time.Second}).Next(node, at.Add(300*time.Millisecond)); got != 1000 {
		t.Errorf("spreading off: %d ms; want the interval", got)
	}
	if got := New(time.Millisecond, 50).Next(node, at); got < 1 {
		t.Errorf("1 ms interval: %d ms; want at least 1", got)
	}
}

func TestOffsetRange(t *testing.T) {
	iv := 700 * time.Millisecond
	for i := range 5000 {
		at := time.Unix(1800000000, int64(i)*7919*int64(time.Microsecond))
		if d := Offset(fmt.Sprintf("n%d:1", i%37), at, iv); d < -iv/2 || d >= iv/2 {
			t.Fatalf("offset %v outside [-%v, %v)", d, iv/2, iv/2)
		}
	}
}

func TestPlacesOfARackAreEven(t *testing.T) {
	bins := make([]int, 100)
	for i := range 10000 {
		bins[Place(fmt.Sprintf("127.0.0.1:%d", 20000+i), time.Second)/(10*time.Millisecond)]++
	}
	for i, n := range bins {
		if n < 55 || n > 145 {
			t.Errorf("10 ms window %d holds %d of 10,000 places; want about 100", i, n)
		}
	}
}

func BenchmarkNext(b *testing.B) {
	s := New(time.Second, 10)
	at := time.Now()
	for b.Loop() {
		s.Next("127.0.0.1:20000", at)
	}
}
