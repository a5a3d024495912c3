// Package gcfloor keeps a daemon whose live heap is small from collecting as often as
// its allocation rate alone would make it.
//
// Go's collector starts a cycle when the heap reaches live × (1 + GOGC/100). An RM
// serving 10,000 NodeManagers holds some 40 MB and makes 25 MB of garbage a second, so
// at GOGC=100 it collected every 1.8 s; each cycle, with the RM on one core, stretched
// the heartbeats that met it, and the heartbeats' p99 went from 3 ms (no collection at
// all) to 20-50 ms. A floor lets the heap grow to at least Floor bytes between
// collections: the percentage is raised while the live heap is small and is the
// configured one once it is large, so a big RM keeps its memory bound.
//
// The floor may follow the daemon's load (Floor): the RM's is PerNode bytes for each
// running NodeManager, since both what a collection scans (a connection's stack and
// buffers each) and the garbage made each second (their heartbeats) grow with them. A
// fixed floor cost a small cluster's RM the memory it saved a large one: 2,000
// NodeManagers at the default demand held 348 MB where 100 MB did.
package gcfloor

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// maxPercent bounds the percentage: a nearly empty heap must not wait for gigabytes.
const maxPercent = 10000

// Percent is the GC percentage that lets a heap of live bytes grow to floor bytes before
// the next collection, and never less than base (live 0: nothing measured yet, base).
func Percent(live, floor uint64, base int) int {
	if live == 0 || floor <= live {
		return base
	}
	p := (floor - live) * 100 / live
	if p > maxPercent {
		return maxPercent
	}
	return max(int(p), base)
}

// PerNode is the RM's automatic floor for each running NodeManager: 10,000 of them
// make the 256-MB floor that took their heartbeats' p99 from 20-50 ms to 16-24 ms.
const PerNode = 256 << 20 / 10000

// MaxAuto bounds the automatic floor (20,000 NodeManagers' worth): at 50,000 the floor
// would be 1.3 GB, most of the RM's memory, for collections already rare against a live
// heap that large.
const MaxAuto = 512 << 20

// Auto is the RM's automatic floor for nodes running NodeManagers.
func Auto(nodes int) uint64 { return min(uint64(max(nodes, 0))*PerNode, MaxAuto) }

// Fixed is a floor of bytes whatever the load.
func Fixed(bytes uint64) func() uint64 { return func() uint64 { return bytes } }

// Run sets the GC percentage from the live heap the last collection measured and the
// floor floor() gives now, every interval until ctx ends, and leaves base set when it
// returns. A percentage is changed only when it moves by a quarter or more (or back to
// base).
func Run(ctx context.Context, floor func() uint64, base int, interval time.Duration) {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	cur := base
	defer func() {
		if cur != base {
			debug.SetGCPercent(base)
		}
	}()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		metrics.Read(sample)
		var live uint64
		if sample[0].Value.Kind() == metrics.KindUint64 {
			live = sample[0].Value.Uint64()
		}
		if p := Percent(live, floor(), base); p != cur && (p == base || p > cur+cur/4 || p < cur-cur/4) {
			debug.SetGCPercent(p)
			cur = p
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
