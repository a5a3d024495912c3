package containers

import (
	"context"
	"errors"
	"os/exec"
	"testing"

	"github.com/bobbin-yarn/bobbin/container"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/nodemanager/nmstore"
	"github.com/bobbin-yarn/bobbin/records"
)

var attempt = records.ApplicationID{ClusterTimestamp: 1, ID: 1}.Attempt(1)

func newContainer(t *testing.T, tb *Table, id int64) *Container {
	t.Helper()
	c := New(context.Background(), Spec{ID: records.ContainerID{Attempt: attempt, ID: id}, Ident: &yarnpb.ContainerTokenIdentifierProto{},
		User: "alice", CLC: &yarnpb.ContainerLaunchContextProto{}})
	t.Cleanup(c.Release)
	if !tb.Add(c, nil) {
		t.Fatalf("%s not added", c.ID)
	}
	return c
}

// A real process for the table to hold.
func startProcess(t *testing.T) container.Process {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return &fakeProc{pid: cmd.Process.Pid}
}

// fakeProc stands for a started process: the table only holds it and reads its pid.
type fakeProc struct {
	container.Process
	pid int
}

func (p *fakeProc) Pid() int { return p.pid }

// The lifecycle's table, walked: each (phase, event) pair either moves as the table says
// or is refused, leaving the phase; Done has no move; every phase is reachable from
// Accepted.
func TestContainerLifecycle(t *testing.T) {
	phases := []Phase{Accepted, Running, Killing, Done}
	for _, from := range phases {
		for ev := range eventNames {
			c := &Container{ID: records.ContainerID{Attempt: attempt, ID: 1}, phase: from}
			to, allowed := moves[move{from, ev}]
			err := c.moveLocked(ev)
			switch {
			case allowed && (err != nil || c.phase != to):
				t.Errorf("%v on %v: %v, phase %v; want %v", from, ev, err, c.phase, to)
			case !allowed && (!errors.As(err, new(*TransitionError)) || c.phase != from):
				t.Errorf("%v on %v: %v, phase %v; want refused and unchanged", from, ev, err, c.phase)
			}
		}
	}
	reached := map[Phase]bool{Accepted: true}
	for changed := true; changed; {
		changed = false
		for m, to := range moves {
			if m.from == Done {
				t.Errorf("Done moves on %v", m.on)
			}
			if reached[m.from] && !reached[to] {
				reached[to], changed = true, true
			}
		}
	}
	for _, p := range phases {
		if !reached[p] {
			t.Errorf("%v is never reached", p)
		}
	}
}

// A container's life through the table: launched, asked to stop (its context ends, the
// first kill's status stands), ended once; a launch after a kill is refused, so the
// runner stops the process it started.
func TestTableMovesAContainerThroughItsLife(t *testing.T) {
	tb := NewTable(NewJournal(nil))
	c := newContainer(t, tb, 1)
	if !tb.Launched(c, startProcess(t), c.started) {
		t.Fatal("launch refused")
	}
	if v := tb.ViewOf(c); v.Phase != Running || !v.Runs() {
		t.Fatalf("after the launch: %+v", v)
	}
	if asked, done, proc := tb.AskKill(c, -105, "by the AM"); !asked || done || proc == nil {
		t.Fatalf("kill: asked %v done %v proc %v", asked, done, proc)
	}
	if asked, _, _ := tb.AskKill(c, -100, "again"); asked || c.Context().Err() == nil {
		t.Fatalf("second kill asked %v, context %v", asked, c.Context().Err())
	}
	if v := tb.ViewOf(c); v.Phase != Killing || v.KillExit != -105 || v.Runs() {
		t.Fatalf("while killing: %+v", v)
	}
	if first, killed := tb.End(c, -105, "killed"); !first || !killed {
		t.Fatalf("end: first %v killed %v", first, killed)
	}
	if first, _ := tb.End(c, 0, ""); first {
		t.Fatal("ended twice")
	}
	select {
	case <-c.Done():
	default:
		t.Fatal("Done() not closed")
	}

	// Killed before its launch began: no launch starts.
	d := newContainer(t, tb, 2)
	tb.AskKill(d, -105, "")
	if tb.Launching(d) {
		t.Fatal("a container asked to stop began its launch")
	}
	if p := tb.AwaitLaunch(d); p != nil {
		t.Fatalf("no launch ran, yet AwaitLaunch found process %v", p)
	}

	// Killed while its process was being started (the executor's Launch had started it,
	// and not yet returned: the CI failure of TestCgroupsContainEscapesHogsAndBombs, where
	// the kill completed the container while its processes ran). The kill waits for the
	// launch and gets the process to stop; the launch is refused.
	e := newContainer(t, tb, 3)
	if !tb.Launching(e) {
		t.Fatal("launch refused before any kill")
	}
	if _, done, proc := tb.AskKill(e, -105, ""); done || proc != nil {
		t.Fatalf("kill during the launch: done %v proc %v", done, proc)
	}
	got := make(chan any, 1)
	go func() { got <- tb.AwaitLaunch(e) }()
	select {
	case p := <-got:
		t.Fatalf("AwaitLaunch returned %v before the launch said how it went", p)
	default:
	}
	p := startProcess(t)
	if tb.Launched(e, p, e.started) {
		t.Fatal("a container asked to stop was launched")
	}
	if w := <-got; w != p {
		t.Fatalf("AwaitLaunch gave %v, want the process the launch started", w)
	}

	// A launch that started nothing: the kill finds no process and ends it itself.
	f := newContainer(t, tb, 4)
	tb.Launching(f)
	go tb.LaunchFailed(f)
	if p := tb.AwaitLaunch(f); p != nil {
		t.Fatalf("a failed launch left process %v", p)
	}
}

// A heartbeat answer without acknowledgements leaves completed containers alone: one that
// completed while the heartbeat was on the wire has not been reported yet (this lost
// completions, and with them an AM's last container or an attempt's AM container). A
// resync drops every completed container, and only those.
func TestForgetCompletedOnlyWhatTheRMAcknowledged(t *testing.T) {
	dir := t.TempDir()
	store, err := nmstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	j := NewJournal(func(err error, what string) { t.Errorf("%s: %v", what, err) })
	j.Open(store)
	t.Cleanup(func() { j.Close() })
	tb := NewTable(j)
	done, acked, running := newContainer(t, tb, 2), newContainer(t, tb, 3), newContainer(t, tb, 4)
	tb.End(done, 0, "")
	tb.End(acked, 0, "")
	tb.MarkReported([]*Container{acked})
	tb.Launched(running, startProcess(t), running.started)
	tb.ForgetCompleted(nil)
	if n := len(tb.All()); n != 3 {
		t.Fatalf("an answer without acknowledgements dropped containers: %d left", n)
	}
	// The RM acknowledges only what it had; a running container is never dropped.
	tb.ForgetCompleted([]*yarnpb.ContainerIdProto{acked.ID.Proto(), running.ID.Proto()})
	if tb.Get(acked.ID) != nil || len(tb.All()) != 2 {
		t.Fatalf("after acknowledging %s: %d left", acked.ID, len(tb.All()))
	}
	statuses, completed := tb.Statuses()
	if len(statuses) != 2 || len(completed) != 1 || completed[0] != done {
		t.Fatalf("statuses %v, completed to report %v", statuses, completed)
	}
	tb.ForgetAllCompleted()
	if tb.Get(running.ID) == nil || len(tb.All()) != 1 {
		t.Fatalf("after a resync: %d left", len(tb.All()))
	}
	// The store holds what the table holds: a forgotten container's record is gone, and
	// a later write of it (a slower writer) does not bring it back.
	tb.Save(done)
	j.Close()
	store, err = nmstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	st, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Containers) != 1 || st.Containers[0].ID != running.ID.String() || st.Containers[0].State != nmstore.Launched {
		t.Fatalf("store holds %+v", st.Containers)
	}
}

// A container still localizing is RUNNING on the wire, as the Java NM reports it: the
// 2.7 RM takes any other state in a heartbeat for a finished container and told the AM
// its just-started maps had completed. 3.x readers get the stage in the sub-state.
func TestLocalizingContainerIsReportedRunning(t *testing.T) {
	tb := NewTable(NewJournal(nil))
	cs := []*Container{newContainer(t, tb, 1), newContainer(t, tb, 2), newContainer(t, tb, 3), newContainer(t, tb, 4)}
	tb.Launched(cs[1], startProcess(t), cs[1].started)
	tb.Launched(cs[2], startProcess(t), cs[2].started)
	tb.AskKill(cs[2], -105, "")
	tb.End(cs[3], 0, "")
	want := []struct {
		state yarnpb.ContainerStateProto
		sub   yarnpb.ContainerSubStateProto
	}{
		{yarnpb.ContainerStateProto_C_RUNNING, yarnpb.ContainerSubStateProto_CSS_SCHEDULED},
		{yarnpb.ContainerStateProto_C_RUNNING, yarnpb.ContainerSubStateProto_CSS_RUNNING},
		{yarnpb.ContainerStateProto_C_RUNNING, yarnpb.ContainerSubStateProto_CSS_COMPLETING},
		{yarnpb.ContainerStateProto_C_COMPLETE, yarnpb.ContainerSubStateProto_CSS_DONE},
	}
	statuses, _ := tb.Statuses()
	reg := tb.RegistrationStatuses()
	if len(statuses) != 4 || len(reg) != 4 {
		t.Fatalf("statuses %v, registration %v", statuses, reg)
	}
	for i, w := range want {
		if st := statuses[i]; st.GetState() != w.state || st.GetContainerSubState() != w.sub {
			t.Errorf("%s: heartbeat says %v/%v, want %v/%v", cs[i].ID, st.GetState(), st.GetContainerSubState(), w.state, w.sub)
		}
		if st := reg[i]; st.GetContainerState() != w.state {
			t.Errorf("%s: registration says %v, want %v", cs[i].ID, st.GetContainerState(), w.state)
		}
	}
}

// What an application's containers brought the auxiliary services is recorded with it
// and comes back from the store for a restarted NodeManager; a MapReduce shuffle token an
// older NodeManager recorded in its place comes back too, and is kept when the record is
// written again.
func TestServiceDataSurvivesARestart(t *testing.T) {
	dir := t.TempDir()
	open := func() (*Journal, *nmstore.Store) {
		store, err := nmstore.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		j := NewJournal(func(err error, what string) { t.Errorf("%s: %v", what, err) })
		j.Open(store)
		return j, store
	}
	j, _ := open()
	tb := NewTable(j)
	c := New(context.Background(), Spec{ID: records.ContainerID{Attempt: attempt, ID: 1}, Ident: &yarnpb.ContainerTokenIdentifierProto{},
		User: "alice", CLC: &yarnpb.ContainerLaunchContextProto{}})
	defer c.Release()
	tb.Add(c, map[string][]byte{"mapreduce_shuffle": []byte("token")})
	j.Close()

	j, store := open()
	st, err := store.Load()
	if err != nil || len(st.Apps) != 1 {
		t.Fatalf("load: %v %+v", err, st)
	}
	st.Apps[0].ShuffleSecret = []byte("old-secret") // as an older NodeManager wrote it
	a, err := RestoredApp(st.Apps[0])
	if err != nil {
		t.Fatal(err)
	}
	tb = NewTable(j)
	data, legacy := tb.RestoreApp(a)
	if string(data["mapreduce_shuffle"]) != "token" || string(legacy) != "old-secret" {
		t.Fatalf("restored %q, legacy %q", data, legacy)
	}
	tb.SaveApp(a)
	j.Close()
	_, store = open()
	defer store.Close()
	if st, err = store.Load(); err != nil || string(st.Apps[0].ShuffleSecret) != "old-secret" || string(st.Apps[0].ServiceData["mapreduce_shuffle"]) != "token" {
		t.Fatalf("written again: %v %+v", err, st.Apps[0])
	}
}
