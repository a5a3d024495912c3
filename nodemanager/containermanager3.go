package nodemanager

// The Hadoop 3.x calls of ContainerManagementProtocol. Signals work (from an AM directly,
// or from the RM's heartbeat for `yarn container -signal`); changing a running container —
// resizing it, re-initializing, restarting, rolling back, localizing more — is not
// something Bobbin's NodeManager does, and each such call says so for its container.

import (
	"context"
	"fmt"
	"syscall"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/container"
	commonpb "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
)

// signalOf is the signal the Java NM sends for a SignalContainerCommand
// (ContainerLaunch.translateCommandToSignal).
func signalOf(cmd yarnpb.SignalContainerCommandProto) (syscall.Signal, bool) {
	switch cmd {
	case yarnpb.SignalContainerCommandProto_OUTPUT_THREAD_DUMP:
		return syscall.SIGQUIT, true
	case yarnpb.SignalContainerCommandProto_GRACEFUL_SHUTDOWN:
		return syscall.SIGTERM, true
	case yarnpb.SignalContainerCommandProto_FORCEFUL_SHUTDOWN:
		return syscall.SIGKILL, true
	}
	return 0, false
}

// signal sends cmd's signal to a running container's process group. The container is not
// stopped by the NodeManager: if the signal ends it, its exit is reported as usual.
func (nm *NodeManager) signal(id records.ContainerID, cmd yarnpb.SignalContainerCommandProto) error {
	sig, ok := signalOf(cmd)
	if !ok {
		return fmt.Errorf("unknown signal command %v", cmd)
	}
	v, known := nm.table.View(id)
	proc := v.Proc
	if !known {
		return fmt.Errorf("Container %s is not handled by this NodeManager", id)
	}
	if proc == nil {
		return fmt.Errorf("container %s is not running", id)
	}
	s, ok := proc.(container.Signaler)
	if !ok {
		return fmt.Errorf("container %s: its executor cannot signal a running container", id)
	}
	if err := s.Signal(sig); err != nil {
		return err
	}
	nm.log.WithFields(map[string]any{"container": id.String(), "application": id.Attempt.App.String(), "signal": cmd.String()}).Info("container signalled")
	return nil
}

func (m *containerManager) signalToContainer(ctx context.Context, req *yarnpb.SignalContainerRequestProto) (*yarnpb.SignalContainerResponseProto, error) {
	who, err := m.caller(ctx)
	if err != nil {
		return nil, err
	}
	id := records.ContainerIDFromProto(req.GetContainerId())
	if err := m.authorizeFor(who, id); err != nil {
		return nil, rpc.Errorf(exceptions.YarnException, "%v", err)
	}
	if err := m.nm.signal(id, req.GetCommand()); err != nil {
		return nil, rpc.Errorf(exceptions.YarnException, "%v", err)
	}
	return &yarnpb.SignalContainerResponseProto{}, nil
}

// notChanged is the answer for a request to change a running container.
func notChanged(what string) error {
	return rpc.Errorf(exceptions.YarnException, "%s is not supported by Bobbin's NodeManager: containers keep the resources and launch context they started with", what)
}

// updateContainer (and the older increaseContainersResource) fail every container, as
// the Java NM reports per-container failures.
func (m *containerManager) updateContainer(ctx context.Context, req *yarnpb.ContainerUpdateRequestProto) (*yarnpb.ContainerUpdateResponseProto, error) {
	if _, err := m.caller(ctx); err != nil {
		return nil, err
	}
	return &yarnpb.ContainerUpdateResponseProto{FailedRequests: m.updateFailures(req.GetUpdateContainerToken())}, nil
}

func (m *containerManager) increaseContainersResource(ctx context.Context, req *yarnpb.IncreaseContainersResourceRequestProto) (*yarnpb.IncreaseContainersResourceResponseProto, error) {
	if _, err := m.caller(ctx); err != nil {
		return nil, err
	}
	return &yarnpb.IncreaseContainersResourceResponseProto{FailedRequests: m.updateFailures(req.GetIncreaseContainers())}, nil
}

func (m *containerManager) updateFailures(toks []*commonpb.TokenProto) []*yarnpb.ContainerExceptionMapProto {
	var out []*yarnpb.ContainerExceptionMapProto
	for _, t := range toks {
		var ident yarnpb.ContainerTokenIdentifierProto
		if proto.Unmarshal(t.GetIdentifier(), &ident) != nil || ident.GetContainerId() == nil {
			out = append(out, failure(nil, rpc.ClassInvalidToken, "Invalid container token"))
			continue
		}
		out = append(out, failure(ident.GetContainerId(), exceptions.YarnException,
			"Updating the resource of container %s is not supported by Bobbin's NodeManager", records.ContainerIDFromProto(ident.GetContainerId())))
	}
	return out
}

func (m *containerManager) localize(ctx context.Context, _ *yarnpb.ResourceLocalizationRequestProto) (*yarnpb.ResourceLocalizationResponseProto, error) {
	if _, err := m.caller(ctx); err != nil {
		return nil, err
	}
	return nil, notChanged("Localizing resources for a running container")
}

func (m *containerManager) reInitializeContainer(ctx context.Context, _ *yarnpb.ReInitializeContainerRequestProto) (*yarnpb.ReInitializeContainerResponseProto, error) {
	if _, err := m.caller(ctx); err != nil {
		return nil, err
	}
	return nil, notChanged("Re-initializing a container")
}

func (m *containerManager) restartContainer(ctx context.Context, _ *yarnpb.ContainerIdProto) (*yarnpb.RestartContainerResponseProto, error) {
	if _, err := m.caller(ctx); err != nil {
		return nil, err
	}
	return nil, notChanged("Restarting a container")
}

func (m *containerManager) rollbackLastReInitialization(ctx context.Context, _ *yarnpb.ContainerIdProto) (*yarnpb.RollbackResponseProto, error) {
	if _, err := m.caller(ctx); err != nil {
		return nil, err
	}
	return nil, notChanged("Rolling back a container's re-initialization")
}

func (m *containerManager) commitLastReInitialization(ctx context.Context, _ *yarnpb.ContainerIdProto) (*yarnpb.CommitResponseProto, error) {
	if _, err := m.caller(ctx); err != nil {
		return nil, err
	}
	return nil, notChanged("Committing a container's re-initialization")
}
