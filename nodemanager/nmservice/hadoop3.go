package nmservice

// The Hadoop 3.x calls of ContainerManagementProtocol. Signals work (from an AM directly,
// or from the RM's heartbeat for `yarn container -signal`); changing a running container —
// resizing it, re-initializing, restarting, rolling back, localizing more — is not
// something Bobbin's NodeManager does, and each such call says so for its container.

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/proto"

	commonpb "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
)

func (m *service) signalToContainer(ctx context.Context, req *yarnpb.SignalContainerRequestProto) (*yarnpb.SignalContainerResponseProto, error) {
	who, err := m.caller(ctx)
	if err != nil {
		return nil, err
	}
	if err := m.node.Signal(who, records.ContainerIDFromProto(req.GetContainerId()), req.GetCommand()); err != nil {
		return nil, callError(err)
	}
	return &yarnpb.SignalContainerResponseProto{}, nil
}

// notChanged is the answer for a request to change a running container.
func notChanged(what string) error {
	return rpc.Errorf(exceptions.YarnException, "%s is not supported by Bobbin's NodeManager: containers keep the resources and launch context they started with", what)
}

// updateContainer (and the older increaseContainersResource) fail every container, as
// the Java NM reports per-container failures.
func (m *service) updateContainer(ctx context.Context, req *yarnpb.ContainerUpdateRequestProto) (*yarnpb.ContainerUpdateResponseProto, error) {
	if _, err := m.caller(ctx); err != nil {
		return nil, err
	}
	return &yarnpb.ContainerUpdateResponseProto{FailedRequests: m.updateFailures(req.GetUpdateContainerToken())}, nil
}

func (m *service) increaseContainersResource(ctx context.Context, req *yarnpb.IncreaseContainersResourceRequestProto) (*yarnpb.IncreaseContainersResourceResponseProto, error) {
	if _, err := m.caller(ctx); err != nil {
		return nil, err
	}
	return &yarnpb.IncreaseContainersResourceResponseProto{FailedRequests: m.updateFailures(req.GetIncreaseContainers())}, nil
}

func (m *service) updateFailures(toks []*commonpb.TokenProto) []*yarnpb.ContainerExceptionMapProto {
	var out []*yarnpb.ContainerExceptionMapProto
	for _, t := range toks {
		var ident yarnpb.ContainerTokenIdentifierProto
		if proto.Unmarshal(t.GetIdentifier(), &ident) != nil || ident.GetContainerId() == nil {
			out = append(out, failure(nil, rpc.ClassInvalidToken, "Invalid container token"))
			continue
		}
		out = append(out, failure(ident.GetContainerId(), exceptions.YarnException,
			fmt.Sprintf("Updating the resource of container %s is not supported by Bobbin's NodeManager", records.ContainerIDFromProto(ident.GetContainerId()))))
	}
	return out
}

func (m *service) localize(ctx context.Context, _ *yarnpb.ResourceLocalizationRequestProto) (*yarnpb.ResourceLocalizationResponseProto, error) {
	if _, err := m.caller(ctx); err != nil {
		return nil, err
	}
	return nil, notChanged("Localizing resources for a running container")
}

func (m *service) reInitializeContainer(ctx context.Context, _ *yarnpb.ReInitializeContainerRequestProto) (*yarnpb.ReInitializeContainerResponseProto, error) {
	if _, err := m.caller(ctx); err != nil {
		return nil, err
	}
	return nil, notChanged("Re-initializing a container")
}

func (m *service) restartContainer(ctx context.Context, _ *yarnpb.ContainerIdProto) (*yarnpb.RestartContainerResponseProto, error) {
	if _, err := m.caller(ctx); err != nil {
		return nil, err
	}
	return nil, notChanged("Restarting a container")
}

func (m *service) rollbackLastReInitialization(ctx context.Context, _ *yarnpb.ContainerIdProto) (*yarnpb.RollbackResponseProto, error) {
	if _, err := m.caller(ctx); err != nil {
		return nil, err
	}
	return nil, notChanged("Rolling back a container's re-initialization")
}

func (m *service) commitLastReInitialization(ctx context.Context, _ *yarnpb.ContainerIdProto) (*yarnpb.CommitResponseProto, error) {
	if _, err := m.caller(ctx); err != nil {
		return nil, err
	}
	return nil, notChanged("Committing a container's re-initialization")
}
