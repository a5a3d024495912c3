package scheduler

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/conf/capacity"
)

// syntheticTree is nq leaf queues of equal capacity, each allowed on every label.
func syntheticTree(tb testing.TB, nq int, labels []string) *capacity.Tree {
	c := conf.Empty()
	var names []string
	for i := 0; i < nq; i++ {
		names = append(names, fmt.Sprintf("q%02d", i))
	}
	c.Set(capacity.Prefix+"root.queues", join(names))
	c.Set(capacity.Prefix+"root.accessible-node-labels", "*")
	for _, l := range labels {
		c.Set(capacity.Prefix+"root.accessible-node-labels."+l+".capacity", "100")
	}
	for i, n := range names {
		// Capacities that sum to exactly 100 with integer percentages.
		share := 100 / nq
		if i == 0 {
			share += 100 - share*nq
		}
		c.Set(capacity.Prefix+"root."+n+".capacity", strconv.Itoa(share))
		c.Set(capacity.Prefix+"root."+n+".accessible-node-labels", "*")
		for _, l := range labels {
			c.Set(capacity.Prefix+"root."+n+".accessible-node-labels."+l+".capacity", strconv.Itoa(share))
		}
	}
	tr, err := capacity.Parse(c)
	if err != nil {
		tb.Fatal(err)
	}
	return tr
}

// loadSynthetic builds the throughput scenario: nodes nodes (a tenth labelled "gpu"),
// apps applications over the queues, asks single-container asks in all.
func loadSynthetic(tb testing.TB, strategy string, nodes, apps, asks, nq int) *Engine {
	cfg := DefaultConfig()
	cfg.Strategy = strategy
	cfg.Now = func() time.Time { return t0 }
	e, err := New(cfg, syntheticTree(tb, nq, []string{"gpu"}))
	if err != nil {
		tb.Fatal(err)
	}
	for i := 0; i < nodes; i++ {
		spec := NodeSpec{ID: fmt.Sprintf("node%05d:8041", i), Capacity: res(int64(64+(i%4)*32)<<10, int64(16+(i%4)*8)), Static: i%10 == 1}
		if i%10 == 0 {
			spec.Partition = "gpu"
		}
		must(tb, e.AddNode(spec))
	}
	perApp := asks / apps
	for i := 0; i < apps; i++ {
		id := fmt.Sprintf("app%04d", i)
		label := ""
		if i%10 == 0 {
			label = "gpu"
		}
		must(tb, e.AddApp(AppSpec{ID: id, Queue: fmt.Sprintf("q%02d", i%nq), Label: label, Submit: t0.Add(time.Duration(i) * time.Millisecond)}))
		// perApp single-container asks over four shapes: YARN sends them as four asks
		// whose counts add up to perApp.
		list := make([]Ask, 4)
		for k := 0; k < perApp; k++ {
			s := k % 4
			list[s] = Ask{Priority: int32(s), ResourceName: "*", Capability: res(int64(1+s)<<10, int64(1+s%2)), Count: list[s].Count + 1}
		}
		must(tb, e.UpdateAsks(id, list))
	}
	return e
}

func benchmarkSchedule(b *testing.B, strategy string) {
	b.StopTimer()
	var total int
	var elapsed time.Duration
	for i := 0; i < b.N; i++ {
		e := loadSynthetic(b, strategy, 10000, 1000, 100000, 20)
		start := time.Now()
		b.StartTimer()
		n := len(e.Schedule(0).Allocations)
		b.StopTimer()
		elapsed += time.Since(start)
		total += n
	}
	b.ReportMetric(float64(total)/elapsed.Seconds(), "allocs/s")
	b.ReportMetric(float64(total)/float64(b.N), "allocs/op")
}

func BenchmarkScheduleRings(b *testing.B)    { benchmarkSchedule(b, StrategyRings) }
func BenchmarkScheduleBalance(b *testing.B)  { benchmarkSchedule(b, StrategyBalance) }
func BenchmarkScheduleFirstFit(b *testing.B) { benchmarkSchedule(b, StrategyFirstFit) }
