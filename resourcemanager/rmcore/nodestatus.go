package rmcore

import (
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

// NodeStatuses takes a NodeManager's container statuses: running ones stop their
// allocation-expiry clock; completed ones free their room and go to their attempts, and
// the NM is told to forget them on the next heartbeat. Running are containers reported
// RUNNING by id alone (see nmheartbeat).
func (rm *Core) NodeStatuses(node string, statuses []*yarnpb.ContainerStatusProto, running []records.ContainerID) {
	finished, release := rm.Containers.TakeStatuses(node, statuses, running)
	if len(finished) == 0 {
		return
	}
	rm.Engine.ReleaseAll(release)
	// One line per heartbeat: "container:exit_status" for each container it completed.
	var b strings.Builder
	for i, f := range finished {
		rm.Metrics.containerCompleted(f.Final.GetExitStatus())
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(f.C.ID.String())
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(int(f.Final.GetExitStatus())))
		if f.C.AM {
			rm.amExited(f.C.ID, f.Final)
		}
	}
	rm.Log.WithFields(map[string]any{"node": node, "containers": b.String()}).Info("containers completed")
	rm.KickScheduler()
}

// NodeLost completes the containers of a lost (or decommissioned, or restarted) node as
// ABORTED; an AM container among them ends its attempt without counting as a failure.
func (rm *Core) NodeLost(node, why string) {
	rm.forgetNode(node)
	lost, err := rm.Engine.RemoveNode(node)
	if err != nil {
		return
	}
	ids := rm.Containers.IdsOf(lost)
	for _, id := range ids {
		c, final, fresh := rm.Containers.Complete(id, &yarnpb.ContainerStatusProto{ContainerId: id.Proto(), State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(),
			ExitStatus: proto.Int32(exitcode.Aborted), Diagnostics: proto.String(why)})
		if fresh && c.AM {
			rm.amExited(id, final)
		}
	}
}
