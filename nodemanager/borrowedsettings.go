package nodemanager

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
	_ "time/tzdata" // critical hours name IANA zones; hosts may lack /usr/share/zoneinfo

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/container"
	"github.com/bobbin-yarn/bobbin/nodemanager/borrowed"
)

// hostSettings are the borrowed-mode, automatic-label and UML executor keys.
type hostSettings struct {
	Executor     string // "process" or "uml"
	UML          container.UMLExecutor
	ForwardPorts bool // bobbin.nodemanager.uml.forward-ports: guests run the relay agent
	Meter        borrowed.Settings
	Interval     time.Duration
	HistorySize  int
	measureHosts bool // borrowed mode or automatic labels: the host is measured
}

func readHostSettings(c *conf.Configuration, s *Settings) (hostSettings, error) {
	var h hostSettings
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	str := func(key string) string {
		v, err := c.Trimmed(key)
		add(err)
		return v
	}
	flt := func(key string, lo, hi float64) float64 {
		v, err := c.Float(key)
		add(err)
		if err == nil && (v < lo || v > hi) {
			add(fmt.Errorf("conf: %s = %v must be within [%v, %v]", key, v, lo, hi))
		}
		return v
	}
	i64 := func(key string) int64 {
		v, err := c.Int64(key)
		add(err)
		if err == nil && v < 0 {
			add(fmt.Errorf("conf: %s = %d must not be negative", key, v))
		}
		return v
	}
	boolean := func(key string) bool {
		v, err := c.Bool(key)
		add(err)
		return v
	}
	dur := func(key string) time.Duration {
		v, err := c.Duration(key, time.Millisecond)
		add(err)
		if err == nil && v <= 0 {
			add(fmt.Errorf("conf: %s must be positive", key))
		}
		return v
	}

	h.Executor = str("bobbin.nodemanager.container-executor")
	switch h.Executor {
	case "process", "uml":
	default:
		add(fmt.Errorf("conf: bobbin.nodemanager.container-executor = %q: want process or uml", h.Executor))
	}
	host, _ := os.Hostname()
	u := container.UMLExecutor{
		Kernel: str("bobbin.nodemanager.uml.kernel"), Mconsole: str("bobbin.nodemanager.uml.mconsole"),
		Slirp: str("bobbin.nodemanager.uml.slirp"), RootDir: str("bobbin.nodemanager.uml.root-dir"),
		StateDir: str("bobbin.nodemanager.uml.state-dir"), TmpDir: str("bobbin.nodemanager.uml.tmp-dir"),
		MemOverheadMB: i64("bobbin.nodemanager.uml.memory-overhead-mb"), HostLoopback: boolean("bobbin.nodemanager.uml.host-loopback"),
		BootTimeout: dur("bobbin.nodemanager.uml.boot-timeout-ms"), Hostname: host,
	}
	extra, err := c.Strings("bobbin.nodemanager.uml.extra-rw-dirs")
	add(err)
	u.ExtraDirs = extra
	if u.StateDir == "" && len(s.LocalDirs) > 0 {
		u.StateDir = filepath.Join(s.LocalDirs[0], "uml")
	}
	if h.Executor == "uml" && u.RootDir != "" {
		for _, d := range append(append([]string(nil), s.LocalDirs...), s.LogDirs...) {
			if _, err := u.GuestPath(d); err != nil {
				add(fmt.Errorf("conf: bobbin.nodemanager.uml.root-dir = %s: the NodeManager dir %s must lie inside it (confined guests see nothing else)", u.RootDir, d))
			}
		}
	}
	h.UML = u
	h.ForwardPorts = boolean("bobbin.nodemanager.uml.forward-ports")

	m := borrowed.Settings{
		Borrowed: boolean("bobbin.nodemanager.borrowed.enabled"), VCores: s.VCores, MemoryMB: s.MemoryMB,
		ReserveMB: i64("bobbin.nodemanager.borrowed.memory-reserve-mb"), Window: dur("bobbin.nodemanager.borrowed.window-ms"),
		LeaveBelow: flt("bobbin.nodemanager.borrowed.leave-below", 0, 1), RejoinAbove: flt("bobbin.nodemanager.borrowed.rejoin-above", 0, 1),
		DiskMinFreeMB:    i64("bobbin.nodemanager.borrowed.disk-min-free-mb"),
		CriticalEvict:    boolean("bobbin.nodemanager.borrowed.critical-hours-evict"),
		EvictExternalCPU: flt("bobbin.nodemanager.borrowed.evict-external-cpu", 0, 1), EvictMargin: flt("bobbin.nodemanager.borrowed.evict-margin", 0, 1),
		EvictMinFreeMB:    i64("bobbin.nodemanager.borrowed.evict-min-free-memory-mb"),
		ContainerCPURatio: flt("bobbin.nodemanager.borrowed.container-cpu-ratio", 0, 1000),
		AutoLabels:        boolean("bobbin.nodemanager.auto-labels.enabled"), HighMemMB: i64("bobbin.nodemanager.auto-labels.high-mem-mb"),
		HighLoadShare: flt("bobbin.nodemanager.auto-labels.high-load-share", 0, 1), StaticMaxShare: flt("bobbin.nodemanager.auto-labels.static-max-share", 0, 1),
		LabelWindow: dur("bobbin.nodemanager.auto-labels.window-ms"),
	}
	if m.RejoinAbove < m.LeaveBelow {
		add(fmt.Errorf("conf: bobbin.nodemanager.borrowed.rejoin-above = %v must be at least bobbin.nodemanager.borrowed.leave-below = %v", m.RejoinAbove, m.LeaveBelow))
	}
	windows, err := borrowed.ParseWindows(str("bobbin.nodemanager.borrowed.critical-hours"))
	if err != nil {
		add(fmt.Errorf("conf: bobbin.nodemanager.borrowed.critical-hours: %w", err))
	}
	m.Critical = windows
	tz := str("bobbin.nodemanager.borrowed.time-zone")
	loc, err := time.LoadLocation(tz)
	if err != nil {
		add(fmt.Errorf("conf: bobbin.nodemanager.borrowed.time-zone = %q: %w", tz, err))
		loc = time.Local
	}
	m.Location = loc
	h.Meter = m
	h.Interval = dur("bobbin.nodemanager.borrowed.interval-ms")
	hs, err := c.Int("bobbin.nodemanager.borrowed.history-size")
	add(err)
	if err == nil && hs < 1 {
		add(errors.New("conf: bobbin.nodemanager.borrowed.history-size must be at least 1"))
	}
	h.HistorySize = hs
	h.measureHosts = m.Borrowed || m.AutoLabels
	return h, errors.Join(errs...)
}
