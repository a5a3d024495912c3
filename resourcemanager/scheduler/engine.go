package scheduler

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bobbin-yarn/bobbin/conf/capacity"
)

// Config holds the engine's settings (bobbin.scheduler.* keys).
type Config struct {
	Types    Types
	Strategy string // rings (default), balance, first-fit
	// CPUOnly accounts group usage by vcores alone instead of the dominant share.
	CPUOnly bool
	// LimitsByMemory measures the Capacity Scheduler's caps (maximum-capacity,
	// user-limit-factor, maximum-am-resource-percent) by memory alone, as Apache's
	// DefaultResourceCalculator does; false measures them by the dominant share, as its
	// DominantResourceCalculator does (yarn.scheduler.capacity.resource-calculator).
	LimitsByMemory bool
	// FitByMemory fits containers on nodes by memory alone, and ranks and preempts groups
	// by their memory, as the Java Capacity Scheduler does under its
	// DefaultResourceCalculator (whose asks the RM normalizes to one vcore each): a node's
	// vcores may then be overcommitted. False fits every type (Bobbin's multi-resource
	// placement; the DominantResourceCalculator's and the Fair Scheduler's behaviour).
	FitByMemory bool
	// Rings per resource type; SearchLimit is N, the rings searched above the request's.
	Rings       [MaxResourceTypes]RingConfig
	SearchLimit int
	// Visits bounds the nodes one placement examines in an index walk.
	Visits int
	// Balance configures the balance strategy.
	Balance BalanceConfig
	// Preemption configures hysteresis preemption.
	Preemption PreemptionConfig
	// BlacklistThreshold: when an app's blacklisted share of a label's nodes exceeds it,
	// the label's nodes leave the app's blacklist (per-label blacklist reset).
	BlacklistThreshold float64
	// Groups holds each leaf queue's Bobbin settings by queue path.
	Groups map[string]GroupSettings
	// Location is the time zone of time-of-day quotas.
	Location *time.Location
	// MinimumAllocation is the RM's yarn.scheduler.minimum-allocation-mb/-vcores: the user
	// limit is rounded up to a multiple of it, as the Capacity Scheduler rounds it.
	MinimumAllocation Resource
	// NodeLocalityDelay is how many scheduling opportunities an ask naming hosts waits for
	// one of them (yarn.scheduler.capacity.node-locality-delay); as many again for its racks.
	NodeLocalityDelay int
	// RackLocalityAdditionalDelay (3.x yarn.scheduler.capacity.rack-locality-additional-delay)
	// is how many opportunities beyond NodeLocalityDelay an ask naming racks waits before
	// taking any node; -1 (the default) waits as many again as NodeLocalityDelay.
	RackLocalityAdditionalDelay int
	// Now is the clock; allocations carry its time.
	Now func() time.Time
	// Explain fills Unplaced.Rejected: for every ask no node took, how many nodes each
	// filter turned down (the simulator's --explain; it costs a scan of the partition).
	Explain bool
}

// limitMeasure is how the queue caps are measured, as limitsAllow takes it: memory alone
// (index 0 only) under DefaultResourceCalculator, else every one of types, or vcores alone
// with bobbin.scheduler.usage=cpu.
func (e *Engine) limitMeasure(types int) (int, bool) {
	if e.cfg.LimitsByMemory || e.cfg.FitByMemory {
		return 1, false
	}
	return types, e.cfg.CPUOnly
}

// usageMeasure is how groups are ranked against their quotas and preempted: memory alone
// under FitByMemory or the Fair Scheduler's fair policy at the root, else every type (or
// vcores alone with bobbin.scheduler.usage=cpu).
func (e *Engine) usageMeasure() (int, bool) {
	if e.cfg.FitByMemory || e.rankByMemory {
		return 1, false
	}
	return e.cfg.Types.Len(), e.cfg.CPUOnly
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	c := Config{Types: DefaultTypes, Strategy: StrategyAuto, SearchLimit: 8, Visits: 256, Balance: DefaultBalanceConfig(), Preemption: DefaultPreemptionConfig(),
		BlacklistThreshold: 0.8, Location: time.Local, NodeLocalityDelay: 40, RackLocalityAdditionalDelay: -1, LimitsByMemory: true, Now: time.Now}
	c.Rings[Memory] = RingConfig{Base: 0, Width: 1024}
	c.Rings[VCores] = RingConfig{Base: 0, Width: 1}
	for i := 2; i < MaxResourceTypes; i++ {
		c.Rings[i] = RingConfig{Base: 0, Width: 1}
	}
	return c
}

// partition is one node label's nodes and their index.
type partition struct {
	name      string
	nodes     map[string]*node
	total     Resource
	allocated Resource
	place     placer
	balance   *balance // set when the strategy is balance
	// pendingShapes counts outstanding ANY containers by capability, for the balance
	// weights' "blocked requests" score.
	pendingShapes map[Resource]int
	weights       []float64
	weightsDirty  bool
	// w0, w1, w2 are the parts weights was last made of (Config.Explain reports them).
	w0, w1, w2 [MaxResourceTypes]float64
	// static counts schedulable static nodes, so AM asks know whether to insist on one.
	static int
	// lends: a non-exclusive label's partition, whose idle nodes default-partition work
	// may use (shared.go).
	lends bool
}

// Engine is the scheduling engine. All methods are safe for concurrent use. Lock rule:
// e.mu guards all engine state, and each call — a whole Schedule pass included — sees one
// consistent state. Allocate calls' changes (UpdateAsks, Delivered, UpdateBlacklist) do
// not take e.mu: they queue in the inbox, which lock applies first (inbox.go). A caller that must not hold other callers off for long (the RM, whose
// RPC handlers update asks and nodes) bounds each pass with Schedule's max (SliceSize) and
// calls again.
type Engine struct {
	cfg Config

	mu         sync.Mutex
	inbox      inbox // allocate calls' changes, applied by the next lock (see inbox.go)
	partitions map[string]*partition
	nodes      map[string]*node
	hosts      map[string][]*node // by host name, for node-local asks
	racks      map[string][]*node // by rack, for rack-local asks
	groups     map[string]*group  // by leaf name and path
	leaves     []*group
	apps       map[AppID]*app
	containers containerTable
	preempting map[ContainerID]*container // notified, not yet completed
	nextCID    ContainerID
	nextNode   int
	nextApp    int64
	ranked     []rankedGroup // Schedule's ranking buffer, reused
	// partitionOrder is every partition by name: the order Schedule visits them in.
	partitionOrder []*partition
	active         []bool       // Schedule's per-partition flags, reused
	placed         []Allocation // what one round placed, reused
	// sums are every partition's total and allocated added up, kept as they change so
	// that Totals (every allocate answer's headroom) never waits for e.mu behind a pass.
	sums clusterSums
	// startedIn and startedBy count running applications per queue path and per user;
	// userMaxRunning bounds a user's (runnable.go).
	startedIn      map[string]int
	startedBy      map[string]int
	userMaxRunning func(user string) int
	// root is the queue tree's root when it is the Fair Scheduler's, whose groups' quotas
	// are recomputed before every pass (fairshare.go); nil otherwise.
	root *queue
	// rankByMemory: the Fair Scheduler's tree with the fair policy at its root, which
	// compares queues by memory (FairSharePolicy); drf compares dominant shares.
	rankByMemory bool
	// nonExclusive names the partitions that lend (SetNonExclusive).
	nonExclusive map[string]bool
	// rackTags counts allocation tags per rack (constraints.go).
	rackTags map[string]tagCounts
}

// clusterSums are the cluster's capacity and allocation, written under Engine.mu and
// read without it.
type clusterSums struct {
	total, allocated [MaxResourceTypes]atomic.Int64
}

// add adds r times sign to v.
func addSum(v *[MaxResourceTypes]atomic.Int64, r Resource, sign int64) {
	for i, x := range r {
		if x != 0 {
			v[i].Add(sign * x)
		}
	}
}

// read is v as a Resource.
func readSum(v *[MaxResourceTypes]atomic.Int64) Resource {
	var r Resource
	for i := range v {
		r[i] = v[i].Load()
	}
	return r
}

// Errors callers branch on.
var (
	ErrUnknownQueue = errors.New("unknown queue")
	ErrNotLeaf      = errors.New("queue is not a leaf queue")
	ErrQueueStopped = errors.New("queue is stopped")
	ErrUnknownApp   = errors.New("unknown application")
	ErrUnknownNode  = errors.New("unknown node")
	// ErrUnknownContainer: the container is not the engine's (any more): released, or
	// gone with its application or node.
	ErrUnknownContainer = errors.New("unknown container")
	ErrDuplicate        = errors.New("already exists")
)

// New builds an engine over a validated queue tree.
func New(cfg Config, queues *capacity.Tree) (*Engine, error) {
	if cfg.Types.Len() == 0 {
		cfg.Types = DefaultTypes
	}
	if cfg.Types.Len() > MaxResourceTypes {
		return nil, fmt.Errorf("scheduler: %d resource types, at most %d", cfg.Types.Len(), MaxResourceTypes)
	}
	switch cfg.Strategy {
	case "":
		cfg.Strategy = StrategyAuto
	case StrategyRings, StrategyBalance, StrategyFirstFit, StrategyAuto:
	default:
		return nil, fmt.Errorf("scheduler: unknown node selection strategy %q (rings, balance or first-fit)", cfg.Strategy)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Location == nil {
		cfg.Location = time.Local
	}
	if cfg.Visits <= 0 {
		cfg.Visits = 256
	}
	e := &Engine{cfg: cfg, partitions: map[string]*partition{}, nodes: map[string]*node{},
		hosts: map[string][]*node{}, racks: map[string][]*node{},
		groups: map[string]*group{}, apps: map[AppID]*app{},
		preempting: map[ContainerID]*container{}, startedIn: map[string]int{}, startedBy: map[string]int{}, userMaxRunning: queues.UserMaxRunning,
		rackTags: map[string]tagCounts{}}
	qt, err := newQueueTree(cfg.Types, queues)
	if err != nil {
		return nil, err
	}
	for _, q := range qt.leaves {
		g, err := buildGroup(cfg.Types, q, cfg.Groups[q.Path], queues.Fair)
		if err != nil {
			return nil, err
		}
		e.leaves = append(e.leaves, g)
		e.groups[q.Name] = g
		e.groups[q.Path] = g
	}
	rankNames(e.leaves)
	e.setFairRoot(qt, queues.Fair)
	for _, q := range qt.all {
		if !q.IsLeaf() {
			e.groups[q.Path] = nil // a parent: known, not submittable
			if _, ok := e.groups[q.Name]; !ok {
				e.groups[q.Name] = nil
			}
		}
	}
	return e, nil
}

// setFairRoot keeps the root of the Fair Scheduler's tree (fair), nil for any other tree.
func (e *Engine) setFairRoot(qt *queueTree, fair bool) {
	e.root, e.rankByMemory = nil, false
	if fair {
		e.root = qt.root
		e.rankByMemory = qt.root.FairPolicy == "fair" || qt.root.FairPolicy == ""
	}
}

func (e *Engine) partition(name string) *partition {
	p, ok := e.partitions[name]
	if !ok {
		p = &partition{name: name, nodes: map[string]*node{}, pendingShapes: map[Resource]int{}, weightsDirty: true, lends: e.nonExclusive[name]}
		types := e.cfg.Types.Len()
		switch {
		case e.cfg.Strategy == StrategyFirstFit:
			p.place = newFirstFit()
		case e.cfg.FitByMemory:
			// Memory is the one type that fits or not: best fit on it; there is nothing
			// to balance.
			p.place = newRings(1, e.cfg.Rings, e.cfg.SearchLimit, e.cfg.Visits, func() Resource { return p.total })
		case e.cfg.Strategy == StrategyBalance || e.cfg.Strategy == StrategyAuto:
			r := newRings(types, e.cfg.Rings, e.cfg.SearchLimit, e.cfg.Visits, func() Resource { return p.total })
			p.balance = newBalance(r, e.cfg.Balance, func() []float64 { return e.partitionWeights(p) }, func() float64 { return e.utilization(p) })
			p.balance.auto = e.cfg.Strategy == StrategyAuto
			p.place = p.balance
		default:
			p.place = newRings(types, e.cfg.Rings, e.cfg.SearchLimit, e.cfg.Visits, func() Resource { return p.total })
		}
		e.partitions[name] = p
		e.partitionOrder = append(e.partitionOrder, p)
		slices.SortFunc(e.partitionOrder, func(a, b *partition) int { return strings.Compare(a.name, b.name) })
	}
	return p
}

// SliceSize is how many allocations the RM asks of one Schedule call before it lets its
// RPC handlers at the engine again.
const SliceSize = 256

// Config returns the engine's configuration.
func (e *Engine) Config() Config { return e.cfg }
