// Package rmclient is a typed Go client for the RM's ApplicationClientProtocol, over
// Bobbin's Hadoop IPC client. Tests, benchmarks and `bobbin client` use it.
package rmclient

import (
	"context"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/yarn/protocol"
)

// Client calls one RM.
type Client struct {
	c *rpc.Client
}

// New returns a client for the RM at addr acting as user.
func New(addr, user string, opts rpc.ClientOptions) *Client {
	opts.Addr, opts.Protocol, opts.User = addr, protocol.ApplicationClient, user
	return &Client{c: rpc.NewClient(opts)}
}

// Close closes the connection.
func (c *Client) Close() error { return c.c.Close() }

func call[Resp any, PResp interface {
	*Resp
	rpcMessage
}](ctx context.Context, c *Client, method string, req rpcMessage) (PResp, error) {
	resp := PResp(new(Resp))
	if err := c.c.Call(ctx, method, req, resp); err != nil {
		return nil, err
	}
	return resp, nil
}

// GetNewApplication asks for an application id.
func (c *Client) GetNewApplication(ctx context.Context) (*yarnpb.GetNewApplicationResponseProto, error) {
	return call[yarnpb.GetNewApplicationResponseProto](ctx, c, "getNewApplication", &yarnpb.GetNewApplicationRequestProto{})
}

// GetClusterMetrics returns the cluster metrics.
func (c *Client) GetClusterMetrics(ctx context.Context) (*yarnpb.YarnClusterMetricsProto, error) {
	r, err := call[yarnpb.GetClusterMetricsResponseProto](ctx, c, "getClusterMetrics", &yarnpb.GetClusterMetricsRequestProto{})
	return r.GetClusterMetrics(), err
}

// GetClusterNodes lists nodes in the given states (all states when none).
func (c *Client) GetClusterNodes(ctx context.Context, states ...yarnpb.NodeStateProto) ([]*yarnpb.NodeReportProto, error) {
	r, err := call[yarnpb.GetClusterNodesResponseProto](ctx, c, "getClusterNodes", &yarnpb.GetClusterNodesRequestProto{NodeStates: states})
	return r.GetNodeReports(), err
}

// GetQueueInfo describes a queue; nil when the RM does not know it.
func (c *Client) GetQueueInfo(ctx context.Context, req *yarnpb.GetQueueInfoRequestProto) (*yarnpb.QueueInfoProto, error) {
	r, err := call[yarnpb.GetQueueInfoResponseProto](ctx, c, "getQueueInfo", req)
	return r.GetQueueInfo(), err
}

// GetApplications lists applications.
func (c *Client) GetApplications(ctx context.Context, req *yarnpb.GetApplicationsRequestProto) ([]*yarnpb.ApplicationReportProto, error) {
	r, err := call[yarnpb.GetApplicationsResponseProto](ctx, c, "getApplications", req)
	return r.GetApplications(), err
}

// GetApplicationReport reports one application.
func (c *Client) GetApplicationReport(ctx context.Context, id *yarnpb.ApplicationIdProto) (*yarnpb.ApplicationReportProto, error) {
	r, err := call[yarnpb.GetApplicationReportResponseProto](ctx, c, "getApplicationReport", &yarnpb.GetApplicationReportRequestProto{ApplicationId: id})
	return r.GetApplicationReport(), err
}

// GetQueueUserAcls lists the caller's rights on every queue.
func (c *Client) GetQueueUserAcls(ctx context.Context) ([]*yarnpb.QueueUserACLInfoProto, error) {
	r, err := call[yarnpb.GetQueueUserAclsInfoResponseProto](ctx, c, "getQueueUserAcls", &yarnpb.GetQueueUserAclsInfoRequestProto{})
	return r.GetQueueUserAcls(), err
}

// Call makes any ApplicationClientProtocol call.
func (c *Client) Call(ctx context.Context, method string, req, resp rpcMessage) error {
	return c.c.Call(ctx, method, req, resp)
}

// rpcMessage is any protobuf request or response.
type rpcMessage = proto.Message
