package nodemanager

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/bobbin-yarn/bobbin/container/cgroups"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/nodemanager/containers"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

// elasticMemory is Java's elastic memory control (CGroupElasticMemoryController with its
// DefaultOOMHandler): the containers may each burst past their allocation as long as
// together they stay under the node's memory. The subtree gets that one limit with the
// kernel's OOM killer off; when the containers reach it the kernel holds every one that
// asks for memory and signals the subtree's OOM eventfd; the NodeManager then kills,
// one container at a time, until the hold ends.
//
// Its goroutine is the NodeManager's (spawn): it ends when the NodeManager stops, the
// subtree goes, or an OOM hold outlasts the timeout. Whichever way, it gives the
// subtree back to the kernel: limit lifted, OOM killer on (as Java's
// resetCGroupParameters).
type elasticMemory struct {
	nm      *NodeManager
	limit   int64 // bytes, the containers together
	virtual bool  // the limit counts swap too: the vmem check without the pmem check
	timeout time.Duration
	log     *logrus.Entry
}

// startElastic sets the subtree up and starts listening. Called once, at Start, after
// recovery (the recovered containers are the subtree's children already).
func (nm *NodeManager) startElastic() error {
	s := nm.settings
	e := &elasticMemory{nm: nm, limit: s.MemoryMB << 20, virtual: !s.PmemCheck && s.VmemCheck, timeout: s.Cgroups.ElasticTimeout,
		log: nm.log.WithField("component", "elastic-memory")}
	if e.virtual {
		e.limit = int64(float64(e.limit) * s.VmemRatio)
	}
	fail := func(err error) error {
		e.reset()
		return fmt.Errorf("nodemanager: %s: %w", keyElastic, err)
	}
	t := nm.cgroups
	// The killer off before the limit, so that reaching it is never a kernel kill.
	if err := t.SetOOMKiller(false); err != nil {
		return fail(err)
	}
	if err := t.SetMemoryLimit(e.limit); err != nil {
		return fail(err)
	}
	if e.virtual {
		if err := t.SetMemorySwapLimit(e.limit); err != nil {
			return fail(err)
		}
	}
	l, err := t.ListenOOM()
	if err != nil {
		return fail(err)
	}
	nm.elastic = e
	e.log.WithFields(logrus.Fields{"limit_mb": e.limit >> 20, "virtual": e.virtual, "timeout": e.timeout}).Info("elastic memory control: the containers share one limit; the NodeManager chooses whom to kill")
	nm.spawn(func() { e.run(l) })
	return nil
}

// run resolves each OOM hold until the NodeManager stops or the control gives up.
func (e *elasticMemory) run(l *cgroups.OOMListener) {
	defer e.reset()
	defer l.Close()
	for {
		select {
		case <-e.nm.ctx.Done():
			return
		case _, ok := <-l.C:
			if !ok {
				e.log.Warn("the containers' cgroup went away: elastic memory control stops")
				return
			}
			if !e.resolve() {
				return
			}
		}
	}
}

// reset gives the subtree back to the kernel: no common limit (a borrowed server's cap
// comes back at its next measurement), the OOM killer on.
func (e *elasticMemory) reset() {
	t := e.nm.cgroups
	if e.virtual {
		if err := t.SetMemorySwapLimit(0); err != nil {
			e.log.WithError(err).Warn("cannot lift the containers' swap limit")
		}
	}
	if err := t.SetMemoryLimit(0); err != nil {
		e.log.WithError(err).Warn("cannot lift the containers' memory limit")
	}
	if err := t.SetOOMKiller(true); err != nil {
		e.log.WithError(err).Warn("cannot turn the kernel's OOM killer back on for the containers")
	}
}

// ceiling is the most a borrowed server's cap may give the containers together.
func (e *elasticMemory) ceiling() int64 {
	if e == nil {
		return 0
	}
	return e.limit
}

// resolve kills containers until the kernel no longer holds them; false when it could
// not within the timeout, or found nothing to kill (Java's "I am giving up").
func (e *elasticMemory) resolve() bool {
	start := time.Now()
	killed := 0
	for {
		under, err := e.nm.cgroups.UnderOOM()
		if err != nil {
			e.log.WithError(err).Warn("cannot read whether the containers are held for memory: elastic memory control stops")
			return false
		}
		if !under {
			if killed > 0 {
				e.log.WithFields(logrus.Fields{"killed": killed, "took": time.Since(start).Round(time.Millisecond)}).Info("OOM hold resolved")
			}
			return true
		}
		if time.Since(start) > e.timeout {
			e.log.WithFields(logrus.Fields{"killed": killed, "timeout": e.timeout}).Error("OOM hold not resolved within yarn.nodemanager.elastic-memory-control.timeout-sec: elastic memory control stops, the kernel's OOM killer is back")
			return false
		}
		if !e.killOne(time.Until(start.Add(e.timeout))) {
			e.log.Error("the containers' cgroup is held for memory but no running container is left to kill: elastic memory control stops, the kernel's OOM killer is back")
			return false
		}
		killed++
	}
}

// oomCandidate is a running container the handler may kill.
type oomCandidate struct {
	v             containers.View
	group         *cgroups.Group
	usage         int64
	overLimit     bool
	opportunistic bool
}

// candidates are the running containers in DefaultOOMHandler's order: OPPORTUNISTIC
// before GUARANTEED, then those over their allocation, then the latest launched first
// (the one that has the least work to lose).
func (e *elasticMemory) candidates() []oomCandidate {
	var out []oomCandidate
	for _, v := range e.nm.table.Views() {
		if !v.Runs() {
			continue
		}
		g, ok := e.nm.cgroups.Adopt(v.Container.ID.String())
		if !ok {
			continue
		}
		st, err := g.Stats()
		if err != nil {
			continue
		}
		c := v.Container
		// What the common limit counts: memory, or memory and swap with the vmem check
		// (DefaultOOMHandler reads memory.memsw.usage_in_bytes then), against the
		// container's memory request either way, as Java's.
		usage := int64(st.MemoryUsage)
		if e.virtual && st.MemorySwapUsage > 0 {
			usage = int64(st.MemorySwapUsage)
		}
		out = append(out, oomCandidate{v: v, group: g, usage: usage,
			overLimit:     usage > c.Resource().GetMemory()<<20,
			opportunistic: c.Ident.GetExecutionType() == yarnpb.ExecutionTypeProto_OPPORTUNISTIC})
	}
	slices.SortStableFunc(out, oomOrder)
	return out
}

// oomOrder is DefaultOOMHandler's ContainerCandidate.compareTo.
func oomOrder(a, b oomCandidate) int {
	if a.opportunistic != b.opportunistic {
		return boolFirst(a.opportunistic)
	}
	if a.overLimit != b.overLimit {
		return boolFirst(a.overLimit)
	}
	return cmp.Compare(b.v.Started.UnixNano(), a.v.Started.UnixNano())
}

func boolFirst(a bool) int {
	if a {
		return -1
	}
	return 1
}

// killOne kills the first candidate whose kill was not already asked, at once and whole
// (SIGKILL to every process of its cgroup: held processes cannot run a SIGTERM handler),
// and records why. The one over its allocation failed of its memory (KILLED_EXCEEDED_PMEM);
// one within it lost to the others' bursts, not its own fault (PREEMPTED).
func (e *elasticMemory) killOne(within time.Duration) bool {
	for _, cand := range e.candidates() {
		c := cand.v.Container
		limit := c.Resource().GetMemory() << 20
		var exit int32 = exitcode.Preempted
		diag := fmt.Sprintf("Container [pid=%d,containerID=%s] was killed by the elastic memory control: the containers together reached the node's limit of %s, and this one, using %s of its %s, was chosen (OPPORTUNISTIC first, then those over their allocation, then the latest launched).",
			cand.v.Proc.Pid(), c.ID, human(e.limit), human(cand.usage), human(limit))
		if cand.overLimit {
			exit = exitcode.KilledExceededPmem
			diag = fmt.Sprintf("Container [pid=%d,containerID=%s] is running %dB beyond the 'PHYSICAL' memory limit. Current usage: %s of %s physical memory used. The containers together reached the node's limit of %s: killed by the elastic memory control.",
				cand.v.Proc.Pid(), c.ID, cand.usage-limit, human(cand.usage), human(limit), human(e.limit))
		}
		if _, done, _ := e.nm.table.AskKill(c, exit, diag); done {
			continue // ended meanwhile (a kill asked before keeps its own status)
		}
		e.log.WithFields(logrus.Fields{"container": c.ID.String(), "usage": cand.usage, "allocation": limit, "exit_status": exit}).Warn("container killed by the elastic memory control")
		if err := cand.group.Kill(max(within, time.Second)); err != nil {
			e.log.WithError(err).WithField("container", c.ID.String()).Warn("the container's processes did not all end")
		}
		return true
	}
	return false
}
