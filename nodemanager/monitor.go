package nodemanager

import (
	"fmt"

	"github.com/bobbin-yarn/bobbin/container"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
)

// checkMemory measures running containers and kills those over their limits, as the Java
// ContainersMonitor does: resident memory above the allocation (pmem check), virtual
// memory above vmem-pmem-ratio times it (vmem check). It runs every container-monitor
// interval when either check is on.
func (nm *NodeManager) checkMemory() {
	s := nm.settings
	nm.mu.Lock()
	var running []*nmContainer
	for _, c := range nm.containers {
		if c.state == yarnpb.ContainerStateProto_C_RUNNING && c.proc != nil && c.killExit == 0 && !enforced(c.proc) {
			running = append(running, c)
		}
	}
	nm.mu.Unlock()
	for _, c := range running {
		limit := c.ident.GetResource().GetMemory() << 20
		if limit <= 0 {
			continue
		}
		u := c.proc.Usage()
		vlimit := int64(float64(limit) * s.VmemRatio)
		var exit int32
		var diag string
		switch {
		case s.PmemCheck && u.RSS > limit:
			exit = exitcode.KilledExceededPmem
			diag = fmt.Sprintf("Container [pid=%d,containerID=%s] is running beyond physical memory limits. Current usage: %s of %s physical memory used; %s of %s virtual memory used. Killing container.",
				c.proc.Pid(), c.id, human(u.RSS), human(limit), human(u.VSize), human(vlimit))
		case s.VmemCheck && u.VSize > vlimit:
			exit = exitcode.KilledExceededVmem
			diag = fmt.Sprintf("Container [pid=%d,containerID=%s] is running beyond virtual memory limits. Current usage: %s of %s physical memory used; %s of %s virtual memory used. Killing container.",
				c.proc.Pid(), c.id, human(u.RSS), human(limit), human(u.VSize), human(vlimit))
		default:
			continue
		}
		nm.log.WithFields(map[string]any{"container": c.id.String(), "rss": u.RSS, "vsize": u.VSize, "limit": limit}).Warn(diag)
		nm.spawn(func() { nm.kill(c, exit, diag) })
	}
}

// human formats bytes as Hadoop's TraditionalBinaryPrefix does in these messages.
func human(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%d B", b)
}

// enforced says the executor caps the container's memory itself (a UML guest's mem=).
func enforced(p container.Process) bool {
	e, ok := p.(container.MemoryEnforcer)
	return ok && e.MemoryEnforced()
}
