package rmstate

import (
	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/wire"
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

func compactStatus(c *Container, st *yarnpb.ContainerStatusProto) doneStatus {
	if st.Capability != nil || st.ExecutionType != nil || len(st.ContainerAttributes) > 0 ||
		(st.ContainerSubState != nil && st.GetContainerSubState() != yarnpb.ContainerSubStateProto_CSS_DONE) ||
		len(st.ProtoReflect().GetUnknown()) > 0 || st.GetState() != yarnpb.ContainerStateProto_C_COMPLETE {
		return doneStatus{c: c, full: st}
	}
	return doneStatus{c: c, exit: st.GetExitStatus(), diag: st.GetDiagnostics(), done: st.ContainerSubState != nil}
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
