package rmcore

import (
	"errors"
	"slices"

	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/nmheartbeat"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
)

// A (re-)registering NodeManager's containers (NMContainerStatus): those of attempts
// that carry on after a work-preserving restart are rebuilt — a running one is booked
// again in the engine (node, application, group, partition, as if just placed) and in the
// container table, without its AM being told anything; one that completed while the RM
// was down goes to its AM as completed (an AM container's end fails its attempt). Every
// other running container — of an attempt that was failed, of an application that ended
// or is unknown — is killed, and the kill repeated while the NodeManager still reports
// it. RegisterNode does it in two steps: planRebuild reads, applyRebuild books.

// reported is a container a registering NodeManager reports: a plain status as decoded
// lean (nmheartbeat), or, with full, one protobuf decoded (allocation tags, other
// resource types).
type reported struct {
	nmheartbeat.Reported
	full *yarnpb.NMContainerStatusProto
}

// reportsOf lists a registration's statuses, the plain ones first.
func reportsOf(reg nmheartbeat.Registration) []reported {
	out := make([]reported, 0, len(reg.Plain)+len(reg.GetContainerStatuses()))
	for _, r := range reg.Plain {
		out = append(out, reported{Reported: r})
	}
	for _, st := range reg.GetContainerStatuses() {
		out = append(out, reported{Reported: nmheartbeat.ReportedOf(st), full: st})
	}
	return out
}

func (r *reported) complete() bool { return r.State == yarnpb.ContainerStateProto_C_COMPLETE }

// idProto is the container id as the NodeManager sent it.
func (r *reported) idProto() *yarnpb.ContainerIdProto {
	if r.full != nil {
		return r.full.GetContainerId()
	}
	return r.ID.Proto()
}

// reportedResource is what the container holds, in the cluster's resource types.
func (rm *Core) reportedResource(r *reported) scheduler.Resource {
	if r.full != nil {
		return rm.ResourceOf(r.full.GetResource())
	}
	var v scheduler.Resource
	v[scheduler.Memory], v[scheduler.VCores] = r.MemoryMB, int64(r.VCores)
	return v
}

// rebuild is what a registration's container statuses come to, read before the
// registration takes the scheduling pass's lock: the containers to book again, those to
// kill, every one reported.
type rebuild struct {
	keep      []kept
	orphanIDs []*yarnpb.ContainerIdProto
	orphans   []records.ContainerID
	seen      []records.ContainerID
}

// kept is a reported container of a current attempt, its record built.
type kept struct {
	rc *rmstate.Container
	r  *reported
}

// planRebuild reads the container table and the applications for each status: none of
// it needs the pass's lock, which a restart's registrations of a million containers
// would otherwise hold for all of it.
func (rm *Core) planRebuild(node *rmstate.NodeAddr, reports []reported) rebuild {
	var b rebuild
	b.seen = make([]records.ContainerID, 0, len(reports))
	epoch := rm.containers.Epoch()
	for i := range reports {
		r := &reports[i]
		id := r.ID
		b.seen = append(b.seen, id)
		if known, done := rm.containers.State(id); known {
			// This run's container: still live, it goes on; done (the node was lost and
			// its containers ended for the RM and their AMs) but running, it is killed.
			if done && !r.complete() {
				b.orphanIDs = append(b.orphanIDs, r.idProto())
				b.orphans = append(b.orphans, id)
			}
			continue
		}
		// Only an earlier run's containers are rebuilt: one of this run's that the table
		// no longer holds has ended for the RM already.
		if id.ID>>40 < epoch {
			if rc := rm.recoveredRecord(node, r); rc != nil {
				b.keep = append(b.keep, kept{rc: rc, r: r})
				continue
			}
		}
		if !r.complete() {
			b.orphanIDs = append(b.orphanIDs, r.idProto())
			b.orphans = append(b.orphans, id)
		}
	}
	return b
}

// applyRebuild books the kept containers and kills the orphans. The running ones are
// booked in the engine and the container table together, each under one hold of its
// lock: a restart's registrations bring hundreds of containers each, side by side.
func (rm *Core) applyRebuild(node *rmstate.NodeAddr, b rebuild) (recovered, orphans []records.ContainerID) {
	orphans = b.orphans
	var running []kept
	for _, k := range b.keep {
		if k.r.complete() {
			rm.recoverCompleted(node, k.rc, k.r)
			recovered = append(recovered, k.rc.ID)
		} else {
			running = append(running, k)
		}
	}
	now := rm.opts.Now()
	// What is per application is done once per application: a registration after a
	// restart brings hundreds of containers of fewer applications.
	apps := map[records.ApplicationID]*rebuiltApp{}
	recs := make([]scheduler.RecoveredContainer, len(running))
	for i, k := range running {
		rc := k.rc
		ra := apps[rc.ID.Attempt.App]
		if ra == nil {
			ra = &rebuiltApp{engineID: EngineID(rc.ID.Attempt.App)}
			apps[rc.ID.Attempt.App] = ra
		}
		recs[i] = scheduler.RecoveredContainer{App: ra.engineID, Node: node.Key, Resource: rc.Resource,
			Priority: rc.Priority, AM: rc.AM, Start: now, RequestID: rc.RequestID, Placement: rc.Placement}
	}
	eids, errs := rm.engine.RecoverAll(recs)
	booked := make([]*rmstate.Container, 0, len(running))
	var ranOn []rmstate.AppNode
	for i, k := range running {
		if errs[i] != nil {
			rm.recoveredLog(node, k.rc.ID).WithError(errs[i]).Warn("running container not recovered; killing it")
			b.orphanIDs = append(b.orphanIDs, k.r.idProto())
			orphans = append(orphans, k.rc.ID)
			continue
		}
		k.rc.EngineID = eids[i]
		if ra := apps[k.rc.ID.Attempt.App]; !ra.ranOn {
			ra.ranOn = true
			ranOn = append(ranOn, rmstate.AppNode{App: k.rc.ID.Attempt.App, Node: node.Key})
		}
		booked = append(booked, k.rc)
	}
	rm.apps.RanOnAll(ranOn)
	for i, ok := range rm.containers.RecoverRunning(booked) {
		rc := booked[i]
		recovered = append(recovered, rc.ID)
		if !ok {
			rm.engine.Release(rc.EngineID) // another registration rebuilt it first
			continue
		}
		apps[rc.ID.Attempt.App].recovered++
		if rc.AM {
			rm.recoveredLog(node, rc.ID).Info("AM container recovered") // one per application: worth a line
		} else if rm.log.Logger.IsLevelEnabled(logrus.DebugLevel) {
			rm.recoveredLog(node, rc.ID).Debug("container recovered")
		}
	}
	for id, ra := range apps {
		if ra.recovered > 0 {
			_, queue, _, _ := rm.apps.AccessOf(id)
			rm.metrics.containersRecovered(queue, ra.recovered)
		}
	}
	rm.containers.KillOrphans(node.Key, b.orphanIDs)
	if rm.recovery.nodeBack(node.Key, b.seen) {
		rm.KickScheduler()
	}
	return recovered, orphans
}

// rebuiltApp is what a registration's rebuild keeps of one application.
type rebuiltApp struct {
	engineID  scheduler.AppID
	ranOn     bool // its log aggregation knows the node
	recovered int64
}

// recoveredLog is the entry a rebuilt container's lines are logged with. They are few: a
// restart rebuilds up to a million containers, and their registrations' summary line
// ("NodeManager registered", containers_recovered) is the event an administrator reads;
// one line per running container is at debug level.
func (rm *Core) recoveredLog(node *rmstate.NodeAddr, id records.ContainerID) *logrus.Entry {
	return rm.log.WithFields(logrus.Fields{"container": id.String(), "node": node.Key, "attempt": id.Attempt.String()})
}

// recoverCompleted takes a kept container that completed while the RM was down: its AM
// hears of it (an AM container's end fails its attempt).
func (rm *Core) recoverCompleted(node *rmstate.NodeAddr, rc *rmstate.Container, r *reported) {
	final, ok := rm.containers.RecoverCompleted(rc, &yarnpb.ContainerStatusProto{ContainerId: rc.ID.Proto(), State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(),
		ExitStatus: proto.Int32(r.Exit), Diagnostics: proto.String(r.Diagnostics)})
	if !ok {
		return // another registration took it first
	}
	rm.recoveredLog(node, rc.ID).WithField("exit_status", r.Exit).Info("recovered container had completed while the ResourceManager was down")
	if rc.AM && final != nil {
		rm.amExited(rc.ID, final)
	}
}

// recoveredRecord is the record of a reported container of a current attempt, to be
// rebuilt; nil: the container is not one to keep.
func (rm *Core) recoveredRecord(node *rmstate.NodeAddr, r *reported) *rmstate.Container {
	id := r.ID
	if rm.recovery == nil {
		return nil // no work-preserving restart: nothing from an earlier run is kept
	}
	var user string
	var am, ok bool
	rm.apps.ViewAttempt(id.Attempt, func(a *rmstate.App, at *rmstate.Attempt) {
		if a.Over() || at.Ended() {
			return
		}
		user, ok = a.User, true
		am = at.AMContainer != nil && *at.AMContainer == id
	})
	if !ok {
		return nil
	}
	if rm.recovery.released(id) {
		// The AM released it while its node had yet to come back.
		rm.log.WithFields(logrus.Fields{"container": id.String(), "node": node.Key}).Info("recovered container was released by its AM; killing it")
		return nil
	}
	created := r.Created
	if created <= 0 {
		created = rm.opts.Now().UnixMilli()
	}
	rc := &rmstate.Container{ID: id, At: node, AM: am, Resource: rm.reportedResource(r), Priority: r.Priority,
		Created: created, User: user, RequestID: r.RequestID}
	if tags := r.full.GetAllocationTags(); len(tags) > 0 {
		// A SchedulingRequest's container: its tags count again (no constraint: the
		// request it met is the AM's, long placed).
		rc.Placement = &scheduler.Placement{RequestID: rc.RequestID, Tags: slices.Compact(slices.Sorted(slices.Values(tags)))}
	}
	return rc
}

// RegisterNode adds a registering NodeManager's node to the engine and rebuilds the
// containers it reports, with no scheduling pass in between: a pass must not fill the
// node before its running containers are booked. What the statuses come to is read
// before the pass's lock is taken.
func (rm *Core) RegisterNode(spec scheduler.NodeSpec, node *rmstate.NodeAddr, reports []reported) (recovered, orphans []records.ContainerID, err error) {
	plan := rm.planRebuild(node, reports)
	rm.passMu.RLock()
	defer rm.passMu.RUnlock()
	if err := rm.engine.AddNode(spec); err != nil {
		return nil, nil, err
	}
	recovered, orphans = rm.applyRebuild(node, plan)
	return recovered, orphans, nil
}

// ReconnectNode takes back a NodeManager that registered again under its node id while
// the RM still holds the node: it restarted and kept its containers (a work-preserving
// NodeManager restart). As the Java RM does when the NodeManager lists running
// applications, the node stays in the engine with its containers; the registration's
// completed statuses are applied as a heartbeat's would be; running containers the RM
// does not hold (any more) are killed. ok is false when the engine no longer holds the
// node (it was lost meanwhile): the caller registers it afresh.
func (rm *Core) ReconnectNode(spec scheduler.NodeSpec, reports []reported) (ok bool, orphans []records.ContainerID, err error) {
	rm.passMu.RLock()
	err = rm.engine.UpdateNode(spec)
	rm.passMu.RUnlock()
	if errors.Is(err, scheduler.ErrUnknownNode) {
		return false, nil, nil
	}
	if err != nil {
		return false, nil, err
	}
	var sts []*yarnpb.ContainerStatusProto
	var orphanIDs []*yarnpb.ContainerIdProto
	for i := range reports {
		r := &reports[i]
		if known, done := rm.containers.State(r.ID); !r.complete() && (!known || done) {
			orphanIDs = append(orphanIDs, r.idProto())
			orphans = append(orphans, r.ID)
			continue
		}
		sts = append(sts, &yarnpb.ContainerStatusProto{ContainerId: r.idProto(), State: r.State.Enum(),
			ExitStatus: proto.Int32(r.Exit), Diagnostics: proto.String(r.Diagnostics)})
	}
	rm.containers.KillOrphans(spec.ID, orphanIDs)
	rm.NodeStatuses(spec.ID, sts, nil)
	return true, orphans, nil
}
