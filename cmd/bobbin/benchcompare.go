package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
)

// compareRows are the figures `bobbin bench compare` tabulates: a JSON path into the
// merged results and a label. lowerBetter says which way the ratio is good.
var compareRows = []struct {
	path, label string
	lowerBetter bool
}{
	{"offered_rate", "offered: containers asked for / s", false},
	{"asks_per_app", "outstanding asks per AM (at most)", false},
	{"containers_allocated_per_second", "containers allocated / s", false},
	{"heartbeats_per_second", "NM heartbeats handled / s", false},
	{"nodes_heartbeating", "NMs heartbeating", false},
	{"allocate_latency_ms.p50", "allocate latency p50 (ms)", true},
	{"allocate_latency_ms.p99", "allocate latency p99 (ms)", true},
	{"allocate_latency_ms.p999", "allocate latency p99.9 (ms)", true},
	{"heartbeat_latency_ms.p50", "heartbeat latency p50 (ms)", true},
	{"heartbeat_latency_ms.p99", "heartbeat latency p99 (ms)", true},
	{"heartbeat_latency_ms.p999", "heartbeat latency p99.9 (ms)", true},
	{"ask_to_grant_ms.p50", "ask to grant p50 (ms)", true},
	{"ask_to_grant_ms.p99", "ask to grant p99 (ms)", true},
	{"max_containers_running", "most containers running at once", false},
	{"errors", "errors", true},
	{"rm_peak_rss_mb", "RM peak RSS (MB)", true},
	{"rm_cpu_s", "RM CPU time in the window (s)", true},
	{"collections", "GC collections in the run", true},
	{"pause_total_ms", "GC stop-the-world pauses, total (ms)", true},
	{"pause_max_ms", "GC longest pause (ms)", true},
	{"start_to_serving_ms", "start to serving (ms)", true},
	{"generator_cpu_s", "load generator CPU time (s)", true},
	{"setup_s", "setup: NMs registered + AMs running (s)", true},
}

func runBenchCompare(args []string, stdout, stderr io.Writer) int {
	if len(args) < 1 {
		fmt.Fprint(stderr, benchUsage)
		return 2
	}
	var names []string
	runs := map[string]map[string]any{}
	for _, a := range args {
		name, files, ok := strings.Cut(a, "=")
		if !ok || name == "" || files == "" {
			fmt.Fprintf(stderr, "bobbin bench compare: %q is not NAME=FILE[,FILE...]\n", a)
			return 2
		}
		merged := map[string]any{}
		for _, f := range strings.Split(files, ",") {
			b, err := os.ReadFile(f)
			if err != nil {
				fmt.Fprintf(stderr, "bobbin bench compare: %v\n", err)
				return 1
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				fmt.Fprintf(stderr, "bobbin bench compare: %s: %v\n", f, err)
				return 1
			}
			for k, v := range m {
				merged[k] = v
			}
		}
		names = append(names, name)
		runs[name] = merged
	}
	fmt.Fprintf(stdout, "| | %s |", strings.Join(names, " | "))
	if len(names) > 1 {
		fmt.Fprintf(stdout, " %s / %s |", names[len(names)-1], names[0])
	}
	fmt.Fprintln(stdout)
	fmt.Fprint(stdout, "|---|"+strings.Repeat("---|", len(names)))
	if len(names) > 1 {
		fmt.Fprint(stdout, "---|")
	}
	fmt.Fprintln(stdout)
	for _, row := range compareRows {
		vals := make([]float64, len(names))
		any := false
		cells := make([]string, len(names))
		for i, n := range names {
			v, ok := lookupNumber(runs[n], row.path)
			vals[i] = v
			if ok {
				any = true
				cells[i] = formatFigure(v)
			} else {
				cells[i] = "–"
			}
		}
		if !any {
			continue
		}
		fmt.Fprintf(stdout, "| %s | %s |", row.label, strings.Join(cells, " | "))
		if len(names) > 1 {
			first, last := vals[0], vals[len(vals)-1]
			ratio := "–"
			if first != 0 && !math.IsNaN(first) && !math.IsNaN(last) {
				ratio = fmt.Sprintf("%.2f×", last/first)
			}
			fmt.Fprintf(stdout, " %s |", ratio)
		}
		fmt.Fprintln(stdout)
	}
	return 0
}

// lookupNumber follows a dotted path through decoded JSON objects to a number.
func lookupNumber(m map[string]any, path string) (float64, bool) {
	var cur any = m
	for _, k := range strings.Split(path, ".") {
		obj, ok := cur.(map[string]any)
		if !ok {
			return math.NaN(), false
		}
		if cur, ok = obj[k]; !ok {
			return math.NaN(), false
		}
	}
	f, ok := cur.(float64)
	if !ok {
		return math.NaN(), false
	}
	return f, true
}

func formatFigure(v float64) string {
	switch {
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}
