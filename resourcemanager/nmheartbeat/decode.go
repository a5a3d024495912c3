// Package nmheartbeat decodes a NodeManager's nodeHeartbeat request for the RM without
// building what it does not read. Like the Java NM, every NodeManager repeats the status
// of each of its running containers in every heartbeat, and of those the RM needs the
// container id alone (to see a container start); decoded as protobuf messages they were
// a dozen allocations each, a million a second on a busy RM.
package nmheartbeat

import (
	"encoding/binary"
	"slices"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
)

// Request is a decoded nodeHeartbeat: the request as protobuf decodes it, except that
// the plain statuses of RUNNING containers are not in its node status's
// containersStatuses but in Running, by container id, in the order they came.
type Request struct {
	*yarnpb.NodeHeartbeatRequestProto
	Running []records.ContainerID
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
	cidAppID                = 1 // ContainerIdProto
	cidAttemptID            = 2
	cidID                   = 3
	attAppID                = 1 // ApplicationAttemptIdProto
	attAttempt              = 2
	appID                   = 1 // ApplicationIdProto
	appClusterTimestamp     = 2
)

// Decoder decodes nodeHeartbeat requests, concurrently. The zero value is ready.
type Decoder struct {
	scratch sync.Pool // *[]byte buffers requests are rewritten in
}

// Decode parses a nodeHeartbeat request's bytes. It fails exactly where proto.Unmarshal
// fails, and gives what it would, save the running statuses moved to Running: a status
// goes there only when it holds nothing but a container id, state RUNNING, diagnostics,
// an exit status, an execution type and a sub-state, each well formed as protobuf reads
// them; anything else (another field, a wire type protobuf would keep as unknown, an
// unknown state) is left for protobuf to decode.
func (d *Decoder) Decode(b []byte) (Request, error) {
	buf, _ := d.scratch.Get().(*[]byte)
	if buf == nil {
		buf = new([]byte)
	}
	defer d.scratch.Put(buf)
	// The request is copied to out without the running statuses, then decoded from there
	// (protobuf copies what it keeps, so out is reused).
	out := (*buf)[:0]
	// A status is at least a dozen bytes: room for the ids from the start.
	running := make([]records.ContainerID, 0, len(b)/24)
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
			out, running = dropRunning(out, v, running)
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
	return Request{NodeHeartbeatRequestProto: req, Running: running}, nil
}

// dropRunning appends a NodeStatusProto's bytes to dst without its plain running
// statuses, and their ids to ids.
func dropRunning(dst, b []byte, ids []records.ContainerID) ([]byte, []records.ContainerID) {
	copied := 0
	for off := 0; off < len(b); {
		num, typ, n := protowire.ConsumeTag(b[off:])
		if n < 0 {
			break
		}
		m := protowire.ConsumeFieldValue(num, typ, b[off+n:])
		if m < 0 {
			break
		}
		if num == statusContainerStatuses && typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(b[off+n:])
			if id, ok := runningID(v); ok {
				dst = append(dst, b[copied:off]...)
				copied = off + n + m
				ids = append(ids, id)
			}
		}
		off += n + m
	}
	return append(dst, b[copied:]...), ids
}

// runningID is the id of a plain RUNNING container status (see Decode), or false.
func runningID(b []byte) (records.ContainerID, bool) {
	var (
		id                records.ContainerID
		haveID, isRunning bool
	)
	ok := fields(b, func(f field) bool {
		switch {
		case f.num == stContainerID && f.isBytes:
			haveID = true
			return containerID(f.bytes, &id)
		case f.num == stDiagnostics && f.isBytes: // a proto2 string: any bytes
			return true
		case f.num == stState && !f.isBytes:
			// The last value wins; one protobuf does not know would be kept aside
			// instead, so only RUNNING is taken.
			isRunning = f.varint == uint64(yarnpb.ContainerStateProto_C_RUNNING)
			return isRunning
		case (f.num == stExitStatus || f.num == stExecutionType || f.num == stSubState) && !f.isBytes:
			return true
		}
		return false
	})
	return id, ok && haveID && isRunning
}

// containerID merges a ContainerIdProto's fields into id, as protobuf merges a message
// field that comes more than once; false: not plainly well formed.
func containerID(b []byte, id *records.ContainerID) bool {
	return fields(b, func(f field) bool {
		switch {
		case f.num == cidAppID && f.isBytes: // deprecated; read, not used
			var app records.ApplicationID
			return applicationID(f.bytes, &app)
		case f.num == cidAttemptID && f.isBytes:
			return attemptID(f.bytes, &id.Attempt)
		case f.num == cidID && !f.isBytes:
			id.ID = int64(f.varint)
			return true
		}
		return false
	})
}

func attemptID(b []byte, att *records.AttemptID) bool {
	return fields(b, func(f field) bool {
		switch {
		case f.num == attAppID && f.isBytes:
			return applicationID(f.bytes, &att.App)
		case f.num == attAttempt && !f.isBytes:
			att.Attempt = int32(f.varint)
			return true
		}
		return false
	})
}

func applicationID(b []byte, app *records.ApplicationID) bool {
	return fields(b, func(f field) bool {
		switch {
		case f.num == appID && !f.isBytes:
			app.ID = int32(f.varint)
			return true
		case f.num == appClusterTimestamp && !f.isBytes:
			app.ClusterTimestamp = int64(f.varint)
			return true
		}
		return false
	})
}

// field is one field of a message: a varint or a length-delimited value.
type field struct {
	num     protowire.Number
	isBytes bool
	varint  uint64
	bytes   []byte
}

// fields calls each for every field of message b, in order, and reports whether the
// whole message was read: false once each returns false, at a field of another wire type
// (fixed-width, group), or at malformed bytes.
func fields(b []byte, each func(field) bool) bool {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		b = b[n:]
		f := field{num: num}
		var k int
		switch typ {
		case protowire.VarintType:
			f.varint, k = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			f.isBytes = true
			f.bytes, k = protowire.ConsumeBytes(b)
		default:
			return false
		}
		if k < 0 || !each(f) {
			return false
		}
		b = b[k:]
	}
	return true
}
