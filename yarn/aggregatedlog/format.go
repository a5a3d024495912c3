// Package aggregatedlog writes and reads Hadoop's aggregated container logs
// (AggregatedLogFormat in a TFile, one file per node and application), the files
// `yarn logs` prints, and names where they live on the remote file system.
package aggregatedlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf16"
)

// Version is AggregatedLogFormat's format version.
const Version = 1

// The keys of the records that are not containers'.
const (
	keyVersion = "VERSION"
	keyACL     = "APPLICATION_ACL"
	keyOwner   = "APPLICATION_OWNER"
)

// ACL is one application access type and its ACL string (VIEW_APP, MODIFY_APP).
type ACL struct{ Type, ACL string }

// LogFile is one of a container's log files: its name (the log type) and its bytes.
type LogFile struct {
	Name   string
	Length int64
	Open   func() (io.ReadCloser, error)
}

// Writer writes one node's aggregated log file of an application, in the order the Java
// NodeManager does: VERSION, APPLICATION_ACL, APPLICATION_OWNER, then each container.
type Writer struct {
	t *tfileWriter
}

// NewWriter starts a file on w with the application's ACLs and owner.
func NewWriter(w io.Writer, owner string, acls []ACL) (*Writer, error) {
	lw := &Writer{t: newTFileWriter(w)}
	if err := lw.t.append(utf(keyVersion), func(w io.Writer) error {
		_, err := w.Write(binary.BigEndian.AppendUint32(nil, Version))
		return err
	}); err != nil {
		return nil, err
	}
	if err := lw.t.append(utf(keyACL), func(w io.Writer) error {
		var b []byte
		for _, a := range acls {
			b = append(b, utf(a.Type)...)
			b = append(b, utf(a.ACL)...)
		}
		_, err := w.Write(b)
		return err
	}); err != nil {
		return nil, err
	}
	if err := lw.t.append(utf(keyOwner), func(w io.Writer) error {
		_, err := w.Write(utf(owner))
		return err
	}); err != nil {
		return nil, err
	}
	return lw, nil
}

// Append writes one container's log files (in the order given; the Java NM sorts them by
// name). A file that grew since its length was taken is cut at that length; one that
// shrank is padded, so the record stays what its header says.
func (lw *Writer) Append(containerID string, files []LogFile) error {
	return lw.t.append(utf(containerID), func(w io.Writer) error {
		for _, f := range files {
			if _, err := w.Write(utf(f.Name)); err != nil {
				return err
			}
			if _, err := w.Write(utf(strconv.FormatInt(f.Length, 10))); err != nil {
				return err
			}
			if err := copyFile(w, f); err != nil {
				return fmt.Errorf("%s %s: %w", containerID, f.Name, err)
			}
		}
		return nil
	})
}

func copyFile(w io.Writer, f LogFile) error {
	if f.Length == 0 {
		return nil
	}
	r, err := f.Open()
	if err != nil {
		return err
	}
	defer r.Close()
	n, err := io.Copy(w, io.LimitReader(r, f.Length))
	if err != nil {
		return err
	}
	for pad := make([]byte, 4096); n < f.Length; {
		k := min(int64(len(pad)), f.Length-n)
		if _, err := w.Write(pad[:k]); err != nil {
			return err
		}
		n += k
	}
	return nil
}

// Close finishes the file.
func (lw *Writer) Close() error { return lw.t.close() }

// utf is DataOutput.writeUTF: a big-endian 16-bit length and Java's modified UTF-8
// (NUL as C0 80, characters beyond the BMP as two encoded surrogates). Longer strings
// are cut at 65535 bytes, on a character boundary.
func utf(s string) []byte {
	var enc []byte
	for _, r := range s {
		var add []byte
		switch {
		case r == 0:
			add = []byte{0xc0, 0x80}
		case r < 0x80:
			add = []byte{byte(r)}
		case r < 0x800:
			add = []byte{byte(0xc0 | r>>6), byte(0x80 | r&0x3f)}
		case r < 0x10000:
			add = []byte{byte(0xe0 | r>>12), byte(0x80 | (r>>6)&0x3f), byte(0x80 | r&0x3f)}
		default:
			hi, lo := utf16.EncodeRune(r)
			for _, u := range []rune{hi, lo} {
				add = append(add, byte(0xe0|u>>12), byte(0x80|(u>>6)&0x3f), byte(0x80|u&0x3f))
			}
		}
		if len(enc)+len(add) > 0xffff {
			break
		}
		enc = append(enc, add...)
	}
	return append(binary.BigEndian.AppendUint16(nil, uint16(len(enc))), enc...)
}

// readUTF reads a writeUTF string (decoding modified UTF-8 as UTF-8 does; the NUL and
// surrogate forms only occur in names no YARN writes).
func readUTF(b []byte) (string, int, error) {
	if len(b) < 2 {
		return "", 0, io.ErrUnexpectedEOF
	}
	n := int(binary.BigEndian.Uint16(b))
	if len(b) < 2+n {
		return "", 0, io.ErrUnexpectedEOF
	}
	return string(b[2 : 2+n]), 2 + n, nil
}

// NodeFileName is the file a node writes in the application's directory:
// LogAggregationUtils.getNodeString, the node id with ':' turned into '_'.
func NodeFileName(nodeID string) string { return strings.ReplaceAll(nodeID, ":", "_") }

// TmpSuffix marks a file being written; readers skip it.
const TmpSuffix = ".tmp"

// ErrFormat is a file that is not an aggregated log.
var ErrFormat = errors.New("aggregatedlog: not an aggregated log file")
