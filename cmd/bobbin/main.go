// Command bobbin runs Bobbin's daemons and tools:
//
//	bobbin resourcemanager [--conf DIR]   the YARN ResourceManager
//	bobbin nodemanager [--conf DIR]       the YARN NodeManager
//	bobbin webproxy [--conf DIR]          the web proxy apart from the RM (yarn.web-proxy.address)
//	bobbin client [--rm ADDR] QUERY       a small YARN client
//	bobbin sim TRACE | --synthetic SPEC   the scheduler simulator and benchmark
//	bobbin bench rm|startup ...           load-test any YARN RM over the real protocols
//	bobbin version
//
// It only wires packages together; each daemon lives in its own package.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/conf/capacity"
	"github.com/bobbin-yarn/bobbin/internal/gcfloor"
	"github.com/bobbin-yarn/bobbin/internal/logfmt"
	"github.com/bobbin-yarn/bobbin/nodemanager"
	"github.com/bobbin-yarn/bobbin/resourcemanager"
	"github.com/bobbin-yarn/bobbin/resourcemanager/webproxy"
	"github.com/bobbin-yarn/bobbin/rpc/connkeep"
)

const usage = `usage: bobbin <command> [flags]

commands:
  resourcemanager   run the YARN ResourceManager
  nodemanager       run the YARN NodeManager
  webproxy          run the web proxy apart from the RM, on yarn.web-proxy.address
  demo              run the demo application (a command in N containers) and follow it
  client            query a ResourceManager (cluster, new-application, queue, app, apps)
  sim               simulate the scheduler over a trace, or benchmark it (--synthetic)
  bench             load-test a ResourceManager (rm) or time its start-up (startup)
  check-config      list every key a configuration directory sets, what Bobbin does with it,
                    and what would stop a daemon (--conf DIR)
  release-rm-ports  free the ports a killed ResourceManager's connection keeper holds, before
                    another RM (Apache's) starts in its place (--conf DIR)
  uml-probe         boot one tiny User-Mode Linux guest and say whether guests run on this
                    host (--kernel FILE)
  version           print the version

Run "bobbin <command> -h" for a command's flags.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "resourcemanager":
		return runResourceManager(args[1:], stderr)
	case "nodemanager":
		return runNodeManager(args[1:], stderr)
	case "webproxy":
		return runWebProxy(args[1:], stderr)
	case "connection-keeper": // started by the resourcemanager; not for people
		return runConnectionKeeper(args[1:], stderr)
	case "demo":
		return runDemo(args[1:], stdout, stderr)
	case "demo-am":
		return runDemoAM(args[1:], stdout, stderr)
	case "client":
		return runClient(args[1:], stdout, stderr)
	case "sim":
		return runSim(args[1:], stdout, stderr)
	case "bench":
		return runBench(args[1:], stdout, stderr)
	case "check-config":
		return runCheckConfig(args[1:], stdout, stderr)
	case "release-rm-ports":
		return runReleaseRMPorts(args[1:], stdout, stderr)
	case "uml-probe":
		return runUMLProbe(args[1:], stdout, stderr)
	case "uml-guest-relay": // started by a UML guest's init; not for people
		return runUMLGuestRelay(args[1:], stderr)
	case "version", "--version", "-version":
		printVersion(stdout)
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "bobbin: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
}

// daemonFlags are the flags every daemon takes.
type daemonFlags struct {
	confDir  string
	logLevel string
	logDir   string
	levelSet bool // --log-level given
}

func parseDaemonFlags(name string, args []string, stderr io.Writer) (*daemonFlags, error) {
	fs := flag.NewFlagSet("bobbin "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := &daemonFlags{}
	fs.StringVar(&f.confDir, "conf", "", "configuration directory (default $YARN_CONF_DIR, else $HADOOP_CONF_DIR)")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&f.logDir, "log-dir", "", "write the log to a rolling file yarn-<user>-<daemon>-<host>.log there (default: standard error, "+
		"or $YARN_LOG_DIR when $YARN_ROOT_LOGGER names RFA, as `yarn --daemon start` sets them)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	fs.Visit(func(fl *flag.Flag) { f.levelSet = f.levelSet || fl.Name == "log-level" })
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("bobbin %s: unexpected argument %q", name, fs.Arg(0))
	}
	return f, nil
}

func newLogger(level string, w io.Writer) (*logrus.Logger, error) {
	l := logrus.New()
	l.SetOutput(w)
	// logrus.TextFormatter's lines, written faster (internal/logfmt).
	l.SetFormatter(&logfmt.Formatter{TimestampFormat: "2006-01-02T15:04:05.000Z07:00"})
	lv, err := logrus.ParseLevel(level)
	if err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	l.SetLevel(lv)
	return l, nil
}

// loadConf reads the site files and capacity-scheduler.xml, logging where they came from.
func loadConf(f *daemonFlags, log *logrus.Logger) (*conf.Configuration, *capacity.Tree, string, error) {
	c, dir, err := conf.LoadDir(f.confDir, conf.ResourceManagerFiles()...)
	if err != nil {
		return nil, nil, "", err
	}
	for _, w := range c.Warnings {
		log.Warn(w)
	}
	queues, err := capacity.Load(c, dir)
	if err != nil {
		return nil, nil, "", err
	}
	if dir == "" {
		log.Info("no configuration directory (--conf, YARN_CONF_DIR, HADOOP_CONF_DIR): using built-in defaults")
	} else {
		log.WithField("conf_dir", dir).Info("configuration loaded")
	}
	return c, queues, dir, nil
}

// daemonPrologue parses a daemon's flags and makes its logger, writing through a
// buffered sink the caller closes; a nil result means exit with code.
func daemonPrologue(name string, args []string, stderr io.Writer) (*daemonFlags, *logrus.Logger, *logSink, int) {
	f, err := parseDaemonFlags(name, args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, nil, nil, 0
		}
		fmt.Fprintln(stderr, err)
		return nil, nil, nil, 2
	}
	dir, envLevel := logDestination(f.logDir, os.Getenv)
	if envLevel != "" && !f.levelSet {
		f.logLevel = envLevel
	}
	sink := newLogSink(stderr)
	if dir != "" {
		confDir := firstSet(os.Getenv, "YARN_CONF_DIR", "HADOOP_CONF_DIR")
		if f.confDir != "" {
			confDir = f.confDir
		}
		file, err := openLogFile(dir, name, confDir)
		if err != nil {
			sink.Close()
			fmt.Fprintf(stderr, "bobbin %s: %v\n", name, err)
			return nil, nil, nil, 2
		}
		sink.Close()
		sink = newLogSink(file)
		sink.file = file
		fmt.Fprintf(stderr, "bobbin %s: logging to %s\n", name, file.Path())
	}
	log, err := newLogger(f.logLevel, sink)
	if err != nil {
		sink.Close()
		fmt.Fprintln(stderr, err)
		return nil, nil, nil, 2
	}
	return f, log, sink, 0
}

func runResourceManager(args []string, stderr io.Writer) int {
	f, log, sink, code := daemonPrologue("resourcemanager", args, stderr)
	if f == nil {
		return code
	}
	defer sink.Close()
	c, queues, dir, err := loadConf(f, log)
	if err != nil {
		log.Errorf("ResourceManager not started: %v", err)
		return 1
	}
	gc, err := readGCTarget(c, "bobbin.resourcemanager.gc-percent", "bobbin.resourcemanager.gc-heap-floor-mb")
	if err != nil {
		log.Errorf("ResourceManager not started: %v", err)
		return 1
	}
	rm, err := resourcemanager.New(resourcemanager.Options{Conf: c, ConfDir: dir, Queues: queues, Logger: logrus.NewEntry(log)})
	if err != nil {
		log.Errorf("ResourceManager not started: %v", err)
		return 1
	}
	defer gc.apply(rm.RunningNodes, log)() // the active core's, whichever it is (HA)
	kc, err := rm.ConnectionKeeper()
	if err != nil {
		log.Errorf("ResourceManager not started: %v", err)
		return 1
	}
	// The keeper's socket is in a directory only the RM's user may enter: nobody else can
	// take its name, answer in its place or connect to it. A directory that is not
	// private (another user made it first) means no keeper, never no RM.
	path, err := connkeep.SocketPath(kc.Dir, kc.Name)
	if err != nil {
		if kc.Keep {
			log.WithError(err).Warn("no connection keeper: connections will end with this process")
		}
		return serveUntilSignal("ResourceManager", rm, log)
	}
	if !kc.Keep {
		// A keeper an earlier process left (with recovery on) holds the ports: let it go.
		if err := releaseKeeper(path, log); err != nil {
			log.Errorf("ResourceManager not started: %v", err)
			return 1
		}
		return serveUntilSignal("ResourceManager", rm, log)
	}
	var spawned *exec.Cmd // the keeper this process started, if it did
	keeper, err := connkeep.Attach(connkeep.Options{Path: path, Logger: logrus.NewEntry(log), Spawn: func(path string) (err error) {
		spawned, err = spawnConnectionKeeper(path, kc.Linger)
		return err
	}})
	if err != nil {
		// Serving without one only costs clients their retry sleep after a crash; but a
		// keeper that is there and would not take us holds the ports.
		log.WithError(err).Warn("no connection keeper: connections will end with this process")
		if err := releaseKeeper(path, log); err != nil {
			log.Errorf("ResourceManager not started: %v", err)
			return 1
		}
		return serveUntilSignal("ResourceManager", rm, log)
	}
	rm.KeepConnections(keeper)
	code = serveUntilSignal("ResourceManager", rm, log)
	if err := keeper.Close(); err != nil {
		log.WithError(err).Warn("connection keeper: bye")
	}
	if spawned != nil {
		reap(spawned.Process.Pid, 5*time.Second) // it exits on bye
	}
	return code
}

// releaseKeeper makes a keeper an earlier process left at path let go of the ports. A
// peer of another user there (its directory was swapped under us) holds nothing of this
// RM's: it is ignored, never a reason not to start.
func releaseKeeper(path string, log *logrus.Logger) error {
	err := connkeep.Release(path)
	if errors.Is(err, connkeep.ErrForeignPeer) {
		log.WithError(err).Warn("connection keeper socket answered by another user: ignored")
		return nil
	}
	return err
}

// reap waits up to timeout for a child to exit, and collects it.
func reap(pid int, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for {
		var ws syscall.WaitStatus
		if got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); got == pid || err != nil || time.Now().After(deadline) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// spawnConnectionKeeper starts `bobbin connection-keeper` in a session of its own, with
// no descriptor of ours but /dev/null, so that it outlives this process (a kill of it,
// or of its process group) and holds nothing its starter waits on.
func spawnConnectionKeeper(path string, linger time.Duration) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "connection-keeper", "-socket", path, "-linger", linger.String())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return cmd, nil
}

// runConnectionKeeper is the keeper process: quiet (its output is /dev/null; the RM logs
// what it takes back), until the RM says bye or stays away longer than -linger.
func runConnectionKeeper(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("bobbin connection-keeper", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("socket", "", "the unix socket to serve, in a directory only this user may enter")
	linger := fs.Duration("linger", time.Minute, "how long to wait for the server to come back")
	if err := fs.Parse(args); err != nil || *path == "" {
		fmt.Fprintln(stderr, "bobbin connection-keeper: -socket is required")
		return 2
	}
	log := logrus.New()
	log.SetOutput(stderr)
	if err := connkeep.RunKeeper(*path, *linger, logrus.NewEntry(log)); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

// daemonService is a started-on-demand server: Bobbin's RM and NM.
type daemonService interface {
	Start() error
	Shutdown(ctx context.Context) error
}

// serveUntilSignal starts d, runs it until SIGTERM or SIGINT (or until a daemon with a
// Done channel is done), then shuts it down within 30 s. It returns the exit code.
func serveUntilSignal(name string, d daemonService, log *logrus.Logger) int {
	if err := d.Start(); err != nil {
		log.Errorf("%s not started: %v", name, err)
		return 1
	}
	var done <-chan struct{}
	if dd, ok := d.(interface{ Done() <-chan struct{} }); ok {
		done = dd.Done()
	}
	code := 0
	if waitForSignal(log, done) {
		log.Errorf("%s stopping: told to shut down", name)
		code = 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := d.Shutdown(ctx); err != nil {
		log.Errorf("%s shutdown: %v", name, err)
		return 1
	}
	return code
}

// waitForSignal blocks until SIGTERM/SIGINT or done; it reports whether done ended it.
func waitForSignal(log *logrus.Logger, done <-chan struct{}) bool {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	select {
	case s := <-sigs:
		log.WithField("signal", s.String()).Info("shutting down")
		return false
	case <-done:
		return true
	}
}

func runNodeManager(args []string, stderr io.Writer) int {
	f, log, sink, code := daemonPrologue("nodemanager", args, stderr)
	if f == nil {
		return code
	}
	defer sink.Close()
	c, dir, err := conf.LoadDir(f.confDir, conf.NodeManagerFiles()...)
	if err != nil {
		log.Errorf("NodeManager not started: %v", err)
		return 1
	}
	for _, w := range c.Warnings {
		log.Warn(w)
	}
	if dir != "" {
		log.WithField("conf_dir", dir).Info("configuration loaded")
	}
	// As Hadoop's yarn launcher does for a Java NodeManager: what its containers inherit.
	vars, from := nodemanager.LauncherEnv(os.LookupEnv, dir, exec.LookPath)
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		os.Setenv(k, vars[k])
		log.WithFields(logrus.Fields{"variable": k, "value": vars[k], "from": from[k]}).Info("container environment: set as Hadoop's launcher would")
	}
	nm, err := nodemanager.New(nodemanager.Options{Conf: c, ConfDir: dir, Logger: logrus.NewEntry(log)})
	if err != nil {
		log.Errorf("NodeManager not started: %v", err)
		return 1
	}
	return serveUntilSignal("NodeManager", nm, log)
}

func runWebProxy(args []string, stderr io.Writer) int {
	f, log, sink, code := daemonPrologue("webproxy", args, stderr)
	if f == nil {
		return code
	}
	defer sink.Close()
	c, dir, err := conf.LoadDir(f.confDir)
	if err != nil {
		log.Errorf("web proxy not started: %v", err)
		return 1
	}
	for _, w := range c.Warnings {
		log.Warn(w)
	}
	if dir != "" {
		log.WithField("conf_dir", dir).Info("configuration loaded")
	}
	p, err := webproxy.NewServer(c, currentUser(), logrus.NewEntry(log))
	if err != nil {
		log.Errorf("web proxy not started: %v", err)
		return 1
	}
	return serveUntilSignal("web proxy", p, log)
}

// gcTarget is a daemon's GC settings from its configuration: the percentage (GOGC) and
// the heap floor (internal/gcfloor), fixed or, for the RM, following its NodeManagers.
type gcTarget struct {
	fromEnv bool // GOGC is set: the runtime applied it, and nothing else is
	percent int
	floorMB int  // a fixed floor (0: none)
	auto    bool // gcfloor.PerNode for each running NodeManager
}

// readGCTarget reads key (a positive percentage) and floorKey ("auto", or a size in MB,
// 0 for none), naming either when it is wrong.
func readGCTarget(c *conf.Configuration, key, floorKey string) (gcTarget, error) {
	if _, ok := os.LookupEnv("GOGC"); ok {
		return gcTarget{fromEnv: true}, nil
	}
	p, err := c.Int(key)
	if err != nil {
		return gcTarget{}, err
	}
	if p <= 0 {
		raw, _ := c.Raw(key)
		return gcTarget{}, &conf.ValueError{Source: c.Source(key), Key: key, Value: raw, Reason: "must be a positive percentage"}
	}
	g := gcTarget{percent: p}
	if raw, _ := c.Trimmed(floorKey); strings.EqualFold(raw, "auto") {
		g.auto = true
		return g, nil
	}
	floor, err := c.Int(floorKey)
	if err != nil || floor < 0 {
		raw, _ := c.Raw(floorKey)
		return gcTarget{}, &conf.ValueError{Source: c.Source(floorKey), Key: floorKey, Value: raw, Reason: "must be auto, 0 (no floor) or a size in MB"}
	}
	g.floorMB = int(floor)
	return g, nil
}

// apply sets the percentage and starts the floor; nodes counts the running
// NodeManagers an automatic floor follows. stop ends the floor.
func (g gcTarget) apply(nodes func() int, log *logrus.Logger) (stop func()) {
	if g.fromEnv {
		return func() {}
	}
	debug.SetGCPercent(g.percent)
	floor := gcfloor.Fixed(uint64(g.floorMB) << 20)
	if g.auto {
		floor = func() uint64 { return gcfloor.Auto(nodes()) }
	}
	log.WithFields(logrus.Fields{"gc_percent": g.percent, "gc_heap_floor_mb": g.floorMB, "gc_heap_floor_auto": g.auto}).Debug("GC target set")
	if !g.auto && g.floorMB == 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		gcfloor.Run(ctx, floor, g.percent, time.Second)
	}()
	return func() { cancel(); <-done }
}
