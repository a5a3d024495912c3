package nodemanager

import (
	"math"
	"slices"

	"github.com/sirupsen/logrus"

	"github.com/bobbin-yarn/bobbin/nodemanager/borrowed"
)

// On a borrowed server with cgroups, the kernel protects the owner between two
// measurements, not only the next heartbeat's smaller offer:
//   - the containers' subtree weighs a quarter of one of the owner's processes (CPU
//     shares 256, set at start), so the owner gets at least four fifths of any processor
//     it contends for at once (the least weight, 2, starves the containers so far that
//     a killed one cannot run to its end: measured, a container under 32 shares had not
//     died 20 s after SIGKILL beside one busy owner process);
//   - after every measurement the subtree is capped at what the owner leaves: a CFS
//     quota of the processors its last interval left free, and a memory limit of the
//     memory measured free for YARN (never under what the containers hold now: the
//     evictions, reported PREEMPTED, take memory back, not the kernel's OOM killer);
//   - in critical hours without eviction the containers are frozen until the window
//     ends.

// borrowedShares is the subtree's CPU weight on a borrowed server.
const borrowedShares = 256

// borrowedCaps is what the subtree was last capped at, to log changes, not every
// measurement. Only observeHost (the sampling goroutine) uses it.
type borrowedCaps struct {
	cpus     float64
	memoryMB int64
	frozen   map[string]bool // containers frozen for critical hours
}

// capToOwner fits the containers' subtree to the owner's last measured use.
func (nm *NodeManager) capToOwner(d borrowed.Decision, host borrowed.Host, running []borrowed.Container) {
	if nm.cgroups == nil || !nm.host.settings.Meter.Borrowed {
		return
	}
	caps := &nm.host.caps
	log := nm.log.WithField("component", "borrowed")
	cpus := float64(host.Cores) * (1 - d.Shares.ExternalCPU)
	if err := nm.cgroups.CapCPU(cpus); err != nil {
		log.WithError(err).Warn("cannot cap the containers' CPU")
	}
	var held int64
	for _, c := range running {
		held += c.RSS
	}
	mb := max(d.MeasuredMB, int64(math.Ceil(float64(held)*1.1))>>20+32)
	if ceil := nm.elastic.ceiling(); ceil > 0 {
		mb = min(mb, ceil>>20) // the elastic control's limit, whatever the owner leaves
	}
	if err := nm.cgroups.SetMemoryLimit(mb << 20); err != nil {
		log.WithError(err).Warn("cannot cap the containers' memory")
	}
	if math.Abs(cpus-caps.cpus) >= 0.1 || mb != caps.memoryMB {
		log.WithFields(logrus.Fields{"cpus": round2(cpus), "memory_mb": mb, "owner_cpu": round2(d.Shares.ExternalCPU)}).Info("containers capped to what the owner leaves")
		caps.cpus, caps.memoryMB = cpus, mb
	}
	s := nm.host.settings.Meter
	_, critical := borrowed.Critical(s.Critical, d.At, s.Location)
	freeze := critical && !s.CriticalEvict
	if caps.frozen == nil {
		caps.frozen = map[string]bool{}
	}
	for _, c := range running {
		if freeze == caps.frozen[c.ID] {
			continue
		}
		g, ok := nm.cgroups.Adopt(c.ID)
		if !ok {
			continue
		}
		if err := g.Freeze(freeze); err != nil {
			log.WithError(err).WithField("container", c.ID).Warn("cannot freeze or thaw a container")
			continue
		}
		caps.frozen[c.ID] = freeze
		if freeze {
			log.WithField("container", c.ID).Info("container frozen for the owner's critical hours")
		} else {
			log.WithField("container", c.ID).Info("container thawed: the critical hours ended")
		}
	}
	for id := range caps.frozen {
		if !slices.ContainsFunc(running, func(c borrowed.Container) bool { return c.ID == id }) {
			delete(caps.frozen, id)
		}
	}
}
