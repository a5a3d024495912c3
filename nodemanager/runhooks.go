package nodemanager

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/bobbin-yarn/bobbin/container"
	"github.com/bobbin-yarn/bobbin/nodemanager/auxservices"
	"github.com/bobbin-yarn/bobbin/nodemanager/containers"
	"github.com/bobbin-yarn/bobbin/nodemanager/launch"
	"github.com/bobbin-yarn/bobbin/nodemanager/localizer"
	"github.com/bobbin-yarn/bobbin/rpc/token"
)

// The hooks of a container's run (runner.go), one job each, as Nomad's task runner has
// them. A hook implements the phases it takes part in; the runner calls them in the
// order of its list, and the stop hooks in the reverse order. Contracts:
//   - Prestart prepares the launch and adds what the launch needs to the plan; an error
//     fails the container with exitcode.Invalid and the error's text as its diagnostics
//     (the Java NM's wording), unless the container was killed meanwhile or the
//     NodeManager stops.
//   - Poststart runs once the process runs; Restore instead when a restarted
//     NodeManager takes back a container that kept running.
//   - Stop runs once at the end of every run, whatever phase it reached (it may run
//     without Prestart), before the container's end is recorded, so whoever waits for
//     that end finds the hooks done. ended is false when the container is kept for the
//     next NodeManager process (still running, or accepted and not launched yet).
//
// Hooks never move the container in the table and never write the recovery store: the
// runner does both.

type runHook interface{ Name() string }

type prestartHook interface {
	runHook
	Prestart(ctx context.Context, c *containers.Container, p *launchPlan) error
}

type poststartHook interface {
	runHook
	Poststart(c *containers.Container)
}

type restoreHook interface {
	runHook
	Restore(c *containers.Container)
}

type stopHook interface {
	runHook
	Stop(c *containers.Container, ended bool)
}

// launchPlan is what the prestart hooks prepare for the launch.
type launchPlan struct {
	runUser   *container.User   // nil: the NodeManager's own user runs it
	localized map[string]string // link name → localized path
	env       map[string]string // what the node sets in the container's environment, over its own
	script    string            // launch_container.sh
}

// userHook finds the local user that runs the container (LinuxContainerExecutor).
type userHook struct{ runAs runAs }

func (userHook) Name() string { return "user" }

func (h userHook) Prestart(_ context.Context, c *containers.Container, p *launchPlan) error {
	u, err := h.runAs.userFor(c.User)
	if err != nil {
		// What Java's container-executor answers, as its NM reports it.
		return fmt.Errorf("Application %s initialization failed (exitCode=2) with output: %v", c.ID.Attempt.App, err)
	}
	p.runUser = u
	return nil
}

// dirsHook makes the container's work, application and log dirs.
type dirsHook struct{}

func (dirsHook) Name() string { return "dirs" }

func (dirsHook) Prestart(_ context.Context, c *containers.Container, _ *launchPlan) error {
	d := c.Dirs
	for _, dir := range append(append([]string{d.Work, filepath.Join(d.Work, "tmp")}, d.AppDirs...), d.LogDirs...) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("Failed to create %s: %v", dir, err)
		}
	}
	return nil
}

// localizeHook makes the container's local resources available and holds its references
// to the caches while it runs.
type localizeHook struct {
	local *localizer.Localizer
	table *containers.Table
	held  *localizer.Localized
}

func (*localizeHook) Name() string { return "localize" }

func (h *localizeHook) Prestart(ctx context.Context, c *containers.Container, p *launchPlan) error {
	z, err := h.local.Localize(ctx, c.User, c.ID.Attempt.App.String(), localResources(c))
	if err != nil {
		err = fmt.Errorf("Resource localization failed: %v", err)
	}
	h.table.Localized(c, err)
	if err != nil {
		return err
	}
	h.held, p.localized = z, z.Paths
	return nil
}

// Restore references again the resources of a container taken back running, so the
// caches keep them while it runs.
func (h *localizeHook) Restore(c *containers.Container) {
	h.held = h.local.Acquire(c.User, c.ID.Attempt.App.String(), localResources(c))
}

func (h *localizeHook) Stop(*containers.Container, bool) {
	if h.held != nil {
		h.held.Release()
		h.held = nil
	}
}

// localResources are a container's local resources as the localizer takes them.
func localResources(c *containers.Container) []localizer.Resource {
	var res []localizer.Resource
	for _, e := range c.CLC.GetLocalResources() {
		res = append(res, localizer.FromProto(e.GetKey(), e.GetValue()))
	}
	return res
}

// tokensHook writes the container's credentials where its launch script points
// HADOOP_TOKEN_FILE_LOCATION.
type tokensHook struct{}

func (tokensHook) Name() string { return "tokens" }

func (tokensHook) Prestart(_ context.Context, c *containers.Container, _ *launchPlan) error {
	creds := token.NewCredentials()
	if b := c.CLC.GetTokens(); len(b) > 0 {
		var err error
		if creds, err = token.ReadCredentials(b); err != nil {
			return fmt.Errorf("Invalid container tokens: %v", err)
		}
	}
	return os.WriteFile(filepath.Join(c.Dirs.Work, "container_tokens"), creds.Bytes(), 0o600)
}

// scriptHook writes launch_container.sh: the launch contract (nodemanager/launch) of this
// node and this container.
type scriptHook struct{ node func() launch.Node }

func (scriptHook) Name() string { return "script" }

func (h scriptHook) Prestart(_ context.Context, c *containers.Container, p *launchPlan) error {
	lc := launchContainer(c)
	for k, v := range p.env {
		lc.Env[k] = v
	}
	script := launch.Script(h.node(), lc, p.localized)
	p.script = filepath.Join(c.Dirs.Work, launch.ScriptName)
	return os.WriteFile(p.script, []byte(script), 0o700)
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

// handOverHook gives the container's dirs and private files to the user that runs it.
type handOverHook struct{ runAs runAs }

func (handOverHook) Name() string { return "hand-over" }

func (h handOverHook) Prestart(_ context.Context, c *containers.Container, p *launchPlan) error {
	if p.runUser == nil {
		return nil
	}
	if err := h.runAs.handOverContainer(c, p.runUser, p.localized); err != nil {
		return fmt.Errorf("Exception from container-launch: %v", err)
	}
	return nil
}

// auxHook tells the auxiliary services of the container's start and stop
// (initializeContainer / stopContainer), only for a container they heard start.
type auxHook struct {
	aux         *auxservices.Set
	initialized bool
}

func (*auxHook) Name() string { return "aux-services" }

func (h *auxHook) Poststart(c *containers.Container) {
	h.aux.InitializeContainer(c.ID, c.User)
	h.initialized = true
}

func (h *auxHook) Restore(c *containers.Container) { h.Poststart(c) }

func (h *auxHook) Stop(c *containers.Container, ended bool) {
	if h.initialized && ended {
		h.aux.StopContainer(c.ID, c.User)
	}
}
