// Package wire appends protobuf fields to a byte slice, for the few answers the RM writes
// as bytes without building their messages (allocate's containers and statuses): the
// bytes are what proto.Marshal writes for the same values, field by field.
package wire

import (
	"encoding/binary"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// AppendMessage appends field num holding the message body writes, and returns where the
// body's bytes start.
func AppendMessage(b []byte, num protowire.Number, body func([]byte) []byte) ([]byte, int) {
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

// AppendString appends a string (or bytes) field.
func AppendString(b []byte, num protowire.Number, s string) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

// AppendBytes appends a bytes field.
func AppendBytes(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// AppendInt32 appends an int32 or enum field (negative values sign-extended to ten
// bytes, as protobuf writes them).
func AppendInt32(b []byte, num protowire.Number, v int32) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(int64(v)))
}

// AppendInt64 appends an int64 field.
func AppendInt64(b []byte, num protowire.Number, v int64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(v))
}
