package records

import "github.com/bobbin-yarn/bobbin/internal/wire"

// Field numbers of the id messages (yarn_protos.proto).
const (
	cidAppID            = 1 // ContainerIdProto (deprecated, not read)
	cidAttemptID        = 2
	cidID               = 3
	attAppID            = 1 // ApplicationAttemptIdProto
	attAttempt          = 2
	appID               = 1 // ApplicationIdProto
	appClusterTimestamp = 2
)

// MergeWire merges a ContainerIdProto's bytes into c, as protobuf merges a message field
// that comes more than once; false: not plainly well formed (a field of another type or
// wire type), and the caller decodes the message with protobuf instead.
func (c *ContainerID) MergeWire(b []byte) bool {
	return wire.Fields(b, func(f wire.Field) bool {
		switch {
		case f.Num == cidAppID && f.IsBytes: // deprecated; read, not used
			var app ApplicationID
			return app.MergeWire(f.Bytes)
		case f.Num == cidAttemptID && f.IsBytes:
			return c.Attempt.MergeWire(f.Bytes)
		case f.Num == cidID && !f.IsBytes:
			c.ID = int64(f.Varint)
			return true
		}
		return false
	})
}

// MergeWire merges an ApplicationAttemptIdProto's bytes into a (see ContainerID.MergeWire).
func (a *AttemptID) MergeWire(b []byte) bool {
	return wire.Fields(b, func(f wire.Field) bool {
		switch {
		case f.Num == attAppID && f.IsBytes:
			return a.App.MergeWire(f.Bytes)
		case f.Num == attAttempt && !f.IsBytes:
			a.Attempt = int32(f.Varint)
			return true
		}
		return false
	})
}

// MergeWire merges an ApplicationIdProto's bytes into a (see ContainerID.MergeWire).
func (a *ApplicationID) MergeWire(b []byte) bool {
	return wire.Fields(b, func(f wire.Field) bool {
		switch {
		case f.Num == appID && !f.IsBytes:
			a.ID = int32(f.Varint)
			return true
		case f.Num == appClusterTimestamp && !f.IsBytes:
			a.ClusterTimestamp = int64(f.Varint)
			return true
		}
		return false
	})
}
