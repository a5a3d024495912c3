// Package borrowed measures what a NodeManager on a borrowed server may use: the CPU and
// memory its owner's processes (everything that is not one of its containers) take, the
// capacity that leaves for YARN, when the node should leave or rejoin the schedulable
// set, which containers to evict when the owner needs the machine back, and the
// automatic node labels (high_mem, high_load, static).
//
// Meter is a pure state machine over readings: the NodeManager reads the host and its
// containers every interval and acts on the Decision; time comes only from the readings,
// so tests drive it with any clock.
package borrowed

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// Settings are the thresholds (see docs/configuration.md, bobbin.nodemanager.borrowed.*).
type Settings struct {
	Borrowed bool  // measure capacity and evict (else only labels are computed)
	VCores   int32 // the node's configured vcores and memory: the most it ever offers
	MemoryMB int64
	// ReserveMB is memory left to the owner on top of what its processes use now.
	ReserveMB int64
	// Window is the period the external CPU share is averaged over.
	Window time.Duration
	// The node leaves the schedulable set when its capacity falls below LeaveBelow of
	// the configured capacity (the smaller of the CPU and memory fractions) and rejoins
	// at RejoinAbove.
	LeaveBelow, RejoinAbove float64
	// DiskMinFreeMB: with less free space in the NodeManager's dirs, no new work.
	DiskMinFreeMB int64
	// Critical are daily windows, in Location, in which the node offers nothing;
	// CriticalEvict also stops the containers running when a window begins.
	Critical      []Window
	Location      *time.Location
	CriticalEvict bool
	// EvictExternalCPU: when the owner's average CPU share passes it, containers are
	// stopped, youngest first, until the containers' share is at most
	// 1 - external - EvictMargin. Zero turns it off.
	EvictExternalCPU float64
	EvictMargin      float64
	// EvictMinFreeMB: when the host's available memory falls below it, containers are
	// stopped, youngest first, until their memory covers the deficit. Zero: off.
	EvictMinFreeMB int64
	// ContainerCPURatio: a container using more than ratio times the CPU its vcores
	// stand for (vcores × host cores / node vcores) is stopped. Zero: off.
	ContainerCPURatio float64

	AutoLabels     bool
	HighMemMB      int64   // high_mem: physical memory at least this
	HighLoadShare  float64 // high_load: average external CPU share over LabelWindow at least this
	StaticMaxShare float64 // static: not borrowed, average external share at most this
	LabelWindow    time.Duration
}

// Container is one running container's use, cumulative CPU included.
type Container struct {
	ID       string
	Started  time.Time
	CPU      time.Duration
	RSS      int64
	VCores   int32
	MemoryMB int64
}

// Reading is the host and its containers at one moment.
type Reading struct {
	At         time.Time
	Host       Host
	Containers []Container
}

// Shares are fractions of the machine in the last interval: the owner's (external),
// the containers' (job) and what is left (free), for CPU and memory.
type Shares struct {
	ExternalCPU, JobCPU, FreeCPU float64
	ExternalMem, JobMem, FreeMem float64
}

// Eviction is a container to stop, with the diagnostics its AM will see.
type Eviction struct {
	ID          string
	Diagnostics string
}

// Decision is what the NodeManager reports and does after a reading.
type Decision struct {
	At     time.Time
	Shares Shares
	// AvgExternalCPU is the owner's CPU share averaged over the window.
	AvgExternalCPU float64
	// MeasuredVCores and MeasuredMB are the capacity the owner's load leaves; VCores
	// and MemoryMB are what is offered (zero when the node is out of the schedulable
	// set, in critical hours or short of disk).
	MeasuredVCores int32
	MeasuredMB     int64
	VCores         int32
	MemoryMB       int64
	Schedulable    bool
	Reason         string // why nothing is offered
	Evict          []Eviction
	Labels         []string
}

// Point is one measurement as a NodeManager keeps it in its history (and
// /ws/v1/node/borrowed serves it).
type Point struct {
	Time           int64    `json:"time"`
	ExternalCPU    float64  `json:"externalCpuShare"`
	JobCPU         float64  `json:"jobCpuShare"`
	FreeCPU        float64  `json:"freeCpuShare"`
	ExternalMem    float64  `json:"externalMemoryShare"`
	JobMem         float64  `json:"jobMemoryShare"`
	FreeMem        float64  `json:"freeMemoryShare"`
	AvgExternalCPU float64  `json:"avgExternalCpuShare"`
	VCores         int32    `json:"schedulableVCores"`
	MemoryMB       int64    `json:"schedulableMemoryMB"`
	Schedulable    bool     `json:"schedulable"`
	Reason         string   `json:"reason,omitempty"`
	Labels         []string `json:"labels,omitempty"`
	Evicted        []string `json:"evicted,omitempty"`
}

// Point is the decision as a point of the history.
func (d Decision) Point() Point {
	p := Point{Time: d.At.UnixMilli(), ExternalCPU: d.Shares.ExternalCPU, JobCPU: d.Shares.JobCPU, FreeCPU: d.Shares.FreeCPU,
		ExternalMem: d.Shares.ExternalMem, JobMem: d.Shares.JobMem, FreeMem: d.Shares.FreeMem, AvgExternalCPU: d.AvgExternalCPU,
		VCores: d.VCores, MemoryMB: d.MemoryMB, Schedulable: d.Schedulable, Reason: d.Reason, Labels: d.Labels}
	for _, e := range d.Evict {
		p.Evicted = append(p.Evicted, e.ID)
	}
	return p
}

type point struct {
	at  time.Time
	ext float64
}

// Meter turns readings into decisions. It is not safe for concurrent use; the
// NodeManager's sampling goroutine owns it.
type Meter struct {
	s         Settings
	prev      *Reading
	prevCPU   map[string]time.Duration
	points    []point
	out       bool
	lastEvict time.Time
}

// NewMeter starts a meter with no history.
func NewMeter(s Settings) *Meter {
	if s.Location == nil {
		s.Location = time.Local
	}
	return &Meter{s: s, prevCPU: map[string]time.Duration{}}
}

// Observe takes a reading and decides.
func (m *Meter) Observe(r Reading) Decision {
	s := m.s
	d := Decision{At: r.At, Schedulable: true, VCores: s.VCores, MemoryMB: s.MemoryMB}
	h := r.Host
	// CPU shares need two readings.
	delta := map[string]time.Duration{}
	var dt time.Duration
	if m.prev != nil {
		dt = h.CPUTotal - m.prev.Host.CPUTotal
	}
	var jobCPU time.Duration
	for _, c := range r.Containers {
		prev, seen := m.prevCPU[c.ID]
		if !seen {
			prev = 0 // new since the last reading: all its CPU time is recent
		}
		if dd := c.CPU - prev; dd > 0 {
			delta[c.ID] = dd
			jobCPU += dd
		}
	}
	if dt > 0 {
		busy := float64(h.CPUBusy-m.prev.Host.CPUBusy) / float64(dt)
		d.Shares.JobCPU = clamp(float64(jobCPU) / float64(dt))
		d.Shares.ExternalCPU = clamp(busy - d.Shares.JobCPU)
		d.Shares.FreeCPU = clamp(1 - d.Shares.ExternalCPU - d.Shares.JobCPU)
		m.points = append(m.points, point{r.At, d.Shares.ExternalCPU})
	}
	var jobMem int64
	for _, c := range r.Containers {
		jobMem += c.RSS
	}
	extMem := h.MemTotal - h.MemAvailable - jobMem
	if extMem < 0 {
		extMem = 0
	}
	if h.MemTotal > 0 {
		d.Shares.JobMem = clamp(float64(jobMem) / float64(h.MemTotal))
		d.Shares.ExternalMem = clamp(float64(extMem) / float64(h.MemTotal))
		d.Shares.FreeMem = clamp(float64(h.MemAvailable) / float64(h.MemTotal))
	}
	keep := max(s.Window, s.LabelWindow)
	for len(m.points) > 0 && r.At.Sub(m.points[0].at) > keep {
		m.points = m.points[1:]
	}
	d.AvgExternalCPU = m.average(r.At, s.Window)

	if s.Borrowed {
		m.capacity(&d, h, extMem, r.At)
		m.evictions(&d, r, delta, dt)
	}
	if s.AutoLabels {
		d.Labels = m.labels(h, r.At)
	}
	m.prev = &r
	m.prevCPU = map[string]time.Duration{}
	for _, c := range r.Containers {
		m.prevCPU[c.ID] = c.CPU
	}
	return d
}

func (m *Meter) average(now time.Time, window time.Duration) float64 {
	var sum float64
	n := 0
	for _, p := range m.points {
		if now.Sub(p.at) <= window {
			sum += p.ext
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

func clamp(f float64) float64 { return math.Max(0, math.Min(1, f)) }

// capacity sets what the node offers: cores × (1 − the owner's CPU share), memory less
// the owner's use and the reserve; then the gates (hysteresis, disk, critical hours).
func (m *Meter) capacity(d *Decision, h Host, extMem int64, now time.Time) {
	s := m.s
	d.MeasuredVCores = int32(math.Floor(float64(s.VCores) * (1 - d.AvgExternalCPU)))
	mb := (h.MemTotal-extMem)>>20 - s.ReserveMB
	d.MeasuredMB = max(0, min(s.MemoryMB, mb))
	// The gates look at the unrounded CPU fraction: rounded to whole vcores, a small
	// node's leave and rejoin marks could fall on the same step and it would flap.
	frac := 1 - d.AvgExternalCPU
	if s.MemoryMB > 0 {
		frac = math.Min(frac, float64(d.MeasuredMB)/float64(s.MemoryMB))
	}
	switch {
	case !m.out && frac < s.LeaveBelow:
		m.out = true
	case m.out && frac >= s.RejoinAbove:
		m.out = false
	}
	d.VCores, d.MemoryMB = d.MeasuredVCores, d.MeasuredMB
	switch w, critical := Critical(s.Critical, now, s.Location); {
	case critical:
		d.Reason = fmt.Sprintf("critical hours %s (%s): the owner's service has the node", w, s.Location)
	case m.out:
		d.Reason = fmt.Sprintf("free capacity %.0f%% of the node is below the floor (leaves under %.0f%%, rejoins at %.0f%%): owner's CPU %.0f%%, owner's memory %d MB",
			frac*100, s.LeaveBelow*100, s.RejoinAbove*100, d.AvgExternalCPU*100, extMem>>20)
	case s.DiskMinFreeMB > 0 && h.DiskFreeMB >= 0 && h.DiskFreeMB < s.DiskMinFreeMB:
		d.Reason = fmt.Sprintf("free disk %d MB in the NodeManager's dirs is below %d MB", h.DiskFreeMB, s.DiskMinFreeMB)
	}
	if d.Reason != "" {
		d.Schedulable, d.VCores, d.MemoryMB = false, 0, 0
	}
}

// evictions picks containers to stop, youngest first, so the owner gets its margin back.
// After an eviction the next waits a window, for the average to show its effect.
func (m *Meter) evictions(d *Decision, r Reading, delta map[string]time.Duration, dt time.Duration) {
	s := m.s
	if len(r.Containers) == 0 || (!m.lastEvict.IsZero() && r.At.Sub(m.lastEvict) < s.Window) {
		return
	}
	young := append([]Container(nil), r.Containers...)
	sort.SliceStable(young, func(i, j int) bool { return young[i].Started.After(young[j].Started) })
	chosen := map[string]bool{}
	add := func(c Container, why string) {
		if chosen[c.ID] {
			return
		}
		chosen[c.ID] = true
		d.Evict = append(d.Evict, Eviction{ID: c.ID, Diagnostics: fmt.Sprintf(
			"Container %s evicted by the NodeManager of a borrowed node: %s. It is reported as PREEMPTED (exit status -102), not as a failure; its work moves to another node.", c.ID, why)})
	}
	if w, critical := Critical(s.Critical, r.At, s.Location); critical && s.CriticalEvict {
		for _, c := range young {
			add(c, fmt.Sprintf("critical hours %s began", w))
		}
	}
	if s.EvictExternalCPU > 0 && d.AvgExternalCPU > s.EvictExternalCPU && dt > 0 {
		target := math.Max(0, 1-d.AvgExternalCPU-s.EvictMargin)
		job := d.Shares.JobCPU
		for _, c := range young {
			if job <= target {
				break
			}
			add(c, fmt.Sprintf("the owner's CPU load is %.0f%% (eviction threshold %.0f%%) and containers use %.0f%%; containers are stopped youngest first until they use at most %.0f%%",
				d.AvgExternalCPU*100, s.EvictExternalCPU*100, d.Shares.JobCPU*100, target*100))
			job -= float64(delta[c.ID]) / float64(dt)
		}
	}
	if s.EvictMinFreeMB > 0 && r.Host.MemAvailable>>20 < s.EvictMinFreeMB {
		deficit := s.EvictMinFreeMB<<20 - r.Host.MemAvailable
		for _, c := range young {
			if deficit <= 0 {
				break
			}
			add(c, fmt.Sprintf("the host has %d MB of memory available, under the %d MB the owner must keep", r.Host.MemAvailable>>20, s.EvictMinFreeMB))
			deficit -= c.RSS
		}
	}
	if s.ContainerCPURatio > 0 && dt > 0 && s.VCores > 0 {
		for _, c := range young {
			cores := float64(delta[c.ID]) / float64(dt) * float64(r.Host.Cores)
			limit := float64(c.VCores) * float64(r.Host.Cores) / float64(s.VCores) * s.ContainerCPURatio
			if c.VCores > 0 && cores > limit {
				add(c, fmt.Sprintf("it uses %.2f cores, over %.1f times the %.2f cores its %d vcores stand for", cores, s.ContainerCPURatio, limit/s.ContainerCPURatio, c.VCores))
			}
		}
	}
	if len(d.Evict) > 0 {
		m.lastEvict = r.At
	}
}

// Automatic label names.
const (
	LabelHighMem  = "high_mem"
	LabelHighLoad = "high_load"
	LabelStatic   = "static"
)

func (m *Meter) labels(h Host, now time.Time) []string {
	s := m.s
	var out []string
	if s.HighMemMB > 0 && h.MemTotal>>20 >= s.HighMemMB {
		out = append(out, LabelHighMem)
	}
	avg := m.average(now, s.LabelWindow)
	high := s.HighLoadShare > 0 && avg >= s.HighLoadShare
	if high {
		out = append(out, LabelHighLoad)
	}
	if !s.Borrowed && !high && avg <= s.StaticMaxShare {
		out = append(out, LabelStatic)
	}
	return out
}
