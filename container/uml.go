package container

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"

	"github.com/bobbin-yarn/bobbin/container/cgroups"
	"github.com/bobbin-yarn/bobbin/container/umlrelay"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

// The User-Mode Linux executor runs every container in its own linux.uml guest, started
// as the NodeManager's (unprivileged) user: the guest has its own process space and a
// memory cap (mem=), sees the host's root read-only through hostfs (or, confined, only a
// prepared root directory), gets the container's directories mounted read-write by the
// embedded init script, and reaches the network through slirp, which needs no tun device
// and no root.

//go:embed guest-init.sh
var guestInit []byte

// slirpNet is slirp's fixed virtual network; the guest's address is taken from it and
// 10.0.2.2 is the host.
var slirpNet = &net.IPNet{IP: net.IPv4(10, 0, 2, 0), Mask: net.CIDRMask(24, 32)}

// Guest addresses are handed out from 10.0.2.16 to 10.0.2.253 (.2 is the host, .3 the
// DNS forwarder, .15 slirp's default).
const firstGuestIP, lastGuestIP = 16, 253

// UMLExecutor starts containers in User-Mode Linux guests.
type UMLExecutor struct {
	Kernel   string // the UML kernel binary (linux.uml)
	Mconsole string // uml_mconsole, used to halt a guest
	// Slirp is the slirp binary behind the guest's eth0, for kernels with UML's slirp
	// transport (Debian's 6.1); kernels without it (7.x) use vde_plug's slirp plugin
	// (umlnet.go). Empty leaves the guest without a network. Debian's plain slirp
	// starts but its connections time out; slirp-fullbolt works.
	Slirp string
	// Network is the route guests reach the network by, chosen by CheckUML from the
	// kernel's configuration.
	Network UMLNetwork
	// RelayAgent, when set, is a bobbin binary the guest runs (as `bobbin
	// uml-guest-relay`) so that the ports it listens on are forwarded from the same
	// ports at the host (umlrelay): a MapReduce AM in a guest is reached by its tasks
	// in other guests and by its job client. It needs a network, and the binary visible
	// in the guest (not in confined mode).
	RelayAgent string
	// Log receives the relays' warnings (a port taken at the host); nil discards them.
	Log logrus.FieldLogger
	// RootDir, when set, confines the guest: it is the guest's root (hostfs=RootDir), so
	// nothing outside it is reachable, and the container's directories must lie inside
	// it (the guest sees them without the RootDir prefix).
	RootDir string
	// StateDir holds the start lock, the address slots and the guests' umid directories.
	StateDir string
	// TmpDir is where a guest's RAM file is created: it must allow exec and hold mem.
	TmpDir string
	// MemOverheadMB is added to the container's memory for the guest kernel.
	MemOverheadMB int64
	// HostLoopback routes the guest's 127.0.0.0/8 to the host's loopback through slirp,
	// so that localhost addresses in the job's configuration reach the host's services.
	HostLoopback bool
	// BootTimeout bounds how long a start holds the node's start lock.
	BootTimeout time.Duration
	// Hostname is the guest's host name (the host's, so Java's getLocalHost resolves
	// as it does for a process container).
	Hostname string
	// ExtraDirs are further host directories mounted read-write in every guest (a
	// shared file system that jobs with a file:// default FS write their output to).
	ExtraDirs []string
	// Cgroups, when set, puts each guest's host processes (the kernel, its helpers, one
	// per guest address space, slirp) into the container's cgroup from the kernel's
	// first instruction, with Spec.Limits but for memory: the guest's mem= stays its
	// memory cap. Its CPU weight and quota, pids limit and devices then bind the whole
	// guest, a borrowed server's caps and freezes reach it, and a stop kills every host
	// process it has.
	Cgroups *cgroups.Subtree
}

// umlLimits are a guest's cgroup limits: the container's, without the memory ones (the
// guest's own kernel enforces mem=; a cgroup limit would kill the guest's kernel, not
// the process that used the memory).
func umlLimits(l cgroups.Limits) cgroups.Limits {
	l.MemoryBytes, l.MemorySoftBytes, l.Swappiness = 0, 0, nil
	return l
}

// CheckUML verifies what a UML executor needs on this host — the kernel and mconsole,
// the helpers of the kernel's network route (and chooses it: Network), usable state and
// tmp directories, and a host network that does not overlap slirp's 10.0.2.0/24 — and
// must come before Launch.
func (e *UMLExecutor) CheckUML() error {
	var errs []error
	for _, bin := range []string{e.Kernel, e.Mconsole} {
		if bin == "" {
			continue
		}
		if _, err := exec.LookPath(bin); err != nil {
			errs = append(errs, fmt.Errorf("uml executor: %w (Debian packages user-mode-linux, uml-utilities, slirp)", err))
		}
	}
	if e.StateDir == "" {
		errs = append(errs, errors.New("uml executor: no state directory"))
	} else if err := os.MkdirAll(filepath.Join(e.StateDir, "ip"), 0o755); err != nil {
		errs = append(errs, fmt.Errorf("uml executor: state directory: %w", err))
	}
	if st, err := os.Stat(e.TmpDir); err != nil || !st.IsDir() {
		errs = append(errs, fmt.Errorf("uml executor: guest RAM directory %q is not a directory", e.TmpDir))
	}
	if e.RootDir != "" {
		if st, err := os.Stat(filepath.Join(e.RootDir, "bin", "sh")); err != nil || st.IsDir() {
			errs = append(errs, fmt.Errorf("uml executor: confined root %s has no bin/sh", e.RootDir))
		}
	}
	if e.Kernel != "" && len(errs) == 0 {
		n, err := e.chooseNetwork()
		errs = append(errs, err)
		e.Network = n
	}
	if e.Slirp != "" {
		if addrs, err := net.InterfaceAddrs(); err == nil {
			for _, a := range addrs {
				if ipn, ok := a.(*net.IPNet); ok && (slirpNet.Contains(ipn.IP) || ipn.Contains(slirpNet.IP)) {
					errs = append(errs, fmt.Errorf("uml executor: host address %s overlaps slirp's guest network %s; guests could not reach it", ipn, slirpNet))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// GuestPath is where the guest sees a host path: the same path, or in confined mode the
// path inside RootDir without that prefix (an error when the path lies outside it).
func (e *UMLExecutor) GuestPath(p string) (string, error) {
	if e.RootDir == "" {
		return p, nil
	}
	root := filepath.Clean(e.RootDir)
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("%s is outside the confined root %s", p, root)
	}
	return "/" + rel, nil
}

// guestText rewrites host paths under RootDir in a script or value to guest paths.
func (e *UMLExecutor) guestText(s string) string {
	if e.RootDir == "" {
		return s
	}
	return strings.ReplaceAll(s, strings.TrimSuffix(filepath.Clean(e.RootDir), "/")+"/", "/")
}

// shellQuote quotes s for POSIX sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Launch prepares the guest's files in the container's working directory, takes the
// node's start lock and an address, and boots the guest. It returns once the guest
// process runs; the lock is released in the background when the guest reports it is up.
func (e *UMLExecutor) Launch(ctx context.Context, spec Spec) (Process, error) {
	fail := func(err error) (Process, error) { return nil, fmt.Errorf("container %s: uml: %w", spec.ID, err) }
	meta := filepath.Join(spec.WorkDir, ".bobbin-uml")
	if err := os.MkdirAll(meta, 0o755); err != nil {
		return fail(err)
	}
	for _, f := range []string{"exit", "exit.tmp", "up"} {
		os.Remove(filepath.Join(meta, f))
	}
	g := map[string]string{}
	for _, p := range []string{"init", "conf", "env", "launch.sh", "exit", "up"} {
		gp, err := e.GuestPath(filepath.Join(meta, p))
		if err != nil {
			return fail(err)
		}
		g[p] = gp
	}
	work, err := e.GuestPath(spec.WorkDir)
	if err != nil {
		return fail(err)
	}
	var rw []string
	seen := map[string]bool{}
	for _, d := range append(append([]string{spec.WorkDir}, spec.Dirs...), e.ExtraDirs...) {
		gd, err := e.GuestPath(filepath.Clean(d))
		if err != nil {
			return fail(err)
		}
		if strings.ContainsAny(gd, "\n") {
			return fail(fmt.Errorf("directory %q has a newline in its name", d))
		}
		if !seen[gd] {
			seen[gd] = true
			rw = append(rw, gd)
		}
	}
	script, err := os.ReadFile(spec.Script)
	if err != nil {
		return fail(err)
	}
	var env bytes.Buffer
	for _, kv := range spec.Env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !validEnvName(k) {
			continue
		}
		fmt.Fprintf(&env, "export %s=%s\n", k, shellQuote(e.guestText(v)))
	}
	fmt.Fprintf(&env, "export %s=%s\n", MarkerEnv, shellQuote(spec.ID))
	files := map[string][]byte{
		"init":      guestInit,
		"env":       env.Bytes(),
		"launch.sh": []byte(e.guestText(string(script))),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(meta, name), b, 0o755); err != nil {
			return fail(err)
		}
	}

	if e.Slirp != "" && e.Network == NetworkNone {
		return fail(errors.New("the executor's network route is not chosen (CheckUML comes before Launch)"))
	}
	unlock, err := e.lock(ctx)
	if err != nil {
		return fail(err)
	}
	released := false
	defer func() {
		if !released {
			unlock()
		}
	}()
	ip := ""
	slot := ""
	if e.Network != NetworkNone {
		if ip, slot, err = e.takeAddress(); err != nil {
			return fail(err)
		}
	}
	var relay *umlrelay.Relay
	if e.RelayAgent != "" && e.Network != NetworkNone && e.RootDir == "" {
		log := e.Log
		if log != nil {
			log = log.WithField("container", spec.ID)
		}
		if relay, err = umlrelay.Start(log, ""); err != nil {
			e.freeAddress(slot)
			return fail(err)
		}
	}
	abandon := func() {
		e.freeAddress(slot)
		if relay != nil {
			relay.Close()
		}
	}
	var conf bytes.Buffer
	for _, kv := range [][2]string{
		{"BOBBIN_RW_DIRS", strings.Join(rw, "\n")},
		{"BOBBIN_HOSTNAME", e.Hostname},
		{"BOBBIN_IP", ip},
		{"BOBBIN_NETDEV", e.Network.device()},
		{"BOBBIN_HOST_LOOPBACK", strconv.FormatBool(e.HostLoopback)},
		{"BOBBIN_TMP", map[bool]string{true: "tmpfs", false: "host"}[e.RootDir != ""]},
		{"BOBBIN_WORKDIR", work},
		{"BOBBIN_ENV_FILE", g["env"]},
		{"BOBBIN_SCRIPT", g["launch.sh"]},
		{"BOBBIN_EXIT_FILE", g["exit"]},
		{"BOBBIN_UP_FILE", g["up"]},
	} {
		fmt.Fprintf(&conf, "%s=%s\n", kv[0], shellQuote(kv[1]))
	}
	if relay != nil {
		for _, kv := range [][2]string{
			{"BOBBIN_RELAY_AGENT", e.RelayAgent},
			{"BOBBIN_RELAY", "10.0.2.2:" + strconv.Itoa(relay.Port())},
			{"BOBBIN_RELAY_TOKEN", relay.Token()},
		} {
			fmt.Fprintf(&conf, "%s=%s\n", kv[0], shellQuote(kv[1]))
		}
	}
	// 0600: it holds the relay's token (the guest reads it as the NodeManager's user).
	if err := os.WriteFile(filepath.Join(meta, "conf"), conf.Bytes(), 0o600); err != nil {
		abandon()
		return fail(err)
	}

	umlDir := filepath.Join(e.StateDir, "umid")
	if err := os.MkdirAll(umlDir, 0o755); err != nil {
		abandon()
		return fail(err)
	}
	umid := spec.ID
	os.RemoveAll(filepath.Join(umlDir, umid)) // a leftover of an earlier run of this id
	mem := e.guestMem(spec)
	args := []string{
		"mem=" + strconv.FormatInt(mem, 10) + "M",
		"umid=" + umid, "uml_dir=" + umlDir,
		"root=/dev/root", "rootfstype=hostfs", "rootflags=/", "ro",
		// loglevel=4: the guest kernel's errors reach the console (and so a failed
		// container's diagnostics), the ptrace failures of a kernel that cannot run on
		// this host among them; a guest that runs prints none.
		"con=null", "con0=null,fd:1", "quiet", "loglevel=4",
		"init=" + g["init"], "BOBBIN_CONF=" + g["conf"],
	}
	if e.RootDir != "" {
		args = append(args, "hostfs="+filepath.Clean(e.RootDir))
	}
	if e.Network != NetworkNone {
		args = append(args, e.Network.kernelArg(e.Slirp))
	}
	cmd := exec.Command(e.Kernel, args...)
	cmd.Dir = spec.WorkDir
	// The kernel and slirp get an environment of their own (the container's is in the
	// env file): slirp needs a HOME, and must not read the NodeManager user's ~/.slirprc.
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + e.StateDir, "TMPDIR=" + e.TmpDir}, spec.Mark().env()...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := openOutput(spec)
	if err != nil {
		abandon()
		return fail(err)
	}
	if out != nil {
		defer out.Close()
		cmd.Stdout, cmd.Stderr = out, out
	}
	group, err := startContained(e.Cgroups, spec.ID, umlLimits(spec.Limits), cmd)
	if err != nil {
		abandon()
		return fail(fmt.Errorf("start %s: %w", e.Kernel, err))
	}
	if slot != "" {
		os.WriteFile(slot, []byte(strconv.Itoa(cmd.Process.Pid)), 0o644)
	}
	p := e.process(spec, cmd.Process.Pid, slot)
	p.group = group
	p.relay = relay
	go func() { p.finish(cmd.Wait()) }()
	released = true
	go p.releaseWhenUp(unlock)
	return p, nil
}

func validEnvName(k string) bool {
	if k == "" {
		return false
	}
	for i, r := range k {
		if r != '_' && (r < 'A' || r > 'Z') && (r < 'a' || r > 'z') && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// lock takes the node's start lock: a directory, since mkdir is atomic. A lock whose
// owner process is gone, or that is older than twice the boot timeout, is stale.
func (e *UMLExecutor) lock(ctx context.Context) (func(), error) {
	dir := filepath.Join(e.StateDir, "start.lock")
	for {
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			os.WriteFile(filepath.Join(dir, "owner"), []byte(strconv.Itoa(os.Getpid())), 0o644)
			return func() { os.RemoveAll(dir) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("start lock: %w", err)
		}
		if e.staleLock(dir) {
			os.RemoveAll(dir)
			continue
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the start lock %s: %w", dir, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (e *UMLExecutor) staleLock(dir string) bool {
	st, err := os.Stat(dir)
	if err != nil {
		return false
	}
	if b, err := os.ReadFile(filepath.Join(dir, "owner")); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && !alive(pid) {
			return true
		}
	}
	return time.Since(st.ModTime()) > 2*e.BootTimeout+time.Second
}

func alive(pid int) bool {
	return pid > 0 && syscall.Kill(pid, 0) != syscall.ESRCH
}

// takeAddress picks a guest address no live guest on this node holds (called under the
// start lock). A slot file names its guest's host pid; a dead one frees the slot.
func (e *UMLExecutor) takeAddress() (ip, slot string, err error) {
	dir := filepath.Join(e.StateDir, "ip")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", fmt.Errorf("address slots: %w", err)
	}
	for i := firstGuestIP; i <= lastGuestIP; i++ {
		ip := fmt.Sprintf("10.0.2.%d", i)
		slot := filepath.Join(dir, ip)
		if b, err := os.ReadFile(slot); err == nil {
			pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
			if perr != nil || alive(pid) {
				continue
			}
		}
		// Held by this NodeManager until the guest's pid replaces it.
		if err := os.WriteFile(slot, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
			return "", "", fmt.Errorf("address slot: %w", err)
		}
		return ip, slot, nil
	}
	return "", "", fmt.Errorf("no free guest address in %s (%d guests running)", slirpNet, lastGuestIP-firstGuestIP+1)
}

func (e *UMLExecutor) freeAddress(slot string) {
	if slot != "" {
		os.Remove(slot)
	}
}

// process describes the guest of spec whose kernel process is pid.
func (e *UMLExecutor) process(spec Spec, pid int, slot string) *umlProcess {
	umlDir := filepath.Join(e.StateDir, "umid")
	return &umlProcess{e: e, spec: spec, pid: pid, meta: filepath.Join(spec.WorkDir, ".bobbin-uml"), slot: slot, mem: e.guestMem(spec),
		mconsole: filepath.Join(umlDir, spec.ID, "mconsole"), umidDir: filepath.Join(umlDir, spec.ID), done: make(chan struct{})}
}

// guestMem is the guest's mem= in MB: the container's memory and the kernel's overhead.
func (e *UMLExecutor) guestMem(spec Spec) int64 {
	return max(spec.MemoryMB+e.MemOverheadMB, 32)
}

// Reattach takes back a guest an earlier NodeManager process booted: its kernel
// process, its address slot (the slot file names the kernel's pid) and its management
// console are where that process left them.
func (e *UMLExecutor) Reattach(spec Spec, pid int) (Process, error) {
	pid = findLeader(spec.Mark(), pid)
	slot := ""
	if pid > 0 {
		ents, _ := os.ReadDir(filepath.Join(e.StateDir, "ip"))
		for _, ent := range ents {
			f := filepath.Join(e.StateDir, "ip", ent.Name())
			if b, err := os.ReadFile(f); err == nil && strings.TrimSpace(string(b)) == strconv.Itoa(pid) {
				slot = f
			}
		}
	}
	p := e.process(spec, pid, slot)
	if e.Cgroups != nil {
		if g, ok := e.Cgroups.Adopt(spec.ID); ok {
			p.group = g
		}
	}
	if pid == 0 {
		p.finish(errors.New("the guest was not running when the NodeManager restarted"))
		return p, nil
	}
	go func() {
		waitExit(pid)
		p.finish(nil)
	}()
	return p, nil
}

type umlProcess struct {
	e        *UMLExecutor
	spec     Spec
	pid      int // the kernel's process, the guest's session leader
	meta     string
	slot     string
	mem      int64
	mconsole string
	umidDir  string
	done     chan struct{}
	group    *cgroups.Group  // the guest's host processes' cgroup (nil without cgroups)
	relay    *umlrelay.Relay // the guest's forwarded ports (nil without a relay)

	exit     int
	verdict  int32
	diag     string
	stopOnce sync.Once
}

func (p *umlProcess) Pid() int { return p.pid }

// MemoryEnforced says the guest's mem= caps the container's memory, so the NodeManager's
// process-tree memory check does not apply.
func (p *umlProcess) MemoryEnforced() bool { return true }

// releaseWhenUp holds the start lock until the guest's init says it is up (its
// directories mounted, its address configured), the guest ends, or the boot timeout.
func (p *umlProcess) releaseWhenUp(unlock func()) {
	defer unlock()
	up := filepath.Join(p.meta, "up")
	deadline := time.Now().Add(p.e.BootTimeout)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(up); err == nil {
			return
		}
		select {
		case <-p.done:
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// finish reads the exit code the guest's init wrote once the guest has ended (err: how
// its kernel process ended, when known).
func (p *umlProcess) finish(err error) {
	b, rerr := os.ReadFile(filepath.Join(p.meta, "exit"))
	f := strings.Fields(string(b))
	switch {
	case rerr == nil && (len(f) == 2 || len(f) == 3): // guests of older NodeManagers write two
		p.exit, _ = strconv.Atoi(f[0])
		oom, _ := strconv.Atoi(f[1])
		maps := 0
		if len(f) == 3 {
			maps, _ = strconv.Atoi(f[2])
		}
		switch {
		case oom > 0 && p.exit != 0:
			p.verdict = exitcode.KilledExceededPmem
			p.diag = fmt.Sprintf("Container [pid=%d,containerID=%s] ran out of memory in its User-Mode Linux guest (%d MB container memory, guest mem=%dM): the guest's OOM killer ended %d process(es). Killing container.",
				p.Pid(), p.spec.ID, p.spec.MemoryMB, p.mem, oom)
		case maps > 0 && p.exit != 0:
			// Not the container's fault: its exit code stands, with the cause beside it.
			have, _ := hostMaxMapCount()
			p.verdict = int32(p.exit)
			// 6.1 guests kill that process with SIGKILL (137), 7.x ones with SIGSEGV (139).
			how := "killed the process that needed it"
			if p.exit > 128 {
				how += " (" + unix.SignalName(syscall.Signal(p.exit-128)) + ")"
			}
			p.diag = fmt.Sprintf("Container [pid=%d,containerID=%s]: the host refused to map User-Mode Linux guest memory (%d time(s)) and the guest %s, though the guest had memory left: the host's vm.max_map_count (%d) is below the guest's %d pages (guest mem=%dM). Raise it: sysctl -w vm.max_map_count=%d",
				p.Pid(), p.spec.ID, maps, how, have, guestPages(p.mem), p.mem, guestPages(p.mem))
		}
	default:
		p.exit = exitcode.Lost
		p.verdict = exitcode.Lost
		p.diag = fmt.Sprintf("Container %s: its User-Mode Linux guest ended without writing an exit code (linux.uml: %v; exit file: %v). The guest failed to boot, panicked or was killed; its console is below.",
			p.spec.ID, err, rerr)
	}
	p.e.freeAddress(p.slot)
	if p.relay != nil {
		p.relay.Close()
	}
	os.RemoveAll(p.umidDir)
	close(p.done)
}

func (p *umlProcess) Wait() int {
	<-p.done
	return p.exit
}

// Verdict is the executor's own account of how the container ended, when it knows more
// than the exit code: the guest's OOM killer, or a guest that left no exit code.
func (p *umlProcess) Verdict() (int32, string, bool) {
	<-p.done
	return p.verdict, p.diag, p.verdict != 0
}

// Stop halts the guest through its management console, then signals the process group
// (SIGTERM, then SIGKILL — SIGKILL alone leaves UML's helper processes), then removes
// the umid directory.
func (p *umlProcess) Stop(grace time.Duration) {
	p.stopOnce.Do(func() {
		select {
		case <-p.done:
		default:
			if p.e.Mconsole != "" {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				exec.CommandContext(ctx, p.e.Mconsole, p.mconsole, "halt").Run()
				cancel()
			}
		}
		pgid := p.Pid()
		select {
		case <-p.done:
		case <-time.After(grace):
			syscall.Kill(-pgid, syscall.SIGTERM)
			select {
			case <-p.done:
			case <-time.After(time.Second):
			}
		}
		killAll(p.spec.Mark(), pgid, p.done)
		if p.group != nil {
			// What halt and the group's signals left (a helper in a session of its own)
			// dies with the cgroup; a cgroup that cannot go is swept at the next start.
			p.group.Destroy()
		}
		os.RemoveAll(p.umidDir)
	})
}

// Usage is the guest's footprint: the kernel process maps the whole guest RAM, so its
// resident size is the guest's memory in use (the other host processes of the guest map
// the same pages); CPU is summed over every process of the guest.
func (p *umlProcess) Usage() Usage {
	var u, kernel Usage
	eachProcess(p.spec.Mark(), p.Pid(), func(pid int, f []string) {
		u.add(f)
		if pid == p.Pid() {
			kernel.add(f)
		}
	})
	u.RSS, u.VSize = kernel.RSS, kernel.VSize
	if p.group != nil {
		// Every host process of the guest, however it left the session, in CPU time.
		if st, err := p.group.Stats(); err == nil && st.CPU > 0 {
			u.CPU = st.CPU
		}
	}
	return u
}

// filterOutput drops the boot lines every guest prints from its console output (they
// would only bury a failing container's messages).
func (p *umlProcess) filterOutput(b []byte) []byte {
	var out []byte
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		line = bytes.TrimRight(line, "\r\n")
		if !isNoise(line) {
			out = append(append(out, line...), '\n')
		}
	}
	return out
}

var bootNoise = [][]byte{
	[]byte("SELinux:"), []byte("mmapper_init"), []byte("Failed to initialize ubd device"),
	[]byte("Type five zeroes"), []byte("[autodetect SLIP"), []byte("SLiRP Ready"),
	[]byte("Checking PROT_EXEC"), []byte("Checking that ptrace"), []byte("Checking syscall emulation"),
	[]byte("Checking advanced syscall"), []byte("Checking environment variables"),
	[]byte("Checking if host processor"), []byte("Core dump limits"),
	[]byte("  RLIMIT_CORE"),
	[]byte("Locating the top of the address space"), []byte("Locating the bottom of the address space"),
	[]byte("Checking host MADV_REMOVE"), []byte("Checking that host ptys"),
	[]byte("Checking if syscall restart"), []byte("Checking if ptrace"),
	[]byte("This architecture does not"), []byte("Checking for "),
	[]byte("Slirp v1."), []byte("Copyright (c) 1995"), []byte("All rights reserved."),
	[]byte("This program is copyrighted"), []byte("Please read the file COPYRIGHT"),
	[]byte("package for the terms and conditions"), []byte("IP address of Slirp host"),
	[]byte("IP address of your DNS"), []byte("Your address is 10.0.2"), []byte("(or anything else you want)"),
	[]byte("Error: can't find your HOME"), []byte("sysrq: Power Off"), []byte("reboot: Power down"),
	[]byte("\x00"),
}

func isNoise(line []byte) bool {
	t := bytes.TrimSpace(line)
	if len(t) == 0 {
		return true
	}
	for _, n := range bootNoise {
		if bytes.HasPrefix(t, bytes.TrimSpace(n)) {
			return true
		}
	}
	return false
}
