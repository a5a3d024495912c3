package rmbench

import (
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

func TestBucketsCoverEveryValueInOrder(t *testing.T) {
	prev := -1
	for us := uint64(0); us < 1<<20; us++ {
		b := bucketOf(us)
		if b < prev || b > prev+1 {
			t.Fatalf("bucketOf(%d) = %d after %d", us, b, prev)
		}
		prev = b
		if mid := bucketMid(b); mid < float64(us)*0.97-1 || mid > float64(us)*1.03+1 {
			t.Fatalf("bucket %d of %d µs has mid %f", b, us, mid)
		}
	}
	if b := bucketOf(^uint64(0)); b != buckets-1 {
		t.Fatalf("largest value in bucket %d of %d", b, buckets)
	}
}

func TestPercentilesTrackExactOnes(t *testing.T) {
	var h Histogram
	var exact []float64
	r := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		d := time.Duration(r.ExpFloat64() * float64(3*time.Millisecond))
		h.Record(d)
		exact = append(exact, float64(d.Microseconds())/1000)
	}
	sort.Float64s(exact)
	s := h.Summarize()
	if s.Count != 100000 {
		t.Fatalf("count %d", s.Count)
	}
	for _, c := range []struct {
		q   float64
		got float64
	}{{0.5, s.P50}, {0.9, s.P90}, {0.99, s.P99}, {0.999, s.P999}} {
		want := exact[int(c.q*float64(len(exact)))-1]
		if c.got < want*0.96 || c.got > want*1.04 {
			t.Errorf("p%v = %.3f ms, exact %.3f ms", c.q*100, c.got, want)
		}
	}
	if s.Max != exact[len(exact)-1] {
		t.Errorf("max %.3f, want %.3f", s.Max, exact[len(exact)-1])
	}
	var empty Histogram
	if empty.Summarize() != (Summary{}) {
		t.Error("empty histogram has figures")
	}
}
