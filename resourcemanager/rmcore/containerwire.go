package rmcore

import (
	"encoding/binary"
	"slices"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
	"github.com/bobbin-yarn/bobbin/rpc/token"
)

// The containers of an allocate answer are written as protobuf bytes directly: the
// answer is marshalled anyway, and building each ContainerProto with its token
// identifier as messages first took some thirty allocations a container, the largest
// share of a busy RM's garbage. The bytes are those proto.Marshal gives for
// containerProto's message, as TestContainerWireIsTheMarshalledProto checks.

// Field numbers (yarn_service_protos.proto, yarn_protos.proto, yarn_security_token.proto,
// Security.proto).
const (
	allocatedContainers = 3 // AllocateResponseProto.allocated_containers

	ctrID, ctrNodeID, ctrHTTP, ctrResource, ctrPriority, ctrToken = 1, 2, 3, 4, 5, 6

	tokIdentifier, tokPassword, tokKind, tokService = 1, 2, 3, 4

	// ContainerTokenIdentifierProto
	ctiContainerID, ctiNMHost, ctiSubmitter, ctiResource, ctiExpiry, ctiKeyID, ctiRMID, ctiPriority, ctiCreation = 1, 2, 3, 4, 5, 6, 7, 8, 9
)

// appendAllocated appends c as one allocated_containers entry of an AllocateResponseProto,
// with a container token issued at now.
func (rm *Core) appendAllocated(b []byte, c *rmstate.Container, now time.Time) []byte {
	b, _ = appendMessage(b, allocatedContainers, func(b []byte) []byte { return rm.appendContainer(b, c, now) })
	return b
}

// appendContainer appends the bytes of c's ContainerProto (containerProto's message).
func (rm *Core) appendContainer(b []byte, c *rmstate.Container, now time.Time) []byte {
	b, _ = appendMessage(b, ctrID, func(b []byte) []byte { return appendContainerID(b, c.ID) })
	b, _ = appendMessage(b, ctrNodeID, func(b []byte) []byte {
		id := c.At.ID
		if id.Host != nil {
			b = appendString(b, 1, *id.Host)
		}
		if id.Port != nil {
			b = appendInt32(b, 2, *id.Port)
		}
		return append(b, id.ProtoReflect().GetUnknown()...)
	})
	b = appendString(b, ctrHTTP, c.At.HTTP)
	b, _ = appendMessage(b, ctrResource, func(b []byte) []byte { return rm.appendResource(b, c.Resource) })
	b, _ = appendMessage(b, ctrPriority, func(b []byte) []byte { return appendInt32(b, 1, c.Priority) })
	b, _ = appendMessage(b, ctrToken, func(b []byte) []byte {
		// One key for the identifier's key id and the password.
		key := rm.containerTokens.Keys.Current()
		b, at := appendMessage(b, tokIdentifier, func(b []byte) []byte { return rm.appendContainerIdentifier(b, c, key.ID, now) })
		password := key.Password(b[at:])
		b = protowire.AppendTag(b, tokPassword, protowire.BytesType)
		b = protowire.AppendBytes(b, password)
		b = appendString(b, tokKind, token.KindContainer)
		return appendString(b, tokService, c.At.Key)
	})
	return b
}

// appendContainerIdentifier appends a ContainerTokenIdentifierProto's bytes as
// security.ContainerTokens.Issue marshals the one containerProto fills.
func (rm *Core) appendContainerIdentifier(b []byte, c *rmstate.Container, keyID int32, now time.Time) []byte {
	b, _ = appendMessage(b, ctiContainerID, func(b []byte) []byte { return appendContainerID(b, c.ID) })
	b = appendString(b, ctiNMHost, c.At.Key)
	b = appendString(b, ctiSubmitter, c.User)
	b, _ = appendMessage(b, ctiResource, func(b []byte) []byte { return rm.appendResource(b, c.Resource) })
	b = appendInt64(b, ctiExpiry, now.Add(containerTokenLife).UnixMilli())
	b = appendInt32(b, ctiKeyID, keyID)
	b = appendInt64(b, ctiRMID, rm.containerTokens.RMIdentifier)
	b, _ = appendMessage(b, ctiPriority, func(b []byte) []byte { return appendInt32(b, 1, c.Priority) })
	return appendInt64(b, ctiCreation, now.UnixMilli())
}

// appendContainerID appends a ContainerIdProto's bytes as records.ContainerID.Proto
// builds it.
func appendContainerID(b []byte, id records.ContainerID) []byte {
	b, _ = appendMessage(b, 2, func(b []byte) []byte { // app_attempt_id
		b, _ = appendMessage(b, 1, func(b []byte) []byte { // application_id
			b = appendInt32(b, 1, id.Attempt.App.ID)
			return appendInt64(b, 2, id.Attempt.App.ClusterTimestamp)
		})
		return appendInt32(b, 2, id.Attempt.Attempt)
	})
	return appendInt64(b, 3, id.ID)
}

// appendResource appends the ResourceProto of ResourceProto(r).
func (rm *Core) appendResource(b []byte, r scheduler.Resource) []byte {
	if rm.Types.Len() > 2 { // extra resource types: rare enough to marshal
		b, _ = proto.MarshalOptions{}.MarshalAppend(b, rm.ResourceProto(r))
		return b
	}
	b = appendInt64(b, 1, r[scheduler.Memory])
	return appendInt32(b, 2, int32(r[scheduler.VCores]))
}

// appendMessage appends field num holding the message body writes, and where the
// body's bytes start.
func appendMessage(b []byte, num protowire.Number, body func([]byte) []byte) ([]byte, int) {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	at := len(b)
	b = append(b, 0) // the length: one byte unless the body is 128 bytes or more
	b = body(b)
	n := len(b) - at - 1
	if n < 0x80 {
		b[at] = byte(n)
		return b, at + 1
	}
	var l [binary.MaxVarintLen64]byte
	size := protowire.AppendVarint(l[:0], uint64(n))
	b = slices.Insert(b, at+1, size[1:]...)
	copy(b[at:], size)
	return b, at + len(size)
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

// appendInt32 appends a proto int32 (negative values sign-extended to ten bytes).
func appendInt32(b []byte, num protowire.Number, v int32) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(int64(v)))
}

func appendInt64(b []byte, num protowire.Number, v int64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(v))
}
