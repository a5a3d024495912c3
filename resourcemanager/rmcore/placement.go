package rmcore

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/conf/fairscheduler"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
)

// Placement constraints (3.x SchedulingRequests, `-placement_spec` of the distributed
// shell). yarn.resourcemanager.placement-constraints.handler says who serves them:
//   - "disabled" (the Java default): nobody. DisabledPlacementProcessor's refusals: an AM
//     registering constraints, an allocate carrying SchedulingRequests.
//   - "scheduler" or "placement-processor": under the Capacity Scheduler, Bobbin's engine
//     places them (scheduler/constraints.go), as the Java 3.4 Capacity Scheduler does
//     with "scheduler": affinity, anti-affinity and cardinality on allocation tags at node
//     or rack scope, AND and OR, the node partition as a target, the constraints the AM
//     registered for its tags added to each request's. Java 3.1's scheduler handler took
//     NOTIN on a node only; its placement-processor took the rest, rejecting what it
//     could not place after retries, where Bobbin keeps the request pending as 3.4's
//     scheduler does. Under the Fair Scheduler the Java RM's refusal for a scheduler
//     that cannot handle constraints.
// Node attributes (3.2+) are not served (rmservice/nodeattributes.go): a constraint on
// one is refused by name, as are the app-tag namespace and DELAYED_OR.

// KeyPlacementHandler selects who handles placement constraints in the Java RM.
const KeyPlacementHandler = "yarn.resourcemanager.placement-constraints.handler"

// placementDisabled reports whether the handler is the Java default, "disabled".
func (rm *Core) placementDisabled() bool {
	h := rm.settings.PlacementHandler
	return h == "" || h == "disabled"
}

// nodePartitionKey is the node-attribute target key that names the node's partition.
const nodePartitionKey = "yarn_node_partition/"

// RegisterConstraints checks and converts the constraints an AM registers, by source
// tag. Refused when the handler is disabled; an entry the Java RM would pass over (no
// tag, or several: MemoryPlacementConstraintManager takes one source tag) is passed over.
func (rm *Core) RegisterConstraints(att records.AttemptID, entries []*yarnpb.PlacementConstraintMapEntryProto) (map[string]*scheduler.Constraint, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	if rm.placementDisabled() {
		rm.log.WithField("attempt", att.String()).Warn("registration with placement constraints refused: " + KeyPlacementHandler + " is disabled")
		return nil, exceptions.Errorf(exceptions.YarnException, "Found non empty placement constraints map in RegisterApplicationMasterRequest for application=%s, but the configured %s cannot handle placement constraints. Rejecting this registerApplicationMaster operation", att, KeyPlacementHandler)
	}
	out := map[string]*scheduler.Constraint{}
	for _, e := range entries {
		if len(e.GetAllocationTags()) != 1 || e.GetPlacementConstraint() == nil {
			rm.log.WithFields(map[string]any{"attempt": att.String(), "tags": e.GetAllocationTags()}).Warn("registered placement constraint passed over: only a single source tag can be associated with one")
			continue
		}
		c, err := rm.constraintFrom(e.GetPlacementConstraint())
		if err != nil {
			return nil, exceptions.Errorf(exceptions.YarnException, "placement constraint registered for tag %q by %s: %v", e.GetAllocationTags()[0], att, err)
		}
		out[e.GetAllocationTags()[0]] = c
	}
	return out, nil
}

// checkSchedulingServed refuses SchedulingRequests where nobody serves them.
func (rm *Core) checkSchedulingServed(att records.AttemptID) error {
	if rm.placementDisabled() {
		rm.log.WithField("attempt", att.String()).Warn("allocate with SchedulingRequests refused: " + KeyPlacementHandler + " is disabled")
		return exceptions.Errorf(exceptions.YarnException, "Found non empty SchedulingRequest in AllocateRequest for application=%s, but the configured %s cannot handle placement constraints. Rejecting this allocate operation", att, KeyPlacementHandler)
	}
	if rm.settings.SchedulerClass == fairscheduler.Class {
		rm.log.WithField("attempt", att.String()).Warn("allocate with SchedulingRequests refused: the Fair Scheduler does not handle placement constraints")
		return exceptions.Errorf(exceptions.YarnException, "Found non empty SchedulingRequest of AllocateRequest for application=%s, however the configured scheduler=%s cannot handle placement constraints, rejecting this allocate operation", att, rm.settings.SchedulerClass)
	}
	return nil
}

// schedulingKey keys an attempt's SchedulingRequests, as the Java RM's
// SchedulerRequestKey: (priority, allocation request id).
type schedulingKey = rmstate.SchedulingKey

// SchedulingAsks checks an allocate call's SchedulingRequests and converts them to the
// engine's asks. The checks and their words are the Java RM's
// (SingleConstraintAppPlacementAllocator, raised as SchedulerInvalidResoureRequestException
// inside a YarnException): a sizing, GUARANTEED execution, a count of at least 0, and,
// for a request already pending, nothing but its count changed. commit records the
// requests as pending; the caller runs it once the engine has taken the asks, so that a
// call failing later leaves the record as it was.
func (rm *Core) SchedulingAsks(att records.AttemptID, reqs []*yarnpb.SchedulingRequestProto) (asks []scheduler.Ask, commit func(), err error) {
	if len(reqs) == 0 {
		return nil, func() {}, nil
	}
	if err := rm.checkSchedulingServed(att); err != nil {
		return nil, nil, err
	}
	invalid := func(r *yarnpb.SchedulingRequestProto, format string, args ...any) error {
		rm.log.WithFields(map[string]any{"attempt": att.String(), "allocation_request_id": r.GetAllocationRequestId()}).Warn("SchedulingRequest refused: " + fmt.Sprintf(format, args...))
		return exceptions.Errorf(exceptions.YarnException, "org.apache.hadoop.yarn.exceptions.SchedulerInvalidResoureRequestException: AppId=%s Key=SchedulerRequestKey{priority=%d, allocationRequestId=%d}. Exception message: %s",
			att.App, r.GetPriority().GetPriority(), r.GetAllocationRequestId(), fmt.Sprintf(format, args...))
	}
	var registered map[string]*scheduler.Constraint
	var queue string
	rm.apps.WithAttempt(att, func(a *rmstate.App, at *rmstate.Attempt) { registered, queue = at.Constraints, a.Queue })
	maxMB, maxVCores := int64(rm.settings.MaxAllocationMB), int64(rm.settings.MaxAllocationCore)
	out := make([]scheduler.Ask, 0, len(reqs))
	bares := make(map[schedulingKey]*yarnpb.SchedulingRequestProto, len(reqs))
	for _, r := range reqs {
		sizing := r.GetResourceSizing()
		switch {
		case sizing == nil:
			return nil, nil, invalid(r, "No ResourceSizing found in the scheduling request, please double check")
		case sizing.GetNumAllocations() < 0:
			return nil, nil, invalid(r, "numAllocation in ResourceSizing field must be >= 0, updating schedulingRequest failed.")
		case r.GetExecutionType() != nil && r.GetExecutionType().GetExecutionType() != yarnpb.ExecutionTypeProto_GUARANTEED:
			return nil, nil, invalid(r, "Only GUARANTEED execution type is supported.")
		}
		capability := sizing.GetResources()
		if capability.GetMemory() > maxMB || int64(capability.GetVirtualCores()) > maxVCores || capability.GetMemory() < 0 || capability.GetVirtualCores() < 0 {
			return nil, nil, exceptions.Errorf(exceptions.InvalidResourceRequest, "Invalid resource request, requested memory < 0, or requested memory > max configured, requestedMemory=%d, maxMemory=%d", capability.GetMemory(), maxMB)
		}
		if err := rm.CheckExtraTypes(capability); err != nil {
			return nil, nil, err
		}
		tags := slices.Compact(slices.Sorted(slices.Values(r.GetAllocationTags())))
		c, err := rm.constraintFrom(r.GetPlacementConstraint())
		if err != nil {
			return nil, nil, invalid(r, "%v", err)
		}
		// The constraint registered for the request's (single) source tag applies too
		// (PlacementConstraintsUtil.getMultilevelConstraint).
		if len(tags) == 1 && registered[tags[0]] != nil {
			c = andConstraints(c, registered[tags[0]])
		}
		// What the request is apart from its count, to refuse a change of anything else.
		bare := proto.Clone(r).(*yarnpb.SchedulingRequestProto)
		bare.ResourceSizing.NumAllocations = nil
		bares[schedulingKey{Priority: r.GetPriority().GetPriority(), RequestID: r.GetAllocationRequestId()}] = bare
		ask := scheduler.Ask{Priority: r.GetPriority().GetPriority(), ResourceName: "*", Capability: rm.normalized(capability),
			Count: int(sizing.GetNumAllocations()), RelaxLocality: true, RequestID: r.GetAllocationRequestId(),
			Placement: &scheduler.Placement{RequestID: r.GetAllocationRequestId(), Tags: tags, Constraint: c}}
		// A request IN a node partition is scheduled in that partition, as the Java
		// RM's SingleConstraintAppPlacementAllocator takes it as the request's label.
		if label, ok := partitionOf(c); ok {
			ask.Label = cmp.Or(label, scheduler.DefaultPartition)
			// The Java scheduler never offers a queue the nodes of a partition it may not
			// use, so such a request would wait for ever: it is refused, in the words a
			// ResourceRequest's label gets.
			if q, known := rm.Queues().Queue(queue); known && label != "" && !q.CanAccess(label) {
				return nil, nil, invalid(r, "queue=%s doesn't have permission to access node partition %s (queue labels=%s)", q.Name, label, strings.Join(q.AccessibleNodeLabels, ","))
			}
		}
		out = append(out, ask)
	}
	var rerr error
	rm.apps.WithAttempt(att, func(_ *rmstate.App, at *rmstate.Attempt) {
		for _, r := range reqs {
			k := schedulingKey{Priority: r.GetPriority().GetPriority(), RequestID: r.GetAllocationRequestId()}
			if old, ok := at.SchedulingRequests[k]; ok && !proto.Equal(old, bares[k]) {
				rerr = invalid(r, "Invalid updated SchedulingRequest added to scheduler,  we only allows changing numAllocations for the updated SchedulingRequest. Old={%v} new={%v}, if any fields need to be updated, please cancel the old request (by setting numAllocations to 0) and send a SchedulingRequest with different combination of priority/allocationId", old, bares[k])
				return
			}
		}
	})
	if rerr != nil {
		return nil, nil, rerr
	}
	commit = func() {
		rm.apps.WithAttempt(att, func(_ *rmstate.App, at *rmstate.Attempt) {
			if at.SchedulingRequests == nil {
				at.SchedulingRequests = map[schedulingKey]*yarnpb.SchedulingRequestProto{}
			}
			for _, ask := range out {
				k := schedulingKey{Priority: ask.Priority, RequestID: ask.Placement.RequestID}
				if ask.Count == 0 {
					delete(at.SchedulingRequests, k)
				} else {
					at.SchedulingRequests[k] = bares[k]
				}
			}
		})
	}
	return out, commit, nil
}

// partitionOf is the node partition constraint c asks to be IN (a single partition, at
// its top or in an AND), if any.
func partitionOf(c *scheduler.Constraint) (string, bool) {
	switch {
	case c == nil:
		return "", false
	case c.Op == scheduler.ConstraintAnd:
		for _, child := range c.Children {
			if p, ok := partitionOf(child); ok {
				return p, true
			}
		}
	case c.Op == scheduler.ConstraintSingle && c.Min >= 1:
		for _, t := range c.Targets {
			if len(t.Partitions) == 1 {
				return t.Partitions[0], true
			}
		}
	}
	return "", false
}

func andConstraints(a, b *scheduler.Constraint) *scheduler.Constraint {
	if a == nil {
		return b
	}
	return &scheduler.Constraint{Op: scheduler.ConstraintAnd, Children: []*scheduler.Constraint{a, b}}
}

// constraintFrom converts a PlacementConstraintProto (nil: none) for the engine.
func (rm *Core) constraintFrom(p *yarnpb.PlacementConstraintProto) (*scheduler.Constraint, error) {
	switch {
	case p == nil:
		return nil, nil
	case p.GetSimpleConstraint() != nil:
		return simpleConstraint(p.GetSimpleConstraint())
	case p.GetCompositeConstraint() != nil:
		cc := p.GetCompositeConstraint()
		out := &scheduler.Constraint{}
		switch cc.GetCompositeType() {
		case yarnpb.CompositePlacementConstraintProto_AND:
			out.Op = scheduler.ConstraintAnd
		case yarnpb.CompositePlacementConstraintProto_OR:
			out.Op = scheduler.ConstraintOr
		default:
			return nil, fmt.Errorf("Unsupported type of constraint: %s (Bobbin places AND, OR and single constraints)", cc.GetCompositeType())
		}
		if len(cc.GetTimedChildConstraints()) > 0 {
			return nil, fmt.Errorf("Unsupported type of constraint: timed child constraints (Bobbin places AND, OR and single constraints)")
		}
		for _, child := range cc.GetChildConstraints() {
			c, err := rm.constraintFrom(child)
			if err != nil {
				return nil, err
			}
			if c != nil {
				out.Children = append(out.Children, c)
			}
		}
		return out, nil
	}
	return nil, nil
}

// simpleConstraint converts a single constraint: scope, target expressions, cardinality
// (YARN's Integer.MAX_VALUE maximum is no bound).
func simpleConstraint(s *yarnpb.SimplePlacementConstraintProto) (*scheduler.Constraint, error) {
	out := &scheduler.Constraint{Op: scheduler.ConstraintSingle, Min: int64(s.GetMinCardinality()), Max: int64(s.GetMaxCardinality())}
	if s.MaxCardinality == nil || s.GetMaxCardinality() == 1<<31-1 {
		out.Max = -1
	}
	switch strings.ToLower(s.GetScope()) {
	case "node":
		out.Scope = scheduler.ScopeNode
	case "rack":
		out.Scope = scheduler.ScopeRack
	default:
		return nil, fmt.Errorf("Unsupported scope %q of a placement constraint: node or rack", s.GetScope())
	}
	if len(s.GetTargetExpressions()) == 0 {
		return nil, fmt.Errorf("TargetExpression should not be null or empty")
	}
	for _, te := range s.GetTargetExpressions() {
		t, err := target(te)
		if err != nil {
			return nil, err
		}
		out.Targets = append(out.Targets, t)
	}
	return out, nil
}

// target converts one target expression: allocation tags in a namespace (self, all,
// not-self, app-id/<id>), or the node partition.
func target(te *yarnpb.PlacementConstraintTargetProto) (scheduler.Target, error) {
	switch te.GetTargetType() {
	case yarnpb.PlacementConstraintTargetProto_ALLOCATION_TAG:
		t := scheduler.Target{Tags: te.GetTargetValues()}
		switch ns := te.GetTargetKey(); {
		case ns == "" || ns == "self":
			t.Namespace = scheduler.NamespaceSelf
		case ns == "all":
			t.Namespace = scheduler.NamespaceAll
		case ns == "not-self":
			t.Namespace = scheduler.NamespaceNotSelf
		case strings.HasPrefix(ns, "app-id/"):
			id, err := records.ParseApplicationID(strings.TrimPrefix(ns, "app-id/"))
			if err != nil {
				return t, fmt.Errorf("Invalid namespace prefix: %s", ns)
			}
			t.Namespace, t.App = scheduler.NamespaceApp, EngineID(id)
		case strings.HasPrefix(ns, "app-tag/"):
			return t, fmt.Errorf("the allocation tag namespace %s (by application tag) is not served by Bobbin", ns)
		default:
			return t, fmt.Errorf("Invalid namespace prefix: %s", ns)
		}
		return t, nil
	case yarnpb.PlacementConstraintTargetProto_NODE_ATTRIBUTE:
		if te.GetTargetKey() != nodePartitionKey {
			return scheduler.Target{}, fmt.Errorf("node attribute %q in a placement constraint: node attributes are not served by Bobbin (only %s, the node partition)", te.GetTargetKey(), nodePartitionKey)
		}
		parts := make([]string, 0, len(te.GetTargetValues()))
		for _, v := range te.GetTargetValues() {
			parts = append(parts, strings.TrimSpace(v))
		}
		if len(parts) == 0 {
			parts = []string{""} // no value: the default partition, as in Java
		}
		return scheduler.Target{Partitions: parts}, nil
	}
	return scheduler.Target{}, fmt.Errorf("Unsupported target type %s of a placement constraint", te.GetTargetType())
}
