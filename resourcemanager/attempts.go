package resourcemanager

import (
	"fmt"
	"time"

	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

// Attempt life (protocol.md §7.3): an application gets attempt 1 at submission. When
// the attempt's AM ends without unregistering — its container exits, it stops
// heartbeating, its launch fails — the attempt FAILS; a managed application then gets a
// new attempt (new id, new AMRMToken, new AM container) while its counted failures stay
// below max-attempts, and is FAILED otherwise. AM containers that end because the
// cluster took them (preempted, aborted, disks failed, killed by the RM) do not count, and
// with a failures-validity interval only the failures inside it do.

// countsAsFailure reports whether an AM container's exit status counts toward
// max-attempts, as RMAppAttemptImpl.shouldCountTowardsMaxAttemptRetry decides.
func countsAsFailure(exit int32) bool {
	switch exit {
	case exitcode.Aborted, exitcode.Preempted, exitcode.DisksFailed, exitcode.KilledByResourceManager:
		return false
	}
	return true
}

// newAttemptLocked starts the next attempt of a; the registry lock is held.
func (rm *ResourceManager) newAttemptLocked(a *rmstate.App, now time.Time) error {
	att := a.Id.Attempt(int32(len(a.Attempts) + 1))
	tok, err := rm.amrm.Issue(att)
	if err != nil {
		return fmt.Errorf("AMRMToken for %s: %w", att, err)
	}
	at := &rmstate.Attempt{Id: att, Token: tok, State: yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_SCHEDULED, StartTime: now.UnixMilli()}
	if a.Unmanaged {
		// The client runs an unmanaged AM: it is launched as soon as it exists, and its
		// liveness clock starts now.
		at.State, at.Launched, at.LastPing = yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_LAUNCHED, true, now
	}
	a.Attempt = at
	a.Attempts = append(a.Attempts, at)
	return nil
}

// admitToEngine enters an application in the scheduling engine and, for a managed AM,
// asks for its AM container.
func (rm *ResourceManager) admitToEngine(spec scheduler.AppSpec, amResource *yarnpb.ResourceProto, unmanaged bool) error {
	if err := rm.engine.AddApp(spec); err != nil {
		return fmt.Errorf("scheduler refused application %s: %w", spec.ID, err)
	}
	if unmanaged {
		return nil
	}
	am := rm.asksFrom([]*yarnpb.ResourceRequestProto{{Priority: &yarnpb.PriorityProto{Priority: proto.Int32(0)},
		ResourceName: proto.String("*"), Capability: amResource, NumContainers: proto.Int32(1), RelaxLocality: proto.Bool(true)}})
	am[0].AM = true
	if err := rm.engine.UpdateAsks(spec.ID, am); err != nil {
		return fmt.Errorf("AM container of %s not requested: %w", spec.ID, err)
	}
	rm.kickScheduler()
	return nil
}

func engineSpec(a *rmstate.App) scheduler.AppSpec {
	return scheduler.AppSpec{ID: a.Id.String(), Queue: a.Queue, User: a.User, Priority: a.Priority, Submit: time.UnixMilli(a.SubmitTime), Runtime: a.Runtime}
}

// attemptFailed ends the current attempt att as FAILED and either starts the next
// attempt or fails the application. exit is the AM container's exit status
// (exitcode.Invalid when there is none), which decides whether the failure counts.
func (rm *ResourceManager) attemptFailed(att records.AttemptID, diagnostics string, exit int32) {
	now := rm.opts.Now()
	nowMs := now.UnixMilli()
	var retry, failed bool
	var spec scheduler.AppSpec
	var amRes *yarnpb.ResourceProto
	var next records.AttemptID
	var appDiagnostics string
	stale := false
	rm.apps.With(att.App, func(a *rmstate.App, ok bool) {
		if !ok || a.Finished() || a.Attempt == nil || a.Attempt.Id != att || a.Attempt.Ended() {
			stale = true
			return
		}
		at := a.Attempt
		at.State, at.Diagnostics, at.FinishTime = yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FAILED, diagnostics, nowMs
		if countsAsFailure(exit) {
			a.Failures = append(a.Failures, nowMs)
		}
		if !a.Unmanaged && a.CountedFailures(nowMs) < a.MaxAttempts {
			if err := rm.newAttemptLocked(a, now); err == nil {
				retry, next = true, a.Attempt.Id
				a.State, a.Diagnostics = yarnpb.YarnApplicationStateProto_ACCEPTED, diagnostics
				spec, amRes = engineSpec(a), a.AmResource
			}
		}
		if !retry {
			failed = true
			a.State, a.Final, a.FinishTime = yarnpb.YarnApplicationStateProto_FAILED, yarnpb.FinalApplicationStatusProto_APP_FAILED, nowMs
			a.Diagnostics = fmt.Sprintf("Application %s failed %d times due to %s. Failing the application.", a.Id, a.MaxAttempts, diagnostics)
			appDiagnostics = a.Diagnostics
		}
	})
	if stale {
		return
	}

	rm.amrm.Revoke(att)
	rm.containers.CleanupContainers(func(cid records.ContainerID) bool { return cid.Attempt == att })
	rm.containers.ForgetAttempt(att)
	log := rm.log.WithFields(map[string]any{"application": att.App.String(), "attempt": att.String(), "exit_status": exit})
	if retry {
		// The new attempt starts from nothing: the engine forgets the old one's asks and
		// containers and is asked for a new AM container.
		rm.engine.RemoveApp(att.App.String())
		if err := rm.admitToEngine(spec, amRes, false); err != nil {
			log.WithError(err).Error("new attempt not scheduled")
		}
		rm.metrics.attemptFailed(true)
		log.WithField("next_attempt", next.String()).Warn("application attempt failed; starting a new attempt: " + diagnostics)
		return
	}
	if failed {
		rm.metrics.attemptFailed(false)
		rm.metrics.appEnded(yarnpb.YarnApplicationStateProto_FAILED)
		log.Warn(appDiagnostics)
		rm.endApp(att.App)
	}
}

// amExited handles the end of an AM container. After the AM unregistered that is the
// normal end of the application: its other containers are now cleaned up. Before, the
// attempt failed.
func (rm *ResourceManager) amExited(id records.ContainerID, st *yarnpb.ContainerStatusProto) {
	unregistered := false
	now := rm.opts.Now().UnixMilli()
	if !rm.apps.WithAttempt(id.Attempt, func(a *rmstate.App, at *rmstate.Attempt) {
		unregistered = at.Unregistered
		if unregistered && !at.Ended() {
			at.State, at.FinishTime = yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FINISHED, now
		}
	}) {
		return
	}
	if unregistered {
		rm.endApp(id.Attempt.App)
		return
	}
	rm.attemptFailed(id.Attempt, fmt.Sprintf("AM Container for %s exited with  exitCode: %d\nDiagnostics: %s\nFailing this attempt",
		id.Attempt, st.GetExitStatus(), st.GetDiagnostics()), st.GetExitStatus())
}

// monitorTick is how often the liveness monitor looks: a tenth of the shortest expiry,
// between 10 ms and 1 s.
func (s Settings) monitorTick() time.Duration {
	tick := min(s.NMExpiry, s.AMExpiry, s.AllocationExpiry) / 10
	return min(max(tick, 10*time.Millisecond), time.Second)
}

// expireAttempts fails the attempts whose AM has been silent longer than
// yarn.am.liveness-monitor.expiry-interval-ms, and ends applications whose AM
// unregistered but whose AM container has not exited within that time.
func (rm *ResourceManager) expireAttempts(now time.Time) {
	type expired struct {
		att          records.AttemptID
		unregistered bool
	}
	var out []expired
	rm.apps.Each(func(a *rmstate.App) {
		at := a.Attempt
		if at == nil || at.Ended() || at.LastPing.IsZero() || now.Sub(at.LastPing) <= rm.settings.AMExpiry {
			return
		}
		if at.Unregistered {
			if !a.Unmanaged {
				out = append(out, expired{at.Id, true})
			}
			return
		}
		if !a.Finished() {
			out = append(out, expired{at.Id, false})
		}
	})
	for _, e := range out {
		if e.unregistered {
			rm.log.WithFields(map[string]any{"application": e.att.App.String(), "attempt": e.att.String()}).Warn("AM container did not exit after unregistering; killing it")
			rm.apps.WithAttempt(e.att, func(a *rmstate.App, at *rmstate.Attempt) {
				at.State, at.FinishTime = yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FINISHED, now.UnixMilli()
			})
			rm.endApp(e.att.App)
			continue
		}
		rm.attemptFailed(e.att, fmt.Sprintf("ApplicationMaster for attempt %s timed out", e.att), exitcode.Invalid)
	}
}

// expireAllocations takes back containers handed to an AM that their NodeManager has not
// reported within yarn.resourcemanager.rm.container-allocation.expiry-interval-ms.
func (rm *ResourceManager) expireAllocations(now time.Time) {
	t := rm.containers
	due := t.UnstartedSince(now.Add(-rm.settings.AllocationExpiry))
	for _, c := range due {
		c2, final, fresh := t.Complete(c.Id, &yarnpb.ContainerStatusProto{ContainerId: c.Id.Proto(), State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(),
			ExitStatus: proto.Int32(exitcode.Aborted), Diagnostics: proto.String("Container expired since it was unused")})
		if !fresh {
			continue
		}
		rm.engine.Release(c2.EngineID)
		t.KillOnNode(c2.Node(), c2.Id.Proto())
		rm.metrics.containerExpired()
		rm.log.WithFields(map[string]any{"container": c2.Id.String(), "node": c2.Node(), "attempt": c2.Id.Attempt.String()}).Warn("container expired since it was unused")
		if c2.Am {
			rm.amExited(c2.Id, final)
		}
		rm.kickScheduler()
	}
}
