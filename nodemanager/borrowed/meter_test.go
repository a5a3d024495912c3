package borrowed

import (
	"os"
	"strings"
	"testing"
	"time"
)

// sim is a synthetic host: 8 cores, 16 GB, whose owner and containers burn CPU at set
// rates; each step advances its clock by a second.
type sim struct {
	now        time.Time
	busy, tot  time.Duration
	ext        float64 // owner's share of the machine
	memAvailMB int64
	conts      []Container
	rate       map[string]float64 // container's share of the machine
}

func newSim() *sim {
	return &sim{now: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC), memAvailMB: 14000, rate: map[string]float64{}}
}

func (s *sim) step() Reading {
	s.now = s.now.Add(time.Second)
	total := 8 * time.Second
	s.tot += total
	job := 0.0
	for i, c := range s.conts {
		r := s.rate[c.ID]
		job += r
		s.conts[i].CPU += time.Duration(r * float64(total))
	}
	s.busy += time.Duration((s.ext + job) * float64(total))
	return Reading{At: s.now, Host: Host{Cores: 8, CPUBusy: s.busy, CPUTotal: s.tot, MemTotal: 16000 << 20, MemAvailable: s.memAvailMB << 20, DiskFreeMB: 50000},
		Containers: append([]Container(nil), s.conts...)}
}

func (s *sim) start(id string, rate float64, rss int64) {
	s.conts = append(s.conts, Container{ID: id, Started: s.now, RSS: rss << 20, VCores: 1, MemoryMB: 1024})
	s.rate[id] = rate
}

func baseSettings() Settings {
	return Settings{Borrowed: true, VCores: 8, MemoryMB: 12000, ReserveMB: 1000, Window: 3 * time.Second,
		LeaveBelow: 0.2, RejoinAbove: 0.4, DiskMinFreeMB: 1000, Location: time.UTC, EvictExternalCPU: 0.7, EvictMargin: 0.1,
		AutoLabels: true, HighMemMB: 8000, HighLoadShare: 0.5, StaticMaxShare: 0.2, LabelWindow: 5 * time.Second}
}

func TestCapacityFollowsTheOwnersLoad(t *testing.T) {
	m, h := NewMeter(baseSettings()), newSim()
	h.ext = 0.6 // 8 cores at 60 % busy leave about 3
	var d Decision
	for i := 0; i < 5; i++ {
		d = m.Observe(h.step())
	}
	if d.VCores != 3 || !d.Schedulable {
		t.Fatalf("vcores %d schedulable %v, want 3 (8 × (1 − 0.6))", d.VCores, d.Schedulable)
	}
	// Owner uses 2000 MB (16000 − 14000 available, no containers): 16000 − 2000 − reserve 1000, capped at 12000.
	if d.MemoryMB != 12000 {
		t.Errorf("memory %d, want 12000", d.MemoryMB)
	}
	h.memAvailMB = 6000 // owner now uses 10000 MB
	d = m.Observe(h.step())
	if d.MemoryMB != 5000 {
		t.Errorf("memory %d, want 16000−10000−1000 = 5000", d.MemoryMB)
	}
	// A container's own CPU and memory are not the owner's.
	h.memAvailMB = 14000
	h.ext = 0.1
	h.start("c1", 0.5, 2000)
	h.memAvailMB -= 2000
	for i := 0; i < 5; i++ {
		d = m.Observe(h.step())
	}
	if d.Shares.JobCPU < 0.49 || d.Shares.JobCPU > 0.51 || d.AvgExternalCPU > 0.11 {
		t.Errorf("shares %+v avg ext %.2f", d.Shares, d.AvgExternalCPU)
	}
	if d.VCores != 7 || d.MemoryMB != 12000 {
		t.Errorf("capacity %d vcores %d MB with the owner at 10%%", d.VCores, d.MemoryMB)
	}
	if !hasLabel(d, LabelHighMem) || hasLabel(d, LabelStatic) {
		t.Errorf("labels %v: a 16 GB borrowed node is high_mem and never static", d.Labels)
	}
}

func TestHysteresisLeavesAndRejoins(t *testing.T) {
	m, h := NewMeter(baseSettings()), newSim()
	h.ext = 0.85 // 8 × 0.15 = 1 vcore: 12 % < 20 % floor
	var d Decision
	for i := 0; i < 5; i++ {
		d = m.Observe(h.step())
	}
	if d.Schedulable || d.VCores != 0 || !strings.Contains(d.Reason, "below the floor") {
		t.Fatalf("at 85%% owner load: %+v", d)
	}
	h.ext = 0.7 // 2 vcores = 25 %: above the floor but under the 40 % rejoin mark
	for i := 0; i < 5; i++ {
		d = m.Observe(h.step())
	}
	if d.Schedulable {
		t.Fatalf("rejoined at 25%% free, under the rejoin mark: %+v", d)
	}
	h.ext = 0.5 // 4 vcores = 50 %
	for i := 0; i < 5; i++ {
		d = m.Observe(h.step())
	}
	if !d.Schedulable || d.VCores != 4 {
		t.Fatalf("not back at 50%% free: %+v", d)
	}
	if !hasLabel(d, LabelHighLoad) {
		t.Errorf("labels %v after a window at 50%%+ owner load", d.Labels)
	}
}

func TestDiskFloorStopsNewWork(t *testing.T) {
	m, h := NewMeter(baseSettings()), newSim()
	r := h.step()
	r.Host.DiskFreeMB = 500
	if d := m.Observe(r); d.Schedulable || !strings.Contains(d.Reason, "free disk 500 MB") {
		t.Fatalf("%+v", d)
	}
}

func TestCriticalHoursOfferNothing(t *testing.T) {
	s := baseSettings()
	loc, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	s.Location = loc
	s.Critical, err = ParseWindows("19:30-20:30, 23:00-01:00")
	if err != nil {
		t.Fatal(err)
	}
	s.CriticalEvict = true
	m, h := NewMeter(s), newSim()
	h.start("c1", 0.1, 100)
	// 12:00 UTC is 20:00 in Shanghai: inside the first window.
	d := m.Observe(h.step())
	if d.Schedulable || d.VCores != 0 || d.MemoryMB != 0 || !strings.Contains(d.Reason, "critical hours 19:30-20:30") {
		t.Fatalf("inside the window: %+v", d)
	}
	if len(d.Evict) != 1 || d.Evict[0].ID != "c1" {
		t.Errorf("containers not evicted when critical hours begin: %+v", d.Evict)
	}
	h.now = h.now.Add(time.Hour) // 21:00: outside
	h.conts = nil
	if d = m.Observe(h.step()); !d.Schedulable || d.VCores != 8 {
		t.Fatalf("outside the window: %+v", d)
	}
	h.now = time.Date(2026, 11, 22, 16, 30, 0, 0, time.UTC) // 00:30 Shanghai: the window that wraps midnight
	if d = m.Observe(h.step()); d.Schedulable {
		t.Fatalf("00:30 is inside 23:00-01:00: %+v", d)
	}
	for _, bad := range []string{"9-18", "09:00-09:00", "25:00-26:00", "09:61-10:00"} {
		if _, err := ParseWindows(bad); err == nil {
			t.Errorf("ParseWindows(%q) accepted", bad)
		}
	}
}

func TestEvictionYoungestFirstUntilTheMarginIsBack(t *testing.T) {
	m, h := NewMeter(baseSettings()), newSim()
	h.start("old", 0.1, 500)
	h.now = h.now.Add(time.Second)
	h.start("mid", 0.1, 500)
	h.now = h.now.Add(time.Second)
	h.start("young", 0.1, 500)
	h.ext = 0.2
	for i := 0; i < 4; i++ {
		if d := m.Observe(h.step()); len(d.Evict) > 0 {
			t.Fatalf("evicted at 20%% owner load: %+v", d.Evict)
		}
	}
	// The owner's load rises to 75 %: containers (30 %) must fall to at most
	// 1 − 0.75 − 0.1 = 15 %, so the two youngest go and the oldest stays.
	h.ext = 0.75
	var d Decision
	for i := 0; i < 4 && len(d.Evict) == 0; i++ {
		d = m.Observe(h.step())
	}
	if len(d.Evict) != 2 || d.Evict[0].ID != "young" || d.Evict[1].ID != "mid" {
		t.Fatalf("evictions %+v", d.Evict)
	}
	if !strings.Contains(d.Evict[0].Diagnostics, "PREEMPTED") || !strings.Contains(d.Evict[0].Diagnostics, "owner's CPU load") {
		t.Errorf("diagnostics %q", d.Evict[0].Diagnostics)
	}
	// Right after an eviction the meter waits a window before evicting again.
	if d = m.Observe(h.step()); len(d.Evict) != 0 {
		t.Errorf("evicted again at once: %+v", d.Evict)
	}
}

func TestEvictionForMemoryAndOverlimitContainers(t *testing.T) {
	s := baseSettings()
	s.EvictMinFreeMB = 1000
	s.ContainerCPURatio = 2
	m, h := NewMeter(s), newSim()
	h.start("a", 0.05, 3000)
	h.now = h.now.Add(time.Second)
	h.start("b", 0.05, 3000)
	m.Observe(h.step())
	h.memAvailMB = 200 // 800 MB short: the youngest (3000 MB) is enough
	d := m.Observe(h.step())
	if len(d.Evict) != 1 || d.Evict[0].ID != "b" || !strings.Contains(d.Evict[0].Diagnostics, "200 MB of memory available") {
		t.Fatalf("memory evictions %+v", d.Evict)
	}
	m2, h2 := NewMeter(s), newSim()
	// One vcore of 8 on 8 cores is one core; ratio 2 allows two. "hog" burns 3.
	h2.start("hog", 3.0/8, 100)
	h2.start("fine", 1.0/8, 100)
	m2.Observe(h2.step())
	d = m2.Observe(h2.step())
	if len(d.Evict) != 1 || d.Evict[0].ID != "hog" || !strings.Contains(d.Evict[0].Diagnostics, "3.00 cores") {
		t.Fatalf("over-limit evictions %+v", d.Evict)
	}
}

func TestStaticLabelOnQuietOwnNodes(t *testing.T) {
	s := baseSettings()
	s.Borrowed = false
	m, h := NewMeter(s), newSim()
	h.ext = 0.05
	var d Decision
	for i := 0; i < 3; i++ {
		d = m.Observe(h.step())
	}
	if !hasLabel(d, LabelStatic) || d.VCores != 8 || len(d.Evict) != 0 {
		t.Fatalf("a quiet node that is not borrowed: %+v", d)
	}
	h.ext = 0.6
	for i := 0; i < 6; i++ {
		d = m.Observe(h.step())
	}
	if hasLabel(d, LabelStatic) || !hasLabel(d, LabelHighLoad) {
		t.Fatalf("labels %v under load", d.Labels)
	}
}

func TestReadHostOnThisMachine(t *testing.T) {
	h, err := ReadHost("/proc", []string{os.TempDir()})
	if err != nil {
		t.Skip("no /proc here:", err)
	}
	if h.Cores < 1 || h.CPUTotal <= 0 || h.CPUBusy > h.CPUTotal || h.MemTotal <= 0 || h.MemAvailable > h.MemTotal || h.DiskFreeMB < 0 {
		t.Fatalf("implausible reading %+v", h)
	}
	if _, _, _, err := parseStat([]byte("intr 1 2\n")); err == nil {
		t.Error("a /proc/stat without a cpu line was accepted")
	}
	if _, _, err := parseMeminfo([]byte("MemTotal: 10 kB\n")); err == nil {
		t.Error("a meminfo without MemAvailable was accepted")
	}
}

func hasLabel(d Decision, l string) bool {
	for _, x := range d.Labels {
		if x == l {
			return true
		}
	}
	return false
}
