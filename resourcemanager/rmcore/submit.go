package rmcore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/conf/capacity"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/resourcemanager/tokenrenewer"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
)

// TimeoutTypeName is an application timeout type as Java names it.
func TimeoutTypeName(t yarnpb.ApplicationTimeoutTypeProto) string {
	if t == yarnpb.ApplicationTimeoutTypeProto_APP_TIMEOUT_LIFETIME {
		return "LIFETIME"
	}
	return t.String()
}

// Submit records an application for user (the RPC submission and the REST one) (protocol.md §4.1, §7.2). As in the Java
// RM, a bad queue does not fail the call: the application is FAILED with the reason in its
// diagnostics, which the client's report poll prints. A request beyond the maximum
// allocation fails the call with InvalidResourceRequestException, a queue ACL that does not
// admit the user with AccessControlException.
func (rm *Core) Submit(sc *yarnpb.ApplicationSubmissionContextProto, user string) error {
	if sc.GetApplicationId() == nil {
		return exceptions.Errorf(exceptions.ApplicationIDNotProvided, "ApplicationId is not provided in ApplicationSubmissionContext")
	}
	id := records.AppIDFromProto(sc.GetApplicationId())
	amRes := sc.GetResource()
	if rr := sc.GetAmContainerResourceRequest(); len(rr) > 0 && rr[0].GetCapability() != nil {
		amRes = rr[0].GetCapability()
	}
	set := rm.settings
	// The queue mappings place the submission (and a submission naming no queue goes to
	// "default"), as the Capacity Scheduler's placement does before it checks the queue.
	queue, mapped, err := rm.placeSubmission(user, sc.GetQueue())
	if err != nil {
		// As the 3.x RM fails the call (2.7 failed the application with the same words).
		return exceptions.Errorf(exceptions.YarnException, "Failed to submit application %s submitted by user %s reason: %v", id, user, err)
	}
	if mapped {
		rm.log.WithFields(map[string]any{"application": id.String(), "user": user, "requested_queue": sc.GetQueue(), "queue": queue}).Info("application placed by queue mapping")
	}
	if !sc.GetUnmanagedAm() {
		// The cluster's maximum, as the Java RM validates an AM's request (the queue's
		// maximum-allocation only reaches the AM, at registration).
		maxMB, maxVCores := int64(rm.settings.MaxAllocationMB), int64(rm.settings.MaxAllocationCore)
		if m := amRes.GetMemory(); m < 0 || m > maxMB {
			return exceptions.Errorf(exceptions.InvalidResourceRequest, "Invalid resource request, requested memory < 0, or requested memory > max configured, requestedMemory=%d, maxMemory=%d", m, maxMB)
		}
		if v := amRes.GetVirtualCores(); v < 0 || int64(v) > maxVCores {
			return exceptions.Errorf(exceptions.InvalidResourceRequest, "Invalid resource request, requested virtual cores < 0, or requested virtual cores > max configured, requestedVirtualCores=%d, maxVirtualCores=%d", v, maxVCores)
		}
		amReqs := sc.GetAmContainerResourceRequest()
		if len(amReqs) == 0 {
			amReqs = []*yarnpb.ResourceRequestProto{{ResourceName: proto.String("*")}}
		}
		if err := rm.CheckLabels(queue, amReqs, sc.NodeLabelExpression); err != nil {
			rm.log.WithFields(map[string]any{"application": id.String(), "user": user, "queue": queue}).WithError(err).Warn("application refused: its AM request's node label")
			return err
		}
	}
	if err := rm.submitACL(queue, id, user); err != nil {
		return err
	}
	now := rm.opts.Now().UnixMilli()
	maxAttempts := set.MaxAttempts
	if n := int(sc.GetMaxAppAttempts()); n >= 1 && n <= set.MaxAttempts {
		maxAttempts = n
	}
	var timeouts map[yarnpb.ApplicationTimeoutTypeProto]int64
	for _, t := range sc.GetApplicationTimeouts() {
		if t.GetTimeout() <= 0 {
			return exceptions.Errorf(exceptions.YarnException, "Invalid application timeout, value=%d for type=%s", t.GetTimeout(), TimeoutTypeName(t.GetApplicationTimeoutType()))
		}
		if timeouts == nil {
			timeouts = map[yarnpb.ApplicationTimeoutTypeProto]int64{}
		}
		timeouts[t.GetApplicationTimeoutType()] = now + t.GetTimeout()*1000
	}
	// The queue's lifetime bounds (3.x): capped by its maximum, or its default when none
	// was asked for.
	if q, ok := rm.Queues().Queue(queue); ok && q.IsLeaf() {
		asked := int64(0)
		if at, ok := timeouts[yarnpb.ApplicationTimeoutTypeProto_APP_TIMEOUT_LIFETIME]; ok {
			asked = (at - now) / 1000
		}
		if got := q.Lifetime(asked); got > 0 && got != asked {
			if timeouts == nil {
				timeouts = map[yarnpb.ApplicationTimeoutTypeProto]int64{}
			}
			timeouts[yarnpb.ApplicationTimeoutTypeProto_APP_TIMEOUT_LIFETIME] = now + got*1000
		}
	}
	runtime, err := rmstate.DeclaredRuntime(sc.GetApplicationTags(), timeouts[yarnpb.ApplicationTimeoutTypeProto_APP_TIMEOUT_LIFETIME]-now)
	if err != nil {
		return exceptions.Errorf(exceptions.YarnException, "%v", err)
	}
	if _, err := rmstate.GangRequested(sc.GetApplicationTags()); err != nil {
		return exceptions.Errorf(exceptions.YarnException, "%v", err)
	}
	a := &rmstate.App{ID: id, User: user, Queue: queue, Name: sc.GetApplicationName(), AppType: sc.GetApplicationType(), Runtime: runtime,
		Tags: sc.GetApplicationTags(), Priority: rm.ClampPriority(rm.submittedPriority(sc, queue)), AMResource: amRes, MaxAttempts: maxAttempts, Timeouts: timeouts,
		SubmitTime: now, StartTime: now, Diagnostics: "", Unmanaged: sc.GetUnmanagedAm(),
		LabelExpr: sc.NodeLabelExpression, AMLabelExpr: amLabelExpression(sc),
		FailuresValidity: sc.GetAttemptFailuresValidityInterval()}
	a.KeepTokens = !sc.GetCancelTokensWhenComplete()
	reason := rm.admission(a)
	if reason == "" {
		// On a secure cluster the submitted delegation tokens are renewed now: one that
		// cannot be renewed rejects the application, as in the Java RM.
		if err := rm.trackTokens(context.Background(), id, user, sc); err != nil {
			var renew *tokenrenewer.RenewError
			if !errors.As(err, &renew) {
				return exceptions.Errorf(exceptions.YarnException, "%v", err) // unreadable credentials fail the call
			}
			reason = err.Error()
		}
	}
	if reason != "" {
		if err := a.Move(rmstate.AppRejected); err != nil {
			return err
		}
		a.Final, a.FinishTime, a.Diagnostics = yarnpb.FinalApplicationStatusProto_APP_FAILED, now, reason
	} else {
		if err := a.Move(rmstate.AppAccepted); err != nil {
			return err
		}
		// The first attempt and its AMRMToken exist at once: an unmanaged AM's client takes
		// the token from the report; a managed AM gets it in its container's credentials.
		if err := rm.NewAttemptLocked(a, time.UnixMilli(now)); err != nil {
			return err
		}
		a.AMSpec = sc.GetAmContainerSpec()
	}
	log := rm.log.WithFields(map[string]any{"application": id.String(), "user": a.User, "queue": a.Queue})
	att := a.Attempt // Submit drops it when a limit rejects the application
	added, rejected, err := rm.apps.Submit(a, rm.submissionLimits(a))
	if (rejected != "" || err != nil) && att != nil {
		rm.amrm.Revoke(att.ID) // the attempt made for it never runs
	}
	if err != nil {
		if rm.tokens != nil {
			rm.tokens.Forget(id.String())
		}
		log.WithError(err).Error("application not recorded in the state store; refused")
		// err names the application and the store already.
		return exceptions.Errorf(exceptions.YarnException, "the ResourceManager could not record the submission: %v", err)
	}
	if !added {
		log.Info("application submitted again; keeping the first submission")
		return nil
	}
	if rejected == "" {
		rm.containers.SetQueue(id, a.Queue)
	}
	rm.metrics.AppSubmitted(a.Queue)
	if a.State() == yarnpb.YarnApplicationStateProto_FAILED {
		log.WithField("diagnostics", a.Diagnostics).Warn("application rejected")
		rm.metrics.AppEnded(a.Queue, a.State())
		rm.EndApp(id)
		return nil
	}
	if err := rm.AdmitToEngine(EngineSpec(a), amRes, a.AMLabelExpr, a.Unmanaged); err != nil {
		log.WithError(err).Warn("application not scheduled")
	}
	log.Info("application accepted")
	return nil
}

// submittedPriority is the application's priority as submitted, or, when it names none,
// its queue's default-application-priority (3.x; 0 without it), as the Capacity Scheduler
// decides it before clamping to the cluster's maximum.
func (rm *Core) submittedPriority(sc *yarnpb.ApplicationSubmissionContextProto, queue string) int32 {
	if sc.Priority != nil {
		return sc.GetPriority().GetPriority()
	}
	if q, ok := rm.Queues().Queue(queue); ok {
		return q.DefaultApplicationPriority
	}
	return 0
}

// submissionLimits are the Capacity Scheduler's limits on unfinished applications, as
// the Java RM checks them when it adds an application: the system's
// (yarn.scheduler.capacity.maximum-applications; a 3.x check), then the leaf queue's
// maximum-applications and its per-user share of them. The queue's come back as the
// Java RM's AccessControlException, in the diagnostics a client prints.
func (rm *Core) submissionLimits(a *rmstate.App) func(total, inQueue, byUser int) string {
	tree := rm.Queues()
	q, ok := tree.Queue(a.Queue)
	if !ok || !q.IsLeaf() {
		return nil
	}
	return func(total, inQueue, byUser int) string {
		const ace = "org.apache.hadoop.security.AccessControlException: "
		switch {
		case total >= tree.MaximumSystemApplications:
			return fmt.Sprintf("Maximum system application limit reached,cannot accept submission of application: %s", a.ID)
		case inQueue >= q.MaximumApplications:
			return fmt.Sprintf("%sQueue %s already has %d applications, cannot accept submission of application: %s", ace, q.Path, inQueue, a.ID)
		case byUser >= q.MaximumApplicationsPerUser():
			return fmt.Sprintf("%sQueue %s already has %d applications from user %s cannot accept submission of application: %s", ace, q.Path, byUser, a.User, a.ID)
		}
		return ""
	}
}

// amLabelExpression is the AM container's node-label expression as the Java RM records
// it: the AM request's, else the application's; nil when neither is set.
func amLabelExpression(sc *yarnpb.ApplicationSubmissionContextProto) *string {
	if rr := sc.GetAmContainerResourceRequest(); len(rr) > 0 && rr[0].NodeLabelExpression != nil {
		return rr[0].NodeLabelExpression
	}
	return sc.NodeLabelExpression
}

// admission checks the queue the way the Capacity Scheduler does and returns why the
// application is rejected ("" when it is accepted).
func (rm *Core) admission(a *rmstate.App) string {
	q, ok := rm.Queues().Queue(a.Queue)
	switch {
	case !ok:
		return fmt.Sprintf("Application %s submitted by user %s to unknown queue: %s", a.ID, a.User, a.Queue)
	case !q.IsLeaf():
		return fmt.Sprintf("Application %s submitted by user %s to non-leaf queue: %s", a.ID, a.User, a.Queue)
	case q.State == capacity.Stopped:
		// The Java RM's LeafQueue throws it; its diagnostics carry the exception.
		return fmt.Sprintf("org.apache.hadoop.security.AccessControlException: Queue %s is STOPPED. Cannot accept submission of application: %s", q.Path, a.ID)
	}
	a.Queue = q.Name
	return ""
}

// submitACL refuses a submission the queue's ACLs do not admit, as the Java 3.x RM does:
// the call fails with AccessControlException (the 2.7 RM failed the application instead;
// a client prints the same sentence either way, but only the exception stops a job client
// before it waits for a report).
func (rm *Core) submitACL(queue string, id records.ApplicationID, user string) error {
	if !rm.settings.ACLEnabled {
		return nil
	}
	q, ok := rm.Queues().Queue(queue)
	if !ok || !q.IsLeaf() {
		return nil // admission fails the application with the Java RM's queue diagnostics
	}
	groups := rm.UserGroups(user)
	if !HasAccess(q, func(q *capacity.Queue) capacity.ACL { return q.SubmitACL }, user, groups) &&
		!HasAccess(q, func(q *capacity.Queue) capacity.ACL { return q.AdministerACL }, user, groups) {
		return exceptions.Errorf(exceptions.AccessControl, "User %s does not have permission to submit %s to queue %s", user, id, queue)
	}
	return nil
}

// HasAccess applies the Capacity Scheduler rule: a queue's ACL or any ancestor's admits.
func HasAccess(q *capacity.Queue, acl func(*capacity.Queue) capacity.ACL, u string, groups []string) bool {
	for ; q != nil; q = q.Parent {
		if acl(q).Allows(u, groups) {
			return true
		}
	}
	return false
}
