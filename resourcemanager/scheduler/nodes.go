package scheduler

import (
	"fmt"
	"sort"
)

// AddNode adds a node.
func (e *Engine) AddNode(spec NodeSpec) error {
	e.lock()
	defer e.mu.Unlock()
	if _, ok := e.nodes[spec.ID]; ok {
		return fmt.Errorf("node %s: %w", spec.ID, ErrDuplicate)
	}
	if spec.Capacity.AnyNegative() {
		return fmt.Errorf("node %s: negative capacity %s", spec.ID, e.cfg.Types.Format(spec.Capacity))
	}
	if spec.Rack == "" {
		spec.Rack = "/default-rack"
	}
	n := &node{spec: spec, containers: containerSet{kind: onNode}, order: e.nextNode, memoryOnly: e.cfg.FitByMemory && !spec.Measured}
	e.nextNode++
	e.nodes[spec.ID] = n
	e.attach(n)
	return nil
}

// UpdateNode changes a node's capacity, label, static flag or schedulability; its
// containers keep running.
func (e *Engine) UpdateNode(spec NodeSpec) error {
	e.lock()
	defer e.mu.Unlock()
	n, ok := e.nodes[spec.ID]
	if !ok {
		return fmt.Errorf("node %s: %w", spec.ID, ErrUnknownNode)
	}
	if spec.Rack == "" {
		spec.Rack = n.spec.Rack
	}
	from, fromRack := n.spec.Partition, n.spec.Rack
	e.detach(n)
	n.spec = spec
	if spec.Rack != fromRack {
		// Its containers' allocation tags now count in its new rack.
		for _, c := range n.containers.items {
			e.tagPlaced(c, -1)
			c.rack = spec.Rack
			e.tagPlaced(c, +1)
		}
	}
	n.memoryOnly = e.cfg.FitByMemory && !spec.Measured
	e.attach(n)
	if from != spec.Partition {
		// A relabelled node's running containers now count in its new partition, where
		// release will take them back from.
		old, cur := e.partitions[from], e.partitions[spec.Partition]
		old.allocated = old.allocated.Sub(n.allocated)
		cur.allocated = cur.allocated.Add(n.allocated)
		old.weightsDirty, cur.weightsDirty = true, true
		for _, c := range n.containers.items {
			g := c.app.group
			g.used[from] = g.used[from].Sub(c.resource)
			g.used[spec.Partition] = g.used[spec.Partition].Add(c.resource)
		}
	}
	return nil
}

// RemoveNode removes a node; its containers are returned as lost (the caller completes them).
func (e *Engine) RemoveNode(id string) ([]ContainerID, error) {
	e.lock()
	defer e.mu.Unlock()
	n, ok := e.nodes[id]
	if !ok {
		return nil, fmt.Errorf("node %s: %w", id, ErrUnknownNode)
	}
	var lost []ContainerID
	for _, c := range n.containers.items {
		lost = append(lost, c.id)
	}
	sort.Slice(lost, func(i, j int) bool { return lost[i] < lost[j] })
	for _, cid := range lost {
		if c, ok := e.containers.get(cid); ok {
			e.release(c)
		}
	}
	e.detach(n)
	delete(e.nodes, id)
	return lost, nil
}

func (e *Engine) detach(n *node) {
	e.hosts[hostOf(n.spec.ID)] = removeNode(e.hosts[hostOf(n.spec.ID)], n)
	e.racks[n.spec.Rack] = removeNode(e.racks[n.spec.Rack], n)
	p := e.partitions[n.spec.Partition]
	if n.schedulable() {
		p.place.remove(n)
		if n.spec.Static {
			p.static--
		}
	}
	p.total = p.total.Sub(n.spec.Capacity)
	addSum(&e.sums.total, n.spec.Capacity, -1)
	delete(p.nodes, n.spec.ID)
}

func removeNode(ns []*node, n *node) []*node {
	for i, x := range ns {
		if x == n {
			return append(ns[:i], ns[i+1:]...)
		}
	}
	return ns
}

func (e *Engine) attach(n *node) {
	e.hosts[hostOf(n.spec.ID)] = append(e.hosts[hostOf(n.spec.ID)], n)
	e.racks[n.spec.Rack] = append(e.racks[n.spec.Rack], n)
	p := e.partition(n.spec.Partition)
	p.nodes[n.spec.ID] = n
	p.total = p.total.Add(n.spec.Capacity)
	addSum(&e.sums.total, n.spec.Capacity, 1)
	if n.schedulable() {
		p.place.add(n)
		if n.spec.Static {
			p.static++
		}
	}
}

// utilization is U: the mean over resource types of the partition's allocated/total.
func (e *Engine) utilization(p *partition) float64 {
	types := e.cfg.Types.Len()
	var sum float64
	n := 0
	for i := 0; i < types; i++ {
		if p.total[i] > 0 {
			sum += float64(p.allocated[i]) / float64(p.total[i])
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// partitionWeights returns the balance weights, recomputed after allocations and changes
// of the pending set (scheduling.md §3).
func (e *Engine) partitionWeights(p *partition) []float64 {
	if !p.weightsDirty && p.weights != nil {
		return p.weights
	}
	types := e.cfg.Types.Len()
	w0 := e.cfg.Balance.InitialWeights
	var equal [MaxResourceTypes]float64
	if len(w0) != types {
		w0 = equal[:types]
		for i := range w0 {
			w0[i] = 1 / float64(types)
		}
	}
	// The largest free amount of each type on any schedulable node, from the index.
	maxFree := p.balance.maxFree()
	var blocked, usage [MaxResourceTypes]float64
	for shape, count := range p.pendingShapes {
		for i := 0; i < types; i++ {
			if shape[i] > maxFree[i] {
				blocked[i] += float64(count)
			}
		}
	}
	for i := 0; i < types; i++ {
		if p.total[i] > 0 {
			usage[i] = float64(p.allocated[i]) / float64(p.total[i])
		}
	}
	if len(p.weights) != types {
		p.weights = make([]float64, types)
	}
	copy(p.w0[:], w0)
	balanceWeightsInto(p.weights, p.w1[:types], p.w2[:types], w0, blocked[:types], usage[:types])
	p.weightsDirty = false
	return p.weights
}
