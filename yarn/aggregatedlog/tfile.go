package aggregatedlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
)

// TFile (org.apache.hadoop.io.file.tfile) as Hadoop's aggregated logs use it: unsorted
// string keys, no compression. A file is a BCFile:
//
//	magic (16 bytes)
//	data blocks: records, each key (VInt length, bytes) and value (chunks: VInt -n then n
//	    bytes for a chunk with more to come, VInt n >= 0 then n bytes for the last)
//	meta block "TFile.meta":  Version(1,0), VLong records, String comparator ("")
//	meta block "TFile.index": VInt n, then n bytes: VInt len + the first key; per data
//	    block VInt n, then n bytes: VInt len + its last key, VLong its record count
//	meta block "BCFile.index": String compression, VInt blocks, per block VLong offset,
//	    VLong compressed size, VLong raw size
//	meta index: VInt entries, per entry String "data:"+name, String compression, region
//	trailer: int64 offset of the meta index, Version(1,0), magic
//
// testdata/apache-2.7.3-dshell.tfile is a file the Apache 2.7.3 NodeManager wrote; the
// writer reproduces it byte for byte.

var magic = [16]byte{0xd1, 0x11, 0xd3, 0x68, 0x91, 0xb5, 0xd7, 0xb6, 0x39, 0xdf, 0x41, 0x40, 0x92, 0xba, 0xe1, 0x50}

const (
	compressionNone = "none"
	// minBlockSize is where a data block ends (after the record that reaches it): the
	// 256 KiB AggregatedLogFormat.LogWriter passes.
	minBlockSize = 256 << 10
	// chunkSize is the value chunk buffer (tfile.io.chunk.size's 1 MiB default).
	chunkSize = 1 << 20
)

type region struct{ offset, size int64 }

type indexEntry struct {
	lastKey []byte
	records int64
}

// tfileWriter writes a TFile to w, which must start empty.
type tfileWriter struct {
	w   *countingWriter
	err error

	blockStart int64 // offset of the data block being written; -1 when none
	blockRecs  int64
	lastKey    []byte
	firstKey   []byte
	records    int64
	blocks     []region
	index      []indexEntry
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func newTFileWriter(w io.Writer) *tfileWriter {
	t := &tfileWriter{w: &countingWriter{w: w}, blockStart: -1}
	t.write(magic[:])
	return t
}

func (t *tfileWriter) write(p []byte) {
	if t.err == nil {
		_, t.err = t.w.Write(p)
	}
}

// append writes one record; value writes the value's bytes to the writer it is given.
func (t *tfileWriter) append(key []byte, value func(io.Writer) error) error {
	if t.err != nil {
		return t.err
	}
	if t.blockStart < 0 {
		t.blockStart = t.w.n
	}
	t.write(appendVLong(nil, int64(len(key))))
	t.write(key)
	if t.firstKey == nil {
		t.firstKey = append([]byte(nil), key...)
	}
	t.lastKey = append(t.lastKey[:0], key...)
	enc := &chunkEncoder{t: t}
	if err := value(enc); err != nil {
		if t.err == nil {
			t.err = err
		}
		return t.err
	}
	enc.close()
	if t.err != nil {
		return t.err
	}
	t.records++
	t.blockRecs++
	if t.w.n-t.blockStart >= minBlockSize {
		t.finishBlock()
	}
	return nil
}

func (t *tfileWriter) finishBlock() {
	if t.blockStart < 0 {
		return
	}
	t.blocks = append(t.blocks, region{t.blockStart, t.w.n - t.blockStart})
	t.index = append(t.index, indexEntry{lastKey: append([]byte(nil), t.lastKey...), records: t.blockRecs})
	t.blockStart, t.blockRecs = -1, 0
}

// close writes the meta blocks and the trailer.
func (t *tfileWriter) close() error {
	t.finishBlock()
	type meta struct {
		name string
		region
	}
	var metas []meta
	metaBlock := func(name string, b []byte) {
		metas = append(metas, meta{name, region{t.w.n, int64(len(b))}})
		t.write(b)
	}
	// TFile.meta: API version 1.0, the record count, no comparator.
	b := binary.BigEndian.AppendUint16(nil, 1)
	b = binary.BigEndian.AppendUint16(b, 0)
	b = appendVLong(b, t.records)
	b = appendString(b, "")
	metaBlock("TFile.meta", b)
	// TFile.index.
	b = nil
	if t.firstKey == nil {
		b = appendVLong(b, 0)
	} else {
		first := appendVLong(nil, int64(len(t.firstKey)))
		first = append(first, t.firstKey...)
		b = appendVLong(b, int64(len(first)))
		b = append(b, first...)
		for _, e := range t.index {
			entry := appendVLong(nil, int64(len(e.lastKey)))
			entry = append(entry, e.lastKey...)
			entry = appendVLong(entry, e.records)
			b = appendVLong(b, int64(len(entry)))
			b = append(b, entry...)
		}
	}
	metaBlock("TFile.index", b)
	// BCFile.index: the data blocks.
	b = appendString(nil, compressionNone)
	b = appendVLong(b, int64(len(t.blocks)))
	for _, r := range t.blocks {
		b = appendVLong(b, r.offset)
		b = appendVLong(b, r.size)
		b = appendVLong(b, r.size)
	}
	metaBlock("BCFile.index", b)
	// The meta index, sorted by name as the Java TreeMap keeps it.
	metaIndexAt := t.w.n
	b = appendVLong(nil, int64(len(metas)))
	for _, name := range []string{"BCFile.index", "TFile.index", "TFile.meta"} {
		for _, m := range metas {
			if m.name == name {
				b = appendString(b, "data:"+m.name)
				b = appendString(b, compressionNone)
				b = appendVLong(b, m.offset)
				b = appendVLong(b, m.size)
				b = appendVLong(b, m.size)
			}
		}
	}
	b = binary.BigEndian.AppendUint64(b, uint64(metaIndexAt))
	b = binary.BigEndian.AppendUint16(b, 1)
	b = binary.BigEndian.AppendUint16(b, 0)
	b = append(b, magic[:]...)
	t.write(b)
	return t.err
}

// chunkEncoder is TFile's Chunk.ChunkEncoder: a value of unknown length as chunks, the
// buffered bytes going out as one chunk with more to come when the buffer would overflow.
type chunkEncoder struct {
	t   *tfileWriter
	buf []byte
}

func (c *chunkEncoder) Write(p []byte) (int, error) {
	if c.t.err != nil {
		return 0, c.t.err
	}
	if len(c.buf)+len(p) >= chunkSize {
		c.t.write(appendVLong(nil, -int64(len(c.buf)+len(p))))
		c.t.write(c.buf)
		c.t.write(p)
		c.buf = c.buf[:0]
		return len(p), c.t.err
	}
	c.buf = append(c.buf, p...)
	return len(p), nil
}

func (c *chunkEncoder) close() {
	c.t.write(appendVLong(nil, int64(len(c.buf))))
	c.t.write(c.buf)
}

// appendVLong is org.apache.hadoop.io.file.tfile.Utils.writeVLong (not WritableUtils'):
// -32..127 in one byte; otherwise a first byte that says how many follow and carries
// the top bits.
func appendVLong(b []byte, n int64) []byte {
	if n < 128 && n >= -32 {
		return append(b, byte(n))
	}
	un := n
	if n < 0 {
		un = ^n
	}
	size := (64-bits.LeadingZeros64(uint64(un)))/8 + 1
	first := n >> ((size - 1) * 8)
	switch size {
	case 1:
		first >>= 8
		fallthrough
	case 2:
		if first < 20 && first >= -20 {
			return append(b, byte(first-52), byte(n))
		}
		first >>= 8
		fallthrough
	case 3:
		if first < 16 && first >= -16 {
			return append(b, byte(first-88), byte(n>>8), byte(n))
		}
		first >>= 8
		fallthrough
	case 4:
		if first < 8 && first >= -8 {
			return append(b, byte(first-112), byte(n>>16), byte(n>>8), byte(n))
		}
		b = append(b, byte(size-129))
		return binary.BigEndian.AppendUint32(b, uint32(n))
	}
	b = append(b, byte(size-129))
	for i := size - 1; i >= 0; i-- {
		b = append(b, byte(n>>(8*i)))
	}
	return b
}

// readVLong is Utils.readVLong.
func readVLong(b []byte) (int64, int, error) {
	if len(b) == 0 {
		return 0, 0, io.ErrUnexpectedEOF
	}
	first := int64(int8(b[0]))
	if first >= -32 {
		return first, 1, nil
	}
	need := func(n int) error {
		if len(b) < n {
			return io.ErrUnexpectedEOF
		}
		return nil
	}
	switch (first + 128) / 8 {
	case 11, 10, 9, 8, 7:
		if err := need(2); err != nil {
			return 0, 0, err
		}
		return (first+52)<<8 | int64(b[1]), 2, nil
	case 6, 5, 4, 3:
		if err := need(3); err != nil {
			return 0, 0, err
		}
		return (first+88)<<16 | int64(b[1])<<8 | int64(b[2]), 3, nil
	case 2, 1:
		if err := need(4); err != nil {
			return 0, 0, err
		}
		return (first+112)<<24 | int64(b[1])<<16 | int64(b[2])<<8 | int64(b[3]), 4, nil
	case 0:
		size := int(first + 129)
		if size < 4 || size > 8 {
			return 0, 0, fmt.Errorf("tfile: bad vlong length %d", size)
		}
		if err := need(1 + size); err != nil {
			return 0, 0, err
		}
		v := int64(int8(b[1])) // sign-extended top byte
		for _, c := range b[2 : 1+size] {
			v = v<<8 | int64(c)
		}
		return v, 1 + size, nil
	}
	return 0, 0, errors.New("tfile: bad vlong")
}

// appendString is Utils.writeString: VInt length and UTF-8 bytes.
func appendString(b []byte, s string) []byte {
	b = appendVLong(b, int64(len(s)))
	return append(b, s...)
}
