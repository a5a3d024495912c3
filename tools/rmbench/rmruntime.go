package rmbench

import (
	"context"
	"fmt"
	"math"
	"net/http"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// What a Bobbin RM's /prom says of its Go runtime: the stop-the-world GC pauses (a
// histogram, so a window's tail can be read from two scrapes) and the live heap. Java
// RMs have no such page: their GC appears as JvmMetrics' totals only.

// rmRuntime is one scrape.
type rmRuntime struct {
	bounds   []float64 // the pause histogram's bucket upper bounds, seconds
	counts   []uint64  // its cumulative counts
	total    uint64
	liveHeap float64 // bytes
}

const (
	pauseFamily = "go_sched_pauses_total_gc_seconds"
	heapFamily  = "go_gc_heap_live_bytes"
)

// scrapeRuntime reads the RM's /prom at web (host:port).
func scrapeRuntime(ctx context.Context, web string) (rmRuntime, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+web+"/prom", nil)
	if err != nil {
		return rmRuntime{}, err
	}
	req.Header.Set("Accept", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return rmRuntime{}, fmt.Errorf("rmbench: the RM's /prom: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return rmRuntime{}, fmt.Errorf("rmbench: the RM's /prom: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return rmRuntime{}, fmt.Errorf("rmbench: the RM's /prom: %w", err)
	}
	var out rmRuntime
	pauses, ok := fams[pauseFamily]
	if !ok || len(pauses.GetMetric()) != 1 || pauses.GetMetric()[0].GetHistogram() == nil {
		return rmRuntime{}, fmt.Errorf("rmbench: the RM's /prom has no %s histogram (not a Bobbin RM, or an older one)", pauseFamily)
	}
	h := pauses.GetMetric()[0].GetHistogram()
	for _, b := range h.GetBucket() {
		out.bounds = append(out.bounds, b.GetUpperBound())
		out.counts = append(out.counts, b.GetCumulativeCount())
	}
	out.total = h.GetSampleCount()
	if heap, ok := fams[heapFamily]; ok && len(heap.GetMetric()) == 1 {
		out.liveHeap = heap.GetMetric()[0].GetGauge().GetValue()
	}
	return out, nil
}

// pauseStats are the GC pauses between two scrapes: how many, and the upper bounds of
// the buckets holding their median, their 99th percentile and the longest.
type pauseStats struct {
	n                    uint64
	p50, p99, maxSeconds float64
}

func pausesBetween(a, b rmRuntime) pauseStats {
	s := pauseStats{n: b.total - a.total}
	if s.n == 0 || len(a.counts) != len(b.counts) {
		return s
	}
	at := func(q float64) float64 {
		want := uint64(math.Ceil(q * float64(s.n)))
		for i := range b.counts {
			if b.counts[i]-a.counts[i] >= want {
				return b.bounds[i]
			}
		}
		return math.Inf(1)
	}
	s.p50, s.p99, s.maxSeconds = at(0.5), at(0.99), at(1)
	return s
}
