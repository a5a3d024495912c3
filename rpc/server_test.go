package rpc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/bobbin-yarn/bobbin/rpc/sasl"
	"io"
	"math/rand"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	commonpb "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/rpc/token"
)

const testProtocol = "org.bobbin.test.EchoPB"

// testSecrets issues and verifies tokens whose identifier is the user name.
type testSecrets struct{ key []byte }

func (s testSecrets) TokenKind() string { return "TEST_TOKEN" }
func (s testSecrets) RetrievePassword(id []byte) ([]byte, string, error) {
	if bytes.HasPrefix(id, []byte("revoked")) {
		return nil, "", Errorf(ClassInvalidToken, "token %s is revoked", id)
	}
	return token.Password(s.key, id), string(id), nil
}
func (s testSecrets) issue(user string) *token.Token {
	return &token.Token{Identifier: []byte(user), Password: token.Password(s.key, []byte(user)), Kind: "TEST_TOKEN"}
}

type echoReq = yarnpb.GetQueueInfoRequestProto
type echoResp = yarnpb.GetQueueInfoResponseProto

func echoProtocol() *Protocol {
	return &Protocol{Name: testProtocol, Version: 1, Methods: map[string]Method{
		// echo answers "<user>/<auth>/<queueName>".
		"echo": Unary(func(ctx context.Context, r *echoReq) (*echoResp, error) {
			c, _ := CallerFrom(ctx)
			return &echoResp{QueueInfo: &yarnpb.QueueInfoProto{QueueName: proto.String(c.User + "/" + string(c.Auth) + "/" + r.GetQueueName())}}, nil
		}),
		// sleep waits for the number of milliseconds in queueName, then echoes it.
		"sleep": Unary(func(ctx context.Context, r *echoReq) (*echoResp, error) {
			var ms int
			fmt.Sscan(r.GetQueueName(), &ms)
			time.Sleep(time.Duration(ms) * time.Millisecond)
			return &echoResp{QueueInfo: &yarnpb.QueueInfoProto{QueueName: r.QueueName}}, nil
		}),
		"fail": Unary(func(ctx context.Context, r *echoReq) (*echoResp, error) {
			return nil, Errorf("org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException", "Application with id '%s' doesn't exist in RM.", r.GetQueueName())
		}),
		"untyped": Unary(func(ctx context.Context, r *echoReq) (*echoResp, error) {
			return nil, errors.New("plain go error")
		}),
		// A daemon's logic names the Java class without knowing of RPC (yarn/exceptions).
		"fact": Unary(func(ctx context.Context, r *echoReq) (*echoResp, error) {
			return nil, fmt.Errorf("wrapped: %w", javaFact{"org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException", "too big"})
		}),
		"panic": Unary(func(ctx context.Context, r *echoReq) (*echoResp, error) {
			panic("handler bug")
		}),
		// encoded answers with the bytes it returns.
		"encoded": UnaryEncoded[*echoReq, *echoResp](func(ctx context.Context, r *echoReq) ([]byte, error) {
			return proto.Marshal(&echoResp{QueueInfo: &yarnpb.QueueInfoProto{QueueName: proto.String("from bytes " + r.GetQueueName())}})
		}),
	}}
}

func startServer(t *testing.T, opts ServerOptions) *Server {
	t.Helper()
	opts.Logger = testutil.QuietLogger()
	s := NewServer(opts)
	s.Register(echoProtocol())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-done; !errors.Is(err, ErrServerClosed) {
			t.Errorf("Serve returned %v", err)
		}
	})
	for s.Addr() == nil {
		time.Sleep(time.Millisecond)
	}
	return s
}

func newTestClient(t *testing.T, s *Server, opts ClientOptions) *Client {
	t.Helper()
	opts.Addr = s.Addr().String()
	if opts.Protocol == "" {
		opts.Protocol = testProtocol
	}
	if opts.User == "" {
		opts.User = "alice"
	}
	opts.ConnectRetries = -1
	opts.Logger = testutil.QuietLogger()
	c := NewClient(opts)
	t.Cleanup(func() { c.Close() })
	return c
}

func echo(t *testing.T, c *Client, q string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var resp echoResp
	err := c.Call(ctx, "echo", &echoReq{QueueName: proto.String(q)}, &resp)
	return resp.GetQueueInfo().GetQueueName(), err
}

func TestSimpleCall(t *testing.T) {
	s := startServer(t, ServerOptions{})
	c := newTestClient(t, s, ClientOptions{})
	got, err := echo(t, c, "q1")
	if err != nil || got != "alice/SIMPLE/q1" {
		t.Fatalf("echo = %q, %v", got, err)
	}
	if tm := s.Metrics().Get("rpc.ipc.EchoPB.echo"); tm == nil {
		t.Fatal("no per-method timer recorded")
	}
}

// A client that opens with SASL against a server without a secret manager gets SIMPLE-only
// SUCCESS and proceeds with its user name (what the yarn CLI does with a token file).
func TestSASLNegotiateSimpleOnly(t *testing.T) {
	s := startServer(t, ServerOptions{})
	c := newTestClient(t, s, ClientOptions{UseSASL: true, Token: testSecrets{key: []byte("k")}.issue("bob")})
	got, err := echo(t, c, "x")
	if err != nil || got != "alice/SIMPLE/x" {
		t.Fatalf("echo = %q, %v", got, err)
	}
}

func TestTokenLogin(t *testing.T) {
	sm := testSecrets{key: []byte("server-key")}
	s := startServer(t, ServerOptions{SecretManager: sm})
	c := newTestClient(t, s, ClientOptions{Token: sm.issue("appattempt_1_0001_000001")})
	got, err := echo(t, c, "q")
	if err != nil || got != "appattempt_1_0001_000001/TOKEN/q" {
		t.Fatalf("echo = %q, %v", got, err)
	}
	// The same server still takes SIMPLE, as a Java server on an insecure cluster does.
	plain := newTestClient(t, s, ClientOptions{})
	if got, err := echo(t, plain, "q"); err != nil || got != "alice/SIMPLE/q" {
		t.Fatalf("simple echo = %q, %v", got, err)
	}
	// A SASL client without a token falls back to the advertised SIMPLE.
	sasl := newTestClient(t, s, ClientOptions{UseSASL: true})
	if got, err := echo(t, sasl, "q"); err != nil || got != "alice/SIMPLE/q" {
		t.Fatalf("sasl-simple echo = %q, %v", got, err)
	}
}

func TestWrongTokenRefusedServerKeepsServing(t *testing.T) {
	sm := testSecrets{key: []byte("server-key")}
	s := startServer(t, ServerOptions{SecretManager: sm, TokenRequired: true})
	forged := testSecrets{key: []byte("other-key")}.issue("appattempt_1_0001_000001")
	bad := newTestClient(t, s, ClientOptions{Token: forged})
	_, err := echo(t, bad, "q")
	var re *RemoteError
	if !errors.As(err, &re) || !re.Fatal || re.Code != commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED || re.Class != ClassSaslException {
		t.Fatalf("forged token: %v", err)
	}
	revoked := newTestClient(t, s, ClientOptions{Token: sm.issue("revoked-1")})
	if _, err := echo(t, revoked, "q"); !errors.As(err, &re) || re.Class != ClassInvalidToken {
		t.Fatalf("revoked token: %v", err)
	}
	simple := newTestClient(t, s, ClientOptions{})
	if _, err := echo(t, simple, "q"); !errors.As(err, &re) || re.Class != ClassAccessControl {
		t.Fatalf("SIMPLE on a token-only server: %v", err)
	}
	good := newTestClient(t, s, ClientOptions{Token: sm.issue("appattempt_1_0001_000002")})
	if got, err := echo(t, good, "q"); err != nil || got != "appattempt_1_0001_000002/TOKEN/q" {
		t.Fatalf("after refusals: %q, %v", got, err)
	}
}

func TestTypedErrorsAndUnknownMethods(t *testing.T) {
	s := startServer(t, ServerOptions{})
	c := newTestClient(t, s, ClientOptions{})
	ctx := context.Background()
	call := func(c *Client, m string) *RemoteError {
		var re *RemoteError
		err := c.Call(ctx, m, &echoReq{QueueName: proto.String("application_1_0001")}, &echoResp{})
		if !errors.As(err, &re) {
			t.Fatalf("%s: %v", m, err)
		}
		if re.Fatal {
			t.Fatalf("%s: fatal", m)
		}
		return re
	}
	if re := call(c, "fail"); re.Class != "org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException" || re.Message != "Application with id 'application_1_0001' doesn't exist in RM." {
		t.Fatalf("fail: %+v", re)
	}
	sentinel := &RemoteError{Class: "org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException"}
	if err := fmt.Errorf("wrapped: %w", call(c, "fail")); !errors.Is(err, sentinel) || errors.Is(err, &RemoteError{Class: ClassIOException}) {
		t.Fatalf("errors.Is with a class sentinel: %v", err)
	}
	if re := call(c, "untyped"); re.Class != ClassIOException {
		t.Fatalf("untyped: %+v", re)
	}
	if re := call(c, "fact"); re.Class != "org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException" || re.Message != "too big" {
		t.Fatalf("a JavaException: %+v", re)
	}
	if re := call(c, "panic"); re.Class != ClassRpcServerException {
		t.Fatalf("panic: %+v", re)
	}
	if re := call(c, "nope"); re.Class != ClassRpcNoSuchMethod || re.Message != "Unknown method nope called on "+testProtocol+" protocol." {
		t.Fatalf("nope: %+v", re)
	}
	other := newTestClient(t, s, ClientOptions{Protocol: "org.example.Unknown"})
	if re := call(other, "echo"); re.Class != ClassRpcNoSuchProtocol || re.Code != commonpb.RpcResponseHeaderProto_ERROR_NO_SUCH_PROTOCOL {
		t.Fatalf("unknown protocol: %+v", re)
	}
	v2 := newTestClient(t, s, ClientOptions{Version: 2})
	if re := call(v2, "echo"); re.Class != ClassVersionMismatch {
		t.Fatalf("version 2: %+v", re)
	}
	// The connection survived every error.
	if got, err := echo(t, c, "still"); err != nil || got != "alice/SIMPLE/still" {
		t.Fatalf("after errors: %q %v", got, err)
	}
}

// Calls on one connection run concurrently and are answered as they finish.
func TestConcurrentCallsOutOfOrder(t *testing.T) {
	s := startServer(t, ServerOptions{})
	c := newTestClient(t, s, ClientOptions{})
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	for _, ms := range []string{"300", "150", "0"} {
		wg.Add(1)
		go func(ms string) {
			defer wg.Done()
			var resp echoResp
			if err := c.Call(context.Background(), "sleep", &echoReq{QueueName: proto.String(ms)}, &resp); err != nil || resp.GetQueueInfo().GetQueueName() != ms {
				t.Errorf("sleep %s: %v %v", ms, resp.GetQueueInfo().GetQueueName(), err)
			}
			mu.Lock()
			order = append(order, ms)
			mu.Unlock()
		}(ms)
		time.Sleep(20 * time.Millisecond) // issue in order 300, 150, 0
	}
	wg.Wait()
	if strings.Join(order, ",") != "0,150,300" {
		t.Fatalf("answers came back in order %v; want the shortest first", order)
	}
}

func TestShutdownAnswersCallsInFlight(t *testing.T) {
	s := NewServer(ServerOptions{Logger: testutil.QuietLogger()})
	s.Register(echoProtocol())
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	go s.Serve(ln)
	c := NewClient(ClientOptions{Addr: ln.Addr().String(), Protocol: testProtocol, User: "u", ConnectRetries: -1, Logger: testutil.QuietLogger()})
	defer c.Close()
	res := make(chan error, 1)
	go func() {
		var resp echoResp
		res <- c.Call(context.Background(), "sleep", &echoReq{QueueName: proto.String("300")}, &resp)
	}()
	// In flight: it has a handler (the server counts it as it hands it one).
	testutil.Eventually(t, 5*time.Second, "the call never reached a handler", func() bool { return s.Activity().QueueTimeNumOps >= 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-res; err != nil {
		t.Fatalf("call in flight during shutdown: %v", err)
	}
	if _, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		t.Fatal("listener still open after shutdown")
	}
}

// rawConn speaks the wire by hand, for the hostile cases.
type rawConn struct {
	t  *testing.T
	nc net.Conn
}

func dialRaw(t *testing.T, s *Server) *rawConn {
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	return &rawConn{t: t, nc: nc}
}

func (r *rawConn) send(b []byte) { r.nc.Write(b) }

func (r *rawConn) frame(msgs ...proto.Message) {
	b, err := AppendFrame(nil, msgs...)
	if err != nil {
		r.t.Fatal(err)
	}
	r.send(b)
}

// expectFatalThenClose reads one FATAL response and then EOF.
func (r *rawConn) expectFatalThenClose(wantCode commonpb.RpcResponseHeaderProto_RpcErrorCodeProto) *commonpb.RpcResponseHeaderProto {
	r.t.Helper()
	pkt, err := ReadFrame(r.nc, DefaultMaxDataLength)
	if err != nil {
		r.t.Fatalf("no FATAL response: %v", err)
	}
	h, _, err := DecodeResponse(pkt)
	if err != nil {
		r.t.Fatal(err)
	}
	if h.GetStatus() != commonpb.RpcResponseHeaderProto_FATAL || (wantCode != 0 && h.GetErrorDetail() != wantCode) {
		r.t.Fatalf("got %v", h)
	}
	if n, err := r.nc.Read(make([]byte, 1)); err != io.EOF {
		r.t.Fatalf("connection not closed after FATAL: %d, %v", n, err)
	}
	return h
}

func hdr(callID int32) *commonpb.RpcRequestHeaderProto {
	return &commonpb.RpcRequestHeaderProto{RpcKind: commonpb.RpcKindProto_RPC_PROTOCOL_BUFFER.Enum(), RpcOp: commonpb.RpcRequestHeaderProto_RPC_FINAL_PACKET.Enum(),
		CallId: proto.Int32(callID), ClientId: bytes.Repeat([]byte{1}, 16), RetryCount: proto.Int32(0)}
}

func TestGarbageNeverTakesServerDown(t *testing.T) {
	s := startServer(t, ServerOptions{})
	good := newTestClient(t, s, ClientOptions{})
	if _, err := echo(t, good, "before"); err != nil {
		t.Fatal(err)
	}
	ctxt := &commonpb.IpcConnectionContextProto{UserInfo: &commonpb.UserInformationProto{EffectiveUser: proto.String("eve")}, Protocol: proto.String(testProtocol)}
	preamble := Preamble{Version: 9}.Bytes()

	t.Run("random bytes", func(t *testing.T) {
		rnd := rand.New(rand.NewSource(1))
		junk := make([]byte, 4096)
		rnd.Read(junk)
		r := dialRaw(t, s)
		r.send(junk)
		r.expectFatalThenClose(commonpb.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER)
	})
	t.Run("2 GB length prefix", func(t *testing.T) {
		r := dialRaw(t, s)
		r.send(append(append([]byte{}, preamble...), 0x7f, 0xff, 0xff, 0xff))
		r.expectFatalThenClose(commonpb.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER)
	})
	t.Run("header without rpcKind", func(t *testing.T) {
		r := dialRaw(t, s)
		r.send(preamble)
		h := hdr(CallIDConnectionContext)
		h.RpcKind = nil
		r.frame(h, ctxt)
		r.expectFatalThenClose(commonpb.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER)
	})
	t.Run("call before connection context", func(t *testing.T) {
		r := dialRaw(t, s)
		r.send(preamble)
		rh := &commonpb.RequestHeaderProto{MethodName: proto.String("echo"), DeclaringClassProtocolName: proto.String(testProtocol), ClientProtocolVersion: proto.Uint64(1)}
		r.frame(hdr(0), rh, &echoReq{})
		h := r.expectFatalThenClose(commonpb.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER)
		if h.GetErrorMsg() != "Connection context not established" {
			t.Fatalf("message %q", h.GetErrorMsg())
		}
	})
	t.Run("undecodable header", func(t *testing.T) {
		r := dialRaw(t, s)
		r.send(append(append([]byte{}, preamble...), 0, 0, 0, 3, 2, 0xff, 0xff))
		r.expectFatalThenClose(commonpb.RpcResponseHeaderProto_FATAL_DESERIALIZING_REQUEST)
	})
	t.Run("half-closed mid-frame", func(t *testing.T) {
		r := dialRaw(t, s)
		r.send(append(append([]byte{}, preamble...), 0, 0, 0, 100, 1, 2, 3))
		r.nc.(*net.TCPConn).CloseWrite()
		if _, err := io.ReadAll(r.nc); err != nil {
			t.Fatalf("server did not close the half-closed connection: %v", err)
		}
	})
	t.Run("wrong version", func(t *testing.T) {
		r := dialRaw(t, s)
		r.send([]byte{'h', 'r', 'p', 'c', 7, 0, 0})
		h := r.expectFatalThenClose(commonpb.RpcResponseHeaderProto_FATAL_VERSION_MISMATCH)
		if h.GetExceptionClassName() != ClassVersionMismatch {
			t.Fatal(h)
		}
	})
	t.Run("HTTP on the IPC port", func(t *testing.T) {
		r := dialRaw(t, s)
		r.send([]byte("GET / HTTP/1.1\r\n\r\n"))
		b, _ := io.ReadAll(r.nc)
		if !strings.Contains(string(b), "HTTP request to a Hadoop IPC port") {
			t.Fatalf("%q", b)
		}
	})
	t.Run("ping and second context", func(t *testing.T) {
		r := dialRaw(t, s)
		r.send(preamble)
		r.frame(hdr(CallIDConnectionContext), ctxt)
		r.frame(hdr(CallIDPing)) // never answered
		r.frame(hdr(CallIDConnectionContext), ctxt)
		r.expectFatalThenClose(commonpb.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER)
	})
	t.Run("SASL on a SIMPLE connection", func(t *testing.T) {
		r := dialRaw(t, s)
		r.send(preamble)
		r.frame(hdr(CallIDSASL), &commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_NEGOTIATE.Enum()})
		r.expectFatalThenClose(commonpb.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER)
	})
	t.Run("abrupt close", func(t *testing.T) {
		r := dialRaw(t, s)
		r.send(preamble[:3])
		r.nc.Close()
	})

	if got, err := echo(t, good, "after"); err != nil || got != "alice/SIMPLE/after" {
		t.Fatalf("established client after the garbage: %q %v", got, err)
	}
	fresh := newTestClient(t, s, ClientOptions{})
	if _, err := echo(t, fresh, "fresh"); err != nil {
		t.Fatalf("new client after the garbage: %v", err)
	}
}

func TestClientReconnectsAfterServerClosesConnection(t *testing.T) {
	s := startServer(t, ServerOptions{})
	c := newTestClient(t, s, ClientOptions{})
	if _, err := echo(t, c, "1"); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	conn := c.conn
	conn.nc.Close() // as if the server had dropped an idle connection
	c.mu.Unlock()
	select { // the client's reader sees the connection end
	case <-conn.dead:
	case <-time.After(5 * time.Second):
		t.Fatal("the client did not notice its connection closed")
	}
	if got, err := echo(t, c, "2"); err != nil || got != "alice/SIMPLE/2" {
		t.Fatalf("after reconnect: %q %v", got, err)
	}
}

func TestClientConnectRetriesAreBounded(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	c := NewClient(ClientOptions{Addr: addr, Protocol: testProtocol, User: "u", ConnectRetries: 2, RetryInterval: 10 * time.Millisecond, Logger: testutil.QuietLogger()})
	defer c.Close()
	start := time.Now()
	err := c.Call(context.Background(), "echo", &echoReq{}, &echoResp{})
	if err == nil || !strings.Contains(err.Error(), "after 2 retries") {
		t.Fatalf("err = %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("retries not bounded")
	}
}

// FuzzServerConn feeds arbitrary bytes to a server connection after a SASL preamble and
// checks that it ends the connection without crashing or hanging: this exercises the
// frame and header decoders, the SASL message handling and the DIGEST-MD5 parser.
func FuzzServerConn(f *testing.F) {
	neg, _ := AppendFrame(nil, hdr(CallIDSASL), &commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_NEGOTIATE.Enum()})
	ini, _ := AppendFrame(nil, hdr(CallIDSASL), &commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_INITIATE.Enum(), Token: []byte(`username="dXNlcg==",nonce="x",cnonce="y",nc=00000001,response=0,digest-uri="/default"`),
		Auths: []*commonpb.RpcSaslProto_SaslAuth{{Method: proto.String("TOKEN"), Mechanism: proto.String("DIGEST-MD5"), Protocol: proto.String(""), ServerId: proto.String("default")}}})
	f.Add(append(append([]byte{}, neg...), ini...))
	f.Add(neg)
	f.Add(captureBytes()[7:])
	sm := testSecrets{key: []byte("k")}
	f.Fuzz(func(t *testing.T, data []byte) {
		srv := NewServer(ServerOptions{SecretManager: sm, Logger: testutil.QuietLogger(), MaxDataLength: 1 << 16})
		srv.Register(echoProtocol())
		a, b := net.Pipe()
		c := newServerConn(srv, a)
		done := make(chan struct{})
		go func() { c.serve(); close(done) }()
		go io.Copy(io.Discard, b)
		b.Write(append(Preamble{Version: 9, Auth: AuthSASL}.Bytes(), data...))
		b.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("server connection did not end")
		}
	})
}

func listenLoopback() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }

// A standby server refuses every call — SIMPLE calls per call, token logins at their SASL
// negotiation — with org.apache.hadoop.ipc.StandbyException, and serves again once active,
// on the same connections, with the protocol it was given meanwhile (Replace).
func TestStandbyRefusesThenServesReplacedProtocol(t *testing.T) {
	sm := testSecrets{key: []byte("server-key")}
	s := startServer(t, ServerOptions{SecretManager: sm})
	plain := newTestClient(t, s, ClientOptions{})
	if _, err := echo(t, plain, "before"); err != nil {
		t.Fatal(err)
	}
	s.SetStandby("ResourceManager rm1 is in standby state")
	var re *RemoteError
	if _, err := echo(t, plain, "q"); !errors.As(err, &re) || re.Class != ClassStandby || re.Fatal {
		t.Fatalf("SIMPLE call on a standby: %v", err)
	}
	tok := newTestClient(t, s, ClientOptions{Token: sm.issue("appattempt_1_0001_000001")})
	if _, err := echo(t, tok, "q"); !errors.As(err, &re) || re.Class != ClassStandby || !re.Fatal {
		t.Fatalf("token login on a standby: %v", err)
	}
	p := echoProtocol()
	p.Methods["echo"] = Unary(func(ctx context.Context, r *echoReq) (*echoResp, error) {
		return &echoResp{QueueInfo: &yarnpb.QueueInfoProto{QueueName: proto.String("new:" + r.GetQueueName())}}, nil
	})
	s.Replace(p)
	s.SetActive()
	if got, err := echo(t, plain, "q"); err != nil || got != "new:q" {
		t.Fatalf("after becoming active: %q %v", got, err)
	}
	tok2 := newTestClient(t, s, ClientOptions{Token: sm.issue("appattempt_1_0001_000001")})
	if got, err := echo(t, tok2, "q"); err != nil || got != "new:q" {
		t.Fatalf("token login after becoming active: %q %v", got, err)
	}
}

// With QOP integrity on TOKEN connections (DIGEST-MD5 auth-int), every frame after the
// exchange carries an HMAC-MD5 and a sequence number, both ways; a client that allows
// only authentication finds no common protection.
func TestTokenIntegrityWrapsTheStream(t *testing.T) {
	sm := testSecrets{key: []byte("server-key")}
	s := startServer(t, ServerOptions{SecretManager: sm, QOP: sasl.QOPIntegrity})
	c := newTestClient(t, s, ClientOptions{Token: sm.issue("appattempt_1_0001_000001"), QOP: sasl.QOPAuth | sasl.QOPIntegrity})
	errs := make(chan error, 10)
	for i := 0; i < 10; i++ {
		go func(i int) {
			q := strings.Repeat("y", i*900)
			got, err := echo(t, c, q)
			if err == nil && got != "appattempt_1_0001_000001/TOKEN/"+q {
				err = errors.New("wrong answer")
			}
			errs <- err
		}(i)
	}
	for i := 0; i < 10; i++ {
		if err := <-errs; err != nil {
			t.Fatalf("call over DIGEST-MD5 integrity: %v", err)
		}
	}
	// An answer given as its bytes is wrapped whole too.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp := &echoResp{}
	if err := c.Call(ctx, "encoded", &echoReq{QueueName: proto.String("q")}, resp); err != nil || resp.GetQueueInfo().GetQueueName() != "from bytes q" {
		t.Fatalf("encoded answer over DIGEST-MD5 integrity: %q, %v", resp.GetQueueInfo().GetQueueName(), err)
	}
	authOnly := newTestClient(t, s, ClientOptions{Token: sm.issue("appattempt_1_0001_000001")})
	if _, err := echo(t, authOnly, "q"); err == nil || !strings.Contains(err.Error(), "No common protection layer") {
		t.Fatalf("authentication-only client: %v", err)
	}
}

// javaFact is an error that names its Java class (as yarn/exceptions.Error does).
type javaFact struct{ class, msg string }

func (f javaFact) Error() string       { return f.class + ": " + f.msg }
func (f javaFact) JavaClass() string   { return f.class }
func (f javaFact) JavaMessage() string { return f.msg }
