package rmcore

import (
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
)

// Container updates (3.x UpdateContainerRequests in allocate: increase or decrease a
// container's resources, promote or demote its execution type) are not served: a
// container keeps what it was allocated with. Each request gets an update error, never
// silence, with the Java RM's reason where the request is invalid there too
// (RMServerUtils: INVALID_CONTAINER_ID for a container that is not the attempt's live
// one, INCORRECT_CONTAINER_VERSION_ERROR for a version other than the container's, which
// is always 0 here) and UpdateNotServed for a valid one. The AMRM client passes the
// error to the AM's onContainerUpdateError (AMRMClientAsync) and the application goes
// on with the container as it is.

// UpdateNotServed is the update error's reason for a valid request Bobbin does not carry out.
const UpdateNotServed = "UPDATE_NOT_SUPPORTED_BY_BOBBIN"

// The Java RM's reasons (RMServerUtils).
const (
	updateInvalidContainer  = "INVALID_CONTAINER_ID"
	updateIncorrectVersion  = "INCORRECT_CONTAINER_VERSION_ERROR"
	containerVersionCurrent = 0 // no container is ever updated
)

// UpdateErrors answers an allocate call's update requests.
func (rm *Core) UpdateErrors(att records.AttemptID, reqs []*yarnpb.UpdateContainerRequestProto) []*yarnpb.UpdateContainerErrorProto {
	if len(reqs) == 0 {
		return nil
	}
	out := make([]*yarnpb.UpdateContainerErrorProto, 0, len(reqs))
	for _, r := range reqs {
		e := &yarnpb.UpdateContainerErrorProto{UpdateRequest: r}
		id := records.ContainerIDFromProto(r.GetContainerId())
		_, live := rm.containers.LiveReport(id)
		switch {
		case r.GetContainerId() == nil || id.Attempt.App != att.App || !live:
			e.Reason = ptr(updateInvalidContainer)
		case r.GetContainerVersion() != containerVersionCurrent:
			e.Reason, e.CurrentContainerVersion = ptr(updateIncorrectVersion), ptr(int32(containerVersionCurrent))
		default:
			e.Reason = ptr(UpdateNotServed)
		}
		rm.log.WithFields(map[string]any{"attempt": att.String(), "container": id.String(), "update_type": r.GetUpdateType().String(), "reason": e.GetReason()}).
			Warn("container update refused: Bobbin does not change a container's resources or execution type")
		out = append(out, e)
	}
	return out
}

func ptr[T any](v T) *T { return &v }
