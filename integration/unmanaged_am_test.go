package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/internal/testutil"
)

// TestJavaAMRegistersWithAMRMToken runs the real distributed-shell ApplicationMaster
// through Hadoop's UnmanagedAMLauncher against `bobbin resourcemanager`: the launcher
// submits an unmanaged application, takes its AMRMToken from the report and starts the
// AM, which must log in with DIGEST-MD5 on the scheduler port and register. The RM's log
// shows the TOKEN connection and the registration, and the yarn CLI shows RUNNING.
func TestJavaAMRegistersWithAMRMToken(t *testing.T) {
	home := requireHadoop(t)
	yarnShare := filepath.Join(home, "share", "hadoop", "yarn")
	launcher := filepath.Join(yarnShare, "hadoop-yarn-applications-unmanaged-am-launcher-2.7.3.jar")
	dshell := filepath.Join(yarnShare, "hadoop-yarn-applications-distributedshell-2.7.3.jar")
	for _, j := range []string{launcher, dshell} {
		if _, err := os.Stat(j); err != nil {
			t.Skipf("%s missing: %v", j, err)
		}
	}
	dir := t.TempDir()
	confDir := filepath.Join(dir, "conf")
	os.MkdirAll(confDir, 0o755)
	rmAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	writeConf(t, confDir, map[string]string{
		"yarn.resourcemanager.hostname":                 "127.0.0.1",
		"yarn.resourcemanager.address":                  rmAddr,
		"yarn.resourcemanager.scheduler.address":        fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"yarn.resourcemanager.webapp.address":           fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"yarn.resourcemanager.resource-tracker.address": fmt.Sprintf("127.0.0.1:%d", freePort(t)),
	})
	rm := startDaemon(t, "resourcemanager", "--conf", confDir, "--log-level", "debug")
	rm.waitListening(t, rmAddr)

	// The AM reads its shell command from ./shellCommands (DataOutput.writeUTF).
	work := filepath.Join(dir, "am")
	os.MkdirAll(work, 0o755)
	os.WriteFile(filepath.Join(work, "shellCommands"), []byte("\x00\x02ls"), 0o644)
	env := append(hadoopEnv(home, confDir), "USER=root")
	cpCmd := exec.Command(filepath.Join(home, "bin", "yarn"), "classpath")
	cpCmd.Env = env // the classpath starts with HADOOP_CONF_DIR, which the AM reads
	cpOut, err := cpCmd.Output()
	if err != nil {
		t.Fatalf("yarn classpath: %v", err)
	}
	amCP := dshell + ":" + strings.TrimSpace(string(cpOut))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(home, "bin", "yarn"), "jar", launcher,
		"org.apache.hadoop.yarn.applications.unmanagedamlauncher.UnmanagedAMLauncher", "-classpath", amCP,
		"-cmd", "java "+javaOpts+" org.apache.hadoop.yarn.applications.distributedshell.ApplicationMaster --num_containers 1")
	cmd.Dir, cmd.Env = work, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the launcher starts the AM as a child
	logFile, err := os.Create(filepath.Join(dir, "launcher.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}()
	if !testutil.Poll(40*time.Second, func() bool { return strings.Contains(rm.Log(), "application master registered") }) {
		launched, _ := os.ReadFile(filepath.Join(dir, "launcher.log"))
		t.Fatalf("the Java AM never registered (launcher %v).\nlauncher:\n%s\nRM:\n%s", cmd.ProcessState, tail(string(launched), 40), rm.Log())
	}
	if !strings.Contains(rm.Log(), "auth=TOKEN") || !strings.Contains(rm.Log(), "server=ApplicationMasterService user=appattempt_") {
		t.Fatalf("no TOKEN connection on the scheduler port:\n%s", rm.Log())
	}
	code, list := yarnCLI(t, home, confDir, nil, "application", "-list")
	if code != 0 || !strings.Contains(list, "UnmanagedAM") || !strings.Contains(list, "RUNNING") {
		t.Fatalf("yarn application -list (exit %d):\n%s", code, list)
	}
	if strings.Contains(rm.Log(), "IPC call failed") {
		t.Fatalf("the AM's calls failed:\n%s", rm.Log())
	}
}
