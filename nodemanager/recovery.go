package nodemanager

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/container"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/nodemanager/auxservices"
	"github.com/bobbin-yarn/bobbin/nodemanager/containers"
	"github.com/bobbin-yarn/bobbin/nodemanager/localizer"
	"github.com/bobbin-yarn/bobbin/nodemanager/nmstore"
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
	nm.journal.Open(s)
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
	nm.journal.Open(s)
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
			nm.journal.Write("forget resources gone from the caches", func(s *nmstore.Store) error { return s.RemoveResources(gone) })
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
			"containers_relaunched": relaunched, "resources": len(st.Resources), "store": nm.journal.Location()}).Info("recovered the NodeManager's state")
	}
	for id, pid := range leaders {
		nm.log.WithFields(logrus.Fields{"container": id, "pid": pid}).Warn("killing a container process the NodeManager cannot account for")
		container.Kill(container.Mark{ID: id, Owner: nm.owner}, pid)
		nm.removeCgroup(id)
	}
}

// removeCgroup kills what is left in the cgroup of a container this NodeManager's
// earlier process ran and no longer runs, however it left its session, and removes the
// cgroup. Only such containers: other NodeManagers on the host may share the subtree.
func (nm *NodeManager) removeCgroup(id string) {
	if nm.cgroups == nil {
		return
	}
	if g, ok := nm.cgroups.Adopt(id); ok {
		if err := g.Destroy(); err != nil {
			nm.log.WithError(err).WithField("container", id).Warn("cannot remove a container's cgroup")
		}
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
	a, err := containers.RestoredApp(rec)
	if err != nil {
		nm.log.WithField("application", rec.ID).WithError(err).Warn("recovered application record with a bad id; dropped")
		nm.journal.Write("drop a bad application record", func(s *nmstore.Store) error { return s.RemoveApp(rec.ID) })
		return
	}
	data, legacySecret := nm.table.RestoreApp(a)
	for name, d := range data {
		if err := nm.aux.InitializeApplication(name, auxservices.AppInit{App: a.ID, User: a.User, Data: d}); err != nil {
			nm.log.WithError(err).WithFields(logrus.Fields{"application": rec.ID, "service": name}).Warn("recovered application not initialized in its auxiliary service")
		}
	}
	if len(legacySecret) > 0 && nm.mrShuffle != nil {
		nm.mrShuffle.restoreSecret(a.ID, a.User, legacySecret)
	}
}

// recoverContainer rebuilds one container; it returns what became of it (Requested:
// launched again, Launched: taken back running, Completed: reported as ended), "" when
// its record was unusable (its process, if any, is then killed as unaccounted for).
func (nm *NodeManager) recoverContainer(rec *nmstore.ContainerRecord, leaders map[string]int) string {
	log := nm.log.WithField("container", rec.ID)
	bad := func(why string) string {
		log.WithField("reason", why).Warn("recovered container record unusable; dropped")
		nm.journal.Write("drop an unusable container record", func(s *nmstore.Store) error { return s.RemoveContainers([]string{rec.ID}) })
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
	d := containers.Dirs{AppDirs: rec.AppDirs, Work: rec.WorkDir, LogDirs: rec.LogDirs, LocalDir: rec.LocalDir}
	if d.Work == "" || len(d.LogDirs) == 0 {
		d = nm.dirsFor(id, rec.User)
	}
	c := containers.New(nm.ctx, containers.Spec{ID: id, Ident: ident, User: rec.User, CLC: req.GetContainerLaunchContext(), Request: rec.Request,
		Dirs: d, KillExit: rec.KillExit, KillDiag: rec.KillDiag, Reported: rec.Reported, GPUs: rec.GPUs})
	log = log.WithField("application", app.String())
	nm.table.Restore(c)
	pid, running := leaders[rec.ID]
	delete(leaders, rec.ID)
	if rec.Pid > 0 {
		pid = rec.Pid
	}
	switch {
	case rec.State == nmstore.Completed:
		c.Release()
		nm.table.End(c, rec.Exit, rec.Diag)
		return nmstore.Completed
	case rec.State == nmstore.Launched || running:
		// It was started: taken back where it is, running or not (Reattach then reports
		// the exit code it left).
		spec := nm.spec(c)
		proc, err := nm.exec.Reattach(spec, pid)
		if err != nil {
			c.Release()
			nm.end(c, exitcode.Lost, fmt.Sprintf("Unable to recover container %s: %v\nContainer exited with a non-zero exit code %d\n", id, err, exitcode.Lost))
			return nmstore.Completed
		}
		started := time.UnixMilli(rec.Started)
		if rec.Started == 0 {
			started = nm.opts.Now()
		}
		nm.runRestored(c, proc, started)
		return nmstore.Launched
	case rec.KillExit != 0:
		c.Release()
		nm.end(c, rec.KillExit, rec.KillDiag+"\nContainer recovered as killed.")
		return nmstore.Completed
	default:
		// Accepted but never started: it starts now, as the Java NM relaunches a
		// container recovered as REQUESTED.
		log.Info("container recovered before it had started: launching it")
		nm.spawn(func() { nm.run(c) })
		return nmstore.Requested
	}
}

// keepsContainers reports whether a stopping NodeManager leaves its containers running
// for the next process (recovery under a supervisor, yarn.nodemanager.recovery.supervised).
func (nm *NodeManager) keepsContainers() bool {
	return nm.journal.Enabled() && nm.settings.Supervised
}

// updateKeys takes the master keys of an RM answer and stores them when they changed.
func (nm *NodeManager) updateKeys(containerKey, nmKey *yarnpb.MasterKeyProto) {
	if !nm.keys.Update(containerKey, nmKey) || !nm.journal.Enabled() {
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
	rec := &nmstore.KeysRecord{Container: conv(c), NMToken: conv(n)}
	nm.journal.Write("record master keys", func(s *nmstore.Store) error { return s.PutKeys(rec) })
}

// cacheJournal keeps the localizer's caches in the recovery store.
type cacheJournal struct{ nm *NodeManager }

func (j cacheJournal) Localized(r localizer.CachedResource) {
	j.nm.journal.Write("record localized resource "+r.Dir, func(s *nmstore.Store) error { return s.PutResource(r) })
}

func (j cacheJournal) Removed(dirs []string) {
	j.nm.journal.Write("forget localized resources", func(s *nmstore.Store) error { return s.RemoveResources(dirs) })
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
