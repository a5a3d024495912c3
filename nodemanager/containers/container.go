package containers

import (
	"context"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/container"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/nodemanager/nmstore"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

// Dirs are a container's directories, chosen once as it is accepted.
type Dirs struct {
	AppDirs  []string // <local>/usercache/<user>/appcache/<app>, one per local dir
	Work     string   // the container's work dir ($PWD)
	LogDirs  []string // <log>/<app>/<container>, one per log dir
	LocalDir string   // the local dir the work dir is on
}

// Container is one container on this node. What it is — its id, token, user, launch
// request and directories — never changes once it is accepted; what becomes of it
// changes only through the Table that holds it.
type Container struct {
	ID    records.ContainerID
	Ident *yarnpb.ContainerTokenIdentifierProto
	User  string
	CLC   *yarnpb.ContainerLaunchContextProto
	// Request is its StartContainerRequestProto as received (kept by the recovery store).
	Request []byte
	Dirs    Dirs

	// ctx ends when a kill is asked or the NodeManager stops: what prepares or starts the
	// container gives up. done is closed once the container is Done and its record stored.
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	// Under the table's lock.
	phase    Phase
	exit     int32
	diag     string
	killExit int32 // set once a kill was asked: the status the kill reports
	killDiag string
	proc     container.Process
	// launching is open while the runner starts its process (the executor's Launch is
	// under way), closed once Launched or LaunchFailed says how it went. A kill meanwhile
	// waits for it and stops the process that started: a container is never reported
	// complete with its processes still running.
	launching chan struct{}
	started   time.Time // when its process started (the youngest are evicted first)
	gpus      []int     // the minor numbers of the GPUs it holds
	// reported: the RM has had its completed status. As the Java NM does, a completed
	// container is reported once and kept (getContainerStatuses still answers for it)
	// until the RM says to forget it, which it does once the AM has had the status.
	reported bool
	saves    uint64 // changes to its record
	// Where the localization of its resources stands (getLocalizationStatuses), and why
	// it failed.
	localization Localization
	locDiag      string

	// Under the journal's lock: the newest change written, and whether its record was
	// removed — a slower writer never puts an older or a removed record back.
	saved     uint64
	forgotten bool
}

// Spec is what a container is accepted with.
type Spec struct {
	ID      records.ContainerID
	Ident   *yarnpb.ContainerTokenIdentifierProto
	User    string
	CLC     *yarnpb.ContainerLaunchContextProto
	Request []byte
	Dirs    Dirs
	// From a recovered record: the kill asked before the restart (0: none) and whether
	// the RM had its completed status.
	KillExit int32
	KillDiag string
	Reported bool
	GPUs     []int // the GPUs it held before a NodeManager restart
}

// New is an accepted container. parent is the NodeManager's life: its end, as a kill,
// ends the container's context.
func New(parent context.Context, s Spec) *Container {
	ctx, cancel := context.WithCancel(parent)
	return &Container{ID: s.ID, Ident: s.Ident, User: s.User, CLC: s.CLC, Request: s.Request, Dirs: s.Dirs,
		ctx: ctx, cancel: cancel, done: make(chan struct{}),
		phase: Accepted, exit: exitcode.Invalid, killExit: s.KillExit, killDiag: s.KillDiag, reported: s.Reported, gpus: s.GPUs}
}

// Context ends when a kill is asked or the NodeManager stops.
func (c *Container) Context() context.Context { return c.ctx }

// Release frees the container's context once nothing prepares or watches it any more.
func (c *Container) Release() { c.cancel() }

// Done is closed once the container is complete and its record stored.
func (c *Container) Done() <-chan struct{} { return c.done }

// Resource is what the container was allocated.
func (c *Container) Resource() *yarnpb.ResourceProto { return c.Ident.GetResource() }

// View is a container as it is at one moment, read under the table's lock.
type View struct {
	*Container
	Phase    Phase
	Exit     int32
	Diag     string
	KillExit int32
	KillDiag string
	Proc     container.Process // nil until its process started
	Started  time.Time
	Reported bool
	// Localization is where its resources' localization stands; LocalizationDiag why it
	// failed.
	Localization     Localization
	LocalizationDiag string
}

func (c *Container) viewLocked() View {
	loc := c.localization
	if loc == LocalizationPending && c.proc != nil {
		loc = LocalizationDone // taken back running by a restarted NodeManager
	}
	return View{Container: c, Phase: c.phase, Exit: c.exit, Diag: c.diag, KillExit: c.killExit, KillDiag: c.killDiag, Proc: c.proc,
		Started: c.started, Reported: c.reported, Localization: loc, LocalizationDiag: c.locDiag}
}

// Localization is where the localization of a container's resources stands.
type Localization uint8

const (
	LocalizationPending Localization = iota // not yet (or never) fetched
	LocalizationDone                        // every resource is in place
	LocalizationFailed                      // it failed: the container does not run
)

// LocalizationStatuses are its resources' localization, one per resource key, as
// getLocalizationStatuses answers (Hadoop 3.3+). Bobbin's localizer fetches a container's
// resources together, so they share one state; a failure marks each with its reason.
func (v View) LocalizationStatuses() []*yarnpb.LocalizationStatusProto {
	state := yarnpb.LocalizationStateProto_L_PENDING
	switch v.Localization {
	case LocalizationDone:
		state = yarnpb.LocalizationStateProto_L_COMPLETED
	case LocalizationFailed:
		state = yarnpb.LocalizationStateProto_L_FAILED
	}
	var out []*yarnpb.LocalizationStatusProto
	for _, e := range v.CLC.GetLocalResources() {
		s := &yarnpb.LocalizationStatusProto{ResourceKey: proto.String(e.GetKey()), LocalizationState: state.Enum()}
		if v.Localization == LocalizationFailed {
			s.Diagnostics = proto.String(v.LocalizationDiag)
		}
		out = append(out, s)
	}
	return out
}

// Status is the container's status as heartbeats and getContainerStatuses report it.
func (v View) Status() *yarnpb.ContainerStatusProto {
	state, sub := v.Phase.WireState()
	return &yarnpb.ContainerStatusProto{ContainerId: v.ID.Proto(), State: state.Enum(), ExitStatus: proto.Int32(v.Exit), Diagnostics: proto.String(v.Diag),
		ContainerSubState: sub.Enum()}
}

// Runs reports whether the container's process runs and no kill was asked: what the
// monitors measure and may evict.
func (v View) Runs() bool { return v.Phase == Running && v.Proc != nil }

// recordLocked is the container's record for the recovery store.
func (c *Container) recordLocked() *nmstore.ContainerRecord {
	rec := &nmstore.ContainerRecord{ID: c.ID.String(), Request: c.Request, User: c.User, State: nmstore.Requested,
		WorkDir: c.Dirs.Work, LocalDir: c.Dirs.LocalDir, AppDirs: c.Dirs.AppDirs, LogDirs: c.Dirs.LogDirs,
		Exit: c.exit, Diag: c.diag, KillExit: c.killExit, KillDiag: c.killDiag, Reported: c.reported, GPUs: c.gpus}
	if c.proc != nil {
		rec.State, rec.Pid, rec.Started = nmstore.Launched, c.proc.Pid(), c.started.UnixMilli()
	}
	if c.phase == Done {
		rec.State = nmstore.Completed
	}
	return rec
}
