package resourcemanager

import (
	metrics "github.com/rcrowley/go-metrics"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

// rmMetrics are the RM's go-metrics, named like the Java RM's ClusterMetrics and
// QueueMetrics where one exists. RPC latency is measured per method by the IPC servers.
type rmMetrics struct {
	reg                metrics.Registry
	appsSubmitted      metrics.Counter
	appsCompleted      metrics.Counter
	appsFailed         metrics.Counter
	appsKilled         metrics.Counter
	attemptsFailed     metrics.Counter
	attemptsRetried    metrics.Counter
	containersAlloc    metrics.Counter
	containersDone     metrics.Counter
	containersReleased metrics.Counter
	containersPreempt  metrics.Counter
	containersExpired  metrics.Counter
	allocatedMB        metrics.Gauge
	allocatedVCores    metrics.Gauge
	availableMB        metrics.Gauge
	availableVCores    metrics.Gauge
	pendingContainers  metrics.Gauge
	runningContainers  metrics.Gauge
}

func newRMMetrics(reg metrics.Registry) *rmMetrics {
	c := func(name string) metrics.Counter { return metrics.GetOrRegisterCounter("rm."+name, reg) }
	g := func(name string) metrics.Gauge { return metrics.GetOrRegisterGauge("rm."+name, reg) }
	return &rmMetrics{reg: reg,
		appsSubmitted: c("AppsSubmitted"), appsCompleted: c("AppsCompleted"), appsFailed: c("AppsFailed"), appsKilled: c("AppsKilled"),
		attemptsFailed: c("AttemptsFailed"), attemptsRetried: c("AttemptsRetried"),
		containersAlloc: c("ContainersAllocated"), containersDone: c("ContainersCompleted"), containersReleased: c("ContainersReleased"),
		containersPreempt: c("ContainersPreempted"), containersExpired: c("ContainersExpired"),
		allocatedMB: g("AllocatedMB"), allocatedVCores: g("AllocatedVCores"), availableMB: g("AvailableMB"), availableVCores: g("AvailableVCores"),
		pendingContainers: g("PendingContainers"), runningContainers: g("AllocatedContainers"),
	}
}

func (m *rmMetrics) appSubmitted() { m.appsSubmitted.Inc(1) }

func (m *rmMetrics) appEnded(state yarnpb.YarnApplicationStateProto) {
	switch state {
	case yarnpb.YarnApplicationStateProto_FINISHED:
		m.appsCompleted.Inc(1)
	case yarnpb.YarnApplicationStateProto_FAILED:
		m.appsFailed.Inc(1)
	case yarnpb.YarnApplicationStateProto_KILLED:
		m.appsKilled.Inc(1)
	}
}

func (m *rmMetrics) attemptFailed(retried bool) {
	m.attemptsFailed.Inc(1)
	if retried {
		m.attemptsRetried.Inc(1)
	}
}

func (m *rmMetrics) containerAllocated() { m.containersAlloc.Inc(1) }

func (m *rmMetrics) containerCompleted(exit int32) {
	m.containersDone.Inc(1)
	if exit == exitcode.Preempted {
		m.containersPreempt.Inc(1)
	}
}

func (m *rmMetrics) containerReleased() { m.containersReleased.Inc(1) }
func (m *rmMetrics) containerExpired()  { m.containersExpired.Inc(1) }

// observe records the engine's totals and each queue's use (the monitor calls it about
// once a second).
func (m *rmMetrics) observe(st scheduler.Stats) {
	m.allocatedMB.Update(st.Allocated[scheduler.Memory])
	m.allocatedVCores.Update(st.Allocated[scheduler.VCores])
	free := st.Total.Sub(st.Allocated)
	m.availableMB.Update(free[scheduler.Memory])
	m.availableVCores.Update(free[scheduler.VCores])
	m.pendingContainers.Update(int64(st.Pending))
	m.runningContainers.Update(int64(st.Running))
	for name, used := range st.QueueUsed {
		metrics.GetOrRegisterGauge("rm.queue."+name+".AllocatedMB", m.reg).Update(used[scheduler.Memory])
		metrics.GetOrRegisterGauge("rm.queue."+name+".AllocatedVCores", m.reg).Update(used[scheduler.VCores])
	}
}
