package rpc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	metrics "github.com/rcrowley/go-metrics"
	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	commonpb "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
	"github.com/bobbin-yarn/bobbin/rpc/sasl"
)

// SecretManager verifies token identifiers for TOKEN (DIGEST-MD5) authentication.
// RetrievePassword returns the token password the identifier must have been issued with
// (HmacSHA1 of the identifier under the issuer's key) and the user the token stands for
// (TokenIdentifier.getUser()). An error refuses the token; a *RemoteError chooses the
// Java class sent back (SecretManager$InvalidToken by default).
type SecretManager interface {
	TokenKind() string
	RetrievePassword(identifier []byte) (password []byte, user string, err error)
}

// AuthMethod is how a connection authenticated.
type AuthMethod string

// Authentication methods, named as Hadoop's SaslRpcServer.AuthMethod.
const (
	AuthSimple   AuthMethod = "SIMPLE"
	AuthToken    AuthMethod = "TOKEN"
	AuthKerberos AuthMethod = "KERBEROS"
)

// Kerberos makes a server offer KERBEROS (SASL GSSAPI) and refuse SIMPLE, as a Java server
// with hadoop.security.authentication=kerberos does.
type Kerberos struct {
	// Acceptor starts the GSSAPI exchange of one connection.
	Acceptor func() *sasl.GSSAPIServer
	// Protocol and ServerID are what the NEGOTIATE reply advertises: the first two
	// components of the server's principal ("rm", "host1.example.com"); a Java client
	// checks them against its configured principal for the server.
	Protocol, ServerID string
	// ShortName maps the authenticated principal to the local user name
	// (hadoop.security.auth_to_local).
	ShortName func(principal string) (string, error)
}

// Caller describes who made a call; handlers read it with CallerFrom.
type Caller struct {
	User     string // effective user: the token's user for TOKEN, the context's user for SIMPLE
	RealUser string
	// Principal is the Kerberos principal (name@REALM) a KERBEROS caller authenticated as;
	// User is its short name.
	Principal  string
	Auth       AuthMethod
	TokenKind  string
	TokenID    []byte // the token identifier bytes, for TOKEN connections
	RemoteAddr net.Addr
	Protocol   string
	Method     string
	CallID     int32
	ClientID   []byte
	RetryCount int32
}

type callerKey struct{}

// CallerFrom returns the caller of the call whose context this is.
func CallerFrom(ctx context.Context) (*Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(*Caller)
	return c, ok
}

// WithCaller returns ctx carrying c (for tests and in-process calls).
func WithCaller(ctx context.Context, c *Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// Method is one RPC method: how to decode its request and how to handle it.
type Method struct {
	// decode parses the request message's bytes (without their length prefix).
	decode func(b []byte) (any, error)
	handle func(ctx context.Context, req any) (proto.Message, error)
}

// unmarshalAs decodes requests of m's type, checking required fields as Java's
// parseDelimitedFrom does.
func unmarshalAs(m proto.Message) func([]byte) (any, error) {
	typ := m.ProtoReflect().Type()
	return func(b []byte) (any, error) {
		req := typ.New().Interface()
		if err := proto.Unmarshal(b, req); err != nil {
			return nil, err
		}
		return req, nil
	}
}

// Unary adapts a typed handler to a Method.
func Unary[Req, Resp proto.Message](fn func(context.Context, Req) (Resp, error)) Method {
	var zero Req
	return Method{
		decode: unmarshalAs(zero),
		handle: func(ctx context.Context, req any) (proto.Message, error) {
			return fn(ctx, req.(Req))
		},
	}
}

// UnaryEncoded adapts a handler that answers with its response (of type Resp) marshalled:
// bytes it keeps, or writes without building the message. They are written as they are.
func UnaryEncoded[Req, Resp proto.Message](fn func(context.Context, Req) ([]byte, error)) Method {
	var zero Req
	var zeroResp Resp
	empty := zeroResp.ProtoReflect().Type().Zero().Interface() // read-only, shared
	return Method{
		decode: unmarshalAs(zero),
		handle: func(ctx context.Context, req any) (proto.Message, error) {
			b, err := fn(ctx, req.(Req))
			if err != nil {
				return nil, err
			}
			return &Encoded{Message: empty, Bytes: b}, nil
		},
	}
}

// UnaryDecoded adapts a handler whose request is parsed by its own decoder (from the
// message's bytes): for a request that most calls need only part of, decoded in full
// at a cost the handler does not want to pay. An error from decode is answered as a
// request that did not parse.
func UnaryDecoded[Req any, Resp proto.Message](decode func([]byte) (Req, error), fn func(context.Context, Req) (Resp, error)) Method {
	return Method{
		decode: func(b []byte) (any, error) { return decode(b) },
		handle: func(ctx context.Context, req any) (proto.Message, error) {
			return fn(ctx, req.(Req))
		},
	}
}

// Protocol is a set of methods served under one Hadoop protocol name and version.
type Protocol struct {
	Name    string
	Version uint64
	Methods map[string]Method
}

// ServerOptions configure a Server. Zero values take Hadoop's defaults.
type ServerOptions struct {
	// QOP is the protections offered to TOKEN (DIGEST-MD5) clients
	// (hadoop.rpc.protection as a sasl.QOP* mask; 0 means authentication). Kerberos
	// offers come from its acceptor.
	QOP byte
	// Name labels logs and metrics, e.g. "ClientRMService".
	Name string
	// MaxDataLength is ipc.maximum.data.length (64 MiB). Before a connection is
	// established its frames are held to PreAuthMaxFrame.
	MaxDataLength int
	// ReadBudget bounds the request bytes held across connections (NewReadBudget(0) of
	// the server's own when nil); a daemon's servers may share one.
	ReadBudget *ReadBudget
	// Idle is when idle connections are closed (DefaultIdleSettings when zero).
	Idle IdleSettings
	// Handlers bounds the calls executing at once across all connections (Java's handler
	// thread count). Default 50.
	Handlers int
	// SecretManager, when set, makes the server offer TOKEN (DIGEST-MD5) authentication.
	// Without it the server answers SASL NEGOTIATE with SIMPLE-only SUCCESS.
	SecretManager SecretManager
	// TokenRequired refuses SIMPLE when a SecretManager is set. By default the server
	// advertises [TOKEN, SIMPLE], as a Java server with a secret manager on a cluster with
	// hadoop.security.authentication=simple does.
	TokenRequired bool
	// Metrics receives per-method timers and connection counters. Default: a new registry.
	Metrics metrics.Registry
	Logger  *logrus.Entry
	// ActiveCheck, when set, is asked before every call (and token login): a non-empty
	// answer refuses it with StandbyException and that message. An HA ResourceManager
	// uses it to stop serving the moment it cannot be sure it is still the active one.
	ActiveCheck func() string
	// Kerberos, when set, offers KERBEROS authentication and refuses SIMPLE.
	Kerberos *Kerberos
	// Authorize, when set, admits or refuses each connection once its caller (user, real
	// user, protocol, address) is known, as Java's Server.authorizeConnection: proxy users
	// and service-level ACLs. A refusal is answered FATAL (a *RemoteError keeps its class,
	// anything else reaches the client as AccessControlException) and the connection closes.
	Authorize func(*Caller) error
	// ErrorClass is the Java class a handler's error that is not a *RemoteError reaches
	// clients as (YARN servers: YarnException). Default java.io.IOException.
	ErrorClass string
}

// Server is a Hadoop IPC server. Create it with NewServer, register protocols, then Serve.
type Server struct {
	opts      ServerOptions
	protoMu   sync.RWMutex // guards protocols (Replace swaps them while serving)
	protocols map[string]*Protocol
	// standby, when set, is the message every call (and every token authentication) is
	// refused with, as org.apache.hadoop.ipc.StandbyException.
	standby  atomic.Pointer[string]
	handlers chan struct{} // semaphore bounding running handlers
	log      *logrus.Entry

	mu       sync.Mutex
	ln       net.Listener
	conns    map[*serverConn]struct{}
	keeper   ConnKeeper // nil: connections end with the process
	closing  bool
	connWG   sync.WaitGroup
	baseCtx  context.Context
	cancel   context.CancelFunc
	timers   sync.Map // "protocol#method" -> metrics.Timer
	connsGau metrics.Gauge
	errs     metrics.Counter
	act      activity
	// frames are response packets' buffers, reused once written: a busy RM answers
	// thousands of calls a second, some of 50 KB, and new buffers were some 8 % of its
	// garbage.
	frames sync.Pool // *[]byte
	// lastScan is when Serve last looked for idle connections to close (unix nanos).
	lastScan atomic.Int64
	// preAuth bounds the bytes of frames read before their connections were established.
	preAuth *ReadBudget
}

// NewServer returns a server with no protocols.
func NewServer(opts ServerOptions) *Server {
	if opts.MaxDataLength <= 0 {
		opts.MaxDataLength = DefaultMaxDataLength
	}
	if opts.Handlers <= 0 {
		opts.Handlers = 50
	}
	if opts.Metrics == nil {
		opts.Metrics = metrics.NewRegistry()
	}
	if opts.Logger == nil {
		opts.Logger = logrus.NewEntry(logrus.StandardLogger())
	}
	if opts.Name == "" {
		opts.Name = "ipc"
	}
	if opts.ErrorClass == "" {
		opts.ErrorClass = ClassIOException
	}
	if opts.ReadBudget == nil {
		opts.ReadBudget = NewReadBudget(0)
	}
	if opts.Idle.MaxIdle <= 0 {
		opts.Idle.MaxIdle = DefaultIdleSettings.MaxIdle
	}
	if opts.Idle.ScanInterval <= 0 {
		opts.Idle.ScanInterval = DefaultIdleSettings.ScanInterval
	}
	if opts.Idle.Threshold <= 0 {
		opts.Idle.Threshold = DefaultIdleSettings.Threshold
	}
	if opts.Idle.KillMax <= 0 {
		opts.Idle.KillMax = DefaultIdleSettings.KillMax
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		opts:      opts,
		protocols: map[string]*Protocol{},
		handlers:  make(chan struct{}, opts.Handlers),
		log:       opts.Logger.WithField("server", opts.Name),
		conns:     map[*serverConn]struct{}{},
		baseCtx:   ctx,
		cancel:    cancel,
		preAuth:   NewReadBudget(PreAuthBudget),
	}
	s.connsGau = metrics.GetOrRegisterGauge("rpc."+opts.Name+".connections", opts.Metrics)
	s.errs = metrics.GetOrRegisterCounter("rpc."+opts.Name+".errors", opts.Metrics)
	return s
}

// Register adds a protocol.
func (s *Server) Register(p *Protocol) {
	s.protoMu.Lock()
	defer s.protoMu.Unlock()
	s.protocols[p.Name] = p
}

// Replace swaps a protocol's implementation while serving (a ResourceManager that becomes
// active serves its new state's services on the same listeners); calls already running
// finish on the old one.
func (s *Server) Replace(p *Protocol) { s.Register(p) }

func (s *Server) protocol(name string) (*Protocol, bool) {
	s.protoMu.RLock()
	defer s.protoMu.RUnlock()
	p, ok := s.protocols[name]
	return p, ok
}

// SetStandby makes the server refuse every call, and every token authentication, with
// org.apache.hadoop.ipc.StandbyException and msg, until SetActive.
func (s *Server) SetStandby(msg string) { s.standby.Store(&msg) }

// SetActive ends SetStandby.
func (s *Server) SetActive() { s.standby.Store(nil) }

// standbyError is the error a standby server answers with (nil when active).
func (s *Server) standbyError() *RemoteError {
	if msg := s.standby.Load(); msg != nil {
		return &RemoteError{Class: ClassStandby, Message: *msg, Code: commonpb.RpcResponseHeaderProto_ERROR_APPLICATION}
	}
	if g := s.opts.ActiveCheck; g != nil {
		if msg := g(); msg != "" {
			return &RemoteError{Class: ClassStandby, Message: msg, Code: commonpb.RpcResponseHeaderProto_ERROR_APPLICATION}
		}
	}
	return nil
}

// Metrics returns the registry the server records into.
func (s *Server) Metrics() metrics.Registry { return s.opts.Metrics }

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = errors.New("rpc: server closed")

// Serve accepts connections on ln until Shutdown. It always returns a non-nil error.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.ln = ln
	s.mu.Unlock()
	s.log.WithField("addr", ln.Addr().String()).Info("IPC server listening")
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closing := s.closing
			s.mu.Unlock()
			if closing {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				time.Sleep(backoff)
				continue
			}
			return fmt.Errorf("rpc %s: accept: %w", s.opts.Name, err)
		}
		backoff = 0
		s.maybeCloseIdle(time.Now())
		c := newServerConn(s, nc)
		s.mu.Lock()
		keeper := s.keeper
		s.mu.Unlock()
		if keeper != nil {
			if c.kept = keeper.Keep(s.opts.Name, nc); c.kept != nil {
				c.br.Reset(c.kept.Reader())
			}
		}
		if !s.start(c) {
			c.closeSocket()
			if c.kept != nil {
				c.kept.Closed()
			}
			return ErrServerClosed
		}
	}
}

// start serves a connection on its own goroutine, owned by the server (Shutdown waits for
// it); false when the server is closing.
func (s *Server) start(c *serverConn) bool {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return false
	}
	s.conns[c] = struct{}{}
	s.connWG.Add(1)
	s.mu.Unlock()
	s.connsGau.Update(int64(s.connCount()))
	go func() {
		defer s.connWG.Done()
		c.serve()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		s.connsGau.Update(int64(s.connCount()))
	}()
	return true
}

func (s *Server) connCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// Addr is the listening address, once Serve has started.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Shutdown stops accepting, stops reading new calls, lets calls in progress finish and
// send their answers, then closes every connection. If ctx ends first, handlers see their
// contexts cancelled and connections are closed at once.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	if s.ln != nil {
		s.ln.Close()
	}
	conns := make([]*serverConn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.stopReading()
	}
	done := make(chan struct{})
	go func() { s.connWG.Wait(); close(done) }()
	select {
	case <-done:
		s.cancel()
		return nil
	case <-ctx.Done():
		s.cancel()
		for _, c := range conns {
			c.closeSocket()
		}
		<-done
		return ctx.Err()
	}
}

func (s *Server) timer(protocol, method string) metrics.Timer {
	key := protocol + "#" + method
	if t, ok := s.timers.Load(key); ok {
		return t.(metrics.Timer)
	}
	short := protocol
	for i := len(protocol) - 1; i >= 0; i-- {
		if protocol[i] == '.' {
			short = protocol[i+1:]
			break
		}
	}
	t := metrics.GetOrRegisterTimer("rpc."+s.opts.Name+"."+short+"."+method, s.opts.Metrics)
	s.timers.Store(key, t)
	return t
}
