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
	"syscall"
	"time"
)

// MarkerEnv is set in every container process's environment to the container id; it is
// how Stop finds processes that left the container's process group.
const MarkerEnv = "BOBBIN_CONTAINER_ID"

// ProcessExecutor runs launch scripts as local processes (DefaultContainerExecutor).
type ProcessExecutor struct {
	// Bash is the shell (default /bin/bash).
	Bash string
}

// Launch starts the script in a new session (so it leads its own process group).
func (e ProcessExecutor) Launch(ctx context.Context, spec Spec) (Process, error) {
	bash := e.Bash
	if bash == "" {
		bash = "/bin/bash"
	}
	cmd := exec.Command(bash, spec.Script)
	cmd.Dir = spec.WorkDir
	cmd.Env = append(append([]string(nil), spec.Env...), MarkerEnv+"="+spec.ID)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if spec.Output != nil {
		cmd.Stdout, cmd.Stderr = spec.Output, spec.Output
		// A process that outlives the shell (a daemon the container left running) must
		// not keep Wait from returning by holding the output pipe.
		cmd.WaitDelay = time.Second
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("container %s: start %s: %w", spec.ID, spec.Script, err)
	}
	p := &process{id: spec.ID, cmd: cmd, done: make(chan struct{})}
	go p.reap()
	return p, nil
}

type process struct {
	id   string
	cmd  *exec.Cmd
	done chan struct{}
	exit int

	stopOnce sync.Once
}

func (p *process) Pid() int { return p.cmd.Process.Pid }

// reap waits for the launch shell; it is the one goroutine a process owns, and it ends
// when the shell does.
func (p *process) reap() {
	err := p.cmd.Wait()
	p.exit = exitCode(p.cmd.ProcessState, err)
	close(p.done)
}

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

func (p *process) Usage() Usage { return TreeUsage(p.id, p.Pid()) }

func (p *process) Wait() int {
	<-p.done
	return p.exit
}

// Signal sends sig to the container's process group.
func (p *process) Signal(sig syscall.Signal) error {
	select {
	case <-p.done:
		return fmt.Errorf("container %s has exited", p.id)
	default:
	}
	if err := syscall.Kill(-p.Pid(), sig); err != nil {
		return fmt.Errorf("signal %v to container %s (process group %d): %w", sig, p.id, p.Pid(), err)
	}
	return nil
}

func (p *process) Stop(grace time.Duration) {
	p.stopOnce.Do(func() {
		pgid := p.Pid()
		syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
		}
		killAll(p.id, pgid, p.done)
	})
}

// killAll SIGKILLs a container's process group and, until none is left, every process
// that escaped it (Stragglers); it returns once done is closed and nothing is left, or
// after about five seconds.
func killAll(id string, pgid int, done <-chan struct{}) {
	syscall.Kill(-pgid, syscall.SIGKILL)
	for i := 0; i < 500; i++ {
		left := Stragglers(id, pgid)
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
// group, and those whose environment carries its marker. Zombies are not counted.
func Stragglers(id string, pgid int) []int {
	var out []int
	eachProcess(id, pgid, func(pid int, _ []string) { out = append(out, pid) })
	return out
}

// eachProcess calls f with the pid and the /proc/<pid>/stat fields (statFields) of every
// live process of a container, as Stragglers defines them.
func eachProcess(id string, pgid int, f func(pid int, stat []string)) {
	marker := []byte(MarkerEnv + "=" + id + "\x00")
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
		if pg == pgid || sid == pgid {
			f(pid, fields)
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && (bytes.Contains(env, marker) || bytes.HasSuffix(env, marker[:len(marker)-1])) {
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
func TreeUsage(id string, pgid int) Usage {
	var u Usage
	eachProcess(id, pgid, func(_ int, f []string) { u.add(f) })
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
