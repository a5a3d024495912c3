package rmcore

import (
	"fmt"

	"github.com/bobbin-yarn/bobbin/conf/capacity"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

// KillApp kills an application for user (the RPC kill and the REST state change): found
// is false when the RM does not know it. diagnostics say who killed it.
func (rm *Core) KillApp(id records.ApplicationID, user, diagnostics string) (found bool) {
	killed, found := rm.apps.Kill(id, rm.opts.Now().UnixMilli(), diagnostics)
	if !found {
		return false
	}
	if killed {
		rm.AppEnded(id, yarnpb.YarnApplicationStateProto_KILLED)
	}
	rm.EndApp(id)
	rm.log.WithFields(map[string]any{"application": id.String(), "user": user}).Info("application killed")
	return true
}

// MayModifyApp applies yarn.acl.enable to changing an application (kill, move, priority,
// timeouts, signals, failing an attempt).
func (rm *Core) MayModifyApp(who string, id records.ApplicationID) bool {
	return rm.MayAccessApp(who, id, yarnpb.ApplicationAccessTypeProto_APPACCESS_MODIFY_APP)
}

// MayViewApp applies yarn.acl.enable to seeing an application's details (its report's
// host, URLs, diagnostics and usage; its attempts and containers).
func (rm *Core) MayViewApp(who string, id records.ApplicationID) bool {
	return rm.MayAccessApp(who, id, yarnpb.ApplicationAccessTypeProto_APPACCESS_VIEW_APP)
}

// MayAccessApp is the Java RM's check: without ACLs everyone may; with them the
// application's owner, an administrator (yarn.admin.acl), a user its submission's ACL for
// that access type admits, or an administrator of its queue (or an ancestor) may.
func (rm *Core) MayAccessApp(who string, id records.ApplicationID, access yarnpb.ApplicationAccessTypeProto) bool {
	if !rm.settings.ACLEnabled {
		return true
	}
	owner, queue, acls, ok := rm.apps.AccessOf(id)
	if !ok {
		return false
	}
	var named []string
	if acl, ok := acls[access]; ok {
		named = []string{acl}
	}
	if rm.MayViewLogsOf(who, owner, named) {
		return true
	}
	q, ok := rm.Queues().Queue(queue)
	return ok && HasAccess(q, func(q *capacity.Queue) capacity.ACL { return q.AdministerACL }, who, rm.UserGroups(who))
}

// MayViewLogsOf is the owner, administrator and ACL part of MayAccessApp, which decides
// alone for an application the RM no longer knows (its aggregated logs outlive it) from
// the owner and VIEW_APP ACLs its aggregated file records, as the Java log servlets do.
func (rm *Core) MayViewLogsOf(who, owner string, acls []string) bool {
	if !rm.settings.ACLEnabled || who == owner {
		return true
	}
	groups := rm.UserGroups(who)
	if rm.opts.Security.Admins().Allows(who, groups) {
		return true
	}
	for _, acl := range acls {
		if capacity.ParseACL(acl).Allows(who, groups) {
			return true
		}
	}
	return false
}

// MoveApp moves an application to another leaf queue (moveApplicationAcrossQueues and
// the REST queue change), with the Java RM's refusals.
func (rm *Core) MoveApp(id records.ApplicationID, queue, user string) error {
	q, ok := rm.Queues().Queue(queue)
	if !ok || !q.IsLeaf() {
		return exceptions.Errorf(exceptions.YarnException, "Move to queue: %s failed: queue does not exist or is not a leaf queue", queue)
	}
	if q.State == capacity.Stopped {
		return exceptions.Errorf(exceptions.YarnException, "Move to queue: %s failed: queue is STOPPED", q.Name)
	}
	found, finished := rm.apps.Move(id, q.Name)
	if !found {
		return exceptions.Errorf(exceptions.ApplicationNotFound, "Application with id '%s' doesn't exist in RM.", id)
	}
	if finished {
		return exceptions.Errorf(exceptions.YarnException, "App in FINISHED state cannot be moved.")
	}
	rm.metrics.movedIn(q.Name, rm.containers.MoveQueue(id, q.Name))
	rm.log.WithFields(map[string]any{"application": id.String(), "queue": q.Name, "user": user}).Info("application moved")
	return nil
}

// SetAppPriority changes a running application's priority (clamped to the cluster's
// maximum) and returns the priority it has; false when the RM does not know it.
func (rm *Core) SetAppPriority(id records.ApplicationID, priority int32, user string) (int32, bool) {
	want := rm.ClampPriority(priority)
	var got int32
	var changed, ok bool
	rm.apps.With(id, func(a *rmstate.App, found bool) {
		ok = found
		if found {
			if !a.Finished() {
				a.Priority, changed = want, true
			}
			got = a.Priority
		}
	})
	if changed {
		if err := rm.engine.SetAppPriority(EngineID(id), got); err != nil {
			rm.log.WithError(err).WithField("application", id.String()).Debug("priority not passed to the scheduler")
		}
		rm.log.WithFields(map[string]any{"application": id.String(), "priority": got, "user": user}).Info("application priority updated")
	}
	return got, ok
}

// AppEnded counts application id's end in state, in its queue's figures too.
func (rm *Core) AppEnded(id records.ApplicationID, state yarnpb.YarnApplicationStateProto) {
	queue := ""
	rm.apps.View(id, func(a *rmstate.App) { queue = a.Queue })
	rm.metrics.AppEnded(queue, state)
}

// UpdateTimeouts sets an application's timeouts (absolute expiry times, ms) for user; the
// lifetime monitor kills the application when one passes.
func (rm *Core) UpdateTimeouts(id records.ApplicationID, expiries map[yarnpb.ApplicationTimeoutTypeProto]int64, user string) error {
	var err error
	rm.apps.With(id, func(a *rmstate.App, ok bool) {
		switch {
		case !ok:
			err = exceptions.Errorf(exceptions.ApplicationNotFound, "Trying to update timeout of an absent application %s", id)
		case a.Finished():
			err = exceptions.Errorf(exceptions.YarnException, "Application is in the final state %s. Can not update timeout.", a.State().String())
		default:
			if a.Timeouts == nil {
				a.Timeouts = map[yarnpb.ApplicationTimeoutTypeProto]int64{}
			}
			for k, v := range expiries {
				a.Timeouts[k] = v
			}
		}
	})
	if err == nil {
		rm.log.WithFields(map[string]any{"application": id.String(), "user": user, "timeouts": len(expiries)}).Info("application timeouts updated")
	}
	return err
}

// FailAttempt fails an application's current attempt for user as if its AM had failed
// (`yarn applicationattempt -fail`): the failure counts, and a new attempt starts while
// attempts remain. An attempt of an application that already ended is left as it is.
func (rm *Core) FailAttempt(att records.AttemptID, user string) error {
	var err error
	var current, finished bool
	rm.apps.With(att.App, func(a *rmstate.App, ok bool) {
		if !ok {
			err = exceptions.Errorf(exceptions.ApplicationNotFound, "Trying to fail an attempt %s of an absent application %s", att, att.App)
			return
		}
		known := false
		for _, at := range a.Attempts {
			known = known || at.ID == att
		}
		if !known {
			err = exceptions.Errorf(exceptions.ApplicationAttemptNotFound, "ApplicationAttempt with id '%s' doesn't exist in RM.", att)
		}
		finished = a.Finished()
		current = a.Attempt != nil && a.Attempt.ID == att && !a.Attempt.Ended()
	})
	switch {
	case err != nil:
		return err
	case finished:
		return nil
	case !current:
		return exceptions.Errorf(exceptions.YarnException, "Only the current attempt can be failed: %s is not the current attempt of %s", att, att.App)
	}
	rm.log.WithFields(map[string]any{"application": att.App.String(), "attempt": att.String(), "user": user}).Info("application attempt failed by user")
	rm.AttemptFailed(att, fmt.Sprintf("Attempt failed by user: %s", user), exitcode.Invalid)
	return nil
}

// SignalContainer queues a signal for a container's NodeManager, sent on its next
// heartbeat (`yarn container -signal`).
func (rm *Core) SignalContainer(id records.ContainerID, cmd yarnpb.SignalContainerCommandProto, user string) error {
	node, ok := rm.containers.Signal(id, cmd)
	if !ok {
		return exceptions.Errorf(exceptions.ContainerNotFound, "Container %s is not found in RM.", id)
	}
	rm.log.WithFields(map[string]any{"container": id.String(), "node": node, "signal": cmd.String(), "user": user}).Info("container signal queued for its NodeManager")
	return nil
}

// NewAppID is a new application's id for user (getNewApplication, REST's new-application).
func (rm *Core) NewAppID(user, via string) records.ApplicationID {
	id := rm.apps.NewID()
	rm.log.WithFields(map[string]any{"application": id.String(), "user": user, "via": via}).Info("allocated new application id")
	return id
}
