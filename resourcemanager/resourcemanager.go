// Package resourcemanager is Bobbin's YARN ResourceManager: the services that speak YARN's
// RPC protocols to clients, application masters and NodeManagers, and the state behind
// them.
//
// The state (applications, attempts, nodes, containers, labels, host lists) lives in
// rmstate, whose package comment gives the lock order.
package resourcemanager

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/conf/capacity"
	"github.com/bobbin-yarn/bobbin/conf/resourcetypes"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
	"github.com/bobbin-yarn/bobbin/yarn/security"
	metrics "github.com/rcrowley/go-metrics"
	"github.com/sirupsen/logrus"
)

// Options configure a ResourceManager.
type Options struct {
	Conf *conf.Configuration
	// ConfDir is where capacity-scheduler.xml is re-read on refreshQueues ("" = none).
	ConfDir string
	Queues  *capacity.Tree
	Logger  *logrus.Entry
	Metrics metrics.Registry
	// Now is the clock; the cluster timestamp in every id is its value at New.
	Now func() time.Time
}

// Settings are the configuration values the RM uses, read and checked once at start.
type Settings struct {
	ClientAddr        string
	ClientHandlers    int
	TrackerAddr       string
	TrackerHandlers   int
	SchedulerAddr     string
	SchedulerHandlers int
	AdminAddr         string
	AdminHandlers     int
	WebAddr           string
	NMHeartbeat       time.Duration
	NMExpiry          time.Duration
	MaxDataLength     int
	MaxAllocationMB   int
	MaxAllocationCore int
	MinAllocationMB   int
	MinAllocationCore int
	MaxAttempts       int
	MaxCompletedApps  int
	ACLEnabled        bool
	AdminACL          capacity.ACL
	AMExpiry          time.Duration // yarn.am.liveness-monitor.expiry-interval-ms
	AllocationExpiry  time.Duration // yarn.resourcemanager.rm.container-allocation.expiry-interval-ms
	// Key rolling intervals; each key is activated 1.5 x its liveness interval after it is
	// handed out, so every holder has it before it signs anything.
	AMRMKeyRoll      time.Duration
	ContainerKeyRoll time.Duration
	NMKeyRoll        time.Duration
	IncludePath      string
	ExcludePath      string
	NodeLabels       bool
	DecommissionPoll time.Duration
	Pprof            bool  // bobbin.resourcemanager.webapp.pprof.enabled
	MaxAppPriority   int32 // yarn.cluster.max-application-priority
}

// Key-rolling keys and the liveness interval each must exceed three times over.
const (
	keyAMRMRoll      = "yarn.resourcemanager.am-rm-tokens.master-key-rolling-interval-secs"
	keyContainerRoll = "yarn.resourcemanager.container-tokens.master-key-rolling-interval-secs"
	keyNMRoll        = "yarn.resourcemanager.nm-tokens.master-key-rolling-interval-secs"
	keyAMExpiry      = "yarn.am.liveness-monitor.expiry-interval-ms"
	keyNMExpiry      = "yarn.nm.liveness-monitor.expiry-interval-ms"
)

// ReadSettings reads and validates the RM's keys, returning every problem at once.
func ReadSettings(c *conf.Configuration) (Settings, error) {
	var s Settings
	var errs []error
	intKey := func(key string, dst *int, min int) {
		v, err := c.Int(key)
		if err != nil {
			errs = append(errs, err)
			return
		}
		if v < min {
			raw, _ := c.Raw(key)
			errs = append(errs, &conf.ValueError{Source: c.Source(key), Key: key, Value: raw, Reason: fmt.Sprintf("must be at least %d", min)})
			return
		}
		*dst = v
	}
	var err error
	if s.ClientAddr, err = bindAddress(c, "yarn.resourcemanager.address", 8032); err != nil {
		errs = append(errs, err)
	}
	intKey("yarn.resourcemanager.client.thread-count", &s.ClientHandlers, 1)
	if s.TrackerAddr, err = bindAddress(c, "yarn.resourcemanager.resource-tracker.address", 8031); err != nil {
		errs = append(errs, err)
	}
	intKey("yarn.resourcemanager.resource-tracker.client.thread-count", &s.TrackerHandlers, 1)
	if s.SchedulerAddr, err = bindAddress(c, "yarn.resourcemanager.scheduler.address", 8030); err != nil {
		errs = append(errs, err)
	}
	intKey("yarn.resourcemanager.scheduler.client.thread-count", &s.SchedulerHandlers, 1)
	if s.AdminAddr, err = bindAddress(c, "yarn.resourcemanager.admin.address", 8033); err != nil {
		errs = append(errs, err)
	}
	intKey("yarn.resourcemanager.admin.client.thread-count", &s.AdminHandlers, 1)
	if s.WebAddr, err = bindAddress(c, "yarn.resourcemanager.webapp.address", 8088); err != nil {
		errs = append(errs, err)
	}
	for key, dst := range map[string]*time.Duration{
		"yarn.resourcemanager.nodemanagers.heartbeat-interval-ms": &s.NMHeartbeat,
		keyNMExpiry: &s.NMExpiry,
		keyAMExpiry: &s.AMExpiry,
		"yarn.resourcemanager.rm.container-allocation.expiry-interval-ms": &s.AllocationExpiry,
		keyAMRMRoll:      &s.AMRMKeyRoll,
		keyContainerRoll: &s.ContainerKeyRoll,
		keyNMRoll:        &s.NMKeyRoll,
		"yarn.resourcemanager.decommissioning-nodes-watcher.poll-interval-secs": &s.DecommissionPoll,
	} {
		unit := time.Millisecond
		if strings.HasSuffix(key, "-secs") {
			unit = time.Second
		}
		d, err := c.Duration(key, unit)
		if err == nil && d <= 0 {
			raw, _ := c.Raw(key)
			err = &conf.ValueError{Source: c.Source(key), Key: key, Value: raw, Reason: "must be positive"}
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		*dst = d
	}
	intKey("ipc.maximum.data.length", &s.MaxDataLength, 1024)
	intKey("yarn.scheduler.minimum-allocation-mb", &s.MinAllocationMB, 0)
	intKey("yarn.scheduler.maximum-allocation-mb", &s.MaxAllocationMB, 1)
	intKey("yarn.scheduler.minimum-allocation-vcores", &s.MinAllocationCore, 0)
	intKey("yarn.scheduler.maximum-allocation-vcores", &s.MaxAllocationCore, 1)
	intKey("yarn.resourcemanager.am.max-attempts", &s.MaxAttempts, 1)
	intKey("yarn.resourcemanager.max-completed-applications", &s.MaxCompletedApps, 0)
	var maxPriority int
	intKey("yarn.cluster.max-application-priority", &maxPriority, 0)
	s.MaxAppPriority = int32(maxPriority)
	if s.MaxAllocationMB > 0 && s.MinAllocationMB > s.MaxAllocationMB {
		errs = append(errs, fmt.Errorf("conf: yarn.scheduler.minimum-allocation-mb (%d) exceeds yarn.scheduler.maximum-allocation-mb (%d)", s.MinAllocationMB, s.MaxAllocationMB))
	}
	if s.MaxAllocationCore > 0 && s.MinAllocationCore > s.MaxAllocationCore {
		errs = append(errs, fmt.Errorf("conf: yarn.scheduler.minimum-allocation-vcores (%d) exceeds yarn.scheduler.maximum-allocation-vcores (%d)", s.MinAllocationCore, s.MaxAllocationCore))
	}
	if s.ACLEnabled, err = c.Bool("yarn.acl.enable"); err != nil {
		errs = append(errs, err)
	}
	admin, err := c.Get("yarn.admin.acl")
	if err != nil {
		errs = append(errs, err)
	}
	s.AdminACL = capacity.ParseACL(admin)
	// As the Java secret managers insist: a key must be rolled no sooner than it can be
	// activated twice over, or tokens could be signed with a key a holder lacks.
	for _, r := range []struct {
		roll, expiry         string
		interval, activation time.Duration
	}{
		{keyAMRMRoll, keyAMExpiry, s.AMRMKeyRoll, s.AMExpiry * 3 / 2},
		{keyContainerRoll, keyNMExpiry, s.ContainerKeyRoll, s.NMExpiry * 3 / 2},
		{keyNMRoll, keyNMExpiry, s.NMKeyRoll, s.NMExpiry * 3 / 2},
	} {
		if r.interval > 0 && r.activation > 0 && r.interval <= 2*r.activation {
			raw, _ := c.Raw(r.roll)
			errs = append(errs, &conf.ValueError{Source: c.Source(r.roll), Key: r.roll, Value: raw, Reason: "should be more than 3 X " + r.expiry})
		}
	}
	if s.IncludePath, err = c.Trimmed("yarn.resourcemanager.nodes.include-path"); err != nil {
		errs = append(errs, err)
	}
	if s.ExcludePath, err = c.Trimmed("yarn.resourcemanager.nodes.exclude-path"); err != nil {
		errs = append(errs, err)
	}
	if s.NodeLabels, err = c.Bool("yarn.node-labels.enabled"); err != nil {
		errs = append(errs, err)
	}
	if s.Pprof, err = c.Bool("bobbin.resourcemanager.webapp.pprof.enabled"); err != nil {
		errs = append(errs, err)
	}
	// Features that change what the RM promises clients are refused rather than ignored.
	for _, key := range []string{"yarn.resourcemanager.resource-profiles.enabled", "yarn.resourcemanager.reservation-system.enable"} {
		on, err := c.Bool(key)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if on {
			errs = append(errs, &conf.ValueError{Source: c.Source(key), Key: key, Value: "true", Reason: "Bobbin does not support this feature; set it to false (the calls are then answered as the Java RM answers them with it off)"})
		}
	}
	return s, errors.Join(errs...)
}

// bindAddress resolves the address a server listens on: the configured address, with its
// host replaced by yarn.resourcemanager.bind-host when that is set.
func bindAddress(c *conf.Configuration, key string, defaultPort int) (string, error) {
	host, port, err := c.HostPort(key, defaultPort)
	if err != nil {
		return "", err
	}
	if bh, err := c.Trimmed("yarn.resourcemanager.bind-host"); err != nil {
		return "", err
	} else if bh != "" {
		host = bh
	}
	return net.JoinHostPort(host, strconv.Itoa(port)), nil
}

// ResourceManager owns the RM's services. Start binds them; Shutdown stops them.
type ResourceManager struct {
	opts     Options
	settings Settings
	log      *logrus.Entry
	// clusterTimestamp is the RM start time in ms, the first number of every id.
	clusterTimestamp int64

	apps            *rmstate.Apps
	nodes           *rmstate.Nodes
	containerKeys   *security.KeyRing
	nmKeys          *security.KeyRing
	amrm            *security.AMRMTokens
	engine          *scheduler.Engine
	types           resourcetypes.Types // memory-mb, vcores and resource-types.xml's, in the engine's order
	containers      *rmstate.Containers
	containerTokens security.ContainerTokens
	kick            chan struct{}
	client          *rpc.Server
	tracker         *rpc.Server
	scheduler       *rpc.Server
	admin           *rpc.Server
	clientAddr      net.Addr
	trackerAddr     net.Addr
	schedulerAddr   net.Addr
	adminAddr       net.Addr
	webAddr         net.Addr
	web             *http.Server
	stopWatch       context.CancelFunc

	mu      sync.Mutex
	serving sync.WaitGroup
	started bool

	queueMu   sync.RWMutex
	queueTree *capacity.Tree // replaced by refreshQueues

	metrics     *rmMetrics
	labels      *rmstate.Labels
	nodeAdminMu sync.Mutex
	hosts       *rmstate.HostLists // replaced by refreshNodes
	rollers     []*keyRoller
	stepMu      sync.Mutex // one Step at a time (the monitor's, or a test's)
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
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if err := opts.Conf.Validate(); err != nil {
		return nil, err
	}
	settings, err := ReadSettings(opts.Conf)
	if err != nil {
		return nil, err
	}
	if opts.Queues == nil {
		if opts.Queues, err = capacity.Load(opts.Conf, ""); err != nil {
			return nil, err
		}
	}
	// The scheduler's own keys (policies, thresholds, time windows) are checked at start-up
	// too, so a bad value stops the RM instead of surfacing on first use.
	engineCfg, groups, err := scheduler.FromConf(opts.Queues.Conf, opts.Queues)
	if err != nil {
		return nil, err
	}
	engineCfg.Groups, engineCfg.Now = groups, opts.Now
	// Hadoop 3.1 resource types (resource-types.xml): GPUs and other countable types are
	// the engine's extra dimensions.
	types, err := resourcetypes.Load(opts.Conf, scheduler.MaxResourceTypes)
	if err != nil {
		return nil, err
	}
	engineCfg.Types = scheduler.Types{Names: types.Names()}
	engine, err := scheduler.New(engineCfg, opts.Queues)
	if err != nil {
		return nil, err
	}
	rm := &ResourceManager{
		opts:             opts,
		settings:         settings,
		types:            types,
		log:              opts.Logger.WithField("component", "resourcemanager"),
		clusterTimestamp: opts.Now().UnixMilli(),
	}
	if rm.hosts, err = rmstate.LoadHostLists(settings.IncludePath, settings.ExcludePath); err != nil {
		return nil, err
	}
	rm.metrics = newRMMetrics(opts.Metrics)
	rm.labels = rmstate.NewLabels(opts.Queues.Labels())
	rm.apps = rmstate.NewApps(rm.clusterTimestamp, rm.opts.Now)
	rm.nodes = rmstate.NewNodes()
	rm.containerKeys = security.NewKeyRing(1)
	rm.nmKeys = security.NewKeyRing(1)
	rm.amrm = security.NewAMRMTokens(security.NewKeyRing(1))
	rm.engine, rm.containers, rm.kick = engine, rmstate.NewContainers(types, opts.Now), make(chan struct{}, 1)
	rm.queueTree = opts.Queues
	rm.containerTokens = security.ContainerTokens{Keys: rm.containerKeys, RMIdentifier: rm.clusterTimestamp}
	start := opts.Now()
	rm.rollers = []*keyRoller{
		newKeyRoller("amrm", rm.amrm.Keys, settings.AMRMKeyRoll, settings.AMExpiry*3/2, start),
		newKeyRoller("container", rm.containerKeys, settings.ContainerKeyRoll, settings.NMExpiry*3/2, start),
		newKeyRoller("nmtoken", rm.nmKeys, settings.NMKeyRoll, settings.NMExpiry*3/2, start),
	}
	cs, err := newClientService(rm)
	if err != nil {
		return nil, err
	}
	rt, err := newResourceTracker(rm)
	if err != nil {
		return nil, err
	}
	rm.tracker = rpc.NewServer(rpc.ServerOptions{ErrorClass: exceptions.YarnException,
		Name:          "ResourceTrackerService",
		MaxDataLength: settings.MaxDataLength,
		Handlers:      settings.TrackerHandlers,
		Metrics:       opts.Metrics,
		Logger:        opts.Logger,
	})
	rm.tracker.Register(rt)
	ams, err := newAMService(rm)
	if err != nil {
		return nil, err
	}
	// The scheduler port offers TOKEN and SIMPLE like a Java RM on an insecure cluster; the
	// AM service itself refuses calls without an AMRMToken.
	rm.scheduler = rpc.NewServer(rpc.ServerOptions{ErrorClass: exceptions.YarnException,
		Name:          "ApplicationMasterService",
		MaxDataLength: settings.MaxDataLength,
		Handlers:      settings.SchedulerHandlers,
		SecretManager: rm.amrm,
		Metrics:       opts.Metrics,
		Logger:        opts.Logger,
	})
	rm.scheduler.Register(ams)
	adm, err := newAdminService(rm)
	if err != nil {
		return nil, err
	}
	rm.admin = rpc.NewServer(rpc.ServerOptions{ErrorClass: exceptions.YarnException, Name: "AdminService", MaxDataLength: settings.MaxDataLength,
		Handlers: settings.AdminHandlers, Metrics: opts.Metrics, Logger: opts.Logger})
	rm.admin.Register(adm)
	rm.client = rpc.NewServer(rpc.ServerOptions{ErrorClass: exceptions.YarnException,
		Name:          "ClientRMService",
		MaxDataLength: settings.MaxDataLength,
		Handlers:      settings.ClientHandlers,
		Metrics:       opts.Metrics,
		Logger:        opts.Logger,
	})
	rm.client.Register(cs)
	return rm, nil
}

// queues is the current queue tree.
func (rm *ResourceManager) queues() *capacity.Tree {
	rm.queueMu.RLock()
	defer rm.queueMu.RUnlock()
	return rm.queueTree
}

// RefreshQueues re-reads capacity-scheduler.xml and applies it without stopping running
// work. Any error leaves the old queues in place.
func (rm *ResourceManager) RefreshQueues() error {
	tree, err := capacity.Load(rm.opts.Conf, rm.opts.ConfDir)
	if err != nil {
		return err
	}
	_, groups, err := scheduler.FromConf(tree.Conf, tree)
	if err != nil {
		return err
	}
	if err := rm.engine.Refresh(tree, groups); err != nil {
		return err
	}
	rm.queueMu.Lock()
	rm.queueTree = tree
	rm.queueMu.Unlock()
	rm.labels.Add(tree.Labels())
	rm.log.WithField("queues", len(tree.Queues())).Info("queues refreshed")
	return nil
}

// ClusterTimestamp is the RM's start time in milliseconds.
func (rm *ResourceManager) ClusterTimestamp() int64 { return rm.clusterTimestamp }

// Start binds every service's listener and serves in the background. A bind failure
// closes what was already opened.
func (rm *ResourceManager) Start() error {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	if rm.started {
		return errors.New("resourcemanager: already started")
	}
	ln, err := net.Listen("tcp", rm.settings.ClientAddr)
	if err != nil {
		return fmt.Errorf("resourcemanager: bind yarn.resourcemanager.address %s: %w", rm.settings.ClientAddr, err)
	}
	tln, err := net.Listen("tcp", rm.settings.TrackerAddr)
	if err != nil {
		ln.Close()
		return fmt.Errorf("resourcemanager: bind yarn.resourcemanager.resource-tracker.address %s: %w", rm.settings.TrackerAddr, err)
	}
	sln, err := net.Listen("tcp", rm.settings.SchedulerAddr)
	if err != nil {
		ln.Close()
		tln.Close()
		return fmt.Errorf("resourcemanager: bind yarn.resourcemanager.scheduler.address %s: %w", rm.settings.SchedulerAddr, err)
	}
	aln, err := net.Listen("tcp", rm.settings.AdminAddr)
	if err != nil {
		ln.Close()
		tln.Close()
		sln.Close()
		return fmt.Errorf("resourcemanager: bind yarn.resourcemanager.admin.address %s: %w", rm.settings.AdminAddr, err)
	}
	wln, err := net.Listen("tcp", rm.settings.WebAddr)
	if err != nil {
		ln.Close()
		tln.Close()
		sln.Close()
		aln.Close()
		return fmt.Errorf("resourcemanager: bind yarn.resourcemanager.webapp.address %s: %w", rm.settings.WebAddr, err)
	}
	rm.started = true
	rm.webAddr = wln.Addr()
	rm.web = &http.Server{Handler: rm.webHandler(), ReadHeaderTimeout: 10 * time.Second}
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
	ctx, cancel := context.WithCancel(context.Background())
	rm.stopWatch = cancel
	rm.serving.Add(2)
	go func() {
		defer rm.serving.Done()
		rm.monitor(ctx)
	}()
	go func() {
		defer rm.serving.Done()
		rm.scheduleLoop(ctx)
	}()
	rm.log.WithFields(logrus.Fields{"cluster_timestamp": rm.clusterTimestamp, "client_address": ln.Addr().String(),
		"resource_tracker_address": tln.Addr().String(), "scheduler_address": sln.Addr().String(), "webapp_address": wln.Addr().String(),
		"queues": len(rm.queues().Queues())}).Info("ResourceManager started")
	return nil
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

// Shutdown stops every service, letting calls in progress finish until ctx ends.
func (rm *ResourceManager) Shutdown(ctx context.Context) error {
	rm.mu.Lock()
	if rm.stopWatch != nil {
		rm.stopWatch()
	}
	rm.mu.Unlock()
	var webErr error
	if rm.web != nil {
		webErr = rm.web.Shutdown(ctx)
	}
	err := errors.Join(rm.client.Shutdown(ctx), rm.tracker.Shutdown(ctx), rm.scheduler.Shutdown(ctx), rm.admin.Shutdown(ctx), webErr)
	rm.serving.Wait()
	rm.log.Info("ResourceManager stopped")
	return err
}
