package resourcemanager

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
	"github.com/bobbin-yarn/bobbin/resourcemanager/security"
)

// Exit statuses the RM reports for containers it ends itself (ContainerExitStatus).
const (
	exitAborted   = -100 // released by the AM, or lost with its node
	exitPreempted = -102 // killed by the scheduler's preemption
)

// rmContainer is a container the engine allocated, as the RM tracks it.
type rmContainer struct {
	engineID  scheduler.ContainerID
	id        records.ContainerID
	node      string // "host:port"
	am        bool   // the AM's own container
	preempted bool   // killed by the scheduler: the AM hears PREEMPTED
	done      bool
}

// containerTable joins the engine's allocations to YARN containers and holds what each
// attempt and node is to be told on its next allocate or heartbeat.
type containerTable struct {
	mu        sync.Mutex
	byEngine  map[scheduler.ContainerID]*rmContainer
	byID      map[records.ContainerID]*rmContainer
	seq       map[records.AttemptID]int64
	allocated map[records.AttemptID][]*yarnpb.ContainerProto
	completed map[records.AttemptID][]*yarnpb.ContainerStatusProto
	nmTokens  map[records.AttemptID]map[string]bool
	cleanup   map[string][]*yarnpb.ContainerIdProto // node -> containers to kill
	removed   map[string][]*yarnpb.ContainerIdProto // node -> completed containers to forget
	preempt   map[records.AttemptID][]*yarnpb.ContainerIdProto
}

func newContainerTable() *containerTable {
	return &containerTable{byEngine: map[scheduler.ContainerID]*rmContainer{}, byID: map[records.ContainerID]*rmContainer{},
		seq: map[records.AttemptID]int64{}, allocated: map[records.AttemptID][]*yarnpb.ContainerProto{},
		completed: map[records.AttemptID][]*yarnpb.ContainerStatusProto{}, nmTokens: map[records.AttemptID]map[string]bool{},
		cleanup: map[string][]*yarnpb.ContainerIdProto{}, removed: map[string][]*yarnpb.ContainerIdProto{},
		preempt: map[records.AttemptID][]*yarnpb.ContainerIdProto{}}
}

// complete records a finished container once and queues its status for its attempt.
// It reports whether the container was still running.
func (t *containerTable) complete(id records.ContainerID, status *yarnpb.ContainerStatusProto) (*rmContainer, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c, ok := t.byID[id]
	if !ok || c.done {
		return c, false
	}
	c.done = true
	if c.preempted {
		status = proto.Clone(status).(*yarnpb.ContainerStatusProto)
		status.ExitStatus = proto.Int32(exitPreempted)
		status.Diagnostics = proto.String("Container preempted by scheduler")
	}
	t.completed[id.Attempt] = append(t.completed[id.Attempt], status)
	return c, true
}

func resourceOf(r *yarnpb.ResourceProto) scheduler.Resource {
	return scheduler.Resource{r.GetMemory(), int64(r.GetVirtualCores())}
}

func resourceProto(r scheduler.Resource) *yarnpb.ResourceProto {
	return &yarnpb.ResourceProto{Memory: proto.Int64(r[scheduler.Memory]), VirtualCores: proto.Int32(int32(r[scheduler.VCores]))}
}

// scheduleLoop runs engine passes on a tick and whenever kicked, until ctx ends.
func (rm *ResourceManager) scheduleLoop(ctx context.Context) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-rm.kick:
		}
		rm.schedulePass()
	}
}

// kickScheduler asks for a pass soon (it never blocks).
func (rm *ResourceManager) kickScheduler() {
	select {
	case rm.kick <- struct{}{}:
	default:
	}
}

// schedulePass turns the engine's allocations into YARN containers with container tokens,
// queued for their attempts' next allocate.
func (rm *ResourceManager) schedulePass() {
	res := rm.engine.Schedule(0)
	for _, a := range res.Allocations {
		if err := rm.containerFor(a); err != nil {
			rm.log.WithError(err).WithField("application", a.App).Warn("allocation dropped")
			rm.engine.Release(a.Container)
		}
	}
	for _, p := range res.Preemptions {
		rm.preemptContainer(p)
	}
}

func (rm *ResourceManager) containerFor(a scheduler.Allocation) error {
	appID, err := records.ParseApplicationID(a.App)
	if err != nil {
		return err
	}
	var att records.AttemptID
	var user string
	live := false
	rm.apps.mu.Lock()
	if app, ok := rm.apps.apps[appID]; ok && app.attempt != nil && !app.finished() {
		att, user, live = app.attempt.id, app.user, true
	}
	rm.apps.mu.Unlock()
	if !live {
		return fmt.Errorf("no live attempt")
	}
	rm.nodes.mu.Lock()
	n, ok := rm.nodes.nodes[a.Node]
	var nodeID *yarnpb.NodeIdProto
	var httpAddr string
	if ok {
		nodeID, httpAddr = n.id, fmt.Sprintf("%s:%d", n.id.GetHost(), n.httpPort)
	}
	rm.nodes.mu.Unlock()
	if !ok {
		return fmt.Errorf("node %s is gone", a.Node)
	}
	t := rm.containers
	t.mu.Lock()
	t.seq[att]++
	cid := records.ContainerID{Attempt: att, ID: t.seq[att]}
	t.mu.Unlock()
	now := rm.opts.Now()
	tok, err := rm.containerTokens.Issue(&yarnpb.ContainerTokenIdentifierProto{
		ContainerId: cid.Proto(), NmHostAddr: proto.String(a.Node), AppSubmitter: proto.String(user),
		Resource: resourceProto(a.Resource), ExpiryTimeStamp: proto.Int64(now.Add(10 * time.Minute).UnixMilli()),
		Priority: &yarnpb.PriorityProto{Priority: proto.Int32(a.Priority)}, CreationTime: proto.Int64(now.UnixMilli()),
	})
	if err != nil {
		return err
	}
	c := &yarnpb.ContainerProto{Id: cid.Proto(), NodeId: nodeID, NodeHttpAddress: proto.String(httpAddr),
		Resource: resourceProto(a.Resource), Priority: &yarnpb.PriorityProto{Priority: proto.Int32(a.Priority)}, ContainerToken: tok.Proto()}
	t.mu.Lock()
	rc := &rmContainer{engineID: a.Container, id: cid, node: a.Node, am: a.AM}
	t.byEngine[a.Container], t.byID[cid] = rc, rc
	if !a.AM {
		t.allocated[att] = append(t.allocated[att], c)
	}
	t.mu.Unlock()
	if a.AM {
		rm.launchAM(att, c, tok.Proto())
	}
	rm.log.WithFields(map[string]any{"application": appID.String(), "container": cid.String(), "node": a.Node,
		"memory_mb": a.Resource[scheduler.Memory], "vcores": a.Resource[scheduler.VCores]}).Info("container allocated")
	return nil
}

// preemptContainer carries out one preemption decision: a notice goes to the AM in its
// next allocate response (strict contract); a kill goes to the container's NodeManager,
// and the AM will see exit status PREEMPTED (-102), which MapReduce and Spark do not count
// as a task failure.
func (rm *ResourceManager) preemptContainer(p scheduler.Preemption) {
	t := rm.containers
	t.mu.Lock()
	defer t.mu.Unlock()
	c, ok := t.byEngine[p.Container]
	if !ok || c.done {
		return
	}
	log := rm.log.WithFields(map[string]any{"container": c.id.String(), "node": c.node})
	if !p.Kill {
		t.preempt[c.id.Attempt] = append(t.preempt[c.id.Attempt], c.id.Proto())
		log.Info("container to be preempted: AM notified")
		return
	}
	c.preempted = true
	t.cleanup[c.node] = append(t.cleanup[c.node], c.id.Proto())
	log.Info("preempted container killed")
}

// asksFrom converts an AM's resource requests for the engine, normalized as YARN does:
// memory rounded up to a multiple of the minimum allocation, vcores at least the minimum.
func (rm *ResourceManager) asksFrom(reqs []*yarnpb.ResourceRequestProto) []scheduler.Ask {
	out := make([]scheduler.Ask, 0, len(reqs))
	for _, r := range reqs {
		c := resourceOf(r.GetCapability())
		if step := int64(rm.settings.MinAllocationMB); step > 0 {
			c[scheduler.Memory] = max(step, (c[scheduler.Memory]+step-1)/step*step)
		}
		c[scheduler.VCores] = max(c[scheduler.VCores], int64(rm.settings.MinAllocationCore))
		out = append(out, scheduler.Ask{Priority: r.GetPriority().GetPriority(), ResourceName: r.GetResourceName(),
			Capability: c, Count: int(r.GetNumContainers()), RelaxLocality: r.GetRelaxLocality(),
			Label: r.GetNodeLabelExpression()})
	}
	return out
}

// drainFor hands an attempt what it is owed: new containers, NMTokens for their nodes it
// has not had yet, and completed container statuses.
func (rm *ResourceManager) drainFor(att records.AttemptID, user string) ([]*yarnpb.ContainerProto, []*yarnpb.NMTokenProto, []*yarnpb.ContainerStatusProto) {
	t := rm.containers
	t.mu.Lock()
	allocated, completed := t.allocated[att], t.completed[att]
	delete(t.allocated, att)
	delete(t.completed, att)
	sent := t.nmTokens[att]
	if sent == nil {
		sent = map[string]bool{}
		t.nmTokens[att] = sent
	}
	var need []*yarnpb.NodeIdProto
	for _, c := range allocated {
		k := nodeKey(c.GetNodeId())
		if !sent[k] {
			sent[k] = true
			need = append(need, c.GetNodeId())
		}
	}
	t.mu.Unlock()
	var tokens []*yarnpb.NMTokenProto
	issuer := security.NMTokens{Keys: rm.nmKeys}
	for _, n := range need {
		tok, err := issuer.Issue(att, n, user)
		if err != nil {
			continue
		}
		tokens = append(tokens, &yarnpb.NMTokenProto{NodeId: n, Token: tok.Proto()})
	}
	return allocated, tokens, completed
}

// release ends containers an AM gave back: the engine frees them, the AM hears ABORTED,
// and their NodeManagers are told to kill them.
func (rm *ResourceManager) release(ids []*yarnpb.ContainerIdProto) {
	for _, p := range ids {
		id := records.ContainerIDFromProto(p)
		c, fresh := rm.containers.complete(id, &yarnpb.ContainerStatusProto{ContainerId: p, State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(),
			ExitStatus: proto.Int32(exitAborted), Diagnostics: proto.String("Container released by application")})
		if !fresh {
			continue
		}
		rm.engine.Release(c.engineID)
		rm.containers.mu.Lock()
		rm.containers.cleanup[c.node] = append(rm.containers.cleanup[c.node], p)
		rm.containers.mu.Unlock()
	}
}

// nodeStatuses takes a NodeManager's container statuses: completed ones free their room
// and go to their attempts; the NM is told to forget them on the next heartbeat.
func (rm *ResourceManager) nodeStatuses(node string, statuses []*yarnpb.ContainerStatusProto) {
	for _, st := range statuses {
		if st.GetState() != yarnpb.ContainerStateProto_C_COMPLETE {
			continue
		}
		id := records.ContainerIDFromProto(st.GetContainerId())
		c, fresh := rm.containers.complete(id, st)
		if c == nil {
			continue
		}
		if fresh {
			rm.engine.Release(c.engineID)
			rm.log.WithFields(map[string]any{"container": id.String(), "node": node, "exit_status": st.GetExitStatus()}).Info("container completed")
			if c.am {
				rm.amExited(id, st)
			}
			rm.kickScheduler()
		}
		rm.containers.mu.Lock()
		rm.containers.removed[node] = append(rm.containers.removed[node], st.GetContainerId())
		rm.containers.mu.Unlock()
	}
}

// nodeDirectives returns, once, what node must kill and may forget.
func (rm *ResourceManager) nodeDirectives(node string) (cleanup, removed []*yarnpb.ContainerIdProto) {
	t := rm.containers
	t.mu.Lock()
	defer t.mu.Unlock()
	cleanup, removed = t.cleanup[node], t.removed[node]
	delete(t.cleanup, node)
	delete(t.removed, node)
	return cleanup, removed
}

// nodeLost completes the containers of a lost node as ABORTED.
func (rm *ResourceManager) nodeLost(node string) {
	lost, err := rm.engine.RemoveNode(node)
	if err != nil {
		return
	}
	rm.containers.mu.Lock()
	var ids []records.ContainerID
	for _, e := range lost {
		if c, ok := rm.containers.byEngine[e]; ok {
			ids = append(ids, c.id)
		}
	}
	rm.containers.mu.Unlock()
	sort.Slice(ids, func(i, j int) bool { return ids[i].ID < ids[j].ID })
	for _, id := range ids {
		rm.containers.complete(id, &yarnpb.ContainerStatusProto{ContainerId: id.Proto(), State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(),
			ExitStatus: proto.Int32(exitAborted), Diagnostics: proto.String("Container released on a *lost* node")})
	}
}

// hostsToNodes maps blacklisted host names to the node ids on them.
func (rm *ResourceManager) hostsToNodes(hosts []string) []string {
	rm.nodes.mu.Lock()
	defer rm.nodes.mu.Unlock()
	var out []string
	for _, h := range hosts {
		for k, n := range rm.nodes.nodes {
			if n.id.GetHost() == h || strings.EqualFold(k, h) {
				out = append(out, k)
			}
		}
	}
	return out
}

// endApp removes a finished or killed application from the engine; its containers that
// still run are killed on their NodeManagers and its AMRMToken stops working.
func (rm *ResourceManager) endApp(id records.ApplicationID) {
	rm.engine.RemoveApp(id.String())
	t := rm.containers
	t.mu.Lock()
	for cid, c := range t.byID {
		if cid.Attempt.App == id && !c.done {
			c.done = true
			t.cleanup[c.node] = append(t.cleanup[c.node], cid.Proto())
		}
	}
	t.mu.Unlock()
}

// takePreemptions returns, once, the containers an attempt is asked to give back.
func (rm *ResourceManager) takePreemptions(att records.AttemptID) *yarnpb.PreemptionMessageProto {
	t := rm.containers
	t.mu.Lock()
	defer t.mu.Unlock()
	ids := t.preempt[att]
	delete(t.preempt, att)
	if len(ids) == 0 {
		return nil
	}
	strict := &yarnpb.StrictPreemptionContractProto{}
	for _, id := range ids {
		strict.Container = append(strict.Container, &yarnpb.PreemptionContainerProto{Id: id})
	}
	return &yarnpb.PreemptionMessageProto{StrictContract: strict}
}
