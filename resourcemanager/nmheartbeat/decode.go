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
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return id, false
		}
		b = b[n:]
		switch {
		case num == stContainerID && typ == protowire.BytesType:
			v, k := protowire.ConsumeBytes(b)
			if k < 0 || !containerID(v, &id) {
				return id, false
			}
			haveID, b = true, b[k:]
		case num == stDiagnostics && typ == protowire.BytesType: // a proto2 string: any bytes
			k := protowire.ConsumeFieldValue(num, typ, b)
			if k < 0 {
				return id, false
			}
			b = b[k:]
		case (num == stState || num == stExitStatus || num == stExecutionType || num == stSubState) && typ == protowire.VarintType:
			v, k := protowire.ConsumeVarint(b)
			if k < 0 {
				return id, false
			}
			if num == stState {
				// The last value wins; one protobuf does not know would be kept aside
				// instead, so only RUNNING is taken.
				isRunning = v == uint64(yarnpb.ContainerStateProto_C_RUNNING)
				if !isRunning {
					return id, false
				}
			}
			b = b[k:]
		default:
			return id, false
		}
	}
	return id, haveID && isRunning
}

// containerID merges a ContainerIdProto's fields into id, as protobuf merges a message
// field that comes more than once; false: not plainly well formed.
func containerID(b []byte, id *records.ContainerID) bool {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		b = b[n:]
		switch {
		case num == cidAppID && typ == protowire.BytesType: // deprecated; read, not used
			v, k := protowire.ConsumeBytes(b)
			var app records.ApplicationID
			if k < 0 || !applicationID(v, &app) {
				return false
			}
			b = b[k:]
		case num == cidAttemptID && typ == protowire.BytesType:
			v, k := protowire.ConsumeBytes(b)
			if k < 0 || !attemptID(v, &id.Attempt) {
				return false
			}
			b = b[k:]
		case num == cidID && typ == protowire.VarintType:
			v, k := protowire.ConsumeVarint(b)
			if k < 0 {
				return false
			}
			id.ID, b = int64(v), b[k:]
		default:
			return false
		}
	}
	return true
}

func attemptID(b []byte, att *records.AttemptID) bool {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		b = b[n:]
		switch {
		case num == attAppID && typ == protowire.BytesType:
			v, k := protowire.ConsumeBytes(b)
			if k < 0 || !applicationID(v, &att.App) {
				return false
			}
			b = b[k:]
		case num == attAttempt && typ == protowire.VarintType:
			v, k := protowire.ConsumeVarint(b)
			if k < 0 {
				return false
			}
			att.Attempt, b = int32(v), b[k:]
		default:
			return false
		}
	}
	return true
}

func applicationID(b []byte, app *records.ApplicationID) bool {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		b = b[n:]
		if typ != protowire.VarintType || (num != appID && num != appClusterTimestamp) {
			return false
		}
		v, k := protowire.ConsumeVarint(b)
		if k < 0 {
			return false
		}
		if num == appID {
			app.ID = int32(v)
		} else {
			app.ClusterTimestamp = int64(v)
		}
		b = b[k:]
	}
	return true
}
