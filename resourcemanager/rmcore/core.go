package rmcore

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	metrics "github.com/rcrowley/go-metrics"
	"github.com/sirupsen/logrus"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/conf/capacity"
	"github.com/bobbin-yarn/bobbin/conf/resourcetypes"
	"github.com/bobbin-yarn/bobbin/resourcemanager/delegation"
	"github.com/bobbin-yarn/bobbin/resourcemanager/labelstore"
	"github.com/bobbin-yarn/bobbin/resourcemanager/logretention"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
	"github.com/bobbin-yarn/bobbin/resourcemanager/statestore"
	"github.com/bobbin-yarn/bobbin/resourcemanager/tokenrenewer"
	"github.com/bobbin-yarn/bobbin/yarn/audit"
	"github.com/bobbin-yarn/bobbin/yarn/hdfsdt"
	"github.com/bobbin-yarn/bobbin/yarn/security"
)

// Core is what the protocol services share: the state, the scheduling engine, the keys,
// and the loops that move applications, attempts and containers through their lives.
type Core struct {
	opts     Options
	settings Settings
	log      *logrus.Entry
	audit    *audit.Logger // RMAuditLogger's lines
	// endAudited holds the applications whose end the audit log has (EndApp may run
	// more than once for one), until they are retired.
	endAudited sync.Map
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
	// reports are heartbeats' container statuses waiting to be applied (QueueStatuses).
	reports reportQueue

	queueMu sync.RWMutex
	// queueWrite orders the tree's replacements (refresh, reload, a created fair queue).
	queueWrite sync.Mutex
	queueTree  *capacity.Tree // replaced by refreshQueues

	metrics *Metrics
	labels  *rmstate.Labels
	// labelStore is the Java RM's node-label store (yarn.node-labels.fs-store.root-dir),
	// open while node labels are enabled; nil otherwise.
	labelStore  *labelstore.Store
	nodeAdminMu sync.Mutex
	hosts       *rmstate.HostLists // replaced by refreshNodes
	// decommissioning are the graceful decommissions a restart recovered, until their node
	// registers again (zero time: no deadline).
	decommissioning map[string]time.Time
	// storedNodes are the node records as the store holds them (read at recovery, then
	// as written): a NodeManager registering again as it was is not written again — a
	// restart's thousands of registrations would each wait for a store write.
	storedNodes map[string]statestore.NodeRecord
	rollers     []*keyRoller
	// delegation issues and verifies RM delegation tokens; delegTick is when its expired
	// tokens were last swept.
	delegation *delegation.Manager
	delegTick  time.Time
	// retryTick is when the monitor last wrote again what the state store refused.
	retryTick time.Time
	// tokens renews the delegation tokens applications submit (nil without Kerberos);
	// hdfsTokens is its NameNode client and login the RM's Kerberos login for it.
	tokens     *tokenrenewer.Renewer
	hdfsTokens *hdfsdt.Client
	login      *rmLogin
	stepMu     sync.Mutex // one Step at a time (the monitor's, or a test's)
	// passMu: one SchedulePass slice at a time, held exclusively; a registration holds it
	// shared while it adds its node and books the containers it reports, so that no pass
	// sees the node before they are booked, while registrations (a restart's thousands)
	// book theirs side by side. Taken before the engine's lock and the tables'.
	passMu sync.RWMutex
	passes passMeter       // the passes' busy time and assignments (leaf lock)
	health schedulerHealth // what the scheduler did last (leaf lock)
	tasks  sync.WaitGroup  // the loops Run starts and AM launches
	// stopped is Run's context's Done: AM launches waiting to try again end with it.
	stopped <-chan struct{}
	// logRetention deletes aggregated logs past yarn.log-aggregation.retain-seconds
	// (nil: they are kept).
	logRetention *logretention.Deleter
	// store keeps applications across restarts (nil: recovery is off).
	store statestore.Store
	// recovery holds scheduling back after a work-preserving restart (nil: never).
	recovery *recoveryGate
	// done is closed when the RM must stop serving: another RM took over its state
	// store (fenced).
	done     chan struct{}
	doneOnce sync.Once
}

// Done is closed when the RM must stop: the daemon then shuts down and exits non-zero.
func (rm *Core) Done() <-chan struct{} { return rm.done }

// storeFailed sees every failed state store write; a fenced store stops the RM, which
// must not act on a state another RM now owns.
func (rm *Core) storeFailed(err error) {
	if errors.Is(err, statestore.ErrFenced) {
		rm.doneOnce.Do(func() {
			rm.log.WithError(err).Error("another ResourceManager took over the state store: stopping")
			close(rm.done)
		})
	}
}

// New builds the RM's state, engine and keys from configuration, checking every key
// it reads; nothing runs until Run.
func New(opts Options) (*Core, error) {
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
	if opts.Security == nil {
		if opts.Security, err = NewSecurity(opts.Conf, opts.ConfDir, opts.Now, opts.Metrics); err != nil {
			return nil, err
		}
	}
	if opts.Queues == nil {
		if opts.Queues, err = capacity.Load(opts.Conf, opts.ConfDir); err != nil {
			return nil, err
		}
	}
	if err := checkQueueMaxAllocation(opts.Queues, settings); err != nil {
		return nil, err
	}
	// The scheduler's own keys (policies, thresholds, time windows) are checked at start-up
	// too, so a bad value stops the RM instead of surfacing on first use.
	// Hadoop 3.1 resource types (resource-types.xml): GPUs and other countable types are
	// the engine's extra dimensions.
	types, err := resourcetypes.Load(opts.Conf, scheduler.MaxResourceTypes)
	if err != nil {
		return nil, err
	}
	engineCfg, groups, err := scheduler.FromConf(opts.Queues.Conf, opts.Queues, scheduler.Types{Names: types.Names()})
	if err != nil {
		return nil, err
	}
	if engineCfg.FitByMemory && types.Len() > 2 {
		// As on the Java RM, which says nothing: its default calculator drops them.
		opts.Logger.WithField("resource_types", strings.Join(types.Names()[2:], ",")).Warn("resource types beyond memory and vcores are not scheduled under the DefaultResourceCalculator (asks are normalized to memory and one vcore); set " +
			scheduler.KeyResourceCalculator + " to " + scheduler.DominantResourceCalculator + " to schedule them")
	}
	engineCfg.Groups, engineCfg.Now = groups, opts.Now
	engineCfg.MinimumAllocation[scheduler.Memory] = int64(settings.MinAllocationMB)
	engineCfg.MinimumAllocation[scheduler.VCores] = int64(settings.MinAllocationCore)
	engine, err := scheduler.New(engineCfg, opts.Queues)
	if err != nil {
		return nil, err
	}
	rm := &Core{
		opts:             opts,
		settings:         settings,
		types:            types,
		log:              opts.Logger.WithField("component", "resourcemanager"),
		audit:            audit.New(opts.Logger, "rmaudit"),
		clusterTimestamp: opts.Now().UnixMilli(),
		done:             make(chan struct{}),
	}
	rm.reports.idle.L = &rm.reports.mu
	if rm.hosts, err = rmstate.LoadHostLists(settings.IncludePath, settings.ExcludePath); err != nil {
		return nil, err
	}
	rm.metrics = NewMetrics(opts.Metrics)
	rm.labels = rmstate.NewLabels()
	rm.apps = rmstate.NewApps(rm.clusterTimestamp, rm.opts.Now)
	rm.apps.SetLogAggregation(rm.settings.LogAggregation)
	if ls, on, err := logretention.ReadSettings(opts.Conf); err != nil {
		return nil, err
	} else if on {
		rm.logRetention = &logretention.Deleter{Conf: opts.Conf, Settings: ls, Running: rm.apps.Running, Now: rm.opts.Now,
			Log: rm.log.WithField("service", "log-retention")}
	}
	rm.nodes = rmstate.NewNodes()
	host, _ := os.Hostname()
	if rm.store, err = statestore.Open(opts.Conf, fmt.Sprintf("%s/%d@%d", host, os.Getpid(), rm.clusterTimestamp), rm.log); err != nil {
		return nil, err
	}
	var st *statestore.State
	if rm.store != nil {
		rm.store = statestore.Metered(rm.store, opts.Metrics, rm.storeFailed)
		if st, err = rm.store.Load(); err != nil {
			rm.store.Close()
			return nil, err
		}
	}
	rings, err := keyRings(st)
	if err != nil { // only stored keys fail to restore
		rm.store.Close()
		return nil, fmt.Errorf("state store %s: %w", rm.store.Location(), err)
	}
	rm.containerKeys, rm.nmKeys = rings[ringContainer], rings[ringNMToken]
	rm.amrm = security.NewAMRMTokens(rings[ringAMRM])
	rm.engine, rm.containers, rm.kick = engine, rmstate.NewContainers(types, opts.Now), make(chan struct{}, 1)
	rm.queueTree = opts.Queues
	rm.containerTokens = security.ContainerTokens{Keys: rm.containerKeys, RMIdentifier: rm.clusterTimestamp}
	start := opts.Now()
	rm.rollers = []*keyRoller{
		newKeyRoller(ringAMRM, rm.amrm.Keys, settings.AMRMKeyRoll, settings.AMExpiry*3/2, start),
		newKeyRoller(ringContainer, rm.containerKeys, settings.ContainerKeyRoll, settings.NMExpiry*3/2, start),
		newKeyRoller(ringNMToken, rm.nmKeys, settings.NMKeyRoll, settings.NMExpiry*3/2, start),
	}
	if rm.store != nil {
		for _, k := range rm.rollers {
			name := k.name
			k.save = func(st security.RingState) error { return rm.store.PutKeys(name, keysRecordOf(st)) }
		}
		// The keys are stored before anything is signed with them.
		for name, ring := range rings {
			if err := rm.saveKeys(name, ring); err != nil {
				rm.store.Close()
				return nil, err
			}
		}
		if err := rm.recover(st); err != nil {
			rm.store.Close()
			return nil, err
		}
	}
	if err := rm.openLabelStore(st); err != nil {
		if rm.store != nil {
			rm.store.Close()
		}
		return nil, err
	}
	if err := rm.startDelegation(st); err != nil {
		rm.closeLabelStore()
		if rm.store != nil {
			rm.store.Close()
		}
		return nil, err
	}
	rm.startTokenRenewer()
	return rm, nil
}

// startDelegation creates the delegation-token secret manager, with the tokens and keys
// the store kept when there is one.
func (rm *Core) startDelegation(st *statestore.State) error {
	// Read at each use: the daemon sets the auth_to_local rules after building the core.
	short := func(n string) (string, error) {
		if f := rm.opts.Security.ShortName; f != nil {
			return f(n)
		}
		return n, nil
	}
	var p delegation.Persister
	var restored delegation.State
	if rm.store != nil {
		var err error
		if restored, err = delegation.StateFrom(st.Delegation); err != nil {
			return fmt.Errorf("state store %s: %w", rm.store.Location(), err)
		}
		p = delegation.NewStorePersister(rm.store, restored.Seq)
	}
	m, err := delegation.New(rm.settings.Delegation, rm.opts.Now, short, p)
	if err != nil {
		return err
	}
	if err := m.Restore(restored); err != nil {
		return fmt.Errorf("state store: delegation tokens: %w", err)
	}
	if n := len(restored.Tokens); n > 0 {
		rm.log.WithField("tokens", n).Info("RM delegation tokens recovered")
	}
	rm.delegation = m
	return nil
}

// Run starts the scheduling loop and the monitor; they stop when ctx ends.
func (rm *Core) Run(ctx context.Context) {
	rm.stopped = ctx.Done()
	rm.tasks.Add(2)
	go func() {
		defer rm.tasks.Done()
		rm.monitor(ctx)
	}()
	go func() {
		defer rm.tasks.Done()
		rm.scheduleLoop(ctx)
	}()
	if capacity.UsesFairScheduler(rm.opts.Conf) {
		rm.tasks.Add(1)
		go func() {
			defer rm.tasks.Done()
			every := rm.opts.FairReload
			if every <= 0 {
				every = FairReloadInterval
			}
			rm.watchFairFile(ctx, every)
		}()
	}
	if d := rm.logRetention; d != nil {
		rm.tasks.Add(1)
		go func() {
			defer rm.tasks.Done()
			d.Run(ctx)
		}()
	}
	if r := rm.tokens; r != nil {
		rm.tasks.Add(1)
		go func() {
			defer rm.tasks.Done()
			rm.trackRecoveredTokens(ctx)
			r.Run(ctx)
		}()
	}
}

// Wait returns once the loops Run started and every AM launch have ended.
func (rm *Core) Wait() { rm.tasks.Wait() }

// Queues is the current queue tree.
func (rm *Core) Queues() *capacity.Tree {
	rm.queueMu.RLock()
	defer rm.queueMu.RUnlock()
	return rm.queueTree
}

// RefreshQueues re-reads capacity-scheduler.xml (or the Fair Scheduler's allocation file,
// keeping the queues its placement policy created) and applies it without stopping
// running work. Any error leaves the old queues in place.
func (rm *Core) RefreshQueues() error {
	rm.queueWrite.Lock()
	defer rm.queueWrite.Unlock()
	var tree *capacity.Tree
	var err error
	if capacity.UsesFairScheduler(rm.opts.Conf) {
		tree, err = capacity.LoadFair(rm.opts.Conf, rm.opts.ConfDir, rm.Queues().FairCreated)
	} else {
		tree, err = capacity.Load(rm.opts.Conf, rm.opts.ConfDir)
	}
	if err != nil {
		return err
	}
	return rm.applyQueues(tree)
}

// applyQueues makes tree the RM's queues; the caller holds queueWrite.
func (rm *Core) applyQueues(tree *capacity.Tree) error {
	_, groups, err := scheduler.FromConf(tree.Conf, tree, rm.engine.Types())
	if err != nil {
		return err
	}
	if err := checkQueueMaxAllocation(tree, rm.settings); err != nil {
		return err
	}
	if err := rm.engine.Refresh(tree, groups); err != nil {
		return err
	}
	rm.queueMu.Lock()
	rm.queueTree = tree
	rm.queueMu.Unlock()
	rm.log.WithFields(map[string]any{"queues": len(tree.Queues()), "source": tree.Source}).Info("queues refreshed")
	return nil
}

// ClusterTimestamp is the RM's start time in milliseconds.
func (rm *Core) ClusterTimestamp() int64 { return rm.clusterTimestamp }

// RunningNodes is the number of RUNNING NodeManagers.
func (rm *Core) RunningNodes() int { return int(rm.nodes.Running()) }

// Version is what the RM reports to NodeManagers and on its web endpoints.
const Version = "2.7.3-bobbin"

// Close releases the state store and the NameNode connections (after Wait).
func (rm *Core) Close() error {
	if rm.hdfsTokens != nil {
		rm.hdfsTokens.Close()
		rm.login.close()
	}
	rm.closeLabelStore()
	if rm.store == nil {
		return nil
	}
	return rm.store.Close()
}

// firstKeyID is a random positive key id with room to roll for ever in practice.
func firstKeyID() int32 {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 1
	}
	return int32(binary.BigEndian.Uint32(b[:])>>2) + 1
}

// Audit is the RM's audit logger (RMAuditLogger's lines).
func (rm *Core) Audit() *audit.Logger { return rm.audit }
