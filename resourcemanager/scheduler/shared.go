package scheduler

// Non-exclusive partitions. A node label added with exclusive=false lends its idle
// resources to work that asks for the default partition: the Capacity Scheduler's
// IGNORE_PARTITION_EXCLUSIVITY pass (CapacityScheduler.allocateContainerOnSingleNode),
// which it runs on a labelled node only when the node's own requests placed nothing.
// As in Java:
//   - only requests for the default partition take such a node, never an AM container
//     (RegularContainerAllocator skips an application waiting for its AM);
//   - any queue may take it, whatever its accessible-node-labels, up to the whole
//     partition (AbstractCSQueue.canAssignToThisQueue counts the partition's
//     maximum as 100% in that mode);
//   - what it takes counts as the queue's use of that partition, so the label's own
//     queues rank first there and preemption (when enabled) takes it back for them.
// Java delays the lending until an application has missed as many scheduling
// opportunities as the cluster has nodes; the engine lends only in a pass where the
// default partition placed nothing, which is the same preference without the counting.
// Gangs stay in the default partition.

// SetNonExclusive names the partitions that lend idle resources to default-partition
// work; the others become exclusive.
func (e *Engine) SetNonExclusive(labels []string) {
	e.lock()
	defer e.mu.Unlock()
	e.nonExclusive = map[string]bool{}
	for _, l := range labels {
		if l != "" {
			e.nonExclusive[l] = true
		}
	}
	for name, p := range e.partitions {
		p.lends = e.nonExclusive[name]
	}
}

// sharedRound places one container of default-partition work on a node of non-exclusive
// partition p, for the lowest-valued group in p that has such work; nil when none fits.
func (e *Engine) sharedRound(p *partition, ranked []rankedGroup) []Allocation {
	types, cpuOnly := e.usageMeasure()
	for _, g := range e.leaves {
		if len(g.waiting[""]) > 0 {
			ranked = append(ranked, newRankedGroup(g, g.value(p.name, p.total, types, cpuOnly)))
		}
	}
	for i := range ranked {
		selectMin(ranked, i)
		g := ranked[i].g
		// The group's first application with such work is its candidate (one node
		// search a group, however many wait: a full partition costs little per pass).
		for _, a := range g.waiting[""] {
			ask := a.nextAskIn("")
			if ask == nil || ask.AM || ask.Gang || !e.mayStart(a) {
				continue
			}
			if n := e.chooseNode(p, a, ask); n != nil {
				e.placed = append(e.placed[:0], e.placeOn(p, a, ask, n))
				return e.placed
			}
			break
		}
	}
	return nil
}
