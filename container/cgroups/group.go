package cgroups

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/opencontainers/cgroups"
	// Registers the device-rule writers: v1's devices.allow/deny, v2's eBPF program.
	_ "github.com/opencontainers/cgroups/devices"
	devconfig "github.com/opencontainers/cgroups/devices/config"
	"github.com/opencontainers/cgroups/fs"
	"github.com/opencontainers/cgroups/fs2"
)

// Limits are what a container's cgroup enforces; zero values set nothing.
type Limits struct {
	// CPUShares is the v1 cpu.shares (Java: 1024 per vcore, 2 for an OPPORTUNISTIC
	// container); on v2 it becomes cpu.weight by runc's conversion.
	CPUShares uint64
	// CPUCores, when > 0, caps the container at that many processors (a CFS quota: Java's
	// strict-resource-usage).
	CPUCores float64
	// MemoryBytes is the hard limit (memory.limit_in_bytes, memory.max); MemorySoftBytes
	// the soft one (memory.soft_limit_in_bytes, memory.low); Swappiness v1's
	// memory.swappiness when set.
	MemoryBytes, MemorySoftBytes int64
	Swappiness                   *uint64
	// PidsMax caps the container's processes and threads.
	PidsMax int64
	// DenyDevices are character devices (major, minor) the container may not open, read,
	// write or create: the node's GPUs it was not given (v1 devices.deny, as Java's
	// container-executor writes it; an eBPF device program on v2).
	DenyDevices []DeviceNumber
	// KernelOOMKill turns the kernel's OOM killer back on for the container (v1), which
	// its cgroup inherits off from a subtree under the elastic memory control: a
	// container over its own hard limit is then OOM-killed as without the control, not
	// held until someone frees memory.
	KernelOOMKill bool
}

// DeviceNumber is a character device's major and minor number.
type DeviceNumber struct{ Major, Minor int64 }

// resources are the limits as opencontainers' Resources.
func (l Limits) resources(v Version) *cgroups.Resources {
	r := &cgroups.Resources{MemorySwappiness: l.Swappiness}
	if l.CPUShares > 0 {
		if v == V2 {
			r.CpuWeight = cgroups.ConvertCPUSharesToCgroupV2Value(l.CPUShares)
		} else {
			r.CpuShares = l.CPUShares
		}
	}
	if l.CPUCores > 0 {
		r.CpuPeriod, r.CpuQuota = CPULimits(l.CPUCores)
	}
	if l.MemoryBytes > 0 {
		r.Memory = l.MemoryBytes // no memsw limit, as Java sets none
	}
	if l.MemorySoftBytes > 0 {
		r.MemoryReservation = l.MemorySoftBytes
	}
	if l.PidsMax > 0 {
		n := l.PidsMax
		r.PidsLimit = &n
	}
	if v == V2 {
		r.MemorySwappiness = nil // v2 has no per-cgroup swappiness
	}
	if len(l.DenyDevices) == 0 {
		// Untouched: the container sees the devices the NodeManager does. (An empty rule
		// list would be runc's deny-all.)
		r.SkipDevices = true
	} else {
		r.Devices = []*devconfig.Rule{{Type: devconfig.WildcardDevice, Major: devconfig.Wildcard, Minor: devconfig.Wildcard, Permissions: "rwm", Allow: true}}
		for _, d := range l.DenyDevices {
			r.Devices = append(r.Devices, &devconfig.Rule{Type: devconfig.CharDevice, Major: d.Major, Minor: d.Minor, Permissions: "rwm", Allow: false})
		}
	}
	return r
}

// Group is one container's cgroup (a directory in each controller's hierarchy on v1).
type Group struct {
	id      string
	version Version
	mgr     cgroups.Manager
	// paths are the cgroup's directories by controller ("" on v2), kept here: the
	// manager forgets those it removed.
	paths map[string]string
	// primary is the directory whose cgroup.procs lists the processes (opencontainers'
	// v1 manager reads the devices controller's, which containers need not join).
	primary string
}

// manager is opencontainers' manager for the given directories.
func (t *Subtree) manager(paths map[string]string, r *cgroups.Resources) (cgroups.Manager, error) {
	cg := &cgroups.Cgroup{Resources: r}
	if t.version == V2 {
		return fs2.NewManager(cg, paths[""])
	}
	return fs.NewManager(cg, paths)
}

// groupPaths are a container's directories: its id under the subtree in every hierarchy.
func (t *Subtree) groupPaths(id string) (map[string]string, error) {
	if id == "" || id != filepath.Base(id) || strings.HasPrefix(id, ".") {
		return nil, fmt.Errorf("%q cannot name a cgroup", id)
	}
	out := map[string]string{}
	for c, p := range t.paths {
		out[c] = filepath.Join(p, id)
	}
	return out, nil
}

// Create makes a container's cgroup with its limits. A cgroup left by an earlier
// container of that id (which cannot be running: ids are not reused) is emptied first.
func (t *Subtree) Create(id string, l Limits) (*Group, error) {
	paths, err := t.groupPaths(id)
	if err != nil {
		return nil, err
	}
	r := l.resources(t.version)
	mgr, err := t.manager(paths, r)
	if err != nil {
		return nil, fmt.Errorf("cgroup of %s: %w", id, err)
	}
	g := &Group{id: id, version: t.version, mgr: mgr, paths: maps.Clone(paths), primary: primaryPath(paths)}
	if g.Exists() {
		g.Destroy()
	}
	for _, p := range paths {
		if err := os.MkdirAll(p, 0o755); err != nil {
			g.Destroy()
			return nil, fmt.Errorf("create the cgroup of %s: %w", id, err)
		}
	}
	if err := mgr.Set(r); err != nil {
		g.Destroy()
		return nil, fmt.Errorf("set the limits of %s's cgroup: %w", id, err)
	}
	if p := paths["memory"]; l.KernelOOMKill && t.version == V1 && p != "" {
		if err := os.WriteFile(filepath.Join(p, "memory.oom_control"), []byte("0"), 0o644); err != nil {
			g.Destroy()
			return nil, fmt.Errorf("turn the OOM killer on in %s's cgroup: %w", id, err)
		}
	}
	return g, nil
}

// Adopt takes back the cgroup of a container an earlier NodeManager process started;
// false if it has none.
func (t *Subtree) Adopt(id string) (*Group, bool) {
	paths, err := t.groupPaths(id)
	if err != nil {
		return nil, false
	}
	mgr, err := t.manager(paths, &cgroups.Resources{})
	if err != nil {
		return nil, false
	}
	g := &Group{id: id, version: t.version, mgr: mgr, paths: maps.Clone(paths), primary: primaryPath(paths)}
	return g, g.Exists()
}

// primaryPath is the directory of a v1 cgroup that lists its processes: the freezer's,
// else the memory controller's, else any (v2: the only one).
func primaryPath(paths map[string]string) string {
	for _, c := range []string{"", "freezer", "memory", "pids", "cpu", "cpuacct"} {
		if p, ok := paths[c]; ok {
			return p
		}
	}
	for _, p := range paths {
		return p
	}
	return ""
}

// Groups lists the ids of the containers' cgroups in the subtree (those a NodeManager
// left: recovery adopts its containers' and removes the others).
func (t *Subtree) Groups() ([]string, error) {
	entries, err := os.ReadDir(primaryPath(t.paths))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// ID is the container id the cgroup is named by.
func (g *Group) ID() string { return g.id }

// Add moves a process into the cgroup, in every hierarchy.
func (g *Group) Add(pid int) error {
	// Into cgroup.procs directly: the directories exist (Create), and opencontainers'
	// v2 Apply would create them again relative to /sys/fs/cgroup, which a hybrid host's
	// unified hierarchy is not.
	for _, p := range g.paths {
		if err := cgroups.WriteCgroupProc(p, pid); err != nil {
			return fmt.Errorf("put process %d into %s's cgroup: %w", pid, g.id, err)
		}
	}
	return nil
}

// Start starts cmd inside the cgroup: from its first instruction, so that nothing it
// runs (a fork, a setsid, a double fork) was ever outside. The command is started under
// a small shell that waits on a pipe until the NodeManager has moved it into the cgroup,
// then execs the command; a shell that reads anything else (the NodeManager died first)
// exits 126 without running it. The caller waits for cmd as usual once Start returned
// nil; on an error the process is gone.
func (g *Group) Start(cmd *exec.Cmd) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer w.Close()
	fd := 3 + len(cmd.ExtraFiles)
	cmd.ExtraFiles = append(cmd.ExtraFiles, r)
	path := cmd.Path
	if len(cmd.Args) == 0 {
		cmd.Args = []string{path}
	}
	cmd.Args = append([]string{"/bin/sh", "-c",
		fmt.Sprintf(`read -r go <&%[1]d && [ "$go" = go ] && exec %[1]d<&- && exec "$@"; exit 126`, fd),
		"bobbin-cgroup-join", path}, cmd.Args[1:]...)
	cmd.Path = "/bin/sh"
	err = cmd.Start()
	r.Close()
	if err != nil {
		return err
	}
	if err := g.Add(cmd.Process.Pid); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return err
	}
	if _, err := w.WriteString("go\n"); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return fmt.Errorf("release process %d into %s's cgroup: %w", cmd.Process.Pid, g.id, err)
	}
	return nil
}

// Pids lists the processes in the cgroup.
func (g *Group) Pids() ([]int, error) {
	return cgroups.GetAllPids(g.primary)
}

// Signal sends sig to every process in the cgroup.
func (g *Group) Signal(sig syscall.Signal) error {
	pids, err := g.Pids()
	if err != nil {
		return err
	}
	for _, pid := range pids {
		syscall.Kill(pid, sig)
	}
	return nil
}

// Kill SIGKILLs every process in the cgroup and returns when none is left or after
// timeout. v2's cgroup.kill is atomic. On v1 each process listed is killed, again until
// none is left: a process that forks meanwhile leaves its child in the cgroup, to be
// killed next round. Only when a round finds more processes than the last (a fork
// bomb) is the cgroup frozen while they are listed and killed: a freeze waits for every process
// to run to its freezing point, which a process starved of CPU (a borrowed server's
// containers under their owner's load) takes long to reach, and it holds back the
// deaths it waits for.
func (g *Group) Kill(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for last := -1; ; {
		pids, err := g.Pids()
		if err != nil || len(pids) == 0 {
			if os.IsNotExist(err) || errors.Is(err, syscall.ENOENT) {
				return nil
			}
			return err
		}
		g.killOnce(pids, last >= 0 && len(pids) > last) // more than last round: forks
		last = len(pids)
		if time.Now().After(deadline) {
			return fmt.Errorf("%d processes left in %s's cgroup after %v", len(pids), g.id, timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (g *Group) killOnce(pids []int, freeze bool) {
	if g.version == V2 {
		if err := os.WriteFile(filepath.Join(g.paths[""], "cgroup.kill"), []byte("1"), 0o644); err == nil {
			return
		}
		// Before Linux 5.14: signal each process, as on v1.
	}
	frozen := false
	if freeze && (g.version == V2 || g.paths["freezer"] != "") {
		frozen = g.mgr.Freeze(cgroups.Frozen) == nil
		if frozen {
			if p, err := g.Pids(); err == nil {
				pids = p // none can fork now
			}
		}
	}
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	// A frozen cgroup (critical hours, or the freeze above) takes its SIGKILLs once thawed.
	_ = g.Freeze(false) // none to thaw without a freezer
}

// Freeze stops (true) or resumes (false) every process in the cgroup, without waiting
// for the kernel to have frozen them all (a process starved of CPU reaches its freezing
// point late). Kill still ends a frozen cgroup's processes: it thaws them to take
// SIGKILL.
func (g *Group) Freeze(frozen bool) error {
	file, value := "freezer.state", string(cgroups.Thawed)
	dir := g.paths["freezer"]
	if frozen {
		value = string(cgroups.Frozen)
	}
	if g.version == V2 {
		file, value, dir = "cgroup.freeze", map[bool]string{true: "1", false: "0"}[frozen], g.paths[""]
	}
	if dir == "" {
		return fmt.Errorf("%s's cgroup has no freezer", g.id)
	}
	if err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0o644); err != nil {
		return fmt.Errorf("freeze %s's cgroup: %w", g.id, err)
	}
	return nil
}

// Destroy kills what is left in the cgroup and removes it.
func (g *Group) Destroy() error {
	kerr := g.Kill(5 * time.Second)
	if err := g.mgr.Destroy(); err != nil {
		return fmt.Errorf("remove %s's cgroup: %w", g.id, errors.Join(kerr, err))
	}
	return nil
}

// Stats are a container's figures, read from its cgroup.
type Stats struct {
	// MemoryUsage is what the kernel charges the cgroup and holds against its limit
	// (page cache included); RSS its processes' resident memory: anonymous pages and
	// mapped files, as their RSS counts them (shared pages once).
	MemoryUsage, MemoryMaxUsage, RSS uint64
	MemoryLimit                      uint64
	// MemorySwapUsage is memory and swap together (v1 memory.memsw.usage_in_bytes; 0
	// without swap accounting).
	MemorySwapUsage uint64
	CPU             time.Duration // CPU time used
	Pids            uint64
}

// Stats reads the cgroup's memory, CPU and process figures (what its controllers have).
// It reads only those controllers: the heartbeat and the monitor call it for every
// container, and the io, hugetlb, rdma and pressure files would be read for nothing.
func (g *Group) Stats() (Stats, error) {
	st, err := g.mgr.Stats(&cgroups.StatsOptions{Controllers: cgroups.CPU | cgroups.Memory | cgroups.Pids})
	if err != nil {
		return Stats{}, err
	}
	m := st.MemoryStats
	s := Stats{MemoryUsage: m.Usage.Usage, MemoryMaxUsage: m.Usage.MaxUsage, MemoryLimit: m.Usage.Limit, MemorySwapUsage: m.SwapUsage.Usage,
		CPU: time.Duration(st.CpuStats.CpuUsage.TotalUsage), Pids: st.PidsStats.Current}
	if g.version == V2 {
		s.RSS = m.Stats["anon"] + m.Stats["file_mapped"]
	} else {
		s.RSS = m.Stats["total_rss"] + m.Stats["total_mapped_file"]
	}
	return s, nil
}

// OOMKills is how many processes the kernel's OOM killer ended in the cgroup.
func (g *Group) OOMKills() uint64 {
	n, err := g.mgr.OOMKillCount()
	if err != nil {
		return 0
	}
	return n
}

// Exists says the cgroup is still there.
func (g *Group) Exists() bool { return cgroups.PathExists(g.primary) }
