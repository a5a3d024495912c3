package nodemanager

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/client/amclient"
	"github.com/bobbin-yarn/bobbin/client/nmclient"
	"github.com/bobbin-yarn/bobbin/client/rmclient"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/rpc/token"
)

// appAs submits and registers an unmanaged application as user and returns its AM.
func (c *cluster) appAs(t *testing.T, user string) *amclient.Client {
	t.Helper()
	ctx := context.Background()
	cl := rmclient.New(c.rm.ClientAddr().String(), user, rpc.ClientOptions{ConnectRetries: -1, Logger: testutil.QuietLogger()})
	t.Cleanup(func() { cl.Close() })
	na, err := cl.GetNewApplication(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.Call(ctx, "submitApplication", &yarnpb.SubmitApplicationRequestProto{ApplicationSubmissionContext: &yarnpb.ApplicationSubmissionContextProto{
		ApplicationId: na.GetApplicationId(), Queue: proto.String("default"), UnmanagedAm: proto.Bool(true)}}, &yarnpb.SubmitApplicationResponseProto{}); err != nil {
		t.Fatal(err)
	}
	rep, _ := cl.GetApplicationReport(ctx, na.GetApplicationId())
	am := amclient.New(amclient.Options{Addr: c.rm.SchedulerAddr().String(), Token: token.FromProto(rep.GetAmRmToken()), ConnectRetries: -1, Logger: testutil.QuietLogger()})
	t.Cleanup(func() { am.Close() })
	if _, err := am.Register(ctx, "h", 0, ""); err != nil {
		t.Fatal(err)
	}
	return am
}

// runAsUser runs command in a container of a new application submitted by user, with
// file src localized privately as "secret", and returns its status and stdout.
func (c *cluster) runAsUser(t *testing.T, user, src, command string) (*yarnpb.ContainerStatusProto, string) {
	t.Helper()
	am := c.appAs(t, user)
	am.Request(1, "*", 128, 1, 1)
	var ctr *yarnpb.ContainerProto
	testutil.Eventually(t, 5*time.Second, "no container", func() bool {
		resp, err := am.Allocate(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if cs := resp.GetAllocatedContainers(); len(cs) > 0 {
			ctr = cs[0]
		}
		return ctr != nil
	})
	node := c.nm.NodeID()
	nm := nmclient.New(node, "", am.NMToken(node), testutil.QuietLogger())
	defer nm.Close()
	st, _ := os.Stat(src)
	clc := &yarnpb.ContainerLaunchContextProto{
		LocalResources: []*yarnpb.StringLocalResourceMapProto{{Key: proto.String("secret"), Value: &yarnpb.LocalResourceProto{
			Resource: &yarnpb.URLProto{Scheme: proto.String("file"), File: proto.String(src)}, Timestamp: proto.Int64(st.ModTime().UnixMilli()),
			Type: yarnpb.LocalResourceTypeProto_FILE.Enum(), Visibility: yarnpb.LocalResourceVisibilityProto_PRIVATE.Enum()}}},
		Command: []string{"{ " + command + "; } 1><LOG_DIR>/stdout 2>&1"},
	}
	if _, err := nm.Start(context.Background(), clc, ctr); err != nil {
		t.Fatal(err)
	}
	status := completeStatus(t, nm, ctr.GetId(), 10*time.Second)
	outs, _ := filepath.Glob(filepath.Join(c.dir, "logs", "*", fmt.Sprintf("*_%06d", ctr.GetId().GetId()), "stdout"))
	var out []byte
	for _, o := range outs {
		if strings.Contains(o, fmt.Sprintf("_%04d_", ctr.GetId().GetAppAttemptId().GetApplicationId().GetId())) {
			out, _ = os.ReadFile(o)
		}
	}
	return status, string(out)
}

// LinuxContainerExecutor: containers run as their submitter (uid read inside the
// container); one user's privately localized file cannot be read by another user's
// container; container-executor.cfg's banned.users and min.user.id refuse users with the
// container-executor's messages; root never runs a container.
func TestLinuxContainerExecutorRunsAsTheSubmitter(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("LinuxContainerExecutor needs the NodeManager to run as root")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("no user nobody: %v", err)
	}
	daemon, err := user.Lookup("daemon")
	if err != nil {
		t.Skipf("no user daemon: %v", err)
	}
	// Other users must be able to reach their own directories under the NM's dirs, as
	// under /var/lib/hadoop-yarn: t.TempDir's directories are 0700.
	dir := t.TempDir()
	for d := dir; d != os.TempDir(); d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	confDir := filepath.Join(dir, "conf")
	os.MkdirAll(confDir, 0o755)
	os.WriteFile(filepath.Join(confDir, "container-executor.cfg"), []byte("# as Hadoop ships it, but daemon (uid 1) and bin (uid 2, still banned) allowed\nbanned.users=hdfs,yarn,mapred,bin\nmin.user.id=1000\nallowed.system.users=daemon,bin\n"), 0o644)
	c := newClusterIn(t, dir, confDir, "yarn.nodemanager.container-executor.class", "org.apache.hadoop.yarn.server.nodemanager.LinuxContainerExecutor",
		"yarn.nodemanager.linux-container-executor.nonsecure-mode.limit-users", "false")
	src := filepath.Join(dir, "secret.txt")
	os.WriteFile(src, []byte("nobody's secret"), 0o644)

	st, out := c.runAsUser(t, "nobody", src, `id -u; cat secret; echo; readlink -f secret`)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if st.GetExitStatus() != 0 || len(lines) != 3 || lines[0] != nobody.Uid || lines[1] != "nobody's secret" {
		t.Fatalf("nobody's container: %v\n%s", st, out)
	}
	secretPath := lines[2]
	if !strings.Contains(secretPath, "/usercache/nobody/") {
		t.Fatalf("private file localized at %s", secretPath)
	}
	st, out = c.runAsUser(t, "daemon", src, fmt.Sprintf(`id -u; cat %s || echo refused`, secretPath))
	if st.GetExitStatus() != 0 || !strings.HasPrefix(out, daemon.Uid+"\n") || !strings.Contains(out, "Permission denied") || strings.Contains(out, "nobody's secret") {
		t.Fatalf("daemon's container reading nobody's file: %v\n%s", st, out)
	}
	for who, want := range map[string]string{
		"bin":  "Requested user bin is banned",
		"sys":  "Requested user sys is not whitelisted and has id 3,which is below the minimum allowed 1000",
		"root": "Running as root is not allowed",
	} {
		if _, err := user.Lookup(who); err != nil {
			continue
		}
		st, _ := c.runAsUser(t, who, src, "id -u")
		if st.GetExitStatus() == 0 || !strings.Contains(st.GetDiagnostics(), want) {
			t.Errorf("%s: %v", who, st)
		}
	}
}
