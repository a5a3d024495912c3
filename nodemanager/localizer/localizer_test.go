package localizer

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"google.golang.org/protobuf/proto"
)

// publicDir is a temp dir everyone may search (t.TempDir makes 0700 dirs, which keep
// their files out of the public cache).
func publicDir(t *testing.T) string {
	d := t.TempDir()
	os.Chmod(d, 0o755)
	os.Chmod(filepath.Dir(d), 0o755)
	return d
}

func writeZip(t *testing.T, path string, files map[string]string) {
	t.Helper()
	f, _ := os.Create(path)
	zw := zip.NewWriter(f)
	for name, body := range files {
		w, _ := zw.Create(name)
		w.Write([]byte(body))
	}
	zw.Close()
	f.Close()
}

func writeTgz(t *testing.T, path string, files map[string]string) {
	t.Helper()
	f, _ := os.Create(path)
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	for name, body := range files {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(body)), Typeflag: tar.TypeReg})
		tw.Write([]byte(body))
	}
	tw.Close()
	gz.Close()
	f.Close()
}

// resource describes a local file as a client would: file:// URL and its mtime.
func resource(t *testing.T, link, path string, typ yarnpb.LocalResourceTypeProto, vis yarnpb.LocalResourceVisibilityProto) Resource {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	p := &yarnpb.LocalResourceProto{Resource: &yarnpb.URLProto{Scheme: proto.String("file"), Port: proto.Int32(-1), File: proto.String(path)},
		Size: proto.Int64(st.Size()), Timestamp: proto.Int64(st.ModTime().UnixMilli()), Type: typ.Enum(), Visibility: vis.Enum(),
		Pattern: proto.String("(?:classes/|lib/).*")}
	return FromProto(link, p)
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFileArchivePatternAndVisibility(t *testing.T) {
	src, local := publicDir(t), t.TempDir()
	os.WriteFile(filepath.Join(src, "job.xml"), []byte("<configuration/>"), 0o644)
	writeZip(t, filepath.Join(src, "job.jar"), map[string]string{"classes/a.class": "A", "lib/dep.jar": "D", "org/x/Main.class": "M"})
	writeZip(t, filepath.Join(src, "__spark_libs__123.zip"), map[string]string{"spark-core.jar": "S"})
	writeTgz(t, filepath.Join(src, "tools.tgz"), map[string]string{"bin/tool": "#!/bin/sh\n"})
	l := New(Options{LocalDirs: []string{local}})
	res := []Resource{
		resource(t, "job.xml", filepath.Join(src, "job.xml"), yarnpb.LocalResourceTypeProto_FILE, yarnpb.LocalResourceVisibilityProto_APPLICATION),
		resource(t, "job.jar", filepath.Join(src, "job.jar"), yarnpb.LocalResourceTypeProto_PATTERN, yarnpb.LocalResourceVisibilityProto_APPLICATION),
		resource(t, "__spark_libs__", filepath.Join(src, "__spark_libs__123.zip"), yarnpb.LocalResourceTypeProto_ARCHIVE, yarnpb.LocalResourceVisibilityProto_PRIVATE),
		resource(t, "tools", filepath.Join(src, "tools.tgz"), yarnpb.LocalResourceTypeProto_ARCHIVE, yarnpb.LocalResourceVisibilityProto_PUBLIC),
	}
	z, err := l.Localize(context.Background(), "alice", "application_1_0001", res)
	if err != nil {
		t.Fatal(err)
	}
	if p := z.Paths["job.xml"]; !strings.Contains(p, "/usercache/alice/appcache/application_1_0001/filecache/") || read(t, p) != "<configuration/>" {
		t.Fatalf("job.xml at %s", p)
	}
	jar := z.Paths["job.jar"]
	if read(t, filepath.Join(jar, "classes/a.class")) != "A" || read(t, filepath.Join(jar, "lib/dep.jar")) != "D" {
		t.Fatal("pattern entries not unpacked")
	}
	if _, err := os.Stat(filepath.Join(jar, "org/x/Main.class")); err == nil {
		t.Fatal("an entry outside the pattern was unpacked")
	}
	if st, err := os.Stat(filepath.Join(jar, "job.jar")); err != nil || st.Size() == 0 {
		t.Fatal("the jar itself is not inside its directory")
	}
	if p := z.Paths["__spark_libs__"]; !strings.Contains(p, "/usercache/alice/filecache/") || read(t, filepath.Join(p, "spark-core.jar")) != "S" {
		t.Fatalf("zip at %s", p)
	}
	if p := z.Paths["tools"]; !strings.HasPrefix(p, filepath.Join(local, "filecache")) || read(t, filepath.Join(p, "bin/tool")) != "#!/bin/sh\n" {
		t.Fatalf("tgz at %s", p)
	}
	// A second container reuses the cache; another user shares only PUBLIC.
	z2, err := l.Localize(context.Background(), "alice", "application_1_0001", res)
	if err != nil || z2.Paths["job.jar"] != jar {
		t.Fatalf("cache not reused: %v %v", z2, err)
	}
	z3, err := l.Localize(context.Background(), "bob", "application_1_0002", res[2:])
	if err != nil || z3.Paths["tools"] != z.Paths["tools"] || z3.Paths["__spark_libs__"] == z.Paths["__spark_libs__"] {
		t.Fatalf("visibility: %v %v", z3, err)
	}
	z.Release()
	z2.Release()
	if err := l.CleanupApp("alice", "application_1_0001"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(jar); !os.IsNotExist(err) {
		t.Fatal("application resources survived the application")
	}
	if _, err := os.Stat(z.Paths["tools"]); err != nil {
		t.Fatal("public cache removed with an application")
	}
}

func TestChangedMissingAndHostileSources(t *testing.T) {
	src, local := publicDir(t), t.TempDir()
	os.WriteFile(filepath.Join(src, "a.txt"), []byte("a"), 0o644)
	l := New(Options{LocalDirs: []string{local}})
	r := resource(t, "a.txt", filepath.Join(src, "a.txt"), yarnpb.LocalResourceTypeProto_FILE, yarnpb.LocalResourceVisibilityProto_APPLICATION)
	// A timestamp taken through a file system of whole seconds (a UML guest's hostfs) is
	// the source's; another second, or a millisecond off, is not.
	mtime := time.UnixMilli(r.Timestamp/1000*1000 + 123)
	os.Chtimes(filepath.Join(src, "a.txt"), mtime, mtime)
	r.Timestamp = mtime.UnixMilli() / 1000 * 1000
	if _, err := l.Localize(context.Background(), "u", "app", []Resource{r}); err != nil {
		t.Fatalf("whole-second timestamp refused: %v", err)
	}
	for _, ts := range []int64{r.Timestamp + 1000, r.Timestamp + 124} {
		r.Timestamp = ts
		_, err := l.Localize(context.Background(), "u", "app", []Resource{r})
		if err == nil || !strings.Contains(err.Error(), "changed on src filesystem (expected") {
			t.Fatalf("timestamp %d: err = %v", ts, err)
		}
	}
	r.Timestamp++
	_, err := l.Localize(context.Background(), "u", "app", []Resource{r})
	if err == nil || !strings.Contains(err.Error(), "changed on src filesystem (expected") {
		t.Fatalf("err = %v", err)
	}
	r.URL = "file://" + filepath.Join(src, "missing")
	if _, err := l.Localize(context.Background(), "u", "app", []Resource{r}); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("err = %v", err)
	}
	writeZip(t, filepath.Join(src, "evil.zip"), map[string]string{"../../escape": "x"})
	ev := resource(t, "evil", filepath.Join(src, "evil.zip"), yarnpb.LocalResourceTypeProto_ARCHIVE, yarnpb.LocalResourceVisibilityProto_APPLICATION)
	if _, err := l.Localize(context.Background(), "u", "app", []Resource{ev}); err == nil || !strings.Contains(err.Error(), "escapes") {
		t.Fatalf("err = %v", err)
	}
	// A PUBLIC resource must be readable by everyone.
	os.WriteFile(filepath.Join(src, "secret"), []byte("s"), 0o600)
	sec := resource(t, "secret", filepath.Join(src, "secret"), yarnpb.LocalResourceTypeProto_FILE, yarnpb.LocalResourceVisibilityProto_PUBLIC)
	if _, err := l.Localize(context.Background(), "u", "app", []Resource{sec}); err == nil || !strings.Contains(err.Error(), "is not publicly accessable") {
		t.Fatalf("err = %v", err)
	}
	sec.Visibility = yarnpb.LocalResourceVisibilityProto_PRIVATE
	if _, err := l.Localize(context.Background(), "u", "app", []Resource{sec}); err != nil {
		t.Fatalf("private: %v", err)
	}
	r.URL = "s3a://bucket/x"
	if _, err := l.Localize(context.Background(), "u", "app", []Resource{r}); err == nil || !strings.Contains(err.Error(), "No FileSystem for scheme: s3a") {
		t.Fatalf("err = %v", err)
	}
}

// Many containers asking at once for one resource share a single download.
func TestConcurrentRequestsShareDownload(t *testing.T) {
	src, local := publicDir(t), t.TempDir()
	os.WriteFile(filepath.Join(src, "big"), make([]byte, 1<<20), 0o644)
	l := New(Options{LocalDirs: []string{local}})
	r := resource(t, "big", filepath.Join(src, "big"), yarnpb.LocalResourceTypeProto_FILE, yarnpb.LocalResourceVisibilityProto_PUBLIC)
	var wg sync.WaitGroup
	paths := make([]string, 16)
	for i := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			z, err := l.Localize(context.Background(), "u", "app", []Resource{r})
			if err != nil {
				t.Error(err)
				return
			}
			paths[i] = z.Paths["big"]
		}()
	}
	wg.Wait()
	for _, p := range paths {
		if p != paths[0] {
			t.Fatalf("paths differ: %v", paths)
		}
	}
	dirs, _ := os.ReadDir(filepath.Join(local, "filecache"))
	if len(dirs) != 1 {
		t.Fatalf("%d downloads", len(dirs))
	}
}

// Unreferenced cached resources are deleted, oldest first, down to the target size.
func TestTrimCache(t *testing.T) {
	src, local := publicDir(t), t.TempDir()
	l := New(Options{LocalDirs: []string{local}})
	var zs []*Localized
	for _, name := range []string{"a", "b", "c"} {
		p := filepath.Join(src, name)
		os.WriteFile(p, make([]byte, 1000), 0o644)
		z, err := l.Localize(context.Background(), "u", "app", []Resource{resource(t, name, p, yarnpb.LocalResourceTypeProto_FILE, yarnpb.LocalResourceVisibilityProto_PUBLIC)})
		if err != nil {
			t.Fatal(err)
		}
		zs = append(zs, z)
	}
	if l.CacheSize() != 3000 {
		t.Fatalf("cache %d", l.CacheSize())
	}
	zs[0].Release()
	zs[1].Release() // c stays in use
	if freed := l.Trim(1500); freed != 2000 || l.CacheSize() != 1000 {
		t.Fatalf("freed %d, left %d", freed, l.CacheSize())
	}
	if _, err := os.Stat(zs[0].Paths["a"]); !os.IsNotExist(err) {
		t.Fatal("trimmed file still on disk")
	}
	if _, err := os.Stat(zs[2].Paths["c"]); err != nil {
		t.Fatal("a resource in use was trimmed")
	}
}

type journal struct {
	got     []CachedResource
	removed []string
}

func (j *journal) Localized(r CachedResource) { j.got = append(j.got, r) }
func (j *journal) Removed(dirs []string)      { j.removed = append(j.removed, dirs...) }

// A restarted NodeManager's localizer takes back what the journal recorded: the cached
// file is used again without a download (its source may be gone), Acquire references it
// for a running container, new downloads do not reuse its directory, and an entry whose
// files are gone is reported so.
func TestRestoreFromJournal(t *testing.T) {
	src, local := publicDir(t), t.TempDir()
	os.WriteFile(filepath.Join(src, "a.txt"), []byte("a"), 0o644)
	j := &journal{}
	l := New(Options{LocalDirs: []string{local}, Journal: j})
	r := resource(t, "a.txt", filepath.Join(src, "a.txt"), yarnpb.LocalResourceTypeProto_FILE, yarnpb.LocalResourceVisibilityProto_PUBLIC)
	z, err := l.Localize(context.Background(), "u", "app", []Resource{r})
	if err != nil || len(j.got) != 1 {
		t.Fatalf("localize: %v, journal %+v", err, j.got)
	}
	z.Release()
	os.Remove(filepath.Join(src, "a.txt")) // only the cache has it now
	again := New(Options{LocalDirs: []string{local}})
	missing := j.got[0]
	missing.Dir, missing.Path = filepath.Join(local, "filecache", "99"), filepath.Join(local, "filecache", "99", "gone")
	if gone := again.Restore([]CachedResource{j.got[0], missing}); len(gone) != 1 || gone[0] != missing.Dir {
		t.Fatalf("gone %v", gone)
	}
	held := again.Acquire("u", "app", []Resource{r})
	if held.Paths["a.txt"] != j.got[0].Path {
		t.Fatalf("acquired %v, recorded %s", held.Paths, j.got[0].Path)
	}
	if freed := again.Trim(0); freed != 0 {
		t.Fatalf("trim freed %d bytes a running container holds", freed)
	}
	held.Release()
	z, err = again.Localize(context.Background(), "u", "app", []Resource{r})
	if err != nil || z.Paths["a.txt"] != j.got[0].Path {
		t.Fatalf("restored entry not reused: %v %v", z, err)
	}
	z.Release()
	os.WriteFile(filepath.Join(src, "b.txt"), []byte("b"), 0o644)
	b := resource(t, "b.txt", filepath.Join(src, "b.txt"), yarnpb.LocalResourceTypeProto_FILE, yarnpb.LocalResourceVisibilityProto_PUBLIC)
	zb, err := again.Localize(context.Background(), "u", "app", []Resource{b})
	if err != nil || filepath.Dir(zb.Paths["b.txt"]) == j.got[0].Dir {
		t.Fatalf("new download %v (%v) reused the restored directory %s", zb, err, j.got[0].Dir)
	}
}
