package rmstate

import (
	"math/rand/v2"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/conf/resourcetypes"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
)

// checkIndex checks that the index finds every container of every application's list by
// its id and (when live) by its engine id, each at its appIdx, and nothing else.
func checkIndex(t *testing.T, c *Containers, step int) {
	t.Helper()
	n, live := 0, 0
	for app, a := range c.index.apps {
		if len(a.list) == 0 {
			t.Fatalf("step %d: empty list kept for %v", step, app)
		}
		for i, ctr := range a.list {
			if ctr.ID.Attempt.App != app || int(ctr.appIdx) != i || !ctr.tracked || c.index.get(ctr.ID) != ctr {
				t.Fatalf("step %d: %v at %d of %v (appIdx %d, tracked %v, found by id %v)", step, ctr.ID, i, app, ctr.appIdx, ctr.tracked, c.index.get(ctr.ID) == ctr)
			}
			if c.index.engine(ctr.EngineID) == ctr {
				live++
			}
		}
		seqs := 0
		for i := range a.seqs {
			seqs += a.seqs[i].bySeq.Len()
		}
		if seqs != len(a.list) {
			t.Fatalf("step %d: %v: %d by number, %d listed", step, app, seqs, len(a.list))
		}
		n += len(a.list)
	}
	starting := map[int32]int32{}
	for _, a := range c.index.apps {
		for _, ctr := range a.list {
			if ctr.starting {
				if ctr.phase != cAllocated {
					t.Fatalf("step %d: %v starting, %v", step, ctr.ID, ctr.phase)
				}
				starting[ctr.nodeIdx]++
			}
		}
	}
	for i, list := range c.startingOn {
		if starting[int32(i)] != int32(len(list)) {
			t.Fatalf("step %d: node %d lists %d starting, holds %d", step, i, len(list), starting[int32(i)])
		}
		for j, ctr := range list {
			if !ctr.starting || int(ctr.startIdx) != j || int(ctr.nodeIdx) != i {
				t.Fatalf("step %d: %v listed starting on node %d at %d: starting %v, node %d, at %d", step, ctr.ID, i, j, ctr.starting, ctr.nodeIdx, ctr.startIdx)
			}
		}
	}
	if n != c.index.len() || live != c.index.byEngine.Len() {
		t.Fatalf("step %d: %d containers listed, %d counted; %d by engine id, %d held", step, n, c.index.len(), live, c.index.byEngine.Len())
	}
}

// The per-application index follows the table through every way a container enters and
// leaves it: placed, reported complete (acknowledged by the AM before or after),
// cleaned up with its attempt or application, forgotten with its application.
func TestContainersByApplicationFollowTheTable(t *testing.T) {
	now := time.UnixMilli(1_000_000)
	c := NewContainers(resourcetypes.Default(), func() time.Time { return now })
	rng := rand.New(rand.NewPCG(1, 2))
	// An attempt that ended gets no more containers: the application's next attempt
	// does (ids are per attempt).
	attempt := map[int]int32{}
	att := func(app int) records.AttemptID {
		return records.AttemptID{App: records.ApplicationID{ClusterTimestamp: 1, ID: int32(app)}, Attempt: attempt[app] + 1}
	}
	node := func(i int) *NodeAddr {
		return &NodeAddr{Key: "n" + string(rune('0'+i)) + ":1", ID: &yarnpb.NodeIdProto{Host: proto.String("n"), Port: proto.Int32(int32(i))}}
	}
	var live []*Container
	engine := scheduler.ContainerID(0)
	for step := range 3000 {
		switch op := rng.IntN(10); {
		case op < 4: // placed
			engine++
			rc := &Container{EngineID: engine, ID: records.ContainerID{Attempt: att(rng.IntN(5) + 1)}, At: node(rng.IntN(3))}
			c.AddAll([]*Container{rc})
			live = append(live, rc)
		case op < 5 && len(live) > 0: // reported running by its node
			rc := live[rng.IntN(len(live))]
			c.TakeReports([]NodeReport{{Node: rc.Node(), Running: []records.ContainerID{rc.ID}}})
		case op < 7 && len(live) > 0: // reported complete by its node
			i := rng.IntN(len(live))
			rc := live[i]
			live = append(live[:i], live[i+1:]...)
			c.TakeReports([]NodeReport{{Node: rc.Node(), Statuses: []*yarnpb.ContainerStatusProto{{ContainerId: rc.ID.Proto(), State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(), ExitStatus: proto.Int32(0)}}}})
		case op < 9: // an allocate: hands out, acknowledges what went out last time
			_, _, _, settle := c.DrainUnsettled(att(rng.IntN(5)+1), now)
			c.Settle([]Settlement{settle})
		case rng.IntN(4) == 0: // the application ends, or is forgotten
			a := rng.IntN(5) + 1
			app := att(a).App
			c.CleanupContainers(app, func(records.ContainerID) bool { return true })
			if rng.IntN(2) == 0 {
				c.ForgetApp(app)
			}
			attempt[a]++
			kept := live[:0]
			for _, rc := range live {
				if rc.ID.Attempt.App != app {
					kept = append(kept, rc)
				}
			}
			live = kept
		default:
			a := rng.IntN(5) + 1
			c.ForgetAttempt(att(a))
			attempt[a]++
		}
		checkIndex(t, c, step)
	}
	usage := c.LiveUsage(map[records.ApplicationID]bool{att(1).App: true, att(2).App: true})
	for app, u := range usage {
		want := int32(0)
		c.index.each(func(rc *Container) {
			if rc.ID.Attempt.App == app && !rc.done() {
				want++
			}
		})
		if u.Containers != want {
			t.Fatalf("%v: usage counts %d live containers, the table %d", app, u.Containers, want)
		}
	}
}

// A completed status written as bytes for an allocate answer is the marshalled status:
// plain, with the 3.x sub-state, with a long diagnostic, and one kept whole.
func TestCompletedStatusWireIsTheMarshalledProto(t *testing.T) {
	c := &Container{ID: records.ContainerID{Attempt: records.AttemptID{App: records.ApplicationID{ClusterTimestamp: 1795740979941, ID: 42}, Attempt: 2}, ID: 3<<40 | 77}}
	long := string(make([]byte, 300))
	for _, st := range []*yarnpb.ContainerStatusProto{
		{ContainerId: c.ID.Proto(), State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(), ExitStatus: proto.Int32(0), Diagnostics: proto.String("")},
		{ContainerId: c.ID.Proto(), State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(), ExitStatus: proto.Int32(-104), Diagnostics: proto.String("killed " + long),
			ContainerSubState: yarnpb.ContainerSubStateProto_CSS_DONE.Enum()},
		{ContainerId: c.ID.Proto(), State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(), ExitStatus: proto.Int32(1), Capability: &yarnpb.ResourceProto{Memory: proto.Int64(1024)}},
	} {
		d := compactStatus(st)
		d.c = c
		want, _ := proto.Marshal(&yarnpb.AllocateResponseProto{CompletedContainerStatuses: []*yarnpb.ContainerStatusProto{d.status()}})
		if got := d.appendEntry(nil); string(got) != string(want) {
			t.Fatalf("%v:\n got %x\nwant %x", st, got, want)
		}
	}
}

// An application forgotten after an RM restart, whose attempt only recovered containers
// (so made no container id), leaves nothing queued, and its NodeManager is told to forget
// the completed container its AM never pulled.
func TestForgetAppDropsRecoveredAttempts(t *testing.T) {
	now := time.UnixMilli(1_000_000)
	c := NewContainers(resourcetypes.Default(), func() time.Time { return now })
	att := records.AttemptID{App: records.ApplicationID{ClusterTimestamp: 1, ID: 7}, Attempt: 1}
	at := &NodeAddr{Key: "n1:1", ID: &yarnpb.NodeIdProto{Host: proto.String("n1"), Port: proto.Int32(1)}}
	rc := &Container{ID: records.ContainerID{Attempt: att, ID: 2}, At: at, Created: now.UnixMilli()}
	if _, ok := c.RecoverCompleted(rc, &yarnpb.ContainerStatusProto{ContainerId: rc.ID.Proto(), State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(), ExitStatus: proto.Int32(0)}); !ok {
		t.Fatal("not recovered")
	}
	if b := c.boxes.get(att); b == nil || len(b.completed) != 1 || len(c.seq) != 0 {
		t.Fatalf("recovered: box %+v, seq %v", b, c.seq)
	}
	c.ForgetApp(att.App)
	if len(c.boxes.m) != 0 || c.index.len() != 0 || len(c.index.apps) != 0 || c.index.byEngine.Len() != 0 {
		t.Fatalf("left: boxes %v, %d containers, %d applications, %d by engine id", c.boxes.m, c.index.len(), len(c.index.apps), c.index.byEngine.Len())
	}
	if got := c.orders.removed[at.Key]; len(got) != 1 || got[0] != rc.ID {
		t.Fatalf("NodeManager told to forget %v, want %v", got, rc.ID)
	}
}

// The expiry check finds exactly the containers handed out before the cutoff and not
// reported since, and the hand-out queue it reads stays within a bound of them.
func TestUnstartedSinceFollowsHandOuts(t *testing.T) {
	now := time.UnixMilli(1_000_000)
	c := NewContainers(resourcetypes.Default(), func() time.Time { return now })
	att := records.AttemptID{App: records.ApplicationID{ClusterTimestamp: 1, ID: 1}, Attempt: 1}
	at := &NodeAddr{Key: "n1:1", ID: &yarnpb.NodeIdProto{Host: proto.String("n1"), Port: proto.Int32(1)}}
	rng := rand.New(rand.NewPCG(3, 4))
	var all []*Container
	for i := range 20000 {
		rc := &Container{EngineID: scheduler.ContainerID(i + 1), ID: records.ContainerID{Attempt: att, ID: int64(i + 1)}, At: at}
		c.AddAll([]*Container{rc})
		c.HandOut(rc.ID, now.Add(time.Duration(i)*time.Millisecond))
		all = append(all, rc)
		if rng.IntN(10) < 9 { // most start; the NodeManager reports them running
			c.Launched(all[rng.IntN(len(all))].ID)
		}
		if max := 2*c.nUnstarted + 1024; len(c.handOuts) > max {
			t.Fatalf("after %d hand-outs: %d queued for %d unstarted", i+1, len(c.handOuts), c.nUnstarted)
		}
	}
	for _, cutoff := range []int{0, 5000, 5000, 12345, 20000} {
		at := now.Add(time.Duration(cutoff) * time.Millisecond)
		want := map[records.ContainerID]bool{}
		unstarted := 0
		for _, rc := range all {
			if rc.unstarted {
				unstarted++
				if time.UnixMilli(rc.handedOut).Before(at) {
					want[rc.ID] = true
				}
			}
		}
		if unstarted != c.nUnstarted {
			t.Fatalf("%d containers unstarted, counted %d", unstarted, c.nUnstarted)
		}
		due := c.UnstartedSince(at)
		if len(due) != len(want) {
			t.Fatalf("cutoff %d: %d due; want %d", cutoff, len(due), len(want))
		}
		for _, rc := range due {
			if !want[rc.ID] {
				t.Fatalf("cutoff %d: %v due, handed out at %d", cutoff, rc.ID, rc.handedOut)
			}
			c.Launched(rc.ID) // as expiry completes it
		}
	}
}

// A queue counts each of its containers' ends once: reported complete, killed with the
// application, the live ones of an application moved away (Java's move re-accounts them);
// one that ended while the RM was down, recovered complete, is not counted (nor allocated).
// A preempted container's resource-seconds count to its queue.
func TestQueueEndsCountEachEndOnce(t *testing.T) {
	now := time.UnixMilli(1_000_000)
	c := NewContainers(resourcetypes.Default(), func() time.Time { return now })
	app := records.ApplicationID{ClusterTimestamp: 1, ID: 1}
	att := app.Attempt(1)
	at := &NodeAddr{Key: "n1:1", ID: &yarnpb.NodeIdProto{Host: proto.String("n1"), Port: proto.Int32(1)}}
	c.SetQueue(app, "a")
	engine := scheduler.ContainerID(0)
	add := func() *Container {
		engine++
		rc := &Container{EngineID: engine, ID: records.ContainerID{Attempt: att}, At: at, Created: now.UnixMilli(), Resource: scheduler.Resource{2048, 2}}
		c.AddAll([]*Container{rc})
		return rc
	}
	complete := func(rc *Container) {
		c.TakeReports([]NodeReport{{Node: rc.Node(), Statuses: []*yarnpb.ContainerStatusProto{{ContainerId: rc.ID.Proto(),
			State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(), ExitStatus: proto.Int32(0)}}}})
	}
	first, second, third := add(), add(), add()
	complete(first)
	c.PreemptContainer(scheduler.Preemption{Container: second.EngineID, Kill: true}, testutil.QuietLogger())
	now = now.Add(10 * time.Second)
	if _, _, fresh := c.Complete(second.ID, &yarnpb.ContainerStatusProto{ContainerId: second.ID.Proto(), State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(),
		ExitStatus: proto.Int32(-102)}); !fresh {
		t.Fatal("the preempted container was not live")
	}
	if live := c.MoveQueue(app, "b"); live != 1 {
		t.Fatalf("moved with %d live containers, want 1", live)
	}
	complete(third)
	recovered := &Container{ID: records.ContainerID{Attempt: att, ID: 99}, At: at, Created: now.UnixMilli()}
	if _, ok := c.RecoverCompleted(recovered, &yarnpb.ContainerStatusProto{ContainerId: recovered.ID.Proto(), State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(), ExitStatus: proto.Int32(0)}); !ok {
		t.Fatal("not recovered")
	}
	ends := c.QueueEnds()
	want := map[string]QueueEnds{"a": {Ended: 3, Preempted: 1, PreemptedSeconds: scheduler.Resource{20480, 20}}, "b": {Ended: 1}}
	if len(ends) != 2 || ends["a"] != want["a"] || ends["b"] != want["b"] {
		t.Fatalf("ends %+v, want %+v", ends, want)
	}
}
