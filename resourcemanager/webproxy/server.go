package webproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/bobbin-yarn/bobbin/client/rmclient"
	"github.com/bobbin-yarn/bobbin/conf"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
	"github.com/bobbin-yarn/bobbin/yarn/webuser"
)

// RMReports asks the ResourceManagers over ApplicationClientProtocol, as the Java
// standalone proxy's AppReportFetcher does; with HA it moves on from a standby or an
// unreachable RM to the next and stays with the one that answered.
type RMReports struct {
	clients []*rmclient.Client
	webs    []string // each RM's web base, http://host:port

	mu  sync.Mutex
	cur int
}

// NewRMReports connects (lazily) to the RMs at clientAddrs, whose web addresses are
// webAddrs (same order), as user.
func NewRMReports(clientAddrs, webAddrs []string, user string, log *logrus.Entry) *RMReports {
	r := &RMReports{}
	for i, a := range clientAddrs {
		// A web request waits for one RM at most a few seconds, not Hadoop's ten
		// one-second connect retries.
		r.clients = append(r.clients, rmclient.New(a, user, rpc.ClientOptions{ConnectRetries: -1, DialTimeout: 3 * time.Second, Logger: log}))
		r.webs = append(r.webs, "http://"+webAddrs[i])
	}
	return r
}

// ApplicationReport implements Reports.
func (r *RMReports) ApplicationReport(ctx context.Context, id records.ApplicationID) (*yarnpb.ApplicationReportProto, error) {
	r.mu.Lock()
	first := r.cur
	r.mu.Unlock()
	var errs []error
	for i := range r.clients {
		n := (first + i) % len(r.clients)
		rep, err := r.clients[n].GetApplicationReport(ctx, id.Proto())
		if errors.Is(err, exceptions.ErrApplicationNotFound) {
			return nil, nil
		}
		if err == nil {
			r.mu.Lock()
			r.cur = n
			r.mu.Unlock()
			return rep, nil
		}
		var re *rpc.RemoteError
		if errors.As(err, &re) && re.Class != rpc.ClassStandby {
			return nil, err // the active RM's answer
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("no active ResourceManager answered: %w", errors.Join(errs...))
}

// RMWeb is the web base of the RM that last answered.
func (r *RMReports) RMWeb() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.webs[r.cur]
}

// Close closes the connections to the RMs.
func (r *RMReports) Close() {
	for _, c := range r.clients {
		c.Close()
	}
}

// Server is the standalone web proxy (`bobbin webproxy`) on yarn.web-proxy.address.
type Server struct {
	addr    string
	proxy   *Proxy
	reports *RMReports
	log     *logrus.Entry
	web     *webuser.Policy // who callers are

	mu    sync.Mutex
	ln    net.Listener
	srv   *http.Server
	serve sync.WaitGroup
}

// NewServer reads the proxy's and the RMs' addresses from c; user is who asks the RMs.
func NewServer(c *conf.Configuration, user string, log *logrus.Entry) (*Server, error) {
	if log == nil {
		log = logrus.NewEntry(logrus.StandardLogger())
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if err := errors.Join(c.CheckHTTPOnly(), c.CheckSecurityModes(false)); err != nil {
		return nil, err
	}
	s, err := ReadSettings(c)
	if err != nil {
		return nil, err
	}
	if s.Addr == "" {
		return nil, &conf.ValueError{Key: "yarn.web-proxy.address", Reason: "is not set: the ResourceManager serves the web proxy on its own web address; set it to run the proxy apart"}
	}
	clients, err := c.RMAddresses("yarn.resourcemanager.address", 8032)
	if err != nil {
		return nil, err
	}
	webs, err := c.RMAddresses("yarn.resourcemanager.webapp.address", 8088)
	if err != nil {
		return nil, err
	}
	// Callers are decided as on the daemons' web ports (yarn/webuser): the proxy runs on
	// simple clusters only (CheckSecurityModes), where user.name is taken as said unless
	// hadoop.http.authentication.simple.anonymous.allowed refuses callers without one.
	web, err := webuser.Read(c, nil, log)
	if err != nil {
		return nil, err
	}
	host, _, _ := net.SplitHostPort(s.Addr)
	log = log.WithField("component", "webproxy")
	reports := NewRMReports(clients, webs, user, log)
	p := New(Options{Reports: reports, RMWeb: reports.RMWeb, Host: host, Timeout: s.Timeout, Log: log})
	return &Server{addr: s.Addr, proxy: p, reports: reports, log: log, web: web}, nil
}

// Start binds the address and serves /proxy/ in the background.
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("webproxy: bind yarn.web-proxy.address %s: %w", s.addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/proxy/", s.proxy)
	srv := &http.Server{Handler: s.web.Wrap(mux), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
	s.mu.Lock()
	s.ln, s.srv = ln, srv
	s.mu.Unlock()
	s.serve.Add(1)
	go func() {
		defer s.serve.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.WithError(err).Error("web proxy stopped")
		}
	}()
	s.log.WithField("address", ln.Addr().String()).Info("web proxy started")
	return nil
}

// Addr is where the proxy listens (after Start).
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Shutdown stops serving, waiting for requests in flight until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	srv := s.srv
	s.mu.Unlock()
	var err error
	if srv != nil {
		err = srv.Shutdown(ctx)
		s.serve.Wait()
	}
	s.proxy.Close()
	s.reports.Close()
	return err
}
