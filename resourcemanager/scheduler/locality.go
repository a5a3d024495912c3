package scheduler

import (
	"sort"
	"strings"
)

// Delay scheduling for locality (scheduling.md §5, YARN's node-locality-delay): an ask
// that names hosts or racks waits a bounded number of scheduling opportunities for a
// node-local placement, then as many again for a rack-local one, then takes any node.
// With relax_locality=false it only ever goes to the named nodes.

// hostOf is the host part of a node id "host:port".
func hostOf(id string) string {
	if i := strings.LastIndexByte(id, ':'); i > 0 {
		return id[:i]
	}
	return id
}

// localAsks returns the hosts and racks a's asks name with containers outstanding at the
// priority and capability of ask.
func localAsks(a *app, ask *Ask) (hosts, racks []string) {
	if a.localAsks == 0 {
		return nil, nil
	}
	for k, x := range a.asks {
		if k.priority != ask.Priority || k.cap != ask.Capability || k.request != ask.RequestID || k.scheduling || k.name == "*" || x.Count <= 0 {
			continue
		}
		if strings.HasPrefix(k.name, "/") {
			racks = append(racks, k.name)
		} else {
			hosts = append(hosts, k.name)
		}
	}
	// Map order is random; placements must not be.
	sort.Strings(hosts)
	sort.Strings(racks)
	return hosts, racks
}

// chooseLocal picks a node for a's ask honouring its locality. wait reports that the
// ask skips this opportunity to wait for a better-placed node.
func (e *Engine) chooseLocal(p *partition, a *app, ask *Ask) (n *node, wait bool) {
	if ask.Placement != nil {
		return e.chooseNode(p, a, ask), false // a SchedulingRequest names no hosts or racks
	}
	hosts, racks := localAsks(a, ask)
	if len(hosts) == 0 && len(racks) == 0 {
		return e.chooseNode(p, a, ask), false
	}
	fitsOn := func(cands []*node) *node {
		for _, c := range cands {
			if c.spec.Partition == p.name && c.schedulable() && ask.Capability.Fits(c.room()) && !a.blacklist[c.spec.ID] {
				return c
			}
		}
		return nil
	}
	for _, h := range hosts {
		if n := fitsOn(e.hosts[h]); n != nil {
			return n, false
		}
	}
	anyAsk := a.asks[askKey{priority: ask.Priority, name: "*", cap: ask.Capability, request: ask.RequestID}]
	if anyAsk != nil && !anyAsk.RelaxLocality {
		// Strict locality: only the named hosts (or racks) will do.
		for _, r := range racks {
			if n := fitsOn(e.racks[r]); n != nil {
				return n, false
			}
		}
		return nil, true
	}
	// As the Capacity Scheduler (getActualNodeLocalityDelay): never more opportunities
	// than the partition has nodes, or a small cluster would wait 40 heartbeats for each
	// container whose hosts are not among its nodes.
	delay := min(e.cfg.NodeLocalityDelay, len(p.nodes))
	if len(hosts) > 0 && a.missed[ask.Priority] < delay && e.anyIn(p, e.hosts, hosts) {
		a.missed[ask.Priority]++
		return nil, true
	}
	for _, r := range racks {
		if n := fitsOn(e.racks[r]); n != nil {
			return n, false
		}
	}
	// Then racks: as many opportunities again, or (3.x) node-locality-delay plus
	// rack-locality-additional-delay, never more than the partition's nodes.
	rackDelay := 2 * delay
	if extra := e.cfg.RackLocalityAdditionalDelay; extra >= 0 {
		rackDelay = min(e.cfg.NodeLocalityDelay+extra, len(p.nodes))
	}
	if len(racks) > 0 && a.missed[ask.Priority] < rackDelay && e.anyIn(p, e.racks, racks) {
		a.missed[ask.Priority]++
		return nil, true
	}
	return e.chooseNode(p, a, ask), false
}

// Locality is how near its asks a container was placed, as the Java schedulers'
// NodeType counts it in QueueMetrics: on a host an ask named, in a rack one named, or
// anywhere (every container of an application that names none, AMs among them).
type Locality uint8

const (
	OffSwitch Locality = iota
	RackLocal
	NodeLocal
)

// consumeLocal decrements the node-local and rack-local asks a placement on n satisfies,
// as YARN does, resets the ask's missed opportunities, and says how local the placement
// was.
func (e *Engine) consumeLocal(a *app, ask *Ask, n *node) Locality {
	if len(a.missed) > 0 {
		delete(a.missed, ask.Priority)
	}
	if a.localAsks == 0 || ask.Placement != nil {
		return OffSwitch
	}
	loc := OffSwitch
	for i, name := range [2]string{hostOf(n.spec.ID), n.spec.Rack} {
		k := askKey{priority: ask.Priority, name: name, cap: ask.Capability, request: ask.RequestID}
		if x, ok := a.asks[k]; ok {
			if i == 0 {
				loc = NodeLocal
			} else if loc == OffSwitch {
				loc = RackLocal
			}
			if x.Count--; x.Count <= 0 {
				delete(a.asks, k)
				a.localAsks--
			}
		}
	}
	return loc
}

// anyIn reports whether partition p has a node under any of names (hosts or racks). An
// ask naming only hosts the cluster does not have (a MapReduce split on "localhost" of a
// file:// path, a node gone for good) can never be placed there: waiting for them only
// hands its turns to other queues, so it goes on to its racks, or anywhere, at once.
func (e *Engine) anyIn(p *partition, index map[string][]*node, names []string) bool {
	for _, name := range names {
		for _, n := range index[name] {
			if n.spec.Partition == p.name {
				return true
			}
		}
	}
	return false
}
