package rmstate

import (
	"sync"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
)

// nodeOrders are, per node, what its NodeManager's next heartbeat answer tells it:
// containers to kill and to forget, finished applications, signals. They have a lock
// of their own, held only to append or to take a node's queues: every heartbeat takes
// them, and at 50,000 containers a second, taking them under the container table's lock
// (held meanwhile for other heartbeats' completions and the allocate answers) made that
// lock the heartbeats' longest wait. Writers may hold the table's lock; never the
// reverse.
type nodeOrders struct {
	mu      sync.Mutex
	cleanup map[string][]*yarnpb.ContainerIdProto
	removed map[string][]records.ContainerID
	apps    map[string][]*yarnpb.ApplicationIdProto
	signals map[string][]*yarnpb.SignalContainerRequestProto
}

func newNodeOrders() nodeOrders {
	return nodeOrders{cleanup: map[string][]*yarnpb.ContainerIdProto{}, removed: map[string][]records.ContainerID{},
		apps: map[string][]*yarnpb.ApplicationIdProto{}, signals: map[string][]*yarnpb.SignalContainerRequestProto{}}
}

func (o *nodeOrders) kill(node string, ids ...*yarnpb.ContainerIdProto) {
	o.mu.Lock()
	o.cleanup[node] = append(o.cleanup[node], ids...)
	o.mu.Unlock()
}

func (o *nodeOrders) forget(node string, ids ...records.ContainerID) {
	o.mu.Lock()
	o.removed[node] = append(o.removed[node], ids...)
	o.mu.Unlock()
}

func (o *nodeOrders) appEnded(node string, app *yarnpb.ApplicationIdProto) {
	o.mu.Lock()
	o.apps[node] = append(o.apps[node], app)
	o.mu.Unlock()
}

func (o *nodeOrders) signal(node string, s *yarnpb.SignalContainerRequestProto) {
	o.mu.Lock()
	o.signals[node] = append(o.signals[node], s)
	o.mu.Unlock()
}

// NodeDirectives is what a NodeManager is told in a heartbeat's answer: containers to
// kill, signal and forget, and applications that ended.
type NodeDirectives struct {
	Cleanup, Removed []*yarnpb.ContainerIdProto
	Apps             []*yarnpb.ApplicationIdProto
	Signals          []*yarnpb.SignalContainerRequestProto
}

// Directives returns, once, what node must kill, signal and may forget, and which
// applications ended. It does not take the container table's lock.
func (t *Containers) Directives(node string) NodeDirectives { return t.orders.take(node) }

// take returns node's queues and empties them.
func (o *nodeOrders) take(node string) (d NodeDirectives) {
	o.mu.Lock()
	d.Signals, d.Cleanup, d.Apps = o.signals[node], o.cleanup[node], o.apps[node]
	ids := o.removed[node]
	delete(o.signals, node)
	delete(o.cleanup, node)
	delete(o.removed, node)
	delete(o.apps, node)
	o.mu.Unlock()
	// The messages are made after the lock is let go (ids is this call's alone now).
	if len(ids) > 0 {
		d.Removed = make([]*yarnpb.ContainerIdProto, len(ids))
		for i, id := range ids {
			d.Removed[i] = id.Proto()
		}
	}
	return d
}
