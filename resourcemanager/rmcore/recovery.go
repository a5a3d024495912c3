package rmcore

import (
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
	"github.com/bobbin-yarn/bobbin/resourcemanager/statestore"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
	"github.com/bobbin-yarn/bobbin/yarn/security"
)

// Master-key rings by their names in the state store.
const (
	ringAMRM      = "amrm"
	ringContainer = "container"
	ringNMToken   = "nmtoken"
)

// keyRings builds the three master-key rings: those the store kept, so that the tokens
// AMs and NodeManagers hold still verify after a restart, or new ones at random ids (a
// NodeManager that kept running across a restart without a store must never take a new
// key for an old one of the same id).
func keyRings(st *statestore.State) (map[string]*security.KeyRing, error) {
	rings := map[string]*security.KeyRing{}
	for _, name := range []string{ringAMRM, ringContainer, ringNMToken} {
		rec := (*statestore.KeysRecord)(nil)
		if st != nil {
			rec = st.Keys[name]
		}
		if rec == nil {
			rings[name] = security.NewKeyRing(firstKeyID())
			continue
		}
		ring, err := security.RestoreKeyRing(ringStateOf(rec))
		if err != nil {
			return nil, fmt.Errorf("master keys %s: %w", name, err)
		}
		rings[name] = ring
	}
	return rings, nil
}

func ringStateOf(rec *statestore.KeysRecord) security.RingState {
	key := func(k *statestore.KeyRecord) *security.MasterKey {
		if k == nil {
			return nil
		}
		return &security.MasterKey{ID: k.ID, Bytes: k.Bytes}
	}
	return security.RingState{Current: *key(&rec.Current), Next: key(rec.Next), Previous: key(rec.Previous), LastID: rec.LastID}
}

func keysRecordOf(st security.RingState) *statestore.KeysRecord {
	key := func(k *security.MasterKey) *statestore.KeyRecord {
		if k == nil {
			return nil
		}
		return &statestore.KeyRecord{ID: k.ID, Bytes: k.Bytes}
	}
	return &statestore.KeysRecord{Current: *key(&st.Current), Next: key(st.Next), Previous: key(st.Previous), LastID: st.LastID}
}

// saveKeys stores a ring (nothing without a store).
func (rm *Core) saveKeys(name string, ring *security.KeyRing) error {
	if rm.store == nil {
		return nil
	}
	return rm.store.PutKeys(name, keysRecordOf(ring.State()))
}

// recover brings back what the state store kept: every application as it was stored,
// the epoch (moved on), and the running NodeManagers, which a work-preserving restart
// waits for. From then on every change is written.
//
// With work-preserving recovery an attempt whose AM was launched carries on: its token
// authenticates again, its AM is told to re-register (ApplicationMasterNotRegistered) and
// resends its asks, and its containers are rebuilt from what the NodeManagers report as
// they register. Otherwise — or when the AM was not launched yet — the attempt is failed,
// not counted toward max-attempts, and the application gets a new one.
func (rm *Core) recover(st *statestore.State) error {
	epoch, err := rm.store.NextEpoch()
	if err != nil {
		return err
	}
	rm.containers.SetEpoch(epoch)
	apps := make([]*rmstate.App, 0, len(st.Apps))
	for _, rec := range st.Apps {
		a, err := rmstate.AppFromRecord(rec)
		if err != nil {
			return fmt.Errorf("state store %s: %w", rm.store.Location(), err)
		}
		apps = append(apps, a)
		rm.containers.SetQueue(a.ID, a.Queue)
	}
	rm.apps.Restore(apps)
	if st.Labels != nil {
		rm.labels.Restore(st.Labels.Cluster, st.Labels.NonExclusive, st.Labels.OnNode)
		rm.engine.SetNonExclusive(rm.labels.NonExclusive())
	}
	rm.apps.SetJournal(rm.store, func(err error) { rm.log.WithError(err).Error("state store write failed") })
	rm.apps.SetStoreLimit(rm.settings.MaxCompletedStored)
	now := rm.opts.Now()
	awaited := rm.recoverNodes(st.Nodes)
	if rm.settings.WorkPreserving {
		rm.recovery = newRecoveryGate(awaited, now, now.Add(rm.settings.SchedulingWait))
	}
	var resumed, restarted int
	// What recovery changes (attempts resumed, failed and started anew) is stored in one
	// transaction, before the RM serves.
	rm.apps.BeginBatch()
	for _, a := range apps {
		if a.Finished() {
			rm.settleFinished(a)
			continue
		}
		if rm.settings.WorkPreserving && rm.resumeApp(a) {
			resumed++
			continue
		}
		restarted++
		rm.restartApp(a)
	}
	if err := rm.apps.Flush(); err != nil {
		return fmt.Errorf("storing the recovered applications: %w", err)
	}
	rm.log.WithFields(map[string]any{"store": rm.store.Location(), "epoch": epoch, "applications": len(apps), "resumed": resumed,
		"restarted": restarted, "work_preserving": rm.settings.WorkPreserving, "nodes_awaited": len(awaited)}).Info("state recovered")
	return nil
}

// settleFinished ends the attempt of a finished application that was waiting for its AM
// container to exit: the restarted RM has no container to wait for.
func (rm *Core) settleFinished(rec *rmstate.App) {
	rm.apps.With(rec.ID, func(a *rmstate.App, ok bool) {
		if at := a.Attempt; ok && at != nil && !at.Ended() {
			if err := at.Move(rmstate.AttemptAMExited); err != nil {
				rm.log.WithError(err).Warn("recovered attempt of a finished application left as it was stored")
				return
			}
			if at.FinishTime == 0 {
				at.FinishTime = a.FinishTime
			}
		}
	})
}

// resumeApp carries a recovered application's launched attempt on (work-preserving): it
// reports false, changing nothing, when the attempt's AM was not launched. An unmanaged
// AM's attempt carries on too (launched when it was created), as on the 3.x Java RM
// since YARN-1815: its client goes on with the AMRMToken it holds, registering again.
func (rm *Core) resumeApp(rec *rmstate.App) bool {
	now := rm.opts.Now()
	var spec scheduler.AppSpec
	var resumed, unmanaged bool
	// Nothing resuming changes needs storing: the next restart resumes the stored
	// attempt the same way (its registration cleared again).
	rm.apps.Rederive(rec.ID, func(a *rmstate.App, ok bool) {
		at := a.Attempt
		if !ok || at == nil || at.Ended() || (at.AMContainer == nil && !a.Unmanaged) {
			return
		}
		switch at.State() {
		case yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_LAUNCHED, yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_RUNNING:
		default:
			return
		}
		// The AM registers again before its next allocate; until then its liveness clock
		// runs from now.
		at.RegisteredBefore = at.Registered
		at.Registered, at.Launched, at.LastPing, at.LastResponse, at.LastResponseID = false, true, now, nil, 0
		rm.amrm.Recover(at.ID)
		spec, resumed, unmanaged = EngineSpec(a), true, a.Unmanaged
	})
	if !resumed {
		return false
	}
	log := rm.log.WithField("application", rec.ID.String())
	rm.ensureFairQueue(spec.Queue)
	spec.Recovering, spec.UnmanagedAM = true, unmanaged
	if err := rm.engine.AddApp(spec); err != nil {
		if !rm.killQueueless(rec.ID, spec.Queue, err) {
			log.WithError(err).Error("recovered application not scheduled")
		}
		return true
	}
	if unmanaged {
		// No AM container to wait for: the AM's liveness clock, started above, ends the
		// attempt if its client is gone.
		log.WithField("attempt", rec.Attempt.ID.String()).Info("recovered application: unmanaged attempt carries on, waiting for its AM to re-register")
		return true
	}
	rm.recovery.awaitAM(rec.Attempt.ID, *rec.Attempt.AMContainer)
	log.WithField("attempt", rec.Attempt.ID.String()).Info("recovered application: attempt carries on, waiting for its AM to re-register")
	return true
}

// killQueueless kills a recovered application whose queue is gone from the queues the RM
// restarted with, or is no longer a leaf, as the 3.x Capacity Scheduler does (with
// application.fail-fast false, the default; Bobbin refuses true), and reports whether
// err was that. Left in the engine's hands it would wait for ever.
func (rm *Core) killQueueless(id records.ApplicationID, queue string, err error) bool {
	var why string
	switch {
	case errors.Is(err, scheduler.ErrUnknownQueue):
		why = "which no longer exists after restart."
	case errors.Is(err, scheduler.ErrNotLeaf):
		why = "which is no longer a leaf queue after restart."
	default:
		return false
	}
	rm.KillApp(id, "", "Application killed on recovery as it was submitted to queue "+queue+" "+why)
	return true
}

// restartApp gives a recovered unfinished application a new attempt, or, when its
// attempt never had an AM container, that attempt again.
func (rm *Core) restartApp(rec *rmstate.App) {
	now := rm.opts.Now()
	const why = "Attempt failed because the ResourceManager restarted"
	var admit, failed, same bool
	var spec scheduler.AppSpec
	var amRes *yarnpb.ResourceProto
	var amLabel *string
	rm.apps.With(rec.ID, func(a *rmstate.App, ok bool) {
		if !ok {
			return
		}
		if at := a.Attempt; at != nil && !at.Ended() && !a.Unmanaged && at.AMContainer == nil &&
			at.State() == yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_SCHEDULED {
			// Its AM never had a container: the same attempt asks for one again, as on the
			// Java RM, which stores an attempt only once its AM container is allocated and
			// so starts the application's first attempt again. Its AMRMToken is issued
			// anew (tokens are not stored).
			if tok, err := rm.amrm.Issue(at.ID); err == nil {
				at.Token = tok
				_ = a.Move(rmstate.AppAttemptRetried) // unfinished: ACCEPTED or RUNNING
				spec, amRes, amLabel, admit, same = EngineSpec(a), a.AMResource, a.AMLabelExpr, true, true
				return
			}
		}
		if at := a.Attempt; at != nil && at.Move(rmstate.AttemptFailed) == nil {
			// Not counted toward max-attempts: the Java RM stores such an attempt with
			// its AM container KILLED_BY_RESOURCEMANAGER (the NodeManager's resync).
			at.Diagnostics, at.FinishTime, at.AMExitStatus = why, now.UnixMilli(), exitcode.KilledByResourceManager
		}
		if a.Unmanaged {
			// The client runs an unmanaged AM with a token of the old RM's: it cannot go on.
			_ = a.Move(rmstate.AppFailed) // unfinished: ACCEPTED or RUNNING
			a.Final, a.FinishTime = yarnpb.FinalApplicationStatusProto_APP_FAILED, now.UnixMilli()
			a.Diagnostics = "Unmanaged application " + a.ID.String() + " failed: the ResourceManager restarted"
			failed = true
			return
		}
		if err := rm.NewAttemptLocked(a, now); err != nil {
			_ = a.Move(rmstate.AppFailed)
			a.Final, a.FinishTime, a.Diagnostics = yarnpb.FinalApplicationStatusProto_APP_FAILED, now.UnixMilli(), err.Error()
			failed = true
			return
		}
		_ = a.Move(rmstate.AppAttemptRetried)
		a.Diagnostics = why
		spec, amRes, amLabel, admit = EngineSpec(a), a.AMResource, a.AMLabelExpr, true
	})
	log := rm.log.WithField("application", rec.ID.String())
	switch {
	case failed:
		rm.AppEnded(rec.ID, yarnpb.YarnApplicationStateProto_FAILED)
		rm.EndApp(rec.ID)
		log.Warn("recovered application failed")
	case admit:
		spec.Recovering = true
		if err := rm.AdmitToEngine(spec, amRes, amLabel, false); err != nil {
			if !rm.killQueueless(rec.ID, spec.Queue, err) {
				log.WithError(err).Error("recovered application not scheduled")
			}
			return
		}
		if same {
			log.Info("recovered application: its attempt asks for its AM container again")
			return
		}
		log.Info("recovered application: new attempt")
	}
}

// recoverNodes brings back the stored NodeManagers and returns those a work-preserving
// restart waits for: the running ones and those decommissioning gracefully (which go on
// decommissioning when they register again). Decommissioned ones are listed again.
func (rm *Core) recoverNodes(recs []*statestore.NodeRecord) (awaited []string) {
	rm.nodeAdminMu.Lock()
	defer rm.nodeAdminMu.Unlock()
	rm.decommissioning = map[string]time.Time{}
	rm.storedNodes = make(map[string]statestore.NodeRecord, len(recs))
	for _, r := range recs {
		rm.storedNodes[r.ID] = *r
		switch r.State {
		case statestore.NodeDecommissioned:
			id := records.NodeIDFromKey(r.ID)
			rm.nodes.Put(r.ID, &rmstate.Node{NodeAddr: &rmstate.NodeAddr{Key: r.ID, ID: id, HTTP: r.HTTP}, Rack: r.Rack,
				Capability: &yarnpb.ResourceProto{Memory: proto.Int64(r.MemoryMB), VirtualCores: proto.Int32(r.VCores)}},
				yarnpb.NodeStateProto_NS_DECOMMISSIONED)
		case statestore.NodeDecommissioning:
			var by time.Time
			if r.DecommissionBy > 0 {
				by = time.UnixMilli(r.DecommissionBy)
			}
			rm.decommissioning[r.ID] = by
			awaited = append(awaited, r.ID)
		default:
			awaited = append(awaited, r.ID)
		}
	}
	return awaited
}

// RecoveredDecommission reports whether a node registering again was decommissioning
// gracefully when the RM restarted, and until when; Registered forgets it once the node
// is back.
func (rm *Core) RecoveredDecommission(key string) (by time.Time, ok bool) {
	rm.nodeAdminMu.Lock()
	defer rm.nodeAdminMu.Unlock()
	by, ok = rm.decommissioning[key]
	return by, ok
}

// RememberNode stores a NodeManager as it is now: running (a restart waits for it),
// decommissioning or decommissioned (see statestore.NodeRecord); a node in any other
// state (lost, shut down) is forgotten. Write errors are logged: a missing node record
// only shortens a restart's wait, or loses a decommission's listing.
func (rm *Core) RememberNode(key string) {
	if rm.store == nil {
		return
	}
	rm.nodeAdminMu.Lock()
	delete(rm.decommissioning, key)
	rm.nodeAdminMu.Unlock()
	n, ok := rm.nodes.Snapshot(key)
	if !ok {
		rm.forgetNode(key)
		return
	}
	rec := &statestore.NodeRecord{ID: key}
	switch n.State() {
	case yarnpb.NodeStateProto_NS_RUNNING, yarnpb.NodeStateProto_NS_UNHEALTHY, yarnpb.NodeStateProto_NS_NEW:
	case yarnpb.NodeStateProto_NS_DECOMMISSIONING:
		rec.State = statestore.NodeDecommissioning
		if !n.DecommissionBy.IsZero() {
			rec.DecommissionBy = n.DecommissionBy.UnixMilli()
		}
	case yarnpb.NodeStateProto_NS_DECOMMISSIONED:
		rec.State, rec.HTTP, rec.Rack = statestore.NodeDecommissioned, n.HTTP, n.Rack
		rec.MemoryMB, rec.VCores = n.Capability.GetMemory(), n.Capability.GetVirtualCores()
	default:
		rm.forgetNode(key)
		return
	}
	rm.nodeAdminMu.Lock()
	stored, same := rm.storedNodes[key]
	rm.nodeAdminMu.Unlock()
	if same && stored == *rec {
		return
	}
	if err := rm.store.PutNode(rec); err != nil {
		rm.log.WithError(err).WithField("node", key).Error("state store write failed")
		return
	}
	rm.nodeAdminMu.Lock()
	if rm.storedNodes == nil {
		rm.storedNodes = map[string]statestore.NodeRecord{}
	}
	rm.storedNodes[key] = *rec
	rm.nodeAdminMu.Unlock()
}

func (rm *Core) forgetNode(key string) {
	if rm.store == nil {
		return
	}
	rm.nodeAdminMu.Lock()
	delete(rm.storedNodes, key)
	rm.nodeAdminMu.Unlock()
	if err := rm.store.RemoveNode(key); err != nil {
		rm.log.WithError(err).WithField("node", key).Error("state store write failed")
	}
}

// schedulingOpen reports whether the engine may allocate: not while a work-preserving
// restart waits for the NodeManagers that were running (their containers are not booked
// yet). The caller that sees the wait end fails the resumed attempts whose AM container
// no NodeManager reported: when every node came back, their AM is gone.
func (rm *Core) schedulingOpen(now time.Time) (open, justOpened bool) {
	open, justOpened, lost, gone := rm.recovery.check(now)
	if justOpened {
		rm.log.WithFields(map[string]any{"nodes_not_back": len(gone), "waited_ms": now.Sub(rm.recovery.since).Milliseconds(), "attempts_lost": len(lost)}).Info("recovery: scheduling resumes")
		// A node that did not come back is not waited for by the next restart (it is
		// remembered again if it registers later).
		for _, n := range gone {
			rm.forgetNode(n)
		}
		for _, att := range lost {
			rm.AttemptFailed(att, fmt.Sprintf("AM container of %s was not reported by any NodeManager after the ResourceManager restarted", att), amGoneExit)
		}
	}
	return open, justOpened
}

// SaveLabels stores the node labels after an administrator changed them, in the
// node-label store and the state store (each when there is one): the change is answered
// only once it is kept.
func (rm *Core) SaveLabels() error {
	if rm.labelStore != nil {
		if err := rm.labelStore.Save(rm.labelState()); err != nil {
			return err
		}
	}
	if rm.store == nil {
		return nil
	}
	cluster, nonExclusive, onNode := rm.labels.Export()
	return rm.store.PutLabels(&statestore.LabelsRecord{Cluster: cluster, NonExclusive: nonExclusive, OnNode: onNode})
}
