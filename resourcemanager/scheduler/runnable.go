package scheduler

// Running-application bounds (the Fair Scheduler's maxRunningApps, which Bobbin also reads
// as capacity-scheduler.xml's bobbin.max-running-apps keys, and the Capacity Scheduler's
// max-parallel-apps of Hadoop 3.3+): an application is accepted
// whatever the bounds, and starts — gets its first container — only while its queue, each
// of the queue's parents and its user run fewer applications than their bounds. Until
// then it waits, and the applications behind it are served. It counts as running from its
// first container until it leaves the engine.

// mayStart reports whether a may take its first container now; the caller holds e.mu.
func (e *Engine) mayStart(a *app) bool {
	if a.started {
		return true
	}
	for q := a.group.queue; q != nil; q = q.Parent {
		if q.MaxRunningApps >= 0 && e.startedIn[q.Path] >= q.MaxRunningApps {
			return false
		}
	}
	if e.userMaxRunning != nil {
		if n := e.userMaxRunning(a.spec.User); n >= 0 && e.startedBy[a.spec.User] >= n {
			return false
		}
	}
	return true
}

// unmanagedAMFits reports whether a's unmanaged AM may start in partition p: its share
// (the minimum allocation) within the AM limits; the caller holds e.mu.
func (e *Engine) unmanagedAMFits(a *app, p *partition, types int, cpuOnly bool) bool {
	return a.started || !a.spec.UnmanagedAM || a.group.amLimitAllows(a, e.cfg.MinimumAllocation, p, types, cpuOnly)
}

// markStarted counts a as running in its queue, the queue's parents and for its user,
// and books an unmanaged AM's share of the AM limits.
func (e *Engine) markStarted(a *app) {
	if a.started {
		return
	}
	a.started = true
	if a.spec.UnmanagedAM {
		a.group.addAMUse(a.spec.User, e.cfg.MinimumAllocation, 1)
	}
	for q := a.group.queue; q != nil; q = q.Parent {
		e.startedIn[q.Path]++
	}
	e.startedBy[a.spec.User]++
}

// markGone takes a leaving application out of the running counts.
func (e *Engine) markGone(a *app) {
	if !a.started {
		return
	}
	a.started = false
	if a.spec.UnmanagedAM {
		a.group.addAMUse(a.spec.User, e.cfg.MinimumAllocation, -1)
	}
	for q := a.group.queue; q != nil; q = q.Parent {
		if e.startedIn[q.Path]--; e.startedIn[q.Path] <= 0 {
			delete(e.startedIn, q.Path)
		}
	}
	if e.startedBy[a.spec.User]--; e.startedBy[a.spec.User] <= 0 {
		delete(e.startedBy, a.spec.User)
	}
}
