package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestApacheNodeManagerRegisters starts `bobbin resourcemanager` and an unchanged Apache
// 2.7.3 NodeManager in a private network namespace (the NM's shuffle handler binds
// wildcard addresses) and checks with the real yarn CLI that the node is RUNNING.
func TestApacheNodeManagerRegisters(t *testing.T) {
	home := requireHadoop(t)
	if _, err := exec.LookPath("unshare"); err != nil || os.Geteuid() != 0 {
		t.Skip("needs root and unshare for a private network namespace")
	}
	dir := t.TempDir()
	confDir := filepath.Join(dir, "conf")
	os.MkdirAll(confDir, 0o755)
	for _, d := range []string{"nm-local", "nm-logs", "logs"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	writeConf(t, confDir, map[string]string{
		"yarn.resourcemanager.hostname":                           "127.0.0.1",
		"yarn.nodemanager.hostname":                               "127.0.0.1",
		"yarn.nodemanager.address":                                "127.0.0.1:8041",
		"yarn.nodemanager.localizer.address":                      "127.0.0.1:8040",
		"yarn.nodemanager.webapp.address":                         "127.0.0.1:8042",
		"yarn.nodemanager.resource.memory-mb":                     "4096",
		"yarn.nodemanager.resource.cpu-vcores":                    "4",
		"yarn.nodemanager.local-dirs":                             filepath.Join(dir, "nm-local"),
		"yarn.nodemanager.log-dirs":                               filepath.Join(dir, "nm-logs"),
		"yarn.nodemanager.vmem-check-enabled":                     "false",
		"yarn.nodemanager.aux-services":                           "mapreduce_shuffle",
		"yarn.nodemanager.aux-services.mapreduce_shuffle.class":   "org.apache.hadoop.mapred.ShuffleHandler",
		"yarn.scheduler.minimum-allocation-mb":                    "128",
		"yarn.resourcemanager.nodemanagers.heartbeat-interval-ms": "500",
	})
	script := fmt.Sprintf(`set -u
ip link set lo up
%[1]s resourcemanager --conf %[2]s > %[3]s/rm.log 2>&1 &
RM=$!
%[4]s/bin/yarn nodemanager > %[3]s/nm.log 2>&1 &
NM=$!
for i in $(seq 1 60); do grep -q "NodeManager registered" %[3]s/rm.log && break; sleep 1; done
sleep 2
%[4]s/bin/yarn node -list -all 2>&1
kill $NM; sleep 1; kill -9 $NM 2>/dev/null
kill $RM; wait $RM; echo "rm exit $?"
`, bobbinBinary(t), confDir, dir, home)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", "-n", "bash", "-c", script)
	cmd.Env = append(hadoopEnv(home, confDir), "YARN_LOG_DIR="+filepath.Join(dir, "logs"), "HADOOP_LOG_DIR="+filepath.Join(dir, "logs"))
	out, err := cmd.CombinedOutput()
	rmLog, _ := os.ReadFile(filepath.Join(dir, "rm.log"))
	if err != nil || !strings.Contains(string(out), "Total Nodes:1") || !strings.Contains(string(out), "RUNNING") || !strings.Contains(string(out), "rm exit 0") {
		nmLog, _ := os.ReadFile(filepath.Join(dir, "nm.log"))
		t.Fatalf("err %v\noutput:\n%s\nRM log:\n%s\nNM log (tail):\n%s", err, out, rmLog, tail(string(nmLog), 40))
	}
	if !strings.Contains(string(rmLog), `node="127.0.0.1:8041"`) && !strings.Contains(string(rmLog), "NodeManager registered") {
		t.Fatalf("no registration line in the RM log:\n%s", rmLog)
	}
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
