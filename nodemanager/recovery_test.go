package nodemanager

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/container"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
)

// With recovery under a supervisor a stopping NodeManager leaves its containers running;
// the next process, on the same node id, takes the running one back (still running, and
// answering getContainerStatuses to the AM's NMToken, signed with a key the first process
// held), reports the one that ended meanwhile with its exit code, and stops the taken-back
// one on the AM's request leaving no process behind.
func TestSupervisedRestartKeepsContainers(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "recovery")
	c := newCluster(t, "yarn.nodemanager.address", testutil.FreeAddr(t), "yarn.nodemanager.recovery.enabled", "true",
		"yarn.nodemanager.recovery.dir", rec, "yarn.nodemanager.recovery.supervised", "true")
	ctrs := c.containers(t, 2)
	cl := c.client()
	ctx := context.Background()
	for i, cmd := range []string{"sleep 300", "sleep 2; exit 5"} {
		if _, err := cl.Start(ctx, &yarnpb.ContainerLaunchContextProto{Command: []string{cmd}}, ctrs[i]); err != nil {
			t.Fatal(err)
		}
	}
	cl.Close()
	owner := c.nm.owner
	testutil.Eventually(t, 5*time.Second, "both containers running", func() bool { return len(container.Leaders(owner)) == 2 })
	if err := c.nm.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(container.Leaders(owner)); n != 2 {
		t.Fatalf("%d containers left running by the supervised stop, want 2", n)
	}
	// The second ends while no NodeManager runs.
	testutil.Eventually(t, 10*time.Second, "the second container's process did not end", func() bool { return len(container.Leaders(owner)) == 1 })
	nm2, err := New(Options{Conf: c.nm.opts.Conf, Logger: c.nm.opts.Logger})
	if err != nil {
		t.Fatal(err)
	}
	if err := nm2.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nm2.Shutdown(context.Background()) })
	if nm2.NodeID() != c.nm.NodeID() {
		t.Fatalf("node id %s after the restart, was %s", nm2.NodeID(), c.nm.NodeID())
	}
	c.nm = nm2
	cl = c.client()
	defer cl.Close()
	st, err := cl.Status(ctx, ctrs[0].GetId())
	if err != nil || st.GetState() != yarnpb.ContainerStateProto_C_RUNNING {
		t.Fatalf("taken-back container: %v %v", st, err)
	}
	if st := c.completedStatus(t, cl, ctrs[1].GetId(), 5*time.Second); st.GetExitStatus() != 5 {
		t.Fatalf("container that ended while no NodeManager ran: %v", st)
	}
	if err := cl.Stop(ctx, ctrs[0].GetId()); err != nil {
		t.Fatal(err)
	}
	if st := c.completedStatus(t, cl, ctrs[0].GetId(), 10*time.Second); st.GetExitStatus() != -105 {
		t.Fatalf("stopped container: %v", st)
	}
	testutil.Eventually(t, 5*time.Second, "container processes left", func() bool { return len(container.Leaders(owner)) == 0 })
}
