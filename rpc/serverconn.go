package rpc

import (
	"bufio"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

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
	preamble    Preamble
	saslDone    bool
	digest      *sasl.Server
	contextRead bool
	caller      Caller // template for every call on this connection

	stopOnce sync.Once
	stopped  chan struct{}
	// answeredFatal: the connection ends on a fatal error the client was sent.
	answeredFatal bool
}

// lingerClose ends a connection after a fatal answer so the client reads it: closing a
// socket with unread input makes TCP reset it, and the reset can overtake the answer.
// The write side is shut, and what the client still sends is read and dropped, for a
// bounded time and amount, before the socket is closed.
func (c *serverConn) lingerClose() {
	defer c.nc.Close()
	tc, ok := c.nc.(*net.TCPConn)
	if !ok {
		return
	}
	tc.CloseWrite()
	tc.SetReadDeadline(time.Now().Add(time.Second))
	io.Copy(io.Discard, io.LimitReader(c.br, 1<<20))
}

func newServerConn(s *Server, nc net.Conn) *serverConn {
	return &serverConn{
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
}

// stopReading makes the reader return at its next read; calls already read still answer.
func (c *serverConn) stopReading() {
	c.stopOnce.Do(func() {
		close(c.stopped)
		c.nc.SetReadDeadline(time.Now())
	})
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
			return
		}
		c.nc.Close()
	}()
	if err := c.readPreamble(); err != nil {
		c.fail(err)
		return
	}
	for {
		packet, err := ReadFrame(c.br, c.srv.opts.MaxDataLength)
		if err != nil {
			if errors.Is(err, ErrFrameTooLarge) || errors.Is(err, ErrBadFrame) {
				c.fail(fatalf(commonpb.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER, ClassIOException, "%v", err))
				return
			}
			if !c.isStopped() && err != io.EOF {
				c.log.WithError(err).Debug("IPC connection read ended")
			}
			return
		}
		if err := c.processPacket(packet); err != nil {
			c.fail(err)
			return
		}
	}
}

// fail answers a fatal error (when it is a *RemoteError) and logs it. The caller closes.
func (c *serverConn) fail(err error) {
	var re *RemoteError
	if errors.As(err, &re) {
		c.srv.errs.Inc(1)
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
		if c.srv.opts.SecretManager != nil && c.srv.opts.TokenRequired {
			return fatalf(commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, ClassAccessControl,
				"SIMPLE authentication is not enabled.  Available:[TOKEN]")
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
	c.contextRead = true
	c.log = c.log.WithFields(logrus.Fields{"user": c.caller.User, "auth": string(c.caller.Auth)})
	c.log.Debug("IPC connection established")
	return nil
}

// dispatch runs one call on a handler goroutine, waiting for a free handler first; the
// wait is the server's back-pressure on readers.
func (c *serverConn) dispatch(h *commonpb.RpcRequestHeaderProto, rh *commonpb.RequestHeaderProto, body []byte) {
	caller := c.caller
	caller.Method = rh.GetMethodName()
	caller.CallID = h.GetCallId()
	caller.ClientID = h.GetClientId()
	caller.RetryCount = h.GetRetryCount()
	c.srv.handlers <- struct{}{}
	c.calls.Add(1)
	go func() {
		defer func() {
			<-c.srv.handlers
			c.calls.Done()
		}()
		c.runCall(&caller, rh, body)
	}()
}

func (c *serverConn) runCall(caller *Caller, rh *commonpb.RequestHeaderProto, body []byte) {
	start := time.Now()
	protoName := rh.GetDeclaringClassProtocolName()
	resp, err := c.invoke(caller, rh, body)
	if err == nil {
		c.srv.timer(protoName, caller.Method).UpdateSince(start)
		c.writeSuccess(caller, resp)
		return
	}
	var re *RemoteError
	if !errors.As(err, &re) {
		// An untyped handler error still reaches Java as an exception it can rebuild.
		re = Errorf(c.srv.opts.ErrorClass, "%v", err)
	}
	c.srv.errs.Inc(1)
	c.log.WithFields(logrus.Fields{"method": caller.Method, "call": caller.CallID, "class": re.Class}).Debugf("IPC call failed: %s", re.Message)
	c.writeError(caller.CallID, caller.ClientID, caller.RetryCount, re)
}

func (c *serverConn) invoke(caller *Caller, rh *commonpb.RequestHeaderProto, body []byte) (m proto.Message, err error) {
	defer func() {
		// A handler bug must cost one call, not the server.
		if r := recover(); r != nil {
			c.log.WithField("method", caller.Method).Errorf("IPC handler panic: %v", r)
			m, err = nil, &RemoteError{Class: ClassRpcServerException, Message: fmt.Sprintf("internal error in %s: %v", caller.Method, r), Code: commonpb.RpcResponseHeaderProto_ERROR_RPC_SERVER}
		}
	}()
	p, ok := c.srv.protocols[rh.GetDeclaringClassProtocolName()]
	if !ok {
		return nil, &RemoteError{Class: ClassRpcNoSuchProtocol, Code: commonpb.RpcResponseHeaderProto_ERROR_NO_SUCH_PROTOCOL,
			Message: fmt.Sprintf("Unknown protocol: %s", rh.GetDeclaringClassProtocolName())}
	}
	if rh.GetClientProtocolVersion() != p.Version {
		return nil, &RemoteError{Class: ClassVersionMismatch, Code: commonpb.RpcResponseHeaderProto_ERROR_RPC_VERSION_MISMATCH,
			Message: fmt.Sprintf("Protocol %s version mismatch. (client = %d, server = %d)", p.Name, rh.GetClientProtocolVersion(), p.Version)}
	}
	meth, ok := p.Methods[caller.Method]
	if !ok {
		return nil, &RemoteError{Class: ClassRpcNoSuchMethod, Code: commonpb.RpcResponseHeaderProto_ERROR_NO_SUCH_METHOD,
			Message: fmt.Sprintf("Unknown method %s called on %s protocol.", caller.Method, p.Name)}
	}
	req := meth.newRequest()
	if _, err := ReadDelimited(body, req); err != nil {
		return nil, &RemoteError{Class: ClassRpcServerException, Code: commonpb.RpcResponseHeaderProto_ERROR_RPC_SERVER,
			Message: fmt.Sprintf("Error decoding request of %s: %v", caller.Method, err)}
	}
	ctx := WithCaller(c.srv.baseCtx, caller)
	return meth.handle(ctx, req)
}

// processSASL handles one SASL message (callId -33). See protocol.md §2.1.
func (c *serverConn) processSASL(payload []byte) error {
	msg := &commonpb.RpcSaslProto{}
	if _, err := ReadDelimited(payload, msg); err != nil {
		return fatalf(commonpb.RpcResponseHeaderProto_FATAL_DESERIALIZING_REQUEST, ClassSaslException, "Error decoding RpcSaslProto: %v", err)
	}
	sm := c.srv.opts.SecretManager
	switch msg.GetState() {
	case commonpb.RpcSaslProto_NEGOTIATE:
		c.log.WithField("token_auth", sm != nil).Debug("SASL negotiation")
		if sm == nil {
			// SIMPLE-only: SUCCESS tells the client to fall back to SIMPLE.
			c.saslDone = true
			c.caller.Auth = AuthSimple
			return c.writeSASL(&commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_SUCCESS.Enum()})
		}
		c.digest = sasl.NewServer()
		return c.writeSASL(&commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_NEGOTIATE.Enum(), Auths: c.advertised(true)})
	case commonpb.RpcSaslProto_INITIATE:
		if len(msg.GetAuths()) == 0 {
			return fatalf(commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, ClassSaslException, "Client mechanism is malformed")
		}
		chosen := msg.GetAuths()[0]
		if !c.offers(chosen) {
			return fatalf(commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, ClassAccessControl,
				"Client mechanism is not supported: %s/%s. Available:%v", chosen.GetMethod(), chosen.GetMechanism(), c.methodNames())
		}
		if chosen.GetMethod() == string(AuthSimple) {
			c.saslDone = true // SIMPLE: no reply; the connection context follows
			c.caller.Auth = AuthSimple
			return nil
		}
		if c.digest == nil {
			c.digest = sasl.NewServer()
		}
		if len(msg.GetToken()) == 0 {
			return c.writeSASL(&commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_CHALLENGE.Enum(), Token: c.digest.Challenge()})
		}
		return c.verifyToken(msg.GetToken())
	case commonpb.RpcSaslProto_RESPONSE:
		if c.digest == nil {
			return fatalf(commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, ClassSaslException, "SASL RESPONSE before INITIATE")
		}
		return c.verifyToken(msg.GetToken())
	default:
		return fatalf(commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, ClassSaslException, "Unexpected SASL state %v", msg.GetState())
	}
}

func (c *serverConn) verifyToken(response []byte) error {
	sm := c.srv.opts.SecretManager
	var tokenID []byte
	var tokenUser string
	_, final, err := c.digest.Verify(response, func(username string) (string, error) {
		id, err := base64.StdEncoding.DecodeString(username)
		if err != nil {
			return "", fatalf(commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, ClassInvalidToken, "malformed token identifier in SASL user name")
		}
		pw, u, err := sm.RetrievePassword(id)
		if err != nil {
			return "", err
		}
		tokenID, tokenUser = id, u
		return base64.StdEncoding.EncodeToString(pw), nil
	})
	if err != nil {
		var re *RemoteError
		if errors.As(err, &re) {
			re.Fatal, re.Code = true, commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED
			return re
		}
		if errors.Is(err, sasl.ErrAuthFailed) {
			return fatalf(commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, ClassSaslException, "%v", err)
		}
		return fatalf(commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, ClassInvalidToken, "%v", err)
	}
	c.saslDone = true
	c.caller.Auth = AuthToken
	c.caller.User = tokenUser
	c.caller.TokenKind = sm.TokenKind()
	c.caller.TokenID = tokenID
	return c.writeSASL(&commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_SUCCESS.Enum(), Token: final})
}

// advertised lists the server's auth methods in preference order, with the pre-computed
// DIGEST-MD5 challenge when withChallenge is set.
func (c *serverConn) advertised(withChallenge bool) []*commonpb.RpcSaslProto_SaslAuth {
	var auths []*commonpb.RpcSaslProto_SaslAuth
	if c.srv.opts.SecretManager != nil {
		a := &commonpb.RpcSaslProto_SaslAuth{
			Method:    proto.String(string(AuthToken)),
			Mechanism: proto.String(sasl.Mechanism),
			Protocol:  proto.String(""),
			ServerId:  proto.String(sasl.DefaultRealm),
		}
		if withChallenge && c.digest != nil {
			a.Challenge = c.digest.Challenge()
		}
		auths = append(auths, a)
	}
	if c.srv.opts.SecretManager == nil || !c.srv.opts.TokenRequired {
		auths = append(auths, &commonpb.RpcSaslProto_SaslAuth{Method: proto.String(string(AuthSimple)), Mechanism: proto.String("")})
	}
	return auths
}

// offers reports whether a client's chosen SaslAuth equals one the server advertises
// (method, mechanism, protocol and serverId; the challenge is not compared).
func (c *serverConn) offers(a *commonpb.RpcSaslProto_SaslAuth) bool {
	for _, mine := range c.advertised(false) {
		if mine.GetMethod() == a.GetMethod() && mine.GetMechanism() == a.GetMechanism() &&
			mine.GetProtocol() == a.GetProtocol() && mine.GetServerId() == a.GetServerId() {
			return true
		}
	}
	return false
}

func (c *serverConn) methodNames() []string {
	var names []string
	for _, a := range c.advertised(false) {
		names = append(names, a.GetMethod())
	}
	return names
}

func (c *serverConn) writeSASL(m *commonpb.RpcSaslProto) error {
	h := &commonpb.RpcResponseHeaderProto{
		CallId:              wireCallID(CallIDSASL),
		Status:              commonpb.RpcResponseHeaderProto_SUCCESS.Enum(),
		ServerIpcVersionNum: proto.Uint32(CurrentVersion),
	}
	pkt, err := AppendFrame(nil, h, m)
	if err != nil {
		return err
	}
	return c.writeRaw(pkt)
}

func (c *serverConn) writeSuccess(caller *Caller, resp proto.Message) {
	h := &commonpb.RpcResponseHeaderProto{
		CallId:              wireCallID(caller.CallID),
		Status:              commonpb.RpcResponseHeaderProto_SUCCESS.Enum(),
		ServerIpcVersionNum: proto.Uint32(CurrentVersion),
		ClientId:            caller.ClientID,
		RetryCount:          proto.Int32(caller.RetryCount),
	}
	pkt, err := AppendFrame(nil, h, resp)
	if err != nil {
		c.writeError(caller.CallID, caller.ClientID, caller.RetryCount, &RemoteError{Class: ClassRpcServerException,
			Code: commonpb.RpcResponseHeaderProto_ERROR_SERIALIZING_RESPONSE, Message: fmt.Sprintf("Error serializing response: %v", err)})
		return
	}
	c.writeRaw(pkt)
}

func (c *serverConn) writeError(callID int32, clientID []byte, retry int32, re *RemoteError) {
	status := commonpb.RpcResponseHeaderProto_ERROR
	if re.Fatal {
		status = commonpb.RpcResponseHeaderProto_FATAL
	}
	code := re.Code
	if code == 0 {
		code = commonpb.RpcResponseHeaderProto_ERROR_APPLICATION
	}
	h := &commonpb.RpcResponseHeaderProto{
		CallId:              wireCallID(callID),
		Status:              status.Enum(),
		ServerIpcVersionNum: proto.Uint32(CurrentVersion),
		ExceptionClassName:  proto.String(re.Class),
		ErrorMsg:            proto.String(re.Message),
		ErrorDetail:         code.Enum(),
		ClientId:            clientID,
		RetryCount:          proto.Int32(retry),
	}
	pkt, err := AppendFrame(nil, h)
	if err != nil {
		return
	}
	c.writeRaw(pkt)
}

// writeRaw writes a whole packet under the connection's write lock. Write errors mean the
// peer is gone; the reader notices and closes.
func (c *serverConn) writeRaw(p []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.nc.SetWriteDeadline(time.Now().Add(time.Minute))
	_, err := c.nc.Write(p)
	return err
}

// wireCallID encodes a call id for the response header, whose callId is uint32: negative
// ids travel as their two's-complement bit pattern, which the Java client accepts.
func wireCallID(id int32) *uint32 {
	v := uint32(id)
	return &v
}
