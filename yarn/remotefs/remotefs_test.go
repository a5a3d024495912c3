package remotefs

import (
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/bobbin-yarn/bobbin/conf"
)

func TestResolveAgainstDefaultFS(t *testing.T) {
	c := conf.New()
	c.Set("fs.defaultFS", "hdfs://nn.example:9000")
	for _, tc := range []struct{ in, fs, path string }{
		{"/tmp/logs", "hdfs://nn.example:9000", "/tmp/logs"},
		{"file:///var/log/agg/", "file://", "/var/log/agg"},
		{"hdfs://other/app-logs", "hdfs://other", "/app-logs"},
	} {
		fs, p, err := Resolve(c, tc.in)
		if err != nil || fs != tc.fs || p != tc.path {
			t.Fatalf("%s: %s %s %v; want %s %s", tc.in, fs, p, err, tc.fs, tc.path)
		}
	}
	if _, _, err := Resolve(c, "s3a://bucket/logs"); err == nil {
		t.Fatal("s3a accepted")
	}
	if _, _, err := Resolve(c, "relative/logs"); err == nil {
		t.Fatal("a relative path accepted")
	}
}

// An HA nameservice resolves to its namenodes from hdfs-site.xml keys.
func TestNameNodesOfANameservice(t *testing.T) {
	c := conf.New()
	c.Set("dfs.ha.namenodes.prod", "nn1,nn2")
	c.Set("dfs.namenode.rpc-address.prod.nn1", "a:8020")
	c.Set("dfs.namenode.rpc-address.prod.nn2", "b:8020")
	if got := NameNodes(c, "prod"); !reflect.DeepEqual(got, []string{"a:8020", "b:8020"}) {
		t.Fatalf("prod: %v", got)
	}
	if got := NameNodes(c, "plain"); !reflect.DeepEqual(got, []string{"plain:8020"}) {
		t.Fatalf("plain: %v", got)
	}
	if got := NameNodes(c, "h:9000"); !reflect.DeepEqual(got, []string{"h:9000"}) {
		t.Fatalf("h:9000: %v", got)
	}
}

func TestLocalFS(t *testing.T) {
	fs, err := Open(conf.New(), "file://", "me")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "a", "b")
	if err := fs.MkdirAll(dir, 0o770); err != nil {
		t.Fatal(err)
	}
	w, err := fs.Create(filepath.Join(dir, "f.tmp"))
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, "x")
	w.Close()
	if err := fs.Rename(filepath.Join(dir, "f.tmp"), filepath.Join(dir, "f")); err != nil {
		t.Fatal(err)
	}
	infos, err := fs.ReadDir(dir)
	if err != nil || len(infos) != 1 || infos[0].Name() != "f" {
		t.Fatalf("%v %v", infos, err)
	}
	if _, err := fs.Stat(filepath.Join(dir, "gone")); !os.IsNotExist(err) {
		t.Fatalf("stat of a missing file: %v", err)
	}
	if fs.URI(dir) != "file://"+dir {
		t.Fatal(fs.URI(dir))
	}
}
