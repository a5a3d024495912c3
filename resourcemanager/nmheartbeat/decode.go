// Package nmheartbeat decodes a NodeManager's nodeHeartbeat and registerNodeManager
// requests for the RM without building what it does not read. Like the Java NM, every
// NodeManager repeats the status of each of its running containers in every heartbeat,
// and of those the RM needs the container id alone (to see a container start); decoded
// as protobuf messages they were a dozen allocations each, a million a second on a busy
// RM. A registration after an RM restart carries every container the node runs.
package nmheartbeat

import (
	"encoding/binary"
	"slices"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/wire"
	"github.com/bobbin-yarn/bobbin/records"
)

// Request is a decoded nodeHeartbeat: the request as protobuf decodes it, except that
// the plain statuses of RUNNING containers are not in its node status's
// containersStatuses but in Running, by container id, and the plain statuses of
// COMPLETE ones in Completed, each in the order they came.
type Request struct {
	*yarnpb.NodeHeartbeatRequestProto
	Running   []records.ContainerID
	Completed []Done
}

// Done is a plain completed container's status: what a NodeManager reports of a
// container that ended (a 3.x one adds the sub-state DONE), kept without the four
// messages protobuf would build for it.
type Done struct {
	ID           records.ContainerID
	Exit         int32
	Diagnostics  string
	SubStateDone bool // container_sub_state was CSS_DONE
}

// Field numbers of the messages read here (yarn_server_common_service_protos.proto,
// yarn_server_common_protos.proto, yarn_protos.proto).
const (
	requestNodeStatus       = 1 // NodeHeartbeatRequestProto.node_status
	statusContainerStatuses = 3 // NodeStatusProto.containersStatuses
	stContainerID           = 1 // ContainerStatusProto
	stState                 = 2
	stDiagnostics           = 3
	stExitStatus            = 4
	stExecutionType         = 6
	stSubState              = 8
)

// Decoder decodes nodeHeartbeat requests, concurrently. The zero value is ready.
type Decoder struct {
	scratch sync.Pool // *[]byte buffers requests are rewritten in
}

// buffer is a scratch buffer to rewrite a request in; it goes back to d.scratch after.
func (d *Decoder) buffer() *[]byte {
	if buf, _ := d.scratch.Get().(*[]byte); buf != nil {
		return buf
	}
	return new([]byte)
}

// Decode parses a nodeHeartbeat request's bytes. It fails exactly where proto.Unmarshal
// fails, and gives what it would, save the running statuses moved to Running and the
// completed ones to Completed. A status goes to Running only when it holds nothing but a
// container id, state RUNNING, diagnostics, an exit status, an execution type and a
// sub-state; to Completed only when it holds nothing but a container id, state
// COMPLETE, diagnostics, an exit status and the sub-state DONE; each well formed as
// protobuf reads them. Anything else (another field, a wire type protobuf would keep as
// unknown, an unknown state) is left for protobuf to decode.
func (d *Decoder) Decode(b []byte) (Request, error) {
	buf := d.buffer()
	defer d.scratch.Put(buf)
	// The request is copied to out without the running statuses, then decoded from there
	// (protobuf copies what it keeps, so out is reused).
	out := (*buf)[:0]
	// A status is at least a dozen bytes: room for the ids from the start.
	running := make([]records.ContainerID, 0, len(b)/24)
	var completed []Done
	copied := 0 // b[:copied] is in out
	for off := 0; off < len(b); {
		num, typ, n := protowire.ConsumeTag(b[off:])
		if n < 0 {
			break // protobuf reports it
		}
		m := protowire.ConsumeFieldValue(num, typ, b[off+n:])
		if m < 0 {
			break
		}
		if num == requestNodeStatus && typ == protowire.BytesType {
			v, k := protowire.ConsumeBytes(b[off+n:])
			out = append(out, b[copied:off]...)
			out = protowire.AppendTag(out, requestNodeStatus, protowire.BytesType)
			at := len(out)
			out, running, completed = dropPlain(out, v, running, completed)
			// The kept bytes' length goes before them.
			var l [binary.MaxVarintLen64]byte
			size := protowire.AppendVarint(l[:0], uint64(len(out)-at))
			out = slices.Insert(out, at, size...)
			copied = off + n + k
		}
		off += n + m
	}
	out = append(out, b[copied:]...)
	*buf = out
	req := &yarnpb.NodeHeartbeatRequestProto{}
	if err := proto.Unmarshal(out, req); err != nil {
		return Request{}, err
	}
	return Request{NodeHeartbeatRequestProto: req, Running: running, Completed: completed}, nil
}

// dropPlain appends a NodeStatusProto's bytes to dst without its plain running and
// completed statuses, and adds those to ids and done.
func dropPlain(dst, b []byte, ids []records.ContainerID, done []Done) ([]byte, []records.ContainerID, []Done) {
	dst = wire.AppendWithout(dst, b, func(num protowire.Number, v []byte) bool {
		if num != statusContainerStatuses {
			return false
		}
		if id, ok := runningID(v); ok {
			ids = append(ids, id)
			return true
		}
		if d, ok := plainDone(v); ok {
			done = append(done, d)
			return true
		}
		return false
	})
	return dst, ids, done
}

// plainDone is a plain COMPLETE container status (see Decode), or false.
func plainDone(b []byte) (Done, bool) {
	// The fields' defaults, as the message's getters give them (yarn_protos.proto).
	d := Done{Exit: -1000, Diagnostics: "N/A"}
	var haveID, isComplete bool
	ok := wire.Fields(b, func(f wire.Field) bool {
		switch {
		case f.Num == stContainerID && f.IsBytes:
			haveID = true
			return d.ID.MergeWire(f.Bytes)
		case f.Num == stDiagnostics && f.IsBytes: // a proto2 string: any bytes
			d.Diagnostics = string(f.Bytes)
			return true
		case f.Num == stState && !f.IsBytes:
			isComplete = f.Varint == uint64(yarnpb.ContainerStateProto_C_COMPLETE)
			return isComplete
		case f.Num == stExitStatus && !f.IsBytes:
			d.Exit = int32(f.Varint) // protobuf's int32: the low 32 bits
			return true
		case f.Num == stSubState && !f.IsBytes:
			d.SubStateDone = f.Varint == uint64(yarnpb.ContainerSubStateProto_CSS_DONE)
			return d.SubStateDone
		}
		return false
	})
	return d, ok && haveID && isComplete
}

// runningID is the id of a plain RUNNING container status (see Decode), or false.
func runningID(b []byte) (records.ContainerID, bool) {
	var (
		id                records.ContainerID
		haveID, isRunning bool
	)
	ok := wire.Fields(b, func(f wire.Field) bool {
		switch {
		case f.Num == stContainerID && f.IsBytes:
			haveID = true
			return id.MergeWire(f.Bytes)
		case f.Num == stDiagnostics && f.IsBytes: // a proto2 string: any bytes
			return true
		case f.Num == stState && !f.IsBytes:
			// The last value wins; one protobuf does not know would be kept aside
			// instead, so only RUNNING is taken.
			isRunning = f.Varint == uint64(yarnpb.ContainerStateProto_C_RUNNING)
			return isRunning
		case (f.Num == stExitStatus || f.Num == stExecutionType || f.Num == stSubState) && !f.IsBytes:
			return true
		}
		return false
	})
	return id, ok && haveID && isRunning
}
