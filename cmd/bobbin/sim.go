package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler/sim"
)

const simUsage = `usage:
  bobbin sim [--strategy auto|rings|balance|first-fit] [--capacity-scheduler XML] [--explain] [--window FROM,TO] TRACE.json
  bobbin sim --sls [--sls-nodes NODES.json] [--capacity-scheduler XML] SLS-JOBS.json
  bobbin sim --synthetic nodes=10000,apps=1000,asks=100000,queues=20 [--strategy ...]

Runs the scheduling engine in simulated time over a trace (docs/simulator.md) and prints
a JSON report; --synthetic runs the throughput scenario flat out instead; --sls reads an
Apache SLS job trace (with SLS's default node and container sizes).
`

func runSim(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bobbin sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, simUsage) }
	strategy := fs.String("strategy", "", "node selection: auto, rings, balance or first-fit (overrides the trace)")
	synthetic := fs.String("synthetic", "", "run the synthetic throughput scenario: nodes=,apps=,asks=,queues=")
	sls := fs.Bool("sls", false, "the trace is an Apache SLS job trace (sls-jobs.json format)")
	slsNodes := fs.String("sls-nodes", "", "an SLS node file (with --sls; default: the hosts the tasks name)")
	explain := fs.Bool("explain", false, "report why asks went unplaced (the engine's reason and, when no node fit, the nodes each filter turned down)")
	window := fs.String("window", "", "also report time-weighted means over FROM,TO (offsets from the start: 30m,2h or seconds)")
	capSched := fs.String("capacity-scheduler", "", "a capacity-scheduler.xml for the queues (overrides the trace's; with --sls, the one SLS runs with)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if *synthetic != "" {
		spec, err := sim.ParseSynthetic(*synthetic)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		spec.Strategy = *strategy
		// A large run takes minutes: say how it goes on stderr (the report is stdout's).
		started := time.Now()
		spec.Progress = func(n int) {
			fmt.Fprintf(stderr, "bobbin sim: %d of %d asks placed in %v\n", n, spec.Asks, time.Since(started).Round(time.Second))
		}
		rep, err := sim.RunSynthetic(spec)
		if err != nil {
			fmt.Fprintf(stderr, "bobbin sim: %v\n", err)
			return 1
		}
		enc.Encode(rep)
		if rep.Unplaced > 0 {
			var why []string
			for _, r := range slices.Sorted(maps.Keys(rep.UnplacedReasons)) {
				why = append(why, fmt.Sprintf("%s (%d)", r, rep.UnplacedReasons[r]))
			}
			fmt.Fprintf(stderr, "bobbin sim: %d asks stayed unplaced; the last pass passed over applications' asks for: %s (docs/scheduling.md explains each; --explain on a trace names the nodes' filters)\n",
				rep.Unplaced, strings.Join(why, ", "))
		}
		return 0
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	var trace *sim.Trace
	var err error
	if *sls {
		trace, err = sim.LoadSLS(fs.Arg(0), *slsNodes, sim.DefaultSLSOptions)
	} else {
		trace, err = sim.LoadTrace(fs.Arg(0))
	}
	if err != nil {
		fmt.Fprintf(stderr, "bobbin sim: %v\n", err)
		return 1
	}
	trace.Explain = trace.Explain || *explain
	if *window != "" {
		if trace.Window, err = sim.ParseWindow(*window); err != nil {
			fmt.Fprintf(stderr, "bobbin sim: %v\n", err)
			return 2
		}
	}
	if *capSched != "" {
		trace.CapacityScheduler, trace.Queues = *capSched, nil
	}
	if *strategy != "" {
		if trace.Settings == nil {
			trace.Settings = map[string]string{}
		}
		trace.Settings["bobbin.scheduler.node-selection"] = *strategy
	}
	rep, err := sim.Run(trace)
	if err != nil {
		fmt.Fprintf(stderr, "bobbin sim: %v\n", err)
		return 1
	}
	enc.Encode(rep)
	return 0
}
