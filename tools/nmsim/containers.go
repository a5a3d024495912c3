// The simulated NodeManager's containers: what it reports, runs, kills and forgets.

package nmsim

import (
	"context"
	"time"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

type simContainer struct {
	id     records.ContainerID
	ident  *yarnpb.ContainerTokenIdentifierProto // nil for containers added with Run
	state  yarnpb.ContainerStateProto
	exit   int32
	diag   string
	cancel context.CancelFunc
	// endAt, when set, is when a container started with Run completes by itself (ns
	// since the epoch).
	endAt int64
	// memoryMB and vcores are a container's size when it was started with Run (with
	// ident, the token's): a registration reports it, as a Java NM's does.
	memoryMB int64
	vcores   int32
	// reportedIn is the heartbeat (NodeManager.sent) that last carried its completed
	// status: once that heartbeat is answered (NodeManager.answered) the RM has had it.
	// Like the Java NM, the simulated NM reports a completed container until then and
	// keeps it until the RM says to forget it.
	reportedIn uint64
}

// reported: the RM has had c's completed status.
func (c *simContainer) reported(answered uint64) bool {
	return c.reportedIn != 0 && c.reportedIn <= answered
}

func (n *NodeManager) killAll(exit int32) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for i := range n.containers {
		n.killLocked(&n.containers[i], exit, "Container killed")
	}
}

// killLocked ends a running container with exit (its work's context is cancelled).
func (n *NodeManager) killLocked(c *simContainer, exit int32, diag string) {
	if c.state == yarnpb.ContainerStateProto_C_COMPLETE {
		return
	}
	c.state, c.exit, c.diag = yarnpb.ContainerStateProto_C_COMPLETE, exit, diag
	if c.cancel != nil {
		c.cancel()
	}
}

// Run starts a container without ContainerManagementProtocol — the benchmark's way, for
// containers granted to unmanaged AMs — and completes it with exit status 0 after d. No
// goroutine or timer runs per container: the container is seen to have ended when a
// heartbeat (or ContainerState) looks at it after d, as a real NM reports an exit on its
// next heartbeat, so tens of thousands of running containers cost only their records.
// memoryMB and vcores are its size, reported when the node registers again.
func (n *NodeManager) Run(id records.ContainerID, d time.Duration, memoryMB int64, vcores int32) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.containers = append(n.containers, simContainer{id: id, state: yarnpb.ContainerStateProto_C_RUNNING, exit: exitcode.Invalid,
		endAt: time.Now().Add(d).UnixNano(), memoryMB: memoryMB, vcores: vcores})
}

// endIfDue completes c if it was started with Run and its time is up (now: ns since
// the epoch).
func (c *simContainer) endIfDue(now int64) {
	if c.endAt != 0 && c.state != yarnpb.ContainerStateProto_C_COMPLETE && now >= c.endAt {
		c.state, c.exit = yarnpb.ContainerStateProto_C_COMPLETE, 0
	}
}

// findLocked is the container with id (nil: none); n.mu is held, and the pointer is
// good only while it is.
func (n *NodeManager) findLocked(id records.ContainerID) *simContainer {
	for i := range n.containers {
		if n.containers[i].id == id {
			return &n.containers[i]
		}
	}
	return nil
}

// dropLocked forgets the completed containers among ids, keeping the others' order;
// n.mu is held.
func (n *NodeManager) dropLocked(ids map[records.ContainerID]bool) {
	kept := 0
	for i := range n.containers {
		c := &n.containers[i]
		if c.state == yarnpb.ContainerStateProto_C_COMPLETE && ids[c.id] {
			continue
		}
		if kept != i {
			n.containers[kept] = *c
		}
		kept++
	}
	clear(n.containers[kept:])
	n.containers = n.containers[:kept]
}

// idSet is ids as a set.
func idSet(ids []*yarnpb.ContainerIdProto) map[records.ContainerID]bool {
	set := make(map[records.ContainerID]bool, len(ids))
	for _, id := range ids {
		set[records.ContainerIDFromProto(id)] = true
	}
	return set
}

// finish completes a container that ended by itself.
func (n *NodeManager) finish(id records.ContainerID, exit int32, diag string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if c := n.findLocked(id); c != nil && c.state != yarnpb.ContainerStateProto_C_COMPLETE {
		c.state, c.exit, c.diag = yarnpb.ContainerStateProto_C_COMPLETE, exit, diag
	}
}
