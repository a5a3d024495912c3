package rmcore

import (
	"sync"

	metrics "github.com/rcrowley/go-metrics"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

// rmMetrics are the RM's go-metrics, named like the Java RM's ClusterMetrics and
// QueueMetrics where one exists. RPC latency is measured per method by the IPC servers.
type Metrics struct {
	reg                metrics.Registry
	AppsSubmitted      metrics.Counter
	AppsCompleted      metrics.Counter
	AppsFailed         metrics.Counter
	AppsKilled         metrics.Counter
	attemptsFailed     metrics.Counter
	AttemptsRetried    metrics.Counter
	ContainersAlloc    metrics.Counter
	containersDone     metrics.Counter
	containersReleased metrics.Counter
	containersPreempt  metrics.Counter
	ContainersExpired  metrics.Counter
	allocatedMB        metrics.Gauge
	allocatedVCores    metrics.Gauge
	availableMB        metrics.Gauge
	availableVCores    metrics.Gauge
	pendingContainers  metrics.Gauge
	RunningContainers  metrics.Gauge
	// AMLaunchDelay times AM launches (start to the NodeManager's answer),
	// AMRegisterDelay an AM's first registration after its launch (ClusterMetrics').
	AMLaunchDelay, AMRegisterDelay metrics.Timer

	mu     sync.Mutex
	queues map[string]*QueueCounts // by leaf queue
}

// QueueCounts are a leaf queue's application totals since the RM started (QueueMetrics'
// AppsSubmitted, AppsCompleted, AppsKilled, AppsFailed), and its containers allocated,
// by how near their asks (the Aggregate*ContainersAllocated counters).
type QueueCounts struct {
	Submitted, Completed, Killed, Failed int64
	Allocated                            int64
	ByLocality                           [3]int64 // by scheduler.Locality
}

func NewMetrics(reg metrics.Registry) *Metrics {
	c := func(name string) metrics.Counter { return metrics.GetOrRegisterCounter("rm."+name, reg) }
	g := func(name string) metrics.Gauge { return metrics.GetOrRegisterGauge("rm."+name, reg) }
	return &Metrics{reg: reg,
		AppsSubmitted: c("AppsSubmitted"), AppsCompleted: c("AppsCompleted"), AppsFailed: c("AppsFailed"), AppsKilled: c("AppsKilled"),
		attemptsFailed: c("AttemptsFailed"), AttemptsRetried: c("AttemptsRetried"),
		AMLaunchDelay: metrics.GetOrRegisterTimer("rm.AMLaunchDelay", reg), AMRegisterDelay: metrics.GetOrRegisterTimer("rm.AMRegisterDelay", reg),
		ContainersAlloc: c("ContainersAllocated"), containersDone: c("ContainersCompleted"), containersReleased: c("ContainersReleased"),
		containersPreempt: c("ContainersPreempted"), ContainersExpired: c("ContainersExpired"),
		allocatedMB: g("AllocatedMB"), allocatedVCores: g("AllocatedVCores"), availableMB: g("AvailableMB"), availableVCores: g("AvailableVCores"),
		pendingContainers: g("PendingContainers"), RunningContainers: g("AllocatedContainers"),
	}
}

func (m *Metrics) queue(name string) *QueueCounts {
	if m.queues == nil {
		m.queues = map[string]*QueueCounts{}
	}
	q := m.queues[name]
	if q == nil {
		q = &QueueCounts{}
		m.queues[name] = q
	}
	return q
}

// AppSubmitted counts an application accepted into queue.
func (m *Metrics) AppSubmitted(queue string) {
	m.AppsSubmitted.Inc(1)
	m.mu.Lock()
	m.queue(queue).Submitted++
	m.mu.Unlock()
}

// AppEnded counts an application of queue that reached state.
func (m *Metrics) AppEnded(queue string, state yarnpb.YarnApplicationStateProto) {
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queue(queue)
	switch state {
	case yarnpb.YarnApplicationStateProto_FINISHED:
		m.AppsCompleted.Inc(1)
		q.Completed++
	case yarnpb.YarnApplicationStateProto_FAILED:
		m.AppsFailed.Inc(1)
		q.Failed++
	case yarnpb.YarnApplicationStateProto_KILLED:
		m.AppsKilled.Inc(1)
		q.Killed++
	}
}

// Queues copies every leaf queue's application totals.
func (m *Metrics) Queues() map[string]QueueCounts {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]QueueCounts, len(m.queues))
	for k, v := range m.queues {
		out[k] = *v
	}
	return out
}

func (m *Metrics) attemptFailed(retried bool) {
	m.attemptsFailed.Inc(1)
	if retried {
		m.AttemptsRetried.Inc(1)
	}
}

// containersRecovered counts n containers a NodeManager reported after an RM restart
// as allocated in its queue, as Java's recovery does (at no locality).
func (m *Metrics) containersRecovered(queue string, n int64) {
	m.ContainersAlloc.Inc(n)
	m.mu.Lock()
	m.queue(queue).Allocated += n
	m.mu.Unlock()
}

// movedIn counts the live containers of an application that moved to queue as allocated
// there (Java's move re-accounts them; rmstate.Containers.MoveQueue ends them in the
// queue it left).
func (m *Metrics) movedIn(queue string, live int) {
	m.mu.Lock()
	m.queue(queue).Allocated += int64(live)
	m.mu.Unlock()
}

// allocatedIn counts a plan's containers in their queues, by locality.
func (m *Metrics) allocatedIn(made []*scheduler.Allocation) {
	m.ContainersAlloc.Inc(int64(len(made)))
	m.mu.Lock()
	defer m.mu.Unlock()
	var q *QueueCounts
	for i, a := range made {
		if i == 0 || a.Queue != made[i-1].Queue {
			q = m.queue(a.Queue)
		}
		q.Allocated++
		q.ByLocality[a.Locality]++
	}
}

func (m *Metrics) containerCompleted(exit int32) {
	m.containersDone.Inc(1)
	if exit == exitcode.Preempted {
		m.containersPreempt.Inc(1)
	}
}

func (m *Metrics) containerReleased() { m.containersReleased.Inc(1) }
func (m *Metrics) containerExpired()  { m.ContainersExpired.Inc(1) }

// observe records the engine's totals and each queue's use (the monitor calls it about
// once a second).
func (m *Metrics) observe(st scheduler.Stats) {
	m.allocatedMB.Update(st.Allocated[scheduler.Memory])
	m.allocatedVCores.Update(st.Allocated[scheduler.VCores])
	free := st.Total.Sub(st.Allocated)
	m.availableMB.Update(free[scheduler.Memory])
	m.availableVCores.Update(free[scheduler.VCores])
	m.pendingContainers.Update(int64(st.Pending))
	m.RunningContainers.Update(int64(st.Running))
	for name, used := range st.QueueUsed {
		metrics.GetOrRegisterGauge("rm.queue."+name+".AllocatedMB", m.reg).Update(used[scheduler.Memory])
		metrics.GetOrRegisterGauge("rm.queue."+name+".AllocatedVCores", m.reg).Update(used[scheduler.VCores])
	}
}
