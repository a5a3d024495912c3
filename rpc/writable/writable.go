// Package writable encodes and decodes the few Hadoop Writable primitives Bobbin needs:
// WritableUtils VInt/VLong and io.Text. They appear in Credentials files, Token.write and
// the MapReduce shuffle header.
package writable

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// MaxTextLength bounds a Text read from untrusted input. Hadoop's own readers cap far lower
// (ShuffleHeader: 1000 chars); 16 MiB keeps a hostile length from exhausting memory.
const MaxTextLength = 16 << 20

// ErrTooLong reports a length prefix beyond the reader's limit.
var ErrTooLong = errors.New("writable: length exceeds limit")

// AppendVLong appends v in Hadoop's WritableUtils.writeVLong encoding:
//
//	-112 <= v <= 127: one byte, v itself.
//	otherwise:        one length byte, then the big-endian magnitude bytes.
//	                  length byte = -112-n for positive v, -120-n for negative v
//	                  (negative values are one's-complemented first), n = 1..8.
func AppendVLong(b []byte, v int64) []byte {
	if v >= -112 && v <= 127 {
		return append(b, byte(v))
	}
	lenByte := int64(-112)
	if v < 0 {
		v = ^v
		lenByte = -120
	}
	n := 0
	for tmp := v; tmp != 0; tmp >>= 8 {
		n++
	}
	b = append(b, byte(lenByte-int64(n)))
	for i := n - 1; i >= 0; i-- {
		b = append(b, byte(v>>(8*uint(i))))
	}
	return b
}

// AppendVInt appends v as a VLong (Hadoop writes VInts with the same encoding).
func AppendVInt(b []byte, v int32) []byte { return AppendVLong(b, int64(v)) }

// AppendText appends a Hadoop Text: VInt byte length then UTF-8 bytes.
func AppendText(b []byte, s string) []byte {
	b = AppendVInt(b, int32(len(s)))
	return append(b, s...)
}

// AppendBytes appends a VInt length and the bytes (the form Token.write uses).
func AppendBytes(b []byte, p []byte) []byte {
	b = AppendVInt(b, int32(len(p)))
	return append(b, p...)
}

// Reader decodes Writable primitives from a byte stream.
type Reader struct {
	r io.ByteReader
	f io.Reader
}

// NewReader wraps r; it reads byte by byte through a bufio.Reader unless r already is one.
func NewReader(r io.Reader) *Reader {
	br, ok := r.(interface {
		io.ByteReader
		io.Reader
	})
	if !ok {
		b := bufio.NewReader(r)
		return &Reader{r: b, f: b}
	}
	return &Reader{r: br, f: br}
}

// VLong reads a WritableUtils VLong.
func (r *Reader) VLong() (int64, error) {
	first, err := r.r.ReadByte()
	if err != nil {
		return 0, err
	}
	fb := int8(first)
	if fb >= -112 {
		return int64(fb), nil
	}
	negative := fb < -120
	n := int(-112 - int(fb))
	if negative {
		n = int(-120 - int(fb))
	}
	var v int64
	for i := 0; i < n; i++ {
		c, err := r.r.ReadByte()
		if err != nil {
			return 0, unexpected(err)
		}
		v = v<<8 | int64(c)
	}
	if negative {
		v = ^v
	}
	return v, nil
}

// VInt reads a VLong and checks that it fits an int32, as WritableUtils.readVInt does.
func (r *Reader) VInt() (int32, error) {
	v, err := r.VLong()
	if err != nil {
		return 0, err
	}
	if v > 1<<31-1 || v < -(1<<31) {
		return 0, fmt.Errorf("writable: value %d too long to fit in integer", v)
	}
	return int32(v), nil
}

// Bytes reads a VInt length (0..limit) and that many bytes.
func (r *Reader) Bytes(limit int) ([]byte, error) {
	n, err := r.VInt()
	if err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, fmt.Errorf("writable: negative length %d", n)
	}
	if int(n) > limit {
		return nil, fmt.Errorf("%w: %d > %d", ErrTooLong, n, limit)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r.f, buf); err != nil {
		return nil, unexpected(err)
	}
	return buf, nil
}

// Text reads a Hadoop Text of at most MaxTextLength bytes.
func (r *Reader) Text() (string, error) {
	b, err := r.Bytes(MaxTextLength)
	return string(b), err
}

// Byte reads one raw byte.
func (r *Reader) Byte() (byte, error) { return r.r.ReadByte() }

// Full reads exactly len(p) bytes.
func (r *Reader) Full(p []byte) error {
	_, err := io.ReadFull(r.f, p)
	return unexpected(err)
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
