// Package container runs YARN containers' launch scripts. An Executor starts a container's
// process tree and can stop all of it; the NodeManager decides what to run (the launch
// script it wrote) and when to stop it.
//
// ProcessExecutor is the default, like Java's DefaultContainerExecutor: the script runs as
// the NodeManager's user in its own session and process group. Stopping sends SIGTERM to
// the group, then SIGKILL after a delay, and then hunts down every process still carrying
// the container's marker in its environment — children that left the group with setsid
// or daemonized — so that no process of a stopped container survives.
package container

import (
	"context"
	"syscall"
	"time"

	"github.com/bobbin-yarn/bobbin/container/cgroups"
)

// Spec is one container process to start.
type Spec struct {
	ID      string   // the container id; also the marker searched for on stop
	Script  string   // the launch script, run with /bin/bash
	WorkDir string   // the container's working directory
	Env     []string // the process environment ("K=V"); the script exports the container's own
	// Dirs are the directories besides WorkDir the container writes: its application's
	// local dirs and its log dirs (an isolating executor makes only these writable).
	Dirs []string
	// MemoryMB is the container's memory allocation (an isolating executor enforces it).
	MemoryMB int64
	// Limits are what the container's cgroup enforces, when the executor puts it in one.
	Limits cgroups.Limits
	// OutputFile receives what the script itself writes, stdout and stderr (the command
	// redirects its own output into the log dir); the NM reads its tail (Tail) for
	// diagnostics. A file, not a pipe to the NodeManager: a container must outlive a
	// NodeManager that dies (work-preserving restart) without a SIGPIPE. Empty: discarded.
	OutputFile string
	// Owner names the NodeManager that runs the container; it is put in the processes'
	// environment (OwnerEnv) so that a restarted NodeManager finds every container it
	// left running (Leaders), including those it has no record of.
	Owner string
	// User, when set, is the local user the container's processes run as (the
	// LinuxContainerExecutor's submitting user); nil runs them as the NodeManager's user.
	User *User
}

// User is a local account a container runs as.
type User struct {
	Name     string
	UID, GID uint32
	Groups   []uint32 // supplementary groups
	Home     string
}

// Process is a started container process tree.
type Process interface {
	// Pid is the process (and group) id of the launch shell.
	Pid() int
	// Wait blocks until the launch shell exits and returns its exit code (128+signal when
	// a signal ended it, as a shell reports).
	Wait() int
	// Stop ends the whole tree: SIGTERM, then SIGKILL after grace; it returns when the
	// launch shell has exited and no process of the container is left.
	Stop(grace time.Duration)
	// Usage is the memory the container's processes use now.
	Usage() Usage
}

// MemoryEnforcer is implemented by processes whose memory limit the executor enforces
// itself (a UML guest's mem=): the NodeManager's process-tree check skips them.
type MemoryEnforcer interface {
	MemoryEnforced() bool
}

// Verdicter is implemented by processes whose executor can say more than an exit code
// about how the container ended (out of memory in a guest, a guest that left no exit
// code): ok is true when exit and diagnostics should be reported instead. It is asked
// after Wait and Stop.
type Verdicter interface {
	Verdict() (exit int32, diagnostics string, ok bool)
}

// Signaler is implemented by processes the executor can signal without stopping them
// (YARN's signalToContainer: a thread dump with SIGQUIT, SIGTERM, SIGKILL), as the Java
// NM signals the container's process group.
type Signaler interface {
	Signal(sig syscall.Signal) error
}

// Executor starts container processes.
type Executor interface {
	Launch(ctx context.Context, spec Spec) (Process, error)
	// Reattach takes back a container an earlier NodeManager process launched with the
	// same spec (a work-preserving NodeManager restart): pid is its launch process as
	// recorded then (0: unknown, the container's session leader is searched for). The
	// Process returned tracks it without restarting it; if it is no longer running, its
	// Wait returns at once with the exit code the container left (exitcode.Lost when it
	// left none).
	Reattach(spec Spec, pid int) (Process, error)
}
