//go:build ignore

// gen-skewed writes skewed.json, the second strategy-comparison trace: a different resource
// mix and arrival process from mixed.json, generated independently of it.
//
//	go run resourcemanager/scheduler/sim/testdata/traces/gen-skewed.go > resourcemanager/scheduler/sim/testdata/traces/skewed.json
//
// 40 nodes of three kinds and no GPUs: 20 general (96 GB, 48 vcores), 10 memory-heavy
// (256 GB, 16 vcores), 10 CPU-heavy (48 GB, 96 vcores). Three queues (prod 50 %, dev 30 %,
// adhoc 20 %). 300 applications arriving as a Poisson process (mean gap 12 s) with a burst
// of 60 in the first two minutes of the second hour; each has an AM container, then one or
// two stages of containers of one of five skewed shapes, counts log-uniform in 1..48 and
// durations log-normal around 6 minutes (1 to 40).
package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
)

type res map[string]int64

func main() {
	rng := rand.New(rand.NewPCG(2026, 11))
	type node struct {
		ID        string `json:"id"`
		Count     int    `json:"count"`
		Resources res    `json:"resources"`
	}
	type ask struct {
		Resources res    `json:"resources"`
		Count     int    `json:"count"`
		Duration  string `json:"duration,omitempty"`
		Priority  int32  `json:"priority"`
		AM        bool   `json:"am,omitempty"`
		Stage     int    `json:"stage,omitempty"`
	}
	type app struct {
		ID     string `json:"id"`
		Submit string `json:"submit"`
		Queue  string `json:"queue"`
		Asks   []ask  `json:"asks"`
	}
	trace := struct {
		Queues map[string]string `json:"queues"`
		Nodes  []node            `json:"nodes"`
		Apps   []app             `json:"apps"`
	}{
		Queues: map[string]string{"root.queues": "prod,dev,adhoc", "root.prod.capacity": "50", "root.dev.capacity": "30", "root.adhoc.capacity": "20",
			"root.prod.maximum-capacity": "100", "root.dev.maximum-capacity": "100", "root.adhoc.maximum-capacity": "100",
			// One user per queue borrows idle capacity only above user-limit-factor 1.
			"root.prod.user-limit-factor": "2", "root.dev.user-limit-factor": "4", "root.adhoc.user-limit-factor": "5",
			"maximum-am-resource-percent": "0.2"},
		Nodes: []node{
			{ID: "general", Count: 20, Resources: res{"memory-mb": 96 << 10, "vcores": 48}},
			{ID: "memheavy", Count: 10, Resources: res{"memory-mb": 256 << 10, "vcores": 16}},
			{ID: "cpuheavy", Count: 10, Resources: res{"memory-mb": 48 << 10, "vcores": 96}},
		},
	}
	shapes := []res{
		{"memory-mb": 2 << 10, "vcores": 8},  // CPU-bound
		{"memory-mb": 32 << 10, "vcores": 2}, // memory-bound
		{"memory-mb": 8 << 10, "vcores": 4},  // balanced
		{"memory-mb": 1 << 10, "vcores": 1},  // small
		{"memory-mb": 16 << 10, "vcores": 12},
	}
	queues := []string{"prod", "prod", "dev", "dev", "adhoc"}
	t := 0.0
	for i := 0; i < 300; i++ {
		if i >= 120 && i < 180 {
			t = math.Max(t, 3600) + rng.Float64()*2 // the burst: 60 arrivals within two minutes
		} else {
			t += rng.ExpFloat64() * 12
		}
		a := app{ID: fmt.Sprintf("job-%03d", i), Submit: fmt.Sprintf("%.1fs", t), Queue: queues[rng.IntN(len(queues))]}
		a.Asks = append(a.Asks, ask{Resources: res{"memory-mb": 2 << 10, "vcores": 1}, Count: 1, AM: true})
		stages := 1 + rng.IntN(2)
		for s := 0; s < stages; s++ {
			shape := shapes[rng.IntN(len(shapes))]
			count := int(math.Exp(rng.Float64() * math.Log(48)))
			mins := math.Min(40, math.Max(1, math.Exp(math.Log(6)+rng.NormFloat64()*0.8)))
			a.Asks = append(a.Asks, ask{Resources: shape, Count: max(1, count), Duration: fmt.Sprintf("%.0fs", mins*60), Priority: int32(10 + s), Stage: s})
		}
		trace.Apps = append(trace.Apps, a)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(trace); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
