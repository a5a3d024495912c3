// Package exitcode holds the container exit statuses YARN reports for containers that
// did not end by themselves (Java's ContainerExitStatus), and the executor codes the
// NodeManager uses (ContainerExecutor.ExitCode). AMs act on them: MapReduce reruns a
// PREEMPTED task without counting a failure, and the RM does not count PREEMPTED,
// ABORTED or DISKS_FAILED AM containers against an application's attempts.
package exitcode

// ContainerExitStatus values.
const (
	Success = 0
	// Invalid: no exit status (an AM container that timed out, a container never run).
	Invalid = -1000
	// Aborted: released by the AM, lost with its node, or expired unused.
	Aborted = -100
	// DisksFailed: the node's disks went bad.
	DisksFailed = -101
	// Preempted: killed by the scheduler's preemption (or a borrowed node's eviction).
	Preempted = -102
	// KilledExceededVmem and KilledExceededPmem: over the container's memory.
	KilledExceededVmem = -103
	KilledExceededPmem = -104
	// KilledByAppMaster: stopped by its AM (stopContainers).
	KilledByAppMaster = -105
	// KilledByResourceManager: the RM told the node to clean it up.
	KilledByResourceManager = -106
	// KilledAfterAppCompletion: still running when its application finished.
	KilledAfterAppCompletion = -107
)

// Lost is ContainerExecutor.ExitCode.LOST: the executor cannot tell how the container
// ended (a process or guest that never wrote its exit code).
const Lost = 154
