package rmcore

import (
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
	"github.com/bobbin-yarn/bobbin/resourcemanager/statestore"
)

// Attempt life (protocol.md §7.3): an application gets attempt 1 at submission. When
// the attempt's AM ends without unregistering — its container exits, it stops
// heartbeating, its launch fails — the attempt FAILS; a managed application then gets a
// new attempt (new id, new AMRMToken, new AM container) while its counted failures stay
// below max-attempts, and is FAILED otherwise. AM containers that end because the
// cluster took them (preempted, aborted, disks failed, killed by the RM) do not count, and
// with a failures-validity interval only the failures inside it do.

// NewAttemptLocked starts the next attempt of a; the registry lock is held.
func (rm *Core) NewAttemptLocked(a *rmstate.App, now time.Time) error {
	// After the last attempt's id, not the count: a Java RM removes an application's
	// oldest attempts past those it keeps (RMAppImpl.removeExcessAttempts).
	n := int32(len(a.Attempts) + 1)
	if k := len(a.Attempts); k > 0 {
		n = max(n, a.Attempts[k-1].ID.Attempt+1)
	}
	att := a.ID.Attempt(n)
	tok, err := rm.amrm.Issue(att)
	if err != nil {
		return fmt.Errorf("AMRMToken for %s: %w", att, err)
	}
	at := rmstate.NewAttempt(att, now.UnixMilli())
	at.Token = tok
	if a.Unmanaged {
		// The client runs an unmanaged AM: it is launched as soon as it exists, and its
		// liveness clock starts now.
		if err := at.Move(rmstate.AttemptAMLaunched); err != nil {
			return err
		}
		at.Launched, at.LastPing = true, now
		if a.LaunchTime == 0 {
			a.LaunchTime = now.UnixMilli()
		}
	}
	a.Attempt = at
	a.Attempts = append(a.Attempts, at)
	return nil
}

// AdmitToEngine enters an application in the scheduling engine and, for a managed AM,
// asks for its AM container.
func (rm *Core) AdmitToEngine(spec scheduler.AppSpec, amResource *yarnpb.ResourceProto, amLabel *string, unmanaged bool) error {
	rm.ensureFairQueue(spec.Queue)
	spec.UnmanagedAM = unmanaged
	if err := rm.engine.AddApp(spec); err != nil {
		return fmt.Errorf("scheduler refused application %s: %w", spec.ID, err)
	}
	if unmanaged {
		return nil
	}
	am := rm.AsksFrom([]*yarnpb.ResourceRequestProto{{Priority: &yarnpb.PriorityProto{Priority: proto.Int32(0)},
		ResourceName: proto.String("*"), Capability: amResource, NumContainers: proto.Int32(1), RelaxLocality: proto.Bool(true),
		NodeLabelExpression: amLabel}})
	am[0].AM = true
	if err := rm.engine.UpdateAsks(spec.ID, am); err != nil {
		return fmt.Errorf("AM container of %s not requested: %w", spec.ID, err)
	}
	rm.KickScheduler()
	return nil
}

func EngineSpec(a *rmstate.App) scheduler.AppSpec {
	gang, _ := rmstate.GangRequested(a.Tags) // checked at submission
	return scheduler.AppSpec{ID: EngineID(a.ID), Queue: a.Queue, User: a.User, Priority: a.Priority, Submit: time.UnixMilli(a.SubmitTime), Runtime: a.Runtime,
		Gang: gang, Label: EngineLabel(a.LabelExpr)}
}

// AttemptFailed ends the current attempt att as FAILED and either starts the next
// attempt or fails the application. exit is the AM container's exit status
// (exitcode.Invalid when there is none), which decides whether the failure counts.
func (rm *Core) AttemptFailed(att records.AttemptID, diagnostics string, exit int32) {
	now := rm.opts.Now()
	nowMs := now.UnixMilli()
	var retry, failed bool
	var spec scheduler.AppSpec
	var amRes *yarnpb.ResourceProto
	var amLabel *string
	var next records.AttemptID
	var appDiagnostics string
	stale := false
	rm.apps.With(att.App, func(a *rmstate.App, ok bool) {
		if !ok || a.Finished() || a.Attempt == nil || a.Attempt.ID != att || a.Attempt.Ended() {
			stale = true
			return
		}
		at := a.Attempt
		if at.Move(rmstate.AttemptFailed) != nil {
			stale = true
			return
		}
		at.Diagnostics, at.FinishTime, at.AMExitStatus = diagnostics, nowMs, exit
		if statestore.CountsAsFailure(exit) {
			a.Failures = append(a.Failures, nowMs)
		}
		if !a.Unmanaged && a.CountedFailures(nowMs) < a.MaxAttempts {
			if err := rm.NewAttemptLocked(a, now); err == nil && a.Move(rmstate.AppAttemptRetried) == nil {
				retry, next = true, a.Attempt.ID
				a.Diagnostics = diagnostics
				spec, amRes, amLabel = EngineSpec(a), a.AMResource, a.AMLabelExpr
			}
		}
		if !retry {
			failed = true
			_ = a.Move(rmstate.AppFailed) // not finished: checked above
			a.Final, a.FinishTime = yarnpb.FinalApplicationStatusProto_APP_FAILED, nowMs
			a.Diagnostics = fmt.Sprintf("Application %s failed %d times due to %s. Failing the application.", a.ID, a.MaxAttempts, diagnostics)
			appDiagnostics = a.Diagnostics
		}
	})
	if stale {
		return
	}

	rm.amrm.Revoke(att)
	rm.containers.CleanupContainers(att.App, func(cid records.ContainerID) bool { return cid.Attempt == att })
	rm.containers.ForgetAttempt(att)
	log := rm.log.WithFields(map[string]any{"application": att.App.String(), "attempt": att.String(), "exit_status": exit})
	if retry {
		// The new attempt starts from nothing: the engine forgets the old one's asks and
		// containers and is asked for a new AM container.
		rm.engine.RemoveApp(EngineID(att.App))
		if err := rm.AdmitToEngine(spec, amRes, amLabel, false); err != nil {
			log.WithError(err).Error("new attempt not scheduled")
		}
		rm.metrics.attemptFailed(true)
		log.WithField("next_attempt", next.String()).Warn("application attempt failed; starting a new attempt: " + diagnostics)
		return
	}
	if failed {
		rm.metrics.attemptFailed(false)
		rm.AppEnded(att.App, yarnpb.YarnApplicationStateProto_FAILED)
		log.Warn(appDiagnostics)
		rm.EndApp(att.App)
	}
}

// amExited handles the end of an AM container. After the AM unregistered that is the
// normal end of the application: its other containers are now cleaned up. Before, the
// attempt failed.
func (rm *Core) amExited(id records.ContainerID, st *yarnpb.ContainerStatusProto) {
	unregistered := false
	now := rm.opts.Now().UnixMilli()
	if !rm.apps.WithAttempt(id.Attempt, func(a *rmstate.App, at *rmstate.Attempt) {
		unregistered = at.Unregistered
		if unregistered && at.Move(rmstate.AttemptAMExited) == nil {
			at.FinishTime = now
		}
	}) {
		return
	}
	if unregistered {
		rm.EndApp(id.Attempt.App)
		return
	}
	rm.AttemptFailed(id.Attempt, fmt.Sprintf("AM Container for %s exited with  exitCode: %d\nDiagnostics: %s\nFailing this attempt",
		id.Attempt, st.GetExitStatus(), st.GetDiagnostics()), st.GetExitStatus())
}
