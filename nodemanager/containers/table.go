package containers

import (
	"sort"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/container"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/nodemanager/nmstore"
	"github.com/bobbin-yarn/bobbin/records"
)

// Table holds the node's containers and applications. Its lock guards them and every
// container's and application's changing fields; it is never held while a record is
// written (the journal's lock orders those) or while anything else is called.
type Table struct {
	mu      sync.Mutex
	cs      map[records.ContainerID]*Container
	apps    map[records.ApplicationID]*App
	journal *Journal
}

// NewTable is an empty table whose records go to journal.
func NewTable(journal *Journal) *Table {
	return &Table{cs: map[records.ContainerID]*Container{}, apps: map[records.ApplicationID]*App{}, journal: journal}
}

// Get looks a container up (nil if it is not here).
func (t *Table) Get(id records.ContainerID) *Container {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cs[id]
}

// View is a container as it is now; false if it is not here.
func (t *Table) View(id records.ContainerID) (View, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c, ok := t.cs[id]
	if !ok {
		return View{}, false
	}
	return c.viewLocked(), true
}

// ViewOf is c as it is now.
func (t *Table) ViewOf(c *Container) View {
	t.mu.Lock()
	defer t.mu.Unlock()
	return c.viewLocked()
}

// Views are every container as it is now, in no order.
func (t *Table) Views() []View {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]View, 0, len(t.cs))
	for _, c := range t.cs {
		out = append(out, c.viewLocked())
	}
	return out
}

// Add takes a newly accepted container, and its application the first time; serviceData
// is what its launch context brought the auxiliary services, by name. added is false when
// the container is here already. The container's record is written before Add returns —
// as the Java NM stores a container before it answers, a restart must know of every
// container it accepted — and so is its application's when that is new or its service
// data changed.
func (t *Table) Add(c *Container, serviceData map[string][]byte) (added bool) {
	t.mu.Lock()
	if _, dup := t.cs[c.ID]; dup {
		t.mu.Unlock()
		return false
	}
	t.cs[c.ID] = c
	id := c.ID.Attempt.App
	a, ok := t.apps[id]
	changed := !ok
	if !ok {
		a = &App{ID: id, User: c.User, ACLs: c.CLC.GetApplication_ACLs(), LogContext: c.Ident.GetLogAggregationContext()}
		t.apps[id] = a
	}
	for name, data := range serviceData {
		if old, ok := a.serviceData[name]; !ok || string(old) != string(data) {
			if a.serviceData == nil {
				a.serviceData = map[string][]byte{}
			}
			a.serviceData[name], changed = data, true
		}
	}
	t.mu.Unlock()
	if changed {
		t.SaveApp(a)
	}
	t.Save(c)
	return true
}

// Restore puts back a container read from the recovery store, and its application if the
// store had none for it.
func (t *Table) Restore(c *Container) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cs[c.ID] = c
	id := c.ID.Attempt.App
	if _, ok := t.apps[id]; !ok {
		t.apps[id] = &App{ID: id, User: c.User, ACLs: c.CLC.GetApplication_ACLs(), LogContext: c.Ident.GetLogAggregationContext()}
	}
}

// Localized records that c's resources are in place, or (err) that fetching them failed.
func (t *Table) Localized(c *Container, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		c.localization, c.locDiag = LocalizationFailed, err.Error()
		return
	}
	c.localization = LocalizationDone
}

// HoldsGPUs records the GPUs (minor numbers) c was given; its record carries them
// from its launch on, for a restarted NodeManager to give them back.
func (t *Table) HoldsGPUs(c *Container, minors []int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c.gpus = append([]int(nil), minors...)
}

// GPUsOf are the GPUs c holds (or held before a restart).
func (t *Table) GPUsOf(c *Container) []int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]int(nil), c.gpus...)
}

// Launched records that c's process started: it is Running. false: c was asked to stop
// (or completed) meanwhile, and the caller stops the process. A container recovered with
// a kill asked before the restart is Killing.
func (t *Table) Launched(c *Container, proc container.Process, started time.Time) bool {
	t.mu.Lock()
	// The process is c's even when a kill came first: a kill waiting for the launch stops
	// it, and a restart finds its pid.
	c.proc, c.started = proc, started
	c.launchOverLocked()
	if c.moveLocked(Launched) != nil {
		t.mu.Unlock()
		return false
	}
	if c.killExit != 0 {
		_ = c.moveLocked(KillAsked) // Running → Killing
	}
	t.mu.Unlock()
	t.Save(c) // with its pid: a restarted NodeManager takes it back
	return true
}

// LaunchFailed says the launch Launching began started no process.
func (t *Table) LaunchFailed(c *Container) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c.launchOverLocked()
}

func (c *Container) launchOverLocked() {
	if c.launching != nil {
		close(c.launching)
		c.launching = nil
	}
}

// AwaitLaunch waits for the launch under way (a kill's context ends it soon) and returns
// the process it started; nil when none did, or when no launch was under way and none ran.
func (t *Table) AwaitLaunch(c *Container) container.Process {
	t.mu.Lock()
	ch := c.launching
	t.mu.Unlock()
	if ch != nil {
		<-ch
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return c.proc
}

// Launching says the runner starts c's process now; false when a kill was asked first
// (it must not start). Launched, or the runner's own end of c, follows.
func (t *Table) Launching(c *Container) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c.phase != Accepted {
		return false
	}
	c.launching = make(chan struct{})
	return true
}

// AskKill asks c to stop with exit as the status the kill reports: its context ends, so
// nothing starts it any more. asked is false when a kill was asked before (the first one's
// status stands); done when it completed already. proc is its process, nil if it never
// started (AwaitLaunch says what a launch under way started).
func (t *Table) AskKill(c *Container, exit int32, diag string) (asked, done bool, proc container.Process) {
	t.mu.Lock()
	if c.phase == Done {
		t.mu.Unlock()
		return false, true, nil
	}
	asked = c.killExit == 0
	if asked {
		c.killExit, c.killDiag = exit, diag
	}
	_ = c.moveLocked(KillAsked) // no move when Killing already
	proc = c.proc
	t.mu.Unlock()
	if asked {
		t.Save(c) // a restart must not launch it again
	}
	c.cancel()
	return asked, false, proc
}

// End completes c with its exit status, once: it is Done, its record stored, then Done()
// is closed. first is false when it had completed already; killed tells a kill's end.
func (t *Table) End(c *Container, exit int32, diag string) (first, killed bool) {
	t.mu.Lock()
	if c.moveLocked(Ended) != nil {
		t.mu.Unlock()
		return false, false
	}
	c.exit, c.diag = exit, diag
	killed = c.killExit != 0
	t.mu.Unlock()
	t.Save(c) // stored before anyone waiting for the end hears of it
	close(c.done)
	return true, killed
}

// Live are the containers not Done.
func (t *Table) Live() []*Container {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*Container
	for _, c := range t.cs {
		if c.phase != Done {
			out = append(out, c)
		}
	}
	return out
}

// All are every container here.
func (t *Table) All() []*Container {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]*Container, 0, len(t.cs))
	for _, c := range t.cs {
		out = append(out, c)
	}
	return out
}

// Statuses are what the next heartbeat reports: every live container and each completed
// one the RM has not had yet; completed lists the latter, for MarkReported once the
// heartbeat got through.
func (t *Table) Statuses() (out []*yarnpb.ContainerStatusProto, completed []*Container) {
	t.mu.Lock()
	out = make([]*yarnpb.ContainerStatusProto, 0, len(t.cs))
	for _, c := range t.cs {
		if c.phase == Done {
			if c.reported {
				continue
			}
			completed = append(completed, c)
		}
		out = append(out, c.viewLocked().Status())
	}
	t.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].GetContainerId().GetId() < out[j].GetContainerId().GetId() })
	return out, completed
}

// RegistrationStatuses are the containers a registration reports (NMContainerStatus):
// every live one and each completed one the RM has not told the node to forget.
func (t *Table) RegistrationStatuses() []*yarnpb.NMContainerStatusProto {
	t.mu.Lock()
	out := make([]*yarnpb.NMContainerStatusProto, 0, len(t.cs))
	for _, c := range t.cs {
		state, _ := c.phase.WireState()
		st := &yarnpb.NMContainerStatusProto{ContainerId: c.ID.Proto(), ContainerState: state.Enum(), Diagnostics: proto.String(c.diag),
			ContainerExitStatus: proto.Int32(c.exit)}
		if c.Ident != nil {
			st.Resource, st.Priority, st.CreationTime = c.Ident.GetResource(), c.Ident.GetPriority(), c.Ident.CreationTime
			// The request id and allocation tags the RM put in its token (3.x): a restarted
			// RM counts the container's tags again from them.
			st.AllocationRequestId, st.AllocationTags = c.Ident.AllocationRequestId, c.Ident.GetAllocationTags()
		}
		out = append(out, st)
	}
	t.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].GetContainerId().GetId() < out[j].GetContainerId().GetId() })
	return out
}

// MarkReported records that the RM received these completed statuses.
func (t *Table) MarkReported(completed []*Container) {
	t.mu.Lock()
	for _, c := range completed {
		c.reported = true
	}
	t.mu.Unlock()
	for _, c := range completed {
		t.Save(c)
	}
}

// ForgetCompleted drops the completed containers the RM acknowledged. An empty list drops
// nothing: a heartbeat answer without acknowledgements must not take containers that
// completed while it was on the wire, before the RM had their status.
func (t *Table) ForgetCompleted(ids []*yarnpb.ContainerIdProto) {
	t.mu.Lock()
	var gone []*Container
	for _, p := range ids {
		id := records.ContainerIDFromProto(p)
		if c, ok := t.cs[id]; ok && c.phase == Done {
			delete(t.cs, id)
			gone = append(gone, c)
		}
	}
	t.mu.Unlock()
	t.forget(gone)
}

// ForgetAllCompleted drops every completed container (the RM asked for a resync: it has
// forgotten them).
func (t *Table) ForgetAllCompleted() {
	t.mu.Lock()
	var gone []*Container
	for id, c := range t.cs {
		if c.phase == Done {
			delete(t.cs, id)
			gone = append(gone, c)
		}
	}
	t.mu.Unlock()
	t.forget(gone)
}

// Save writes c's record as it is now. Writes of one container are ordered: an older
// record never replaces a newer one, and a forgotten container stays forgotten.
func (t *Table) Save(c *Container) {
	if !t.journal.Enabled() {
		return
	}
	t.mu.Lock()
	c.saves++
	seq, rec := c.saves, c.recordLocked()
	t.mu.Unlock()
	t.journal.Write("record container "+rec.ID, func(s *nmstore.Store) error {
		if c.forgotten || seq <= c.saved {
			return nil
		}
		c.saved = seq
		return s.PutContainer(rec)
	})
}

// forget removes the records of containers the node no longer holds.
func (t *Table) forget(cs []*Container) {
	if len(cs) == 0 {
		return
	}
	ids := make([]string, 0, len(cs))
	for _, c := range cs {
		ids = append(ids, c.ID.String())
	}
	t.journal.Write("forget containers", func(s *nmstore.Store) error {
		for _, c := range cs {
			c.forgotten = true
		}
		return s.RemoveContainers(ids)
	})
}
