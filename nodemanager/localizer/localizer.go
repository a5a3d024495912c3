// Package localizer downloads a container's local resources into the NodeManager's
// caches, as Java's ResourceLocalizationService and FSDownload do (protocol.md §5.3):
// FILE copied, ARCHIVE unpacked (zip, jar, tar, tar.gz, tgz) into a directory named after
// the file, PATTERN jars unpacked to the matching entries plus the jar itself; PUBLIC
// resources shared by every user, PRIVATE per user, APPLICATION per application (deleted
// with it); sources on file:// or hdfs:// whose modification time must equal the
// resource's timestamp. Concurrent requests for the same resource share one download;
// a container's resources download in parallel.
package localizer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
)

// Resource is one entry of a launch context's local resources.
type Resource struct {
	Link       string // the name in the container's work dir (may contain "/")
	URL        string // scheme://[user@]host[:port]/path, or file:///path
	Timestamp  int64  // the source's modification time in ms
	Size       int64
	Type       yarnpb.LocalResourceTypeProto
	Visibility yarnpb.LocalResourceVisibilityProto
	Pattern    string // for PATTERN: a Java regex the jar entries must match whole
}

// FromProto converts a LocalResourceProto, rebuilding its URL as Hadoop's
// ConverterUtils.getPathFromYarnURL does.
func FromProto(link string, p *yarnpb.LocalResourceProto) Resource {
	u := p.GetResource()
	var b strings.Builder
	if u.GetScheme() != "" {
		b.WriteString(u.GetScheme() + "://")
	}
	if u.GetUserInfo() != "" {
		b.WriteString(u.GetUserInfo() + "@")
	}
	b.WriteString(u.GetHost())
	if u.GetPort() > 0 {
		b.WriteString(":" + strconv.Itoa(int(u.GetPort())))
	}
	b.WriteString(u.GetFile())
	return Resource{Link: link, URL: b.String(), Timestamp: p.GetTimestamp(), Size: p.GetSize(), Type: p.GetType(),
		Visibility: p.GetVisibility(), Pattern: p.GetPattern()}
}

// FileSystem opens sources of one URL scheme.
type FileSystem interface {
	// Stat returns the source's modification time and whether it is a directory.
	Stat(ctx context.Context, u *url.URL, user string) (modTime time.Time, dir bool, err error)
	// Copy copies the source (a file, or a directory recursively) to dst.
	Copy(ctx context.Context, u *url.URL, user, dst string) error
	// Public reports whether every user may read the source: it is world-readable and
	// every ancestor directory world-executable (FSDownload.isPublic).
	Public(ctx context.Context, u *url.URL, user string) (bool, error)
}

// Options configure a Localizer.
type Options struct {
	// LocalDirs are yarn.nodemanager.local-dirs; caches are spread over them.
	LocalDirs []string
	// FileSystems by URL scheme; "file" is always available.
	FileSystems map[string]FileSystem
	// Journal, when set, hears of every resource the caches gain and lose (a recovery
	// store, so that the caches survive a NodeManager restart).
	Journal Journal
}

// Localizer owns the NodeManager's file caches.
type Localizer struct {
	opts Options
	next atomic.Int64 // cache directory numbers

	mu      sync.Mutex
	entries map[cacheKey]*entry
}

type cacheKey struct {
	vis       yarnpb.LocalResourceVisibilityProto
	user, app string // user for PRIVATE and APPLICATION, app for APPLICATION
	url       string
	timestamp int64
	typ       yarnpb.LocalResourceTypeProto
	pattern   string
}

type entry struct {
	ready    chan struct{} // closed when the download ended
	dir      string        // the cache directory (<...>/filecache/<n>)
	path     string
	err      error
	refs     int
	size     int64
	lastUsed time.Time
}

// New returns a Localizer over the given local dirs.
func New(opts Options) *Localizer {
	if opts.FileSystems == nil {
		opts.FileSystems = map[string]FileSystem{}
	}
	if _, ok := opts.FileSystems["file"]; !ok {
		opts.FileSystems["file"] = LocalFS{}
	}
	return &Localizer{opts: opts, entries: map[cacheKey]*entry{}}
}

// Localized is a container's localized resources: link name → path in a cache.
type Localized struct {
	Paths map[string]string
	keys  []cacheKey
	l     *Localizer
}

// Release gives the container's references back (cached files stay for reuse; an
// application's are removed by CleanupApp).
func (z *Localized) Release() {
	z.l.release(z.keys)
	z.keys = nil
}

// release drops one reference to each cache entry.
func (l *Localizer) release(keys []cacheKey) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range keys {
		if e, ok := l.entries[k]; ok && e.refs > 0 {
			e.refs--
		}
	}
}

// Localize makes every resource available for a container of app run by user,
// downloading in parallel what is not cached. A failure names the resource.
func (l *Localizer) Localize(ctx context.Context, user, app string, res []Resource) (*Localized, error) {
	z := &Localized{Paths: map[string]string{}, l: l}
	type job struct {
		r Resource
		e *entry
	}
	jobs := make([]job, 0, len(res))
	l.mu.Lock()
	for _, r := range res {
		k := l.keyOf(r, user, app)
		e, ok := l.entries[k]
		if !ok || (isClosed(e.ready) && e.err != nil) {
			// New, or an earlier attempt failed: download (again).
			e = &entry{ready: make(chan struct{})}
			l.entries[k] = e
			go l.download(k, e, r, user, app)
		}
		e.refs++
		e.lastUsed = time.Now()
		z.keys = append(z.keys, k)
		jobs = append(jobs, job{r, e})
	}
	l.mu.Unlock()
	var errs []error
	for _, j := range jobs {
		select {
		case <-j.e.ready:
		case <-ctx.Done():
			z.Release()
			return nil, ctx.Err()
		}
		if j.e.err != nil {
			errs = append(errs, j.e.err)
			continue
		}
		z.Paths[j.r.Link] = j.e.path
	}
	if err := errors.Join(errs...); err != nil {
		z.Release()
		return nil, err
	}
	return z, nil
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// cacheDir picks the directory a resource's cache number lives in.
func (l *Localizer) cacheDir(k cacheKey, n int64) (string, error) {
	if len(l.opts.LocalDirs) == 0 {
		return "", errors.New("localizer: no local dirs")
	}
	root := l.opts.LocalDirs[int(n)%len(l.opts.LocalDirs)]
	num := strconv.FormatInt(n, 10)
	switch k.vis {
	case yarnpb.LocalResourceVisibilityProto_PUBLIC:
		return filepath.Join(root, "filecache", num), nil
	case yarnpb.LocalResourceVisibilityProto_PRIVATE:
		return filepath.Join(root, "usercache", k.user, "filecache", num), nil
	default:
		return filepath.Join(root, "usercache", k.user, "appcache", k.app, "filecache", num), nil
	}
}

// download fetches one resource; its goroutine ends when the entry is ready.
func (l *Localizer) download(k cacheKey, e *entry, r Resource, user, app string) {
	defer close(e.ready)
	dir, err := l.freeCacheDir(k)
	if err == nil {
		e.path, err = fetch(context.Background(), l.opts.FileSystems, r, user, dir)
	}
	size := dirSize(dir)
	l.mu.Lock()
	e.dir, e.size = dir, size
	l.mu.Unlock()
	if err != nil {
		os.RemoveAll(dir)
		e.err = fmt.Errorf("resource %s (%s): %w", r.Link, r.URL, err)
		return
	}
	if j := l.opts.Journal; j != nil {
		j.Localized(CachedResource{Visibility: k.vis, User: k.user, App: k.app, URL: k.url, Timestamp: k.timestamp, Type: k.typ, Pattern: k.pattern,
			Dir: dir, Path: e.path, Size: size, LastUsed: time.Now()})
	}
}

// CacheSize is the bytes the PUBLIC and PRIVATE caches hold.
func (l *Localizer) CacheSize() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var n int64
	for k, e := range l.entries {
		if k.app == "" && isClosed(e.ready) {
			n += e.size
		}
	}
	return n
}

// Trim deletes unreferenced PUBLIC and PRIVATE cache entries, least recently used first,
// until the caches hold at most target bytes (yarn.nodemanager.localizer.cache.target-size-mb).
// It returns the bytes freed.
func (l *Localizer) Trim(target int64) int64 {
	l.mu.Lock()
	type cand struct {
		k cacheKey
		e *entry
	}
	var total int64
	var idle []cand
	for k, e := range l.entries {
		if k.app != "" || !isClosed(e.ready) {
			continue
		}
		total += e.size
		if e.refs == 0 {
			idle = append(idle, cand{k, e})
		}
	}
	sort.Slice(idle, func(i, j int) bool { return idle[i].e.lastUsed.Before(idle[j].e.lastUsed) })
	var gone []string
	var freed int64
	for _, c := range idle {
		if total <= target {
			break
		}
		delete(l.entries, c.k)
		total -= c.e.size
		freed += c.e.size
		gone = append(gone, c.e.dir)
	}
	l.mu.Unlock()
	for _, d := range gone {
		os.RemoveAll(d)
	}
	if j := l.opts.Journal; j != nil && len(gone) > 0 {
		j.Removed(gone)
	}
	return freed
}

func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// CleanupApp removes an application's APPLICATION resources and forgets them.
func (l *Localizer) CleanupApp(user, app string) error {
	l.mu.Lock()
	var gone []string
	for k, e := range l.entries {
		if k.app == app && k.user == user {
			delete(l.entries, k)
			if e.dir != "" {
				gone = append(gone, e.dir)
			}
		}
	}
	l.mu.Unlock()
	if j := l.opts.Journal; j != nil && len(gone) > 0 {
		j.Removed(gone)
	}
	var errs []error
	for _, root := range l.opts.LocalDirs {
		if err := os.RemoveAll(filepath.Join(root, "usercache", user, "appcache", app, "filecache")); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// fetch downloads r into dir and returns the localized path: dir/<basename>, a file or
// the directory an archive was unpacked into.
func fetch(ctx context.Context, fss map[string]FileSystem, r Resource, user, dir string) (string, error) {
	u, err := url.Parse(r.URL)
	if err != nil {
		return "", fmt.Errorf("bad URL: %w", err)
	}
	scheme := u.Scheme
	if scheme == "" {
		scheme = "file"
	}
	fsys, ok := fss[scheme]
	if !ok {
		return "", fmt.Errorf("No FileSystem for scheme: %s", scheme)
	}
	mod, isDir, err := fsys.Stat(ctx, u, user)
	if err != nil {
		return "", err
	}
	if got := mod.UnixMilli(); got != r.Timestamp && !secondsOf(got, r.Timestamp) {
		return "", fmt.Errorf("Resource %s changed on src filesystem (expected %d, was %d", r.URL, r.Timestamp, got)
	}
	if r.Visibility == yarnpb.LocalResourceVisibilityProto_PUBLIC {
		ok, err := fsys.Public(ctx, u, user)
		if err != nil {
			return "", err
		}
		if !ok {
			return "", fmt.Errorf("Resource %s is not publicly accessable and as such cannot be part of the public cache.", r.URL)
		}
	}
	base := path.Base(u.Path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	dst := filepath.Join(dir, base)
	kind := archiveKind(base)
	if isDir || r.Type == yarnpb.LocalResourceTypeProto_FILE || kind == "" {
		// FILE, a directory, or an archive type with an unknown extension (Java keeps it as is).
		if err := fsys.Copy(ctx, u, user, dst); err != nil {
			return "", err
		}
		return dst, nil
	}
	// Archives are downloaded next to their unpack directory, then unpacked.
	tmp := filepath.Join(dir, "."+base+".download")
	if err := fsys.Copy(ctx, u, user, tmp); err != nil {
		return "", err
	}
	defer os.Remove(tmp)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return "", err
	}
	switch {
	case r.Type == yarnpb.LocalResourceTypeProto_PATTERN && kind == "zip" && strings.HasSuffix(strings.ToLower(base), ".jar"):
		if err := unzip(tmp, dst, r.Pattern); err != nil {
			return "", err
		}
		// The jar itself goes inside too (MR's classpath has $PWD/job.jar/job.jar).
		if err := copyFile(tmp, filepath.Join(dst, base), 0o644); err != nil {
			return "", err
		}
	case kind == "zip":
		if err := unzip(tmp, dst, ""); err != nil {
			return "", err
		}
	default:
		if err := untar(tmp, dst, kind == "tgz"); err != nil {
			return "", err
		}
	}
	return dst, nil
}

// secondsOf reports whether a resource's timestamp is the source's modification time cut
// to whole seconds: what a client sees through a file system that keeps whole seconds
// only, such as a User-Mode Linux guest's hostfs (an AM in a guest stats the job files its
// client wrote on the host). Only such a timestamp, a multiple of 1000 in the same second,
// is taken for the source's.
func secondsOf(mtimeMs, timestamp int64) bool {
	return timestamp%1000 == 0 && mtimeMs/1000 == timestamp/1000
}

// archiveKind classifies a file name by extension as Java's FSDownload.unpack does.
func archiveKind(name string) string {
	n := strings.ToLower(name)
	switch {
	case strings.HasSuffix(n, ".jar"), strings.HasSuffix(n, ".zip"):
		return "zip"
	case strings.HasSuffix(n, ".tar.gz"), strings.HasSuffix(n, ".tgz"):
		return "tgz"
	case strings.HasSuffix(n, ".tar"):
		return "tar"
	}
	return ""
}

// LocalFS reads file:// sources.
type LocalFS struct{}

// Stat implements FileSystem.
func (LocalFS) Stat(_ context.Context, u *url.URL, _ string) (time.Time, bool, error) {
	st, err := os.Stat(u.Path)
	if err != nil {
		return time.Time{}, false, err
	}
	return st.ModTime(), st.IsDir(), nil
}

// Public implements FileSystem.
func (LocalFS) Public(_ context.Context, u *url.URL, _ string) (bool, error) {
	return publicPath(u.Path, func(p string) (fs.FileMode, error) {
		st, err := os.Stat(p)
		if err != nil {
			return 0, err
		}
		return st.Mode(), nil
	})
}

// publicPath applies the public-cache rule with a stat function: the path (and, for a
// directory, what it holds is not checked here, as FSDownload checks the top) readable by
// others, its ancestors searchable by others.
func publicPath(p string, mode func(string) (fs.FileMode, error)) (bool, error) {
	m, err := mode(p)
	if err != nil {
		return false, err
	}
	if m.Perm()&0o004 == 0 || (m.IsDir() && m.Perm()&0o001 == 0) {
		return false, nil
	}
	for dir := path.Dir(p); ; dir = path.Dir(dir) {
		m, err := mode(dir)
		if err != nil {
			return false, err
		}
		if m.Perm()&0o001 == 0 {
			return false, nil
		}
		if dir == "/" || dir == "." {
			return true, nil
		}
	}
}

// Copy implements FileSystem.
func (LocalFS) Copy(_ context.Context, u *url.URL, _ string, dst string) error {
	src := u.Path
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return copyFile(src, dst, st.Mode().Perm())
	}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return copyFile(p, target, info.Mode().Perm())
	})
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return writeFile(dst, in, perm)
}

func writeFile(dst string, r io.Reader, perm fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm|0o400)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
