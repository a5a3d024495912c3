// Package rmbench is a load generator for any YARN ResourceManager, Bobbin's or Apache's,
// over the real protocols: simulated NodeManagers register and heartbeat over
// ResourceTracker, applications with unmanaged AMs are submitted over
// ApplicationClientProtocol and run their AMs here over ApplicationMasterProtocol with
// their AMRMTokens (DIGEST-MD5), keep asking for containers, "run" each container they
// are granted on the simulated NM it was placed on, and finish at the end. It measures
// what the RM delivers: allocations per second, heartbeats per second, call latencies and
// the time from an ask to its grant, and — given the RM's pid — the RM's memory and CPU.
package rmbench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/client/amclient"
	"github.com/bobbin-yarn/bobbin/client/rmclient"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/rpc/token"
	"github.com/bobbin-yarn/bobbin/tools/nmsim"
)

// Options configure a run. Zero values take the defaults noted.
type Options struct {
	// Progress, when set, hears how the measured window goes, every ProgressEvery (10 s
	// by default): its time so far and the containers allocated in it.
	Progress      func(elapsed time.Duration, allocated uint64)
	ProgressEvery time.Duration

	TrackerAddr   string // yarn.resourcemanager.resource-tracker.address
	ClientAddr    string // yarn.resourcemanager.address
	SchedulerAddr string // yarn.resourcemanager.scheduler.address

	Nodes    int           // simulated NodeManagers
	Apps     int           // applications, each with an unmanaged AM run here
	Duration time.Duration // the measured window
	// Warmup is how long the AMs run before the window opens, unmeasured: with long
	// containers the cluster fills meanwhile, and the window measures the RM holding
	// that state.
	Warmup        time.Duration
	Heartbeat     time.Duration // NM heartbeat interval until the RM names one (default 1 s); then, as Java NMs, the RM's nextHeartBeatInterval
	AMInterval    time.Duration // AM allocate interval (default 1 s, as MapReduce's AM)
	ContainerTime time.Duration // how long each granted container "runs" (default 2 s)
	AsksPerApp    int           // containers each AM keeps outstanding (default 50)
	// Rate, when positive, is the offered load: containers asked for per second over all
	// AMs (each AM adds Rate/Apps a second to its outstanding asks, up to AsksPerApp), so
	// RMs can be compared at one rate; zero keeps AsksPerApp outstanding at all times.
	Rate float64

	NodeMemoryMB      int64 // default 65536
	NodeVCores        int32 // default 64
	ContainerMemoryMB int64 // default 1024
	ContainerVCores   int32 // default 1

	Queue     string // default "default"
	User      string // the submitting user (also the AMs' user)
	Host      string // NodeId host of the simulated NMs (default 127.0.0.1)
	FirstPort int    // NodeId port of the first NM; the others follow (default 20000)
	// SetupConcurrency bounds concurrent NM registrations and app submissions (default 32).
	SetupConcurrency int
	// TrackerConnections, when positive, multiplexes the simulated NMs' ResourceTracker
	// calls over that many IPC connections (node i on connection i mod K) instead of one
	// connection per NM: the RM's work per heartbeat is the same, the per-socket cost of
	// the machine running both is not.
	TrackerConnections int
	// SlowAllocate, when positive, logs (at warn) each allocate call that took at least
	// that long, with its start time.
	SlowAllocate time.Duration
	// RMPid, when set, is sampled for RSS and CPU time through /proc.
	RMPid int
	// RMWeb, when set, is a Bobbin RM's web address (host:port): its /prom is read at the
	// window's start and end for its GC pauses and live heap.
	RMWeb string
	// Restart, when set, is called RestartAfter into the window: it kills the RM and
	// starts it again (work-preserving recovery on), and Result.Restart says how the RM
	// came back with the state the generator built. The simulated NMs keep their
	// containers when the RM asks them to resync, as Java NMs do under work-preserving
	// recovery, and report them as they register again.
	Restart      RestartFunc
	RestartAfter time.Duration
	// RMREST is the RM's web app (host:port, any RM): a restart run reads the RM's
	// allocated containers from its REST API once everything resynced.
	RMREST string
	Logger *logrus.Entry
}

func (o *Options) defaults() error {
	if o.Nodes <= 0 || o.Apps <= 0 || o.Duration <= 0 {
		return fmt.Errorf("rmbench: nodes, apps and duration must be positive (got %d, %d, %s)", o.Nodes, o.Apps, o.Duration)
	}
	if o.TrackerAddr == "" || o.ClientAddr == "" || o.SchedulerAddr == "" {
		return errors.New("rmbench: the RM's tracker, client and scheduler addresses are required")
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.Heartbeat, time.Second)
	def(&o.AMInterval, time.Second)
	def(&o.ContainerTime, 2*time.Second)
	if o.AsksPerApp <= 0 {
		o.AsksPerApp = 50
	}
	if o.NodeMemoryMB <= 0 {
		o.NodeMemoryMB = 65536
	}
	if o.NodeVCores <= 0 {
		o.NodeVCores = 64
	}
	if o.ContainerMemoryMB <= 0 {
		o.ContainerMemoryMB = 1024
	}
	if o.ContainerVCores <= 0 {
		o.ContainerVCores = 1
	}
	if o.Queue == "" {
		o.Queue = "default"
	}
	if o.User == "" {
		o.User = "bench"
	}
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	if o.FirstPort <= 0 {
		o.FirstPort = 20000
	}
	if o.FirstPort+o.Nodes > 65536 {
		return fmt.Errorf("rmbench: %d nodes from port %d run past port 65535", o.Nodes, o.FirstPort)
	}
	if o.SetupConcurrency <= 0 {
		o.SetupConcurrency = 32
	}
	if o.Logger == nil {
		l := logrus.New()
		l.SetLevel(logrus.WarnLevel)
		o.Logger = logrus.NewEntry(l)
	}
	return nil
}

// Result is what a run measured. Rates and latencies cover the measured window only.
type Result struct {
	Nodes            int     `json:"nodes"`
	Apps             int     `json:"apps"`
	DurationSeconds  float64 `json:"duration_s"`
	HeartbeatMs      int64   `json:"heartbeat_interval_ms"`
	AMIntervalMs     int64   `json:"am_interval_ms"`
	ContainerMs      int64   `json:"container_ms"`
	AsksPerApp       int     `json:"asks_per_app"`
	OfferedRate      float64 `json:"offered_rate,omitempty"`
	SetupSeconds     float64 `json:"setup_s"`
	TeardownSeconds  float64 `json:"teardown_s"`
	AppsFinished     int64   `json:"apps_finished"`
	NodesLive        int     `json:"nodes_heartbeating"`
	MaxRunning       int64   `json:"max_containers_running"`
	AllocatedPerSec  float64 `json:"containers_allocated_per_second"`
	Allocated        uint64  `json:"containers_allocated"`
	Completed        int64   `json:"containers_completed"`
	HeartbeatsPerSec float64 `json:"heartbeats_per_second"`
	Heartbeats       uint64  `json:"heartbeats"`
	AllocateCalls    uint64  `json:"allocate_calls"`

	AllocateLatency  Summary `json:"allocate_latency_ms"`
	HeartbeatLatency Summary `json:"heartbeat_latency_ms"`
	AskToGrant       Summary `json:"ask_to_grant_ms"`
	NMRegister       Summary `json:"nm_register_ms"`
	AppStart         Summary `json:"app_start_ms"` // submit to AM registered

	Errors       int64            `json:"errors"`
	ErrorKinds   map[string]int64 `json:"error_kinds,omitempty"`
	ErrorSamples []string         `json:"error_samples,omitempty"`

	GeneratorCPUSeconds float64 `json:"generator_cpu_s"`
	RMCPUSeconds        float64 `json:"rm_cpu_s,omitempty"`
	RMPeakRSSMB         float64 `json:"rm_peak_rss_mb,omitempty"`
	RMEndRSSMB          float64 `json:"rm_end_rss_mb,omitempty"`
	// RMRSSBeforeAppsMB is the RM's RSS once the NodeManagers registered, before any
	// application: what the applications and containers add is RMEndRSSMB less it, over
	// RunningAtEnd containers of Apps applications.
	RMRSSBeforeAppsMB float64 `json:"rm_rss_before_apps_mb,omitempty"`
	RunningAtEnd      int64   `json:"containers_running_at_end"`
	// WarmupSeconds is how long the AMs ran before the window; RunningAfterWarmup the
	// containers running when it opened.
	WarmupSeconds      float64 `json:"warmup_s,omitempty"`
	RunningAfterWarmup int64   `json:"containers_running_after_warmup,omitempty"`

	// From a Bobbin RM's /prom (RMWeb): its stop-the-world GC pauses in the window (the
	// upper bounds of the runtime histogram's buckets holding the median, the 99th
	// percentile and the longest; -1: beyond its last bound) and its live heap at the end.
	RMGCPauses      uint64  `json:"rm_gc_pauses,omitempty"`
	RMGCPauseP50Ms  float64 `json:"rm_gc_pause_p50_ms,omitempty"`
	RMGCPauseP99Ms  float64 `json:"rm_gc_pause_p99_ms,omitempty"`
	RMGCPauseMaxMs  float64 `json:"rm_gc_pause_max_ms,omitempty"`
	RMLiveHeapEndMB float64 `json:"rm_live_heap_end_mb,omitempty"`

	Restart *RestartResult `json:"restart,omitempty"` // Options.Restart's measure
}

// errorLog counts errors by kind and keeps the first few messages.
type errorLog struct {
	mu      sync.Mutex
	total   int64
	kinds   map[string]int64
	samples []string
}

// summary is the count of errors, by kind, and a few samples.
func (e *errorLog) summary() (total int64, kinds map[string]int64, samples []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.total, e.kinds, e.samples
}

func (e *errorLog) add(kind string, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.total++
	if e.kinds == nil {
		e.kinds = map[string]int64{}
	}
	e.kinds[kind]++
	if len(e.samples) < 10 {
		e.samples = append(e.samples, kind+": "+err.Error())
	}
}

type run struct {
	o         Options
	recording atomic.Bool // the window is open: calls and grants are measured
	live      atomic.Bool // the AMs run (warm-up and window)
	errs      errorLog

	nodes     map[nodeKey]*nmsim.NodeManager // fixed after setup
	nodeOrder []*nmsim.NodeManager
	trackers  []*rpc.Client // shared ResourceTracker connections (Options.TrackerConnections)
	watch     *restartWatch // with Options.Restart: the nodes and AMs coming back

	hb, alloc, grant, nmReg, appStart Histogram
	heartbeats, allocateCalls         atomic.Uint64
	allocated                         atomic.Uint64
	completed, running, maxRunning    atomic.Int64
	finished                          atomic.Int64
}

// am is one application and its unmanaged AM.
type am struct {
	idx    int // its index among the run's AMs
	id     *yarnpb.ApplicationIdProto
	client *amclient.Client
	asked  []time.Time // when each outstanding ask was made, oldest first
	credit float64     // asks owed under Options.Rate, not yet made
}

// Run runs the benchmark: setup (NMs, then applications), the measured window, teardown.
func Run(ctx context.Context, o Options) (*Result, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	r := &run{o: o, nodes: make(map[nodeKey]*nmsim.NodeManager, o.Nodes)}
	if o.Restart != nil {
		r.watch = newRestartWatch(o.Nodes, o.Apps)
	}
	setupStart := time.Now()
	defer r.stopNodes()
	if err := r.startNodes(ctx); err != nil {
		return nil, err
	}
	var rssBeforeApps int64
	if o.RMPid > 0 {
		rssBeforeApps, _, _ = processRSS(o.RMPid)
	}
	ams, err := r.startApps(ctx)
	defer func() {
		for _, a := range ams {
			a.client.Close()
		}
	}()
	if err != nil {
		return nil, err
	}
	res := &Result{Nodes: o.Nodes, Apps: o.Apps, HeartbeatMs: o.Heartbeat.Milliseconds(), AMIntervalMs: o.AMInterval.Milliseconds(),
		ContainerMs: o.ContainerTime.Milliseconds(), AsksPerApp: o.AsksPerApp, OfferedRate: o.Rate, SetupSeconds: time.Since(setupStart).Seconds(),
		NMRegister: r.nmReg.Summarize(), AppStart: r.appStart.Summarize(), RMRSSBeforeAppsMB: round3(float64(rssBeforeApps) / 1024),
		WarmupSeconds: o.Warmup.Seconds()}
	// The AMs run from the warm-up's start to the window's end; the window opens once
	// the warm-up is over.
	r.live.Store(true)
	windowCtx, stop := context.WithDeadline(ctx, time.Now().Add(o.Warmup+o.Duration))
	var wg sync.WaitGroup
	for _, a := range ams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.amLoop(windowCtx, a)
		}()
	}
	if o.Warmup > 0 {
		t := time.NewTimer(o.Warmup)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
		res.RunningAfterWarmup = r.running.Load()
	}
	var rt0 rmRuntime
	if o.RMWeb != "" {
		if rt0, err = scrapeRuntime(ctx, o.RMWeb); err != nil {
			stop()
			r.live.Store(false)
			wg.Wait()
			return nil, err
		}
	}
	var rmStats *rmSampling
	if o.RMPid > 0 {
		rmStats = &rmSampling{}
		rmStats.start(o.RMPid)
	}
	cpu0 := selfCPU()
	hb0 := r.heartbeatsSeen()
	r.recording.Store(true)
	windowStart := time.Now()
	if o.Restart != nil {
		wg.Add(1)
		go func() { // the window's: it ends with it (a restart it began is waited for)
			defer wg.Done()
			t := time.NewTimer(o.RestartAfter)
			defer t.Stop()
			select {
			case <-windowCtx.Done():
				return
			case <-t.C:
			}
			res.Restart = r.restart(ctx, windowCtx, windowStart, rmStats)
		}()
	}
	if o.Progress != nil {
		every := o.ProgressEvery
		if every <= 0 {
			every = 10 * time.Second
		}
		wg.Add(1)
		go func() { // the window's: it ends with it
			defer wg.Done()
			t := time.NewTicker(every)
			defer t.Stop()
			for {
				select {
				case <-windowCtx.Done():
					return
				case <-t.C:
					o.Progress(time.Since(windowStart), r.allocated.Load())
				}
			}
		}()
	}
	wg.Wait()
	stop()
	window := time.Since(windowStart)
	r.recording.Store(false)
	r.live.Store(false)
	res.RunningAtEnd = r.running.Load()
	if o.RMWeb != "" {
		rt1, err := scrapeRuntime(ctx, o.RMWeb)
		if err != nil {
			return nil, err
		}
		if res.Restart != nil && res.Restart.ServingMs > 0 {
			// The RM was restarted in the window: its pauses are the new process's,
			// from its start.
			rt0 = rmRuntime{bounds: rt1.bounds, counts: make([]uint64, len(rt1.counts))}
		}
		p := pausesBetween(rt0, rt1)
		ms := func(s float64) float64 {
			if math.IsInf(s, 1) {
				return -1
			}
			return round3(s * 1000)
		}
		res.RMGCPauses, res.RMGCPauseP50Ms, res.RMGCPauseP99Ms, res.RMGCPauseMaxMs = p.n, ms(p.p50), ms(p.p99), ms(p.maxSeconds)
		res.RMLiveHeapEndMB = round3(rt1.liveHeap / (1 << 20))
	}
	res.GeneratorCPUSeconds = round3((selfCPU() - cpu0).Seconds())
	if rmStats != nil {
		cpu, peak, end := rmStats.stop()
		res.RMCPUSeconds, res.RMPeakRSSMB, res.RMEndRSSMB = round3(cpu.Seconds()), round3(peak), round3(end)
	}
	res.NodesLive = r.nodesHeartbeatingSince(hb0)

	teardownStart := time.Now()
	r.finishApps(ctx, ams)
	res.TeardownSeconds = round3(time.Since(teardownStart).Seconds())

	secs := window.Seconds()
	res.DurationSeconds = round3(secs)
	res.SetupSeconds = round3(res.SetupSeconds)
	res.Allocated = r.allocated.Load()
	res.AllocatedPerSec = round3(float64(res.Allocated) / secs)
	res.Completed = r.completed.Load()
	res.Heartbeats = r.heartbeats.Load()
	res.HeartbeatsPerSec = round3(float64(res.Heartbeats) / secs)
	res.AllocateCalls = r.allocateCalls.Load()
	res.AllocateLatency, res.HeartbeatLatency, res.AskToGrant = r.alloc.Summarize(), r.hb.Summarize(), r.grant.Summarize()
	res.AppsFinished = r.finished.Load()
	res.MaxRunning = r.maxRunning.Load()
	res.Errors, res.ErrorKinds, res.ErrorSamples = r.errs.summary()
	return res, nil
}

func round3(f float64) float64 { return float64(int64(f*1000+0.5)) / 1000 }

// each runs f(i) for i in [0, n) on at most conc goroutines and returns the first error.
func each(ctx context.Context, n, conc int, f func(i int) error) error {
	var (
		next  atomic.Int64
		first error
		mu    sync.Mutex
		wg    sync.WaitGroup
	)
	for range min(conc, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}

// startNodes registers the simulated NMs, staggering their heartbeats over one interval.
func (r *run) startNodes(ctx context.Context) error {
	for range r.o.TrackerConnections {
		r.trackers = append(r.trackers, nmsim.TrackerClient(r.o.TrackerAddr, r.o.Logger))
	}
	nms := make([]*nmsim.NodeManager, r.o.Nodes)
	err := each(ctx, r.o.Nodes, r.o.SetupConcurrency, func(i int) error {
		start := time.Now()
		var shared *rpc.Client
		if len(r.trackers) > 0 {
			shared = r.trackers[i%len(r.trackers)]
		}
		nm, err := nmsim.Start(nmsim.Options{TrackerAddr: r.o.TrackerAddr, Host: r.o.Host, Port: int32(r.o.FirstPort + i),
			HTTPPort: 8042, MemoryMB: r.o.NodeMemoryMB, VCores: r.o.NodeVCores, Heartbeat: r.o.Heartbeat, FollowRM: true,
			FirstHeartbeat: time.Duration(rand.Int64N(int64(r.o.Heartbeat))) + time.Millisecond, Logger: r.o.Logger,
			OnHeartbeat: func(d time.Duration, err error) { r.onHeartbeat(i, d, err) }, Tracker: shared, KeepOnResync: true,
			OnRegister: func(at time.Time, containers int) { r.watch.nodeRegistered(i, at, containers) }})
		if err != nil {
			return fmt.Errorf("registering simulated NM %d: %w", i, err)
		}
		r.nmReg.Record(time.Since(start))
		nms[i] = nm
		return nil
	})
	for _, nm := range nms {
		if nm != nil {
			r.nodes[nodeKey{nm.NodeID().GetHost(), nm.NodeID().GetPort()}] = nm
			r.nodeOrder = append(r.nodeOrder, nm)
		}
	}
	return err
}

func (r *run) onHeartbeat(i int, d time.Duration, err error) {
	if !r.recording.Load() {
		return
	}
	if err != nil {
		if !r.watch.nodeOutage(i) {
			r.errs.add("heartbeat", err)
		}
		return
	}
	r.heartbeats.Add(1)
	r.hb.Record(d)
}

func (r *run) heartbeatsSeen() []int64 {
	out := make([]int64, len(r.nodeOrder))
	for i, nm := range r.nodeOrder {
		out[i] = nm.Heartbeats()
	}
	return out
}

// nodesHeartbeatingSince counts the NMs whose heartbeats succeeded during the window.
func (r *run) nodesHeartbeatingSince(before []int64) int {
	live := 0
	for i, nm := range r.nodeOrder {
		if nm.Heartbeats() > before[i] {
			live++
		}
	}
	return live
}

func (r *run) stopNodes() {
	var wg sync.WaitGroup
	for _, nm := range r.nodeOrder {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nm.Stop()
		}()
	}
	wg.Wait()
	r.nodeOrder = nil
	for _, c := range r.trackers {
		c.Close()
	}
	r.trackers = nil
}

// startApps submits the applications with unmanaged AMs and registers each AM with the
// AMRMToken its application report carries.
func (r *run) startApps(ctx context.Context) ([]*am, error) {
	ams := make([]*am, r.o.Apps)
	clients := make([]*rmclient.Client, r.o.SetupConcurrency)
	for i := range clients {
		clients[i] = rmclient.New(r.o.ClientAddr, r.o.User, rpc.ClientOptions{ConnectRetries: 3, Logger: r.o.Logger})
		defer clients[i].Close()
	}
	err := each(ctx, r.o.Apps, r.o.SetupConcurrency, func(i int) error {
		a, err := r.startApp(ctx, clients[i%len(clients)], i)
		ams[i] = a
		return err
	})
	var out []*am
	for _, a := range ams {
		if a != nil {
			a.idx = len(out)
			out = append(out, a)
		}
	}
	return out, err
}

func (r *run) startApp(ctx context.Context, c *rmclient.Client, i int) (*am, error) {
	start := time.Now()
	na, err := c.GetNewApplication(ctx)
	if err != nil {
		return nil, fmt.Errorf("getNewApplication: %w", err)
	}
	id := na.GetApplicationId()
	sc := &yarnpb.ApplicationSubmissionContextProto{ApplicationId: id, ApplicationName: proto.String(fmt.Sprintf("rmbench-%d", i)),
		Queue: proto.String(r.o.Queue), UnmanagedAm: proto.Bool(true), ApplicationType: proto.String("RMBENCH"),
		AmContainerSpec: &yarnpb.ContainerLaunchContextProto{},
		Resource:        &yarnpb.ResourceProto{Memory: proto.Int64(r.o.ContainerMemoryMB), VirtualCores: proto.Int32(r.o.ContainerVCores)}}
	if err := c.Call(ctx, "submitApplication", &yarnpb.SubmitApplicationRequestProto{ApplicationSubmissionContext: sc},
		&yarnpb.SubmitApplicationResponseProto{}); err != nil {
		return nil, fmt.Errorf("submitApplication %s: %w", records.AppIDFromProto(id), err)
	}
	// The AMRMToken appears in the report once the RM has launched the (unmanaged) attempt.
	var tok *token.Token
	deadline := time.Now().Add(60 * time.Second)
	for tok == nil {
		rep, err := c.GetApplicationReport(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("getApplicationReport %s: %w", records.AppIDFromProto(id), err)
		}
		switch rep.GetYarnApplicationState() {
		case yarnpb.YarnApplicationStateProto_FAILED, yarnpb.YarnApplicationStateProto_KILLED, yarnpb.YarnApplicationStateProto_FINISHED:
			return nil, fmt.Errorf("application %s ended before its AM ran: %s %s", records.AppIDFromProto(id), rep.GetYarnApplicationState(), rep.GetDiagnostics())
		}
		if t := rep.GetAmRmToken(); t != nil {
			tok = token.FromProto(t)
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("application %s: no AMRMToken in its report after 60 s (state %s)", records.AppIDFromProto(id), rep.GetYarnApplicationState())
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	// A refused connection is retried every 100 ms, as the simulated NMs' are: a
	// restart run measures when the RM is back, not the clients' back-off.
	a := &am{id: id, client: amclient.New(amclient.Options{Addr: r.o.SchedulerAddr, Token: tok, User: r.o.User, ConnectRetries: 30,
		RetryInterval: 100 * time.Millisecond, Logger: r.o.Logger})}
	if _, err := a.client.Register(ctx, r.o.Host, 0, ""); err != nil {
		a.client.Close()
		return nil, fmt.Errorf("application %s: %w", records.AppIDFromProto(id), err)
	}
	r.appStart.Record(time.Since(start))
	return a, nil
}

// amLoop is one AM's heartbeat until ctx ends: keep AsksPerApp containers outstanding
// (or add Rate's share each interval, up to AsksPerApp),
// start what is granted on its simulated NM, and note completions.
func (r *run) amLoop(ctx context.Context, a *am) {
	// Stagger the AMs over one interval, as independently started AMs would be.
	t := time.NewTimer(time.Duration(rand.Int64N(int64(r.o.AMInterval))))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		t.Reset(r.o.AMInterval)
		now := time.Now()
		want := r.o.AsksPerApp
		if r.o.Rate > 0 {
			a.credit += r.o.Rate / float64(r.o.Apps) * r.o.AMInterval.Seconds()
			n := int(a.credit)
			a.credit -= float64(n)
			want = min(len(a.asked)+n, r.o.AsksPerApp)
		}
		for range want - len(a.asked) {
			a.asked = append(a.asked, now)
		}
		a.client.Request(1, "*", r.o.ContainerMemoryMB, r.o.ContainerVCores, int32(want))
		callCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		start := time.Now()
		_, lean, err := a.client.AllocateGranted(callCtx, 0.5)
		cancel()
		got := time.Now()
		if !r.live.Load() {
			return
		}
		rec := r.recording.Load()
		if err != nil {
			if rec && !r.watch.amOutage(a.idx) {
				r.errs.add("allocate", err)
			}
			continue
		}
		r.watch.amAnswered(a.idx, start, got)
		if rec {
			r.allocateCalls.Add(1)
			r.alloc.Record(got.Sub(start))
			if r.o.SlowAllocate > 0 && got.Sub(start) >= r.o.SlowAllocate {
				// When in the window the tail happens (start-up, a GC) is what a p99 hides.
				r.o.Logger.WithFields(logrus.Fields{"start_unix_us": start.UnixMicro(), "took_us": got.Sub(start).Microseconds()}).Warn("slow allocate")
			}
		}
		r.granted(a, lean.Granted, got, rec)
		for _, st := range lean.Completed {
			r.completedOne(st.ExitStatus, st.Diagnostics, rec)
		}
	}
}

// completedOne counts a container its AM heard completed (in the window: rec).
func (r *run) completedOne(exit int32, diagnostics string, rec bool) {
	r.running.Add(-1)
	if !rec {
		return
	}
	if exit != 0 {
		r.errs.add(fmt.Sprintf("container exit %d", exit), errors.New(diagnostics))
		return
	}
	r.completed.Add(1)
}

// nodeKey is a simulated NM's NodeId.
type nodeKey struct {
	host string
	port int32
}

// granted starts an AM's new containers on their nodes, and measures them in the window
// (rec).
func (r *run) granted(a *am, ctrs []amclient.Granted, at time.Time, rec bool) {
	if len(ctrs) > 0 {
		r.watch.granted(at)
	}
	for _, c := range ctrs {
		if rec {
			r.allocated.Add(1)
		}
		if len(a.asked) > 0 {
			if rec {
				r.grant.Record(at.Sub(a.asked[0]))
			}
			a.asked = a.asked[1:]
		}
		nm := r.nodes[nodeKey{c.Host, c.Port}]
		if nm == nil {
			r.errs.add("grant", fmt.Errorf("container %s on unknown node %s:%d", c.ID, c.Host, c.Port))
			continue
		}
		nm.Run(c.ID, r.o.ContainerTime, c.MemoryMB, c.VCores)
		now := r.running.Add(1)
		for m := r.maxRunning.Load(); now > m && !r.maxRunning.CompareAndSwap(m, now); m = r.maxRunning.Load() {
		}
	}
}

// finishApps unregisters every AM (SUCCEEDED); the RM then ends the applications and
// tells the NMs to clean their containers up.
func (r *run) finishApps(ctx context.Context, ams []*am) {
	_ = each(ctx, len(ams), r.o.SetupConcurrency, func(i int) error {
		fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := ams[i].client.Finish(fctx, yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED, "rmbench done", ""); err != nil {
			r.errs.add("finish", fmt.Errorf("%s: %w", records.AppIDFromProto(ams[i].id), err))
			return nil
		}
		r.finished.Add(1)
		return nil
	})
}

// selfCPU is this process's user+system CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
