package resourcemanager

import (
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

// nodeStatuses takes a NodeManager's container statuses: running ones stop their
// allocation-expiry clock; completed ones free their room and go to their attempts, and
// the NM is told to forget them on the next heartbeat.
func (rm *ResourceManager) nodeStatuses(node string, statuses []*yarnpb.ContainerStatusProto) {
	finished, release := rm.containers.TakeStatuses(node, statuses)
	if len(finished) == 0 {
		return
	}
	rm.engine.ReleaseAll(release)
	// One line per heartbeat: "container:exit_status" for each container it completed.
	var b strings.Builder
	for i, f := range finished {
		rm.metrics.containerCompleted(f.Final.GetExitStatus())
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(f.C.Id.String())
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(int(f.Final.GetExitStatus())))
		if f.C.Am {
			rm.amExited(f.C.Id, f.Final)
		}
	}
	rm.log.WithFields(map[string]any{"node": node, "containers": b.String()}).Info("containers completed")
	rm.kickScheduler()
}

// nodeLost completes the containers of a lost (or decommissioned, or restarted) node as
// ABORTED; an AM container among them ends its attempt without counting as a failure.
func (rm *ResourceManager) nodeLost(node, why string) {
	lost, err := rm.engine.RemoveNode(node)
	if err != nil {
		return
	}
	ids := rm.containers.IdsOf(lost)
	for _, id := range ids {
		c, final, fresh := rm.containers.Complete(id, &yarnpb.ContainerStatusProto{ContainerId: id.Proto(), State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(),
			ExitStatus: proto.Int32(exitcode.Aborted), Diagnostics: proto.String(why)})
		if fresh && c.Am {
			rm.amExited(id, final)
		}
	}
}
