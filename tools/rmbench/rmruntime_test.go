package rmbench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The window's GC pauses are the difference of two scrapes of the pause histogram: 100
// pauses, 98 of them under 1 ms, one under 10 ms and one under 100 ms, give a median in
// the first bucket, the 99th percentile in the second and the longest in the third.
func TestGCPausesBetweenTwoScrapes(t *testing.T) {
	scrape := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/prom" {
			http.NotFound(w, r)
			return
		}
		// Before: 5 pauses, all short; after: 105.
		c := [][3]int{{5, 5, 5}, {103, 104, 105}}[min(scrape, 1)]
		scrape++
		fmt.Fprintf(w, `# TYPE go_sched_pauses_total_gc_seconds histogram
go_sched_pauses_total_gc_seconds_bucket{le="0.001"} %d
go_sched_pauses_total_gc_seconds_bucket{le="0.01"} %d
go_sched_pauses_total_gc_seconds_bucket{le="0.1"} %d
go_sched_pauses_total_gc_seconds_bucket{le="+Inf"} %d
go_sched_pauses_total_gc_seconds_sum 0.5
go_sched_pauses_total_gc_seconds_count %d
# TYPE go_gc_heap_live_bytes gauge
go_gc_heap_live_bytes 1.048576e+08
`, c[0], c[1], c[2], c[2], c[2])
	}))
	defer srv.Close()
	web := strings.TrimPrefix(srv.URL, "http://")
	a, err := scrapeRuntime(context.Background(), web)
	if err != nil {
		t.Fatal(err)
	}
	b, err := scrapeRuntime(context.Background(), web)
	if err != nil {
		t.Fatal(err)
	}
	p := pausesBetween(a, b)
	if p.n != 100 || p.p50 != 0.001 || p.p99 != 0.01 || p.maxSeconds != 0.1 || b.liveHeap != 100<<20 {
		t.Fatalf("pauses %+v, live heap %v", p, b.liveHeap)
	}
	other := httptest.NewServer(http.NotFoundHandler())
	defer other.Close()
	if _, err := scrapeRuntime(context.Background(), strings.TrimPrefix(other.URL, "http://")); err == nil {
		t.Fatal("a page without /prom read as an RM's")
	}
}
