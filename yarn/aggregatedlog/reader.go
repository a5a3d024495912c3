package aggregatedlog

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
)

// File is one decoded aggregated log file.
type File struct {
	Version    int32
	Owner      string
	ACLs       []ACL
	Containers []Container
}

// Container is one container's logs in a File.
type Container struct {
	ID   string
	Logs []Log
}

// Log is one log file of a container.
type Log struct {
	Type string
	Data []byte
}

// Parse decodes a whole aggregated log file (as written by Writer or the Java
// NodeManager, uncompressed), checking every length against the bytes present.
func Parse(b []byte) (*File, error) {
	const trailer = 8 + 4 + 16
	if len(b) < 16+trailer || !bytes.Equal(b[:16], magic[:]) || !bytes.Equal(b[len(b)-16:], magic[:]) {
		return nil, ErrFormat
	}
	t := b[len(b)-trailer:]
	metaAt := int64(binary.BigEndian.Uint64(t))
	if major := binary.BigEndian.Uint16(t[8:]); major != 1 {
		return nil, fmt.Errorf("%w: BCFile version %d", ErrFormat, major)
	}
	if metaAt < 16 || metaAt > int64(len(b)-trailer) {
		return nil, fmt.Errorf("%w: meta index at %d", ErrFormat, metaAt)
	}
	d := &decoder{b: b[metaAt : len(b)-trailer]}
	metas := map[string]region{}
	for n := d.vlong(); n > 0 && d.err == nil; n-- {
		name, comp := d.str(), d.str()
		r := region{d.vlong(), d.vlong()}
		raw := d.vlong()
		if comp != compressionNone || raw != r.size {
			return nil, fmt.Errorf("%w: meta block %s compressed with %q", ErrFormat, name, comp)
		}
		metas[name] = r
	}
	if d.err != nil {
		return nil, d.err
	}
	block := func(name string) (*decoder, error) {
		r, ok := metas["data:"+name]
		if !ok || r.offset < 16 || r.size < 0 || r.offset+r.size > metaAt {
			return nil, fmt.Errorf("%w: no meta block %s", ErrFormat, name)
		}
		return &decoder{b: b[r.offset : r.offset+r.size]}, nil
	}
	idx, err := block("BCFile.index")
	if err != nil {
		return nil, err
	}
	if comp := idx.str(); comp != compressionNone && idx.err == nil {
		return nil, fmt.Errorf("%w: data compressed with %q (only none is read)", ErrFormat, comp)
	}
	f := &File{}
	for n := idx.vlong(); n > 0 && idx.err == nil; n-- {
		r := region{idx.vlong(), idx.vlong()}
		if raw := idx.vlong(); idx.err == nil && (raw != r.size || r.offset < 16 || r.size < 0 || r.offset+r.size > metaAt) {
			return nil, fmt.Errorf("%w: data block at %d", ErrFormat, r.offset)
		}
		if idx.err != nil {
			break
		}
		if err := f.records(&decoder{b: b[r.offset : r.offset+r.size]}); err != nil {
			return nil, err
		}
	}
	if idx.err != nil {
		return nil, idx.err
	}
	return f, nil
}

// records decodes one data block's records.
func (f *File) records(d *decoder) error {
	for len(d.b) > 0 {
		key := d.bytes(d.vlong())
		var val []byte
		for d.err == nil {
			n := d.vlong()
			if n < 0 {
				val = append(val, d.bytes(-n)...)
				continue
			}
			val = append(val, d.bytes(n)...)
			break
		}
		if d.err != nil {
			return d.err
		}
		k, _, err := readUTF(key)
		if err != nil {
			return fmt.Errorf("%w: key: %v", ErrFormat, err)
		}
		v := &decoder{b: val}
		switch k {
		case keyVersion:
			if len(val) != 4 {
				return fmt.Errorf("%w: version", ErrFormat)
			}
			f.Version = int32(binary.BigEndian.Uint32(val))
		case keyOwner:
			f.Owner = v.utf()
		case keyACL:
			for len(v.b) > 0 && v.err == nil {
				f.ACLs = append(f.ACLs, ACL{v.utf(), v.utf()})
			}
		default:
			c := Container{ID: k}
			for len(v.b) > 0 && v.err == nil {
				typ, length := v.utf(), v.utf()
				n, err := strconv.ParseInt(length, 10, 64)
				if err != nil || n < 0 {
					return fmt.Errorf("%w: %s %s length %q", ErrFormat, k, typ, length)
				}
				c.Logs = append(c.Logs, Log{Type: typ, Data: v.bytes(n)})
			}
			f.Containers = append(f.Containers, c)
		}
		if v.err != nil {
			return fmt.Errorf("%w: record %s: %v", ErrFormat, k, v.err)
		}
	}
	return nil
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) vlong() int64 {
	if d.err != nil {
		return 0
	}
	v, n, err := readVLong(d.b)
	if err != nil {
		d.err = fmt.Errorf("%w: %v", ErrFormat, err)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes(n int64) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > int64(len(d.b)) {
		d.err = fmt.Errorf("%w: %d bytes wanted, %d left", ErrFormat, n, len(d.b))
		return nil
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *decoder) str() string { return string(d.bytes(d.vlong())) }

func (d *decoder) utf() string {
	if d.err != nil {
		return ""
	}
	s, n, err := readUTF(d.b)
	if err != nil {
		d.err = fmt.Errorf("%w: %v", ErrFormat, err)
		return ""
	}
	d.b = d.b[n:]
	return s
}
