package resourcemanager

import (
	"sort"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

// nodeStatuses takes a NodeManager's container statuses: running ones stop their
// allocation-expiry clock; completed ones free their room and go to their attempts, and
// the NM is told to forget them on the next heartbeat.
func (rm *ResourceManager) nodeStatuses(node string, statuses []*yarnpb.ContainerStatusProto) {
	t := rm.containers
	type done struct {
		c     *rmContainer
		final *yarnpb.ContainerStatusProto
	}
	var (
		finished []done
		release  []scheduler.ContainerID
	)
	// The whole heartbeat is taken under one hold of the table's lock and one of the
	// engine's: thousands of heartbeats a second must not queue on them per container.
	t.mu.Lock()
	starting := t.starting[node]
	for _, st := range statuses {
		if st.GetState() != yarnpb.ContainerStateProto_C_COMPLETE && len(starting) == 0 {
			continue
		}
		id := records.ContainerIDFromProto(st.GetContainerId())
		if st.GetState() == yarnpb.ContainerStateProto_C_COMPLETE {
			c, final, fresh := t.completeLocked(id, st)
			if fresh {
				finished = append(finished, done{c, final})
				release = append(release, c.engineID)
			}
			// A completed container the AM still has to hear of is acknowledged after it
			// has (drainFor); any other, known or not, at once, so NMs do not keep
			// reporting containers of applications the RM has forgotten.
			switch {
			case c == nil:
				t.removed[node] = append(t.removed[node], id)
			case c.awaitingAck:
				// Only the attempt's acknowledgement list holds it now.
				delete(t.byID, id)
				delete(t.byEngine, c.engineID)
			default:
				t.forgetLocked(c)
			}
			starting = t.starting[node]
			continue
		}
		// Every heartbeat repeats every running container; only those not yet seen
		// running matter.
		c, ok := starting[id]
		if !ok {
			continue
		}
		delete(t.unstarted, c.id)
		if st.GetState() == yarnpb.ContainerStateProto_C_RUNNING {
			c.running = true
			t.startedLocked(c)
			starting = t.starting[node]
		}
	}
	t.mu.Unlock()
	if len(finished) == 0 {
		return
	}
	rm.engine.ReleaseAll(release)
	// One line per heartbeat: "container:exit_status" for each container it completed.
	var b strings.Builder
	for i, f := range finished {
		rm.metrics.containerCompleted(f.final.GetExitStatus())
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(f.c.id.String())
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(int(f.final.GetExitStatus())))
		if f.c.am {
			rm.amExited(f.c.id, f.final)
		}
	}
	rm.log.WithFields(map[string]any{"node": node, "containers": b.String()}).Info("containers completed")
	rm.kickScheduler()
}

// nodeDirectives returns, once, what node must kill, signal and may forget, and which
// applications ended.
func (rm *ResourceManager) nodeDirectives(node string) (cleanup, removed []*yarnpb.ContainerIdProto, apps []*yarnpb.ApplicationIdProto, signals []*yarnpb.SignalContainerRequestProto) {
	t := rm.containers
	t.mu.Lock()
	defer t.mu.Unlock()
	signals = t.signals[node]
	delete(t.signals, node)
	cleanup, apps = t.cleanup[node], t.appCleanup[node]
	if ids := t.removed[node]; len(ids) > 0 {
		removed = make([]*yarnpb.ContainerIdProto, len(ids))
		for i, id := range ids {
			removed[i] = id.Proto()
		}
	}
	delete(t.cleanup, node)
	delete(t.removed, node)
	delete(t.appCleanup, node)
	return cleanup, removed, apps, signals
}

// nodeLost completes the containers of a lost (or decommissioned, or restarted) node as
// ABORTED; an AM container among them ends its attempt without counting as a failure.
func (rm *ResourceManager) nodeLost(node, why string) {
	lost, err := rm.engine.RemoveNode(node)
	if err != nil {
		return
	}
	rm.containers.mu.Lock()
	var ids []records.ContainerID
	for _, e := range lost {
		if c, ok := rm.containers.byEngine[e]; ok {
			ids = append(ids, c.id)
		}
	}
	rm.containers.mu.Unlock()
	sort.Slice(ids, func(i, j int) bool { return ids[i].ID < ids[j].ID })
	for _, id := range ids {
		c, final, fresh := rm.containers.complete(id, &yarnpb.ContainerStatusProto{ContainerId: id.Proto(), State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(),
			ExitStatus: proto.Int32(exitcode.Aborted), Diagnostics: proto.String(why)})
		if fresh && c.am {
			rm.amExited(id, final)
		}
	}
}

// hostsToNodes maps blacklisted host names to the node ids on them.
func (rm *ResourceManager) hostsToNodes(hosts []string) []string {
	rm.nodes.mu.Lock()
	defer rm.nodes.mu.Unlock()
	var out []string
	for _, h := range hosts {
		for k, n := range rm.nodes.nodes {
			if n.id.GetHost() == h || strings.EqualFold(k, h) {
				out = append(out, k)
			}
		}
	}
	return out
}
