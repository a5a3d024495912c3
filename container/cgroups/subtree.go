// Package cgroups puts each container's processes into a cgroup of its own, under a
// subtree the NodeManager owns, as the Java NodeManager's LinuxContainerExecutor does
// with its CGroupsHandler: one cgroup per container and controller on cgroups v1
// (<mount>/<controller>/<hierarchy>/<container id>), one directory on the v2 unified
// hierarchy (<mount>/<hierarchy>/<container id>).
//
// The file protocol is opencontainers/cgroups' (runc's): its v1 (fs) and v2 (fs2)
// managers set the resources, list, freeze and remove; this package adds what a
// NodeManager needs around them, as Nomad's cgroupslib.Lifecycle does: the subtree and
// its discovery, a Kill that leaves no process (v1: freeze, SIGKILL, thaw; v2:
// cgroup.kill), the shares→weight conversion, and reattaching to a container's cgroup by
// its id after a NodeManager restart.
package cgroups

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/opencontainers/cgroups"
)

// Version is the cgroups hierarchy a Subtree lives on.
type Version int

const (
	V1 Version = 1 // one hierarchy per controller (Java's default)
	V2 Version = 2 // the unified hierarchy (Java 3.5's ...cgroups.v2.enabled)
)

// Settings say where the NodeManager's subtree is and which controllers it uses.
type Settings struct {
	Version Version
	// MountPath is where the hierarchies are mounted. On v1, the directory holding one
	// mount per controller (or controllers joined with commas, "cpu,cpuacct"), as
	// yarn.nodemanager.linux-container-executor.cgroups.mount-path names it; on v2 the
	// unified mount (...cgroups.v2.mount-path). Empty: found in /proc/self/mountinfo.
	MountPath string
	// Hierarchy is the NodeManager's subtree in each hierarchy
	// (yarn.nodemanager.linux-container-executor.cgroups.hierarchy, /hadoop-yarn).
	Hierarchy string
	// CPU and Memory are the controllers whose limits the NodeManager sets; Pids the
	// pids controller (a process limit per container); Devices v1's devices controller
	// (GPU isolation; v2 needs none). Containers always join the memory, cpuacct,
	// freezer, pids and devices controllers where they are mounted, to be counted and
	// killed whole.
	CPU, Memory, Pids, Devices bool
}

// Subtree is the NodeManager's part of the hierarchies: the parent of every container's
// cgroup.
type Subtree struct {
	version Version
	// paths maps each controller the containers join to the subtree's directory in its
	// hierarchy; on v2 the only key is "".
	paths map[string]string

	// mu guards what was last written to the subtree's own limits: the same value is not
	// written again, since writing a CFS quota refills its period's runtime (a cap
	// rewritten every measurement would be no cap).
	mu                  sync.Mutex
	period              uint64
	quota, memory       int64
	quotaSet, memorySet bool
}

// v1Controllers are the v1 controllers containers join, and whether a Settings field
// requires it.
var v1Controllers = []struct {
	name     string
	required func(Settings) bool
}{
	{"cpu", func(s Settings) bool { return s.CPU }},
	{"cpuacct", func(Settings) bool { return false }},
	{"memory", func(s Settings) bool { return s.Memory }},
	{"freezer", func(Settings) bool { return false }},
	{"pids", func(s Settings) bool { return s.Pids }},
	{"devices", func(s Settings) bool { return s.Devices }},
}

// Open finds the hierarchies, checks that every controller the settings need is there,
// and creates the subtree in each. Its error names what is missing.
func Open(s Settings) (*Subtree, error) {
	rel := strings.Trim(filepath.Clean("/"+s.Hierarchy), "/")
	if rel == "" {
		return nil, errors.New("the cgroups hierarchy is the root: the NodeManager needs a subtree of its own")
	}
	t := &Subtree{version: s.Version, paths: map[string]string{}}
	switch s.Version {
	case V1:
		mounts, err := v1Mounts(s.MountPath)
		if err != nil {
			return nil, err
		}
		for _, c := range v1Controllers {
			m, ok := mounts[c.name]
			if !ok {
				if c.required(s) {
					return nil, fmt.Errorf("the cgroups v1 controller %q is not mounted%s", c.name, where(s.MountPath))
				}
				continue
			}
			t.paths[c.name] = filepath.Join(m, rel)
		}
	case V2:
		mount := s.MountPath
		if mount == "" {
			var err error
			if mount, err = v2Mount(); err != nil {
				return nil, err
			}
		}
		have, err := controllersOf(mount)
		if err != nil {
			return nil, err
		}
		for _, c := range []struct {
			name string
			need bool
		}{{"cpu", s.CPU}, {"memory", s.Memory}, {"pids", s.Pids}} {
			if c.need && !have[c.name] {
				return nil, fmt.Errorf("the cgroups v2 controller %q is not enabled at %s (cgroup.controllers lists %s)", c.name, mount, strings.Join(sortedKeys(have), " "))
			}
		}
		t.paths[""] = filepath.Join(mount, rel)
	default:
		return nil, fmt.Errorf("cgroups version %d", s.Version)
	}
	for _, p := range t.paths {
		if err := os.MkdirAll(p, 0o755); err != nil {
			return nil, fmt.Errorf("create the NodeManager's cgroup: %w", err)
		}
	}
	if t.version == V2 {
		if err := t.delegate(s); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// delegate enables the controllers the containers' cgroups need in the subtree's
// cgroup.subtree_control (v2 gives a child only what its parent delegates).
func (t *Subtree) delegate(s Settings) error {
	var want []string
	for _, c := range []struct {
		name string
		on   bool
	}{{"cpu", s.CPU}, {"memory", true}, {"pids", true}} {
		if c.on {
			want = append(want, c.name)
		}
	}
	have, err := controllersOf(t.paths[""])
	if err != nil {
		return err
	}
	for _, c := range want {
		if !have[c] {
			if s.CPU && c == "cpu" || s.Memory && c == "memory" || s.Pids && c == "pids" {
				return fmt.Errorf("the cgroups v2 controller %q is not delegated to %s", c, t.paths[""])
			}
			continue // for accounting only: without it the container is still contained
		}
		if err := os.WriteFile(filepath.Join(t.paths[""], "cgroup.subtree_control"), []byte("+"+c), 0o644); err != nil {
			return fmt.Errorf("enable the %s controller for containers in %s: %w", c, t.paths[""], err)
		}
	}
	return nil
}

func where(mountPath string) string {
	if mountPath == "" {
		return " (/proc/self/mountinfo lists no such mount)"
	}
	return " under " + mountPath
}

// v1Mounts maps each v1 controller to its mount: from the configured mount path's
// directories (each named by its controllers, as Java's parseConfiguredCGroupPath
// reads them), else from /proc/self/mountinfo.
func v1Mounts(mountPath string) (map[string]string, error) {
	out := map[string]string{}
	if mountPath != "" {
		entries, err := os.ReadDir(mountPath)
		if err != nil {
			return nil, fmt.Errorf("read the cgroups mount path: %w", err)
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			for _, c := range strings.Split(e.Name(), ",") {
				if _, ok := out[c]; !ok {
					out[c] = filepath.Join(mountPath, e.Name())
				}
			}
		}
		return out, nil
	}
	if cgroups.IsCgroup2UnifiedMode() {
		return nil, errors.New("this host mounts only the cgroups v2 hierarchy: set yarn.nodemanager.linux-container-executor.cgroups.v2.enabled")
	}
	mounts, err := cgroups.GetCgroupMounts(false)
	if err != nil {
		return nil, fmt.Errorf("find the cgroups v1 mounts: %w", err)
	}
	for _, m := range mounts {
		for _, c := range m.Subsystems {
			if _, ok := out[c]; !ok {
				out[c] = m.Mountpoint
			}
		}
	}
	return out, nil
}

// v2Mount is the unified hierarchy's mount: /sys/fs/cgroup on a unified host, else the
// first cgroup2 mount in /proc/self/mountinfo (a hybrid host's /sys/fs/cgroup/unified).
func v2Mount() (string, error) {
	if cgroups.IsCgroup2UnifiedMode() {
		return "/sys/fs/cgroup", nil
	}
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		if f := strings.Fields(pre); len(f) >= 5 {
			return f[4], nil
		}
	}
	return "", errors.New("no cgroups v2 hierarchy is mounted")
}

// controllersOf reads a v2 cgroup's cgroup.controllers.
func controllersOf(dir string) (map[string]bool, error) {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return nil, fmt.Errorf("read the cgroups v2 controllers: %w", err)
	}
	out := map[string]bool{}
	for _, c := range strings.Fields(string(b)) {
		out[c] = true
	}
	return out, nil
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	if len(out) == 0 {
		return []string{"none"}
	}
	return out
}

// Version is the hierarchy the subtree lives on.
func (t *Subtree) Version() Version { return t.version }

// Controllers lists the v1 controllers containers join (on v2: "unified").
func (t *Subtree) Controllers() []string {
	var out []string
	for c := range t.paths {
		if c == "" {
			c = "unified"
		}
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// Path is the subtree's directory in a controller's hierarchy ("" on v2), "" when the
// containers do not join that controller.
func (t *Subtree) Path(controller string) string {
	if t.version == V2 {
		return t.paths[""]
	}
	return t.paths[controller]
}

// Remove kills every container left in the subtree and removes it (a NodeManager that
// stops without keeping its containers; tests).
func (t *Subtree) Remove() error {
	var errs []error
	if ids, err := t.Groups(); err == nil {
		for _, id := range ids {
			if g, ok := t.Adopt(id); ok {
				errs = append(errs, g.Destroy())
			}
		}
	}
	for _, p := range t.paths {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// SetCPULimit caps the CPU of every container together at cpus processors (a CFS quota
// on the subtree, as Java's percentage-physical-cpu-limit does); cpus <= 0 lifts it.
func (t *Subtree) SetCPULimit(cpus float64) error {
	return t.setQuota(CPULimits(cpus))
}

// CapCPU caps the CPU of every container together at cpus processors, however few: at
// least Java's shortest quota (1 % of a processor), never "no limit" (borrowed servers:
// the owner's share left to it).
//
// Unlike Java's overall limit (a period of up to a second), the period is the kernel's
// default 100 ms, so that the cap bites within a measurement; and the cap moves in steps
// of a twentieth of a processor, so that a measurement's jitter does not rewrite it (a
// rewrite refills the period's runtime).
func (t *Subtree) CapCPU(cpus float64) error {
	const period = 100000
	steps := math.Round(max(cpus, 0.01) * 20)
	quota := int64(max(steps*period/20, 1000))
	return t.setQuota(period, quota)
}

// setQuota writes the subtree's CFS period and quota, unless they are what it has.
func (t *Subtree) setQuota(period uint64, quota int64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.quotaSet && period == t.period && quota == t.quota {
		return nil
	}
	if err := t.set(&cgroups.Resources{CpuPeriod: period, CpuQuota: quota}, "cpu"); err != nil {
		return err
	}
	t.period, t.quota, t.quotaSet = period, quota, true
	return nil
}

// SetCPUShares weights the containers together against the host's other processes
// (v1 cpu.shares; v2 cpu.weight by runc's conversion): below 1024, the owner of a
// borrowed server gets more of a contended processor than the containers, at once,
// whatever the quota.
func (t *Subtree) SetCPUShares(shares uint64) error {
	r := &cgroups.Resources{CpuShares: shares}
	if t.version == V2 {
		r = &cgroups.Resources{CpuWeight: cgroups.ConvertCPUSharesToCgroupV2Value(shares)}
	}
	return t.set(r, "cpu")
}

// SetMemoryLimit caps the memory of every container together at bytes; 0 lifts it.
func (t *Subtree) SetMemoryLimit(bytes int64) error {
	if bytes <= 0 {
		bytes = -1
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.memorySet && bytes == t.memory {
		return nil
	}
	if err := t.set(&cgroups.Resources{Memory: bytes}, "memory"); err != nil {
		return err
	}
	t.memory, t.memorySet = bytes, true
	return nil
}

// set writes resources to the subtree's own cgroup in one controller.
func (t *Subtree) set(r *cgroups.Resources, controller string) error {
	p := t.Path(controller)
	if p == "" {
		return fmt.Errorf("the containers do not join the %s controller", controller)
	}
	r.SkipDevices = true // the subtree's own device rules stay the host's
	m, err := t.manager(map[string]string{controllerKey(t.version, controller): p}, r)
	if err != nil {
		return err
	}
	if err := m.Set(r); err != nil {
		return fmt.Errorf("limit the NodeManager's cgroup %s: %w", p, err)
	}
	return nil
}

func controllerKey(v Version, controller string) string {
	if v == V2 {
		return ""
	}
	return controller
}

// CPULimits is Java's getOverallLimits: the CFS period and quota (µs) that give cpus
// processors; the quota is -1 (none) when cpus <= 0 or the period would be too short.
func CPULimits(cpus float64) (period uint64, quota int64) {
	const maxQuota, minPeriod = 1000 * 1000, 1000
	if cpus < 0.01 {
		return maxQuota, -1
	}
	q, p := int64(maxQuota), int64(maxQuota/cpus)
	if cpus < 1 {
		p, q = maxQuota, int64(maxQuota*cpus)
		if q < minPeriod {
			q = minPeriod
		}
	}
	if p < minPeriod {
		return maxQuota, -1
	}
	return uint64(p), q
}
