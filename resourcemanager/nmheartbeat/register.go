package nmheartbeat

import (
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/wire"
	"github.com/bobbin-yarn/bobbin/records"
)

// Registration is a decoded registerNodeManager: the request as protobuf decodes it,
// except that its plain container statuses are not in its container_statuses but in
// Plain, in the order they came. After a work-preserving RM restart every NodeManager
// registers again with all its containers — a million on the largest clusters — and as
// protobuf messages each status was five allocations and a fifth of the restart's time.
type Registration struct {
	*yarnpb.RegisterNodeManagerRequestProto
	Plain []Reported
}

// Reported is what the RM reads of a container a registering NodeManager reports
// (NMContainerStatusProto), the defaults as the message's getters give them.
type Reported struct {
	ID          records.ContainerID
	State       yarnpb.ContainerStateProto
	MemoryMB    int64 // its resource's memory and vcores
	VCores      int32
	Priority    int32
	Diagnostics string
	Exit        int32
	Created     int64 // creation time, Unix ms
	RequestID   int64 // allocation_request_id
}

// ReportedOf reads a status protobuf decoded.
func ReportedOf(st *yarnpb.NMContainerStatusProto) Reported {
	return Reported{ID: records.ContainerIDFromProto(st.GetContainerId()), State: st.GetContainerState(), MemoryMB: st.GetResource().GetMemory(),
		VCores: st.GetResource().GetVirtualCores(), Priority: st.GetPriority().GetPriority(), Diagnostics: st.GetDiagnostics(),
		Exit: st.GetContainerExitStatus(), Created: st.GetCreationTime(), RequestID: st.GetAllocationRequestId()}
}

// Field numbers of RegisterNodeManagerRequestProto and NMContainerStatusProto
// (yarn_server_common_service_protos.proto), ResourceProto and PriorityProto
// (yarn_protos.proto).
const (
	registerContainerStatuses = 6
	nmContainerID             = 1
	nmState                   = 2
	nmResource                = 3
	nmPriority                = 4
	nmDiagnostics             = 5
	nmExitStatus              = 6
	nmCreationTime            = 7
	nmLabelExpression         = 8
	nmVersion                 = 9
	nmExecutionType           = 10
	nmRequestID               = 11
	resourceMemory            = 1
	resourceVCores            = 2
	priorityValue             = 1
)

// DecodeRegistration parses a registerNodeManager request's bytes. It fails exactly where
// proto.Unmarshal fails, and gives what it would, save the plain statuses moved to
// Plain. A status is plain when it holds nothing but a container id, state RUNNING or
// COMPLETE, a resource of memory and vcores alone, a priority, diagnostics, an exit
// status, a creation time, a node label expression and a version (which the RM does not
// read), execution type GUARANTEED and an allocation request id; each well formed as
// protobuf reads them. Anything else (allocation tags, other resource types, another
// field, a wire type protobuf would keep as unknown, a state or type it does not know) is
// left for protobuf to decode.
func (d *Decoder) DecodeRegistration(b []byte) (Registration, error) {
	buf := d.buffer()
	defer d.scratch.Put(buf)
	// A status is at least a dozen bytes: room for them all from the start.
	plain := make([]Reported, 0, len(b)/48)
	out := wire.AppendWithout((*buf)[:0], b, func(num protowire.Number, v []byte) bool {
		if num != registerContainerStatuses {
			return false
		}
		r, ok := plainReported(v)
		if ok {
			plain = append(plain, r)
		}
		return ok
	})
	*buf = out
	req := &yarnpb.RegisterNodeManagerRequestProto{}
	if err := proto.Unmarshal(out, req); err != nil {
		return Registration{}, err
	}
	return Registration{RegisterNodeManagerRequestProto: req, Plain: plain}, nil
}

// plainReported is a plain NMContainerStatusProto (see DecodeRegistration), or false.
// Fields that come twice are read as protobuf reads them: the last scalar wins, message
// fields merge.
func plainReported(b []byte) (Reported, bool) {
	r := Reported{Diagnostics: "N/A", RequestID: -1}
	haveID := false
	ok := wire.Fields(b, func(f wire.Field) bool {
		switch {
		case f.Num == nmContainerID && f.IsBytes:
			haveID = true
			return r.ID.MergeWire(f.Bytes)
		case f.Num == nmState && !f.IsBytes:
			// One protobuf does not know would be kept aside instead: only these two.
			r.State = yarnpb.ContainerStateProto(int32(f.Varint))
			return f.Varint == uint64(yarnpb.ContainerStateProto_C_RUNNING) || f.Varint == uint64(yarnpb.ContainerStateProto_C_COMPLETE)
		case f.Num == nmResource && f.IsBytes:
			return wire.Fields(f.Bytes, func(g wire.Field) bool {
				switch {
				case g.Num == resourceMemory && !g.IsBytes:
					r.MemoryMB = int64(g.Varint)
				case g.Num == resourceVCores && !g.IsBytes:
					r.VCores = int32(g.Varint) // protobuf's int32: the low 32 bits
				default:
					return false
				}
				return true
			})
		case f.Num == nmPriority && f.IsBytes:
			return wire.Fields(f.Bytes, func(g wire.Field) bool {
				if g.Num == priorityValue && !g.IsBytes {
					r.Priority = int32(g.Varint)
					return true
				}
				return false
			})
		case f.Num == nmDiagnostics && f.IsBytes: // a proto2 string: any bytes
			r.Diagnostics = string(f.Bytes)
			return true
		case f.Num == nmExitStatus && !f.IsBytes:
			r.Exit = int32(f.Varint)
			return true
		case f.Num == nmCreationTime && !f.IsBytes:
			r.Created = int64(f.Varint)
			return true
		case f.Num == nmLabelExpression && f.IsBytes, f.Num == nmVersion && !f.IsBytes:
			return true
		case f.Num == nmExecutionType && !f.IsBytes:
			return f.Varint == uint64(yarnpb.ExecutionTypeProto_GUARANTEED)
		case f.Num == nmRequestID && !f.IsBytes:
			r.RequestID = int64(f.Varint)
			return true
		}
		return false
	})
	return r, ok && haveID && r.State != 0
}
