// Package amclient is a Go ApplicationMaster's side of ApplicationMasterProtocol: register,
// allocate and finish over Hadoop IPC with the attempt's AMRMToken (DIGEST-MD5), keeping
// the rules a Java AMRMClient keeps — the absolute ask table sent as changes, the
// response-id sequence, re-registering and re-sending everything after
// ApplicationMasterNotRegisteredException, NMTokens cached per node, and switching to the
// new AMRMToken when the RM rolls its key. It talks to any YARN RM, Bobbin's or Apache's.
package amclient

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/rpc/token"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
	"github.com/bobbin-yarn/bobbin/yarn/protocol"
)

// Options configure a Client.
type Options struct {
	Addr  string       // yarn.resourcemanager.scheduler.address
	Token *token.Token // the attempt's AMRMToken
	User  string       // the connection's user name (the AM's user); informational
	// ConnectRetries and RetryInterval as in rpc.ClientOptions (negative retries: none;
	// zero interval: 1 s, Java's ipc.client.connect.retry.interval).
	ConnectRetries int
	RetryInterval  time.Duration
	Logger         *logrus.Entry
}

// Container is what an allocate handed out.
type Container = yarnpb.ContainerProto

type askKey struct {
	priority int32
	name     string
	memory   int64
	vcores   int32
}

// Client is one attempt's connection to the RM's scheduler port. Its methods may be called
// from several goroutines; calls are serialized, as an AM's heartbeat is.
type Client struct {
	opts Options

	mu         sync.Mutex
	conn       *rpc.Client
	token      *token.Token
	register   *yarnpb.RegisterApplicationMasterRequestProto // for re-registering
	responseID int32
	asks       map[askKey]*yarnpb.ResourceRequestProto
	changed    map[askKey]bool
	nmTokens   map[string]*token.Token
}

// New returns a client; nothing is dialled until the first call.
func New(opts Options) *Client {
	if opts.Logger == nil {
		opts.Logger = logrus.NewEntry(logrus.StandardLogger())
	}
	c := &Client{opts: opts, token: opts.Token, asks: map[askKey]*yarnpb.ResourceRequestProto{}, changed: map[askKey]bool{},
		nmTokens: map[string]*token.Token{}}
	c.conn = c.dial(opts.Token)
	return c
}

func (c *Client) dial(tok *token.Token) *rpc.Client {
	return rpc.NewClient(rpc.ClientOptions{Addr: c.opts.Addr, Protocol: protocol.ApplicationMaster, User: c.opts.User, Token: tok,
		ConnectRetries: c.opts.ConnectRetries, RetryInterval: c.opts.RetryInterval, Logger: c.opts.Logger})
}

// Close closes the connection.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn.Close()
}

// Register registers the attempt's AM (once per attempt).
func (c *Client) Register(ctx context.Context, host string, rpcPort int32, trackingURL string) (*yarnpb.RegisterApplicationMasterResponseProto, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.register = &yarnpb.RegisterApplicationMasterRequestProto{Host: proto.String(host), RpcPort: proto.Int32(rpcPort), TrackingUrl: proto.String(trackingURL)}
	return c.registerLocked(ctx)
}

func (c *Client) registerLocked(ctx context.Context) (*yarnpb.RegisterApplicationMasterResponseProto, error) {
	var resp yarnpb.RegisterApplicationMasterResponseProto
	if err := c.conn.Call(ctx, "registerApplicationMaster", c.register, &resp); err != nil {
		return nil, fmt.Errorf("registerApplicationMaster: %w", err)
	}
	c.responseID = 0
	return &resp, nil
}

// Request sets the number of containers outstanding for (priority, resource name,
// capability) — an absolute value, 0 cancels — as a ResourceRequest is in YARN. The
// change goes out with the next Allocate. resourceName is "*" (any), a rack or a host.
func (c *Client) Request(priority int32, resourceName string, memoryMB int64, vcores int32, count int32) {
	c.RequestLabelled(priority, resourceName, memoryMB, vcores, count, nil)
}

// RequestLabelled is Request with a node-label expression (nil: none, the request takes
// the application's or its queue's).
func (c *Client) RequestLabelled(priority int32, resourceName string, memoryMB int64, vcores int32, count int32, label *string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := askKey{priority, resourceName, memoryMB, vcores}
	c.asks[k] = &yarnpb.ResourceRequestProto{Priority: &yarnpb.PriorityProto{Priority: proto.Int32(priority)}, ResourceName: proto.String(resourceName),
		Capability: &yarnpb.ResourceProto{Memory: proto.Int64(memoryMB), VirtualCores: proto.Int32(vcores)}, NumContainers: proto.Int32(count),
		RelaxLocality: proto.Bool(true), NodeLabelExpression: label}
	c.changed[k] = true
}

// Allocate is one AM heartbeat: it sends the changed asks and returns the RM's answer.
// New NMTokens are cached (NMToken), a new AMRMToken is switched to, and the local ask
// table counts down the containers received. When the RM says the AM is not registered
// (it restarted, or lost the attempt's registration) the client registers again and
// re-sends its whole table.
func (c *Client) Allocate(ctx context.Context, progress float32) (*yarnpb.AllocateResponseProto, error) {
	return c.allocate(ctx, progress, nil)
}

// AllocateGranted is Allocate for a load generator: the granted containers and the
// completed statuses come back as Granted and Completed, read from the answer's bytes
// without building their messages (tokens and all), and not in the response; the
// NMTokens read that way are kept for NMToken as usual, and are not in the response
// either.
func (c *Client) AllocateGranted(ctx context.Context, progress float32) (*yarnpb.AllocateResponseProto, *Lean, error) {
	lean := &Lean{}
	resp, err := c.allocate(ctx, progress, lean)
	return resp, lean, err
}

// Lean is what AllocateGranted read from an answer without protobuf.
type Lean struct {
	Granted   []Granted
	Completed []Completed
}

func (c *Client) allocate(ctx context.Context, progress float32, lean *Lean) (*yarnpb.AllocateResponseProto, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.register == nil {
		return nil, errors.New("amclient: Allocate before Register")
	}
	resp, err := c.allocateLocked(ctx, progress, false, lean)
	if errors.Is(err, exceptions.ErrAMNotRegistered) {
		c.opts.Logger.Warn("the RM does not know this AM as registered: registering again and re-sending every request")
		if _, rerr := c.registerLocked(ctx); rerr != nil {
			return nil, rerr
		}
		resp, err = c.allocateLocked(ctx, progress, true, lean)
	}
	return resp, err
}

// allocateLocked makes the call; a non-nil lean receives the granted containers and
// completed statuses read without protobuf (AllocateGranted).
func (c *Client) allocateLocked(ctx context.Context, progress float32, everything bool, lean *Lean) (*yarnpb.AllocateResponseProto, error) {
	req := &yarnpb.AllocateRequestProto{ResponseId: proto.Int32(c.responseID), Progress: proto.Float32(progress)}
	keys := make([]askKey, 0, len(c.changed))
	for k := range c.asks {
		if everything || c.changed[k] {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].priority != keys[j].priority {
			return keys[i].priority < keys[j].priority
		}
		return keys[i].name < keys[j].name
	})
	for _, k := range keys {
		req.Ask = append(req.Ask, proto.Clone(c.asks[k]).(*yarnpb.ResourceRequestProto))
	}
	var resp yarnpb.AllocateResponseProto
	if lean != nil {
		raw := &rpc.Encoded{Message: &yarnpb.AllocateResponseProto{}}
		if err := c.conn.Call(ctx, "allocate", req, raw); err != nil {
			return nil, fmt.Errorf("allocate: %w", err)
		}
		var err error
		var tokens []nodeToken
		if lean.Granted, lean.Completed, tokens, err = decodeGranted(raw.Bytes, &resp); err != nil {
			return nil, fmt.Errorf("allocate: %w", err)
		}
		// Before any protobuf decoded below: an RM sends one token per node in an
		// answer, so the order between the two only matters to one that sends two.
		for _, t := range tokens {
			c.nmTokens[t.node] = t.token
		}
	} else if err := c.conn.Call(ctx, "allocate", req, &resp); err != nil {
		return nil, fmt.Errorf("allocate: %w", err)
	}
	c.responseID = resp.GetResponseId()
	clear(c.changed)
	for k, a := range c.asks {
		if a.GetNumContainers() == 0 {
			delete(c.asks, k)
		}
	}
	for _, t := range resp.GetNmTokens() {
		n := t.GetNodeId()
		c.nmTokens[fmt.Sprintf("%s:%d", n.GetHost(), n.GetPort())] = token.FromProto(t.GetToken())
	}
	for _, ctr := range resp.GetAllocatedContainers() {
		c.countDown(ctr.GetPriority().GetPriority(), ctr.GetResource().GetMemory(), ctr.GetResource().GetVirtualCores())
	}
	if lean != nil {
		for _, g := range lean.Granted {
			c.countDown(g.Priority, g.MemoryMB, g.VCores)
		}
	}
	if t := resp.GetAmRmToken(); t != nil {
		// The RM rolled its key: later connections authenticate with the new token.
		c.token = token.FromProto(t)
		old := c.conn
		c.conn = c.dial(c.token)
		old.Close()
		c.opts.Logger.Info("switched to the RM's new AMRMToken")
	}
	return &resp, nil
}

// countDown lowers the local "*" count a received container satisfies (the RM does the
// same with its copy), so a re-sent table does not ask for it again.
func (c *Client) countDown(p int32, memoryMB int64, vcores int32) {
	var best *yarnpb.ResourceRequestProto
	for k, a := range c.asks {
		if k.priority == p && k.name == "*" && a.GetNumContainers() > 0 &&
			k.memory <= memoryMB && k.vcores <= vcores {
			if best == nil || k.memory > best.GetCapability().GetMemory() {
				best = a
			}
		}
	}
	if best != nil {
		best.NumContainers = proto.Int32(best.GetNumContainers() - 1)
	}
}

// NMToken is the cached NMToken for a node ("host:port"), nil if none arrived.
func (c *Client) NMToken(node string) *token.Token {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nmTokens[node]
}

// Token is the AMRMToken the client currently uses.
func (c *Client) Token() *token.Token {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.token
}

// Finish unregisters with a final status, retrying until the RM says the AM is
// unregistered (as AMRMClient does, every 100 ms) or ctx ends.
func (c *Client) Finish(ctx context.Context, status yarnpb.FinalApplicationStatusProto, diagnostics, trackingURL string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	req := &yarnpb.FinishApplicationMasterRequestProto{FinalApplicationStatus: status.Enum(), Diagnostics: proto.String(diagnostics),
		TrackingUrl: proto.String(trackingURL)}
	for {
		var resp yarnpb.FinishApplicationMasterResponseProto
		err := c.conn.Call(ctx, "finishApplicationMaster", req, &resp)
		switch {
		case errors.Is(err, exceptions.ErrAMNotRegistered) && c.register != nil:
			if _, rerr := c.registerLocked(ctx); rerr != nil {
				return rerr
			}
			continue
		case err != nil:
			return fmt.Errorf("finishApplicationMaster: %w", err)
		case resp.GetIsUnregistered():
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// AMRMTokenFrom picks the AMRMToken out of credentials (the container's token file, or
// ContainerLaunchContext.tokens): the RM stores it under the empty alias.
func AMRMTokenFrom(creds *token.Credentials) (*token.Token, error) {
	if t, ok := creds.Tokens[""]; ok && t.Kind == token.KindAMRM {
		return t, nil
	}
	for _, t := range creds.Tokens {
		if t.Kind == token.KindAMRM {
			return t, nil
		}
	}
	return nil, errors.New("amclient: no YARN_AM_RM_TOKEN in the credentials")
}
