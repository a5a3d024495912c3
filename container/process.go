package container

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/bobbin-yarn/bobbin/container/cgroups"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

// MarkerEnv is set in every container process's environment to the container id; it is
// how Stop finds processes that left the container's process group.
const MarkerEnv = "BOBBIN_CONTAINER_ID"

// OwnerEnv is set in every container process's environment to Spec.Owner, the
// NodeManager that runs it.
const OwnerEnv = "BOBBIN_NODEMANAGER"

// ProcessExecutor runs launch scripts as local processes (DefaultContainerExecutor).
type ProcessExecutor struct {
	// Bash is the shell (default /bin/bash).
	Bash string
	// Cgroups, when set, puts each container into a cgroup of its own under this subtree
	// (with Spec.Limits) before its script's first instruction: then every process it
	// starts is counted, limited and killed with it, however it leaves its session.
	Cgroups *cgroups.Subtree
}

// exitWrapper runs the launch script as a child and records its exit code in a file
// (written aside and renamed, so it is whole when seen), as Java's
// default_container_executor.sh does: a NodeManager that restarted learns from it how a
// container it did not start ended. The wrapper outlives SIGTERM (the trap defers it
// until the script is done; children get the default action back) and so records a
// container stopped with SIGTERM too; SIGKILL ends it with the rest of the group.
const exitWrapper = `trap : TERM INT HUP QUIT; "$BASH" "$1"; rc=$?; echo "$rc" >"$2.tmp" && mv -f "$2.tmp" "$2"; exit "$rc"`

// exitFile is where the wrapper records a process container's exit code.
func exitFile(workDir string) string { return filepath.Join(workDir, ".bobbin-exitcode") }

// Launch starts the script in a new session (so it leads its own process group).
func (e ProcessExecutor) Launch(ctx context.Context, spec Spec) (Process, error) {
	bash := e.Bash
	if bash == "" {
		bash = "/bin/bash"
	}
	ef := exitFile(spec.WorkDir)
	os.Remove(ef)
	cmd := exec.Command(bash, "-c", exitWrapper, "bobbin-container", spec.Script, ef)
	cmd.Dir = spec.WorkDir
	cmd.Env = append(append([]string(nil), spec.Env...), spec.Mark().env()...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if u := spec.User; u != nil {
		// Credentials are set before the child changes to WorkDir, which is the user's.
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: u.UID, Gid: u.GID, Groups: u.Groups}
		cmd.Env = append(cmd.Env, "USER="+u.Name, "LOGNAME="+u.Name, "HOME="+u.Home)
	}
	out, err := openOutput(spec)
	if err != nil {
		return nil, err
	}
	if out != nil {
		defer out.Close()
		cmd.Stdout, cmd.Stderr = out, out
	}
	group, err := startContained(e.Cgroups, spec.ID, spec.Limits, cmd)
	if err != nil {
		return nil, fmt.Errorf("container %s: start %s: %w", spec.ID, spec.Script, err)
	}
	p := &process{mark: spec.Mark(), pid: cmd.Process.Pid, done: make(chan struct{}), group: group, memoryLimited: spec.Limits.MemoryBytes > 0}
	go func() {
		err := cmd.Wait()
		p.exit = exitCode(cmd.ProcessState, err)
		p.countOOM()
		close(p.done)
	}()
	return p, nil
}

// Reattach takes back a process container an earlier NodeManager process started.
func (e ProcessExecutor) Reattach(spec Spec, pid int) (Process, error) {
	p := &process{mark: spec.Mark(), pid: findLeader(spec.Mark(), pid), done: make(chan struct{}), memoryLimited: spec.Limits.MemoryBytes > 0}
	if e.Cgroups != nil {
		// Its cgroup, by its id: what it left running is found there, and killed with it.
		if g, ok := e.Cgroups.Adopt(spec.ID); ok {
			p.group = g
		}
	}
	ef := exitFile(spec.WorkDir)
	if p.pid == 0 {
		p.exit = readExitFile(ef)
		close(p.done)
		return p, nil
	}
	go func() {
		waitExit(p.pid)
		p.exit = readExitFile(ef)
		close(p.done)
	}()
	return p, nil
}

// openOutput opens the container's output file for appending (nil: none asked for).
func openOutput(spec Spec) (*os.File, error) {
	if spec.OutputFile == "" {
		return nil, nil
	}
	f, err := os.OpenFile(spec.OutputFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("container %s: output file: %w", spec.ID, err)
	}
	return f, nil
}

// process is a process container: one the executor started (its child) or one it took
// back after a NodeManager restart (not its child: waited for through a pidfd).
type process struct {
	mark Mark
	pid  int
	done chan struct{}
	exit int

	// group is the container's cgroup (nil without cgroups); memoryLimited says the
	// kernel holds it to its memory (a hard limit).
	group         *cgroups.Group
	memoryLimited bool
	oomKills      atomic.Uint64 // the cgroup's OOM kills, read before it is removed

	stopOnce sync.Once
}

// countOOM records the cgroup's OOM kills while it exists.
func (p *process) countOOM() {
	if p.group != nil {
		if n := p.group.OOMKills(); n > p.oomKills.Load() {
			p.oomKills.Store(n)
		}
	}
}

// MemoryEnforced says the kernel holds the container to its memory: the NodeManager's
// own check skips it, as Java's ContainersMonitor skips containers under strict cgroups
// memory enforcement.
func (p *process) MemoryEnforced() bool { return p.group != nil && p.memoryLimited }

// Verdict reports a container the kernel's OOM killer ended in its cgroup as the Java
// NodeManager reports one over its physical memory: KILLED_EXCEEDED_PMEM, which
// MapReduce and Spark tell their users to give more memory. It is asked once the
// container has ended: its end and Stop have counted the kills (the cgroup may be gone).
func (p *process) Verdict() (int32, string, bool) {
	n := p.oomKills.Load()
	if n == 0 {
		return 0, "", false
	}
	return exitcode.KilledExceededPmem, fmt.Sprintf("Container [pid=%d,containerID=%s] is running beyond physical memory limits. "+
		"The kernel's OOM killer ended %d of its processes in its memory cgroup, at its limit (yarn.nodemanager.resource.memory.enforced). Killing container.", p.pid, p.mark.ID, n), true
}

func (p *process) Pid() int { return p.pid }

func exitCode(st *os.ProcessState, err error) int {
	if st == nil {
		if err != nil {
			return 127
		}
		return 0
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}

func (p *process) Usage() Usage {
	if p.group == nil {
		return TreeUsage(p.mark, p.Pid())
	}
	return p.cgroupUsage()
}

// cgroupUsage is the container's usage from its cgroup: every process in it, however it
// left the container's session, is counted.
func (p *process) cgroupUsage() Usage {
	var u Usage
	pids, _ := p.group.Pids()
	for _, pid := range pids {
		if f, ok := statFields(pid); ok && f[0] != "Z" && f[0] != "X" {
			u.add(f)
		}
	}
	if st, err := p.group.Stats(); err == nil {
		// Resident memory as the kernel charges it: anonymous and mapped file pages.
		u.RSS = int64(st.RSS)
		if st.CPU > 0 {
			u.CPU = st.CPU
		}
	}
	return u
}

func (p *process) Wait() int {
	<-p.done
	return p.exit
}

// Signal sends sig to the container's process group.
func (p *process) Signal(sig syscall.Signal) error {
	select {
	case <-p.done:
		return fmt.Errorf("container %s has exited", p.mark.ID)
	default:
	}
	if err := syscall.Kill(-p.Pid(), sig); err != nil {
		return fmt.Errorf("signal %v to container %s (process group %d): %w", sig, p.mark.ID, p.Pid(), err)
	}
	return nil
}

func (p *process) Stop(grace time.Duration) {
	p.stopOnce.Do(func() {
		pgid := p.Pid()
		if pgid > 0 || p.group != nil {
			if pgid > 0 {
				syscall.Kill(-pgid, syscall.SIGTERM)
			}
			if p.group != nil {
				p.group.Signal(syscall.SIGTERM) // those that left the group too
			}
			select {
			case <-p.done:
			case <-time.After(grace):
			}
		}
		if p.group != nil {
			p.group.Kill(5 * time.Second)
		}
		killAll(p.mark, pgid, p.done)
		if p.group != nil {
			p.countOOM()
			p.group.Destroy()
		}
	})
}

// killAll SIGKILLs a container's process group and, until none is left, every process
// that escaped it (Stragglers); it returns once done is closed and nothing is left, or
// after about five seconds.
func killAll(m Mark, pgid int, done <-chan struct{}) {
	if pgid > 0 {
		syscall.Kill(-pgid, syscall.SIGKILL)
	}
	for i := 0; i < 500; i++ {
		left := Stragglers(m, pgid)
		for _, pid := range left {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		select {
		case <-done:
			if len(left) == 0 {
				return
			}
		default:
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Stragglers lists the live processes of a container: those in its session or process
// group, and those whose environment carries its mark. Zombies are not counted.
func Stragglers(m Mark, pgid int) []int {
	var out []int
	eachProcess(m, pgid, func(pid int, _ []string) { out = append(out, pid) })
	return out
}

// eachProcess calls f with the pid and the /proc/<pid>/stat fields (statFields) of every
// live process of a container, as Stragglers defines them.
func eachProcess(m Mark, pgid int, f func(pid int, stat []string)) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		fields, ok := statFields(pid)
		if !ok || fields[0] == "Z" || fields[0] == "X" {
			continue
		}
		pg, err1 := strconv.Atoi(fields[2])
		sid, err2 := strconv.Atoi(fields[3])
		if err1 != nil || err2 != nil {
			continue
		}
		if pgid > 0 && (pg == pgid || sid == pgid) {
			f(pid, fields)
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && m.carriedBy(env) {
			f(pid, fields)
		}
	}
}

// Usage is what a container's processes use.
type Usage struct {
	RSS   int64         // resident bytes
	VSize int64         // virtual bytes
	CPU   time.Duration // user+system CPU time of the live processes
	Procs int
}

// clockTick is USER_HZ, the unit of /proc/<pid>/stat times (100 on every Linux ABI).
const clockTick = 100

// TreeUsage sums the memory and CPU time of a container's live processes (as Stragglers
// finds them), from /proc/<pid>/stat.
func TreeUsage(m Mark, pgid int) Usage {
	var u Usage
	eachProcess(m, pgid, func(_ int, f []string) { u.add(f) })
	return u
}

// ProcessUsage reads one process's memory and CPU time from /proc/<pid>/stat; false if
// the process is gone or its stat unreadable.
func ProcessUsage(pid int) (Usage, bool) {
	f, ok := statFields(pid)
	if !ok {
		return Usage{}, false
	}
	var u Usage
	u.add(f)
	return u, true
}

// add counts one process's stat fields.
func (u *Usage) add(f []string) {
	vs, _ := strconv.ParseInt(f[20], 10, 64)
	rss, _ := strconv.ParseInt(f[21], 10, 64)
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	u.VSize += vs
	u.RSS += rss * int64(os.Getpagesize())
	u.CPU += time.Duration(ut+st) * time.Second / clockTick
	u.Procs++
}

// statFields are the fields of /proc/<pid>/stat after the command (splitStat): state is
// index 0, process group 2, session 3, utime 11, stime 12, vsize 20 and rss 21.
func statFields(pid int) ([]string, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil, false
	}
	f, ok := splitStat(b)
	if !ok || len(f) < 22 {
		return nil, false
	}
	return f, true
}

// splitStat splits a /proc/<pid>/stat line after its second field, the command, which
// may contain spaces and parentheses.
func splitStat(b []byte) ([]string, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, false
	}
	f := strings.Fields(string(b[i+1:]))
	return f, len(f) >= 4
}

// startContained starts cmd in a new cgroup of the container with its limits when the
// executor puts containers into cgroups (t set), else as it is; the group is nil then.
// On an error nothing is left: no process, no cgroup.
func startContained(t *cgroups.Subtree, id string, l cgroups.Limits, cmd *exec.Cmd) (*cgroups.Group, error) {
	if t == nil {
		return nil, cmd.Start()
	}
	g, err := t.Create(id, l)
	if err != nil {
		return nil, err
	}
	if err := g.Start(cmd); err != nil {
		g.Destroy()
		return nil, err
	}
	return g, nil
}
