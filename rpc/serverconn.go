package rpc

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"

	commonpb "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
	"github.com/bobbin-yarn/bobbin/rpc/sasl"
)

// httpOnIPCPort is what a Java IPC server answers to "GET " on its port.
const httpOnIPCPort = "HTTP/1.1 404 Not Found\r\n" +
	"Content-type: text/plain\r\n\r\n" +
	"It looks like you are making an HTTP request to a Hadoop IPC port. " +
	"This is not the correct port for the web interface on this daemon.\r\n"

// serverConn is one client connection. Its reader goroutine (serve) owns the handshake
// state; handler goroutines only write responses, serialised by writeMu so each packet goes
// out whole.
type serverConn struct {
	srv *Server
	nc  net.Conn
	br  *bufio.Reader
	log *logrus.Entry

	writeMu sync.Mutex
	calls   sync.WaitGroup // handlers running for this connection

	// Handshake state, owned by the reader goroutine.
	preamble     Preamble
	saslDone     bool
	digest       *sasl.Server
	gss          *sasl.GSSAPIServer // the KERBEROS exchange under way
	contextRead  bool
	authzCounted bool   // a refusal by ServerOptions.Authorize, already counted
	caller       Caller // template for every call on this connection

	// kept, when set, records the connection for a ConnKeeper; adopted: it was set up by
	// an earlier process and starts at its next frame.
	kept    KeptConn
	adopted bool

	// For the idle scan (Server.closeIdle), read without the reader's help: when the
	// connection last sent a frame (unix nanoseconds; its accept until then), and the
	// calls read and not yet answered.
	lastContact atomic.Int64
	inflight    atomic.Int32
	// handshakeBy is when the handshake must be done (its reads' deadline); zero once
	// the connection context is read. Owned by the reader.
	handshakeBy time.Time
	// budget is what the packet being processed holds of the server's ReadBudget; a call
	// dispatched from it takes it over (and gives it back when done). preAuthHeld is what
	// a frame read before the connection was established holds of the server's preAuth
	// budget, given back once it is processed. busy: the reader waits for budget or for a
	// body (the idle scan leaves it alone).
	budget      int64
	preAuthHeld int64
	busy        atomic.Bool

	// deadlineMu orders stopReading's deadline against the frame reader's: a stop is
	// never overwritten by a later body deadline.
	deadlineMu sync.Mutex
	stopOnce   sync.Once
	stopped    chan struct{}
	// answeredFatal: the connection ends on a fatal error the client was sent.
	answeredFatal bool

	// layer is the SASL security layer (nil: none, QOP authentication); set under
	// writeMu. unwrapped holds what tokens gave that does not make a whole frame yet.
	layer     Layer
	unwrapped []byte
}

// lingerClose ends a connection after a fatal answer so the client reads it: closing a
// socket with unread input makes TCP reset it, and the reset can overtake the answer.
// The write side is shut, and what the client still sends is read and dropped, for a
// bounded time and amount, before the socket is closed.
func (c *serverConn) lingerClose() {
	defer c.closeSocket()
	tc, ok := c.nc.(*net.TCPConn)
	if !ok {
		return
	}
	tc.CloseWrite()
	tc.SetReadDeadline(time.Now().Add(time.Second))
	io.Copy(io.Discard, io.LimitReader(c.br, 1<<20))
}

func newServerConn(s *Server, nc net.Conn) *serverConn {
	c := &serverConn{
		srv: s,
		nc:  nc,
		// The buffer only saves a read for the 4-byte length: a frame's body is read
		// straight into its own slice once it is larger than what is buffered. An RM
		// keeps one per NodeManager and AM (thousands), so it is small: 512 bytes hold
		// the length and the whole of a quiet heartbeat.
		br:      bufio.NewReaderSize(nc, 512),
		log:     s.log.WithField("remote", nc.RemoteAddr().String()),
		caller:  Caller{RemoteAddr: nc.RemoteAddr()},
		stopped: make(chan struct{}),
	}
	c.lastContact.Store(time.Now().UnixNano())
	return c
}

// closeSocket closes the connection. A kept one is shut down first: a keeper holds
// another descriptor of the socket, and only shutdown ends it for the client whatever
// other process holds it.
func (c *serverConn) closeSocket() {
	if tc, ok := c.nc.(*net.TCPConn); ok && c.kept != nil {
		tc.CloseRead()
		tc.CloseWrite()
	}
	c.nc.Close()
}

// stopReading makes the reader return at its next read; calls already read still answer.
func (c *serverConn) stopReading() {
	c.stopOnce.Do(func() {
		c.deadlineMu.Lock()
		defer c.deadlineMu.Unlock()
		close(c.stopped)
		c.nc.SetReadDeadline(time.Now())
	})
}

// setBodyDeadline sets the reads' deadline (a frame's body's progress, the handshake's
// end; zero: none), unless the connection is being stopped.
func (c *serverConn) setBodyDeadline(t time.Time) {
	c.deadlineMu.Lock()
	defer c.deadlineMu.Unlock()
	if !c.isStopped() {
		c.nc.SetReadDeadline(t)
	}
}

func (c *serverConn) isStopped() bool {
	select {
	case <-c.stopped:
		return true
	default:
		return false
	}
}

// serve runs the connection: preamble, then packets until EOF, a fatal error or shutdown.
// It waits for the connection's handlers before closing the socket, so every call that was
// read gets its answer.
func (c *serverConn) serve() {
	defer func() {
		c.calls.Wait()
		if c.answeredFatal {
			c.lingerClose()
		} else {
			c.closeSocket()
		}
		if c.kept != nil {
			c.kept.Closed() // after the last read: the slot may be reused at once
		}
	}()
	if !c.adopted {
		c.handshakeBy = time.Now().Add(c.srv.opts.Idle.MaxIdle)
		c.setBodyDeadline(c.handshakeBy)
		if err := c.readPreamble(); err != nil {
			c.fail(err)
			return
		}
	}
	for {
		packet, err := c.readFrame()
		if err != nil {
			if errors.Is(err, ErrFrameTooLarge) || errors.Is(err, ErrBadFrame) {
				c.fail(fatalf(commonpb.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER, ClassIOException, "%v", err))
				return
			}
			if re := (*RemoteError)(nil); errors.As(err, &re) {
				c.fail(re) // refused (the server is too busy for it)
				return
			}
			var ne net.Error
			switch {
			case !c.handshakeBy.IsZero() && errors.As(err, &ne) && ne.Timeout() && !c.isStopped():
				c.log.Info("IPC connection closed: no handshake within ipc.client.connection.maxidletime")
			case !c.isStopped() && err != io.EOF:
				c.log.WithError(err).Debug("IPC connection read ended")
			}
			return
		}
		c.srv.act.receivedBytes.Add(int64(len(packet)) + 4)
		process := c.processPacket
		if c.layer != nil {
			process = c.unwrapPacket
		}
		err = process(packet)
		c.srv.opts.ReadBudget.release(c.budget) // unless a call took it over
		c.budget = 0
		c.srv.preAuth.release(c.preAuthHeld)
		c.preAuthHeld = 0
		if err != nil {
			c.fail(err)
			return
		}
		if c.kept != nil && c.br.Buffered() == 0 {
			c.kept.Idle()
		}
	}
}

// fail answers a fatal error (when it is a *RemoteError) and logs it. The caller closes.
func (c *serverConn) fail(err error) {
	var re *RemoteError
	if errors.As(err, &re) {
		c.srv.errs.Inc(1)
		switch re.Class {
		case ClassSaslException, ClassInvalidToken:
			c.srv.act.authnFailed.Add(1)
		case ClassAccessControl:
			if !c.authzCounted {
				c.srv.act.authzFailed.Add(1)
			}
		}
		c.log.WithFields(logrus.Fields{"class": re.Class, "user": c.caller.User}).Warnf("IPC connection refused: %s", re.Message)
		callID := CallIDAuthFailed
		c.writeError(callID, nil, -1, re)
		c.answeredFatal = true
		return
	}
	if errors.Is(err, ErrHTTPRequest) {
		c.writeRaw([]byte(httpOnIPCPort))
		c.log.Warn("HTTP request on the IPC port refused")
		return
	}
	if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		c.log.WithError(err).Warn("IPC connection dropped")
	}
}

func (c *serverConn) readPreamble() error {
	p, err := ReadPreamble(c.br)
	if err != nil {
		if errors.Is(err, ErrBadMagic) {
			return fatalf(commonpb.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER, ClassRpcServerException,
				"Incorrect connection header: the connection does not start with \"hrpc\"")
		}
		return err
	}
	c.preamble = p
	if p.Version != CurrentVersion {
		return fatalf(commonpb.RpcResponseHeaderProto_FATAL_VERSION_MISMATCH, ClassVersionMismatch,
			"Server IPC version %d cannot communicate with client version %d", CurrentVersion, p.Version)
	}
	switch p.Auth {
	case AuthNone:
		if c.srv.opts.Kerberos != nil || c.srv.opts.SecretManager != nil && c.srv.opts.TokenRequired {
			return fatalf(commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, ClassAccessControl,
				"SIMPLE authentication is not enabled.  Available:%v", c.methodNames())
		}
		c.saslDone = true
		c.caller.Auth = AuthSimple
	case AuthSASL:
	default:
		return fatalf(commonpb.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER, ClassIOException,
			"Unknown auth protocol: %d", int8(p.Auth))
	}
	return nil
}

// processPacket handles one request packet on the reader goroutine. A returned error is
// fatal for the connection.
func (c *serverConn) processPacket(packet []byte) error {
	req, err := DecodeRequest(packet)
	if err != nil {
		return fatalf(commonpb.RpcResponseHeaderProto_FATAL_DESERIALIZING_REQUEST, ClassRpcServerException, "%v", err)
	}
	h := req.Header
	if h.RpcOp == nil {
		return fatalf(commonpb.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER, ClassRpcServerException, "IPC Server: No rpc op in rpcRequestHeader")
	}
	if h.GetRpcOp() != commonpb.RpcRequestHeaderProto_RPC_FINAL_PACKET {
		return fatalf(commonpb.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER, ClassRpcServerException,
			"IPC Server does not implement rpc header operation %v", h.GetRpcOp())
	}
	if h.RpcKind == nil {
		return fatalf(commonpb.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER, ClassRpcServerException, "IPC Server: No rpc kind in rpcRequestHeader")
	}
	switch id := h.GetCallId(); {
	case id == CallIDSASL:
		if c.preamble.Auth != AuthSASL || c.saslDone {
			return fatalf(commonpb.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER, ClassRpcServerException, "SASL message on a connection that is not negotiating SASL")
		}
		return c.processSASL(req.Payload)
	case id == CallIDConnectionContext:
		return c.processConnectionContext(req.Payload)
	case id == CallIDPing:
		return nil // keep-alive; never answered
	case id < 0:
		return fatalf(commonpb.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER, ClassRpcServerException, "Unknown out of band call #%d", id)
	}
	if !c.contextRead {
		return fatalf(commonpb.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER, ClassRpcServerException, "Connection context not established")
	}
	if h.GetRpcKind() != commonpb.RpcKindProto_RPC_PROTOCOL_BUFFER {
		return fatalf(commonpb.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER, ClassRpcServerException, "Unknown rpc kind %v", h.GetRpcKind())
	}
	rh := &commonpb.RequestHeaderProto{}
	body, err := ReadDelimited(req.Payload, rh)
	if err != nil {
		return fatalf(commonpb.RpcResponseHeaderProto_FATAL_DESERIALIZING_REQUEST, ClassRpcServerException, "Error decoding RequestHeaderProto: %v", err)
	}
	c.dispatch(h, rh, body)
	return nil
}

func (c *serverConn) processConnectionContext(payload []byte) error {
	if !c.saslDone {
		return fatalf(commonpb.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER, ClassRpcServerException, "Connection header sent during SASL negotiation")
	}
	if c.contextRead {
		return fatalf(commonpb.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER, ClassRpcServerException, "Connection context already processed")
	}
	cc := &commonpb.IpcConnectionContextProto{}
	if _, err := ReadDelimited(payload, cc); err != nil {
		return fatalf(commonpb.RpcResponseHeaderProto_FATAL_DESERIALIZING_REQUEST, ClassRpcServerException, "Error decoding IpcConnectionContextProto: %v", err)
	}
	c.caller.Protocol = cc.GetProtocol()
	ui := cc.GetUserInfo()
	switch c.caller.Auth {
	case AuthKerberos:
		// The Java client names its full principal; another name is an impersonation by
		// the authenticated user (Authorize decides on it as a proxy user).
		if eu := ui.GetEffectiveUser(); eu != "" && eu != c.caller.Principal && eu != c.caller.User {
			c.caller.RealUser, c.caller.User = c.caller.User, eu
		}
	case AuthToken:
		// The identity is the token's; a different effective user is an impersonation attempt.
		if eu := ui.GetEffectiveUser(); eu != "" && eu != c.caller.User {
			return fatalf(commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, ClassAccessControl,
				"Authenticated user (%s) doesn't match what the client claims to be (%s)", c.caller.User, eu)
		}
	default:
		if ui.GetEffectiveUser() == "" {
			return fatalf(commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, ClassAccessControl, "No user name in the connection context")
		}
		c.caller.User = ui.GetEffectiveUser()
		c.caller.RealUser = ui.GetRealUser()
	}
	if authz := c.srv.opts.Authorize; authz != nil {
		if err := authz(&c.caller); err != nil {
			var re *RemoteError
			if !errors.As(err, &re) {
				re = &RemoteError{Class: ClassAccessControl, Message: err.Error()}
			}
			re.Code, re.Fatal = commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, true
			c.srv.act.authzFailed.Add(1)
			c.authzCounted = true
			return re
		}
	}
	c.contextRead = true
	c.handshakeBy = time.Time{}
	c.setBodyDeadline(time.Time{})
	c.srv.act.authzOK.Add(1)
	if c.kept != nil {
		c.kept.Established(ConnState{SASL: c.preamble.Auth == AuthSASL, Auth: c.caller.Auth, User: c.caller.User,
			RealUser: c.caller.RealUser, TokenKind: c.caller.TokenKind, TokenID: c.caller.TokenID, Protocol: c.caller.Protocol})
	}
	c.log = c.log.WithFields(logrus.Fields{"user": c.caller.User, "auth": string(c.caller.Auth)})
	c.log.Debug("IPC connection established")
	return nil
}

// A frame's body must arrive within bodyTimeout plus a second for every minBodyRate
// bytes: a peer that announces a frame and trickles it would otherwise hold its share of
// the read budget for as long as it likes.
const (
	bodyTimeout = 30 * time.Second
	minBodyRate = 1 << 20
)

// readFrame reads one packet as ReadFrame does, with the server's limits.
//
// Before the connection is established a frame is at most PreAuthMaxFrame bytes, read as
// they arrive against the server's small unauthenticated budget, which it never waits
// for: when unauthenticated peers have spent it the frame is refused. They cannot make
// the server wait, nor hold the memory authenticated callers need.
//
// After, the frame's length is taken from the read budget first (waiting while it is
// spent: all of it at once, so that readers never each hold part of what they need and
// wait for the rest), memory is made as its bytes arrive, and a body that is not already
// buffered must arrive within its deadline. What it took is in c.budget; the connection
// is busy (never idle) while it waits or reads.
func (c *serverConn) readFrame() ([]byte, error) {
	var lb [4]byte
	if _, err := io.ReadFull(c.br, lb[:]); err != nil {
		return nil, err
	}
	c.lastContact.Store(time.Now().UnixNano())
	n := int(int32(binary.BigEndian.Uint32(lb[:])))
	limit := c.srv.opts.MaxDataLength
	if !c.contextRead {
		limit = min(limit, PreAuthMaxFrame)
	}
	switch {
	case n < 0:
		return nil, fmt.Errorf("%w: negative length %d", ErrBadFrame, n)
	case n > limit && !c.contextRead:
		return nil, fmt.Errorf("%w: RPC data length of %d before the connection is established exceeds %d", ErrFrameTooLarge, n, limit)
	case n > limit:
		return nil, fmt.Errorf("%w: RPC data length of %d exceeds maximum data length of %d", ErrFrameTooLarge, n, limit)
	}
	if !c.contextRead {
		return c.readBody(n, c.srv.preAuth, &c.preAuthHeld)
	}
	budget := c.srv.opts.ReadBudget
	if !budget.take(int64(n)) {
		c.busy.Store(true)
		ok := budget.acquire(int64(n), c.stopped)
		c.busy.Store(false)
		if !ok {
			return nil, io.EOF // stopping
		}
	}
	c.budget = int64(n)
	if c.br.Buffered() < n { // a body still to come: (the common small call is all here)
		c.busy.Store(true)
		c.setBodyDeadline(time.Now().Add(bodyTimeout + time.Duration(n/minBodyRate)*time.Second))
		defer func() {
			c.setBodyDeadline(c.handshakeBy)
			c.busy.Store(false)
		}()
	}
	buf, err := c.readBody(n, nil, nil)
	if err != nil {
		budget.release(c.budget)
		c.budget = 0
	}
	return buf, err
}

// readBody reads n bytes, making room as they arrive. With pool, room is made only once
// a byte that needs it is there (a peer that announces a frame and sends nothing holds
// nothing), starting small, and is taken from pool first, without waiting (held counts
// it; a spent pool refuses the frame).
func (c *serverConn) readBody(n int, pool *ReadBudget, held *int64) ([]byte, error) {
	var buf []byte
	first := readChunk
	if pool != nil {
		first = 4 << 10
	}
	for len(buf) < n {
		if len(buf) == cap(buf) {
			grow := min(n, max(2*cap(buf), first)) - cap(buf)
			if pool != nil {
				if _, err := c.br.Peek(1); err != nil {
					pool.release(*held)
					*held = 0
					return nil, unexpectedEOF(err)
				}
				if !pool.take(int64(grow)) {
					pool.release(*held)
					*held = 0
					return nil, fatalf(commonpb.RpcResponseHeaderProto_FATAL_UNKNOWN, ClassIOException,
						"Server too busy: too many bytes from connections not yet established")
				}
				*held += int64(grow)
			}
			bigger := make([]byte, len(buf), cap(buf)+grow)
			copy(bigger, buf)
			buf = bigger
		}
		k, err := c.br.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+k]
		if err != nil {
			if pool != nil {
				pool.release(*held)
				*held = 0
			}
			return nil, unexpectedEOF(err)
		}
	}
	return buf, nil
}
