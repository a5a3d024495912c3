package rmstate

import (
	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/wire"
	"github.com/bobbin-yarn/bobbin/resourcemanager/nmheartbeat"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

// doneStatus is a completed container's status while it waits for its AM. Tens of
// thousands wait at a time on a busy RM, so the common status (id, exit status,
// diagnostics) is kept flat and the proto built when the AM pulls it; a status with
// anything more (a newer NM's fields) is kept whole.
type doneStatus struct {
	c    *Container
	exit int32
	diag string
	done bool // the 3.x NM's sub-state CSS_DONE was set
	full *yarnpb.ContainerStatusProto
}

// compactStatus is st as a doneStatus (its container is set when it is found).
func compactStatus(st *yarnpb.ContainerStatusProto) doneStatus {
	if st.Capability != nil || st.ExecutionType != nil || len(st.ContainerAttributes) > 0 ||
		(st.ContainerSubState != nil && st.GetContainerSubState() != yarnpb.ContainerSubStateProto_CSS_DONE) ||
		len(st.ProtoReflect().GetUnknown()) > 0 || st.GetState() != yarnpb.ContainerStateProto_C_COMPLETE {
		return doneStatus{full: st}
	}
	return doneStatus{exit: st.GetExitStatus(), diag: st.GetDiagnostics(), done: st.ContainerSubState != nil}
}

// plainStatus is a plain completed status as the heartbeat decoder reads it.
func plainStatus(d nmheartbeat.Done) doneStatus {
	return doneStatus{exit: d.Exit, diag: d.Diagnostics, done: d.SubStateDone}
}

// preempted is the status the AM hears for a container the scheduler preempted.
func (d doneStatus) preempted() doneStatus {
	if d.full != nil {
		d.full = proto.Clone(d.full).(*yarnpb.ContainerStatusProto)
		d.full.ExitStatus = proto.Int32(exitcode.Preempted)
		d.full.Diagnostics = proto.String(preemptedDiagnostics)
		return d
	}
	d.exit, d.diag = exitcode.Preempted, preemptedDiagnostics
	return d
}

const preemptedDiagnostics = "Container preempted by scheduler"

func (d doneStatus) exitStatus() int32 {
	if d.full != nil {
		return d.full.GetExitStatus()
	}
	return d.exit
}

// status is the status as a message (d.c is set).
func (d doneStatus) status() *yarnpb.ContainerStatusProto {
	if d.full != nil {
		return d.full
	}
	st := &yarnpb.ContainerStatusProto{ContainerId: d.c.ID.Proto(), State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(),
		Diagnostics: proto.String(d.diag), ExitStatus: proto.Int32(d.exit)}
	if d.done {
		st.ContainerSubState = yarnpb.ContainerSubStateProto_CSS_DONE.Enum()
	}
	return st
}

// completedStatuses is AllocateResponseProto.completed_container_statuses.
const completedStatuses = 4

// completedEntryBytes is room enough for a plain completed status's entry.
const completedEntryBytes = 48

// appendEntry appends the status as an AllocateResponseProto completed_container_statuses
// entry, without building its message: the bytes proto.Marshal writes for it
// (TestCompletedStatusWireIsTheMarshalledProto).
func (d doneStatus) appendEntry(b []byte) []byte {
	if d.full != nil {
		b, _ = wire.AppendMessage(b, completedStatuses, func(b []byte) []byte {
			b, _ = proto.MarshalOptions{}.MarshalAppend(b, d.full)
			return b
		})
		return b
	}
	b, _ = wire.AppendMessage(b, completedStatuses, func(b []byte) []byte {
		b, _ = wire.AppendMessage(b, 1, d.c.ID.AppendProto) // container_id
		b = wire.AppendInt32(b, 2, int32(yarnpb.ContainerStateProto_C_COMPLETE))
		b = wire.AppendString(b, 3, d.diag)
		b = wire.AppendInt32(b, 4, d.exit)
		if d.done {
			b = wire.AppendInt32(b, 8, int32(yarnpb.ContainerSubStateProto_CSS_DONE))
		}
		return b
	})
	return b
}
