package rmcore

import (
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
)

// Placement constraints (SchedulingRequests, 3.x) are not served: Bobbin's engine places
// ResourceRequests only. An AM that sends them is refused at once, with the Java RM's
// words for a cluster that cannot serve them, so that the application fails within a
// heartbeat instead of waiting for containers that never come:
//   - handler "disabled" (the default): DisabledPlacementProcessor, which refuses the
//     constraints at registration and the SchedulingRequests in allocate;
//   - handler "scheduler" or "placement-processor": SchedulerPlacementProcessor's answer
//     for a scheduler that cannot handle constraints (the Java RM's Fair Scheduler), in
//     allocate; the registration's constraints are taken, as there.
// The whole allocate call fails, its ResourceRequests too, and its response id does not
// advance, as in Java.

// KeyPlacementHandler selects who handles placement constraints in the Java RM.
const KeyPlacementHandler = "yarn.resourcemanager.placement-constraints.handler"

// placementDisabled reports whether the handler is the Java default, "disabled".
func (rm *Core) placementDisabled() bool {
	h := rm.settings.PlacementHandler
	return h == "" || h == "disabled"
}

// CheckRegisterConstraints refuses an AM's registration that carries placement
// constraints when the handler is disabled.
func (rm *Core) CheckRegisterConstraints(att records.AttemptID, constraints int) error {
	if constraints == 0 || !rm.placementDisabled() {
		return nil
	}
	rm.log.WithField("attempt", att.String()).Warn("registration with placement constraints refused: " + KeyPlacementHandler + " is disabled")
	return exceptions.Errorf(exceptions.YarnException, "Found non empty placement constraints map in RegisterApplicationMasterRequest for application=%s, but the configured %s cannot handle placement constraints. Rejecting this registerApplicationMaster operation", att, KeyPlacementHandler)
}

// CheckSchedulingRequests refuses an allocate call that carries SchedulingRequests.
func (rm *Core) CheckSchedulingRequests(att records.AttemptID, requests int) error {
	if requests == 0 {
		return nil
	}
	rm.log.WithFields(map[string]any{"attempt": att.String(), "handler": rm.settings.PlacementHandler}).Warn("allocate with SchedulingRequests refused: placement constraints are not served")
	if rm.placementDisabled() {
		return exceptions.Errorf(exceptions.YarnException, "Found non empty SchedulingRequest in AllocateRequest for application=%s, but the configured %s cannot handle placement constraints. Rejecting this allocate operation", att, KeyPlacementHandler)
	}
	return exceptions.Errorf(exceptions.YarnException, "Found non empty SchedulingRequest of AllocateRequest for application=%s, however the configured scheduler=%s cannot handle placement constraints, rejecting this allocate operation (Bobbin's scheduler does not serve placement constraints)", att, rm.settings.SchedulerClass)
}
