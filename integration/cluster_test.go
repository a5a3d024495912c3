package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// nsCluster is a one-node cluster — `bobbin resourcemanager` and an unchanged Apache
// NodeManager — run in a private network namespace, because the NodeManager's shuffle
// handler (and the MapReduce AM) bind wildcard addresses.
type nsCluster struct {
	home, dir, confDir string
	// bobbinNM runs `bobbin nodemanager` instead of the Apache NodeManager; apacheRM runs
	// the Apache ResourceManager instead of Bobbin's.
	bobbinNM, apacheRM bool
}

// newNSCluster skips unless Hadoop, root and unshare are available, and writes the
// cluster's configuration (nmConf) under a temporary directory.
func newNSCluster(t *testing.T) *nsCluster {
	t.Helper()
	home := requireHadoop(t)
	if _, err := exec.LookPath("unshare"); err != nil || os.Geteuid() != 0 {
		t.Skip("needs root and unshare for a private network namespace")
	}
	dir := t.TempDir()
	c := &nsCluster{home: home, dir: dir, confDir: filepath.Join(dir, "conf")}
	for _, d := range []string{"conf", "nm-local", "nm-logs", "logs", "work"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	writeConf(t, c.confDir, nmConf(dir))
	return c
}

// path is a file in the cluster's directory.
func (c *nsCluster) path(name string) string { return filepath.Join(c.dir, name) }

// run starts the RM and the NM, waits for the NM to register, runs body (bash, in the
// work directory, with $HADOOP_HOME set) and stops both daemons; the output ends with
// "rm exit N".
func (c *nsCluster) run(t *testing.T, timeout time.Duration, body string) (string, error) {
	t.Helper()
	nm := c.home + "/bin/yarn nodemanager"
	if c.bobbinNM {
		// The yarn launcher exports these for a Java NM; containers' classpaths need them.
		nm = fmt.Sprintf("env HADOOP_COMMON_HOME=%[1]s HADOOP_HDFS_HOME=%[1]s HADOOP_YARN_HOME=%[1]s HADOOP_MAPRED_HOME=%[1]s %[2]s nodemanager --conf %[3]s",
			c.home, bobbinBinary(t), c.confDir)
	}
	rm := fmt.Sprintf("%s resourcemanager --conf %s", bobbinBinary(t), c.confDir)
	if c.apacheRM {
		rm = c.home + "/bin/yarn resourcemanager"
	}
	script := fmt.Sprintf(`set -u
ip link set lo up
%[7]s > %[3]s/rm.log 2>&1 &
RM=$!
%[6]s > %[3]s/nm.log 2>&1 &
NM=$!
for i in $(seq 1 90); do %[4]s/bin/yarn node -list 2>/dev/null | grep -q RUNNING && break; sleep 1; done
cd %[3]s/work
%[5]s
kill $NM; sleep 1; kill -9 $NM 2>/dev/null
kill $RM; wait $RM; echo "rm exit $?"
`, bobbinBinary(t), c.confDir, c.dir, c.home, body, nm, rm)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", "-n", "bash", "-c", script)
	cmd.Env = append(hadoopEnv(c.home, c.confDir), "USER=root", "YARN_LOG_DIR="+c.path("logs"), "HADOOP_LOG_DIR="+c.path("logs"))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// logTail returns the last n lines of a file in the cluster's directory.
func (c *nsCluster) logTail(name string, n int) string {
	b, _ := os.ReadFile(c.path(name))
	return tail(string(b), n)
}
