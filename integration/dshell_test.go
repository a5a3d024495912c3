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

// TestDistributedShellOnApacheNM runs, in a private network namespace, `bobbin
// resourcemanager`, an unchanged Apache 2.7.3 NodeManager and the real distributed-shell
// ApplicationMaster (started unmanaged by Hadoop's UnmanagedAMLauncher) with two
// containers: Bobbin schedules them, the Java NM starts them with Bobbin's container
// tokens and NMTokens, they run `ls`, and the application ends FINISHED/SUCCEEDED.
func TestDistributedShellOnApacheNM(t *testing.T) {
	home := requireHadoop(t)
	if _, err := exec.LookPath("unshare"); err != nil || os.Geteuid() != 0 {
		t.Skip("needs root and unshare for a private network namespace")
	}
	yarnShare := filepath.Join(home, "share", "hadoop", "yarn")
	launcher := filepath.Join(yarnShare, "hadoop-yarn-applications-unmanaged-am-launcher-2.7.3.jar")
	dshell := filepath.Join(yarnShare, "hadoop-yarn-applications-distributedshell-2.7.3.jar")
	dir := t.TempDir()
	confDir := filepath.Join(dir, "conf")
	for _, d := range []string{"conf", "nm-local", "nm-logs", "logs", "am"} {
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
		"yarn.nodemanager.pmem-check-enabled":                     "false",
		"yarn.scheduler.minimum-allocation-mb":                    "128",
		"yarn.resourcemanager.nodemanagers.heartbeat-interval-ms": "500",
	})
	// The AM reads its shell command from ./shellCommands (DataOutput.writeUTF).
	os.WriteFile(filepath.Join(dir, "am", "shellCommands"), []byte("\x00\x02ls"), 0o644)
	script := fmt.Sprintf(`set -u
ip link set lo up
%[1]s resourcemanager --conf %[2]s > %[3]s/rm.log 2>&1 &
RM=$!
%[4]s/bin/yarn nodemanager > %[3]s/nm.log 2>&1 &
NM=$!
for i in $(seq 1 60); do grep -q "NodeManager registered" %[3]s/rm.log && break; sleep 1; done
CP="%[5]s:$(%[4]s/bin/yarn classpath)"
cd %[3]s/am
timeout 150 %[4]s/bin/yarn jar %[6]s org.apache.hadoop.yarn.applications.unmanagedamlauncher.UnmanagedAMLauncher -classpath "$CP" \
  -cmd "java --add-opens java.base/java.lang=ALL-UNNAMED org.apache.hadoop.yarn.applications.distributedshell.ApplicationMaster --num_containers 2 --container_memory 128" > %[3]s/launcher.log 2>&1
echo "launcher exit $?"
%[4]s/bin/yarn application -list -appStates ALL 2>&1
kill $NM; sleep 1; kill -9 $NM 2>/dev/null
kill $RM; wait $RM; echo "rm exit $?"
`, bobbinBinary(t), confDir, dir, home, dshell, launcher)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", "-n", "bash", "-c", script)
	cmd.Env = append(hadoopEnv(home, confDir), "USER=root", "YARN_LOG_DIR="+filepath.Join(dir, "logs"), "HADOOP_LOG_DIR="+filepath.Join(dir, "logs"))
	out, err := cmd.CombinedOutput()
	report := func() string {
		rmLog, _ := os.ReadFile(filepath.Join(dir, "rm.log"))
		l, _ := os.ReadFile(filepath.Join(dir, "launcher.log"))
		return fmt.Sprintf("output:\n%s\nRM log:\n%s\nlauncher (tail):\n%s", out, tail(string(rmLog), 60), tail(string(l), 30))
	}
	if err != nil || !strings.Contains(string(out), "launcher exit 0") || !strings.Contains(string(out), "rm exit 0") {
		t.Fatalf("err %v\n%s", err, report())
	}
	if !strings.Contains(string(out), "FINISHED") || !strings.Contains(string(out), "SUCCEEDED") {
		t.Fatalf("application not FINISHED/SUCCEEDED\n%s", report())
	}
	// Both containers ran on the Apache NM and wrote their `ls` output.
	outs, _ := filepath.Glob(filepath.Join(dir, "nm-logs", "application_*", "container_*", "stdout"))
	if len(outs) != 2 {
		t.Fatalf("container stdout files %v\n%s", outs, report())
	}
	for _, f := range outs {
		b, _ := os.ReadFile(f)
		if !strings.Contains(string(b), "launch_container.sh") {
			t.Fatalf("%s holds %q, not the output of ls", f, b)
		}
	}
}

// TestManagedDistributedShellOnApacheNM is the ordinary `yarn jar distributedshell` run:
// Bobbin's AM launcher starts the Java AM on the Apache NodeManager with the AMRMToken in
// its credentials; the AM gets two containers that print "hello"; the client exits 0.
// Then a `sleep 300` job is killed with `yarn application -kill` while it runs.
func TestManagedDistributedShellOnApacheNM(t *testing.T) {
	home := requireHadoop(t)
	if _, err := exec.LookPath("unshare"); err != nil || os.Geteuid() != 0 {
		t.Skip("needs root and unshare for a private network namespace")
	}
	dshell := filepath.Join(home, "share", "hadoop", "yarn", "hadoop-yarn-applications-distributedshell-2.7.3.jar")
	dir := t.TempDir()
	confDir := filepath.Join(dir, "conf")
	for _, d := range []string{"conf", "nm-local", "nm-logs", "logs"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	writeConf(t, confDir, nmConf(dir))
	script := fmt.Sprintf(`set -u
ip link set lo up
%[1]s resourcemanager --conf %[2]s > %[3]s/rm.log 2>&1 &
RM=$!
%[4]s/bin/yarn nodemanager > %[3]s/nm.log 2>&1 &
NM=$!
for i in $(seq 1 60); do grep -q "NodeManager registered" %[3]s/rm.log && break; sleep 1; done
timeout 150 %[4]s/bin/yarn jar %[5]s -jar %[5]s -shell_command 'echo hello' -num_containers 2 -master_memory 256 -container_memory 128 > %[3]s/client.log 2>&1
echo "client exit $?"
# A long job, killed from the CLI while it runs.
%[4]s/bin/yarn jar %[5]s -jar %[5]s -shell_command 'sleep 300' -num_containers 1 -master_memory 256 -container_memory 128 > %[3]s/sleeper.log 2>&1 &
for i in $(seq 1 60); do
  APP=$(%[4]s/bin/yarn application -list 2>/dev/null | awk '/RUNNING/ {print $1}' | head -1)
  [ -n "$APP" ] && grep -q "container_.*_000002" %[3]s/rm.log && break
  sleep 1
done
echo "sleeper $APP"
%[4]s/bin/yarn application -kill "$APP" 2>&1 | grep -v INFO
%[4]s/bin/yarn application -list -appStates ALL 2>&1
kill $NM; sleep 1; kill -9 $NM 2>/dev/null
kill $RM; wait $RM; echo "rm exit $?"
`, bobbinBinary(t), confDir, dir, home, dshell)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", "-n", "bash", "-c", script)
	cmd.Env = append(hadoopEnv(home, confDir), "USER=root", "YARN_LOG_DIR="+filepath.Join(dir, "logs"), "HADOOP_LOG_DIR="+filepath.Join(dir, "logs"))
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "client exit 0") || !strings.Contains(string(out), "FINISHED") || !strings.Contains(string(out), "SUCCEEDED") {
		rmLog, _ := os.ReadFile(filepath.Join(dir, "rm.log"))
		cl, _ := os.ReadFile(filepath.Join(dir, "client.log"))
		t.Fatalf("err %v\noutput:\n%s\nRM log:\n%s\nclient (tail):\n%s", err, out, tail(string(rmLog), 60), tail(string(cl), 30))
	}
	if !strings.Contains(string(out), "KILLED") {
		t.Fatalf("the running sleep job was not KILLED:\n%s", out)
	}
	hellos := 0
	outs, _ := filepath.Glob(filepath.Join(dir, "nm-logs", "application_*", "container_*", "stdout"))
	for _, f := range outs {
		if b, _ := os.ReadFile(f); strings.TrimSpace(string(b)) == "hello" {
			hellos++
		}
	}
	if hellos != 2 {
		t.Fatalf("%d containers printed hello, want 2 (%v)", hellos, outs)
	}
}

// nmConf is the yarn-site of a one-node cluster inside a private network namespace.
func nmConf(dir string) map[string]string {
	return map[string]string{
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
		"yarn.nodemanager.pmem-check-enabled":                     "false",
		"yarn.nodemanager.aux-services":                           "mapreduce_shuffle",
		"yarn.nodemanager.aux-services.mapreduce_shuffle.class":   "org.apache.hadoop.mapred.ShuffleHandler",
		"yarn.scheduler.minimum-allocation-mb":                    "128",
		"yarn.resourcemanager.nodemanagers.heartbeat-interval-ms": "500",
	}
}
