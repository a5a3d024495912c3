package rmcore

import (
	"strconv"
	"time"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/wire"
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
	nmTokens            = 9 // AllocateResponseProto.nm_tokens

	nmtNodeID, nmtToken = 1, 2 // NMTokenProto

	// NMTokenIdentifierProto
	ntiAttempt, ntiNodeID, ntiSubmitter, ntiKeyID = 1, 2, 3, 4

	ctrID, ctrNodeID, ctrHTTP, ctrResource, ctrPriority, ctrToken, ctrAllocationRequestID, ctrAllocationTags = 1, 2, 3, 4, 5, 6, 8, 10

	tokIdentifier, tokPassword, tokKind, tokService = 1, 2, 3, 4

	// ContainerTokenIdentifierProto
	ctiContainerID, ctiNMHost, ctiSubmitter, ctiResource, ctiExpiry, ctiKeyID, ctiRMID, ctiPriority, ctiCreation = 1, 2, 3, 4, 5, 6, 7, 8, 9
	ctiAllocationRequestID, ctiAllocationTags                                                                    = 15, 16
)

// containerEntryBytes is room enough for most allocated_containers entries,
// nmTokenEntryBytes for most nm_tokens entries.
const containerEntryBytes, nmTokenEntryBytes = 320, 160

// appendAllocated appends c as one allocated_containers entry of an AllocateResponseProto,
// with a container token issued at now.
func (rm *Core) appendAllocated(b []byte, c *rmstate.Container, now time.Time) []byte {
	b, _ = wire.AppendMessage(b, allocatedContainers, func(b []byte) []byte { return rm.appendContainer(b, c, now) })
	return b
}

// appendContainer appends the bytes of c's ContainerProto (containerProto's message).
func (rm *Core) appendContainer(b []byte, c *rmstate.Container, now time.Time) []byte {
	b, _ = wire.AppendMessage(b, ctrID, c.ID.AppendProto)
	b, _ = wire.AppendMessage(b, ctrNodeID, func(b []byte) []byte { return appendNodeID(b, c.At.ID) })
	b = wire.AppendString(b, ctrHTTP, c.At.HTTP)
	b, _ = wire.AppendMessage(b, ctrResource, func(b []byte) []byte { return rm.appendResource(b, c.Resource) })
	b, _ = wire.AppendMessage(b, ctrPriority, func(b []byte) []byte { return wire.AppendInt32(b, 1, c.Priority) })
	b, _ = wire.AppendMessage(b, ctrToken, func(b []byte) []byte {
		// One key for the identifier's key id and the password.
		key := rm.containerTokens.Keys.Current()
		b, at := wire.AppendMessage(b, tokIdentifier, func(b []byte) []byte { return rm.appendContainerIdentifier(b, c, key.ID, now) })
		password := key.Password(b[at:])
		b = wire.AppendBytes(b, tokPassword, password)
		b = wire.AppendString(b, tokKind, token.KindContainer)
		return wire.AppendString(b, tokService, c.At.Key)
	})
	if c.RequestID != -1 {
		b = wire.AppendInt64(b, ctrAllocationRequestID, c.RequestID)
	}
	if p := c.Placement; p != nil {
		for _, tag := range p.Tags {
			b = wire.AppendString(b, ctrAllocationTags, tag)
		}
	}
	return b
}

// appendNodeID appends the bytes of NodeIdProto id as proto.Marshal writes them.
func appendNodeID(b []byte, id *yarnpb.NodeIdProto) []byte {
	if id.Host != nil {
		b = wire.AppendString(b, 1, *id.Host)
	}
	if id.Port != nil {
		b = wire.AppendInt32(b, 2, *id.Port)
	}
	return append(b, id.ProtoReflect().GetUnknown()...)
}

// AppendNMTokens appends to b (an AllocateResponseProto's bytes) one nm_tokens entry for
// each node, the NMToken security.NMTokens.Issue makes for att and submitter there. An
// AM's first answers name most of the cluster's nodes: at 2,000 nodes and 200 AMs that is
// 400,000 tokens in the first seconds, which as messages cost four times the bytes'
// writing (TestNMTokenWireIsTheMarshalledProto checks the bytes are the same).
func (rm *Core) AppendNMTokens(b []byte, att records.AttemptID, submitter string, nodes []*yarnpb.NodeIdProto) []byte {
	if len(nodes) == 0 {
		return b
	}
	key := rm.nmKeys.Current()
	for _, n := range nodes {
		b, _ = wire.AppendMessage(b, nmTokens, func(b []byte) []byte {
			b, _ = wire.AppendMessage(b, nmtNodeID, func(b []byte) []byte { return appendNodeID(b, n) })
			b, _ = wire.AppendMessage(b, nmtToken, func(b []byte) []byte {
				b, at := wire.AppendMessage(b, tokIdentifier, func(b []byte) []byte {
					b, _ = wire.AppendMessage(b, ntiAttempt, att.AppendProto)
					b, _ = wire.AppendMessage(b, ntiNodeID, func(b []byte) []byte { return appendNodeID(b, n) })
					b = wire.AppendString(b, ntiSubmitter, submitter)
					return wire.AppendInt32(b, ntiKeyID, key.ID)
				})
				b = wire.AppendBytes(b, tokPassword, key.Password(b[at:]))
				b = wire.AppendString(b, tokKind, token.KindNM)
				// The service is host:port, written in place.
				b, _ = wire.AppendMessage(b, tokService, func(b []byte) []byte {
					b = append(b, n.GetHost()...)
					b = append(b, ':')
					return strconv.AppendInt(b, int64(n.GetPort()), 10)
				})
				return b
			})
			return b
		})
	}
	return b
}

// appendContainerIdentifier appends a ContainerTokenIdentifierProto's bytes as
// security.ContainerTokens.Issue marshals the one containerProto fills.
func (rm *Core) appendContainerIdentifier(b []byte, c *rmstate.Container, keyID int32, now time.Time) []byte {
	b, _ = wire.AppendMessage(b, ctiContainerID, c.ID.AppendProto)
	b = wire.AppendString(b, ctiNMHost, c.At.Key)
	b = wire.AppendString(b, ctiSubmitter, c.User)
	b, _ = wire.AppendMessage(b, ctiResource, func(b []byte) []byte { return rm.appendResource(b, c.Resource) })
	b = wire.AppendInt64(b, ctiExpiry, now.Add(containerTokenLife).UnixMilli())
	b = wire.AppendInt32(b, ctiKeyID, keyID)
	b = wire.AppendInt64(b, ctiRMID, rm.containerTokens.RMIdentifier)
	b, _ = wire.AppendMessage(b, ctiPriority, func(b []byte) []byte { return wire.AppendInt32(b, 1, c.Priority) })
	b = wire.AppendInt64(b, ctiCreation, now.UnixMilli())
	// The request id and tags, which the NodeManager reports back when it registers again
	// (NMContainerStatus), so that a restarted RM keeps counting the container's tags.
	if c.RequestID != -1 {
		b = wire.AppendInt64(b, ctiAllocationRequestID, c.RequestID)
	}
	if c.Placement != nil {
		for _, tag := range c.Placement.Tags {
			b = wire.AppendString(b, ctiAllocationTags, tag)
		}
	}
	return b
}

// appendResource appends the ResourceProto of ResourceProto(r).
func (rm *Core) appendResource(b []byte, r scheduler.Resource) []byte {
	if rm.types.Len() > 2 { // extra resource types: rare enough to marshal
		b, _ = proto.MarshalOptions{}.MarshalAppend(b, rm.ResourceProto(r))
		return b
	}
	b = wire.AppendInt64(b, 1, r[scheduler.Memory])
	return wire.AppendInt32(b, 2, int32(r[scheduler.VCores]))
}
