package nodemanager

import (
	"slices"
	"sync"

	metrics "github.com/rcrowley/go-metrics"
	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/nodemanager/borrowed"
	"github.com/bobbin-yarn/bobbin/nodemanager/containers"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

// hostMeter is the NodeManager's borrowed-mode state: the meter (owned by the sampling
// goroutine), the last decision the heartbeat reports, and the history served on the
// web.
type hostMeter struct {
	settings hostSettings
	meter    *borrowed.Meter // used only by observeHost

	mu      sync.Mutex
	last    borrowed.Decision
	have    bool
	history []borrowed.Point
	next    int
	caps    borrowedCaps // only observeHost's

	gExtCPU, gJobCPU, gFreeCPU, gExtMem, gJobMem, gFreeMem metrics.GaugeFloat64
	gVCores, gMB                                           metrics.Gauge
	evictions                                              metrics.Counter
}

func newHostMeter(s hostSettings, reg metrics.Registry) *hostMeter {
	h := &hostMeter{settings: s, meter: borrowed.NewMeter(s.Meter), history: make([]borrowed.Point, 0, min(s.HistorySize, 4096))}
	h.gExtCPU = metrics.GetOrRegisterGaugeFloat64("nm.borrowed.ExternalCpuShare", reg)
	h.gJobCPU = metrics.GetOrRegisterGaugeFloat64("nm.borrowed.JobCpuShare", reg)
	h.gFreeCPU = metrics.GetOrRegisterGaugeFloat64("nm.borrowed.FreeCpuShare", reg)
	h.gExtMem = metrics.GetOrRegisterGaugeFloat64("nm.borrowed.ExternalMemoryShare", reg)
	h.gJobMem = metrics.GetOrRegisterGaugeFloat64("nm.borrowed.JobMemoryShare", reg)
	h.gFreeMem = metrics.GetOrRegisterGaugeFloat64("nm.borrowed.FreeMemoryShare", reg)
	h.gVCores = metrics.GetOrRegisterGauge("nm.borrowed.SchedulableVCores", reg)
	h.gMB = metrics.GetOrRegisterGauge("nm.borrowed.SchedulableMB", reg)
	h.evictions = metrics.GetOrRegisterCounter("nm.borrowed.Evictions", reg)
	return h
}

// decision is the last measurement, if any.
func (h *hostMeter) decision() (borrowed.Decision, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last, h.have
}

// observeHost measures the host and the containers, records the decision for the next
// heartbeat and evicts what it says to.
func (nm *NodeManager) observeHost() {
	h := nm.host
	s := nm.settings
	host, err := nm.opts.ReadHost(append(append([]string(nil), s.LocalDirs...), s.LogDirs...))
	if err != nil {
		nm.log.WithError(err).Warn("cannot measure the host")
		return
	}
	type live struct {
		v  containers.View
		bc borrowed.Container
	}
	var running []live
	for _, v := range nm.table.Views() {
		if v.Runs() {
			r := v.Resource()
			running = append(running, live{v, borrowed.Container{ID: v.ID.String(), Started: v.Started, VCores: r.GetVirtualCores(), MemoryMB: r.GetMemory()}})
		}
	}
	readings := make([]borrowed.Container, len(running))
	byID := map[string]*containers.Container{}
	for i, l := range running {
		u := l.v.Proc.Usage()
		l.bc.CPU, l.bc.RSS = u.CPU, u.RSS
		readings[i] = l.bc
		byID[l.bc.ID] = l.v.Container
	}
	d := h.meter.Observe(borrowed.Reading{At: nm.opts.Now(), Host: host, Containers: readings})

	prev, had := h.record(d)
	nm.capToOwner(d, host, readings)

	h.gExtCPU.Update(d.Shares.ExternalCPU)
	h.gJobCPU.Update(d.Shares.JobCPU)
	h.gFreeCPU.Update(d.Shares.FreeCPU)
	h.gExtMem.Update(d.Shares.ExternalMem)
	h.gJobMem.Update(d.Shares.JobMem)
	h.gFreeMem.Update(d.Shares.FreeMem)
	h.gVCores.Update(int64(d.VCores))
	h.gMB.Update(d.MemoryMB)

	fields := logrus.Fields{"vcores": d.VCores, "memory_mb": d.MemoryMB, "external_cpu": round2(d.AvgExternalCPU), "labels": d.Labels}
	if d.Reason != "" {
		fields["reason"] = d.Reason
	}
	switch {
	case had && prev.Schedulable && !d.Schedulable:
		nm.log.WithFields(fields).Warn("node leaves the schedulable set: " + d.Reason)
	case had && !prev.Schedulable && d.Schedulable:
		nm.log.WithFields(fields).Info("node rejoins the schedulable set")
	case !had || !slices.Equal(prev.Labels, d.Labels):
		nm.log.WithFields(fields).Info("node measured")
	}
	for _, e := range d.Evict {
		c := byID[e.ID]
		if c == nil {
			continue
		}
		h.evictions.Inc(1)
		nm.log.WithFields(logrus.Fields{"container": e.ID, "exit_status": exitcode.Preempted}).Warn(e.Diagnostics)
		nm.spawn(func() { nm.kill(c, exitcode.Preempted, e.Diagnostics) })
	}
}

func round2(f float64) float64 { return float64(int(f*100+0.5)) / 100 }

// heartbeatExtras adds the measured capacity and the automatic labels to a heartbeat.
func (nm *NodeManager) heartbeatExtras(req *yarnpb.NodeHeartbeatRequestProto) {
	if nm.host == nil {
		return
	}
	d, ok := nm.host.decision()
	if !ok {
		return
	}
	if nm.host.settings.Meter.Borrowed {
		req.BobbinSchedulableResource = &yarnpb.ResourceProto{Memory: proto.Int64(d.MemoryMB), VirtualCores: proto.Int32(d.VCores)}
	}
	if nm.host.settings.Meter.AutoLabels {
		labels := &yarnpb.NodeLabelsProto{}
		for _, l := range d.Labels {
			labels.NodeLabels = append(labels.NodeLabels, &yarnpb.NodeLabelProto{Name: proto.String(l), IsExclusive: proto.Bool(false)})
		}
		req.NodeLabels = labels
	}
}

// record keeps a measurement's decision as the latest and in the history ring, and
// returns the decision before it (had: there was one).
func (h *hostMeter) record(d borrowed.Decision) (prev borrowed.Decision, had bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	prev, had = h.last, h.have
	h.last, h.have = d, true
	p := d.Point()
	if len(h.history) < h.settings.HistorySize {
		h.history = append(h.history, p)
	} else {
		h.history[h.next] = p
		h.next = (h.next + 1) % len(h.history)
	}
	return prev, had
}

// historyInOrder is the measurement history, oldest first.
func (h *hostMeter) historyInOrder() []borrowed.Point {
	h.mu.Lock()
	defer h.mu.Unlock()
	hist := make([]borrowed.Point, 0, len(h.history))
	hist = append(hist, h.history[h.next:]...)
	return append(hist, h.history[:h.next]...)
}
