package scheduler

import (
	"sort"
	"time"
)

// NodeSpec describes a node as the RM learns it from a NodeManager.
type NodeSpec struct {
	ID        string // "host:port"
	Rack      string // "/default-rack" when empty
	Partition string // node label; "" is the default partition
	Static    bool   // a stable (not borrowed) node: AM containers prefer these
	// Measured: the node's capacity is measured from its owner's load (a borrowed
	// server's Bobbin NodeManager); every type decides what fits there, even under
	// Config.FitByMemory, so that the owner's CPU keeps containers off.
	Measured bool
	Capacity Resource
	// Unschedulable nodes keep their containers but get no new ones (temporary leave,
	// decommissioning, disk guard).
	Unschedulable bool
}

// node is the engine's state of one node.
type node struct {
	spec       NodeSpec
	allocated  Resource
	containers containerSet
	order      int // insertion order, the first-fit scan order
	// tags counts its containers' allocation tags (constraints.go); nil until it has one.
	tags tagCounts
	// memoryOnly: only memory decides what fits (Config.FitByMemory, unless the node's
	// capacity is measured).
	memoryOnly bool
}

func (n *node) free() Resource { return n.spec.Capacity.Sub(n.allocated) }

// unbounded is the room of a type that does not decide what fits: far above any amount,
// and far enough below the int64 limit that sums over a node's containers stay exact.
const unbounded = 1 << 60

// room is what fits on n: its free resources, or under Config.FitByMemory its free memory
// with the other types unbounded.
func (n *node) room() Resource {
	f := n.free()
	if n.memoryOnly {
		for i := 1; i < len(f); i++ {
			f[i] = unbounded
		}
	}
	return f
}

func (n *node) schedulable() bool { return !n.spec.Unschedulable }

// AppID names an application to the engine: its YARN id (application_<ts>_<n>) in the
// RM, a trace's name in the simulator.
type AppID string

// AppSpec describes an application (a YARN application) to the engine.
// DefaultPartition names the default partition (nodes without a label) where an empty
// label would mean "inherit": YARN tells a request with no label expression, which takes
// the application's or the queue's, from one whose expression is explicitly empty. The
// Java RM's name for it; no node label can be spelled so.
const DefaultPartition = "<DEFAULT_PARTITION>"

type AppSpec struct {
	ID       AppID
	Queue    string // leaf queue name or path
	User     string
	Priority int32 // application priority: larger runs first under the priority policy
	Submit   time.Time
	// Runtime is the declared runtime estimate used by backfilling; 0 means unknown.
	Runtime time.Duration
	// Label is the application's default node-label expression ("" = the queue's
	// default; DefaultPartition = the default partition even when the queue has one).
	Label string
	// Gang: every ANY ask of the application but its AM's is a gang (Ask.Gang): its
	// containers are placed together (the RM's bobbin.gang application tag).
	Gang bool
	// UnmanagedAM: the client runs the AM, which holds no container. As in the Java
	// Capacity Scheduler (FiCaSchedulerApp), it counts the minimum allocation against
	// the queue's and user's AM limits from the application's start until it leaves.
	UnmanagedAM bool
	// Recovering: the RM is bringing back an application it had admitted before it
	// restarted; a STOPPED queue takes it (a stopped queue drains what it holds).
	Recovering bool
}

// Ask is one YARN ResourceRequest: the absolute number of containers still wanted for
// (priority, resource name, capability). YARN's priority is "lower number first".
type Ask struct {
	Priority      int32
	ResourceName  string // "*", a rack or a host
	Capability    Resource
	Count         int
	RelaxLocality bool
	Label         string // node-label expression; "" = the app's default, DefaultPartition = none
	AM            bool   // the AM container ask, placed on static nodes when there are any
	// Gang: the Count containers are placed together, all in one round or none (gang.go).
	// Only ANY asks can be gangs.
	Gang bool
	// RequestID is YARN's allocation_request_id (3.x): asks of one priority and
	// capability with different ids are different asks, and their containers carry the
	// id back (the YARN service AM finds each container's component by it). A
	// SchedulingRequest's is its Placement's.
	RequestID int64
	// Placement: the ask is a SchedulingRequest's, its containers tagged and placed under
	// its constraint (constraints.go). Only ANY asks carry one.
	Placement *Placement

	partition string // the effective partition, set by the engine
}

type askKey struct {
	priority int32
	name     string
	cap      Resource
	// request is the allocation request id; scheduling: a SchedulingRequest's ask.
	scheduling bool
	request    int64
}

// ContainerID identifies an allocated container within the engine (the RM maps it to a
// YARN ContainerId).
type ContainerID int64

// container is an allocated container.
type container struct {
	id       ContainerID
	app      *app
	node     *node
	resource Resource
	priority int32
	am       bool
	start    time.Time
	// preemptAt is when a preempted container is killed (zero: not preempted).
	preemptAt    time.Time
	killSent     bool
	preemptedFor *group
	// assumed: planned by Schedule and not yet confirmed by the caller (see Plan).
	assumed bool
	// placement: the SchedulingRequest it was placed for (nil: a ResourceRequest), its
	// tags counted on its node and on rack, its rack when it was placed.
	placement *Placement
	rack      string
	request   int64 // its ask's RequestID
	// slots are its places in its node's and application's sets (containerSet).
	slots [setKinds]int32
}

// Allocation is one placement decided by the engine.
type Allocation struct {
	Container ContainerID
	App       AppID
	Node      string
	Priority  int32
	Resource  Resource
	AM        bool
	Time      time.Time
	// RequestID is its ask's; Placement the SchedulingRequest it was made for (nil: a
	// ResourceRequest).
	RequestID int64
	Placement *Placement
	// Queue is its application's leaf queue; Locality how near its asks it was placed.
	Queue    string
	Locality Locality
}

// app is the engine's state of one application.
type app struct {
	spec  AppSpec
	group *group
	label string // effective default label
	asks  map[askKey]*Ask
	// localAsks counts the keys of asks that name a host or rack: with none (most
	// applications but MapReduce's) the locality steps are skipped.
	localAsks int
	pending   int // sum of ANY counts
	// anyAsks are the ANY asks in sortAsks order; pendingIn counts them per partition.
	anyAsks   []*Ask
	pendingIn map[string]int
	used      Resource
	running   int
	seq       int64 // submission sequence for deterministic FIFO ties
	skips     int   // times balance gating passed over this app's head request
	// missed counts scheduling opportunities an ask (by priority) let pass waiting for
	// locality.
	missed map[int32]int
	// blacklist holds node ids the app asked not to be placed on.
	blacklist map[string]bool
	// containers are the app's running containers.
	containers containerSet
	// undelivered are its non-AM containers the AM has not been handed yet (see
	// Delivered): an ask the AM sends before seeing them counts them as outstanding.
	undelivered containerSet
	// started: the application has had a container (it counts against the running bounds).
	started bool
}

// sortAsks orders an app's ANY asks: best (lowest) YARN priority first, then smaller
// capability, so every policy sees a deterministic order.
func sortAsks(asks []*Ask) {
	sort.Slice(asks, func(i, j int) bool {
		if asks[i].Priority != asks[j].Priority {
			return asks[i].Priority < asks[j].Priority
		}
		if asks[i].Capability != asks[j].Capability {
			return lessResource(asks[i].Capability, asks[j].Capability)
		}
		// Asks of one priority and capability differ in their allocation request ids
		// (and SchedulingRequests from ResourceRequests): ResourceRequests first, then by
		// request id, so the order never depends on a map's.
		pi, pj := asks[i].Placement != nil, asks[j].Placement != nil
		if pi != pj {
			return !pi
		}
		return asks[i].RequestID < asks[j].RequestID
	})
}

// nextAskIn returns the app's best outstanding ANY ask for partition p.
func (a *app) nextAskIn(p string) *Ask {
	for _, ask := range a.anyAsks {
		if ask.Count > 0 && ask.partition == p {
			return ask
		}
	}
	return nil
}

func lessResource(a, b Resource) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}
