package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/yarn/protocol"
)

// The demo application runs end to end on Bobbin's RM and NM as real processes: the RM's
// launcher starts the Go AM (`bobbin demo-am`) through the NM, the AM gets three
// containers and starts them through the NM with NMTokens, each runs a shell command
// whose output lands in the NM's log dir, and the application FINISHES SUCCEEDED.
func TestDemoOnBobbinRMAndNM(t *testing.T) {
	c := startBobbinCluster(t)
	out, err := c.demo(t, "--containers", "3", "--command", `echo "hello from $CONTAINER_ID"`)
	if err != nil || !strings.Contains(out, "final status APP_SUCCEEDED: 3 of 3 containers succeeded") {
		t.Fatalf("demo: %v\n%s\nRM:\n%s\nNM:\n%s", err, out, c.rm.Log(), c.nm.Log())
	}
	files, _ := filepath.Glob(filepath.Join(c.logDir, "application_*", "container_*", "stdout"))
	hellos := 0
	for _, f := range files {
		b, _ := os.ReadFile(f)
		id := filepath.Base(filepath.Dir(f))
		if strings.TrimSpace(string(b)) == "hello from "+id {
			hellos++
		}
	}
	if hellos != 3 {
		out, _ := exec.Command("bash", "-c", "find "+filepath.Dir(c.logDir)+" -path '*filecache*' -prune -o -print; cat "+c.logDir+"/*/*/stdout").CombinedOutput()
		t.Fatalf("%d containers printed their own id (%v)\n%s", hellos, files, out)
	}
	// A failing command fails the application, with the exit code in its diagnostics.
	out, err = c.demo(t, "--containers", "1", "--command", "exit 3")
	if err == nil || !strings.Contains(out, "final status APP_FAILED") || !strings.Contains(out, "exited 3") {
		t.Fatalf("failing demo: %v\n%s", err, out)
	}
}

// Killing a running application leaves no container process behind.
func TestKillLeavesNoProcessBehind(t *testing.T) {
	c := startBobbinCluster(t)
	done := make(chan string, 1)
	go func() {
		out, _ := c.demo(t, "--containers", "2", "--command", "setsid sleep 300 & sleep 301")
		done <- out
	}()
	// Wait for the application and both containers' sleeps.
	var app string
	if !testutil.Poll(30*time.Second, func() bool {
		out, _ := exec.Command(bobbinBinary(t), "client", "--rm", c.rmAddr, "apps").Output()
		for _, f := range strings.Fields(string(out)) {
			if strings.HasPrefix(f, "application_") {
				app = f
			}
		}
		return app != "" && len(containerProcesses(app, "_000002", "_000003")) >= 4
	}) {
		t.Fatalf("containers never ran (app %q)\nNM:\n%s", app, c.nm.Log())
	}
	t.Logf("%d task container processes before the kill", len(containerProcesses(app, "_000002", "_000003")))
	if out, err := exec.Command(bobbinBinary(t), "client", "--rm", c.rmAddr, "kill", app).CombinedOutput(); err != nil {
		t.Fatalf("kill: %v\n%s", err, out)
	}
	<-done
	var left []string
	if !testutil.Poll(10*time.Second, func() bool {
		left = containerProcesses(app, "")
		return len(left) == 0
	}) {
		t.Fatalf("container processes left after kill: %v\nNM:\n%s", left, c.nm.Log())
	}
}

// A NodeManager decommissioned by refreshNodes is sent SHUTDOWN and its daemon exits.
func TestNodeManagerExitsWhenDecommissioned(t *testing.T) {
	exclude := filepath.Join(t.TempDir(), "exclude")
	os.WriteFile(exclude, nil, 0o644)
	c := startBobbinCluster(t, "yarn.resourcemanager.nodes.exclude-path", exclude)
	os.WriteFile(exclude, []byte("127.0.0.1\n"), 0o644)
	adm := rpc.NewClient(rpc.ClientOptions{Addr: c.adminAddr, Protocol: protocol.ResourceManagerAdministration, User: "admin", ConnectRetries: -1})
	defer adm.Close()
	if err := adm.Call(context.Background(), "refreshNodes", &yarnpb.RefreshNodesRequestProto{}, &yarnpb.RefreshNodesResponseProto{}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-c.nm.done:
		if !strings.Contains(c.nm.Log(), "the ResourceManager shut this node down") || !strings.Contains(c.nm.Log(), "Disallowed NodeManager") {
			t.Fatalf("NM exited (%v) without saying why:\n%s", err, c.nm.Log())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("NodeManager still running after being decommissioned:\n%s", c.nm.Log())
	}
}
