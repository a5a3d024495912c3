// Package wire appends protobuf fields to a byte slice and walks a message's fields, for
// the few messages written or read as bytes without building them (the RM's allocate
// answers and heartbeat statuses, the load generator's heartbeats and grants): the
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

// Field is one field of a message: a varint or a length-delimited value.
type Field struct {
	Num     protowire.Number
	IsBytes bool
	Varint  uint64
	Bytes   []byte
}

// Fields calls each for every field of message b, in order, and reports whether the
// whole message was read: false once each returns false, at a field of another wire type
// (fixed-width, group), or at malformed bytes.
func Fields(b []byte, each func(Field) bool) bool {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		b = b[n:]
		f := Field{Num: num}
		var k int
		switch typ {
		case protowire.VarintType:
			f.Varint, k = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			f.IsBytes = true
			f.Bytes, k = protowire.ConsumeBytes(b)
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

// AppendWithout appends message b to dst without the length-delimited fields take
// accepts (take sees each such field's number and value, in order, and keeps its own
// record of what it took). From malformed bytes on, the rest of b is appended as it is,
// for protobuf to report. Lean decoders use it to read their hot fields by hand and leave
// the message's others to proto.Unmarshal.
func AppendWithout(dst, b []byte, take func(num protowire.Number, v []byte) bool) []byte {
	copied := 0 // b[:copied] is in dst, less what was taken
	for off := 0; off < len(b); {
		num, typ, n := protowire.ConsumeTag(b[off:])
		if n < 0 {
			break
		}
		m := protowire.ConsumeFieldValue(num, typ, b[off+n:])
		if m < 0 {
			break
		}
		if typ == protowire.BytesType {
			if v, _ := protowire.ConsumeBytes(b[off+n:]); take(num, v) {
				dst = append(dst, b[copied:off]...)
				copied = off + n + m
			}
		}
		off += n + m
	}
	return append(dst, b[copied:]...)
}
