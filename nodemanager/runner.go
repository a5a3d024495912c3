package nodemanager

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/bobbin-yarn/bobbin/container"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/nodemanager/containers"
	"github.com/bobbin-yarn/bobbin/nodemanager/launch"
	"github.com/bobbin-yarn/bobbin/nodemanager/localizer"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/rpc/token"
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

// run is a container's life on this node: localize, write the launch script, start,
// watch, report. It is the one goroutine that drives the container; others reach it only
// through the table (a kill ends the container's context, and the moves the lifecycle
// allows tell this goroutine what became of it).
func (nm *NodeManager) run(c *containers.Container) {
	defer c.Release()
	ctx := c.Context()
	log := nm.log.WithFields(map[string]any{"container": c.ID.String(), "application": c.ID.Attempt.App.String()})
	d := c.Dirs
	fail := func(exit int32, diag string) {
		log.WithField("diagnostics", diag).Warn("container failed before it ran")
		nm.end(c, exit, diag)
	}
	runUser, err := nm.runAs.userFor(c.User)
	if err != nil {
		// What Java's container-executor answers, as its NM reports it.
		fail(exitcode.Invalid, fmt.Sprintf("Application %s initialization failed (exitCode=2) with output: %v", c.ID.Attempt.App, err))
		return
	}
	for _, dir := range append(append([]string{d.Work, filepath.Join(d.Work, "tmp")}, d.AppDirs...), d.LogDirs...) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fail(exitcode.Invalid, fmt.Sprintf("Failed to create %s: %v", dir, err))
			return
		}
	}
	z, err := nm.local.Localize(ctx, c.User, c.ID.Attempt.App.String(), localResources(c))
	if err != nil {
		if ctx.Err() != nil {
			return // killed while localizing (the kill completed it), or the NodeManager stops
		}
		fail(exitcode.Invalid, "Resource localization failed: "+err.Error())
		return
	}
	defer z.Release()
	creds := token.NewCredentials()
	if b := c.CLC.GetTokens(); len(b) > 0 {
		if creds, err = token.ReadCredentials(b); err != nil {
			fail(exitcode.Invalid, "Invalid container tokens: "+err.Error())
			return
		}
	}
	if err := os.WriteFile(filepath.Join(d.Work, "container_tokens"), creds.Bytes(), 0o600); err != nil {
		fail(exitcode.Invalid, err.Error())
		return
	}
	script := launch.Script(nm.launchNode(), launchContainer(c), z.Paths)
	scriptPath := filepath.Join(d.Work, "launch_container.sh")
	if err := os.WriteFile(scriptPath, []byte(script), 0o700); err != nil {
		fail(exitcode.Invalid, err.Error())
		return
	}
	if runUser != nil {
		if err := nm.handOver(c, runUser, z.Paths); err != nil {
			fail(exitcode.Invalid, "Exception from container-launch: "+err.Error())
			return
		}
	}
	if ctx.Err() != nil {
		return // killed while it was prepared: the kill completed it
	}
	// Launch may take a while (a UML guest waits for the node's start lock); a kill
	// meanwhile ends ctx, and completes the container itself.
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
	if !nm.table.Launched(c, proc, nm.opts.Now()) {
		// Asked to stop while it was starting: it must not run on.
		proc.Stop(nm.settings.KillDelay)
		proc.Wait()
		v := nm.table.ViewOf(c)
		nm.end(c, v.KillExit, v.KillDiag)
		return
	}
	nm.counts.launched.Inc(1)
	nm.aux.InitializeContainer(c.ID, c.User)
	log.WithField("pid", proc.Pid()).Info("container launched")
	nm.watch(c, proc, spec.OutputFile, log)
}

// launchNode is what this node puts into every container's environment.
func (nm *NodeManager) launchNode() launch.Node {
	s := nm.settings
	nm.mu.Lock()
	port, httpPort := nm.port, nm.httpPort
	nm.mu.Unlock()
	return launch.Node{Host: s.Host, Port: port, HTTPPort: httpPort, UserHome: s.UserHome, AdminEnv: s.AdminEnv, Whitelist: s.EnvWhitelist,
		ServiceEnv: nm.aux.Env(), Getenv: os.LookupEnv}
}

// launchContainer is what container c brings to its launch script.
func launchContainer(c *containers.Container) launch.Container {
	env := map[string]string{}
	for _, e := range c.CLC.GetEnvironment() {
		env[e.GetKey()] = e.GetValue()
	}
	d := c.Dirs
	return launch.Container{ID: c.ID.String(), User: c.User, AppDirs: d.AppDirs, LogDirs: d.LogDirs, Work: d.Work, Env: env, Command: c.CLC.GetCommand()}
}

// spec is what the executor is told of a container besides its script and environment.
func (nm *NodeManager) spec(c *containers.Container) container.Spec {
	d := c.Dirs
	return container.Spec{ID: c.ID.String(), WorkDir: d.Work, OutputFile: filepath.Join(d.Work, ".bobbin-launch.out"),
		Dirs: append(append([]string(nil), d.AppDirs...), d.LogDirs...), MemoryMB: c.Resource().GetMemory(), Owner: nm.owner}
}

// localResources are a container's local resources as the localizer takes them.
func localResources(c *containers.Container) []localizer.Resource {
	var res []localizer.Resource
	for _, e := range c.CLC.GetLocalResources() {
		res = append(res, localizer.FromProto(e.GetKey(), e.GetValue()))
	}
	return res
}

// watch waits for a running container's process and reports how it ended. When the
// NodeManager stops and leaves its containers running (a supervised recovery), watch
// returns without a verdict: the next NodeManager process takes the container back.
func (nm *NodeManager) watch(c *containers.Container, proc container.Process, outputFile string, log *logrus.Entry) {
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
	v := nm.table.ViewOf(c)
	verdict, verdictDiag, judged := int32(0), "", false
	if vd, ok := proc.(container.Verdicter); ok && v.KillExit == 0 {
		verdict, verdictDiag, judged = vd.Verdict()
	}
	out := container.Tail(proc, outputFile, 4096)
	switch {
	case v.KillExit != 0:
		nm.end(c, v.KillExit, fmt.Sprintf("%s\nContainer killed on request. Exit code is %d\nContainer exited with a non-zero exit code %d\n", v.KillDiag, code, code))
	case judged:
		log.WithField("exit_status", verdict).Warn(verdictDiag)
		nm.end(c, verdict, fmt.Sprintf("%s\n%s\nContainer exited with a non-zero exit code %d\n", verdictDiag, out, code))
	case code == 0:
		nm.end(c, 0, "")
	default:
		nm.end(c, int32(code), fmt.Sprintf("Exception from container-launch.\nContainer id: %s\nExit code: %d\nStack trace: ExitCodeException exitCode=%d: \n%s\nContainer exited with a non-zero exit code %d\n",
			c.ID, code, code, out, code))
	}
	log.WithFields(map[string]any{"exit_status": nm.table.ViewOf(c).Exit, "process_exit": code}).Info("container exited")
}

// end records a container's end once, and counts it.
func (nm *NodeManager) end(c *containers.Container, exit int32, diag string) {
	if first, killed := nm.table.End(c, exit, diag); first {
		nm.counts.ended(killed, exit)
		if nm.table.ViewOf(c).Proc != nil { // the services heard of it as it started
			nm.aux.StopContainer(c.ID, c.User)
		}
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

// finishApp ends an application on this node: its containers are killed, its shuffle
// registration and application resources removed, its work dirs deleted after
// yarn.nodemanager.delete.debug-delay-sec.
func (nm *NodeManager) finishApp(id records.ApplicationID) {
	a, live := nm.table.EndApp(id)
	for _, c := range live {
		nm.kill(c, exitcode.KilledAfterAppCompletion, "Container killed by the ApplicationMaster.")
	}
	if a == nil {
		return
	}
	nm.aux.StopApplication(id)
	nm.local.CleanupApp(a.User, id.String())
	// Logs are aggregated at once; local files, aggregated or not, stay for
	// yarn.nodemanager.delete.debug-delay-sec.
	aggregated := false
	if nm.settings.LogAggregation.Enabled {
		aggregated = nm.logs.Final(a).Status == yarnpb.LogAggregationStatusProto_LOG_SUCCEEDED
	}
	if d := nm.settings.DebugDelay; d > 0 {
		select {
		case <-nm.ctx.Done():
			return
		case <-time.After(d):
		}
	}
	for _, l := range nm.settings.LocalDirs {
		os.RemoveAll(filepath.Join(l, "usercache", a.User, "appcache", id.String()))
	}
	nm.table.ForgetApp(id)
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
	nm.log.WithFields(map[string]any{"application": id.String(), "retain": nm.settings.LogRetain.String()}).Info("local container logs kept for yarn.nodemanager.log.retain-seconds")
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
