package nodemanager

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/container"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/nodemanager/localizer"
	"github.com/bobbin-yarn/bobbin/nodemanager/nmstore"
	"github.com/bobbin-yarn/bobbin/nodemanager/shuffle"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/rpc/token"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
	"github.com/bobbin-yarn/bobbin/yarn/security"
)

// Work-preserving restart (yarn.nodemanager.recovery.enabled). Every change that matters
// after a crash is written to the recovery store as it happens: a container accepted
// (its start request and directories), launched (its pid), asked to stop, completed (its
// exit status), forgotten; an application, its shuffle secret and its end; the caches'
// resources; the master keys. A restarted NodeManager reads them back before it serves
// anything or registers: it takes back the containers still running, reports the ones
// that ended meanwhile with the exit code their launch wrapper left, launches again the
// ones it had accepted but not started, and kills every container process carrying its
// owner mark that it cannot account for — so nothing runs unreported.

// openStore opens the recovery store and reads it. A store that cannot be read is moved
// aside and a new one started: the NodeManager runs without recovering (and says why)
// rather than not at all. It returns nil state when there is nothing to recover.
func (nm *NodeManager) openStore() (*nmstore.State, error) {
	dir := nm.settings.RecoveryDir
	log := nm.log.WithField("recovery_dir", dir)
	st, err := nm.loadStore(dir)
	if err == nil {
		return st, nil
	}
	log.WithError(err).Error("recovery store unusable: starting without recovery; container processes left by the previous NodeManager will be killed")
	if to, qerr := nmstore.Quarantine(dir, nm.opts.Now()); qerr == nil {
		log.WithField("moved_to", to).Warn("unusable recovery store moved aside")
	} else {
		log.WithError(qerr).Warn("unusable recovery store not moved aside")
	}
	s, err := nmstore.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("nodemanager: yarn.nodemanager.recovery.dir: %w", err)
	}
	nm.store = s
	return nil, nil
}

func (nm *NodeManager) loadStore(dir string) (*nmstore.State, error) {
	s, err := nmstore.Open(dir)
	if err != nil {
		return nil, err
	}
	st, err := s.Load()
	if err != nil {
		s.Close()
		return nil, err
	}
	nm.store = s
	return st, nil
}

// recoverState rebuilds the node from the store's state (st may be nil) and kills the
// container processes of this NodeManager that nothing accounts for.
func (nm *NodeManager) recoverState(st *nmstore.State) {
	leaders := container.Leaders(nm.owner)
	if st != nil {
		nm.recoverKeys(st.Keys)
		for _, rec := range st.Apps {
			nm.recoverApp(rec)
		}
		if gone := nm.local.Restore(st.Resources); len(gone) > 0 {
			nm.storeErr(nm.store.RemoveResources(gone), "forget resources gone from the caches")
		}
		var relaunched, reacquired, completed int
		for _, rec := range st.Containers {
			switch nm.recoverContainer(rec, leaders) {
			case nmstore.Requested:
				relaunched++
			case nmstore.Launched:
				reacquired++
			case nmstore.Completed:
				completed++
			}
		}
		nm.log.WithFields(logrus.Fields{"applications": len(st.Apps), "containers_reacquired": reacquired, "containers_completed": completed,
			"containers_relaunched": relaunched, "resources": len(st.Resources), "store": nm.store.Location()}).Info("recovered the NodeManager's state")
	}
	for id, pid := range leaders {
		nm.log.WithFields(logrus.Fields{"container": id, "pid": pid}).Warn("killing a container process the NodeManager cannot account for")
		container.Kill(id, pid)
	}
}

func (nm *NodeManager) recoverKeys(rec *nmstore.KeysRecord) {
	if rec == nil {
		return
	}
	conv := func(keys []nmstore.KeyRecord) []security.MasterKey {
		out := make([]security.MasterKey, 0, len(keys))
		for _, k := range keys {
			out = append(out, security.MasterKey{ID: k.ID, Bytes: k.Bytes})
		}
		return out
	}
	nm.keys.Restore(conv(rec.Container), conv(rec.NMToken))
}

func (nm *NodeManager) recoverApp(rec *nmstore.AppRecord) {
	id, err := records.ParseApplicationID(rec.ID)
	if err != nil {
		nm.log.WithField("application", rec.ID).WithError(err).Warn("recovered application record with a bad id; dropped")
		nm.storeErr(nm.store.RemoveApp(rec.ID), "drop a bad application record")
		return
	}
	a := &nmApp{id: id, user: rec.User, shuffleSecret: rec.ShuffleSecret, finished: rec.Finished}
	for _, b := range rec.ACLs {
		acl := &yarnpb.ApplicationACLMapProto{}
		if proto.Unmarshal(b, acl) == nil {
			a.acls = append(a.acls, acl)
		}
	}
	if len(rec.LogContext) > 0 {
		a.logContext = &yarnpb.LogAggregationContextProto{}
		if proto.Unmarshal(rec.LogContext, a.logContext) != nil {
			a.logContext = nil
		}
	}
	nm.mu.Lock()
	nm.apps[id] = a
	nm.mu.Unlock()
	if nm.shuffle != nil && len(a.shuffleSecret) > 0 {
		nm.shuffle.h.AddJob(shuffle.JobID(id.String()), id.String(), a.user, a.shuffleSecret)
	}
}

// recoverContainer rebuilds one container; it returns what became of it (Requested:
// launched again, Launched: taken back running, Completed: reported as ended), "" when
// its record was unusable (its process, if any, is then killed as unaccounted for).
func (nm *NodeManager) recoverContainer(rec *nmstore.ContainerRecord, leaders map[string]int) string {
	log := nm.log.WithField("container", rec.ID)
	bad := func(why string) string {
		log.WithField("reason", why).Warn("recovered container record unusable; dropped")
		nm.storeErr(nm.store.RemoveContainers([]string{rec.ID}), "drop an unusable container record")
		return ""
	}
	req := &yarnpb.StartContainerRequestProto{}
	if err := proto.Unmarshal(rec.Request, req); err != nil {
		return bad("start request: " + err.Error())
	}
	tok := token.FromProto(req.GetContainerToken())
	ident := &yarnpb.ContainerTokenIdentifierProto{}
	if tok == nil || proto.Unmarshal(tok.Identifier, ident) != nil || ident.GetContainerId() == nil {
		return bad("container token")
	}
	id := records.ContainerIDFromProto(ident.GetContainerId())
	if id.String() != rec.ID {
		return bad("token is for " + id.String())
	}
	app := id.Attempt.App
	ctx, cancel := context.WithCancel(nm.ctx)
	c := &nmContainer{id: id, ident: ident, user: rec.User, clc: req.GetContainerLaunchContext(), request: rec.Request,
		dirs:  dirs{appDirs: rec.AppDirs, work: rec.WorkDir, logDirs: rec.LogDirs, localDir: rec.LocalDir},
		state: yarnpb.ContainerStateProto_C_NEW, exit: exitcode.Invalid, killExit: rec.KillExit, killDiag: rec.KillDiag,
		reported: rec.Reported, cancel: cancel, done: make(chan struct{})}
	if c.dirs.work == "" || len(c.dirs.logDirs) == 0 {
		c.dirs = nm.dirsFor(c)
	}
	log = log.WithField("application", app.String())
	nm.mu.Lock()
	nm.containers[id] = c
	if _, ok := nm.apps[app]; !ok {
		nm.apps[app] = &nmApp{id: app, user: c.user, acls: c.clc.GetApplication_ACLs(), logContext: ident.GetLogAggregationContext()}
	}
	nm.mu.Unlock()
	pid, running := leaders[rec.ID]
	delete(leaders, rec.ID)
	if rec.Pid > 0 {
		pid = rec.Pid
	}
	switch {
	case rec.State == nmstore.Completed:
		cancel()
		nm.mu.Lock()
		c.state, c.exit, c.diag = yarnpb.ContainerStateProto_C_COMPLETE, rec.Exit, rec.Diag
		nm.mu.Unlock()
		close(c.done)
		return nmstore.Completed
	case rec.State == nmstore.Launched || running:
		// It was started: taken back where it is, running or not (Reattach then reports
		// the exit code it left).
		spec := nm.spec(c)
		proc, err := nm.exec.Reattach(spec, pid)
		if err != nil {
			cancel()
			nm.complete(c, exitcode.Lost, fmt.Sprintf("Unable to recover container %s: %v\nContainer exited with a non-zero exit code %d\n", id, err, exitcode.Lost))
			return nmstore.Completed
		}
		// Its resources are referenced again, so the caches keep them while it runs.
		z := nm.local.Acquire(c.user, app.String(), localResources(c))
		started := time.UnixMilli(rec.Started)
		if rec.Started == 0 {
			started = nm.opts.Now()
		}
		nm.mu.Lock()
		c.proc, c.state, c.started = proc, yarnpb.ContainerStateProto_C_RUNNING, started
		nm.mu.Unlock()
		if rec.State != nmstore.Launched {
			nm.saveContainer(c)
		}
		log.WithField("pid", proc.Pid()).Info("container recovered: taken back without restarting it")
		nm.spawn(func() {
			defer cancel()
			defer z.Release()
			nm.watch(c, proc, spec.OutputFile, log)
		})
		return nmstore.Launched
	case c.killExit != 0:
		cancel()
		nm.complete(c, c.killExit, c.killDiag+"\nContainer recovered as killed.")
		return nmstore.Completed
	default:
		// Accepted but never started: it starts now, as the Java NM relaunches a
		// container recovered as REQUESTED.
		log.Info("container recovered before it had started: launching it")
		nm.spawn(func() {
			defer cancel()
			nm.run(ctx, c)
		})
		return nmstore.Requested
	}
}

// keepsContainers reports whether a stopping NodeManager leaves its containers running
// for the next process (recovery under a supervisor, yarn.nodemanager.recovery.supervised).
func (nm *NodeManager) keepsContainers() bool {
	return nm.store != nil && nm.settings.Supervised
}

// containerRecord is c's record for the store (under nm.mu).
func (c *nmContainer) recordLocked() *nmstore.ContainerRecord {
	rec := &nmstore.ContainerRecord{ID: c.id.String(), Request: c.request, User: c.user, State: nmstore.Requested,
		WorkDir: c.dirs.work, LocalDir: c.dirs.localDir, AppDirs: c.dirs.appDirs, LogDirs: c.dirs.logDirs,
		Exit: c.exit, Diag: c.diag, KillExit: c.killExit, KillDiag: c.killDiag, Reported: c.reported}
	if c.proc != nil {
		rec.State, rec.Pid, rec.Started = nmstore.Launched, c.proc.Pid(), c.started.UnixMilli()
	}
	if c.state == yarnpb.ContainerStateProto_C_COMPLETE {
		rec.State = nmstore.Completed
	}
	return rec
}

// saveContainer writes c's record as it is now. Writes of one container are ordered:
// an older record never replaces a newer one, and a forgotten container stays forgotten.
func (nm *NodeManager) saveContainer(c *nmContainer) {
	if nm.store == nil {
		return
	}
	nm.mu.Lock()
	c.saves++
	seq, rec := c.saves, c.recordLocked()
	nm.mu.Unlock()
	nm.storeMu.Lock()
	defer nm.storeMu.Unlock()
	if c.forgotten || seq <= c.saved {
		return
	}
	c.saved = seq
	nm.storeErr(nm.store.PutContainer(rec), "record container "+rec.ID)
}

// forgetContainers removes the records of containers the node no longer holds.
func (nm *NodeManager) forgetContainers(cs []*nmContainer) {
	if nm.store == nil || len(cs) == 0 {
		return
	}
	nm.storeMu.Lock()
	defer nm.storeMu.Unlock()
	ids := make([]string, 0, len(cs))
	for _, c := range cs {
		c.forgotten = true
		ids = append(ids, c.id.String())
	}
	nm.storeErr(nm.store.RemoveContainers(ids), "forget containers")
}

// saveApp writes an application's record.
func (nm *NodeManager) saveApp(a *nmApp) {
	if nm.store == nil {
		return
	}
	nm.mu.Lock()
	rec := &nmstore.AppRecord{ID: a.id.String(), User: a.user, ShuffleSecret: a.shuffleSecret, Finished: a.finished}
	for _, acl := range a.acls {
		if b, err := proto.Marshal(acl); err == nil {
			rec.ACLs = append(rec.ACLs, b)
		}
	}
	if a.logContext != nil {
		rec.LogContext, _ = proto.Marshal(a.logContext)
	}
	nm.mu.Unlock()
	nm.storeMu.Lock()
	defer nm.storeMu.Unlock()
	nm.storeErr(nm.store.PutApp(rec), "record application "+rec.ID)
}

// forgetApp removes an application's record (its clean-up is done).
func (nm *NodeManager) forgetApp(id records.ApplicationID) {
	if nm.store == nil {
		return
	}
	nm.storeMu.Lock()
	defer nm.storeMu.Unlock()
	nm.storeErr(nm.store.RemoveApp(id.String()), "forget application "+id.String())
}

// updateKeys takes the master keys of an RM answer and stores them when they changed.
func (nm *NodeManager) updateKeys(containerKey, nmKey *yarnpb.MasterKeyProto) {
	if !nm.keys.Update(containerKey, nmKey) || nm.store == nil {
		return
	}
	c, n := nm.keys.Held()
	conv := func(keys []security.MasterKey) []nmstore.KeyRecord {
		out := make([]nmstore.KeyRecord, 0, len(keys))
		for _, k := range keys {
			out = append(out, nmstore.KeyRecord{ID: k.ID, Bytes: k.Bytes})
		}
		return out
	}
	nm.storeMu.Lock()
	defer nm.storeMu.Unlock()
	nm.storeErr(nm.store.PutKeys(&nmstore.KeysRecord{Container: conv(c), NMToken: conv(n)}), "record master keys")
}

// storeErr logs a failed store write: the node goes on (its containers are not at
// risk now), but a restart would not know what the write would have said.
func (nm *NodeManager) storeErr(err error, what string) {
	if err != nil {
		nm.log.WithError(err).WithField("action", what).Error("recovery store write failed")
	}
}

// cacheJournal keeps the localizer's caches in the recovery store.
type cacheJournal struct{ nm *NodeManager }

func (j cacheJournal) Localized(r localizer.CachedResource) {
	if j.nm.store == nil {
		return
	}
	j.nm.storeMu.Lock()
	defer j.nm.storeMu.Unlock()
	j.nm.storeErr(j.nm.store.PutResource(r), "record localized resource "+r.Dir)
}

func (j cacheJournal) Removed(dirs []string) {
	if j.nm.store == nil {
		return
	}
	j.nm.storeMu.Lock()
	defer j.nm.storeMu.Unlock()
	j.nm.storeErr(j.nm.store.RemoveResources(dirs), "forget localized resources")
}

// cleanStaleLocalDirs deletes what an earlier NodeManager process left in the local dirs
// when nothing of it is recovered, as the Java NM does at a start without recovery: the
// caches and application dirs (usercache, filecache, nmPrivate) are moved aside at once,
// so nothing new lands in them, and deleted in the background.
func (nm *NodeManager) cleanStaleLocalDirs() {
	stamp := nm.opts.Now().UnixMilli()
	var moved []string
	for _, l := range nm.settings.LocalDirs {
		for _, name := range []string{"usercache", "filecache", "nmPrivate"} {
			dir := filepath.Join(l, name)
			if _, err := os.Lstat(dir); err != nil {
				continue
			}
			to := fmt.Sprintf("%s_DEL_%d", dir, stamp)
			if err := os.Rename(dir, to); err != nil {
				nm.log.WithError(err).WithField("dir", dir).Warn("stale local dir not moved aside")
				continue
			}
			moved = append(moved, to)
		}
	}
	if len(moved) == 0 {
		return
	}
	nm.log.WithField("dirs", moved).Info("local dirs of an earlier NodeManager process moved aside for deletion")
	nm.spawn(func() {
		for _, d := range moved {
			if err := os.RemoveAll(d); err != nil {
				nm.log.WithError(err).WithField("dir", d).Warn("stale local dir not deleted")
			}
		}
	})
}

// ownerMark is what marks this NodeManager's container processes: its first local dir,
// which no other NodeManager on the host shares and which stays the same across restarts.
func ownerMark(localDirs []string) string {
	if len(localDirs) == 0 {
		return ""
	}
	if abs, err := filepath.Abs(localDirs[0]); err == nil {
		return abs
	}
	return localDirs[0]
}
