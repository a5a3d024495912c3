package container

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

// A work-preserving NodeManager restart takes back the containers the earlier process
// left running. A container is found by its session leader — the process the executor
// started with setsid — whose environment carries the container's marker: the recorded
// pid is only a hint (it may have been reused, or not recorded before the NodeManager
// died). The leader is not the new NodeManager's child, so it is waited for through a
// pidfd, and its exit code read from the file the executor has it leave behind.

// findLeader is the session leader of container id: pid if that process is it, else the
// one found in /proc; 0 if none is running.
func findLeader(m Mark, pid int) int {
	if pid > 0 && isLeader(m, pid) {
		return pid
	}
	found, first := 0, int64(0)
	eachLeader(func(p int, started int64, env []byte) bool {
		if m.carriedBy(env) && (found == 0 || started < first) {
			found, first = p, started
		}
		return true
	})
	return found
}

// isLeader reports whether pid is a live session leader carrying container id's marker.
func isLeader(m Mark, pid int) bool {
	f, ok := statFields(pid)
	if !ok || f[0] == "Z" || f[0] == "X" || f[3] != strconv.Itoa(pid) {
		return false
	}
	env, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	return err == nil && m.carriedBy(env)
}

// eachLeader calls f with every live session leader's pid, start time (clock ticks
// since boot) and environment until f returns false. A container's own processes may
// lead sessions too (setsid): its launch process is the earliest started of them.
func eachLeader(f func(pid int, started int64, env []byte) bool) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		st, ok := statFields(pid)
		if !ok || st[0] == "Z" || st[0] == "X" || st[3] != e.Name() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		started, _ := strconv.ParseInt(st[19], 10, 64)
		if !f(pid, started, env) {
			return
		}
	}
}

// hasEnv reports whether a /proc/<pid>/environ holds key=value.
func hasEnv(env []byte, key, value string) bool {
	want := []byte(key + "=" + value)
	for _, kv := range bytes.Split(env, []byte{0}) {
		if bytes.Equal(kv, want) {
			return true
		}
	}
	return false
}

// envValue is key's value in a /proc/<pid>/environ ("" if absent).
func envValue(env []byte, key string) string {
	prefix := []byte(key + "=")
	for _, kv := range bytes.Split(env, []byte{0}) {
		if bytes.HasPrefix(kv, prefix) {
			return string(kv[len(prefix):])
		}
	}
	return ""
}

// Leaders are the running containers of a NodeManager (the owner its specs named):
// container id → the pid of its session leader.
func Leaders(owner string) map[string]int {
	out := map[string]int{}
	if owner == "" {
		return out
	}
	first := map[string]int64{}
	eachLeader(func(pid int, started int64, env []byte) bool {
		if hasEnv(env, OwnerEnv, owner) {
			if id := envValue(env, MarkerEnv); id != "" {
				if _, seen := out[id]; !seen || started < first[id] {
					out[id], first[id] = pid, started
				}
			}
		}
		return true
	})
	return out
}

// Kill ends a container nobody tracks any more (an orphan a restarted NodeManager
// cannot account for): its process group, then every process carrying its marker. It
// returns when none is left, or after about five seconds.
func Kill(m Mark, pid int) {
	done := make(chan struct{})
	close(done)
	killAll(m, pid, done)
}

// waitExit blocks until process pid, which need not be a child, has exited: through a
// pidfd, or by polling where the kernel has none (before 5.3).
func waitExit(pid int) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		for syscall.Kill(pid, 0) == nil && !zombie(pid) {
			time.Sleep(100 * time.Millisecond)
		}
		return
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(fds, -1)
		if err == nil || !errors.Is(err, unix.EINTR) {
			return
		}
	}
}

// zombie reports whether pid has exited and awaits its parent's wait.
func zombie(pid int) bool {
	f, ok := statFields(pid)
	return !ok || f[0] == "Z" || f[0] == "X"
}

// readExitFile reads the exit code a process container's wrapper recorded; Lost when
// there is none (the wrapper itself was killed).
func readExitFile(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return exitcode.Lost
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return exitcode.Lost
	}
	return n
}

// outputFilter is implemented by processes whose output holds lines that say nothing
// about the container (a UML guest's boot messages).
type outputFilter interface {
	filterOutput(b []byte) []byte
}

// Tail is the last max bytes of a container's output file (Spec.OutputFile), without
// the executor's own noise, trimmed; "" when there is none.
func Tail(p Process, path string, max int) string {
	if path == "" {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	// Noise lines are dropped before the tail is cut, so read more than max.
	const window = 64 << 10
	if st, err := f.Stat(); err == nil && st.Size() > window {
		f.Seek(st.Size()-window, io.SeekStart)
	}
	b, _ := io.ReadAll(io.LimitReader(f, window))
	if of, ok := p.(outputFilter); ok {
		b = of.filterOutput(b)
	}
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return strings.TrimSpace(string(b))
}
