package rmservice

// The Hadoop 3.x calls of ApplicationClientProtocol, answered as the Apache 3.1.1 RM does:
// priorities, lifetimes, container signals, failing an attempt, resource types, and the
// features Bobbin keeps off (resource profiles, reservations) refused with 3.1.1's
// exception and message.

import (
	"context"
	"time"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
)

// profilesDisabled is 3.1.1's ResourceProfilesManagerImpl answer while
// yarn.resourcemanager.resource-profiles.enabled is false (Bobbin refuses to start with it
// true).
func profilesDisabled() error {
	return rpc.Errorf(exceptions.FeatureNotEnabled, "Resource profile is not enabled, please enable resource profile feature before using its functions. (by setting yarn.resourcemanager.resource-profiles.enabled to true)")
}

func (s *clientService) getResourceProfiles(context.Context, *yarnpb.GetAllResourceProfilesRequestProto) (*yarnpb.GetAllResourceProfilesResponseProto, error) {
	return nil, profilesDisabled()
}

func (s *clientService) getResourceProfile(context.Context, *yarnpb.GetResourceProfileRequestProto) (*yarnpb.GetResourceProfileResponseProto, error) {
	return nil, profilesDisabled()
}

// getResourceTypeInfo lists the cluster's resource types: memory-mb (Mi), vcores, then
// those resource-types.xml declares. 3.x clients call it when they start.
func (s *clientService) getResourceTypeInfo(context.Context, *yarnpb.GetAllResourceTypeInfoRequestProto) (*yarnpb.GetAllResourceTypeInfoResponseProto, error) {
	return &yarnpb.GetAllResourceTypeInfoResponseProto{ResourceTypeInfo: s.rm.Types().InfoProtos()}, nil
}

// updateApplicationPriority changes a running application's priority. As in 3.1.1, an
// application in a final state keeps its priority and the call succeeds with it.
func (s *clientService) updateApplicationPriority(ctx context.Context, req *yarnpb.UpdateApplicationPriorityRequestProto) (*yarnpb.UpdateApplicationPriorityResponseProto, error) {
	id, err := requireAppID(req.GetApplicationId())
	if err != nil {
		return nil, err
	}
	caller, _ := rpc.CallerFrom(ctx)
	if s.rm.AppExists(id) && !s.rm.MayModifyApp(caller.User, id) {
		return nil, rpc.Errorf(rpc.ClassAccessControl, "User %s cannot perform operation MODIFY_APP on %s", caller.User, id)
	}
	got, ok := s.rm.SetAppPriority(id, req.GetApplicationPriority().GetPriority(), caller.User)
	if !ok {
		return nil, rpc.Errorf(exceptions.ApplicationNotFound, "Trying to update priority of an absent application %s", id)
	}
	return &yarnpb.UpdateApplicationPriorityResponseProto{ApplicationPriority: &yarnpb.PriorityProto{Priority: proto.Int32(got)}}, nil
}

// updateApplicationTimeouts sets an application's lifetime to an absolute expiry time
// (ISO 8601, as `yarn application -updateLifetime` sends it). The lifetime monitor kills
// the application when it passes.
func (s *clientService) updateApplicationTimeouts(ctx context.Context, req *yarnpb.UpdateApplicationTimeoutsRequestProto) (*yarnpb.UpdateApplicationTimeoutsResponseProto, error) {
	id, err := requireAppID(req.GetApplicationId())
	if err != nil {
		return nil, err
	}
	now := s.rm.Now()
	expiries := map[yarnpb.ApplicationTimeoutTypeProto]int64{}
	for _, t := range req.GetApplicationTimeouts() {
		raw := t.GetExpireTime()
		at, err := time.Parse(rmstate.ISO8601, raw)
		if err != nil {
			return nil, rpc.Errorf(exceptions.YarnException, "Expire time is not in ISO8601 format. ISO8601 supported format is yyyy-MM-dd'T'HH:mm:ss.SSSZ. Configured timeout value is %s", raw)
		}
		if at.Before(now) {
			return nil, rpc.Errorf(exceptions.YarnException, "Expire time is less than current time, current-time=%s expire-time=%s", now.Format(rmstate.ISO8601), raw)
		}
		expiries[t.GetApplicationTimeoutType()] = at.UnixMilli()
	}
	if err := s.mayModify(ctx, id); err != nil {
		return nil, err
	}
	caller, _ := rpc.CallerFrom(ctx)
	if err := s.rm.UpdateTimeouts(id, expiries, caller.User); err != nil {
		return nil, err
	}
	return &yarnpb.UpdateApplicationTimeoutsResponseProto{ApplicationTimeouts: req.GetApplicationTimeouts()}, nil
}

// signalToContainer passes a signal (thread dump, graceful or forceful shutdown) to the
// container's NodeManager on its next heartbeat.
func (s *clientService) signalToContainer(ctx context.Context, req *yarnpb.SignalContainerRequestProto) (*yarnpb.SignalContainerResponseProto, error) {
	if req.GetContainerId() == nil {
		return nil, rpc.Errorf(exceptions.YarnException, "Invalid container id: null")
	}
	id := records.ContainerIDFromProto(req.GetContainerId())
	if !s.rm.AppExists(id.Attempt.App) {
		return nil, rpc.Errorf(exceptions.ApplicationNotFound, "Application %s does not exist in RM.", id.Attempt.App)
	}
	if err := s.mayModify(ctx, id.Attempt.App); err != nil {
		return nil, err
	}
	caller, _ := rpc.CallerFrom(ctx)
	if err := s.rm.SignalContainer(id, req.GetCommand(), caller.User); err != nil {
		return nil, err
	}
	return &yarnpb.SignalContainerResponseProto{}, nil
}

// failApplicationAttempt fails the application's current attempt (Core.FailAttempt).
func (s *clientService) failApplicationAttempt(ctx context.Context, req *yarnpb.FailApplicationAttemptRequestProto) (*yarnpb.FailApplicationAttemptResponseProto, error) {
	if req.GetApplicationAttemptId() == nil {
		return nil, rpc.Errorf(exceptions.ApplicationAttemptNotFound, "Invalid application attempt id: null")
	}
	att := records.AttemptIDFromProto(req.GetApplicationAttemptId())
	if err := s.mayModify(ctx, att.App); err != nil {
		return nil, err
	}
	caller, _ := rpc.CallerFrom(ctx)
	if err := s.rm.FailAttempt(att, caller.User); err != nil {
		return nil, err
	}
	return &yarnpb.FailApplicationAttemptResponseProto{}, nil
}

// reservationsDisabled is ClientRMService.checkReservationSystem's answer while
// yarn.resourcemanager.reservation-system.enable is false (Bobbin refuses to start with it
// true).
func reservationsDisabled() error {
	return rpc.Errorf(exceptions.YarnException, "Reservation is not enabled. Please enable & try again")
}
