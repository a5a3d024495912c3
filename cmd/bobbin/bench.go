package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/bobbin-yarn/bobbin/client/rmclient"
	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/tools/rmbench"
)

const benchUsage = `usage:
  bobbin bench rm --conf DIR --nodes N --apps M --duration D [flags]
      load any YARN ResourceManager (Bobbin's or Apache's) over the real protocols with N
      simulated NodeManagers and M applications with unmanaged AMs; prints one JSON object
  bobbin bench startup [--conf DIR] [--timeout 2m] -- COMMAND [ARGS...]
      start a ResourceManager with COMMAND and print how long it took to answer
      getClusterMetrics on yarn.resourcemanager.address; the RM is then stopped
  bobbin bench compare NAME=FILE.json[,FILE.json...] ...
      print a Markdown table of the runs side by side (bench rm, bench startup and GC
      summary JSON merged per name), with the ratio of the last to the first
  bobbin bench sls-compare --trace SLS-JOBS.json [--sls-nodes NODES.json] \
      --apache SLS-OUTPUT-DIR --bobbin SIM-REPORT.json
      set an Apache SLS run (slsrun.sh --output-dir) beside "bobbin sim --sls" of the same
      trace: a Markdown table of makespan, job runtimes and allocation, then one row per job

Run "bobbin bench rm -h" for the load generator's flags. docs/benchmarks.md has the runs.
`

func runBench(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, benchUsage)
		return 2
	}
	switch args[0] {
	case "rm":
		return runBenchRM(args[1:], stdout, stderr)
	case "startup":
		return runBenchStartup(args[1:], stdout, stderr)
	case "compare":
		return runBenchCompare(args[1:], stdout, stderr)
	case "sls-compare":
		return runBenchSLSCompare(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, benchUsage)
		return 0
	}
	fmt.Fprintf(stderr, "bobbin bench: unknown benchmark %q\n\n%s", args[0], benchUsage)
	return 2
}

// rmAddrs reads the RM's client, scheduler, tracker and web app addresses from a
// configuration directory as a YARN client would (wildcard hosts are reached on
// loopback).
func rmAddrs(dir string) (client, scheduler, tracker, web string, err error) {
	c, _, err := conf.LoadDir(dir)
	if err != nil {
		return "", "", "", "", err
	}
	addr := func(key string, port int) (string, error) {
		h, p, err := c.HostPort(key, port)
		if err != nil {
			return "", err
		}
		if ip := net.ParseIP(h); ip != nil && ip.IsUnspecified() {
			h = "127.0.0.1"
		}
		return net.JoinHostPort(h, strconv.Itoa(p)), nil
	}
	if client, err = addr("yarn.resourcemanager.address", 8032); err != nil {
		return
	}
	if scheduler, err = addr("yarn.resourcemanager.scheduler.address", 8030); err != nil {
		return
	}
	if tracker, err = addr("yarn.resourcemanager.resource-tracker.address", 8031); err != nil {
		return
	}
	web, err = addr("yarn.resourcemanager.webapp.address", 8088)
	return
}

func runBenchRM(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bobbin bench rm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	confDir := fs.String("conf", "", "configuration directory with the RM's addresses (default: $HADOOP_CONF_DIR, then built-in defaults)")
	var o rmbench.Options
	fs.IntVar(&o.Nodes, "nodes", 2000, "simulated NodeManagers")
	fs.IntVar(&o.Apps, "apps", 200, "applications with unmanaged AMs")
	fs.DurationVar(&o.Duration, "duration", 60*time.Second, "measured window")
	fs.DurationVar(&o.Warmup, "warmup", 0, "how long the AMs run before the window opens, unmeasured (with a long --container-ms the cluster fills meanwhile)")
	fs.DurationVar(&o.Heartbeat, "heartbeat", time.Second, "NodeManager heartbeat interval until the RM answers; then, as Java NMs do, each waits the nextHeartBeatInterval of its last answer (the RM's yarn.resourcemanager.nodemanagers.heartbeat-interval-ms, 1 s by default)")
	fs.DurationVar(&o.AMInterval, "am-interval", time.Second, "AM allocate interval")
	containerMs := fs.Int("container-ms", 2000, "how long each granted container runs (ms)")
	fs.IntVar(&o.AsksPerApp, "asks-per-app", 50, "containers each AM keeps outstanding (with --rate: at most)")
	fs.Float64Var(&o.Rate, "rate", 0, "offered load: containers asked for per second over all AMs (0: keep --asks-per-app outstanding)")
	fs.IntVar(&o.TrackerConnections, "nm-connections", 0, "multiplex the simulated NMs' heartbeats over this many IPC connections (0: one per NM, as real NMs)")
	fs.Int64Var(&o.NodeMemoryMB, "node-memory-mb", 65536, "memory of each simulated NM (MB)")
	nodeVCores := fs.Int("node-vcores", 64, "vcores of each simulated NM")
	fs.Int64Var(&o.ContainerMemoryMB, "container-memory-mb", 1024, "memory each container asks for (MB)")
	containerVCores := fs.Int("container-vcores", 1, "vcores each container asks for")
	fs.StringVar(&o.Queue, "queue", "default", "queue the applications are submitted to")
	fs.StringVar(&o.User, "user", currentUser(), "submitting user")
	fs.IntVar(&o.FirstPort, "first-port", 20000, "NodeId port of the first simulated NM (they share host 127.0.0.1)")
	fs.IntVar(&o.RMPid, "rm-pid", 0, "the RM's process id: report its peak RSS and CPU time from /proc")
	fs.StringVar(&o.RMWeb, "rm-web", "", "a Bobbin RM's web address (host:port): report its GC pauses in the window and its live heap from its /prom")
	restartCmd := fs.String("restart-cmd", "", "a shell command that kills the RM (kill -9) and starts it again in the background on the same state store, printing the new RM's pid as its last line: run --restart-after into the window, the result's \"restart\" says how the RM came back")
	fs.DurationVar(&o.RestartAfter, "restart-after", 10*time.Second, "with --restart-cmd: how far into the window the RM is restarted")
	logLevel := fs.String("log-level", "warn", "generator log level")
	cpuProfile := fs.String("cpuprofile", "", "write the generator's CPU profile to this file")
	fs.DurationVar(&o.SlowAllocate, "slow-allocate", 0, "log each allocate call that takes at least this long, with its start time (0: none)")
	traceFile := fs.String("trace", "", "write the generator's execution trace (go tool trace) to this file")
	gcPercent := fs.Int("gogc", 400, "the generator's GOGC: it trades memory for less GC, so it disturbs the RM under test less")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	debug.SetGCPercent(*gcPercent)
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "bobbin bench rm: %v\n", err)
			return 2
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "bobbin bench rm: %v\n", err)
			return 2
		}
		defer pprof.StopCPUProfile()
	}
	if *traceFile != "" {
		f, err := os.Create(*traceFile)
		if err != nil {
			fmt.Fprintf(stderr, "bobbin bench rm: trace: %v\n", err)
			return 2
		}
		if err := trace.Start(f); err != nil {
			f.Close()
			fmt.Fprintf(stderr, "bobbin bench rm: trace: %v\n", err)
			return 2
		}
		defer func() {
			trace.Stop()
			if err := f.Close(); err != nil {
				fmt.Fprintf(stderr, "bobbin bench rm: trace %s: %v\n", *traceFile, err)
			}
		}()
	}
	o.ContainerTime = time.Duration(*containerMs) * time.Millisecond
	o.NodeVCores, o.ContainerVCores = int32(*nodeVCores), int32(*containerVCores)
	log, err := newLogger(*logLevel, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "bobbin bench rm: %v\n", err)
		return 2
	}
	o.Logger = logrus.NewEntry(log)
	var web string
	if o.ClientAddr, o.SchedulerAddr, o.TrackerAddr, web, err = rmAddrs(*confDir); err != nil {
		fmt.Fprintf(stderr, "bobbin bench rm: %v\n", err)
		return 2
	}
	if *restartCmd != "" {
		o.Restart, o.RMREST = restartCommand(*restartCmd, stderr), web
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A run takes its setup and then the window: say how it goes, on stderr (the result
	// is stdout's JSON).
	fmt.Fprintf(stderr, "bobbin bench rm: registering %d NodeManagers and starting %d applications, then measuring for %v\n", o.Nodes, o.Apps, o.Duration)
	o.Progress = func(elapsed time.Duration, allocated uint64) {
		fmt.Fprintf(stderr, "bobbin bench rm: %v of %v measured, %d containers allocated (%.0f/s)\n", elapsed.Round(time.Second), o.Duration, allocated,
			float64(allocated)/elapsed.Seconds())
	}
	res, err := rmbench.Run(ctx, o)
	if err != nil {
		fmt.Fprintf(stderr, "bobbin bench rm: %v\n", err)
		return 1
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(res); err != nil {
		return 1
	}
	return 0
}

// restartCommand runs a restart command through bash -c (which, unlike some sh, passes
// on the functions a calling script exported); its last line of output, when
// a number, is the new RM's pid.
func restartCommand(command string, stderr io.Writer) rmbench.RestartFunc {
	return func(ctx context.Context) (int, error) {
		cmd := exec.CommandContext(ctx, "bash", "-c", command)
		cmd.Stderr = stderr
		out, err := cmd.Output()
		if err != nil {
			return 0, fmt.Errorf("%q: %w", command, err)
		}
		words := strings.Fields(string(out))
		if len(words) == 0 {
			return 0, nil
		}
		pid, err := strconv.Atoi(words[len(words)-1])
		if err != nil {
			return 0, nil // no pid said: the RM is not sampled after the restart
		}
		return pid, nil
	}
}

// runBenchStartup times a ResourceManager from exec to its first answered client call.
func runBenchStartup(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bobbin bench startup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	confDir := fs.String("conf", "", "configuration directory with the RM's address")
	timeout := fs.Duration("timeout", 2*time.Minute, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprint(stderr, benchUsage)
		return 2
	}
	client, _, _, _, err := rmAddrs(*confDir)
	if err != nil {
		fmt.Fprintf(stderr, "bobbin bench startup: %v\n", err)
		return 2
	}
	d, err := timeStartup(fs.Args(), client, *timeout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "bobbin bench startup: %v\n", err)
		return 1
	}
	json.NewEncoder(stdout).Encode(map[string]any{"command": fs.Args(), "start_to_serving_ms": round1(d.Seconds() * 1000)})
	return 0
}

func round1(f float64) float64 { return float64(int64(f*10+0.5)) / 10 }

func timeStartup(argv []string, addr string, timeout time.Duration, stderr io.Writer) (time.Duration, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		// Stop the whole process group (a launcher script and its JVM alike).
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	}()
	deadline := start.Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			exited <- err
			return 0, fmt.Errorf("%s exited before serving: %v", argv[0], err)
		default:
		}
		c := rmclient.New(addr, currentUser(), rpc.ClientOptions{ConnectRetries: -1})
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := c.GetClusterMetrics(ctx)
		cancel()
		c.Close()
		if err == nil {
			return time.Since(start), nil
		}
		var re *rpc.RemoteError
		if errors.As(err, &re) {
			// Answering at all is serving (a standby RM, say, answers with an exception).
			return time.Since(start), nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return 0, fmt.Errorf("no answer on %s within %s", addr, timeout)
}
