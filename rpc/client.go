package rpc

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	commonpb "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
	"github.com/bobbin-yarn/bobbin/rpc/token"
)

// ClientOptions configure a Client for one (address, protocol, user), as a Java
// Client.Connection is keyed.
type ClientOptions struct {
	Addr     string // host:port
	Protocol string // e.g. "org.apache.hadoop.yarn.server.api.ResourceTrackerPB"
	Version  uint64 // protocol version; 1 for every YARN protocol (the default)
	User     string // effective user for SIMPLE
	// RealUser, with SIMPLE, is the user acting for User (a proxy user: the server admits it
	// only when hadoop.proxyuser.<RealUser>.* allow it).
	RealUser string
	// Token, when set, is offered for TOKEN (DIGEST-MD5) authentication, and the client
	// opens with SASL as a Java client whose UGI holds tokens does.
	Token *token.Token
	// UseSASL opens with SASL even without a token (the server then picks SIMPLE).
	UseSASL bool
	// QOP is the protections this client accepts on TOKEN connections
	// (hadoop.rpc.protection as a sasl.QOP* mask; 0 means authentication).
	QOP byte
	// Kerberos, when set, is offered for KERBEROS (SASL GSSAPI) authentication; a server
	// that offers TOKEN first and a Token set still gets the token, as from Java.
	Kerberos *ClientKerberos
	// ConnectRetries is ipc.client.connect.max.retries (0 means 10; negative means none),
	// retried every RetryInterval (1 s).
	ConnectRetries int
	RetryInterval  time.Duration
	DialTimeout    time.Duration // ipc.client.connect.timeout, 20 s
	MaxDataLength  int
	Dial           func(ctx context.Context, network, addr string) (net.Conn, error)
	Logger         *logrus.Entry
}

// Client errors.
var (
	ErrClientClosed = errors.New("rpc: client closed")
	ErrConnLost     = errors.New("rpc: connection lost")
)

// Client makes calls on one protocol of one server. Many calls may be in flight at once on
// its single connection; it reconnects (with bounded retries) when the connection is lost.
type Client struct {
	opts     ClientOptions
	clientID []byte
	nextID   atomic.Int32
	log      *logrus.Entry

	mu     sync.Mutex
	conn   *clientConn
	closed bool
}

// NewClient returns a client; it connects on the first call.
func NewClient(opts ClientOptions) *Client {
	if opts.Version == 0 {
		opts.Version = 1
	}
	if opts.ConnectRetries == 0 {
		opts.ConnectRetries = 10
	}
	if opts.RetryInterval == 0 {
		opts.RetryInterval = time.Second
	}
	if opts.DialTimeout == 0 {
		opts.DialTimeout = 20 * time.Second
	}
	if opts.MaxDataLength == 0 {
		opts.MaxDataLength = DefaultMaxDataLength
	}
	if opts.Dial == nil {
		d := &net.Dialer{Timeout: opts.DialTimeout}
		opts.Dial = d.DialContext
	}
	if opts.Logger == nil {
		opts.Logger = logrus.NewEntry(logrus.StandardLogger())
	}
	id := make([]byte, 16)
	rand.Read(id)
	id[6] = id[6]&0x0f | 0x40 // a version-4 UUID, like Java's ClientId
	id[8] = id[8]&0x3f | 0x80
	return &Client{opts: opts, clientID: id, log: opts.Logger.WithFields(logrus.Fields{"server": opts.Addr, "protocol": opts.Protocol})}
}

// Call invokes method with req and decodes the answer into resp. Remote failures are
// *RemoteError. A call whose connection breaks fails with ErrConnLost; Call does not
// retry it, because the server may have executed it.
func (c *Client) Call(ctx context.Context, method string, req, resp proto.Message) error {
	conn, err := c.connection(ctx)
	if err != nil {
		return err
	}
	return conn.call(ctx, c, method, req, resp)
}

// Close closes the connection; calls in flight fail with ErrClientClosed.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	conn := c.conn
	c.conn = nil
	c.mu.Unlock()
	if conn != nil {
		conn.close(ErrClientClosed)
	}
	return nil
}

func (c *Client) connection(ctx context.Context) (*clientConn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClientClosed
	}
	if c.conn != nil && !c.conn.isDead() {
		return c.conn, nil
	}
	var lastErr error
	retries := max(c.opts.ConnectRetries, 0) // negative: no retries
	for attempt := 0; attempt <= retries; attempt++ {
		if attempt > 0 {
			c.log.WithError(lastErr).Debugf("retrying connect (%d/%d)", attempt, retries)
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(c.opts.RetryInterval):
			}
		}
		conn, err := c.dial(ctx)
		if err == nil {
			c.conn = conn
			return conn, nil
		}
		lastErr = err
		var re *RemoteError
		if errors.As(err, &re) || ctx.Err() != nil {
			return nil, err // refused by the server, not a connect failure: do not retry
		}
	}
	return nil, fmt.Errorf("rpc: connect to %s after %d retries: %w", c.opts.Addr, retries, lastErr)
}

// dial connects and runs the handshake: preamble, SASL if configured, connection context.
func (c *Client) dial(ctx context.Context) (*clientConn, error) {
	nc, err := c.opts.Dial(ctx, "tcp", c.opts.Addr)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		nc.SetDeadline(dl)
	} else {
		nc.SetDeadline(time.Now().Add(c.opts.DialTimeout))
	}
	conn := &clientConn{nc: nc, br: bufio.NewReader(nc), pending: map[int32]chan callResult{}, dead: make(chan struct{}), maxData: c.opts.MaxDataLength}
	if err := c.handshake(conn); err != nil {
		nc.Close()
		return nil, fmt.Errorf("rpc: handshake with %s: %w", c.opts.Addr, err)
	}
	nc.SetDeadline(time.Time{})
	go conn.readLoop()
	return conn, nil
}

func (c *Client) handshake(conn *clientConn) error {
	useSASL := c.opts.Token != nil || c.opts.UseSASL || c.opts.Kerberos != nil
	auth := byte(AuthNone)
	if useSASL {
		auth = AuthSASL
	}
	out := Preamble{Version: CurrentVersion, Auth: auth}.Bytes()
	method := AuthSimple
	if useSASL {
		var err error
		if method, err = c.saslHandshake(conn, out); err != nil {
			return err
		}
		out = nil
	}
	// As Java's ProtoUtil.makeIpcConnectionContext: SIMPLE names the user (and a proxy's
	// real user), KERBEROS the full principal, TOKEN nobody (the token does).
	ui := &commonpb.UserInformationProto{}
	switch method {
	case AuthSimple:
		ui.EffectiveUser = proto.String(c.opts.User)
		if c.opts.RealUser != "" {
			ui.RealUser = proto.String(c.opts.RealUser)
		}
	case AuthKerberos:
		ui.EffectiveUser = proto.String(c.opts.Kerberos.Principal())
	}
	cc := &commonpb.IpcConnectionContextProto{UserInfo: ui, Protocol: proto.String(c.opts.Protocol)}
	pkt, err := AppendFrame(nil, c.header(CallIDConnectionContext, -1), cc)
	if err != nil {
		return err
	}
	if len(out) > 0 { // no SASL: the preamble goes with it, as one write
		_, err = conn.nc.Write(append(out, pkt...))
		return err
	}
	return conn.write(pkt)
}

func (c *Client) header(callID, retry int32) *commonpb.RpcRequestHeaderProto {
	return &commonpb.RpcRequestHeaderProto{
		RpcKind:    commonpb.RpcKindProto_RPC_PROTOCOL_BUFFER.Enum(),
		RpcOp:      commonpb.RpcRequestHeaderProto_RPC_FINAL_PACKET.Enum(),
		CallId:     proto.Int32(callID),
		ClientId:   c.clientID,
		RetryCount: proto.Int32(retry),
	}
}

type callResult struct {
	header *commonpb.RpcResponseHeaderProto
	body   []byte
	err    error
}

// clientConn is one established connection. readLoop owns reads; callers register in
// pending and write whole packets under writeMu.
type clientConn struct {
	nc      net.Conn
	br      *bufio.Reader
	maxData int
	writeMu sync.Mutex

	// layer is the SASL security layer agreed in the handshake (nil: none); fixed before
	// the read loop starts. unwrapped holds token bytes not yet a whole frame.
	layer     Layer
	unwrapped []byte

	mu      sync.Mutex
	pending map[int32]chan callResult
	err     error
	dead    chan struct{}
}

func (cc *clientConn) isDead() bool {
	select {
	case <-cc.dead:
		return true
	default:
		return false
	}
}

func (cc *clientConn) call(ctx context.Context, c *Client, method string, req, resp proto.Message) error {
	id := c.nextID.Add(1) & 0x7fffffff
	rh := &commonpb.RequestHeaderProto{MethodName: proto.String(method), DeclaringClassProtocolName: proto.String(c.opts.Protocol), ClientProtocolVersion: proto.Uint64(c.opts.Version)}
	pkt, err := AppendFrame(nil, c.header(id, 0), rh, req)
	if err != nil {
		return fmt.Errorf("rpc: encode %s: %w", method, err)
	}
	ch := make(chan callResult, 1)
	cc.mu.Lock()
	if cc.err != nil {
		cc.mu.Unlock()
		return cc.err
	}
	cc.pending[id] = ch
	cc.mu.Unlock()
	err = cc.write(pkt)
	if err != nil {
		cc.close(fmt.Errorf("%w: %v", ErrConnLost, err))
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return r.err
		}
		if r.header.GetStatus() != commonpb.RpcResponseHeaderProto_SUCCESS {
			return remoteError(r.header)
		}
		if _, err := ReadDelimited(r.body, resp); err != nil {
			return fmt.Errorf("rpc: decode %s response: %w", method, err)
		}
		return nil
	case <-ctx.Done():
		cc.mu.Lock()
		delete(cc.pending, id)
		cc.mu.Unlock()
		return ctx.Err()
	}
}

func (cc *clientConn) readLoop() {
	for {
		pkt, err := cc.readFrame()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			cc.close(fmt.Errorf("%w: %v", ErrConnLost, err))
			return
		}
		h, body, err := DecodeResponse(pkt)
		if err != nil {
			cc.close(fmt.Errorf("%w: %v", ErrConnLost, err))
			return
		}
		if h.GetStatus() == commonpb.RpcResponseHeaderProto_FATAL {
			// FATAL fails every outstanding call and ends the connection.
			cc.close(remoteError(h))
			return
		}
		id := int32(h.GetCallId())
		cc.mu.Lock()
		ch, ok := cc.pending[id]
		delete(cc.pending, id)
		cc.mu.Unlock()
		if ok {
			ch <- callResult{header: h, body: body}
		}
	}
}

func (cc *clientConn) close(err error) {
	cc.mu.Lock()
	if cc.err != nil {
		cc.mu.Unlock()
		return
	}
	cc.err = err
	pending := cc.pending
	cc.pending = map[int32]chan callResult{}
	close(cc.dead)
	cc.mu.Unlock()
	cc.nc.Close()
	for _, ch := range pending {
		ch <- callResult{err: err}
	}
}

func remoteError(h *commonpb.RpcResponseHeaderProto) *RemoteError {
	return &RemoteError{Class: h.GetExceptionClassName(), Message: h.GetErrorMsg(), Code: h.GetErrorDetail(),
		Fatal: h.GetStatus() == commonpb.RpcResponseHeaderProto_FATAL}
}
