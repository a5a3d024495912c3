package amclient

import (
	"fmt"
	"slices"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/wire"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/rpc/token"
)

// Granted is a container an allocate answer granted, as a load generator uses it.
type Granted struct {
	ID       records.ContainerID
	Host     string // its NodeManager's NodeId
	Port     int32
	Priority int32
	MemoryMB int64
	VCores   int32
}

// nodeToken is an NMToken of an allocate answer, with its node as "host:port".
type nodeToken struct {
	node  string
	token *token.Token
}

// Completed is a completed container's status, as a load generator uses it.
type Completed struct {
	ID          records.ContainerID
	ExitStatus  int32
	Diagnostics string
}

// Field numbers read from an allocate answer (yarn_service_protos.proto, yarn_protos.proto).
const (
	respAllocated          = 3 // AllocateResponseProto.allocated_containers
	respCompleted          = 4 // AllocateResponseProto.completed_container_statuses
	respNMTokens           = 9 // AllocateResponseProto.nm_tokens
	nmtNodeID              = 1 // NMTokenProto
	nmtToken               = 2
	ctrID                  = 1 // ContainerProto
	ctrNodeID              = 2
	ctrHTTPAddress         = 3
	ctrResource            = 4
	ctrPriority            = 5
	ctrToken               = 6
	ctrExecutionType       = 7
	ctrAllocationRequestID = 8
	ctrVersion             = 9
	ctrAllocationTags      = 10
	ctrExposedPorts        = 11
	tokenIdentifier        = 1 // TokenProto
	tokenPassword          = 2
	tokenKind              = 3
	tokenService           = 4
	stID                   = 1 // ContainerStatusProto
	stState                = 2
	stDiagnostics          = 3
	stExit                 = 4
	stExecutionType        = 6
	stSubState             = 8
	nodeHost               = 1 // NodeIdProto
	nodePort               = 2
	resMemory              = 1 // ResourceProto
	resVCores              = 2
	prioValue              = 1 // PriorityProto
)

// decodeGranted decodes an AllocateResponseProto's bytes into resp, except its allocated
// containers and completed statuses, which it returns as Granted and Completed. A load
// generator's AMs receive tens of thousands of each a second; as messages every one was
// a dozen allocations (a container's token most), which cost the generator more CPU than
// the RM spent handing them out. One whose fields are not plainly encoded is decoded by
// protobuf, then converted.
//
// NMTokens are read too (an AM's first answers carry one for most nodes of the cluster:
// 400,000 in the first seconds of 200 AMs on 2,000 nodes) and returned apart.
func decodeGranted(b []byte, resp *yarnpb.AllocateResponseProto) ([]Granted, []Completed, []nodeToken, error) {
	var (
		granted   []Granted
		completed []Completed
		tokens    []nodeToken
	)
	rest := wire.AppendWithout(nil, b, func(num protowire.Number, v []byte) bool {
		switch num {
		case respAllocated:
			g, ok := grantedContainer(v)
			if ok {
				granted = append(granted, g)
			}
			return ok
		case respCompleted:
			c, ok := completedStatus(v)
			if ok {
				completed = append(completed, c)
			}
			return ok
		case respNMTokens:
			t, ok := nmTokenEntry(v)
			if ok {
				tokens = append(tokens, t)
			}
			return ok
		}
		return false
	})
	if err := proto.Unmarshal(rest, resp); err != nil {
		return nil, nil, nil, fmt.Errorf("decode allocate response: %w", err)
	}
	// Those protobuf decoded (a 3.x RM's, with fields read here only as protobuf does)
	// join the rest, so a caller finds every container in one place.
	for _, c := range resp.AllocatedContainers {
		granted = append(granted, grantedFromProto(c))
	}
	for _, st := range resp.CompletedContainerStatuses {
		completed = append(completed, completedFromProto(st))
	}
	resp.AllocatedContainers, resp.CompletedContainerStatuses = nil, nil
	return granted, completed, tokens, nil
}

// nmTokenEntry reads an NMTokenProto with a node id of host and port and a complete
// token; false when it has anything else, or either is missing (left to protobuf).
func nmTokenEntry(b []byte) (nodeToken, bool) {
	var (
		host     string
		port     int32
		hasNode  bool
		tok      token.Token
		hasToken bool
	)
	ok := wire.Fields(b, func(f wire.Field) bool {
		switch {
		case f.Num == nmtNodeID && f.IsBytes && !hasNode:
			hasNode = true
			return wire.Fields(f.Bytes, func(f wire.Field) bool {
				switch {
				case f.Num == nodeHost && f.IsBytes:
					host = string(f.Bytes)
				case f.Num == nodePort && !f.IsBytes:
					port = int32(f.Varint)
				default:
					return false
				}
				return true
			})
		case f.Num == nmtToken && f.IsBytes && !hasToken && completeToken(f.Bytes):
			hasToken = true
			return wire.Fields(f.Bytes, func(f wire.Field) bool {
				switch f.Num {
				case tokenIdentifier:
					tok.Identifier = slices.Clone(f.Bytes)
				case tokenPassword:
					tok.Password = slices.Clone(f.Bytes)
				case tokenKind:
					tok.Kind = string(f.Bytes)
				case tokenService:
					tok.Service = string(f.Bytes)
				}
				return true
			})
		}
		return false
	})
	if !ok || !hasNode || !hasToken {
		return nodeToken{}, false
	}
	return nodeToken{node: host + ":" + strconv.Itoa(int(port)), token: &tok}, true
}

func grantedFromProto(c *yarnpb.ContainerProto) Granted {
	return Granted{ID: records.ContainerIDFromProto(c.GetId()), Host: c.GetNodeId().GetHost(), Port: c.GetNodeId().GetPort(),
		Priority: c.GetPriority().GetPriority(), MemoryMB: c.GetResource().GetMemory(), VCores: c.GetResource().GetVirtualCores()}
}

func completedFromProto(st *yarnpb.ContainerStatusProto) Completed {
	return Completed{ID: records.ContainerIDFromProto(st.GetContainerId()), ExitStatus: st.GetExitStatus(), Diagnostics: st.GetDiagnostics()}
}

// completedStatus reads a ContainerStatusProto's id, exit status and diagnostics; false
// when any field is not plainly encoded, or is one protobuf would check or keep aside.
func completedStatus(b []byte) (Completed, bool) {
	c := Completed{ExitStatus: -1000, Diagnostics: "N/A"} // the fields' defaults
	ok := wire.Fields(b, func(f wire.Field) bool {
		switch {
		case f.Num == stID && f.IsBytes:
			return c.ID.MergeWire(f.Bytes)
		case f.Num == stDiagnostics && f.IsBytes:
			c.Diagnostics = string(f.Bytes)
		case f.Num == stExit && !f.IsBytes:
			c.ExitStatus = int32(f.Varint)
		case (f.Num == stState || f.Num == stExecutionType || f.Num == stSubState) && !f.IsBytes:
		default:
			return false
		}
		return true
	})
	return c, ok
}

// grantedContainer reads a ContainerProto's id, node, resource and priority; false when
// any field is not plainly encoded, or is one protobuf would check or keep aside.
func grantedContainer(b []byte) (Granted, bool) {
	var g Granted
	ok := wire.Fields(b, func(f wire.Field) bool {
		switch f.Num {
		case ctrID:
			return f.IsBytes && g.ID.MergeWire(f.Bytes)
		case ctrNodeID:
			return f.IsBytes && wire.Fields(f.Bytes, func(f wire.Field) bool {
				switch {
				case f.Num == nodeHost && f.IsBytes:
					g.Host = string(f.Bytes)
				case f.Num == nodePort && !f.IsBytes:
					g.Port = int32(f.Varint)
				default:
					return false
				}
				return true
			})
		case ctrResource:
			// Memory and vcores only: another resource type's record has a required
			// field protobuf checks, so such a container is left to protobuf.
			return f.IsBytes && wire.Fields(f.Bytes, func(f wire.Field) bool {
				switch {
				case f.Num == resMemory && !f.IsBytes:
					g.MemoryMB = int64(f.Varint)
				case f.Num == resVCores && !f.IsBytes:
					g.VCores = int32(f.Varint)
				default:
					return false
				}
				return true
			})
		case ctrPriority:
			return f.IsBytes && wire.Fields(f.Bytes, func(f wire.Field) bool {
				if f.Num != prioValue || f.IsBytes {
					return false
				}
				g.Priority = int32(f.Varint)
				return true
			})
		case ctrToken:
			return f.IsBytes && completeToken(f.Bytes)
		case ctrHTTPAddress, ctrAllocationTags, ctrExposedPorts:
			return f.IsBytes
		case ctrExecutionType, ctrAllocationRequestID, ctrVersion:
			return !f.IsBytes
		}
		return false // a field protobuf would keep as unknown: left to it
	})
	return g, ok
}

// completeToken reports whether a TokenProto's bytes hold its four required fields, and
// nothing else, as protobuf requires of a message it decodes.
func completeToken(b []byte) bool {
	var seen [tokenService + 1]bool
	ok := wire.Fields(b, func(f wire.Field) bool {
		if f.Num < tokenIdentifier || f.Num > tokenService || !f.IsBytes {
			return false
		}
		seen[f.Num] = true
		return true
	})
	return ok && seen[tokenIdentifier] && seen[tokenPassword] && seen[tokenKind] && seen[tokenService]
}
