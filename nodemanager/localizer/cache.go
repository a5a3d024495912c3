package localizer

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
)

// The caches across NodeManager restarts: a Journal hears of every resource cached and
// dropped (the recovery store keeps them), Restore takes them back in a new process,
// Acquire references those a taken-back container uses, and new downloads never reuse a
// directory an earlier process left.

// Journal records the caches' contents.
type Journal interface {
	Localized(r CachedResource)
	Removed(dirs []string)
}

// CachedResource is one resource in a cache, as a recovery store keeps it.
type CachedResource struct {
	Visibility yarnpb.LocalResourceVisibilityProto `json:"visibility"`
	User       string                              `json:"user,omitempty"`
	App        string                              `json:"app,omitempty"`
	URL        string                              `json:"url"`
	Timestamp  int64                               `json:"timestamp"`
	Type       yarnpb.LocalResourceTypeProto       `json:"type"`
	Pattern    string                              `json:"pattern,omitempty"`
	Dir        string                              `json:"dir"` // its cache directory, <...>/filecache/<n>
	Path       string                              `json:"path"`
	Size       int64                               `json:"size"`
	LastUsed   time.Time                           `json:"last_used"`
}

// Restore takes back the resources a recovery store kept (a NodeManager restart): those
// whose files are still there are cached again, as they were; it returns the cache
// directories of the others, which are gone.
func (l *Localizer) Restore(recs []CachedResource) (gone []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range recs {
		if _, err := os.Lstat(r.Path); err != nil || r.Dir == "" {
			gone = append(gone, r.Dir)
			continue
		}
		k := cacheKey{vis: r.Visibility, user: r.User, app: r.App, url: r.URL, timestamp: r.Timestamp, typ: r.Type, pattern: r.Pattern}
		ready := make(chan struct{})
		close(ready)
		l.entries[k] = &entry{ready: ready, dir: r.Dir, path: r.Path, size: r.Size, lastUsed: r.LastUsed}
		if n, err := strconv.ParseInt(filepath.Base(r.Dir), 10, 64); err == nil && n > l.next.Load() {
			l.next.Store(n)
		}
	}
	return gone
}

// Acquire references the cached resources of a container that is already running (one a
// restarted NodeManager took back), so that trimming keeps them while it runs. Nothing is
// downloaded: a resource not cached is left out.
func (l *Localizer) Acquire(user, app string, res []Resource) *Localized {
	z := &Localized{Paths: map[string]string{}, l: l}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range res {
		k := l.keyOf(r, user, app)
		if e, ok := l.entries[k]; ok && isClosed(e.ready) && e.err == nil {
			e.refs++
			z.keys = append(z.keys, k)
			z.Paths[r.Link] = e.path
		}
	}
	return z
}

// keyOf is a resource's cache key for a container of app run by user.
func (l *Localizer) keyOf(r Resource, user, app string) cacheKey {
	k := cacheKey{vis: r.Visibility, url: r.URL, timestamp: r.Timestamp, typ: r.Type, pattern: r.Pattern}
	switch r.Visibility {
	case yarnpb.LocalResourceVisibilityProto_PUBLIC:
	case yarnpb.LocalResourceVisibilityProto_PRIVATE:
		k.user = user
	default:
		k.user, k.app = user, app
	}
	return k
}

// freeCacheDir picks the next cache number whose directory does not exist yet: one an
// earlier NodeManager process left (not recovered) is not written over.
func (l *Localizer) freeCacheDir(k cacheKey) (string, error) {
	for range 10000 {
		dir, err := l.cacheDir(k, l.next.Add(1))
		if err != nil {
			return "", err
		}
		if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
			return dir, nil
		}
	}
	return "", errors.New("localizer: no free cache directory number")
}
