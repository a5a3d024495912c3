package rmbench

import (
	"math"
	"math/bits"
	"sync/atomic"
	"time"
)

// subBuckets is the number of buckets per power of two of microseconds: each bucket is at
// most 1/32 (3 %) wide relative to its value, plenty to compare percentiles of two RMs.
const (
	subBits    = 5
	subBuckets = 1 << subBits
	linear     = 2 * subBuckets // values below this many µs have their own bucket
	exponents  = 40
	buckets    = linear + exponents*subBuckets
	maxMicros  = uint64(1)<<(exponents+subBits+1) - 1 // 2^46 µs, far beyond any timeout
)

// Histogram records durations with lock-free log-linear buckets (an HDR histogram in
// miniature): thousands of goroutines record into it without contending on a lock, and it
// costs the same memory however many samples it holds.
type Histogram struct {
	counts [buckets]atomic.Uint64
	n      atomic.Uint64
	sum    atomic.Uint64 // µs
	max    atomic.Uint64 // µs
}

func bucketOf(us uint64) int {
	if us < linear {
		return int(us)
	}
	us = min(us, maxMicros)
	e := bits.Len64(us) - (subBits + 1) // us>>e is in [subBuckets, 2*subBuckets)
	return linear + (e-1)*subBuckets + int(us>>e) - subBuckets
}

// bucketMid is the middle of a bucket's range, in µs.
func bucketMid(i int) float64 {
	if i < linear {
		return float64(i)
	}
	e := (i-linear)/subBuckets + 1
	sub := uint64((i-linear)%subBuckets + subBuckets)
	lo, hi := sub<<e, (sub+1)<<e-1
	return (float64(lo) + float64(hi)) / 2
}

// Record adds one duration.
func (h *Histogram) Record(d time.Duration) {
	us := uint64(max(d.Microseconds(), 0))
	h.counts[bucketOf(us)].Add(1)
	h.n.Add(1)
	h.sum.Add(us)
	for {
		m := h.max.Load()
		if us <= m || h.max.CompareAndSwap(m, us) {
			return
		}
	}
}

// Summary is a histogram's percentiles in milliseconds.
type Summary struct {
	Count uint64  `json:"count"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p999"`
	Max   float64 `json:"max"`
}

// Summarize reads the histogram (while others may still record: the figures are then
// a consistent-enough snapshot).
func (h *Histogram) Summarize() Summary {
	var counts [buckets]uint64
	var total uint64
	for i := range counts {
		counts[i] = h.counts[i].Load()
		total += counts[i]
	}
	s := Summary{Count: total, Max: ms(float64(h.max.Load()))}
	if total == 0 {
		return s
	}
	s.Mean = ms(float64(h.sum.Load()) / float64(h.n.Load()))
	quantile := func(q float64) float64 {
		rank := uint64(math.Ceil(q * float64(total)))
		var seen uint64
		for i, c := range counts {
			seen += c
			if seen >= rank && c > 0 {
				return ms(min(bucketMid(i), float64(h.max.Load())))
			}
		}
		return s.Max
	}
	s.P50, s.P90, s.P99, s.P999 = quantile(0.50), quantile(0.90), quantile(0.99), quantile(0.999)
	return s
}

// ms converts µs to ms rounded to 3 decimals (µs resolution).
func ms(us float64) float64 { return math.Round(us) / 1000 }
