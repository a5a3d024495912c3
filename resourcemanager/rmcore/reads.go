package rmcore

import (
	"time"

	metrics "github.com/rcrowley/go-metrics"
	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/conf/resourcetypes"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/delegation"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
	"github.com/bobbin-yarn/bobbin/yarn/security"
)

// What the adapters (rmservice, rmweb) read of the RM's state: reports and figures, each
// taken under its owner's lock (rmstate). The owners themselves are the core's; the
// adapters see them only through these.

// AppExists reports whether the RM knows the application.
func (rm *Core) AppExists(id records.ApplicationID) bool { return rm.apps.Exists(id) }

// AppReport is an application's report.
func (rm *Core) AppReport(id records.ApplicationID) (*yarnpb.ApplicationReportProto, bool) {
	r, ok := rm.apps.ReportOf(id)
	if ok {
		r.Queue = proto.String(rm.ReportedQueue(r.GetQueue()))
	}
	return r, ok
}

// AppReports are the reports of the applications f selects.
func (rm *Core) AppReports(f *rmstate.AppFilter) []*yarnpb.ApplicationReportProto {
	list := rm.apps.List(f)
	for _, r := range list {
		r.Queue = proto.String(rm.ReportedQueue(r.GetQueue()))
	}
	return list
}

// ReportedQueue is how reports name an application's queue: its leaf name, or with
// bobbin.resourcemanager.application-queue-names=path its path, as the Capacity Scheduler
// of 2.x-3.2 and of 3.3+ name it. The Fair Scheduler's names are paths already.
func (rm *Core) ReportedQueue(queue string) string {
	if !rm.settings.QueuePaths {
		return queue
	}
	if q, ok := rm.Queues().Queue(queue); ok {
		return q.Path
	}
	return queue
}

// EachApp runs fn on every application under the applications' lock: fn reads, and calls
// nothing of the core's.
func (rm *Core) EachApp(fn func(a *rmstate.App)) { rm.apps.Each(fn) }

// AttemptIDs are an application's attempts, oldest first.
func (rm *Core) AttemptIDs(id records.ApplicationID) []records.AttemptID {
	return rm.apps.AttemptIDs(id)
}

// AttemptReport is an attempt's report.
func (rm *Core) AttemptReport(att records.AttemptID) (*yarnpb.ApplicationAttemptReportProto, bool) {
	return rm.apps.AttemptReport(att)
}

// AttemptReports are the reports of an application's attempts.
func (rm *Core) AttemptReports(id records.ApplicationID) []*yarnpb.ApplicationAttemptReportProto {
	return rm.apps.AttemptReports(id)
}

// ViewAttempt runs fn on an attempt and its application under the applications' lock
// (false: no such attempt); fn reads, and calls nothing of the core's.
func (rm *Core) ViewAttempt(att records.AttemptID, fn func(a *rmstate.App, at *rmstate.Attempt)) bool {
	return rm.apps.ViewAttempt(att, fn)
}

// ViewPastAttempt is ViewAttempt for any attempt of the application, also one that ended
// before the current one (the REST and web pages list them all, as Java's do).
func (rm *Core) ViewPastAttempt(att records.AttemptID, fn func(a *rmstate.App, at *rmstate.Attempt)) bool {
	return rm.apps.ViewPastAttempt(att, fn)
}

// ClientKey is the ClientToAMToken key of an application's current attempt (nil: none).
func (rm *Core) ClientKey(id records.ApplicationID) (records.AttemptID, []byte) {
	return rm.apps.ClientKey(id)
}

// NodeCounts are the nodes in each state.
func (rm *Core) NodeCounts() map[yarnpb.NodeStateProto]int32 { return rm.nodes.Counts() }

// NodeReports are the reports of the nodes in states (all when none), with their labels.
func (rm *Core) NodeReports(states []yarnpb.NodeStateProto) []*yarnpb.NodeReportProto {
	return rm.nodes.Reports(states, rm.labels)
}

// NodeSnapshot is a copy of a node's record.
func (rm *Core) NodeSnapshot(key string) (rmstate.Node, bool) { return rm.nodes.Snapshot(key) }

// NodeUsage is what each node's live containers hold.
func (rm *Core) NodeUsage() map[string]rmstate.Usage { return rm.containers.NodeUsage() }

// LiveUsage is what the live containers of each of apps hold, with what their ended ones
// spent.
func (rm *Core) LiveUsage(apps map[records.ApplicationID]bool) map[records.ApplicationID]rmstate.Usage {
	return rm.containers.LiveUsage(apps)
}

// ContainerReport is a live container's report.
func (rm *Core) ContainerReport(id records.ContainerID) (*yarnpb.ContainerReportProto, bool) {
	return rm.containers.LiveReport(id)
}

// ContainerReports are the reports of an attempt's live containers.
func (rm *Core) ContainerReports(att records.AttemptID) []*yarnpb.ContainerReportProto {
	return rm.containers.LiveReports(att)
}

// NodeLabels are the labels of each node that has any.
func (rm *Core) NodeLabels() map[string][]string { return rm.labels.Snapshot() }

// ClusterLabels are the cluster's node labels.
func (rm *Core) ClusterLabels() []rmstate.Label { return rm.labels.ClusterLabels() }

// SetWebBases tells the applications' reports where the web proxy and the RM's pages are
// ("http://host:port"), once the web port is bound.
func (rm *Core) SetWebBases(tracking, web string) { rm.apps.SetWebBases(tracking, web) }

// Totals are the engine's cluster totals and what is in use.
func (rm *Core) Totals() (total, used scheduler.Resource) { return rm.engine.Totals() }

// PutNode records a node in the registry in state, as a registration's first step does
// (RegisterNodeManager); tests that drive a registration's steps apart call it.
func (rm *Core) PutNode(key string, n *rmstate.Node, state yarnpb.NodeStateProto) (again bool, err error) {
	return rm.nodes.Put(key, n, state)
}

// The RM's own facts, fixed at New: what the adapters may read, never replace.

// Settings are the RM's settings as New read them.
func (rm *Core) Settings() Settings { return rm.settings }

// Types are the resource types, in the engine's order.
func (rm *Core) Types() resourcetypes.Types { return rm.types }

// Now is the RM's clock.
func (rm *Core) Now() time.Time { return rm.opts.Now() }

// Conf is the configuration the RM started with.
func (rm *Core) Conf() *conf.Configuration { return rm.opts.Conf }

// Log is the RM's logger.
func (rm *Core) Log() *logrus.Entry { return rm.log }

// Metrics are the RM's figures; Registry is the registry they live in (the /jmx and
// /metrics pages write it whole).
func (rm *Core) Metrics() *Metrics { return rm.metrics }

// Registry is the go-metrics registry of the RM's figures.
func (rm *Core) Registry() metrics.Registry { return rm.opts.Metrics }

// Delegation issues, renews and cancels RM delegation tokens; the RPC servers verify
// clients' tokens with it.
func (rm *Core) Delegation() *delegation.Manager { return rm.delegation }

// StoreLocation is where the state store keeps its records ("" when recovery is off).
func (rm *Core) StoreLocation() string {
	if rm.store == nil {
		return ""
	}
	return rm.store.Location()
}

// Options are the options New was given, with the defaults it filled in (the clock, the
// security, the queues): the wiring builds its servers from the same ones.
func (rm *Core) Options() Options { return rm.opts }

// AMRMTokens issues and verifies the AMs' tokens; the scheduler port's SASL verifies with it.
func (rm *Core) AMRMTokens() *security.AMRMTokens { return rm.amrm }

// CurrentKeyIDs are the ids of the master keys new container tokens and NMTokens are
// signed with (they change each roll).
func (rm *Core) CurrentKeyIDs() (container, nm int32) {
	return rm.containerKeys.Current().ID, rm.nmKeys.Current().ID
}
