package nodemanager

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/conf"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/nodemanager/auxservices"
	"github.com/bobbin-yarn/bobbin/nodemanager/containers"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

// phases records the phases a run calls it in; failPrestart makes its prestart fail.
type phases struct {
	calls        []string
	failPrestart bool
}

func (*phases) Name() string { return "recorder" }

func (p *phases) Prestart(context.Context, *containers.Container, *launchPlan) error {
	p.calls = append(p.calls, "prestart")
	if p.failPrestart {
		return errors.New("recorder refuses")
	}
	return nil
}
func (p *phases) Poststart(*containers.Container) { p.calls = append(p.calls, "poststart") }
func (p *phases) Restore(*containers.Container)   { p.calls = append(p.calls, "restore") }
func (p *phases) Stop(_ *containers.Container, ended bool) {
	p.calls = append(p.calls, "stop ended="+map[bool]string{true: "true", false: "false"}[ended])
}

// runnerNode is a NodeManager that is not serving: enough for the runner, with no RM
// that could kill the tests' containers.
func runnerNode(t *testing.T) *NodeManager {
	dir := t.TempDir()
	c := conf.New()
	c.Set("yarn.nodemanager.local-dirs", filepath.Join(dir, "local"))
	c.Set("yarn.nodemanager.log-dirs", filepath.Join(dir, "logs"))
	c.Set("yarn.nodemanager.sleep-delay-before-sigkill.ms", "100")
	nm, err := New(Options{Conf: c, Logger: testutil.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	nm.ctx, nm.cancel = context.WithCancel(context.Background())
	t.Cleanup(func() {
		nm.cancel()
		nm.wg.Wait()
	})
	return nm
}

func runnerContainer(t *testing.T, nm *NodeManager, n int64, command string) *containers.Container {
	id := records.ContainerID{Attempt: records.AttemptID{App: records.ApplicationID{ClusterTimestamp: 1, ID: 1}, Attempt: 1}, ID: n}
	ident := &yarnpb.ContainerTokenIdentifierProto{ContainerId: id.Proto(), AppSubmitter: proto.String("alice"),
		Resource: &yarnpb.ResourceProto{Memory: proto.Int64(128), VirtualCores: proto.Int32(1)}}
	c := containers.New(nm.ctx, containers.Spec{ID: id, Ident: ident, User: "alice",
		CLC: &yarnpb.ContainerLaunchContextProto{Command: []string{command}}, Dirs: nm.dirsFor(id, "alice")})
	if !nm.table.Add(c, nil) {
		t.Fatal("container not added")
	}
	return c
}

// A run goes through its phases in order and runs the stop hooks once on every path: a
// container that exits, one a prestart hook refuses (failed with the hook's words, never
// launched), and one killed before its launch.
func TestRunPhases(t *testing.T) {
	nm := runnerNode(t)
	run := func(c *containers.Container, rec *phases) []string {
		r := nm.newRun(c)
		r.hooks = append([]runHook{rec}, r.hooks...)
		defer c.Release()
		r.finish(r.launchAndWatch())
		return rec.calls
	}

	ran := runnerContainer(t, nm, 1, "exit 3")
	if calls := run(ran, &phases{}); !slices.Equal(calls, []string{"prestart", "poststart", "stop ended=true"}) {
		t.Errorf("a container that ran: %v", calls)
	}
	if v := nm.table.ViewOf(ran); v.Exit != 3 || !strings.Contains(v.Diag, "Exit code: 3") {
		t.Errorf("a container that ran: exit %d, %q", v.Exit, v.Diag)
	}

	refused := runnerContainer(t, nm, 2, "exit 0")
	if calls := run(refused, &phases{failPrestart: true}); !slices.Equal(calls, []string{"prestart", "stop ended=true"}) {
		t.Errorf("a container a prestart hook refused: %v", calls)
	}
	if v := nm.table.ViewOf(refused); v.Exit != exitcode.Invalid || v.Diag != "recorder refuses" || v.Proc != nil {
		t.Errorf("a container a prestart hook refused: exit %d, %q, process %v", v.Exit, v.Diag, v.Proc)
	}

	killed := runnerContainer(t, nm, 3, "exit 0")
	nm.kill(killed, exitcode.KilledByAppMaster, "Container killed by the ApplicationMaster.")
	if calls := run(killed, &phases{}); !slices.Equal(calls, []string{"prestart", "stop ended=true"}) {
		t.Errorf("a container killed before its launch: %v", calls)
	}
	if v := nm.table.ViewOf(killed); v.Exit != exitcode.KilledByAppMaster || v.Proc != nil {
		t.Errorf("a container killed before its launch: exit %d, process %v", v.Exit, v.Proc)
	}
}

// containerEars is an auxiliary service that hears of containers; at each stop it notes
// whether the container's end was already recorded.
type containerEars struct {
	nm    *NodeManager
	calls []string
}

func (*containerEars) Name() string                                    { return "ears" }
func (*containerEars) Start() error                                    { return nil }
func (*containerEars) Stop(context.Context) error                      { return nil }
func (*containerEars) Meta() []byte                                    { return nil }
func (*containerEars) InitializeApplication(auxservices.AppInit) error { return nil }
func (*containerEars) StopApplication(records.ApplicationID)           {}
func (e *containerEars) InitializeContainer(id records.ContainerID, _ string) {
	e.calls = append(e.calls, "init "+id.String())
}
func (e *containerEars) StopContainer(id records.ContainerID, _ string) {
	v, _ := e.nm.table.View(id)
	e.calls = append(e.calls, fmt.Sprintf("stop %s recorded=%v", id, v.Phase == containers.Done))
}

// The auxiliary services hear of a container that ran, start and stop, the stop before
// its end is recorded (a kill or the application's finish waiting for that end finds it
// done, as Java's CONTAINER_STOP comes before APPLICATION_STOP); of one that never ran,
// nothing.
func TestRunTellsAuxServicesOfContainersThatRan(t *testing.T) {
	nm := runnerNode(t)
	ears := &containerEars{nm: nm}
	set, err := auxservices.NewSet(ears)
	if err != nil {
		t.Fatal(err)
	}
	nm.aux = set // before anything runs
	ran := runnerContainer(t, nm, 1, "exit 0")
	refused := runnerContainer(t, nm, 2, "exit 0")
	for _, tc := range []struct {
		c    *containers.Container
		fail bool
	}{{ran, false}, {refused, true}} {
		r := nm.newRun(tc.c)
		r.hooks = append([]runHook{&phases{failPrestart: tc.fail}}, r.hooks...)
		r.finish(r.launchAndWatch())
		tc.c.Release()
	}
	want := []string{"init " + ran.ID.String(), "stop " + ran.ID.String() + " recorded=false"}
	if !slices.Equal(ears.calls, want) {
		t.Errorf("the service heard %q, want %q", ears.calls, want)
	}
	if v := nm.table.ViewOf(ran); v.Phase != containers.Done || v.Exit != 0 {
		t.Errorf("the container that ran: %+v", v)
	}
}
