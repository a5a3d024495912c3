// Package resourcemanager is Bobbin's YARN ResourceManager, wired together: it builds the
// core (rmcore), registers the protocol services (rmservice) on their IPC servers and the
// web handler (rmweb) on its HTTP server, binds them, and stops them in order.
//
// The layers call only downward (integration.TestDaemonsDoNotImportEachOther checks it):
// scheduler (the pure engine) and rmstate (applications, attempts, nodes, containers,
// labels, host lists; its package comment gives the lock order) at the bottom, rmcore
// above them, rmservice, rmweb and rmha (high availability: the role, its transitions,
// the election) above that, and this package on top.
package resourcemanager

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	metrics "github.com/rcrowley/go-metrics"
	"github.com/sirupsen/logrus"

	"github.com/bobbin-yarn/bobbin/conf"
	commonpb "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmcore"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmha"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmservice"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmweb"
	"github.com/bobbin-yarn/bobbin/resourcemanager/webproxy"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/rpc/connkeep"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
	"github.com/bobbin-yarn/bobbin/yarn/kerberos"
	"github.com/bobbin-yarn/bobbin/yarn/spnego"
	"github.com/bobbin-yarn/bobbin/yarn/webapp"
	"github.com/bobbin-yarn/bobbin/yarn/webuser"
)

// Options configure a ResourceManager.
type Options = rmcore.Options

// ResourceManager owns the RM's services. Start binds them; Shutdown stops them.
//
// Without HA it builds its core at New and is active for its whole life. With HA
// (yarn.resourcemanager.ha.enabled) it starts as a standby — its servers answer every
// client, AM and NodeManager call with StandbyException, its admin port serves
// HAServiceProtocol — and builds a core each time it becomes active (the elector in
// ZooKeeper decides, or `yarn rmadmin -transitionToActive` in manual mode): the core
// opens the shared state store, which fences the previous active, and recovers from it.
type ResourceManager struct {
	// core is the active core; with HA the last one (nil before the first activation).
	// It is not embedded: what the daemon does goes through its own methods, and tests
	// reach the core through Core.
	core     *rmcore.Core
	opts     Options // with the RM's own configuration (HA: its id's addresses)
	settings rmcore.Settings
	log      *logrus.Entry
	ha       *rmha.Controller // nil without HA
	amrm     amrmSwitch
	deleg    delegationSwitch

	client        *rpc.Server
	tracker       *rpc.Server
	scheduler     *rpc.Server
	admin         *rpc.Server
	clientAddr    net.Addr
	trackerAddr   net.Addr
	schedulerAddr net.Addr
	adminAddr     net.Addr
	webAddr       net.Addr
	webBase       string // "http://host:port" of the web address as AMs and browsers name it (set in Start)
	web           *http.Server
	done          chan struct{}        // closed when the daemon must stop (a fenced RM without HA)
	keeper        *connkeep.Attachment // nil: sockets end with the process

	mu      sync.Mutex
	webCore http.Handler
	webMux  *http.ServeMux // the daemon's own pages (/jmx, /conf, ...), then serveActive
	// webHandler is what the web port serves: the RM itself, behind SPNEGO when asked.
	webHandler http.Handler
	stopCore   context.CancelFunc
	serving    sync.WaitGroup
	started    bool
}

// Core is the active core (with HA the last one; nil before the first activation), for
// tests and tools that look inside the RM.
func (rm *ResourceManager) Core() *rmcore.Core {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return rm.core
}

// RunningNodes is the number of RUNNING NodeManagers the active core holds (0 while
// standby, before the first activation).
func (rm *ResourceManager) RunningNodes() int {
	if c := rm.Core(); c != nil {
		return c.RunningNodes()
	}
	return 0
}

// New builds a ResourceManager from configuration; nothing listens until Start.
func New(opts Options) (*ResourceManager, error) {
	if opts.Conf == nil {
		opts.Conf = conf.New()
	}
	if opts.Logger == nil {
		opts.Logger = logrus.NewEntry(logrus.StandardLogger())
	}
	if opts.Metrics == nil {
		opts.Metrics = metrics.NewRegistry()
	}
	ha, own, err := rmha.Read(opts.Conf)
	if err != nil {
		return nil, err
	}
	opts.Conf = own
	rm := &ResourceManager{opts: opts, log: opts.Logger.WithField("component", "resourcemanager"), done: make(chan struct{})}
	if ha == nil {
		core, err := rmcore.New(opts)
		if err != nil {
			return nil, err
		}
		rm.core, rm.opts, rm.settings = core, core.Options(), core.Settings()
	} else {
		rm.log = rm.log.WithField("rm_id", ha.ID)
		rm.ha = rmha.NewController(ha, rm, opts.Logger)
		if err := opts.Conf.Validate(); err != nil {
			return nil, err
		}
		if rm.settings, err = rmcore.ReadSettings(opts.Conf); err != nil {
			return nil, err
		}
	}
	settings := rm.settings
	if rm.opts.Security == nil {
		if rm.opts.Security, err = rmcore.NewSecurity(rm.opts.Conf, rm.opts.ConfDir, rm.opts.Now, rm.opts.Metrics); err != nil {
			return nil, err
		}
	}
	policy := rm.opts.Security.Policy
	krb, err := rmKerberos(rm.opts.Conf, settings.ClientAddr)
	if err != nil {
		return nil, err
	}
	if krb != nil {
		rm.opts.Security.ShortName = krb.ShortName
	}
	var activeCheck func() string
	if ha != nil && ha.Automatic {
		activeCheck = rm.ha.StillActive
	}
	// The four servers share one budget of request bytes: what an attacker sends to one
	// port is memory the others do not get either.
	idle, budget, err := rpc.ReadServerLimits(rm.opts.Conf)
	if err != nil {
		return nil, err
	}
	server := func(name string, handlers int, sm rpc.SecretManager) *rpc.Server {
		return rpc.NewServer(rpc.ServerOptions{ErrorClass: exceptions.YarnException, Name: name, MaxDataLength: settings.MaxDataLength,
			Handlers: handlers, SecretManager: sm, Metrics: opts.Metrics, Logger: opts.Logger, ActiveCheck: activeCheck,
			Authorize: policy.Authorize, Kerberos: krb, QOP: settings.QOP, ReadBudget: budget, Idle: idle})
	}
	rm.webMux = http.NewServeMux()
	host, _ := os.Hostname()
	sec := rm.opts.Security
	web, err := webuser.Read(rm.opts.Conf, func(u string) bool { return sec.Admins().Allows(u, sec.Groups.Of(u)) }, rm.log)
	if err != nil {
		return nil, err
	}
	redact, err := webapp.NewRedactor(rm.opts.Conf)
	if err != nil {
		return nil, err
	}
	daemon := &webapp.Daemon{Service: "ResourceManager", Host: host, Conf: opts.Conf, Log: opts.Logger.Logger, Metrics: opts.Metrics,
		Started: time.Now(), Beans: rm.beans, Web: web, Redact: redact}
	daemon.Install(rm.webMux)
	rm.webMux.HandleFunc("/", rm.serveActive)
	// Every request's caller is decided (yarn/webuser) before the RM sees it; with
	// hadoop.http.authentication.type=kerberos every page and REST call needs SPNEGO first.
	if rm.webHandler, err = spnego.Wrap(web.Wrap(webapp.AnswerOptions(rm)), rm.opts.Conf, "yarn.resourcemanager.webapp.spnego-principal",
		"yarn.resourcemanager.webapp.spnego-keytab-file", settings.WebAddr, rm.log); err != nil {
		return nil, err
	}
	// The client port takes RM delegation tokens (DIGEST-MD5) beside Kerberos or SIMPLE.
	rm.client = server("ClientRMService", settings.ClientHandlers, &rm.deleg)
	rm.tracker = server("ResourceTrackerService", settings.TrackerHandlers, nil)
	// The scheduler port offers TOKEN and SIMPLE like a Java RM on an insecure cluster; the
	// AM service itself refuses calls without an AMRMToken.
	rm.scheduler = server("ApplicationMasterService", settings.SchedulerHandlers, &rm.amrm)
	// The admin port answers HAServiceProtocol whatever the state.
	activeCheck = nil
	rm.admin = server("AdminService", settings.AdminHandlers, nil)
	if ha == nil {
		if err := rm.serveCore(rm.core); err != nil {
			return nil, err
		}
		return rm, nil
	}
	for _, s := range []*rpc.Server{rm.client, rm.tracker, rm.scheduler} {
		s.SetStandby(rm.ha.StandbyMessage())
	}
	has, err := rm.ha.Service()
	if err != nil {
		return nil, err
	}
	rm.admin.Register(has)
	adm, err := rmha.StandbyAdmin(rm.ha.StandbyMessage())
	if err != nil {
		return nil, err
	}
	rm.admin.Register(adm)
	return rm, nil
}

// serveCore puts a core's services on the servers (replacing any earlier core's).
func (rm *ResourceManager) serveCore(core *rmcore.Core) error {
	cs, err := rmservice.NewClientService(core)
	if err != nil {
		return err
	}
	rt, err := rmservice.NewResourceTracker(core)
	if err != nil {
		return err
	}
	ams, err := rmservice.NewAMService(core)
	if err != nil {
		return err
	}
	adm, err := rmservice.NewAdminService(core)
	if err != nil {
		return err
	}
	rm.amrm.cur.Store(core.AMRMTokens())
	rm.deleg.cur.Store(core.Delegation())
	rm.client.Replace(cs)
	rm.tracker.Replace(rt)
	rm.scheduler.Replace(ams)
	rm.admin.Replace(adm)
	var proxy http.Handler
	if rm.settings.ProxyAddr == "" {
		// No separate proxy: this RM serves /proxy, from its own web host's address.
		proxy = webproxy.New(webproxy.Options{
			Reports: webproxy.ReportsFunc(func(_ context.Context, id records.ApplicationID) (*yarnpb.ApplicationReportProto, error) {
				rep, ok := core.AppReport(id)
				if !ok {
					return nil, nil
				}
				return rep, nil
			}),
			RMWeb:   func() string { return rm.webBase },
			Host:    rm.settings.WebHost,
			Timeout: rm.settings.ProxyTimeout,
			Log:     rm.opts.Logger,
		})
	}
	if rm.webBase != "" { // HA: a core built after Start
		core.SetWebBases(rm.trackingBase(), rm.webBase)
	}
	rm.mu.Lock()
	rm.webCore = rmweb.Handler(core, rmweb.Options{HA: rm.ha != nil, Proxy: proxy})
	rm.mu.Unlock()
	return nil
}

// beans are the active core's MBeans (none on a standby) for /jmx and /prom.
func (rm *ResourceManager) beans() []webapp.Bean {
	active := rm.State() == commonpb.HAServiceStateProto_ACTIVE
	rm.mu.Lock()
	core := rm.core
	addrs := []net.Addr{rm.clientAddr, rm.trackerAddr, rm.schedulerAddr, rm.adminAddr}
	rm.mu.Unlock()
	var servers []rmweb.RPCServer
	for i, s := range []*rpc.Server{rm.client, rm.tracker, rm.scheduler, rm.admin} {
		if tcp, ok := addrs[i].(*net.TCPAddr); ok {
			servers = append(servers, rmweb.RPCServer{Port: tcp.Port, Name: s.Name(), Activity: s.Activity})
		}
	}
	if core == nil || !active {
		return nil
	}
	host, _ := os.Hostname()
	return rmweb.Beans(core, host, servers)
}

// trackingBase is the "http://host:port" applications' tracking URLs name: the separate
// web proxy's address (yarn.web-proxy.address), or this RM's web address.
func (rm *ResourceManager) trackingBase() string {
	if rm.settings.ProxyAddr != "" {
		return "http://" + rm.settings.ProxyAddr
	}
	return rm.webBase
}

// advertisedWeb is the web address as others name it: the configured host of
// yarn.resourcemanager.webapp.address (a wildcard: this machine's name, as the Java RM
// resolves it) with the port bound.
func advertisedWeb(host string, bound net.Addr) string {
	if host == "" || host == "0.0.0.0" || host == "::" {
		if h, err := os.Hostname(); err == nil {
			host = h
		}
	}
	_, port, _ := net.SplitHostPort(bound.String())
	return "http://" + net.JoinHostPort(host, port)
}

// Start binds every service's listener and serves in the background. A bind failure
// closes what was already opened.
func (rm *ResourceManager) Start() error {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	if rm.started {
		return errors.New("resourcemanager: already started")
	}
	ln, err := rm.listen("client", rm.settings.ClientAddr)
	if err != nil {
		return fmt.Errorf("resourcemanager: bind yarn.resourcemanager.address %s: %w", rm.settings.ClientAddr, err)
	}
	tln, err := rm.listen("tracker", rm.settings.TrackerAddr)
	if err != nil {
		ln.Close()
		return fmt.Errorf("resourcemanager: bind yarn.resourcemanager.resource-tracker.address %s: %w", rm.settings.TrackerAddr, err)
	}
	sln, err := rm.listen("scheduler", rm.settings.SchedulerAddr)
	if err != nil {
		ln.Close()
		tln.Close()
		return fmt.Errorf("resourcemanager: bind yarn.resourcemanager.scheduler.address %s: %w", rm.settings.SchedulerAddr, err)
	}
	aln, err := rm.listen("admin", rm.settings.AdminAddr)
	if err != nil {
		ln.Close()
		tln.Close()
		sln.Close()
		return fmt.Errorf("resourcemanager: bind yarn.resourcemanager.admin.address %s: %w", rm.settings.AdminAddr, err)
	}
	wln, err := rm.listen("web", rm.settings.WebAddr)
	if err != nil {
		ln.Close()
		tln.Close()
		sln.Close()
		aln.Close()
		return fmt.Errorf("resourcemanager: bind yarn.resourcemanager.webapp.address %s: %w", rm.settings.WebAddr, err)
	}
	rm.started = true
	rm.webAddr = wln.Addr()
	rm.webBase = advertisedWeb(rm.settings.WebHost, wln.Addr())
	if rm.core != nil {
		rm.core.SetWebBases(rm.trackingBase(), rm.webBase)
	}
	// Timeouts and a header limit: a slow or hostile web client costs one goroutine for
	// a bounded time, never the RPC ports.
	rm.web = webapp.NewHTTPServer(rm.webHandler)
	rm.serving.Add(1)
	go func() {
		defer rm.serving.Done()
		if err := rm.web.Serve(wln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			rm.log.WithError(err).Error("web server stopped")
		}
	}()
	rm.clientAddr, rm.trackerAddr, rm.schedulerAddr, rm.adminAddr = ln.Addr(), tln.Addr(), sln.Addr(), aln.Addr()
	rm.serve(rm.client, ln)
	rm.serve(rm.tracker, tln)
	rm.serve(rm.scheduler, sln)
	rm.serve(rm.admin, aln)
	fields := logrus.Fields{"client_address": ln.Addr().String(), "resource_tracker_address": tln.Addr().String(),
		"scheduler_address": sln.Addr().String(), "admin_address": aln.Addr().String(), "webapp_address": wln.Addr().String()}
	if rm.ha == nil {
		ctx, cancel := context.WithCancel(context.Background())
		rm.stopCore = cancel
		rm.core.Run(ctx)
		go func() { // a fenced RM stops
			select {
			case <-rm.core.Done():
				close(rm.done)
			case <-ctx.Done():
			}
		}()
		fields["cluster_timestamp"], fields["queues"] = rm.core.ClusterTimestamp(), len(rm.core.Queues().Queues())
		rm.log.WithFields(fields).Info("ResourceManager started")
		rm.takeBackConnections()
		return nil
	}
	fields["ha_state"], fields["automatic_failover"] = "STANDBY", rm.ha.Settings().Automatic
	rm.log.WithFields(fields).Info("ResourceManager started in standby")
	return rm.ha.Start()
}

// KeepConnections makes the RM hand its listeners and connections to a connection keeper
// (see package connkeep) and take back what an earlier process of it left there. Call it
// before Start; ConnectionKeeper says whether the configuration asks for it.
func (rm *ResourceManager) KeepConnections(a *connkeep.Attachment) {
	rm.keeper = a
	for _, s := range []*rpc.Server{rm.client, rm.tracker, rm.scheduler, rm.admin} {
		s.SetKeeper(a)
	}
}

// KeeperConfig is where this RM's connection keeper listens and whether it keeps
// connections at all.
type KeeperConfig struct {
	// Dir (bobbin.resourcemanager.connection-keeper.dir) holds the keeper's socket, Name;
	// connkeep.SocketPath checks it is the RM user's alone.
	Dir, Name string
	// Keep: with recovery on (a restarted RM knows the applications its clients ask
	// about), without HA (clients must fail over to the other RM at once), on a fixed
	// port, and unless bobbin.resourcemanager.connection-keeper.enabled is false.
	Keep   bool
	Linger time.Duration
}

// ConnectionKeeper reads the connection keeper's keys. The socket is named after the
// client address (one keeper per RM on the host).
func (rm *ResourceManager) ConnectionKeeper() (KeeperConfig, error) {
	return KeeperConfigOf(rm.opts.Conf, rm.settings.ClientAddr, rm.ha != nil)
}

// KeeperConfigOf is ConnectionKeeper for the RM configured by c, with client address
// clientAddr and, when ha, high availability: for `bobbin release-rm-ports`, which frees
// a killed RM's ports without starting one.
func KeeperConfigOf(c *conf.Configuration, clientAddr string, ha bool) (KeeperConfig, error) {
	k := KeeperConfig{Name: "rm-" + strings.ReplaceAll(clientAddr, "/", "_") + ".sock"}
	on, err := c.Bool("bobbin.resourcemanager.connection-keeper.enabled")
	if err != nil {
		return k, err
	}
	if k.Linger, err = c.Duration("bobbin.resourcemanager.connection-keeper.linger-ms", time.Millisecond); err != nil {
		return k, err
	}
	if k.Dir, err = c.Trimmed("bobbin.resourcemanager.connection-keeper.dir"); err != nil {
		return k, err
	}
	recovery, err := c.Bool("yarn.resourcemanager.recovery.enabled")
	if err != nil {
		return k, err
	}
	_, port, perr := net.SplitHostPort(clientAddr)
	k.Keep = on && recovery && !ha && perr == nil && port != "0" && k.Linger > 0 && k.Dir != ""
	return k, nil
}

func (rm *ResourceManager) listen(name, addr string) (net.Listener, error) {
	if rm.keeper != nil {
		return rm.keeper.Listen(name, addr)
	}
	return net.Listen("tcp", addr)
}

// takeBackConnections serves the connections an earlier process of this RM left with
// the keeper, now that the recovered core serves.
func (rm *ResourceManager) takeBackConnections() {
	if rm.keeper == nil {
		return
	}
	kept, dropped := rm.keeper.TakeBack()
	byName := map[string]*rpc.Server{}
	for _, s := range []*rpc.Server{rm.client, rm.tracker, rm.scheduler, rm.admin} {
		byName[s.Name()] = s
	}
	adopted := 0
	for _, k := range kept {
		s := byName[k.Server]
		var err error
		if s == nil {
			err = fmt.Errorf("no server %q", k.Server)
		} else {
			err = s.Adopt(k.Conn, k.State, k.Record)
		}
		if err != nil {
			rm.log.WithError(err).WithFields(logrus.Fields{"remote": k.Conn.RemoteAddr().String(), "user": k.State.User}).
				Warn("connection kept across the restart dropped")
			k.Record.Closed()
			k.Conn.Close()
			dropped++
			continue
		}
		adopted++
	}
	if adopted+dropped > 0 {
		rm.log.WithFields(logrus.Fields{"connections": adopted, "dropped": dropped}).
			Info("connections kept across the restart taken over (dropped: ones the old process was answering)")
	}
}

func (rm *ResourceManager) serve(s *rpc.Server, ln net.Listener) {
	rm.serving.Add(1)
	go func() {
		defer rm.serving.Done()
		if err := s.Serve(ln); err != nil && !errors.Is(err, rpc.ErrServerClosed) {
			rm.log.WithError(err).Error("IPC server stopped")
		}
	}()
}

// ClientAddr is where ApplicationClientProtocol is served (after Start).
func (rm *ResourceManager) ClientAddr() net.Addr {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return rm.clientAddr
}

// TrackerAddr is where ResourceTracker is served (after Start).
func (rm *ResourceManager) TrackerAddr() net.Addr {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return rm.trackerAddr
}

// SchedulerAddr is where ApplicationMasterProtocol is served (after Start).
func (rm *ResourceManager) SchedulerAddr() net.Addr {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return rm.schedulerAddr
}

// WebAddr is where the HTTP endpoints are served (after Start).
func (rm *ResourceManager) WebAddr() net.Addr {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return rm.webAddr
}

// AdminAddr is where ResourceManagerAdministrationProtocol is served (after Start).
func (rm *ResourceManager) AdminAddr() net.Addr {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return rm.adminAddr
}

// Done is closed when the daemon must stop: without HA, when another RM took over its
// state store (fenced). With HA a fenced RM becomes a standby instead.
func (rm *ResourceManager) Done() <-chan struct{} { return rm.done }

// Shutdown stops every service, letting calls in progress finish until ctx ends.
func (rm *ResourceManager) Shutdown(ctx context.Context) error {
	if rm.ha != nil {
		rm.ha.Stop()
	}
	var webErr error
	if rm.web != nil {
		webErr = rm.web.Shutdown(ctx)
	}
	err := errors.Join(rm.client.Shutdown(ctx), rm.tracker.Shutdown(ctx), rm.scheduler.Shutdown(ctx), rm.admin.Shutdown(ctx), webErr)
	rm.serving.Wait()
	rm.mu.Lock()
	stop, core := rm.stopCore, rm.core
	rm.stopCore = nil
	rm.mu.Unlock()
	if stop != nil {
		stop()
	}
	// The core to close: without HA the RM's own (started or not); with HA the one it is
	// serving, if any (a standby's last core was closed as it stepped down). No transition
	// runs any more (rm.ha.Stop).
	if core != nil && (rm.ha == nil || stop != nil) {
		core.Wait()
		if cerr := core.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}
	rm.log.Info("ResourceManager stopped")
	return err
}

// rmKerberos is the RM's Kerberos identity on its IPC ports with
// hadoop.security.authentication=kerberos (nil without): yarn.resourcemanager.principal,
// _HOST being the client address's host, and yarn.resourcemanager.keytab.
func rmKerberos(c *conf.Configuration, clientAddr string) (*rpc.Kerberos, error) {
	on, err := kerberos.Enabled(c)
	if err != nil || !on {
		return nil, err
	}
	host, _, _ := net.SplitHostPort(clientAddr)
	return kerberos.ServerFromConf(c, "yarn.resourcemanager.principal", "yarn.resourcemanager.keytab", host)
}
