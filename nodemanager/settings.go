package nodemanager

// The NodeManager's settings: every key it reads, read and checked once at start, with
// each problem reported naming its key.

import (
	"errors"
	"fmt"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/conf/resourcetypes"
	"github.com/bobbin-yarn/bobbin/nodemanager/gpu"
	"github.com/bobbin-yarn/bobbin/nodemanager/logaggregation"
	"github.com/bobbin-yarn/bobbin/yarn/kerberos"
)

// Settings are the NodeManager's configuration values, read and checked at start.
type Settings struct {
	Host      string // the NodeId host
	BindHost  string // yarn.nodemanager.bind-host: where every server binds ("" = as configured)
	Addr      string // bind address of ContainerManagementProtocol
	WebAddr   string
	RMTracker string
	// RMTrackers are every RM's resource tracker with HA (yarn.resourcemanager.ha.rm-ids):
	// the node fails over between them; without HA, RMTracker alone.
	RMTrackers []string
	LocalDirs  []string
	LogDirs    []string
	MemoryMB   int64
	VCores     int32
	// Types are the cluster's resource types (resource-types.xml) and Offer what this node
	// offers of each, memory and vcores included (yarn.nodemanager.resource-type.<name>).
	Types       resourcetypes.Types
	Offer       []int64
	Handlers    int
	AuxServices []string
	// JavaAux are the auxiliary services other than the built-in MapReduce shuffle:
	// Java classes, each run in a helper JVM (javaaux.go).
	JavaAux        []javaAux
	ShufflePort    int
	Shuffle        ShuffleSettings
	LogAggregation logaggregation.Settings
	EnvWhitelist   []string
	AdminEnv       []string
	// AddOpens is what <ADD_OPENS> becomes (addOpensFor).
	AddOpens string
	// DebugInfo, StderrPattern and StderrTail: the launch script's copy of itself and its
	// work dir listing, and what a failed container's diagnostics quote of its logs.
	DebugInfo      bool
	StderrPattern  *regexp.Regexp
	StderrTail     int
	KillDelay      time.Duration
	UserHome       string
	DebugDelay     time.Duration
	AllowSimple    bool
	MaxDataLength  int
	DefaultFS      string
	DiskCheckEvery time.Duration
	DiskMaxPercent float64
	DiskMinFreeMB  int64
	LogRetain      time.Duration
	CacheTarget    int64
	CacheCleanup   time.Duration
	PmemCheck      bool
	VmemCheck      bool
	VmemRatio      float64
	MonitorEvery   time.Duration
	// Borrow holds the borrowed-mode, automatic-label and UML executor settings.
	Borrow hostSettings
	// Cgroups says whether and how containers run in cgroups (cgroupsettings.go).
	Cgroups cgroupSettings
	// GPU is the yarn.io/gpu resource plugin's settings (gpuplugin.go); nil: off.
	GPU *gpu.Settings
	// Recovery is yarn.nodemanager.recovery.enabled: a work-preserving NodeManager
	// restart, with its store in RecoveryDir; Supervised (yarn.nodemanager.recovery.supervised)
	// leaves containers running when the NodeManager stops.
	Recovery    bool
	RecoveryDir string
	Supervised  bool
	// KeepOnResync: when the RM asks to resync (it restarted), containers keep running
	// and are reported as the node registers again
	// (yarn.resourcemanager.work-preserving-recovery.enabled, read by NMs too).
	KeepOnResync bool
	// QOP is hadoop.rpc.protection as a sasl.QOP* mask, offered to token callers.
	QOP byte
}

// ReadSettings reads and validates the NodeManager's keys, reporting every problem.
func ReadSettings(c *conf.Configuration) (Settings, error) {
	var s Settings
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	add(c.CheckHTTPOnly())
	add(c.CheckSecurityModes(true))
	add(checkExecutorClass(c))
	qop, err := kerberos.Protection(c)
	add(err)
	s.QOP = qop
	bind, err := c.Trimmed("yarn.nodemanager.bind-host")
	add(err)
	s.BindHost = bind
	addrOf := func(key string, def int) string {
		h, p, err := c.HostPort(key, def)
		if err != nil {
			add(err)
			return ""
		}
		if bind != "" {
			h = bind
		}
		return net.JoinHostPort(h, strconv.Itoa(p))
	}
	s.Addr = addrOf("yarn.nodemanager.address", 0)
	if h, _, err := c.HostPort("yarn.nodemanager.address", 0); err == nil {
		s.Host = NodeHost(h)
	}
	s.WebAddr = addrOf("yarn.nodemanager.webapp.address", 8042)
	s.RMTrackers, err = c.RMAddresses("yarn.resourcemanager.resource-tracker.address", 8031)
	add(err)
	if len(s.RMTrackers) > 0 {
		s.RMTracker = s.RMTrackers[0]
	}
	dirs := func(key string) []string {
		v, err := c.Strings(key)
		add(err)
		if len(v) == 0 {
			raw, _ := c.Raw(key)
			add(&conf.ValueError{Source: c.Source(key), Key: key, Value: raw, Reason: "needs at least one directory"})
		}
		for i, d := range v {
			v[i] = strings.TrimPrefix(d, "file://")
		}
		return v
	}
	s.LocalDirs, s.LogDirs = dirs("yarn.nodemanager.local-dirs"), dirs("yarn.nodemanager.log-dirs")
	mem, err := c.Int64("yarn.nodemanager.resource.memory-mb")
	add(err)
	cores, err := c.Int("yarn.nodemanager.resource.cpu-vcores")
	add(err)
	s.MemoryMB, s.VCores = mem, int32(cores)
	if s.Types, err = resourcetypes.Load(c, maxNodeResourceTypes); err == nil {
		s.Offer, err = resourcetypes.NodeAmounts(c, s.Types)
		if err == nil {
			s.Offer[resourcetypes.Memory], s.Offer[resourcetypes.VCores] = mem, int64(cores)
		}
	}
	add(err)
	s.GPU, err = readGPUSettings(c)
	add(err)
	s.Handlers, err = c.Int("yarn.nodemanager.container-manager.thread-count")
	add(err)
	s.AuxServices, err = c.Strings("yarn.nodemanager.aux-services")
	add(err)
	s.ShufflePort, err = c.Int("mapreduce.shuffle.port")
	add(err)
	s.Shuffle, err = readShuffleSettings(c)
	add(err)
	s.LogAggregation, err = logaggregation.ReadSettings(c)
	add(err)
	s.EnvWhitelist, err = c.Strings("yarn.nodemanager.env-whitelist")
	add(err)
	s.AdminEnv, err = c.Strings("yarn.nodemanager.admin-env")
	add(err)
	s.AddOpens = addOpensFor(os.Getenv)
	s.DebugInfo, err = c.Bool("yarn.nodemanager.log-container-debug-info.enabled")
	add(err)
	if glob, err := c.Trimmed("yarn.nodemanager.container.stderr.pattern"); err != nil {
		add(err)
	} else if s.StderrPattern, err = compileGlob(glob); err != nil {
		add(&conf.ValueError{Source: c.Source("yarn.nodemanager.container.stderr.pattern"), Key: "yarn.nodemanager.container.stderr.pattern", Value: glob,
			Reason: "is not a file name glob: " + err.Error()})
	}
	s.StderrTail, err = c.Int("yarn.nodemanager.container.stderr.tail.bytes")
	add(err)
	if err == nil && s.StderrTail < 0 {
		raw, _ := c.Raw("yarn.nodemanager.container.stderr.tail.bytes")
		add(&conf.ValueError{Source: c.Source("yarn.nodemanager.container.stderr.tail.bytes"), Key: "yarn.nodemanager.container.stderr.tail.bytes", Value: raw, Reason: "must not be negative"})
	}
	s.KillDelay, err = c.Duration("yarn.nodemanager.sleep-delay-before-sigkill.ms", time.Millisecond)
	add(err)
	s.UserHome, err = c.Get("yarn.nodemanager.user-home-dir")
	add(err)
	s.DebugDelay, err = c.Duration("yarn.nodemanager.delete.debug-delay-sec", time.Second)
	add(err)
	s.AllowSimple, err = c.Bool("bobbin.nodemanager.allow-simple-auth")
	add(err)
	s.KeepOnResync, err = c.Bool("yarn.resourcemanager.work-preserving-recovery.enabled")
	add(err)
	s.Recovery, err = c.Bool("yarn.nodemanager.recovery.enabled")
	add(err)
	s.Supervised, err = c.Bool("yarn.nodemanager.recovery.supervised")
	add(err)
	if s.Recovery {
		dir, err := c.Trimmed("yarn.nodemanager.recovery.dir")
		add(err)
		s.RecoveryDir = strings.TrimPrefix(dir, "file://")
		if err == nil && s.RecoveryDir == "" {
			add(&conf.ValueError{Source: c.Source("yarn.nodemanager.recovery.dir"), Key: "yarn.nodemanager.recovery.dir", Value: dir, Reason: "needs a directory with yarn.nodemanager.recovery.enabled"})
		}
		// A restarted NodeManager must come back as the same node: the RM and the AMs
		// know its containers by that node id (the Java NM refuses this too).
		if _, port, err := net.SplitHostPort(s.Addr); err == nil && port == "0" {
			raw, _ := c.Raw("yarn.nodemanager.address")
			add(&conf.ValueError{Source: c.Source("yarn.nodemanager.address"), Key: "yarn.nodemanager.address", Value: raw,
				Reason: "Cannot support recovery with an ephemeral server port (yarn.nodemanager.recovery.enabled is true): set a fixed port"})
		}
	}
	s.MaxDataLength, err = c.Int("ipc.maximum.data.length")
	add(err)
	s.DefaultFS, err = c.Trimmed("fs.defaultFS")
	add(err)
	s.DiskCheckEvery, err = c.Duration("yarn.nodemanager.disk-health-checker.interval-ms", time.Millisecond)
	add(err)
	if err == nil && s.DiskCheckEvery <= 0 {
		add(fmt.Errorf("conf: yarn.nodemanager.disk-health-checker.interval-ms must be positive"))
	}
	s.DiskMaxPercent, err = c.Float("yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage")
	add(err)
	s.DiskMinFreeMB, err = c.Int64("yarn.nodemanager.disk-health-checker.min-free-space-per-disk-mb")
	add(err)
	s.LogRetain, err = c.Duration("yarn.nodemanager.log.retain-seconds", time.Second)
	add(err)
	mb, err := c.Int64("yarn.nodemanager.localizer.cache.target-size-mb")
	add(err)
	s.CacheTarget = mb << 20
	s.CacheCleanup, err = c.Duration("yarn.nodemanager.localizer.cache.cleanup.interval-ms", time.Millisecond)
	add(err)
	if err == nil && s.CacheCleanup <= 0 {
		add(fmt.Errorf("conf: yarn.nodemanager.localizer.cache.cleanup.interval-ms must be positive"))
	}
	s.PmemCheck, err = c.Bool("yarn.nodemanager.pmem-check-enabled")
	add(err)
	s.VmemCheck, err = c.Bool("yarn.nodemanager.vmem-check-enabled")
	add(err)
	s.VmemRatio, err = c.Float("yarn.nodemanager.vmem-pmem-ratio")
	add(err)
	s.MonitorEvery, err = monitorInterval(c)
	add(err)
	if err == nil && s.MonitorEvery <= 0 {
		add(fmt.Errorf("conf: yarn.nodemanager.container-monitor.interval-ms must be positive"))
	}
	hs, err := readHostSettings(c, &s)
	add(err)
	s.Borrow = hs
	s.Cgroups, err = readCgroupSettings(c, s.GPU != nil)
	add(err)
	if s.Cgroups.Elastic && !s.PmemCheck && !s.VmemCheck {
		// Java's CGroupElasticMemoryController refuses so too: the checks say which
		// memory the one limit counts.
		add(&conf.ValueError{Source: c.Source(keyElastic), Key: keyElastic, Value: "true",
			Reason: "we need either virtual or physical memory check requested: if swapping is enabled set only yarn.nodemanager.pmem-check-enabled to true, otherwise set only yarn.nodemanager.vmem-check-enabled to true"})
	}
	s.JavaAux, err = readJavaAux(c, s.AuxServices)
	add(err)
	return s, errors.Join(errs...)
}

// maxNodeResourceTypes bounds the resource types a NodeManager reads: it only passes the
// amounts on, the RM bounds what it schedules.
const maxNodeResourceTypes = 16
