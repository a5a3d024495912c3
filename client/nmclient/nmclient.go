// Package nmclient is a typed client of ContainerManagementProtocol, authenticating with
// the NMToken an AM received for the node: start, stop and query containers on any YARN
// NodeManager, Bobbin's or Apache's.
package nmclient

import (
	"context"
	"fmt"

	"github.com/sirupsen/logrus"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/rpc/token"
	"github.com/bobbin-yarn/bobbin/yarn/protocol"
)

// Client talks to one NodeManager.
type Client struct{ c *rpc.Client }

// New returns a client for the NM at addr ("host:port") with the NMToken for it; user is
// the attempt id, as Java AMs connect.
func New(addr, user string, nmToken *token.Token, logger *logrus.Entry) *Client {
	return NewProtected(addr, user, nmToken, 0, logger)
}

// NewProtected is New with the protections (sasl.QOP* mask, hadoop.rpc.protection) the
// client accepts on the token connection.
func NewProtected(addr, user string, nmToken *token.Token, qop byte, logger *logrus.Entry) *Client {
	return &Client{c: rpc.NewClient(rpc.ClientOptions{Addr: addr, Protocol: protocol.ContainerManagement, User: user, Token: nmToken, QOP: qop,
		ConnectRetries: 3, Logger: logger})}
}

// Close closes the connection.
func (c *Client) Close() error { return c.c.Close() }

// containerError is one container's failure inside a successful call, as the same
// *rpc.RemoteError a failed call returns (errors.Is works with yarn/exceptions' sentinels).
func containerError(f *yarnpb.ContainerExceptionMapProto) error {
	return rpc.Errorf(f.GetException().GetClassName(), "%s", f.GetException().GetMessage())
}

// Start starts one container with its launch context and the container token from the
// allocation. It returns the services' metadata (e.g. the shuffle port).
func (c *Client) Start(ctx context.Context, clc *yarnpb.ContainerLaunchContextProto, allocated *yarnpb.ContainerProto) (map[string][]byte, error) {
	var resp yarnpb.StartContainersResponseProto
	if err := c.c.Call(ctx, "startContainers", &yarnpb.StartContainersRequestProto{StartContainerRequest: []*yarnpb.StartContainerRequestProto{
		{ContainerLaunchContext: clc, ContainerToken: allocated.GetContainerToken()}}}, &resp); err != nil {
		return nil, fmt.Errorf("startContainers: %w", err)
	}
	if f := resp.GetFailedRequests(); len(f) > 0 {
		return nil, containerError(f[0])
	}
	meta := map[string][]byte{}
	for _, m := range resp.GetServicesMetaData() {
		meta[m.GetKey()] = m.GetValue()
	}
	return meta, nil
}

// Stop stops a container.
func (c *Client) Stop(ctx context.Context, id *yarnpb.ContainerIdProto) error {
	var resp yarnpb.StopContainersResponseProto
	if err := c.c.Call(ctx, "stopContainers", &yarnpb.StopContainersRequestProto{ContainerId: []*yarnpb.ContainerIdProto{id}}, &resp); err != nil {
		return fmt.Errorf("stopContainers: %w", err)
	}
	if f := resp.GetFailedRequests(); len(f) > 0 {
		return containerError(f[0])
	}
	return nil
}

// Status reports a container's status.
func (c *Client) Status(ctx context.Context, id *yarnpb.ContainerIdProto) (*yarnpb.ContainerStatusProto, error) {
	var resp yarnpb.GetContainerStatusesResponseProto
	if err := c.c.Call(ctx, "getContainerStatuses", &yarnpb.GetContainerStatusesRequestProto{ContainerId: []*yarnpb.ContainerIdProto{id}}, &resp); err != nil {
		return nil, fmt.Errorf("getContainerStatuses: %w", err)
	}
	if f := resp.GetFailedRequests(); len(f) > 0 {
		return nil, containerError(f[0])
	}
	if len(resp.GetStatus()) == 0 {
		return nil, fmt.Errorf("getContainerStatuses: no status for %v", id)
	}
	return resp.GetStatus()[0], nil
}

// LocalizationStatuses reports where the localization of a container's resources stands
// (Hadoop 3.3+).
func (c *Client) LocalizationStatuses(ctx context.Context, id *yarnpb.ContainerIdProto) ([]*yarnpb.LocalizationStatusProto, error) {
	var resp yarnpb.GetLocalizationStatusesResponseProto
	if err := c.c.Call(ctx, "getLocalizationStatuses", &yarnpb.GetLocalizationStatusesRequestProto{ContainerId: []*yarnpb.ContainerIdProto{id}}, &resp); err != nil {
		return nil, fmt.Errorf("getLocalizationStatuses: %w", err)
	}
	if f := resp.GetFailedRequests(); len(f) > 0 {
		return nil, containerError(f[0])
	}
	if len(resp.GetCntnLocalizationStatuses()) == 0 {
		return nil, fmt.Errorf("getLocalizationStatuses: no answer for %v", id)
	}
	return resp.GetCntnLocalizationStatuses()[0].GetLocalizationStatuses(), nil
}
