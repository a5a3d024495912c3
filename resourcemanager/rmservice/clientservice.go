package rmservice

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/conf/capacity"
	commonpb "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmcore"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/yarn/audit"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
	"github.com/bobbin-yarn/bobbin/yarn/protocol"
)

// clientService answers ApplicationClientProtocol (yarn.resourcemanager.address): the
// yarn CLI, MapReduce job clients and spark-submit.
type clientService struct {
	rm *rmcore.Core
}

func NewClientService(rm *rmcore.Core) (*rpc.Protocol, error) {
	s := &clientService{rm: rm}
	sd := yarnpb.File_yarn_applicationclient_protocol_proto.Services().ByName("ApplicationClientProtocolService")
	return rpc.ServiceProtocol(protocol.ApplicationClient, sd, map[string]rpc.Method{
		"getNewApplication":    rpc.Unary(s.getNewApplication),
		"getApplicationReport": rpc.Unary(s.getApplicationReport),
		"submitApplication": rpc.Unary(auditedApp(s.rm, "Submit Application Request", func(r *yarnpb.SubmitApplicationRequestProto) *yarnpb.ApplicationIdProto {
			return r.GetApplicationSubmissionContext().GetApplicationId()
		}, s.submitApplication)),
		"forceKillApplication":        rpc.Unary(auditedApp(s.rm, "Kill Application Request", (*yarnpb.KillApplicationRequestProto).GetApplicationId, s.forceKillApplication)),
		"getClusterMetrics":           rpc.Unary(s.getClusterMetrics),
		"getApplications":             rpc.Unary(s.getApplications),
		"getClusterNodes":             rpc.Unary(s.getClusterNodes),
		"getQueueInfo":                rpc.Unary(s.getQueueInfo),
		"getQueueUserAcls":            rpc.Unary(s.getQueueUserAcls),
		"getDelegationToken":          rpc.Unary(s.getDelegationToken),
		"renewDelegationToken":        rpc.Unary(s.renewDelegationToken),
		"cancelDelegationToken":       rpc.Unary(s.cancelDelegationToken),
		"moveApplicationAcrossQueues": rpc.Unary(auditedApp(s.rm, "Move Application Request", (*yarnpb.MoveApplicationAcrossQueuesRequestProto).GetApplicationId, s.moveApplicationAcrossQueues)),
		"getApplicationAttemptReport": rpc.Unary(s.getApplicationAttemptReport),
		"getApplicationAttempts":      rpc.Unary(s.getApplicationAttempts),
		"getContainerReport":          rpc.Unary(s.getContainerReport),
		"getContainers":               rpc.Unary(s.getContainers),
		"getNodeToLabels":             rpc.Unary(s.getNodeToLabels),
		"getLabelsToNodes":            rpc.Unary(s.getLabelsToNodes),
		"getClusterNodeLabels":        rpc.Unary(s.getClusterNodeLabels),
		// Hadoop 3.x
		"getResourceTypeInfo":       rpc.Unary(s.getResourceTypeInfo),
		"getResourceProfiles":       rpc.Unary(s.getResourceProfiles),
		"getResourceProfile":        rpc.Unary(s.getResourceProfile),
		"updateApplicationPriority": rpc.Unary(auditedApp(s.rm, "Update Application Priority", (*yarnpb.UpdateApplicationPriorityRequestProto).GetApplicationId, s.updateApplicationPriority)),
		"updateApplicationTimeouts": rpc.Unary(s.updateApplicationTimeouts),
		"signalToContainer":         rpc.Unary(s.signalToContainer),
		"failApplicationAttempt":    rpc.Unary(s.failApplicationAttempt),
		// Hadoop 3.2+
		"getClusterNodeAttributes": rpc.Unary(s.getClusterNodeAttributes),
		"getAttributesToNodes":     rpc.Unary(s.getAttributesToNodes),
		"getNodesToAttributes":     rpc.Unary(s.getNodesToAttributes),
	}, func(method string) error {
		switch method {
		case "submitReservation", "updateReservation", "deleteReservation", "getNewReservation", "listReservations":
			return reservationsDisabled()
		}
		return rpc.Errorf(exceptions.YarnException, "%s is not supported by this ResourceManager yet", method)
	})
}

func (s *clientService) getNewApplication(ctx context.Context, _ *yarnpb.GetNewApplicationRequestProto) (*yarnpb.GetNewApplicationResponseProto, error) {
	caller, _ := rpc.CallerFrom(ctx)
	id := s.rm.NewAppID(caller.User, "rpc")
	return &yarnpb.GetNewApplicationResponseProto{ApplicationId: id.Proto(), MaximumCapability: s.rm.MaximumCapability()}, nil
}

// submitApplication records an application (rmcore.Submit).
func (s *clientService) submitApplication(ctx context.Context, req *yarnpb.SubmitApplicationRequestProto) (*yarnpb.SubmitApplicationResponseProto, error) {
	caller, _ := rpc.CallerFrom(ctx)
	if err := s.rm.Submit(req.GetApplicationSubmissionContext(), caller.User); err != nil {
		return nil, err
	}
	return &yarnpb.SubmitApplicationResponseProto{}, nil
}

// appNotFound is the exception (and Java's message) for an unknown application.
func appNotFound(id records.ApplicationID) error {
	return rpc.Errorf(exceptions.ApplicationNotFound, "Application with id '%s' doesn't exist in RM.", id)
}

func requireAppID(p *yarnpb.ApplicationIdProto) (records.ApplicationID, error) {
	if p == nil {
		return records.ApplicationID{}, rpc.Errorf(exceptions.ApplicationNotFound, "Invalid application id: null")
	}
	return records.AppIDFromProto(p), nil
}

// lookupApp checks that the application exists.
func (s *clientService) lookupApp(p *yarnpb.ApplicationIdProto) (records.ApplicationID, error) {
	id, err := requireAppID(p)
	if err != nil {
		return id, err
	}
	if !s.rm.AppExists(id) {
		return id, appNotFound(id)
	}
	return id, nil
}

func (s *clientService) getApplicationReport(ctx context.Context, req *yarnpb.GetApplicationReportRequestProto) (*yarnpb.GetApplicationReportResponseProto, error) {
	id, err := requireAppID(req.GetApplicationId())
	if err != nil {
		return nil, err
	}
	r, ok := s.rm.AppReport(id)
	if !ok {
		return nil, appNotFound(id)
	}
	s.rm.FillUsage(r)
	s.restrictReports(ctx, r)
	s.addClientTokens(ctx, r)
	return &yarnpb.GetApplicationReportResponseProto{ApplicationReport: r}, nil
}

func (s *clientService) forceKillApplication(ctx context.Context, req *yarnpb.KillApplicationRequestProto) (*yarnpb.KillApplicationResponseProto, error) {
	id, err := requireAppID(req.GetApplicationId())
	if err != nil {
		return nil, err
	}
	caller, _ := rpc.CallerFrom(ctx)
	from := ""
	if caller != nil && caller.RemoteAddr != nil {
		if host, _, err := net.SplitHostPort(caller.RemoteAddr.String()); err == nil {
			from = host
		}
	}
	if !s.rm.AppExists(id) {
		return nil, rpc.Errorf(exceptions.ApplicationNotFound, "Trying to kill an absent application %s", id)
	}
	if !s.rm.MayModifyApp(caller.User, id) {
		return nil, rpc.Errorf(rpc.ClassAccessControl, "User %s cannot perform operation MODIFY_APP on %s", caller.User, id)
	}
	if !s.rm.KillApp(id, caller.User, fmt.Sprintf("Application %s was killed by user %s at %s", id, caller.User, from)) {
		return nil, rpc.Errorf(exceptions.ApplicationNotFound, "Trying to kill an absent application %s", id)
	}
	return &yarnpb.KillApplicationResponseProto{IsKillCompleted: proto.Bool(true)}, nil
}

func (s *clientService) getClusterMetrics(context.Context, *yarnpb.GetClusterMetricsRequestProto) (*yarnpb.GetClusterMetricsResponseProto, error) {
	c := s.rm.NodeCounts()
	return &yarnpb.GetClusterMetricsResponseProto{ClusterMetrics: &yarnpb.YarnClusterMetricsProto{
		NumNodeManagers:       proto.Int32(c[yarnpb.NodeStateProto_NS_RUNNING]),
		NumActiveNms:          proto.Int32(c[yarnpb.NodeStateProto_NS_RUNNING]),
		NumDecommissionedNms:  proto.Int32(c[yarnpb.NodeStateProto_NS_DECOMMISSIONED]),
		NumLostNms:            proto.Int32(c[yarnpb.NodeStateProto_NS_LOST]),
		NumUnhealthyNms:       proto.Int32(c[yarnpb.NodeStateProto_NS_UNHEALTHY]),
		NumRebootedNms:        proto.Int32(c[yarnpb.NodeStateProto_NS_REBOOTED]),
		NumDecommissioningNms: proto.Int32(c[yarnpb.NodeStateProto_NS_DECOMMISSIONING]),
		NumShutdownNms:        proto.Int32(c[yarnpb.NodeStateProto_NS_SHUTDOWN]),
	}}, nil
}

func (s *clientService) getApplications(ctx context.Context, req *yarnpb.GetApplicationsRequestProto) (*yarnpb.GetApplicationsResponseProto, error) {
	f := &rmstate.AppFilter{Limit: req.GetLimit(), States: map[yarnpb.YarnApplicationStateProto]bool{}, Name: req.GetName(),
		StartBegin: req.GetStartBegin(), StartEnd: req.GetStartEnd(), FinishBegin: req.GetFinishBegin(), FinishEnd: req.GetFinishEnd(),
		Types: setOf(req.GetApplicationTypes(), true), Users: setOf(req.GetUsers(), false),
		Queues: setOf(req.GetQueues(), false), Tags: setOf(req.GetApplicationTags(), true)}
	for _, st := range req.GetApplicationStates() {
		f.States[st] = true
	}
	if req.GetScope() == yarnpb.ApplicationsRequestScopeProto_OWN {
		caller, _ := rpc.CallerFrom(ctx)
		f.Users = map[string]bool{caller.User: true}
	}
	apps := s.rm.AppReports(f)
	s.rm.FillUsage(apps...)
	s.restrictReports(ctx, apps...)
	s.addClientTokens(ctx, apps...)
	return &yarnpb.GetApplicationsResponseProto{Applications: apps}, nil
}

func (s *clientService) getClusterNodes(_ context.Context, req *yarnpb.GetClusterNodesRequestProto) (*yarnpb.GetClusterNodesResponseProto, error) {
	reports := s.rm.NodeReports(req.GetNodeStates())
	// What the scheduler has placed on each node: the Java RM's report shows the same.
	byNode := s.rm.NodeUsage()
	for _, r := range reports {
		u := byNode[rmstate.NodeKey(r.GetNodeId())]
		r.Used, r.NumContainers = s.rm.ResourceProto(u.Used), proto.Int32(u.Containers)
		r.Capability = s.rm.ResourceProto(s.rm.ResourceOf(r.GetCapability()))
	}
	return &yarnpb.GetClusterNodesResponseProto{NodeReports: reports}, nil
}

// getQueueInfo answers with an empty response for an unknown queue, as the Java RM does
// (the CLI then prints "Cannot get queue from RM by queueName").
func (s *clientService) getQueueInfo(_ context.Context, req *yarnpb.GetQueueInfoRequestProto) (*yarnpb.GetQueueInfoResponseProto, error) {
	q, ok := s.rm.Queues().Queue(req.GetQueueName())
	if !ok {
		s.rm.Log().WithField("queue", req.GetQueueName()).Info("getQueueInfo for an unknown queue")
		return &yarnpb.GetQueueInfoResponseProto{}, nil
	}
	st := s.rm.SchedulerStats()
	qs := queueStats{used: st.QueueUsed, clusterMB: st.Total[scheduler.Memory], preemption: s.rm.PreemptionEnabled(), fullNames: s.rm.Queues().Fair,
		figures: s.rm.QueueFigures(), core: s.rm, total: st.Total}
	return &yarnpb.GetQueueInfoResponseProto{QueueInfo: qs.info(q, req.GetIncludeChildQueues(), req.GetRecursive())}, nil
}

// queueStats is what a QueueInfo reports beyond the configuration: what the queue's
// applications hold, against the cluster's size.
type queueStats struct {
	used       map[string]scheduler.Resource // by leaf queue
	clusterMB  int64
	preemption bool // the scheduler preempts to give starved queues their quota
	fullNames  bool // queues are named by path ("root.a"), as the Fair Scheduler names them
	figures    map[*capacity.Queue]rmcore.QueueFigures
	core       *rmcore.Core
	total      scheduler.Resource // the cluster's
}

// usedMB sums what q and the queues under it hold.
func (qs queueStats) usedMB(q *capacity.Queue) int64 {
	if q.IsLeaf() {
		return qs.used[q.Name][scheduler.Memory]
	}
	var sum int64
	for _, c := range q.Children {
		sum += qs.usedMB(c)
	}
	return sum
}

// info reports capacities as fractions of the parent, as QueueInfo does; the current
// capacity is what the queue holds as a fraction of its guaranteed share of the cluster's
// memory (the Capacity Scheduler's used capacity).
func (qs queueStats) info(q *capacity.Queue, children, recursive bool) *yarnpb.QueueInfoProto {
	current := 0.0
	if guaranteed := q.AbsoluteCapacity * float64(qs.clusterMB); guaranteed > 0 { // AbsoluteCapacity is a fraction
		current = float64(qs.usedMB(q)) / guaranteed
	}
	state := yarnpb.QueueStateProto_Q_RUNNING
	if q.State == capacity.Stopped {
		state = yarnpb.QueueStateProto_Q_STOPPED
	}
	name := q.Name
	if qs.fullNames {
		name = q.Path
	}
	// A capacity given as a weight is no percentage: the Java RM (3.4) reports 0 for it,
	// and the weight in the 3.4 fields (hadoop34).
	configured := q.Capacity / 100
	if q.Weight >= 0 {
		configured = 0
	}
	qi := &yarnpb.QueueInfoProto{
		QueueName:                  proto.String(name),
		Capacity:                   proto.Float32(float32(configured)),
		MaximumCapacity:            proto.Float32(float32(q.MaximumCapacity / 100)),
		CurrentCapacity:            proto.Float32(float32(current)),
		State:                      state.Enum(),
		AccessibleNodeLabels:       q.AccessibleNodeLabels,
		DefaultNodeLabelExpression: proto.String(q.DefaultNodeLabelExpression),
		PreemptionDisabled:         proto.Bool(!qs.preemption || q.DisablePreemption),
		// Bobbin preempts between queues (groups), never inside one.
		IntraQueuePreemptionDisabled: proto.Bool(true),
		QueueStatistics:              qs.statistics(q),
	}
	qs.hadoop34(qi, q)
	if children {
		for _, c := range q.Children {
			qi.ChildQueues = append(qi.ChildQueues, qs.info(c, recursive, recursive))
		}
	}
	return qi
}

// hadoop34 fills what 3.3 and 3.4 clients add to QueueInfo (`yarn queue -status` prints
// it by scheduler), as the Java RM's CSQueueInfoProvider and FSQueue fill it.
func (qs queueStats) hadoop34(qi *yarnpb.QueueInfoProto, q *capacity.Queue) {
	maxApps := q.RunningBound() // neither scheduler's default bounds it
	if !qs.fullNames {
		qi.SchedulerType, qi.QueuePath = proto.String("CapacityScheduler"), proto.String(q.Path)
		// The capacity's weight ("2w"), or -1 for a percentage (QueueCapacities' unset weight).
		qi.Weight, qi.MaxParallelApps = proto.Float32(float32(q.Weight)), proto.Int32(maxApps)
		return
	}
	b := qs.core.FairBoundsOf(q, qs.total)
	mem, vc := scheduler.Memory, scheduler.VCores
	weight := q.FairWeight
	if q.Parent == nil {
		weight = 1 // root's, which no allocation file sets
	}
	qi.SchedulerType, qi.Weight, qi.MaxRunningApp = proto.String("FairScheduler"), proto.Float32(float32(weight)), proto.Int32(maxApps)
	qi.MinResourceMemory, qi.MinResourceVCore = proto.Int64(b.Min[mem]), proto.Int32(int32(b.Min[vc]))
	qi.MaxResourceMemory, qi.MaxResourceVCore = proto.Int64(b.Max[mem]), proto.Int32(int32(b.Max[vc]))
	// Bobbin reserves nothing on nodes.
	qi.ReservedResourceMemory, qi.ReservedResourceVCore = proto.Int64(0), proto.Int32(0)
	qi.SteadyFairShareMemory, qi.SteadyFairShareVCore = proto.Int64(b.SteadyFair[mem]), proto.Int32(int32(b.SteadyFair[vc]))
}

// statistics are the queue's QueueStatistics, its QueueMetrics as the Java RM's
// AbstractCSQueue.getQueueStatistics fills them (`yarn top` shows them). Bobbin
// reserves nothing, so the reserved figures are 0.
func (qs queueStats) statistics(q *capacity.Queue) *yarnpb.QueueStatisticsProto {
	f, ok := qs.figures[q]
	if !ok {
		return nil
	}
	return &yarnpb.QueueStatisticsProto{
		NumAppsSubmitted: proto.Int64(f.Submitted), NumAppsRunning: proto.Int64(f.Running), NumAppsPending: proto.Int64(f.Pending),
		NumAppsCompleted: proto.Int64(f.Completed), NumAppsKilled: proto.Int64(f.Killed), NumAppsFailed: proto.Int64(f.Failed),
		NumActiveUsers:    proto.Int64(int64(f.ActiveUsers)),
		AvailableMemoryMB: proto.Int64(f.Available[scheduler.Memory]), AllocatedMemoryMB: proto.Int64(f.Allocated[scheduler.Memory]),
		PendingMemoryMB: proto.Int64(f.PendingRes[scheduler.Memory]), ReservedMemoryMB: proto.Int64(0),
		AvailableVCores: proto.Int64(f.Available[scheduler.VCores]), AllocatedVCores: proto.Int64(f.Allocated[scheduler.VCores]),
		PendingVCores: proto.Int64(f.PendingRes[scheduler.VCores]), ReservedVCores: proto.Int64(0),
		AllocatedContainers: proto.Int64(f.Containers), PendingContainers: proto.Int64(f.PendingContainers), ReservedContainers: proto.Int64(0),
	}
}

func (s *clientService) getQueueUserAcls(ctx context.Context, _ *yarnpb.GetQueueUserAclsInfoRequestProto) (*yarnpb.GetQueueUserAclsInfoResponseProto, error) {
	caller, _ := rpc.CallerFrom(ctx)
	groups := s.rm.UserGroups(caller.User)
	resp := &yarnpb.GetQueueUserAclsInfoResponseProto{}
	for _, q := range s.rm.Queues().Queues() {
		info := &yarnpb.QueueUserACLInfoProto{QueueName: proto.String(q.Name)}
		if rmcore.HasAccess(q, func(q *capacity.Queue) capacity.ACL { return q.SubmitACL }, caller.User, groups) ||
			rmcore.HasAccess(q, func(q *capacity.Queue) capacity.ACL { return q.AdministerACL }, caller.User, groups) {
			info.UserAcls = append(info.UserAcls, yarnpb.QueueACLProto_QACL_SUBMIT_APPLICATIONS)
		}
		if rmcore.HasAccess(q, func(q *capacity.Queue) capacity.ACL { return q.AdministerACL }, caller.User, groups) {
			info.UserAcls = append(info.UserAcls, yarnpb.QueueACLProto_QACL_ADMINISTER_QUEUE)
		}
		resp.QueueUserAcls = append(resp.QueueUserAcls, info)
	}
	return resp, nil
}

// Delegation tokens, as Java's ClientRMService: on a kerberized RM only a caller who
// authenticated with Kerberos (not with a delegation token) may get, renew or cancel
// them; without Kerberos anyone may. The owner is the caller's full name, the renewer is
// kept by its short name. Refusals reach the client as a YarnException wrapping Java's
// exception, as RPCUtil.getRemoteException wraps it.
func (s *clientService) delegationAllowed(ctx context.Context, verb string) (*rpc.Caller, error) {
	c, _ := rpc.CallerFrom(ctx)
	if c == nil {
		return nil, rpc.Errorf(exceptions.YarnException, "java.io.IOException: no caller")
	}
	if s.rm.Settings().Kerberos && c.Auth != rpc.AuthKerberos {
		return nil, rpc.Errorf(exceptions.YarnException, "java.io.IOException: Delegation Token can be %s only with kerberos authentication", verb)
	}
	return c, nil
}

// fullName is the caller's user name as Java's UGI.getUserName gives it: the principal
// for a Kerberos caller.
func fullName(c *rpc.Caller) string {
	if c.Principal != "" {
		return c.Principal
	}
	return c.User
}

func wrapDelegationErr(err error) error {
	var re *rpc.RemoteError
	if errors.As(err, &re) {
		return rpc.Errorf(exceptions.YarnException, "%s: %s", re.Class, re.Message)
	}
	return rpc.Errorf(exceptions.YarnException, "java.io.IOException: %v", err)
}

func (s *clientService) getDelegationToken(ctx context.Context, req *commonpb.GetDelegationTokenRequestProto) (*commonpb.GetDelegationTokenResponseProto, error) {
	c, err := s.delegationAllowed(ctx, "issued")
	if err != nil {
		return nil, err
	}
	tok, err := s.rm.Delegation().Issue(fullName(c), req.GetRenewer(), c.RealUser)
	if err != nil {
		return nil, wrapDelegationErr(err)
	}
	s.rm.Log().WithFields(map[string]any{"user": fullName(c), "renewer": req.GetRenewer()}).Info("RM delegation token issued")
	return &commonpb.GetDelegationTokenResponseProto{Token: tok}, nil
}

func (s *clientService) renewDelegationToken(ctx context.Context, req *commonpb.RenewDelegationTokenRequestProto) (*commonpb.RenewDelegationTokenResponseProto, error) {
	c, err := s.delegationAllowed(ctx, "renewed")
	if err != nil {
		return nil, err
	}
	exp, err := s.rm.Delegation().Renew(req.GetToken(), c.User)
	if err != nil {
		return nil, wrapDelegationErr(err)
	}
	return &commonpb.RenewDelegationTokenResponseProto{NewExpiryTime: proto.Uint64(uint64(exp.UnixMilli()))}, nil
}

func (s *clientService) cancelDelegationToken(ctx context.Context, req *commonpb.CancelDelegationTokenRequestProto) (*commonpb.CancelDelegationTokenResponseProto, error) {
	c, err := s.delegationAllowed(ctx, "cancelled")
	if err != nil {
		return nil, err
	}
	if err := s.rm.Delegation().Cancel(req.GetToken(), fullName(c)); err != nil {
		return nil, wrapDelegationErr(err)
	}
	return &commonpb.CancelDelegationTokenResponseProto{}, nil
}

func (s *clientService) moveApplicationAcrossQueues(ctx context.Context, req *yarnpb.MoveApplicationAcrossQueuesRequestProto) (*yarnpb.MoveApplicationAcrossQueuesResponseProto, error) {
	id, err := s.lookupApp(req.GetApplicationId())
	if err != nil {
		return nil, err
	}
	caller, _ := rpc.CallerFrom(ctx)
	if !s.rm.MayModifyApp(caller.User, id) {
		return nil, rpc.Errorf(rpc.ClassAccessControl, "User %s cannot perform operation MODIFY_APP on %s", caller.User, id)
	}
	if err := s.rm.MoveApp(id, req.GetTargetQueue(), caller.User); err != nil {
		return nil, err
	}
	return &yarnpb.MoveApplicationAcrossQueuesResponseProto{}, nil
}

func (s *clientService) getApplicationAttemptReport(ctx context.Context, req *yarnpb.GetApplicationAttemptReportRequestProto) (*yarnpb.GetApplicationAttemptReportResponseProto, error) {
	att := records.AttemptIDFromProto(req.GetApplicationAttemptId())
	if _, err := s.lookupApp(req.GetApplicationAttemptId().GetApplicationId()); err != nil {
		return nil, err
	}
	if err := s.mayView(ctx, att.App, "attempt "+att.String()); err != nil {
		return nil, err
	}
	r, ok := s.rm.AttemptReport(att)
	if !ok {
		return nil, rpc.Errorf(exceptions.ApplicationAttemptNotFound, "ApplicationAttempt with id '%s' doesn't exist in RM.", att)
	}
	return &yarnpb.GetApplicationAttemptReportResponseProto{ApplicationAttemptReport: r}, nil
}

func (s *clientService) getApplicationAttempts(ctx context.Context, req *yarnpb.GetApplicationAttemptsRequestProto) (*yarnpb.GetApplicationAttemptsResponseProto, error) {
	id, err := s.lookupApp(req.GetApplicationId())
	if err != nil {
		return nil, err
	}
	if err := s.mayView(ctx, id, "application "+id.String()); err != nil {
		return nil, err
	}
	return &yarnpb.GetApplicationAttemptsResponseProto{ApplicationAttempts: s.rm.AttemptReports(id)}, nil
}

func (s *clientService) getContainerReport(ctx context.Context, req *yarnpb.GetContainerReportRequestProto) (*yarnpb.GetContainerReportResponseProto, error) {
	cid := records.ContainerIDFromProto(req.GetContainerId())
	if _, err := s.lookupApp(req.GetContainerId().GetAppAttemptId().GetApplicationId()); err != nil {
		return nil, err
	}
	if err := s.mayView(ctx, cid.Attempt.App, "application "+cid.Attempt.App.String()); err != nil {
		return nil, err
	}
	r, ok := s.rm.ContainerReport(cid)
	if !ok {
		return nil, rpc.Errorf(exceptions.ContainerNotFound, "Container with id '%s' doesn't exist in RM.", cid)
	}
	return &yarnpb.GetContainerReportResponseProto{ContainerReport: r}, nil
}

func (s *clientService) getContainers(ctx context.Context, req *yarnpb.GetContainersRequestProto) (*yarnpb.GetContainersResponseProto, error) {
	if _, err := s.lookupApp(req.GetApplicationAttemptId().GetApplicationId()); err != nil {
		return nil, err
	}
	att := records.AttemptIDFromProto(req.GetApplicationAttemptId())
	if err := s.mayView(ctx, att.App, "application "+att.App.String()); err != nil {
		return nil, err
	}
	if _, ok := s.rm.AttemptReport(att); !ok {
		return nil, rpc.Errorf(exceptions.ApplicationAttemptNotFound, "ApplicationAttempt with id '%s' doesn't exist in RM.", att)
	}
	return &yarnpb.GetContainersResponseProto{Containers: s.rm.ContainerReports(att)}, nil
}

func (s *clientService) getNodeToLabels(context.Context, *yarnpb.GetNodesToLabelsRequestProto) (*yarnpb.GetNodesToLabelsResponseProto, error) {
	m := s.rm.NodeLabels()
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	resp := &yarnpb.GetNodesToLabelsResponseProto{}
	for _, k := range keys {
		resp.NodeToLabels = append(resp.NodeToLabels, &yarnpb.NodeIdToLabelsProto{NodeId: records.NodeIDFromKey(k), NodeLabels: m[k]})
	}
	return resp, nil
}

func (s *clientService) getLabelsToNodes(_ context.Context, req *yarnpb.GetLabelsToNodesRequestProto) (*yarnpb.GetLabelsToNodesResponseProto, error) {
	want := setOf(req.GetNodeLabels(), false)
	byLabel := map[string][]string{}
	for node, labels := range s.rm.NodeLabels() {
		for _, l := range labels {
			if want == nil || want[l] {
				byLabel[l] = append(byLabel[l], node)
			}
		}
	}
	labels := make([]string, 0, len(byLabel))
	for l := range byLabel {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	resp := &yarnpb.GetLabelsToNodesResponseProto{}
	for _, l := range labels {
		sort.Strings(byLabel[l])
		e := &yarnpb.LabelsToNodeIdsProto{NodeLabels: proto.String(l)}
		for _, n := range byLabel[l] {
			e.NodeId = append(e.NodeId, records.NodeIDFromKey(n))
		}
		resp.LabelsToNodes = append(resp.LabelsToNodes, e)
	}
	return resp, nil
}

// getClusterNodeLabels reports the cluster's labels (those added by an administrator and
// those the queue configuration names) in both the 2.x (strings) and 3.x
// (NodeLabelProto) fields.
func (s *clientService) getClusterNodeLabels(context.Context, *yarnpb.GetClusterNodeLabelsRequestProto) (*yarnpb.GetClusterNodeLabelsResponseProto, error) {
	resp := &yarnpb.GetClusterNodeLabelsResponseProto{}
	for _, l := range s.rm.ClusterLabels() {
		resp.DeprecatedNodeLabels = append(resp.DeprecatedNodeLabels, l.Name)
		resp.NodeLabels = append(resp.NodeLabels, &yarnpb.NodeLabelProto{Name: proto.String(l.Name), IsExclusive: proto.Bool(l.Exclusive)})
	}
	return resp, nil
}

func setOf(items []string, fold bool) map[string]bool {
	if len(items) == 0 {
		return nil
	}
	m := make(map[string]bool, len(items))
	for _, it := range items {
		if fold {
			it = lower(it)
		}
		m[strings.TrimSpace(it)] = true
	}
	return m
}

func lower(s string) string { return strings.ToLower(s) }

// auditedApp writes the audit line of a call on one application, as Java's
// ClientRMService does (RMAuditLogger's operations): success, or failure with the
// exception's message.
func auditedApp[Req, Resp any](rm *rmcore.Core, op string, appOf func(Req) *yarnpb.ApplicationIdProto, fn func(context.Context, Req) (Resp, error)) func(context.Context, Req) (Resp, error) {
	return func(ctx context.Context, req Req) (Resp, error) {
		resp, err := fn(ctx, req)
		app := ""
		if p := appOf(req); p != nil {
			app = records.AppIDFromProto(p).String()
		}
		auditCall(ctx, rm, op, "ClientRMService", "", err, audit.KV{Key: "APPID", Value: app})
		return resp, err
	}
}
