package nodemanager

import (
	"fmt"

	"github.com/bobbin-yarn/bobbin/container"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

// checkMemory measures running containers and kills those over their limits, as the Java
// ContainersMonitor does: resident memory above the allocation (pmem check), virtual
// memory above vmem-pmem-ratio times it (vmem check). It runs every container-monitor
// interval when either check is on.
func (nm *NodeManager) checkMemory() {
	s := nm.settings
	if s.Cgroups.Elastic && !s.Cgroups.MemoryEnforced {
		// As Java's since YARN-10863: the containers may burst past their allocation;
		// only their common limit is enforced, by the elastic control.
		return
	}
	for _, v := range nm.table.Views() {
		if !v.Runs() || enforced(v.Proc) {
			continue
		}
		c := v.Container
		limit := c.Resource().GetMemory() << 20
		if limit <= 0 {
			continue
		}
		u := v.Proc.Usage()
		vlimit := int64(float64(limit) * s.VmemRatio)
		var exit int32
		var diag string
		switch {
		case s.PmemCheck && u.RSS > limit:
			exit = exitcode.KilledExceededPmem
			diag = fmt.Sprintf("Container [pid=%d,containerID=%s] is running beyond physical memory limits. Current usage: %s of %s physical memory used; %s of %s virtual memory used. Killing container.",
				v.Proc.Pid(), c.ID, human(u.RSS), human(limit), human(u.VSize), human(vlimit))
		case s.VmemCheck && u.VSize > vlimit:
			exit = exitcode.KilledExceededVmem
			diag = fmt.Sprintf("Container [pid=%d,containerID=%s] is running beyond virtual memory limits. Current usage: %s of %s physical memory used; %s of %s virtual memory used. Killing container.",
				v.Proc.Pid(), c.ID, human(u.RSS), human(limit), human(u.VSize), human(vlimit))
		default:
			continue
		}
		nm.log.WithFields(map[string]any{"container": c.ID.String(), "rss": u.RSS, "vsize": u.VSize, "limit": limit}).Warn(diag)
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
