// Package nodemanager is Bobbin's YARN NodeManager: it registers with a ResourceManager
// (Bobbin's or Apache's) over ResourceTracker, serves ContainerManagementProtocol to AMs and
// to the RM's AM launcher, localizes resources, writes and runs launch scripts through a
// container executor, and reports what its containers did.
//
// It is built in layers that call only downward (checked by integration's structure
// test): its parts (the localizer, the auxiliary services and MapReduce's shuffle, the
// borrowed-node meter, the recovery store); package containers, which owns the containers
// and applications (the table, a container's lifecycle as one table of moves, the order of
// their records in the recovery store); ContainerManagementProtocol (nmservice) and the
// web port (nmweb), adapters that reach the node through small interfaces
// (containerrequests.go, webnode.go); and this package, where one goroutine drives each
// container through its life (runner.go) and the RM link, the monitors and log
// aggregation act on containers only through the table.
package nodemanager

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metrics "github.com/rcrowley/go-metrics"
	"github.com/sirupsen/logrus"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/container"
	"github.com/bobbin-yarn/bobbin/container/cgroups"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/nodemanager/auxservices"
	"github.com/bobbin-yarn/bobbin/nodemanager/borrowed"
	"github.com/bobbin-yarn/bobbin/nodemanager/containers"
	"github.com/bobbin-yarn/bobbin/nodemanager/localizer"
	"github.com/bobbin-yarn/bobbin/nodemanager/logaggregation"
	"github.com/bobbin-yarn/bobbin/nodemanager/nmservice"
	"github.com/bobbin-yarn/bobbin/nodemanager/nmstore"
	"github.com/bobbin-yarn/bobbin/nodemanager/nmweb"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/yarn/audit"
	"github.com/bobbin-yarn/bobbin/yarn/authz"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
	"github.com/bobbin-yarn/bobbin/yarn/security"
	"github.com/bobbin-yarn/bobbin/yarn/webapp"
	"github.com/bobbin-yarn/bobbin/yarn/webuser"
)

// Options configure a NodeManager.
type Options struct {
	Conf     *conf.Configuration
	Logger   *logrus.Entry
	Metrics  metrics.Registry
	Executor container.Executor // default: container.ProcessExecutor
	Now      func() time.Time
	ConfDir  string // where hadoop-policy.xml is read ("" = none)
	// ReadHost measures the host in borrowed mode (default: borrowed.ReadHost of /proc
	// and the NodeManager's dirs). Tests give a host whose owner is idle, so a busy test
	// machine is not read as the owner's load.
	ReadHost func(dirs []string) (borrowed.Host, error)
}

// NodeManager is one running NodeManager.
type NodeManager struct {
	opts      Options
	policy    *authz.Policy    // service ACLs and proxy users on the IPC port
	krb       *nmKerberos      // nil without Kerberos
	runAs     runAs            // which user runs containers (LinuxContainerExecutor)
	ipcIdle   rpc.IdleSettings // when the IPC server closes idle connections
	ipcBudget *rpc.ReadBudget  // the request bytes the IPC server holds at once
	settings  Settings
	log       *logrus.Entry
	exec      container.Executor
	// cgroups is the subtree containers' cgroups live in (nil: containers run without).
	cgroups *cgroups.Subtree
	// audit writes NMAuditLogger's lines.
	audit *audit.Logger
	// aggReads bounds the web pages' reads of aggregated logs at once.
	aggReads chan struct{}
	// elastic is the elastic memory control over the subtree (nil: off); set at Start.
	elastic *elasticMemory
	// gpus are the node's GPUs and who holds them (nil: no yarn.io/gpu plugin).
	gpus  *gpuPlugin
	local *localizer.Localizer

	cm *rpc.Server
	// webOpts are the web port's (package nmweb), checked at New and served from Start by
	// web.
	webOpts nmweb.Options
	web     *http.Server
	keys    *security.NodeKeys
	// journal writes the recovery store (none without yarn.nodemanager.recovery.enabled).
	journal *containers.Journal
	// table holds the containers and applications; its lock is its own.
	table *containers.Table
	// logs uploads container logs (yarn.log-aggregation-enable) and keeps the outcomes
	// for the RM (from Start, which names the node in its log lines).
	logs *logaggregation.Aggregator
	// aux are the auxiliary services (yarn.nodemanager.aux-services); mrShuffle is
	// MapReduce's among them (nil: not configured), for its figures.
	aux       *auxservices.Set
	mrShuffle *mapreduceShuffle
	// owner marks this NodeManager's container processes (container.Spec.Owner).
	owner  string
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// done is closed when the RM shut this node down: the daemon exits.
	done chan struct{}

	// mu guards the node's own facts below (its address, its link to the RM, its disks).
	// It is never held with the table's lock or the journal's: what the containers need
	// goes through the table's methods.
	mu     sync.Mutex
	nodeID string // "host:port" once bound
	// containerAddr are the IPS and HOST attributes of its launched containers' statuses
	// (ipAndHost), worked out on first use, after the node is bound.
	containerAddr atomic.Pointer[[]*yarnpb.StringStringMapProto]
	port          int32
	httpPort      int32
	registered    bool
	rmIdentifier  int64
	disks         diskHealth
	host          *hostMeter // nil unless the host is measured (borrowed mode, automatic labels)
	startedAt     time.Time  // when Start began serving
	counts        nmCounters
}

// nmVersion is the Hadoop version the node says it is: at registration (Java RMs compare
// it with their minimum version) and on its web pages.
const nmVersion = "2.7.3"

// New checks the configuration; nothing runs until Start.
func New(opts Options) (*NodeManager, error) {
	if opts.Conf == nil {
		opts.Conf = conf.New()
	}
	if opts.Logger == nil {
		opts.Logger = logrus.NewEntry(logrus.StandardLogger())
	}
	if opts.Metrics == nil {
		opts.Metrics = metrics.NewRegistry()
	}
	if opts.ReadHost == nil {
		opts.ReadHost = func(dirs []string) (borrowed.Host, error) { return borrowed.ReadHost("/proc", dirs) }
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if err := opts.Conf.Validate(); err != nil {
		return nil, err
	}
	s, err := ReadSettings(opts.Conf)
	if err != nil {
		return nil, err
	}
	policy, err := newPolicy(opts)
	if err != nil {
		return nil, err
	}
	logs, err := nmweb.ReadLogACLs(opts.Conf, opts.Now, opts.Metrics)
	if err != nil {
		return nil, err
	}
	ra, err := readRunAs(opts.Conf, opts.ConfDir)
	if err != nil {
		return nil, err
	}
	if ra.enabled && s.Borrow.Executor == "uml" {
		return nil, fmt.Errorf("nodemanager: %s = LinuxContainerExecutor: UML containers (bobbin.nodemanager.container-executor=uml) run no host processes as users; choose one", keyExecutorClass)
	}
	krb, err := newNMKerberos(opts.Conf, s, opts.Metrics)
	if err != nil {
		return nil, err
	}
	// What its containers will lack, said once at start (Hadoop's launcher sets these for
	// a Java NodeManager; `bobbin nodemanager` sets what it can derive before this).
	for _, gap := range ContainerEnvGaps(os.LookupEnv) {
		opts.Logger.WithField("component", "nodemanager").Warn(gap)
	}
	var gpus *gpuPlugin
	if s.GPU != nil {
		if gpus, err = discoverGPUs(&s); err != nil {
			krb.close()
			return nil, err
		}
		opts.Logger.WithFields(logrus.Fields{"component": "nodemanager", "gpus": len(gpus.alloc.Devices())}).Info("GPUs found")
	}
	var tree *cgroups.Subtree
	if s.Cgroups.enabled() {
		if opts.Executor != nil {
			krb.close()
			return nil, fmt.Errorf("nodemanager: %s: cgroups are served by Bobbin's own executors (process and uml), not by the one given", strings.Join(s.Cgroups.On, ", "))
		}
		if tree, err = openCgroups(s.Cgroups); err != nil {
			krb.close()
			return nil, err
		}
		if s.Borrow.Meter.Borrowed {
			if err := tree.SetCPUShares(borrowedShares); err != nil {
				krb.close()
				return nil, fmt.Errorf("nodemanager: bobbin.nodemanager.borrowed.enabled with cgroups: the containers' subtree must weigh least against the owner: %w", err)
			}
		}
		opts.Logger.WithFields(logrus.Fields{"component": "nodemanager", "cgroups": fmt.Sprintf("v%d", tree.Version()), "controllers": strings.Join(tree.Controllers(), ","),
			"subtree": s.Cgroups.Tree.Hierarchy}).Info("containers run in cgroups")
	}
	if opts.Executor == nil {
		switch s.Borrow.Executor {
		case "uml":
			u := s.Borrow.UML
			if err := u.CheckUML(); err != nil {
				krb.close()
				return nil, fmt.Errorf("nodemanager: bobbin.nodemanager.container-executor=uml: %w", err)
			}
			// Whether this kernel runs guests on this host's CPU is known only by booting
			// one: a NodeManager that offered containers it cannot run would fail every
			// job sent to it.
			probe := u.ProbeUML(context.Background())
			if probe.Err != nil {
				krb.close()
				return nil, fmt.Errorf("nodemanager: bobbin.nodemanager.container-executor=uml: %w", probe.Err)
			}
			opts.Logger.WithFields(logrus.Fields{"component": "nodemanager", "kernel": probe.Kernel, "version": probe.KernelVersion,
				"boot_ms": probe.Boot.Milliseconds(), "network": string(u.Network)}).Info("UML kernel runs guests on this host")
			if u.Network == container.NetworkVDESlirp {
				opts.Logger.WithField("component", "nodemanager").Infof("the UML kernel has no slirp transport: guests reach the network through vde_plug's slirp plugin, and bobbin.nodemanager.uml.slirp (%s) only turns their network on", u.Slirp)
			}
			// A container as large as the node must not have its processes killed by
			// the host's mapping limit; say so now rather than in a job's failure.
			if have, need, short, err := u.MapCountShortfall(s.MemoryMB); err == nil && short {
				opts.Logger.WithField("component", "nodemanager").Warnf("the host's vm.max_map_count (%d) is below the %d pages of a guest for a container of the node's %d MB: "+
					"a guest process using more than about %d MB is killed (exit 137) though the guest has memory left; raise it: sysctl -w vm.max_map_count=%d",
					have, need, s.MemoryMB, container.MapCountMB(have), need)
			}
			u.Cgroups = tree
			u.Log = opts.Logger.WithField("component", "nodemanager")
			if s.Borrow.ForwardPorts {
				// The guests run this binary as their relay agent (bobbin uml-guest-relay).
				exe, err := os.Executable()
				if err != nil {
					krb.close()
					return nil, fmt.Errorf("nodemanager: bobbin.nodemanager.uml.forward-ports: the NodeManager's own binary: %w", err)
				}
				u.RelayAgent = exe
				if u.Network == container.NetworkNone || u.RootDir != "" {
					opts.Logger.WithField("component", "nodemanager").Warn("bobbin.nodemanager.uml.forward-ports: guests without a network, or confined (bobbin.nodemanager.uml.root-dir), have no relay: services in them are reached from nowhere else")
				}
			}
			opts.Executor = &u
		default:
			opts.Executor = container.ProcessExecutor{Cgroups: tree}
		}
	}
	fss := map[string]localizer.FileSystem{"hdfs": localizer.HDFS{DefaultNameNode: hostOfURI(s.DefaultFS)}}
	nm := &NodeManager{opts: opts, settings: s, policy: policy, krb: krb, runAs: ra, log: opts.Logger.WithField("component", "nodemanager"), exec: opts.Executor, cgroups: tree, gpus: gpus,
		keys: security.NewNodeKeys(), owner: ownerMark(s.LocalDirs),
		done: make(chan struct{}), counts: newNMCounters(opts.Metrics), audit: audit.New(opts.Logger, "nmaudit"),
		aggReads: make(chan struct{}, 2)}
	nm.journal = containers.NewJournal(func(err error, what string) {
		nm.log.WithError(err).WithField("action", what).Error("recovery store write failed")
	})
	nm.table = containers.NewTable(nm.journal)
	var services []auxservices.Service
	for _, name := range s.AuxServices {
		if name == shuffleService {
			nm.mrShuffle = newMapReduceShuffle(nm)
			services = append(services, nm.mrShuffle)
		}
	}
	for _, a := range s.JavaAux {
		svc, err := nm.javaAuxService(a)
		if err != nil {
			krb.close()
			return nil, fmt.Errorf("nodemanager: yarn.nodemanager.aux-services: %w", err)
		}
		services = append(services, svc)
	}
	if nm.aux, err = auxservices.NewSet(services...); err != nil {
		krb.close()
		return nil, fmt.Errorf("nodemanager: yarn.nodemanager.aux-services: %w", err)
	}
	nm.local = localizer.New(localizer.Options{LocalDirs: s.LocalDirs, FileSystems: fss, Journal: cacheJournal{nm}})
	if s.Borrow.measureHosts {
		nm.host = newHostMeter(s.Borrow, opts.Metrics)
	}
	web := nmweb.Options{Node: webNode{nm}, Table: nm.table, LogACLs: logs, Conf: opts.Conf, Logger: opts.Logger.Logger, Metrics: opts.Metrics, Now: opts.Now,
		Addr: s.WebAddr, Version: nmVersion, Resources: nmweb.Resources{MemoryMB: s.MemoryMB, VmemMB: s.MemoryMB, VCores: s.VCores, VmemCheck: s.VmemCheck, PmemCheck: s.PmemCheck,
			Types: s.Types, Host: s.Host}}
	if s.VmemRatio > 0 {
		web.Resources.VmemMB = int64(float64(s.MemoryMB) * s.VmemRatio)
	}
	if nm.ipcIdle, nm.ipcBudget, err = rpc.ReadServerLimits(opts.Conf); err == nil {
		web.Users, err = webuser.Read(opts.Conf, logs.IsAdmin, nm.log)
	}
	if err == nil {
		web.Redact, err = webapp.NewRedactor(opts.Conf)
	}
	if err == nil {
		web.Log = nm.log
		err = nmweb.Check(web)
	}
	if err != nil {
		krb.close()
		return nil, err
	}
	nm.webOpts = web
	return nm, nil
}

func hostOfURI(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		rest := u[i+3:]
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			rest = rest[:j]
		}
		return rest
	}
	return ""
}

// Start creates the directories, binds the servers, registers with the RM and starts
// heartbeating. A registration the RM refuses is an error.
func (nm *NodeManager) Start() error {
	s := nm.settings
	for _, d := range append(append([]string(nil), s.LocalDirs...), s.LogDirs...) {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("nodemanager: %w", err)
		}
	}
	nm.disks = nm.checkDisks()
	if nm.disks.report != "" {
		nm.log.WithField("healthy", nm.disks.healthy()).Warn(nm.disks.report)
	}
	ln, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return fmt.Errorf("nodemanager: bind yarn.nodemanager.address %s: %w", s.Addr, err)
	}
	wln, err := net.Listen("tcp", s.WebAddr)
	if err != nil {
		ln.Close()
		return fmt.Errorf("nodemanager: bind yarn.nodemanager.webapp.address %s: %w", s.WebAddr, err)
	}
	nm.ctx, nm.cancel = context.WithCancel(context.Background())
	if err := nm.aux.Start(); err != nil {
		ln.Close()
		wln.Close()
		nm.cancel()
		return fmt.Errorf("nodemanager: %w", err)
	}
	nm.mu.Lock()
	nm.port = int32(ln.Addr().(*net.TCPAddr).Port)
	nm.httpPort = int32(wln.Addr().(*net.TCPAddr).Port)
	nm.nodeID = fmt.Sprintf("%s:%d", s.Host, nm.port)
	nm.startedAt = nm.opts.Now()
	nm.mu.Unlock()
	nm.log = nm.log.WithField("node", nm.nodeID)
	nm.logs = logaggregation.New(logaggregation.Options{Settings: s.LogAggregation, Conf: nm.opts.Conf, LogDirs: s.LogDirs, Table: nm.table,
		NodeID: nm.NodeID, Now: nm.opts.Now, Log: nm.log.WithField("component", "logaggregation"), OwnerOf: nm.appFileOwner, ActAs: nm.runAs.actAs})
	// What the previous process left is settled before anything is served: recovered
	// containers are in place when the RM and the AMs ask, orphans are gone.
	var recovered *nmstore.State
	if s.Recovery {
		if recovered, err = nm.openStore(); err != nil {
			ln.Close()
			wln.Close()
			nm.Shutdown(context.Background())
			return err
		}
	}
	nm.recoverState(recovered)
	if recovered == nil {
		nm.cleanStaleLocalDirs()
	}
	if s.Cgroups.Elastic {
		if err := nm.startElastic(); err != nil {
			ln.Close()
			wln.Close()
			nm.Shutdown(context.Background())
			return err
		}
	}

	nm.cm = rpc.NewServer(rpc.ServerOptions{ErrorClass: exceptions.YarnException, Name: "ContainerManager", MaxDataLength: s.MaxDataLength, Handlers: s.Handlers,
		SecretManager: nm.keys.NMTokens(), TokenRequired: !s.AllowSimple, Metrics: nm.opts.Metrics, Logger: nm.opts.Logger, Authorize: nm.policy.Authorize,
		Kerberos: nm.krb.serverOpt(), QOP: s.QOP, ReadBudget: nm.ipcBudget, Idle: nm.ipcIdle})
	p, err := nmservice.New(protocolNode{nm})
	if err != nil {
		ln.Close()
		wln.Close()
		nm.Shutdown(context.Background())
		return err
	}
	nm.cm.Register(p)
	nm.spawn(func() {
		if err := nm.cm.Serve(ln); err != nil && !errors.Is(err, rpc.ErrServerClosed) {
			nm.log.WithError(err).Error("container manager stopped")
		}
	})
	// The RM's limits (a slow or idle client is dropped, not kept), but for the time an
	// answer may take: container logs are served whole, and a log of gigabytes takes
	// longer than two minutes to a slow reader.
	wo := nm.webOpts
	wo.Log = nm.log // with the node's id now
	web, err := nmweb.Handler(wo)
	if err != nil { // checked in New
		wln.Close()
		nm.Shutdown(context.Background())
		return err
	}
	nm.web = webapp.NewHTTPServer(web)
	nm.web.WriteTimeout = 0
	nm.spawn(func() {
		if err := nm.web.Serve(wln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			nm.log.WithError(err).Error("web server stopped")
		}
	})
	if s.PmemCheck || s.VmemCheck {
		nm.every(s.MonitorEvery, nm.checkMemory)
	}
	nm.every(s.CacheCleanup, nm.trimCaches)
	if la := s.LogAggregation; la.Enabled && la.RollInterval > 0 {
		nm.every(la.RollInterval, nm.logs.Roll)
	}
	nm.every(s.DiskCheckEvery, nm.recheckDisks)
	if nm.host != nil {
		nm.observeHost() // the first heartbeat already carries a measurement
		nm.every(s.Borrow.Interval, nm.observeHost)
	}
	link := newRMLink(nm)
	if err := link.register(nm.ctx); err != nil {
		nm.Shutdown(context.Background())
		return err
	}
	nm.spawn(func() {
		if link.run(nm.ctx) {
			close(nm.done)
		}
	})
	// Applications whose clean-up a restart interrupted resume it.
	for _, id := range nm.table.FinishedApps() {
		nm.spawn(func() { nm.finishApp(id) })
	}
	nm.log.WithFields(logrus.Fields{"address": ln.Addr().String(), "http": wln.Addr().String(), "rm": s.RMTracker,
		"memory_mb": s.MemoryMB, "vcores": s.VCores, "resources": s.Types.Format(s.Offer)}).Info("NodeManager started")
	return nil
}

// Done is closed when the ResourceManager shut the node down (SHUTDOWN); the daemon then
// stops.
func (nm *NodeManager) Done() <-chan struct{} { return nm.done }

// NodeID is the node's "host:port" (after Start).
func (nm *NodeManager) NodeID() string {
	nm.mu.Lock()
	defer nm.mu.Unlock()
	return nm.nodeID
}

// HTTPAddress is the web address, host:port as the node's id names the host (after Start).
func (nm *NodeManager) HTTPAddress() string {
	nm.mu.Lock()
	defer nm.mu.Unlock()
	return nm.httpAddress()
}

// Shutdown stops heartbeating, kills every container (leaving no process behind) and
// stops the servers.
func (nm *NodeManager) Shutdown(ctx context.Context) error {
	if nm.cancel != nil {
		nm.cancel()
	}
	if nm.keepsContainers() {
		nm.log.Info("stopping with yarn.nodemanager.recovery.supervised: containers keep running for the next NodeManager process")
	} else {
		for _, c := range nm.table.All() {
			nm.kill(c, exitcode.KilledByResourceManager, "Container killed on NodeManager shutdown")
		}
	}
	var errs []error
	if nm.cm != nil {
		errs = append(errs, nm.cm.Shutdown(ctx))
	}
	if nm.web != nil {
		errs = append(errs, nm.web.Shutdown(ctx))
	}
	nm.wg.Wait()
	// The services stop once every run has finished: none hears of a container after.
	errs = append(errs, nm.aux.Stop(ctx))
	nm.krb.close()
	errs = append(errs, nm.journal.Close())
	nm.log.Info("NodeManager stopped")
	return errors.Join(errs...)
}

// trimCaches keeps the resource caches under their target size (every cleanup interval).
func (nm *NodeManager) trimCaches() {
	if freed := nm.local.Trim(nm.settings.CacheTarget); freed > 0 {
		nm.log.WithFields(logrus.Fields{"freed_bytes": freed, "cache_bytes": nm.local.CacheSize()}).Info("resource cache trimmed")
	}
}

// every runs f each interval until the NodeManager stops, in a goroutine Shutdown waits for.
func (nm *NodeManager) every(interval time.Duration, f func()) {
	nm.spawn(func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-nm.ctx.Done():
				return
			case <-t.C:
				f()
			}
		}
	})
}
