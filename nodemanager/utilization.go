package nodemanager

import (
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/container"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/nodemanager/borrowed"
	"github.com/bobbin-yarn/bobbin/nodemanager/containers"
)

// utilization measures what the Java NM's NodeResourceMonitor and ContainersMonitor send
// in every heartbeat (node_utilization, containers_utilization): physical and virtual
// memory in MB and CPU in vcores, over the time since the previous heartbeat. The RM
// shows them in `yarn node -list -showDetails` and node reports. Only the heartbeat
// goroutine uses it.
type utilization struct {
	procRoot string
	// The previous reading: the machine's CPU counters and every container's CPU time.
	last      time.Time
	hostBusy  time.Duration
	hostTotal time.Duration
	contCPU   map[string]time.Duration // by container id
}

func newUtilization() *utilization {
	return &utilization{procRoot: "/proc", contCPU: map[string]time.Duration{}}
}

// sample fills the heartbeat's node status with the node's and the containers'
// utilization; nothing on the first call (no interval yet) or when /proc is unreadable.
func (u *utilization) sample(nm *NodeManager, st *yarnpb.NodeStatusProto, now time.Time) {
	h, err := borrowed.ReadHost(u.procRoot, nil)
	if err != nil {
		return
	}
	procs := nm.runningProcesses()
	var rss, vsize int64
	var cpu time.Duration
	seen := make(map[string]time.Duration, len(procs))
	for id, p := range procs {
		us := p.Usage()
		rss, vsize = rss+us.RSS, vsize+us.VSize
		seen[id] = us.CPU
		if prev, ok := u.contCPU[id]; ok && us.CPU >= prev {
			cpu += us.CPU - prev
		}
	}
	elapsed := now.Sub(u.last)
	first := u.last.IsZero()
	busy, total := h.CPUBusy-u.hostBusy, h.CPUTotal-u.hostTotal
	u.last, u.hostBusy, u.hostTotal, u.contCPU = now, h.CPUBusy, h.CPUTotal, seen
	if first || elapsed <= 0 || total <= 0 {
		return
	}
	usedMB := int32((h.MemTotal - h.MemAvailable) >> 20)
	// Without swap accounting the Java NM's virtual memory use equals the physical.
	st.NodeUtilization = &yarnpb.ResourceUtilizationProto{Pmem: proto.Int32(usedMB), Vmem: proto.Int32(usedMB),
		Cpu: proto.Float32(float32(float64(busy) / float64(total) * float64(h.Cores)))}
	st.ContainersUtilization = &yarnpb.ResourceUtilizationProto{Pmem: proto.Int32(int32(rss >> 20)), Vmem: proto.Int32(int32(vsize >> 20)),
		Cpu: proto.Float32(float32(cpu.Seconds() / elapsed.Seconds()))}
}

// runningProcesses are the running containers' processes by container id.
func (nm *NodeManager) runningProcesses() map[string]container.Process {
	procs := map[string]container.Process{}
	for _, v := range nm.table.Views() {
		if v.Proc != nil && v.Phase != containers.Done {
			procs[v.ID.String()] = v.Proc
		}
	}
	return procs
}
