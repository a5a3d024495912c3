package rmbench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bobbin-yarn/bobbin/client/rmclient"
	"github.com/bobbin-yarn/bobbin/rpc"
)

// RestartFunc kills the RM under test (kill -9) and starts it again on the same
// configuration and state store, returning the new process's id (0: unknown). The run
// measures how the RM comes back with the state the generator built: RestartResult.
type RestartFunc func(ctx context.Context) (pid int, err error)

// RestartResult is how the RM came back after Options.Restart killed it, every time
// measured from the moment the restart began (the kill).
type RestartResult struct {
	AtWindowSeconds float64 `json:"at_window_s"` // when in the window the RM was killed
	// What the generator held when the RM was killed.
	ContainersRunning int64   `json:"containers_running_at_kill"`
	AppsRunning       int     `json:"apps_running_at_kill"`
	CommandMs         float64 `json:"command_ms"` // the restart command itself (kill, spawn)
	// ServingMs: the first client call (getClusterMetrics) the new RM answered, polled
	// every 5 ms.
	ServingMs float64 `json:"serving_ms"`
	// NodesResyncedMs: the last NodeManager's registration with the new RM answered;
	// NodesResynced of them did, reporting ContainersReported containers.
	NodesResyncedMs    float64 `json:"nodes_resynced_ms"`
	NodesResynced      int64   `json:"nodes_resynced"`
	ContainersReported int64   `json:"containers_reported"`
	// AMsResyncedMs: the last AM's allocate answered by the new RM (after registering
	// again); AMsResynced of them were.
	AMsResyncedMs float64 `json:"ams_resynced_ms"`
	AMsResynced   int64   `json:"ams_resynced"`
	// FirstGrantMs: the first container the new RM granted (0: none in the window; a
	// full cluster grants none).
	FirstGrantMs float64 `json:"first_grant_ms,omitempty"`
	// RMContainers is the new RM's allocated containers (its REST cluster metrics) once
	// every node and AM had resynced, beside the generator's running count then: a
	// container the RM lost shows as a difference.
	RMContainers        int64 `json:"rm_containers_after,omitempty"`
	RMAllocatedMB       int64 `json:"rm_allocated_mb_after,omitempty"`
	GeneratorContainers int64 `json:"generator_containers_after"`
	// OutageErrors are the calls that failed between the kill and the caller's resync
	// (expected: the RM was down); they are not in Result.Errors.
	OutageErrors int64  `json:"outage_errors"`
	Failure      string `json:"failure,omitempty"`
}

// restartWatch follows the nodes and AMs back to the restarted RM. Its fields are
// written by the NMs' and AMs' goroutines, so they are atomics; killAt is zero until the
// restart begins.
type restartWatch struct {
	killAt       atomic.Int64   // UnixNano of the kill
	nodeBack     []atomic.Int64 // UnixNano of each node's first registration after it
	amBack       []atomic.Int64 // UnixNano of each AM's first allocate answered after it
	nodesBack    atomic.Int64
	amsBack      atomic.Int64
	reported     atomic.Int64
	lastNode     atomic.Int64
	lastAM       atomic.Int64
	firstGrant   atomic.Int64
	outageErrors atomic.Int64
	nodesDone    chan struct{} // closed when every node is back
	amsDone      chan struct{} // closed when every AM is back
}

func newRestartWatch(nodes, ams int) *restartWatch {
	return &restartWatch{nodeBack: make([]atomic.Int64, nodes), amBack: make([]atomic.Int64, ams),
		nodesDone: make(chan struct{}), amsDone: make(chan struct{})}
}

// after says whether at is past the kill.
func (w *restartWatch) after(at time.Time) bool {
	k := w.killAt.Load()
	return k != 0 && at.UnixNano() > k
}

func storeMax(v *atomic.Int64, x int64) {
	for m := v.Load(); x > m && !v.CompareAndSwap(m, x); m = v.Load() {
	}
}

// nodeRegistered notes node i's registration; the first after the kill counts it back.
func (w *restartWatch) nodeRegistered(i int, at time.Time, containers int) {
	if w == nil || !w.after(at) || !w.nodeBack[i].CompareAndSwap(0, at.UnixNano()) {
		return
	}
	w.reported.Add(int64(containers))
	storeMax(&w.lastNode, at.UnixNano())
	if w.nodesBack.Add(1) == int64(len(w.nodeBack)) {
		close(w.nodesDone)
	}
}

// amAnswered notes AM i's allocate, made at start and answered at at. Only a call made
// after the kill counts: one in flight then may have been answered by the old RM.
func (w *restartWatch) amAnswered(i int, start, at time.Time) {
	if w == nil || !w.after(start) || !w.amBack[i].CompareAndSwap(0, at.UnixNano()) {
		return
	}
	storeMax(&w.lastAM, at.UnixNano())
	if w.amsBack.Add(1) == int64(len(w.amBack)) {
		close(w.amsDone)
	}
}

// granted notes a container granted at at.
func (w *restartWatch) granted(at time.Time) {
	if w != nil && w.after(at) {
		w.firstGrant.CompareAndSwap(0, at.UnixNano())
	}
}

// nodeOutage and amOutage say whether a failed call of node or AM i is the restart's
// (the caller is not back yet): it is then counted here, not as an error.
func (w *restartWatch) nodeOutage(i int) bool { return w != nil && w.outage(&w.nodeBack[i]) }
func (w *restartWatch) amOutage(i int) bool   { return w != nil && w.outage(&w.amBack[i]) }

func (w *restartWatch) outage(back *atomic.Int64) bool {
	if w.killAt.Load() == 0 || back.Load() != 0 {
		return false
	}
	w.outageErrors.Add(1)
	return true
}

// restartResultWait bounds how long a restart run waits for every node and AM to come
// back before it reports what it saw.
const restartResultWait = 2 * time.Minute

// restart kills and restarts the RM through o.Restart (under ctx: the command is not
// cut short) and measures its return until window ends; the RM's sampling (nil: none)
// stops before the kill and follows the new process.
func (r *run) restart(ctx, window context.Context, windowStart time.Time, sampling *rmSampling) *RestartResult {
	w := r.watch
	res := &RestartResult{AtWindowSeconds: round3(time.Since(windowStart).Seconds()), ContainersRunning: r.running.Load(), AppsRunning: len(w.amBack)}
	ms := func(t int64) float64 {
		if t == 0 {
			return 0
		}
		return round3(float64(t-w.killAt.Load()) / 1e6)
	}
	sampling.pause()
	start := time.Now()
	w.killAt.Store(start.UnixNano())
	pid, err := r.o.Restart(ctx)
	res.CommandMs = round3(float64(time.Since(start).Microseconds()) / 1000)
	if err != nil {
		res.Failure = fmt.Sprintf("restart command: %v", err)
		return res
	}
	if pid > 0 {
		sampling.start(pid)
	}
	c := rmclient.New(r.o.ClientAddr, r.o.User, rpc.ClientOptions{ConnectRetries: -1, Logger: r.o.Logger})
	defer c.Close()
	deadline := time.Now().Add(restartResultWait)
	for {
		callCtx, cancel := context.WithTimeout(window, time.Second)
		_, err := c.GetClusterMetrics(callCtx)
		cancel()
		if err == nil {
			res.ServingMs = ms(time.Now().UnixNano())
			break
		}
		if time.Now().After(deadline) || window.Err() != nil {
			res.Failure = fmt.Sprintf("the RM did not serve within %v: %v", restartResultWait, err)
			return res
		}
		time.Sleep(5 * time.Millisecond) // a poll of a process starting, not a test's wait
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for _, done := range []chan struct{}{w.nodesDone, w.amsDone} {
		select {
		case <-done:
		case <-timer.C:
			res.Failure = fmt.Sprintf("after %v, %d of %d nodes and %d of %d AMs had resynced", restartResultWait,
				w.nodesBack.Load(), len(w.nodeBack), w.amsBack.Load(), len(w.amBack))
		case <-window.Done():
			res.Failure = fmt.Sprintf("the window ended before everything resynced: %d of %d nodes and %d of %d AMs had",
				w.nodesBack.Load(), len(w.nodeBack), w.amsBack.Load(), len(w.amBack))
		}
		if res.Failure != "" {
			break
		}
	}
	res.NodesResyncedMs, res.NodesResynced, res.ContainersReported = ms(w.lastNode.Load()), w.nodesBack.Load(), w.reported.Load()
	res.AMsResyncedMs, res.AMsResynced = ms(w.lastAM.Load()), w.amsBack.Load()
	res.FirstGrantMs = ms(w.firstGrant.Load())
	res.GeneratorContainers = r.running.Load()
	if r.o.RMREST != "" {
		n, mb, err := clusterContainers(ctx, r.o.RMREST)
		if err != nil && res.Failure == "" {
			res.Failure = err.Error()
		}
		res.RMContainers, res.RMAllocatedMB = n, mb
	}
	res.OutageErrors = w.outageErrors.Load()
	return res
}

// clusterContainers reads the RM's allocated containers and memory from its REST API
// (Bobbin's and Apache's alike).
func clusterContainers(ctx context.Context, web string) (containers, mb int64, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+web+"/ws/v1/cluster/metrics", nil)
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, 0, fmt.Errorf("rmbench: the RM's cluster metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("rmbench: the RM's cluster metrics: %s", resp.Status)
	}
	var m struct {
		ClusterMetrics struct {
			ContainersAllocated int64 `json:"containersAllocated"`
			AllocatedMB         int64 `json:"allocatedMB"`
		} `json:"clusterMetrics"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		return 0, 0, fmt.Errorf("rmbench: the RM's cluster metrics: %w", err)
	}
	return m.ClusterMetrics.ContainersAllocated, m.ClusterMetrics.AllocatedMB, nil
}

// rmSampling samples the RM's process across a restart: each process its own sampler,
// their CPU summed, the peak the highest, the end the last's.
type rmSampling struct {
	mu   sync.Mutex
	cur  *procSampler
	done []procSample
}

// start samples process pid from now on (after pausing any other).
func (s *rmSampling) start(pid int) {
	if s == nil {
		return
	}
	s.pause()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cur = startSampler(pid, 250*time.Millisecond)
}

// pause ends the current process's sampling (before it is killed: a dead process's CPU
// time cannot be read).
func (s *rmSampling) pause() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != nil {
		s.done = append(s.done, s.cur.stop())
		s.cur = nil
	}
}

// stop ends the sampling and sums what it saw.
func (s *rmSampling) stop() (cpu time.Duration, peakMB, endMB float64) {
	s.pause()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.done {
		cpu += d.cpu
		peakMB = max(peakMB, d.peakRSSMB)
		endMB = d.endRSSMB
	}
	return cpu, peakMB, endMB
}
