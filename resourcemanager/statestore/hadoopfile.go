package statestore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Files as Hadoop's LocalFileSystem (a ChecksumFileSystem) keeps them, so that a Java RM
// reads what Bobbin wrote and the other way: each file "name" has a checksum file
// ".name.crc" beside it ("crc\0", the bytes per checksum as a big-endian int32 — 512 —
// then the CRC-32 of each 512-byte chunk). A Java reader checks a file against its .crc
// when there is one, so a file is never left beside a .crc of other bytes.

const crcChunk = 512

// crcName is the checksum file of path.
func crcName(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".crc")
}

// crcOf is the checksum file's bytes for data.
func crcOf(data []byte) []byte {
	b := make([]byte, 0, 8+4*(len(data)/crcChunk+1))
	b = append(b, 'c', 'r', 'c', 0)
	b = binary.BigEndian.AppendUint32(b, crcChunk)
	for i := 0; i < len(data); i += crcChunk {
		b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(data[i:min(i+crcChunk, len(data))]))
	}
	return b
}

// readHadoopFile reads path and checks it against its .crc when it has one: a mismatch
// is an error naming the file (a torn or damaged record is never taken as data).
func readHadoopFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sum, err := os.ReadFile(crcName(path))
	if errors.Is(err, fs.ErrNotExist) {
		return data, nil
	}
	if err != nil {
		return nil, err
	}
	if len(sum) < 8 || string(sum[:4]) != "crc\x00" {
		return nil, fmt.Errorf("%s: its checksum file %s is not one", path, crcName(path))
	}
	per := int(binary.BigEndian.Uint32(sum[4:8]))
	if per <= 0 {
		return nil, fmt.Errorf("%s: its checksum file says %d bytes per checksum", path, per)
	}
	sums := sum[8:]
	if want := 4 * ((len(data) + per - 1) / per); len(sums) != want {
		return nil, fmt.Errorf("%s: its checksum file covers %d bytes' chunks, the file has %d bytes (damaged or torn)", path, len(sums)/4*per, len(data))
	}
	for i, n := 0, 0; i < len(data); i, n = i+per, n+1 {
		if len(sums) < 4*(n+1) {
			return nil, fmt.Errorf("%s: its checksum file ends before the data (damaged or torn)", path)
		}
		if crc32.ChecksumIEEE(data[i:min(i+per, len(data))]) != binary.BigEndian.Uint32(sums[4*n:]) {
			return nil, fmt.Errorf("%s: checksum error at byte %d (damaged record)", path, i)
		}
	}
	return data, nil
}

// writeHadoopFile replaces path with data, crash-safely and as a Java reader expects: the
// data and its checksum are written to "name.tmp" and its .crc and synced, the old
// checksum is removed, then the data and the checksum are renamed into place. A crash
// leaves the old file, or the new one without a checksum, or the new one with its own:
// never bytes beside another's checksum. A "name.tmp" left by a crash is what the Java
// RM removes as a partial record on its next load (so does Bobbin's).
func writeHadoopFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := writeSynced(tmp, data); err != nil {
		return err
	}
	if err := writeSynced(crcName(tmp), crcOf(data)); err != nil {
		return err
	}
	if err := os.Remove(crcName(path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	if err := os.Rename(crcName(tmp), crcName(path)); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// removeHadoopFile removes path and its checksum file.
func removeHadoopFile(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Remove(crcName(path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// finishHadoopWrites completes what a writer stopped in the middle of in dir, as the Java
// RM does before it loads: "name.new" (an update written whole, not yet renamed) replaces
// "name"; "name.tmp" (a write cut short) is removed.
func finishHadoopWrites(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || e.IsDir() {
			continue
		}
		p := filepath.Join(dir, name)
		switch {
		case strings.HasSuffix(name, ".tmp"):
			if err := removeHadoopFile(p); err != nil {
				return err
			}
		case strings.HasSuffix(name, ".new"):
			dst := strings.TrimSuffix(p, ".new")
			if err := removeHadoopFile(dst); err != nil {
				return err
			}
			if err := os.Rename(p, dst); err != nil {
				return err
			}
			if err := os.Rename(crcName(p), crcName(dst)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
