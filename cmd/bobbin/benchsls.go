package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler/sim"
)

// runBenchSLSCompare sets an Apache SLS run beside a `bobbin sim --sls` report of the
// same trace (integration/bench/sls-side-by-side.sh runs both).
func runBenchSLSCompare(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bobbin bench sls-compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tracePath := fs.String("trace", "", "the SLS job trace both ran")
	nodesPath := fs.String("sls-nodes", "", "the SLS node file both ran with")
	apacheDir := fs.String("apache", "", "the SLS output directory (slsrun.sh --output-dir)")
	bobbinPath := fs.String("bobbin", "", "the JSON report of bobbin sim --sls")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *tracePath == "" || *apacheDir == "" || *bobbinPath == "" {
		fmt.Fprintln(stderr, "bobbin bench sls-compare: --trace, --apache and --bobbin are required")
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "bobbin bench sls-compare: %v\n", err)
		return 1
	}
	trace, err := sim.LoadSLS(*tracePath, *nodesPath, sim.DefaultSLSOptions)
	if err != nil {
		return fail(err)
	}
	apache, err := sim.ReadSLSOutput(*apacheDir)
	if err != nil {
		return fail(err)
	}
	data, err := os.ReadFile(*bobbinPath)
	if err != nil {
		return fail(err)
	}
	var rep sim.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		return fail(fmt.Errorf("%s: %w", *bobbinPath, err))
	}
	var memory int64
	for _, n := range trace.Nodes {
		memory += n.Resources["memory-mb"] * int64(max(n.Count, 1))
	}
	cmp, err := sim.CompareSLS(trace, apache, &rep, memory)
	if err != nil {
		return fail(err)
	}
	cmp.WriteMarkdown(stdout)
	return 0
}
