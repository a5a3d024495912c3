package localizer

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/colinmarc/hdfs/v2"
)

// HDFS reads hdfs:// sources with colinmarc/hdfs: a client per (namenode, user) call, as
// each download acts as the application's user.
type HDFS struct {
	// DefaultNameNode is used for URLs without a host (hdfs:///path): fs.defaultFS's
	// host:port.
	DefaultNameNode string
}

func (h HDFS) client(u *url.URL, user string) (*hdfs.Client, error) {
	addr := u.Host
	if addr == "" {
		addr = h.DefaultNameNode
	}
	if addr == "" {
		return nil, fmt.Errorf("hdfs URL %s names no namenode and fs.defaultFS has none", u)
	}
	if u.Port() == "" {
		addr += ":8020"
	}
	c, err := hdfs.NewClient(hdfs.ClientOptions{Addresses: []string{addr}, User: user})
	if err != nil {
		return nil, fmt.Errorf("hdfs %s: %w", addr, err)
	}
	return c, nil
}

// Stat implements FileSystem.
func (h HDFS) Stat(_ context.Context, u *url.URL, user string) (time.Time, bool, error) {
	c, err := h.client(u, user)
	if err != nil {
		return time.Time{}, false, err
	}
	defer c.Close()
	st, err := c.Stat(u.Path)
	if err != nil {
		return time.Time{}, false, err
	}
	return st.ModTime(), st.IsDir(), nil
}

// Public implements FileSystem.
func (h HDFS) Public(_ context.Context, u *url.URL, user string) (bool, error) {
	c, err := h.client(u, user)
	if err != nil {
		return false, err
	}
	defer c.Close()
	return publicPath(u.Path, func(p string) (os.FileMode, error) {
		st, err := c.Stat(p)
		if err != nil {
			return 0, err
		}
		return st.Mode(), nil
	})
}

// Copy implements FileSystem.
func (h HDFS) Copy(_ context.Context, u *url.URL, user, dst string) error {
	c, err := h.client(u, user)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Walk(u.Path, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(path.Clean(u.Path), p)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		r, err := c.Open(p)
		if err != nil {
			return err
		}
		defer r.Close()
		return writeFile(target, r, info.Mode().Perm())
	})
}
