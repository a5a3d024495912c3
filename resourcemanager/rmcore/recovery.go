package rmcore

import (
	"fmt"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
)

// recover loads the state store: every application comes back as it was stored, the
// epoch moves on, and from then on every change is written. Without work-preserving
// recovery an attempt that was running when the RM stopped is failed — not counted
// toward max-attempts, as the Java RM does — and the application gets a new attempt; its
// old containers are cleaned up when their NodeManagers register again.
func (rm *Core) recover() error {
	st, err := rm.Store.Load()
	if err != nil {
		return err
	}
	epoch, err := rm.Store.NextEpoch()
	if err != nil {
		return err
	}
	rm.Containers.SetEpoch(epoch)
	apps := make([]*rmstate.App, 0, len(st.Apps))
	for _, rec := range st.Apps {
		a, err := rmstate.AppFromRecord(rec)
		if err != nil {
			return fmt.Errorf("state store %s: %w", rm.Store.Location(), err)
		}
		apps = append(apps, a)
	}
	rm.Apps.Restore(apps)
	rm.Apps.SetJournal(rm.Store, func(err error) { rm.Log.WithError(err).Error("state store write failed") })
	running := 0
	for _, a := range apps {
		if a.Finished() {
			continue
		}
		running++
		rm.restartApp(a)
	}
	rm.Log.WithFields(map[string]any{"store": rm.Store.Location(), "epoch": epoch, "applications": len(apps), "unfinished": running}).Info("state recovered")
	return nil
}

// restartApp gives a recovered unfinished application a new attempt.
func (rm *Core) restartApp(rec *rmstate.App) {
	now := rm.Opts.Now()
	const why = "Attempt failed because the ResourceManager restarted"
	var admit, failed bool
	var spec scheduler.AppSpec
	var amRes *yarnpb.ResourceProto
	rm.Apps.With(rec.ID, func(a *rmstate.App, ok bool) {
		if !ok {
			return
		}
		if at := a.Attempt; at != nil && !at.Ended() {
			at.State, at.Diagnostics, at.FinishTime = yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FAILED, why, now.UnixMilli()
		}
		if a.Unmanaged {
			// The client runs an unmanaged AM with a token of the old RM's: it cannot go on.
			a.State, a.Final, a.FinishTime = yarnpb.YarnApplicationStateProto_FAILED, yarnpb.FinalApplicationStatusProto_APP_FAILED, now.UnixMilli()
			a.Diagnostics = "Unmanaged application " + a.ID.String() + " failed: the ResourceManager restarted"
			failed = true
			return
		}
		if err := rm.NewAttemptLocked(a, now); err != nil {
			a.State, a.Final, a.FinishTime, a.Diagnostics = yarnpb.YarnApplicationStateProto_FAILED, yarnpb.FinalApplicationStatusProto_APP_FAILED, now.UnixMilli(), err.Error()
			failed = true
			return
		}
		a.State, a.Diagnostics = yarnpb.YarnApplicationStateProto_ACCEPTED, why
		spec, amRes, admit = EngineSpec(a), a.AMResource, true
	})
	log := rm.Log.WithField("application", rec.ID.String())
	switch {
	case failed:
		rm.Metrics.AppEnded(yarnpb.YarnApplicationStateProto_FAILED)
		rm.EndApp(rec.ID)
		log.Warn("recovered application failed")
	case admit:
		if err := rm.AdmitToEngine(spec, amRes, false); err != nil {
			log.WithError(err).Error("recovered application not scheduled")
			return
		}
		log.Info("recovered application: new attempt")
	}
}
