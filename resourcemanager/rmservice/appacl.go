package rmservice

import (
	"context"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
)

// unavailable is what the Java RM puts in the fields of a report its caller may not view.
const unavailable = "N/A"

// restrictReports hides, in each report the caller may not view (VIEW_APP), what the Java
// RM hides (RMAppImpl.createAndGetApplicationReport with allowAccess false): the AM's host,
// port and URLs, the diagnostics, the usage (all -1), the progress and the tokens. The
// application's id, owner, queue, name, state and times stay.
func (s *clientService) restrictReports(ctx context.Context, reports ...*yarnpb.ApplicationReportProto) {
	if !s.rm.Settings().ACLEnabled {
		return
	}
	caller, _ := rpc.CallerFrom(ctx)
	who := ""
	if caller != nil {
		who = caller.User
	}
	for _, r := range reports {
		if s.rm.MayViewApp(who, records.AppIDFromProto(r.GetApplicationId())) {
			continue
		}
		r.Host, r.RpcPort = proto.String(unavailable), proto.Int32(-1)
		r.TrackingUrl, r.OriginalTrackingUrl, r.Diagnostics = proto.String(unavailable), proto.String(unavailable), proto.String(unavailable)
		r.ClientToAmToken, r.AmRmToken, r.Progress = nil, nil, proto.Float32(0)
		r.LogAggregationStatus = nil
		none := func() *yarnpb.ResourceProto {
			return &yarnpb.ResourceProto{Memory: proto.Int64(-1), VirtualCores: proto.Int32(-1)}
		}
		r.AppResource_Usage = &yarnpb.ApplicationResourceUsageReportProto{NumUsedContainers: proto.Int32(-1), NumReservedContainers: proto.Int32(-1),
			UsedResources: none(), ReservedResources: none(), NeededResources: none(), MemorySeconds: proto.Int64(0), VcoreSeconds: proto.Int64(0)}
	}
}

// mayView refuses a caller who may not view the application, with the Java RM's
// YarnException text (its spelling included) naming what was asked for.
func (s *clientService) mayView(ctx context.Context, id records.ApplicationID, what string) error {
	caller, _ := rpc.CallerFrom(ctx)
	if caller == nil || s.rm.MayViewApp(caller.User, id) {
		return nil
	}
	return rpc.Errorf(exceptions.YarnException, "User %s does not have privilage to see this %s", caller.User, what)
}

// mayModify refuses a caller who may not modify the application (MODIFY_APP), as the Java
// RM refuses kill, move, priority, timeouts, signals and failing an attempt.
func (s *clientService) mayModify(ctx context.Context, id records.ApplicationID) error {
	caller, _ := rpc.CallerFrom(ctx)
	if caller == nil || !s.rm.AppExists(id) || s.rm.MayModifyApp(caller.User, id) {
		return nil
	}
	return rpc.Errorf(rpc.ClassAccessControl, "User %s cannot perform operation MODIFY_APP on %s", caller.User, id)
}
