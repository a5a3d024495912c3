package nodemanager

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/container/cgroups"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/nodemanager/containers"
)

// The keys by which the Java NodeManager's LinuxContainerExecutor puts containers into
// cgroups (ResourceHandlerModule): each turns them on, with its controller's limits.
const (
	keyResourcesHandler = "yarn.nodemanager.linux-container-executor.resources-handler.class"
	keyCPUEnabled       = "yarn.nodemanager.resource.cpu.enabled"
	keyMemoryEnabled    = "yarn.nodemanager.resource.memory.enabled"
	keyMemoryEnforced   = "yarn.nodemanager.resource.memory.enforced"
	keySoftLimit        = "yarn.nodemanager.resource.memory.cgroups.soft-limit-percentage"
	keySwappiness       = "yarn.nodemanager.resource.memory.cgroups.swappiness"
	keyElastic          = "yarn.nodemanager.elastic-memory-control.enabled"
	keyElasticTimeout   = "yarn.nodemanager.elastic-memory-control.timeout-sec"
	keyOOMHandler       = "yarn.nodemanager.elastic-memory-control.oom-handler"
	keyHierarchy        = "yarn.nodemanager.linux-container-executor.cgroups.hierarchy"
	keyMount            = "yarn.nodemanager.linux-container-executor.cgroups.mount"
	keyMountPath        = "yarn.nodemanager.linux-container-executor.cgroups.mount-path"
	keyV2Enabled        = "yarn.nodemanager.linux-container-executor.cgroups.v2.enabled"
	keyV2MountPath      = "yarn.nodemanager.linux-container-executor.cgroups.v2.mount-path"
	keyStrict           = "yarn.nodemanager.linux-container-executor.cgroups.strict-resource-usage"
	keyCPUPercent       = "yarn.nodemanager.resource.percentage-physical-cpu-limit"
	keyPidsMax          = "bobbin.nodemanager.cgroups.pids-max"

	classCgroupsHandler = "org.apache.hadoop.yarn.server.nodemanager.util.CgroupsLCEResourcesHandler"
	classDefaultHandler = "org.apache.hadoop.yarn.server.nodemanager.util.DefaultLCEResourcesHandler"
	classDefaultOOM     = "org.apache.hadoop.yarn.server.nodemanager.containermanager.linux.resources.DefaultOOMHandler"
)

// cgroupSettings are how containers are put into cgroups, if they are.
type cgroupSettings struct {
	// On names the keys that asked for cgroups: none, and containers run without them.
	On   []string
	Tree cgroups.Settings
	// Strict caps each container's CPU at its share of the node (strict-resource-usage);
	// YarnCPUs is what the containers together may use: the node's processors times
	// percentage-physical-cpu-limit, as Java's getContainersCPUs.
	Strict   bool
	YarnCPUs float64
	CPUs     int // the node's processors
	// MemoryEnforced sets hard and soft limits (Java's memory.enforced); SoftLimit is the
	// soft limit's share of the allocation, Swappiness the cgroup's.
	MemoryEnforced bool
	SoftLimit      float64
	Swappiness     uint64
	PidsMax        int64
	// Elastic: the containers share one limit (the node's memory) with the kernel's OOM
	// killer off, and when they reach it the NodeManager chooses whom to kill (Java's
	// elastic memory control); ElasticTimeout is how long that may take before the
	// NodeManager gives the choice back to the kernel.
	Elastic        bool
	ElasticTimeout time.Duration
}

// enabled says containers run in cgroups.
func (s cgroupSettings) enabled() bool { return len(s.On) > 0 }

// readCgroupSettings reads the cgroups keys as the Java NodeManager reads them. Bobbin
// applies them under either executor (Java only under LinuxContainerExecutor): the
// NodeManager needs only to write its subtree, as root or in a delegated one. gpus says
// the yarn.io/gpu plugin is on: each container is denied, through its cgroup, the GPUs
// it was not given.
func readCgroupSettings(c *conf.Configuration, gpus bool) (cgroupSettings, error) {
	var s cgroupSettings
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	flag := func(key string) bool {
		v, err := c.Bool(key)
		add(err)
		return v
	}
	handler, err := c.Trimmed(keyResourcesHandler)
	add(err)
	switch handler {
	case "", classDefaultHandler:
	case classCgroupsHandler:
		s.On = append(s.On, keyResourcesHandler)
	default:
		add(&conf.ValueError{Source: c.Source(keyResourcesHandler), Key: keyResourcesHandler, Value: handler,
			Reason: "Bobbin serves " + classDefaultHandler + " and " + classCgroupsHandler})
	}
	s.Tree.CPU = handler == classCgroupsHandler || flag(keyCPUEnabled)
	if flag(keyCPUEnabled) {
		s.On = append(s.On, keyCPUEnabled)
	}
	if s.Tree.Memory = flag(keyMemoryEnabled); s.Tree.Memory {
		s.On = append(s.On, keyMemoryEnabled)
	}
	s.PidsMax, err = c.Int64(keyPidsMax)
	add(err)
	if s.Tree.Pids = s.PidsMax > 0; s.Tree.Pids {
		s.On = append(s.On, keyPidsMax)
	}
	for _, k := range []string{"yarn.nodemanager.resource.disk.enabled", "yarn.nodemanager.resource.network.enabled"} {
		if flag(k) {
			add(&conf.ValueError{Source: c.Source(k), Key: k, Value: "true", Reason: "disk (blkio) and network (net_cls, tc) isolation are not served by Bobbin's NodeManager"})
		}
	}
	if s.Elastic = flag(keyElastic); s.Elastic {
		s.On = append(s.On, keyElastic)
		if !s.Tree.Memory {
			// Java: "CGroup Elastic Memory controller enabled but it is not available."
			add(&conf.ValueError{Source: c.Source(keyElastic), Key: keyElastic, Value: "true",
				Reason: "the elastic memory control limits the containers through their memory cgroups: set " + keyMemoryEnabled + "=true"})
		}
	}
	secs, err := c.Int(keyElasticTimeout)
	add(err)
	if err == nil && secs <= 0 {
		add(&conf.ValueError{Source: c.Source(keyElasticTimeout), Key: keyElasticTimeout, Value: fmt.Sprint(secs), Reason: "must be at least one second"})
	}
	s.ElasticTimeout = time.Duration(secs) * time.Second
	if h, err := c.Trimmed(keyOOMHandler); err != nil {
		add(err)
	} else if h != "" && h != classDefaultOOM {
		add(&conf.ValueError{Source: c.Source(keyOOMHandler), Key: keyOOMHandler, Value: h,
			Reason: "Bobbin's NodeManager loads no Java class: it chooses as " + classDefaultOOM + " does (OPPORTUNISTIC first, then those over their allocation, then the latest launched)"})
	}
	if gpus {
		s.On = append(s.On, keyResourcePlugins)
	}
	s.MemoryEnforced = flag(keyMemoryEnforced)
	soft, err := c.Float(keySoftLimit)
	add(err)
	if err == nil && (soft < 0 || soft > 100) {
		add(&conf.ValueError{Source: c.Source(keySoftLimit), Key: keySoftLimit, Value: fmt.Sprint(soft), Reason: "Value must be between 0 and 100."})
	}
	s.SoftLimit = soft / 100
	sw, err := c.Int(keySwappiness)
	add(err)
	if err == nil && (sw < 0 || sw > 100) {
		add(&conf.ValueError{Source: c.Source(keySwappiness), Key: keySwappiness, Value: fmt.Sprint(sw), Reason: "Value must be between 0 and 100."})
	}
	s.Swappiness = uint64(max(sw, 0))
	s.Strict = flag(keyStrict)
	pct, err := c.Float(keyCPUPercent)
	add(err)
	if err == nil && pct <= 0 {
		add(&conf.ValueError{Source: c.Source(keyCPUPercent), Key: keyCPUPercent, Value: fmt.Sprint(pct), Reason: "Value cannot be less than or equal to 0."})
	}
	s.CPUs = runtime.NumCPU()
	s.YarnCPUs = float64(s.CPUs) * min(pct, 100) / 100
	s.Tree.Hierarchy, err = c.Trimmed(keyHierarchy)
	add(err)
	if flag(keyMount) && s.enabled() {
		add(&conf.ValueError{Source: c.Source(keyMount), Key: keyMount, Value: "true",
			Reason: "Bobbin's NodeManager mounts no cgroup controllers: mount them (as systemd does) and leave " + keyMountPath + " empty to find them, or name where they are"})
	}
	s.Tree.Version = cgroups.V1
	mountKey := keyMountPath
	if flag(keyV2Enabled) {
		s.Tree.Version, mountKey = cgroups.V2, keyV2MountPath
	}
	s.Tree.MountPath, err = c.Trimmed(mountKey)
	add(err)
	// v2 denies devices through an eBPF program the cgroups library attaches.
	s.Tree.Devices = gpus && s.Tree.Version == cgroups.V1
	return s, errors.Join(errs...)
}

// openCgroups opens the NodeManager's subtree and sets its overall CPU limit, or says
// why it cannot, naming the keys that asked for cgroups.
func openCgroups(s cgroupSettings) (*cgroups.Subtree, error) {
	fail := func(err error) error {
		if errors.Is(err, fs.ErrPermission) && os.Geteuid() != 0 {
			// A rootless NodeManager (a borrowed server's ordinary user): the fix is the
			// administrator's, or turning the keys off.
			err = fmt.Errorf("%w: the NodeManager runs as uid %d, not root, and may write cgroups only in a subtree delegated to it (%s naming a subtree its user owns in each controller; docs/cgroups.md), or run without cgroups (unset %s)",
				err, os.Geteuid(), keyHierarchy, strings.Join(s.On, ", "))
		}
		return fmt.Errorf("nodemanager: %s: containers cannot be put into cgroups here: %w", strings.Join(s.On, ", "), err)
	}
	t, err := cgroups.Open(s.Tree)
	if err != nil {
		return nil, fail(err)
	}
	if s.Tree.CPU {
		// As Java's CGroupsCpuResourceHandlerImpl.bootstrap: the containers together get
		// percentage-physical-cpu-limit of the processors; at 100 % any earlier cap goes.
		cpus := s.YarnCPUs
		if int(cpus) == s.CPUs {
			cpus = 0
		}
		if err := t.SetCPULimit(cpus); err != nil {
			return nil, fail(err)
		}
	}
	return t, nil
}

// cgroupLimits are a container's limits, as Java's cgroups CPU and memory handlers set
// them: 1024 CPU shares a vcore (2 for an OPPORTUNISTIC container), a CFS quota of its
// share of the containers' processors under strict usage; a hard limit of its memory
// and a soft limit of soft-limit-percentage of it (0, with swappiness 100, for an
// OPPORTUNISTIC one).
func (s cgroupSettings) limits(c *containers.Container, nodeVCores int32) cgroups.Limits {
	var l cgroups.Limits
	if !s.enabled() {
		return l
	}
	opportunistic := c.Ident.GetExecutionType() == yarnpb.ExecutionTypeProto_OPPORTUNISTIC
	if s.Tree.CPU {
		vcores := c.Resource().GetVirtualCores()
		l.CPUShares = 1024 * uint64(max(vcores, 0))
		if opportunistic {
			l.CPUShares = 2
		}
		if s.Strict && vcores != nodeVCores && nodeVCores > 0 {
			l.CPUCores = float64(vcores) * s.YarnCPUs / float64(nodeVCores)
		}
	}
	if s.Tree.Memory && s.MemoryEnforced {
		mb := c.Resource().GetMemory()
		l.MemoryBytes = mb << 20
		l.MemorySoftBytes = int64(float64(mb)*s.SoftLimit) << 20
		sw := s.Swappiness
		if opportunistic {
			l.MemorySoftBytes, sw = 0, 100
		}
		l.Swappiness = &sw
	}
	l.PidsMax = s.PidsMax
	// Under the elastic control the subtree's OOM killer is off and a new cgroup inherits
	// that: a container over its own hard limit would be held, not killed.
	l.KernelOOMKill = s.Elastic
	return l
}
