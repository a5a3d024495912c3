package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Today's Hadoop as a peer (issue 47): Maven Central's jars of Hadoop 3.4 and 3.5, fetched
// into the peers cache by integration/peers/fetch.sh.
const (
	hadoop34 = "3.4.2"
	hadoop35 = "3.5.0"
)

var currentHadoopVersions = []string{hadoop34, hadoop35}

func isCurrentHadoop(v string) bool { return v == hadoop34 || v == hadoop35 }

// appsVersion is the version of the applications (examples, distributed shell) a
// layout of version v holds: Maven Central has none of 3.5.0's.
func appsVersion(v string) string {
	if v == hadoop35 {
		return hadoop34
	}
	return v
}

// currentHadoopJars is the directory of version v's jars (hadoop-3-pom.xml's resolved set)
// in the peers cache, or skips the test.
func currentHadoopJars(t *testing.T, v string) string {
	t.Helper()
	dir := filepath.Join(peersCache(), "hadoop-"+v)
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err != nil {
		t.Skipf("Hadoop %s's jars are not in the peers cache (%s): run integration/peers/fetch.sh", v, dir)
	}
	return filepath.Join(dir, "jars")
}

// currentHomes holds the installations laid out by this test process, removed by
// TestMain.
var currentHomes struct {
	sync.Mutex
	dirs map[string]string // version → HADOOP_HOME
	errs map[string]error
}

func removeCurrentHadoopHomes() {
	currentHomes.Lock()
	defer currentHomes.Unlock()
	for _, d := range currentHomes.dirs {
		os.RemoveAll(filepath.Dir(d))
	}
}

// requireCurrentHadoop is a HADOOP_HOME for version v, laid out once per test process: the
// launchers of the 3.1.1 distribution (bin, sbin, libexec, etc: copied, so that they find
// their home from where they lie) over v's jars under share/hadoop as the distribution
// places them (links into the peers cache), with the 3.4 applications (examples,
// distributed shell, YARN services) where Maven Central has no v of them. Subcommands the
// 3.1.1 launchers do not know (`yarn nodeattributes`) are run by class name. It skips the
// test when 3.1.1 or v's jars are absent.
func requireCurrentHadoop(t *testing.T, v string) string {
	t.Helper()
	launchers := requireHadoopVersion(t, hadoop3)
	jars := currentHadoopJars(t, v)
	apps := filepath.Join(filepath.Dir(currentHadoopJars(t, hadoop34)), "apps")
	currentHomes.Lock()
	defer currentHomes.Unlock()
	if home, ok := currentHomes.dirs[v]; ok {
		return home
	}
	if err, ok := currentHomes.errs[v]; ok {
		t.Fatal(err)
	}
	home, err := layOutHadoop(launchers, jars, apps, v)
	if currentHomes.dirs == nil {
		currentHomes.dirs, currentHomes.errs = map[string]string{}, map[string]error{}
	}
	if err != nil {
		currentHomes.errs[v] = err
		t.Fatal(err)
	}
	currentHomes.dirs[v] = home
	return home
}

func layOutHadoop(launchers, jars, apps, v string) (string, error) {
	top, err := os.MkdirTemp("", "bobbin-hadoop-"+v+"-")
	if err != nil {
		return "", err
	}
	home := filepath.Join(top, "hadoop-"+v)
	if err := os.MkdirAll(home, 0o755); err != nil {
		return "", err
	}
	for _, d := range []string{"bin", "sbin", "libexec", "etc"} {
		if out, err := exec.Command("cp", "-a", filepath.Join(launchers, d), home).CombinedOutput(); err != nil {
			return "", fmt.Errorf("lay out Hadoop %s: cp %s: %v: %s", v, d, err, out)
		}
	}
	// 3.1.1's log4j.properties names an appender (EventCounter) that 3.4 removed.
	l4j := filepath.Join(home, "etc", "hadoop", "log4j.properties")
	if b, err := os.ReadFile(l4j); err == nil {
		var keep []string
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "log4j.appender.EventCounter") {
				continue
			}
			keep = append(keep, strings.ReplaceAll(strings.ReplaceAll(l, ", EventCounter", ""), ",EventCounter", ""))
		}
		if err := os.WriteFile(l4j, []byte(strings.Join(keep, "\n")), 0o644); err != nil {
			return "", err
		}
	}
	link := func(jar string) error {
		share := filepath.Join(home, "share", "hadoop", shareDir(filepath.Base(jar)))
		if err := os.MkdirAll(share, 0o755); err != nil {
			return err
		}
		return os.Symlink(jar, filepath.Join(share, filepath.Base(jar)))
	}
	for _, dir := range []string{jars, apps} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return "", fmt.Errorf("lay out Hadoop %s: %w", v, err)
		}
		for _, e := range entries {
			name := e.Name()
			if !strings.HasSuffix(name, ".jar") {
				continue
			}
			if err := link(filepath.Join(dir, name)); err != nil {
				return "", fmt.Errorf("lay out Hadoop %s: %w", v, err)
			}
		}
	}
	return home, nil
}

// shareDir is where a Hadoop distribution keeps a jar, under share/hadoop.
func shareDir(jar string) string {
	for _, m := range []struct{ prefix, dir string }{
		{"hadoop-common-", "common"}, {"hadoop-hdfs", "hdfs"}, {"hadoop-yarn-", "yarn"}, {"hadoop-mapreduce-", "mapreduce"},
	} {
		if strings.HasPrefix(jar, m.prefix) {
			return m.dir
		}
	}
	return filepath.Join("common", "lib") // Hadoop's auth, annotations, shaded protobuf and guava, registry, and everything else
}

// TestCurrentHadoopJobs runs today's Hadoop (Maven Central's 3.4.2 and 3.5.0: the yarn
// CLI and job clients, MapReduce's AM and tasks, the distributed shell) on every pairing
// of ResourceManager and NodeManager: Bobbin's and Apache's own of the same version
// (3.5.0's mixes with BOBBIN_ALL_PAIRINGS=1). Each runs the distributed shell with two
// containers and MapReduce pi 2 10 (issue 47).
func TestCurrentHadoopJobs(t *testing.T) {
	t.Parallel() // its subtests are namespace clusters
	for _, v := range currentHadoopVersions {
		for _, setup := range []struct {
			name               string
			apacheRM, bobbinNM bool
		}{{"bobbin-rm-bobbin-nm", false, true}, {"bobbin-rm-apache-nm", false, false}, {"apache-rm-bobbin-nm", true, true}, {"apache-rm-apache-nm", true, false}} {
			// A mix (Apache's RM with Bobbin's NM, or the reverse): 3.4.2's always, 3.5.0's with
			// BOBBIN_ALL_PAIRINGS=1 only, for CI's time.
			if mixed := setup.apacheRM == setup.bobbinNM; mixed && v == hadoop35 && os.Getenv("BOBBIN_ALL_PAIRINGS") == "" {
				continue
			}
			t.Run(v+"-"+setup.name, func(t *testing.T) {
				t.Parallel() // its own network namespace
				c := newNSClusterVersion(t, v)
				c.apacheRM, c.bobbinNM = setup.apacheRM, setup.bobbinNM
				runDShellAndPi(t, c)
			})
		}
	}
}
