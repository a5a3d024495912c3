package nodemanager

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/container"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/nodemanager/localizer"
	"github.com/bobbin-yarn/bobbin/nodemanager/shuffle"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/rpc/token"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

// nmContainer is one container on this node. Its fields change under nm.mu.
type nmContainer struct {
	id    records.ContainerID
	ident *yarnpb.ContainerTokenIdentifierProto
	user  string
	clc   *yarnpb.ContainerLaunchContextProto
	// request is its StartContainerRequestProto as received (kept by the recovery store).
	request []byte
	dirs    dirs // chosen when it was accepted

	state    yarnpb.ContainerStateProto
	exit     int32
	diag     string
	killExit int32 // set when a kill was asked for: the status the kill reports
	killDiag string
	proc     container.Process
	started  time.Time          // when its process started (the youngest are evicted first)
	cancel   context.CancelFunc // stops localization
	done     chan struct{}      // closed when the container completed
	// reported: the RM has had its completed status. As the Java NM does, a completed
	// container is reported once and kept (getContainerStatuses still answers for it)
	// until the RM says to forget it, which it does once the AM has had the status.
	reported bool
	// saves counts the changes to its record; saved (under nm.storeMu) is the newest
	// change written, forgotten that the record was removed: a slower writer never
	// puts an older or a removed record back.
	saves, saved uint64
	forgotten    bool
}

// nmApp is an application with containers on this node.
type nmApp struct {
	id   records.ApplicationID
	user string
	// From its first container here, as the Java NM's ApplicationImpl takes them: the
	// application's ACLs and its log aggregation context (include/exclude patterns).
	acls       []*yarnpb.ApplicationACLMapProto
	logContext *yarnpb.LogAggregationContextProto
	// shuffleSecret is the job token the shuffle was given (nil: none).
	shuffleSecret []byte
	finished      bool // the RM said it ended here; its clean-up is under way
	// uploaded are the log file versions a rolling aggregation uploaded (see
	// containerLogs), rolled how many rolled files it wrote.
	uploaded map[string]bool
	rolled   int
}

// container looks a container up.
func (nm *NodeManager) container(id records.ContainerID) *nmContainer {
	nm.mu.Lock()
	defer nm.mu.Unlock()
	return nm.containers[id]
}

// spawn runs f in a goroutine the NodeManager waits for on shutdown.
func (nm *NodeManager) spawn(f func()) {
	nm.wg.Add(1)
	go func() {
		defer nm.wg.Done()
		f()
	}()
}

// containerStatuses are what the next heartbeat reports: every live container and each
// completed one the RM has not had yet; completed lists the latter, for reported once the
// heartbeat got through.
func (nm *NodeManager) containerStatuses() (out []*yarnpb.ContainerStatusProto, completed []*nmContainer) {
	nm.mu.Lock()
	defer nm.mu.Unlock()
	out = make([]*yarnpb.ContainerStatusProto, 0, len(nm.containers))
	for _, c := range nm.containers {
		if c.state == yarnpb.ContainerStateProto_C_COMPLETE {
			if c.reported {
				continue
			}
			completed = append(completed, c)
		}
		out = append(out, c.statusLocked())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetContainerId().GetId() < out[j].GetContainerId().GetId() })
	return out, completed
}

// registrationStatuses are the containers a registration reports (NMContainerStatus):
// every live one and each completed one the RM has not told the node to forget.
func (nm *NodeManager) registrationStatuses() []*yarnpb.NMContainerStatusProto {
	nm.mu.Lock()
	defer nm.mu.Unlock()
	out := make([]*yarnpb.NMContainerStatusProto, 0, len(nm.containers))
	for _, c := range nm.containers {
		state, _ := c.wireStateLocked()
		st := &yarnpb.NMContainerStatusProto{ContainerId: c.id.Proto(), ContainerState: state.Enum(), Diagnostics: proto.String(c.diag),
			ContainerExitStatus: proto.Int32(c.exit)}
		if c.ident != nil {
			st.Resource, st.Priority, st.CreationTime = c.ident.GetResource(), c.ident.GetPriority(), c.ident.CreationTime
		}
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetContainerId().GetId() < out[j].GetContainerId().GetId() })
	return out
}

// reported marks completed statuses the RM has received.
func (nm *NodeManager) reported(completed []*nmContainer) {
	nm.mu.Lock()
	for _, c := range completed {
		c.reported = true
	}
	nm.mu.Unlock()
	for _, c := range completed {
		nm.saveContainer(c)
	}
}

// runningApps are the applications with containers here that have not ended.
func (nm *NodeManager) runningApps() []*yarnpb.ApplicationIdProto {
	nm.mu.Lock()
	defer nm.mu.Unlock()
	out := make([]*yarnpb.ApplicationIdProto, 0, len(nm.apps))
	for id, a := range nm.apps {
		if !a.finished {
			out = append(out, id.Proto())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetId() < out[j].GetId() })
	return out
}

// finishedApps are the applications whose end a restart interrupted.
func (nm *NodeManager) finishedApps() []records.ApplicationID {
	nm.mu.Lock()
	defer nm.mu.Unlock()
	var out []records.ApplicationID
	for id, a := range nm.apps {
		if a.finished {
			out = append(out, id)
		}
	}
	return out
}

func (c *nmContainer) statusLocked() *yarnpb.ContainerStatusProto {
	state, sub := c.wireStateLocked()
	return &yarnpb.ContainerStatusProto{ContainerId: c.id.Proto(), State: state.Enum(), ExitStatus: proto.Int32(c.exit), Diagnostics: proto.String(c.diag),
		ContainerSubState: sub.Enum()}
}

// wireStateLocked is the state the RM and AMs are told. As the Java NM (2.7 and 3.x:
// ContainerImpl.getCurrentState) does, a container is RUNNING from the moment it is
// accepted until it is done, localizing included: the 2.7 RM takes any state other than
// RUNNING in a heartbeat for a finished container, and would report a container still
// localizing as completed to its AM. 3.x tells the stages apart in the sub-state.
func (c *nmContainer) wireStateLocked() (yarnpb.ContainerStateProto, yarnpb.ContainerSubStateProto) {
	switch {
	case c.state == yarnpb.ContainerStateProto_C_COMPLETE:
		return yarnpb.ContainerStateProto_C_COMPLETE, yarnpb.ContainerSubStateProto_CSS_DONE
	case c.state == yarnpb.ContainerStateProto_C_RUNNING && c.killExit != 0:
		return yarnpb.ContainerStateProto_C_RUNNING, yarnpb.ContainerSubStateProto_CSS_COMPLETING
	case c.state == yarnpb.ContainerStateProto_C_RUNNING:
		return yarnpb.ContainerStateProto_C_RUNNING, yarnpb.ContainerSubStateProto_CSS_RUNNING
	default:
		return yarnpb.ContainerStateProto_C_RUNNING, yarnpb.ContainerSubStateProto_CSS_SCHEDULED
	}
}

// forgetCompleted drops the completed containers the RM acknowledged. An empty list
// drops nothing: a heartbeat answer without acknowledgements must not take containers
// that completed while it was on the wire, before the RM had their status.
func (nm *NodeManager) forgetCompleted(ids []*yarnpb.ContainerIdProto) {
	nm.mu.Lock()
	var gone []*nmContainer
	for _, p := range ids {
		id := records.ContainerIDFromProto(p)
		if c, ok := nm.containers[id]; ok && c.state == yarnpb.ContainerStateProto_C_COMPLETE {
			delete(nm.containers, id)
			gone = append(gone, c)
		}
	}
	nm.mu.Unlock()
	nm.forgetContainers(gone)
}

// forgetAllCompleted drops every completed container (the RM asked for a resync: it
// has forgotten them).
func (nm *NodeManager) forgetAllCompleted() {
	nm.mu.Lock()
	var gone []*nmContainer
	for id, c := range nm.containers {
		if c.state == yarnpb.ContainerStateProto_C_COMPLETE {
			delete(nm.containers, id)
			gone = append(gone, c)
		}
	}
	nm.mu.Unlock()
	nm.forgetContainers(gone)
}

// dirs are a container's directories.
type dirs struct {
	appDirs  []string // <local>/usercache/<user>/appcache/<app>, one per local dir
	work     string   // the container's work dir ($PWD)
	logDirs  []string // <log>/<app>/<container>, one per log dir
	localDir string   // the local dir the work dir is on
}

// dirsFor lays out a container over the good dirs (all configured ones if none is good:
// the launch then fails with the reason).
func (nm *NodeManager) dirsFor(c *nmContainer) dirs {
	app, cid := c.id.Attempt.App.String(), c.id.String()
	nm.mu.Lock()
	local, logs := nm.disks.goodLocal, nm.disks.goodLog
	nm.mu.Unlock()
	if len(local) == 0 {
		local = nm.settings.LocalDirs
	}
	if len(logs) == 0 {
		logs = nm.settings.LogDirs
	}
	var d dirs
	for _, l := range local {
		d.appDirs = append(d.appDirs, filepath.Join(l, "usercache", c.user, "appcache", app))
	}
	for _, l := range logs {
		d.logDirs = append(d.logDirs, filepath.Join(l, app, cid))
	}
	// Work dirs are spread over the local dirs by container number.
	i := int(c.id.ID) % len(d.appDirs)
	d.localDir, d.work = local[i], filepath.Join(d.appDirs[i], cid)
	return d
}

// run is a container's life: localize, write the launch script, start, wait, report. It
// is the one goroutine the container owns.
func (nm *NodeManager) run(ctx context.Context, c *nmContainer) {
	log := nm.log.WithFields(map[string]any{"container": c.id.String(), "application": c.id.Attempt.App.String()})
	d := c.dirs
	fail := func(exit int32, diag string) {
		log.WithField("diagnostics", diag).Warn("container failed before it ran")
		nm.complete(c, exit, diag)
	}
	runUser, err := nm.runAs.userFor(c.user)
	if err != nil {
		// What Java's container-executor answers, as its NM reports it.
		fail(exitcode.Invalid, fmt.Sprintf("Application %s initialization failed (exitCode=2) with output: %v", c.id.Attempt.App, err))
		return
	}
	for _, dir := range append(append([]string{d.work, filepath.Join(d.work, "tmp")}, d.appDirs...), d.logDirs...) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fail(exitcode.Invalid, fmt.Sprintf("Failed to create %s: %v", dir, err))
			return
		}
	}
	z, err := nm.local.Localize(ctx, c.user, c.id.Attempt.App.String(), localResources(c))
	if err != nil {
		if ctx.Err() != nil {
			return // killed while localizing (kill completed it), or the NodeManager stops
		}
		fail(exitcode.Invalid, "Resource localization failed: "+err.Error())
		return
	}
	defer z.Release()
	creds := token.NewCredentials()
	if b := c.clc.GetTokens(); len(b) > 0 {
		if creds, err = token.ReadCredentials(b); err != nil {
			fail(exitcode.Invalid, "Invalid container tokens: "+err.Error())
			return
		}
	}
	if err := os.WriteFile(filepath.Join(d.work, "container_tokens"), creds.Bytes(), 0o600); err != nil {
		fail(exitcode.Invalid, err.Error())
		return
	}
	script := nm.launchScript(c, d, z.Paths)
	scriptPath := filepath.Join(d.work, "launch_container.sh")
	if err := os.WriteFile(scriptPath, []byte(script), 0o700); err != nil {
		fail(exitcode.Invalid, err.Error())
		return
	}
	if runUser != nil {
		if err := nm.handOver(c, runUser, d, z.Paths); err != nil {
			fail(exitcode.Invalid, "Exception from container-launch: "+err.Error())
			return
		}
	}
	nm.mu.Lock()
	if c.killExit != 0 {
		nm.mu.Unlock()
		return
	}
	nm.mu.Unlock()
	// Launch may take a while (a UML guest waits for the node's start lock), so nm.mu
	// is not held; a kill meanwhile cancels ctx and completes the container itself.
	spec := nm.spec(c)
	spec.Script, spec.Env, spec.User = scriptPath, os.Environ(), runUser
	os.Remove(spec.OutputFile)
	proc, err := nm.exec.Launch(ctx, spec)
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		fail(exitcode.Invalid, "Exception from container-launch: "+err.Error())
		return
	}
	nm.mu.Lock()
	if c.state == yarnpb.ContainerStateProto_C_COMPLETE || c.killExit != 0 {
		// Killed while it was starting: it must not run on.
		nm.mu.Unlock()
		proc.Stop(nm.settings.KillDelay)
		proc.Wait()
		nm.mu.Lock()
		killExit, killDiag := c.killExit, c.killDiag
		nm.mu.Unlock()
		nm.complete(c, killExit, killDiag)
		return
	}
	c.proc, c.state, c.started = proc, yarnpb.ContainerStateProto_C_RUNNING, nm.opts.Now()
	nm.mu.Unlock()
	nm.saveContainer(c) // launched, with its pid: a restarted NodeManager takes it back
	nm.counts.launched.Inc(1)
	log.WithField("pid", proc.Pid()).Info("container launched")
	nm.watch(c, proc, spec.OutputFile, log)
}

// spec is what the executor is told of a container besides its script and environment.
func (nm *NodeManager) spec(c *nmContainer) container.Spec {
	d := c.dirs
	return container.Spec{ID: c.id.String(), WorkDir: d.work, OutputFile: filepath.Join(d.work, ".bobbin-launch.out"),
		Dirs: append(append([]string(nil), d.appDirs...), d.logDirs...), MemoryMB: c.ident.GetResource().GetMemory(), Owner: nm.owner}
}

// localResources are a container's local resources as the localizer takes them.
func localResources(c *nmContainer) []localizer.Resource {
	var res []localizer.Resource
	for _, e := range c.clc.GetLocalResources() {
		res = append(res, localizer.FromProto(e.GetKey(), e.GetValue()))
	}
	return res
}

// watch waits for a running container's process and reports how it ended. When the
// NodeManager stops and leaves its containers running (a supervised recovery), watch
// returns without a verdict: the next NodeManager process takes the container back.
func (nm *NodeManager) watch(c *nmContainer, proc container.Process, outputFile string, log *logrus.Entry) {
	exited := make(chan int, 1)
	go func() { exited <- proc.Wait() }() // ends with the process
	var code int
	select {
	case code = <-exited:
	case <-nm.ctx.Done():
		if nm.keepsContainers() {
			return
		}
		code = <-exited
	}
	proc.Stop(0) // nothing the container started outlives it
	nm.mu.Lock()
	killExit, killDiag := c.killExit, c.killDiag
	nm.mu.Unlock()
	verdict, verdictDiag, judged := int32(0), "", false
	if v, ok := proc.(container.Verdicter); ok && killExit == 0 {
		verdict, verdictDiag, judged = v.Verdict()
	}
	out := container.Tail(proc, outputFile, 4096)
	switch {
	case killExit != 0:
		nm.complete(c, killExit, fmt.Sprintf("%s\nContainer killed on request. Exit code is %d\nContainer exited with a non-zero exit code %d\n", killDiag, code, code))
	case judged:
		log.WithField("exit_status", verdict).Warn(verdictDiag)
		nm.complete(c, verdict, fmt.Sprintf("%s\n%s\nContainer exited with a non-zero exit code %d\n", verdictDiag, out, code))
	case code == 0:
		nm.complete(c, 0, "")
	default:
		nm.complete(c, int32(code), fmt.Sprintf("Exception from container-launch.\nContainer id: %s\nExit code: %d\nStack trace: ExitCodeException exitCode=%d: \n%s\nContainer exited with a non-zero exit code %d\n",
			c.id, code, code, out, code))
	}
	nm.mu.Lock()
	status := c.exit
	nm.mu.Unlock()
	log.WithFields(map[string]any{"exit_status": status, "process_exit": code}).Info("container exited")
}

// complete records a container's end once.
func (nm *NodeManager) complete(c *nmContainer, exit int32, diag string) {
	nm.mu.Lock()
	if c.state == yarnpb.ContainerStateProto_C_COMPLETE {
		nm.mu.Unlock()
		return
	}
	c.state, c.exit, c.diag = yarnpb.ContainerStateProto_C_COMPLETE, exit, diag
	nm.counts.ended(c.killExit != 0, exit)
	nm.mu.Unlock()
	nm.saveContainer(c) // stored before anyone waiting for the end hears of it
	close(c.done)
}

// kill stops a container (SIGTERM, then SIGKILL after the configured delay, then every
// straggler) and reports exit as its status. It returns when the container is complete.
func (nm *NodeManager) kill(c *nmContainer, exit int32, diag string) {
	nm.mu.Lock()
	if c.state == yarnpb.ContainerStateProto_C_COMPLETE {
		nm.mu.Unlock()
		return
	}
	asked := c.killExit == 0
	if asked {
		c.killExit, c.killDiag = exit, diag
	}
	proc, cancel := c.proc, c.cancel
	nm.mu.Unlock()
	if asked {
		nm.saveContainer(c) // a restart must not launch it again
	}
	cancel()
	if proc == nil {
		// Not started yet: it never will be.
		nm.complete(c, exit, diag)
		return
	}
	nm.log.WithFields(map[string]any{"container": c.id.String(), "exit_status": exit}).Info("stopping container")
	proc.Stop(nm.settings.KillDelay)
	<-c.done
}

// killAll stops every live container.
func (nm *NodeManager) killAll(exit int32, diag string) {
	nm.mu.Lock()
	var live []*nmContainer
	for _, c := range nm.containers {
		if c.state != yarnpb.ContainerStateProto_C_COMPLETE {
			live = append(live, c)
		}
	}
	nm.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range live {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nm.kill(c, exit, diag)
		}()
	}
	wg.Wait()
}

// finishApp ends an application on this node: its containers are killed, its shuffle
// registration and application resources removed, its work dirs deleted after
// yarn.nodemanager.delete.debug-delay-sec.
func (nm *NodeManager) finishApp(id records.ApplicationID) {
	nm.mu.Lock()
	a, ok := nm.apps[id]
	delete(nm.apps, id)
	var live []*nmContainer
	for cid, c := range nm.containers {
		if cid.Attempt.App == id && c.state != yarnpb.ContainerStateProto_C_COMPLETE {
			live = append(live, c)
		}
	}
	nm.mu.Unlock()
	for _, c := range live {
		nm.kill(c, exitcode.KilledAfterAppCompletion, "Container killed by the ApplicationMaster.")
	}
	if !ok {
		return
	}
	if !a.finished {
		a.finished = true
		nm.saveApp(a) // a restart resumes the clean-up
	}
	if nm.shuffle != nil {
		nm.shuffle.h.RemoveJob(shuffle.JobID(id.String()))
	}
	nm.local.CleanupApp(a.user, id.String())
	// Logs are aggregated at once; local files, aggregated or not, stay for
	// yarn.nodemanager.delete.debug-delay-sec.
	aggregated := false
	if nm.settings.LogAggregation.Enabled {
		r := nm.aggregateLogs(a)
		nm.noteLogAggregation(a, r)
		aggregated = r.status == yarnpb.LogAggregationStatusProto_LOG_SUCCEEDED
	}
	if d := nm.settings.DebugDelay; d > 0 {
		select {
		case <-nm.ctx.Done():
			return
		case <-time.After(d):
		}
	}
	for _, l := range nm.settings.LocalDirs {
		os.RemoveAll(filepath.Join(l, "usercache", a.user, "appcache", id.String()))
	}
	nm.forgetApp(id)
	nm.log.WithField("application", id.String()).Info("application finished on this node; cleaned up")
	if aggregated {
		for _, l := range nm.settings.LogDirs {
			os.RemoveAll(filepath.Join(l, id.String()))
		}
		nm.log.WithField("application", id.String()).Info("local container logs deleted after aggregation")
		return
	}
	// Without log aggregation (or when it failed), container logs stay
	// yarn.nodemanager.log.retain-seconds.
	select {
	case <-nm.ctx.Done():
		return
	case <-time.After(nm.settings.LogRetain - nm.settings.DebugDelay):
	}
	for _, l := range nm.settings.LogDirs {
		os.RemoveAll(filepath.Join(l, id.String()))
	}
	nm.log.WithField("application", id.String()).Info("application logs deleted after yarn.nodemanager.log.retain-seconds")
}
