package integration

import (
	"archive/zip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// bobbin check-config on what the Apache distributions ship (issue 22): their
// etc/hadoop directory, every YARN key of which Bobbin reads, and their yarn-default.xml and
// core-default.xml (from the jars) written out as site files, with which both daemons
// start. Keys Bobbin does not read are listed as such, never as errors.
func TestCheckConfigOnApacheDefaults(t *testing.T) {
	t.Parallel()
	ran := false
	for _, v := range hadoopVersions {
		home := hadoopHomeIfPresent(v)
		if home == "" {
			t.Logf("no Hadoop %s: its shipped configuration is left out", v)
			continue
		}
		ran = true
		out, err := exec.Command(bobbinBinary(t), "check-config", "--conf", filepath.Join(home, "etc", "hadoop")).CombinedOutput()
		if err != nil {
			t.Errorf("%s etc/hadoop: %v\n%s", v, err, out)
		}
		// Only HDFS daemons' and job clients' keys may go unread: every YARN, core and
		// scheduler key there is one Bobbin reads — but for the class of an auxiliary
		// service named "mapreduce.shuffle", which the 2.7.3 copy here misspells (the
		// service is mapreduce_shuffle) and the Java NodeManager ignores too.
		for _, line := range strings.Split(string(out), "\n") {
			key, ok := strings.CutPrefix(line, "  unused  ")
			if ok && !strings.HasPrefix(key, "dfs.") && !strings.HasPrefix(key, "mapreduce.") &&
				!strings.HasPrefix(key, "yarn.nodemanager.aux-services.mapreduce.shuffle.class ") {
				t.Errorf("%s etc/hadoop: %s is not read", v, key)
			}
		}
		dir := t.TempDir()
		for jar, files := range map[string][2]string{
			filepath.Join(home, "share", "hadoop", "yarn", "hadoop-yarn-common-"+v+".jar"): {"yarn-default.xml", "yarn-site.xml"},
			filepath.Join(home, "share", "hadoop", "common", "hadoop-common-"+v+".jar"):    {"core-default.xml", "core-site.xml"},
		} {
			extract(t, jar, files[0], filepath.Join(dir, files[1]))
		}
		out, err = exec.Command(bobbinBinary(t), "check-config", "--conf", dir).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "resourcemanager: starts with this configuration.") ||
			!strings.Contains(string(out), "nodemanager: starts with this configuration.") || strings.Contains(string(out), "ERROR") {
			t.Errorf("%s defaults as site files: %v\n%s", v, err, out)
		}
	}
	if !ran {
		t.Skip("no Hadoop distribution (HADOOP2_HOME / HADOOP3_HOME); see README.md")
	}
}

// extract copies one file out of a jar.
func extract(t *testing.T, jar, name, to string) {
	t.Helper()
	r, err := zip.OpenReader(jar)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, f := range r.File {
		if f.Name != name {
			continue
		}
		in, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		out, err := os.Create(to)
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		if _, err := io.Copy(out, in); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("%s has no %s", jar, name)
}
