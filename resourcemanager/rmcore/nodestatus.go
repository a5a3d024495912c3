package rmcore

import (
	"slices"
	"sync"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/nmheartbeat"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

// NodeStatuses takes a NodeManager's container statuses: running ones stop their
// allocation-expiry clock; completed ones free their room and go to their attempts, and
// the NM is told to forget them on a later heartbeat. Running are containers reported
// RUNNING by id alone (see nmheartbeat). It returns once they are applied.
func (rm *Core) NodeStatuses(node string, statuses []*yarnpb.ContainerStatusProto, running []records.ContainerID) {
	done := make(chan struct{})
	rm.reports.add(queuedReport{NodeReport: rmstate.NodeReport{Node: node, Statuses: statuses, Running: running}, done: done}, rm)
	<-done
}

// QueueStatuses is NodeStatuses for a heartbeat: the statuses are applied after it
// returns, in the order heartbeats queue them, as the Java RM applies a node's status
// update on its dispatcher after answering. The heartbeat does not wait for them:
// taken inside each heartbeat, at 2,000 heartbeats a second with dozens of completions
// each, the container table's lock was wanted by several heartbeats at once, and
// allocate calls, which take it too, queued behind them all.
// Completed are the plain completed statuses nmheartbeat took apart.
func (rm *Core) QueueStatuses(node string, statuses []*yarnpb.ContainerStatusProto, running []records.ContainerID, completed []nmheartbeat.Done) {
	if len(statuses) == 0 && len(running) == 0 && len(completed) == 0 {
		return
	}
	rm.reports.add(queuedReport{NodeReport: rmstate.NodeReport{Node: node, Statuses: statuses, Running: running, Completed: completed}}, rm)
}

// WaitStatuses returns once the queue of statuses is empty: everything queued before it
// has been applied (tests use it; under steady load it may wait long).
func (rm *Core) WaitStatuses() { rm.reports.wait() }

func (q *reportQueue) wait() {
	q.mu.Lock()
	for q.busy {
		q.idle.Wait()
	}
	q.mu.Unlock()
}

// take returns the queued items, or nil and marks the queue idle when there are none;
// recycle gives a batch's slice back once it is applied.
func (q *reportQueue) take() []queuedReport {
	q.mu.Lock()
	defer q.mu.Unlock()
	batch := q.pending
	q.pending = q.spare[:0]
	if len(batch) == 0 {
		q.spare = batch
		q.busy = false
		q.idle.Broadcast()
		return nil
	}
	return batch
}

func (q *reportQueue) recycle(batch []queuedReport) {
	clear(batch)
	q.mu.Lock()
	q.spare = batch[:0]
	q.mu.Unlock()
}

// reportSlice bounds the statuses applied under one hold of the container table's lock:
// a few hundred microseconds of work.
const reportSlice = 64

// reportQueue holds heartbeats' statuses, and the table work allocate answers leave
// (rmstate.Settlement), until one goroutine, started when the first arrives and ended
// when none is left, applies them in batches.
type reportQueue struct {
	mu             sync.Mutex
	idle           sync.Cond // signalled when busy turns false
	pending, spare []queuedReport
	busy           bool
}

// queuedReport is a heartbeat's statuses, or (settle set) what an allocate answer left
// to do in the container table; done, when set, is closed once it is applied.
type queuedReport struct {
	rmstate.NodeReport
	done   chan struct{}
	settle *rmstate.Settlement
}

// size is how many containers r touches.
func (r queuedReport) size() int {
	if r.settle != nil {
		return r.settle.Size()
	}
	return len(r.Statuses) + 1
}

func (q *reportQueue) add(r queuedReport, rm *Core) {
	q.mu.Lock()
	q.pending = append(q.pending, r)
	start := !q.busy
	q.busy = true
	q.mu.Unlock()
	if start {
		rm.tasks.Add(1)
		go func() {
			defer rm.tasks.Done()
			rm.applyReports()
		}()
	}
}

// applyReports applies queued statuses and settlements until none is left, a slice of
// them per hold of the container table's lock and of the engine's.
func (rm *Core) applyReports() {
	for {
		batch := rm.reports.take()
		if batch == nil {
			return
		}
		// In slices of about reportSlice statuses, so that an allocate call waits for
		// the table's lock at most that long.
		completed := false
		for rest := batch; len(rest) > 0; {
			n, size := 0, 0
			for n < len(rest) && (n == 0 || size+rest[n].size() <= reportSlice) {
				size += rest[n].size()
				n++
			}
			var (
				reports     []rmstate.NodeReport
				settlements []rmstate.Settlement
			)
			for _, r := range rest[:n] {
				if r.settle != nil {
					settlements = append(settlements, *r.settle)
				} else {
					reports = append(reports, r.NodeReport)
				}
			}
			if len(settlements) > 0 {
				rm.containers.Settle(settlements)
			}
			if len(reports) == 0 {
				rest = rest[n:]
				continue
			}
			finished, release := rm.containers.TakeReports(reports)
			rm.engine.ReleaseAll(slices.Concat(release...))
			for i, fs := range finished {
				if len(fs) > 0 {
					completed = true
					rm.completed(reports[i].Node, fs)
				}
			}
			rest = rest[n:]
		}
		if completed {
			rm.KickScheduler()
		}
		for _, r := range batch {
			if r.done != nil {
				close(r.done)
			}
		}
		rm.reports.recycle(batch)
	}
}

// completed counts and logs a heartbeat's completed containers and ends the attempts of
// AM containers among them.
func (rm *Core) completed(node string, finished []rmstate.Completion) {
	for _, f := range finished {
		rm.metrics.containerCompleted(f.Exit())
		rm.health.release(f.C.Node(), f.C.ID, f.C.Resource)
		if f.C.AM {
			rm.amExited(f.C.ID, f.Final())
		}
	}
	rm.log.WithFields(map[string]any{"node": node, "containers": completedLog(finished)}).Info("containers completed")
}

// NodeLost completes the containers of a lost (or decommissioned, or restarted) node as
// ABORTED; an AM container among them ends its attempt without counting as a failure.
func (rm *Core) NodeLost(node, why string) {
	rm.forgetNode(node)
	lost, err := rm.engine.RemoveNode(node)
	if err != nil {
		return
	}
	ids := rm.containers.IdsOf(lost)
	for _, id := range ids {
		c, final, fresh := rm.containers.Complete(id, &yarnpb.ContainerStatusProto{ContainerId: id.Proto(), State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(),
			ExitStatus: proto.Int32(exitcode.Aborted), Diagnostics: proto.String(why)})
		if fresh && c.AM {
			rm.amExited(id, final)
		}
	}
}
