// Package rpc speaks Hadoop IPC (protocol version 9, protobuf engine): framing, the SASL
// handshake, a server that dispatches calls to typed handlers and a multiplexing client.
// Wire facts: docs/protocol.md §1-2.
package rpc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	commonpb "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
)

// Connection preamble constants.
const (
	Magic          = "hrpc"
	CurrentVersion = 9
	AuthNone       = 0x00
	AuthSASL       = 0xDF // AuthProtocol.SASL = -33
)

// Special call ids (RpcConstants, Server.AuthProtocol).
const (
	CallIDAuthFailed        int32 = -1
	CallIDConnectionContext int32 = -3
	CallIDPing              int32 = -4
	CallIDSASL              int32 = -33
)

// DefaultMaxDataLength is ipc.maximum.data.length's default, 64 MiB.
const DefaultMaxDataLength = 64 << 20

// Preamble is the 7-byte connection header:
//
//	+------+------+------+------+---------+---------------+------+
//	| 'h'  | 'r'  | 'p'  | 'c'  | version | service class | auth |
//	+------+------+------+------+---------+---------------+------+
type Preamble struct {
	Version      byte
	ServiceClass byte
	Auth         byte
}

// Bytes encodes the preamble.
func (p Preamble) Bytes() []byte {
	return []byte{'h', 'r', 'p', 'c', p.Version, p.ServiceClass, p.Auth}
}

// Errors of the framing layer.
var (
	ErrBadMagic      = errors.New("rpc: connection does not start with \"hrpc\"")
	ErrHTTPRequest   = errors.New("rpc: HTTP request on an IPC port")
	ErrFrameTooLarge = errors.New("rpc: frame exceeds the maximum data length")
	ErrBadFrame      = errors.New("rpc: malformed frame")
)

// ReadPreamble reads and checks the magic. The version and auth byte are returned for the
// caller to judge, because the answers to a bad one differ.
func ReadPreamble(r io.Reader) (Preamble, error) {
	var b [7]byte
	if _, err := io.ReadFull(r, b[:4]); err != nil {
		return Preamble{}, err
	}
	if string(b[:4]) == "GET " {
		return Preamble{}, ErrHTTPRequest
	}
	if string(b[:4]) != Magic {
		return Preamble{}, ErrBadMagic
	}
	if _, err := io.ReadFull(r, b[4:]); err != nil {
		return Preamble{}, unexpectedEOF(err)
	}
	return Preamble{Version: b[4], ServiceClass: b[5], Auth: b[6]}, nil
}

// ReadFrame reads one packet: a 4-byte big-endian signed length N, then N bytes. A
// negative N or one above max is refused before anything is allocated.
//
//	+----------------+----------------------------+
//	| length (int32) | length bytes of packet body |
//	+----------------+----------------------------+
func ReadFrame(r io.Reader, max int) ([]byte, error) {
	var lb [4]byte
	if _, err := io.ReadFull(r, lb[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(lb[:]))
	if n < 0 {
		return nil, fmt.Errorf("%w: negative length %d", ErrBadFrame, n)
	}
	if int(n) > max {
		return nil, fmt.Errorf("%w: RPC data length of %d exceeds maximum data length of %d", ErrFrameTooLarge, n, max)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, unexpectedEOF(err)
	}
	return buf, nil
}

// AppendFrame appends a whole packet: the length, then each delimited message in order.
// A nil message is skipped.
func AppendFrame(b []byte, msgs ...proto.Message) ([]byte, error) {
	start := len(b)
	b = append(b, 0, 0, 0, 0)
	var err error
	for _, m := range msgs {
		if m == nil {
			continue
		}
		if b, err = AppendDelimited(b, m); err != nil {
			return nil, err
		}
	}
	binary.BigEndian.PutUint32(b[start:], uint32(len(b)-start-4))
	return b, nil
}

// Encoded is a message as its bytes. As a server's response or a client's request, it
// was marshalled already (kept, to answer a retried call with the same bytes, or written
// without building the message) and Bytes are sent as they are; as a client's response,
// Bytes receive the answer undecoded (ReadDelimited). Message is an empty message of the
// type, there only so that code reflecting on it finds one of the right type.
type Encoded struct {
	proto.Message
	Bytes []byte
}

// AppendDelimited appends a varint32 length and the message (Java writeDelimitedTo).
func AppendDelimited(b []byte, m proto.Message) ([]byte, error) {
	if e, ok := m.(*Encoded); ok {
		b = protowire.AppendVarint(b, uint64(len(e.Bytes)))
		return append(b, e.Bytes...), nil
	}
	size := proto.Size(m)
	b = protowire.AppendVarint(b, uint64(size))
	return proto.MarshalOptions{UseCachedSize: true}.MarshalAppend(b, m)
}

// ReadDelimited parses a varint-delimited message from the front of b and returns the
// rest. Required fields are checked, as Java's parseDelimitedFrom does. An *Encoded m
// gets the message's bytes undecoded (aliasing b), for a caller with its own decoder.
func ReadDelimited(b []byte, m proto.Message) ([]byte, error) {
	msg, rest, err := delimited(b)
	if err != nil {
		return nil, err
	}
	if e, ok := m.(*Encoded); ok {
		e.Bytes = msg
		return rest, nil
	}
	if err := proto.Unmarshal(msg, m); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadFrame, err)
	}
	return rest, nil
}

// decodeDelimited is ReadDelimited with the method's own decoder.
func decodeDelimited(b []byte, decode func([]byte) (any, error)) (any, error) {
	msg, _, err := delimited(b)
	if err != nil {
		return nil, err
	}
	m, err := decode(msg)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadFrame, err)
	}
	return m, nil
}

// delimited splits a varint-delimited message's bytes from the rest of b.
func delimited(b []byte) (msg, rest []byte, err error) {
	n, k := protowire.ConsumeVarint(b)
	if k < 0 {
		return nil, nil, fmt.Errorf("%w: bad length varint", ErrBadFrame)
	}
	if n > uint64(len(b)-k) {
		return nil, nil, fmt.Errorf("%w: delimited length %d exceeds the %d bytes left", ErrBadFrame, n, len(b)-k)
	}
	return b[k : k+int(n)], b[k+int(n):], nil
}

// Request is a decoded request packet: the RPC header and what follows it.
type Request struct {
	Header  *commonpb.RpcRequestHeaderProto
	Payload []byte
}

// DecodeRequest splits a request packet into its header and payload.
func DecodeRequest(packet []byte) (*Request, error) {
	h := &commonpb.RpcRequestHeaderProto{}
	rest, err := ReadDelimited(packet, h)
	if err != nil {
		return nil, fmt.Errorf("decode RpcRequestHeaderProto: %w", err)
	}
	return &Request{Header: h, Payload: rest}, nil
}

// DecodeResponse splits a response packet into its header and the body bytes. It enforces
// the Java client's length rule: an error header is never followed by a body.
func DecodeResponse(packet []byte) (*commonpb.RpcResponseHeaderProto, []byte, error) {
	h := &commonpb.RpcResponseHeaderProto{}
	rest, err := ReadDelimited(packet, h)
	if err != nil {
		return nil, nil, fmt.Errorf("decode RpcResponseHeaderProto: %w", err)
	}
	if h.GetStatus() != commonpb.RpcResponseHeaderProto_SUCCESS && len(rest) != 0 {
		return nil, nil, fmt.Errorf("%w: RPC response length mismatch: %d bytes after an error header", ErrBadFrame, len(rest))
	}
	return h, rest, nil
}

func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
