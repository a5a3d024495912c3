// Package remotefs is the small file-system surface YARN daemons need on the cluster's
// default file system: aggregated logs (written by NodeManagers, read and expired by the
// ResourceManager) live there. It resolves a Hadoop path (with or without a scheme)
// against fs.defaultFS and opens file:// paths on the local disk and hdfs:// paths
// through github.com/colinmarc/hdfs, acting as a given user (SIMPLE authentication).
package remotefs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/colinmarc/hdfs/v2"

	"github.com/bobbin-yarn/bobbin/conf"
)

// FS is a file system rooted at one scheme and authority; paths are absolute, slash
// separated, without the scheme.
type FS interface {
	MkdirAll(p string, perm os.FileMode) error
	// Create creates (or truncates) a file.
	Create(p string) (io.WriteCloser, error)
	Open(p string) (io.ReadCloser, error)
	Rename(from, to string) error
	Chmod(p string, perm os.FileMode) error
	ReadDir(p string) ([]os.FileInfo, error)
	Stat(p string) (os.FileInfo, error)
	RemoveAll(p string) error
	// URI names p for people (logs, diagnostics): scheme://authority/p.
	URI(p string) string
	Close() error
}

// IsLocal reports whether fs is file://, whose paths this process opens itself.
func IsLocal(fs FS) bool {
	_, ok := fs.(local)
	return ok
}

// ErrNotExist is returned (wrapped) for missing paths, whatever the file system.
var ErrNotExist = fs.ErrNotExist

// Resolve splits a Hadoop path into its file system URI ("file://", "hdfs://nn:8020") and
// absolute path, qualifying a path without a scheme against fs.defaultFS.
func Resolve(c *conf.Configuration, p string) (fsURI, abs string, err error) {
	u, err := url.Parse(p)
	if err != nil {
		return "", "", fmt.Errorf("path %q: %w", p, err)
	}
	if u.Scheme == "" {
		def, err := c.Trimmed("fs.defaultFS")
		if err != nil {
			return "", "", err
		}
		d, err := url.Parse(def)
		if err != nil {
			return "", "", fmt.Errorf("fs.defaultFS %q: %w", def, err)
		}
		u.Scheme, u.Host = d.Scheme, d.Host
	}
	if !strings.HasPrefix(u.Path, "/") {
		return "", "", fmt.Errorf("path %q is not absolute", p)
	}
	switch u.Scheme {
	case "file":
		return "file://", path.Clean(u.Path), nil
	case "hdfs":
		return "hdfs://" + u.Host, path.Clean(u.Path), nil
	}
	return "", "", fmt.Errorf("path %q: file system %q is not supported (file:// and hdfs:// are)", p, u.Scheme)
}

// Open opens the file system fsURI (from Resolve) as user.
func Open(c *conf.Configuration, fsURI, user string) (FS, error) {
	if fsURI == "file://" {
		return local{}, nil
	}
	host := strings.TrimPrefix(fsURI, "hdfs://")
	addrs := NameNodes(c, host)
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%s names no namenode and fs.defaultFS has none", fsURI)
	}
	cl, err := hdfs.NewClient(hdfs.ClientOptions{Addresses: addrs, User: user})
	if err != nil {
		return nil, fmt.Errorf("hdfs %s: %w", fsURI, err)
	}
	return &hdfsFS{c: cl, uri: fsURI}, nil
}

// NameNodes are the RPC addresses of the namenodes behind an hdfs:// authority: itself
// when it has a port, the nameservice's namenodes when hdfs-site.xml defines it as one
// (dfs.ha.namenodes.<ns>, dfs.namenode.rpc-address.<ns>.<nn>), else host:8020.
func NameNodes(c *conf.Configuration, authority string) []string {
	if authority == "" {
		def, _ := c.Trimmed("fs.defaultFS")
		if u, err := url.Parse(def); err == nil && u.Scheme == "hdfs" {
			authority = u.Host
		}
		if authority == "" {
			return nil
		}
	}
	if strings.Contains(authority, ":") {
		return []string{authority}
	}
	if nns, err := c.Strings("dfs.ha.namenodes." + authority); err == nil && len(nns) > 0 {
		var out []string
		for _, nn := range nns {
			if a, err := c.Trimmed("dfs.namenode.rpc-address." + authority + "." + nn); err == nil && a != "" {
				out = append(out, a)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	if a, err := c.Trimmed("dfs.namenode.rpc-address." + authority); err == nil && a != "" {
		return []string{a}
	}
	return []string{authority + ":8020"}
}

// local is file://.
type local struct{}

func (local) MkdirAll(p string, perm os.FileMode) error { return os.MkdirAll(p, perm) }
func (local) Create(p string) (io.WriteCloser, error) {
	return os.OpenFile(p, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o640)
}
func (local) Open(p string) (io.ReadCloser, error)   { return os.Open(p) }
func (local) Rename(from, to string) error           { return os.Rename(from, to) }
func (local) Chmod(p string, perm os.FileMode) error { return os.Chmod(p, perm) }
func (local) Stat(p string) (os.FileInfo, error)     { return os.Stat(p) }
func (local) RemoveAll(p string) error               { return os.RemoveAll(p) }
func (local) URI(p string) string                    { return "file://" + filepath.ToSlash(p) }
func (local) Close() error                           { return nil }
func (local) ReadDir(p string) ([]os.FileInfo, error) {
	entries, err := os.ReadDir(p)
	if err != nil {
		return nil, err
	}
	out := make([]os.FileInfo, 0, len(entries))
	for _, e := range entries {
		if fi, err := e.Info(); err == nil {
			out = append(out, fi)
		}
	}
	return out, nil
}

// hdfsFS is hdfs://.
type hdfsFS struct {
	c   *hdfs.Client
	uri string
}

func (h *hdfsFS) MkdirAll(p string, perm os.FileMode) error { return h.c.MkdirAll(p, perm) }
func (h *hdfsFS) Create(p string) (io.WriteCloser, error) {
	if err := h.c.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	w, err := h.c.Create(p)
	if err != nil {
		return nil, err
	}
	return completingWriter{w, time.Sleep}, nil
}

// completingWriter retries Close while the NameNode answers "complete" with false: all
// data is acknowledged by the datanodes but the last block is not yet reported to the
// NameNode (colinmarc/hdfs's ErrReplicating). The Java DFSClient retries the same call
// with a doubling back-off (dfs.client.block.write.locateFollowingBlock.retries, 5,
// from 400 ms); a file whose Close gave up would stay under construction and could not
// be renamed into place.
type completingWriter struct {
	*hdfs.FileWriter
	sleep func(time.Duration)
}

func (w completingWriter) Close() error {
	err := w.FileWriter.Close()
	for delay, try := 400*time.Millisecond, 0; hdfs.IsErrReplicating(err) && try < 6; delay, try = delay*2, try+1 {
		w.sleep(delay)
		err = w.FileWriter.Close()
	}
	return err
}
func (h *hdfsFS) Open(p string) (io.ReadCloser, error)    { return h.c.Open(p) }
func (h *hdfsFS) Rename(from, to string) error            { return h.c.Rename(from, to) }
func (h *hdfsFS) Chmod(p string, perm os.FileMode) error  { return h.c.Chmod(p, perm) }
func (h *hdfsFS) ReadDir(p string) ([]os.FileInfo, error) { return h.c.ReadDir(p) }
func (h *hdfsFS) Stat(p string) (os.FileInfo, error)      { return h.c.Stat(p) }
func (h *hdfsFS) RemoveAll(p string) error                { return h.c.RemoveAll(p) }
func (h *hdfsFS) URI(p string) string                     { return h.uri + p }
func (h *hdfsFS) Close() error                            { return h.c.Close() }
