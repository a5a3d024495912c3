package nodemanager

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/bobbin-yarn/bobbin/container"
	"github.com/bobbin-yarn/bobbin/container/cgroups"
	"github.com/bobbin-yarn/bobbin/nodemanager/containers"
	"github.com/bobbin-yarn/bobbin/nodemanager/launch"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/yarn/audit"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

// spawn runs f in a goroutine the NodeManager waits for on shutdown.
func (nm *NodeManager) spawn(f func()) {
	nm.wg.Add(1)
	go func() {
		defer nm.wg.Done()
		f()
	}()
}

// dirsFor lays out a container of user's over the good dirs (all configured ones if none
// is good: the launch then fails with the reason).
func (nm *NodeManager) dirsFor(id records.ContainerID, user string) containers.Dirs {
	app, cid := id.Attempt.App.String(), id.String()
	local, logs := nm.goodDirs()
	if len(local) == 0 {
		local = nm.settings.LocalDirs
	}
	if len(logs) == 0 {
		logs = nm.settings.LogDirs
	}
	var d containers.Dirs
	for _, l := range local {
		d.AppDirs = append(d.AppDirs, filepath.Join(l, "usercache", user, "appcache", app))
	}
	for _, l := range logs {
		d.LogDirs = append(d.LogDirs, filepath.Join(l, app, cid))
	}
	// Work dirs are spread over the local dirs by container number.
	i := int(id.ID) % len(d.AppDirs)
	d.LocalDir, d.Work = local[i], filepath.Join(d.AppDirs[i], cid)
	return d
}

// containerRun is one container's run on this node. One goroutine drives it through its
// phases; others reach it only through the table (a kill ends the container's context,
// and the moves the lifecycle refuses tell the runner what became of it):
//
//	accepted ─► prestart ─► launch ─► poststart ─► watch ─► stop
//	               └─ failed, or killed ──────────────────────► stop
//	taken back running after a restart ─► restore ─► watch ─► stop
//
// The hooks (runhooks.go) do each phase's work; the runner alone moves the container in
// the table, which journals it for a restart.
type containerRun struct {
	nm    *NodeManager
	c     *containers.Container
	log   *logrus.Entry
	hooks []runHook
}

func (nm *NodeManager) newRun(c *containers.Container) *containerRun {
	hooks := []runHook{
		userHook{nm.runAs},
		dirsHook{},
		&localizeHook{local: nm.local, table: nm.table},
		tokensHook{},
	}
	if nm.gpus != nil {
		hooks = append(hooks, gpuHook{g: nm.gpus, table: nm.table, log: nm.log}) // before the script: it sets the environment
	}
	hooks = append(hooks, scriptHook{nm.launchNode}, handOverHook{nm.runAs}, &auxHook{aux: nm.aux})
	return &containerRun{nm: nm, c: c,
		log:   nm.log.WithFields(map[string]any{"container": c.ID.String(), "application": c.ID.Attempt.App.String()}),
		hooks: hooks}
}

// run is a container's life on this node, from its acceptance to its stop hooks.
func (nm *NodeManager) run(c *containers.Container) {
	defer c.Release()
	r := nm.newRun(c)
	r.finish(r.launchAndWatch())
}

// runRestored takes back a container a restarted NodeManager found running (or exited
// since: the executor then reports the exit code it left) and watches it to its end.
func (nm *NodeManager) runRestored(c *containers.Container, proc container.Process, started time.Time) {
	r := nm.newRun(c)
	nm.table.Launched(c, proc, started) // its record written again, with the pid
	for _, h := range r.hooks {
		if rh, ok := h.(restoreHook); ok {
			rh.Restore(c)
		}
	}
	r.log.WithField("pid", proc.Pid()).Info("container recovered: taken back without restarting it")
	nm.spawn(func() {
		defer c.Release()
		r.finish(r.watch(proc))
	})
}

// ending is how a run ends: the status the runner records, or none.
type ending struct {
	exit int32
	diag string
	// recorded: a kill recorded the container's end itself (its process never
	// started); kept: it keeps running, or stays accepted, for the next
	// NodeManager process (a supervised recovery's stop). Either way there is nothing to
	// record.
	recorded, kept bool
}

// killed is the end of a run whose context ended before its process ran: a kill recorded
// it, or the NodeManager stops (under a supervised recovery the next process launches it).
func (r *containerRun) killed() ending {
	if r.nm.ctx.Err() != nil && r.nm.keepsContainers() {
		return ending{kept: true}
	}
	return ending{recorded: true}
}

// launchAndWatch runs the prestart hooks, launches, runs the poststart hooks and watches
// the process to its end.
func (r *containerRun) launchAndWatch() ending {
	ctx := r.c.Context()
	plan := launchPlan{env: map[string]string{}}
	for _, h := range r.hooks {
		ph, ok := h.(prestartHook)
		if !ok {
			continue
		}
		if err := ph.Prestart(ctx, r.c, &plan); err != nil {
			if ctx.Err() != nil {
				return r.killed()
			}
			r.log.WithFields(map[string]any{"hook": h.Name(), "diagnostics": err.Error()}).Warn("container failed before it ran")
			return ending{exit: exitcode.Invalid, diag: err.Error()}
		}
	}
	if ctx.Err() != nil {
		return r.killed() // killed while it was prepared
	}
	proc, end, ok := r.launch(ctx, &plan)
	if !ok {
		return end
	}
	for _, h := range r.hooks {
		if ph, ok := h.(poststartHook); ok {
			ph.Poststart(r.c)
		}
	}
	return r.watch(proc)
}

// launch starts the container's process and records it launched. Launch may take a
// while (a UML guest waits for the node's start lock); a kill meanwhile ends ctx and
// waits for the launch: it stops what started (a process can run before Launch returns),
// and completes the container itself when nothing did.
func (r *containerRun) launch(ctx context.Context, plan *launchPlan) (container.Process, ending, bool) {
	nm, c := r.nm, r.c
	spec := nm.spec(c)
	spec.Script, spec.Env, spec.User = plan.script, os.Environ(), plan.runUser
	os.Remove(spec.OutputFile)
	if !nm.table.Launching(c) {
		return nil, r.killed(), false // asked to stop first
	}
	proc, err := nm.exec.Launch(ctx, spec)
	if err != nil {
		nm.table.LaunchFailed(c)
		if ctx.Err() != nil {
			return nil, r.killed(), false
		}
		r.log.WithField("diagnostics", err.Error()).Warn("container failed before it ran")
		return nil, ending{exit: exitcode.Invalid, diag: "Exception from container-launch: " + err.Error()}, false
	}
	if !nm.table.Launched(c, proc, nm.opts.Now()) {
		// Asked to stop while it was starting: it must not run on.
		proc.Stop(nm.settings.KillDelay)
		proc.Wait()
		v := nm.table.ViewOf(c)
		return nil, ending{exit: v.KillExit, diag: v.KillDiag}, false
	}
	nm.counts.launched.Inc(1)
	r.log.WithField("pid", proc.Pid()).Info("container launched")
	return proc, ending{}, true
}

// finish runs the stop hooks, last hook first, then records the end: whoever waits for
// the container's end (a kill, its application's finish) finds its hooks done.
func (r *containerRun) finish(e ending) {
	for i := len(r.hooks) - 1; i >= 0; i-- {
		if sh, ok := r.hooks[i].(stopHook); ok {
			sh.Stop(r.c, !e.kept)
		}
	}
	if !e.recorded && !e.kept {
		r.nm.end(r.c, e.exit, e.diag)
	}
}

// launchNode is what this node puts into every container's environment.
func (nm *NodeManager) launchNode() launch.Node {
	s := nm.settings
	nm.mu.Lock()
	port, httpPort := nm.port, nm.httpPort
	nm.mu.Unlock()
	return launch.Node{Host: s.Host, Port: port, HTTPPort: httpPort, UserHome: s.UserHome, AdminEnv: s.AdminEnv, Whitelist: s.EnvWhitelist,
		ServiceEnv: nm.aux.Env(), DebugInfo: s.DebugInfo, AddOpens: s.AddOpens, Getenv: os.LookupEnv}
}

// spec is what the executor is told of a container besides its script and environment.
func (nm *NodeManager) spec(c *containers.Container) container.Spec {
	d := c.Dirs
	return container.Spec{ID: c.ID.String(), WorkDir: d.Work, OutputFile: launchOutput(d.Work),
		Dirs: append(append([]string(nil), d.AppDirs...), d.LogDirs...), MemoryMB: c.Resource().GetMemory(), Owner: nm.owner,
		Limits: nm.containerLimits(c)}
}

// launchOutput is the file in a container's work directory that receives what its launch
// script writes.
func launchOutput(workDir string) string { return filepath.Join(workDir, ".bobbin-launch.out") }

// containerLimits are what c's cgroup enforces: its CPU and memory, and no GPU it was
// not given.
func (nm *NodeManager) containerLimits(c *containers.Container) cgroups.Limits {
	l := nm.settings.Cgroups.limits(c, nm.settings.VCores)
	if nm.gpus != nil {
		l.DenyDevices = nm.gpus.denied(c.ID.String())
	}
	return l
}

// watch waits for a running container's process and says how it ended. When the
// NodeManager stops and leaves its containers running (a supervised recovery), the
// container is kept: the next NodeManager process takes it back.
func (r *containerRun) watch(proc container.Process) ending {
	nm, c := r.nm, r.c
	exited := make(chan int, 1)
	go func() { exited <- proc.Wait() }() // ends with the process
	var code int
	select {
	case code = <-exited:
	case <-nm.ctx.Done():
		if nm.keepsContainers() {
			return ending{kept: true}
		}
		code = <-exited
	}
	proc.Stop(0) // nothing the container started outlives it
	v := nm.table.ViewOf(c)
	verdict, verdictDiag, judged := int32(0), "", false
	if vd, ok := proc.(container.Verdicter); ok && v.KillExit == 0 {
		verdict, verdictDiag, judged = vd.Verdict()
	}
	out := container.Tail(proc, launchOutput(c.Dirs.Work), 4096)
	var e ending
	switch {
	case v.KillExit != 0:
		e = ending{exit: v.KillExit, diag: fmt.Sprintf("%s\nContainer killed on request. Exit code is %d\nContainer exited with a non-zero exit code %d\n", v.KillDiag, code, code)}
	case judged:
		r.log.WithField("exit_status", verdict).Warn(verdictDiag)
		e = ending{exit: verdict, diag: fmt.Sprintf("%s\n%s\nContainer exited with a non-zero exit code %d\n", verdictDiag, out, code)}
	case code == 0:
		e = ending{}
	default:
		// As the 3.x Java NodeManager words it: the launch's failure, what the executor's
		// shell printed, then the tails of the container's own error files.
		diag := fmt.Sprintf("Exception from container-launch.\nContainer id: %s\nExit code: %d\n", c.ID, code)
		if out != "" {
			diag += "Shell output: " + out + "\n"
		}
		e = ending{exit: int32(code), diag: diag + "\n" + nm.exitTails(c, code)}
	}
	r.log.WithFields(map[string]any{"exit_status": e.exit, "process_exit": code}).Info("container exited")
	return e
}

// end records a container's end once, and counts it.
func (nm *NodeManager) end(c *containers.Container, exit int32, diag string) {
	if first, killed := nm.table.End(c, exit, diag); first {
		nm.counts.ended(killed, exit)
		// NMAuditLogger's "Container Finished - Succeeded|Failed|Killed".
		op := "Container Finished - Succeeded"
		switch {
		case killed:
			op = "Container Finished - Killed"
		case exit != 0:
			op = "Container Finished - Failed"
		}
		nm.audit.Success(c.User, "", op, "ContainerImpl", audit.KV{Key: "APPID", Value: c.ID.Attempt.App.String()}, audit.KV{Key: "CONTAINERID", Value: c.ID.String()})
	}
}

// kill stops a container (SIGTERM, then SIGKILL after the configured delay, then every
// straggler) and reports exit as its status. It returns when the container is complete.
func (nm *NodeManager) kill(c *containers.Container, exit int32, diag string) {
	_, done, proc := nm.table.AskKill(c, exit, diag)
	if done {
		return
	}
	if proc == nil {
		// A launch under way is told by the context's end; what it started is stopped here.
		proc = nm.table.AwaitLaunch(c)
	}
	if proc == nil {
		// Not started yet: it never will be.
		v := nm.table.ViewOf(c)
		nm.end(c, v.KillExit, v.KillDiag)
		return
	}
	nm.log.WithFields(map[string]any{"container": c.ID.String(), "exit_status": exit}).Info("stopping container")
	proc.Stop(nm.settings.KillDelay)
	select {
	case <-c.Done():
	case <-nm.ctx.Done():
		// The NodeManager stops. Under a supervised recovery its watch leaves the
		// container to the next process and never completes it; else it still does.
		if !nm.keepsContainers() {
			<-c.Done()
		}
	}
}

// killAll stops every live container.
func (nm *NodeManager) killAll(exit int32, diag string) {
	var wg sync.WaitGroup
	for _, c := range nm.table.Live() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nm.kill(c, exit, diag)
		}()
	}
	wg.Wait()
}
