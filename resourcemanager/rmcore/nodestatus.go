package rmcore

import (
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

// NodeStatuses takes a NodeManager's container statuses: running ones stop their
// allocation-expiry clock; completed ones free their room and go to their attempts, and
// the NM is told to forget them on the next heartbeat. Running are containers reported
// RUNNING by id alone (see nmheartbeat).
func (rm *Core) NodeStatuses(node string, statuses []*yarnpb.ContainerStatusProto, running []records.ContainerID) {
	r := &nodeReport{NodeReport: rmstate.NodeReport{Node: node, Statuses: statuses, Running: running}}
	rm.reports.Do(r)
	if len(r.finished) == 0 {
		return
	}
	rm.Engine.ReleaseAll(r.release)
	// One line per heartbeat: "container:exit_status" for each container it completed.
	var b strings.Builder
	for i, f := range r.finished {
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

// nodeReport is one heartbeat's statuses in a batch (package combine). Taken one
// heartbeat at a time, at 2,000 heartbeats a second with dozens of completions each, the
// container table's lock was always wanted by several heartbeats at once, and allocate
// calls, which take it too, waited behind them all.
type nodeReport struct {
	rmstate.NodeReport
	finished []rmstate.Completion
	release  []scheduler.ContainerID
}

// takeReports takes a batch of heartbeats' statuses under one hold of the table's lock.
func (rm *Core) takeReports(batch []*nodeReport) {
	reports := make([]rmstate.NodeReport, len(batch))
	for i, r := range batch {
		reports[i] = r.NodeReport
	}
	finished, release := rm.Containers.TakeReports(reports)
	for i, r := range batch {
		r.finished, r.release = finished[i], release[i]
	}
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
