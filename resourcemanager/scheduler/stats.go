package scheduler

// Stats is a point-in-time summary of the engine for reports and metrics.
type Stats struct {
	Total     Resource            // capacity of every node
	Allocated Resource            // allocated on every node
	QueueUsed map[string]Resource // by leaf queue name, all partitions
	AppUsed   map[AppID]Resource  // by application id
	// Fragmented is the free room on schedulable nodes that fits no waiting ask of the
	// node's partition: capacity stranded by the shapes of what was placed.
	Fragmented Resource
	Pending    int // outstanding containers
	Running    int
}

// Stats summarises the engine's state.
func (e *Engine) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := Stats{QueueUsed: map[string]Resource{}, AppUsed: map[AppID]Resource{}}
	for _, p := range e.partitions {
		s.Total = s.Total.Add(p.total)
		s.Allocated = s.Allocated.Add(p.allocated)
		for _, n := range p.nodes {
			if !n.schedulable() {
				continue
			}
			free := n.free()
			if free.IsZero() {
				continue
			}
			fits := false
			for shape := range p.pendingShapes {
				if shape.Fits(free) {
					fits = true
					break
				}
			}
			if !fits && len(p.pendingShapes) > 0 {
				s.Fragmented = s.Fragmented.Add(free)
			}
		}
	}
	for _, g := range e.leaves {
		var u Resource
		for _, r := range g.used {
			u = u.Add(r)
		}
		s.QueueUsed[g.name] = u
	}
	for id, a := range e.apps {
		s.AppUsed[id] = a.used
		s.Pending += a.pending
		s.Running += a.running
	}
	return s
}

// Totals returns the capacity of every node and what is allocated on them: the cheap part
// of Stats, for every AM heartbeat's headroom.
func (e *Engine) Totals() (total, allocated Resource) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, p := range e.partitions {
		total = total.Add(p.total)
		allocated = allocated.Add(p.allocated)
	}
	return total, allocated
}

// Types returns the engine's resource types.
func (e *Engine) Types() Types { return e.cfg.Types }
