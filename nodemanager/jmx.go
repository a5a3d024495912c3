package nodemanager

import (
	"os"
	"syscall"

	metrics "github.com/rcrowley/go-metrics"

	"github.com/bobbin-yarn/bobbin/nodemanager/containers"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
	"github.com/bobbin-yarn/bobbin/yarn/webapp"
)

// nmCounters are the container totals of the Java NM's NodeManagerMetrics, kept as
// go-metrics counters (so /metrics and /prom show them too).
type nmCounters struct {
	launched, completed, failed, killed metrics.Counter
}

func newNMCounters(reg metrics.Registry) nmCounters {
	c := func(n string) metrics.Counter { return metrics.GetOrRegisterCounter("nm."+n, reg) }
	return nmCounters{launched: c("ContainersLaunched"), completed: c("ContainersCompleted"), failed: c("ContainersFailed"), killed: c("ContainersKilled")}
}

// ended counts a container's end as the Java NM does: killed on request (the AM, the RM,
// eviction, limits), completed with exit 0, failed otherwise.
func (c nmCounters) ended(killed bool, exit int32) {
	switch {
	case killed || exit == exitcode.Preempted || exit == exitcode.KilledExceededPmem || exit == exitcode.KilledExceededVmem:
		c.killed.Inc(1)
	case exit == 0:
		c.completed.Inc(1)
	default:
		c.failed.Inc(1)
	}
}

// beans are the Java NM's MBeans that monitoring reads: NodeManagerMetrics,
// ShuffleMetrics and RpcActivityForPort<port> of ContainerManager's port.
func (nm *NodeManager) beans() []webapp.Bean {
	s := nm.settings
	var initing, running int64
	var alloc [2]int64 // memory MB, vcores
	for _, v := range nm.table.Views() {
		switch {
		case v.Phase == containers.Done:
			continue
		case v.Proc == nil: // localizing and starting, or killed before it ran
			initing++
		default:
			running++
		}
		r := v.Resource()
		alloc[0] += r.GetMemory()
		alloc[1] += int64(r.GetVirtualCores())
	}
	nm.mu.Lock()
	badLocal, badLog := len(s.LocalDirs)-len(nm.disks.goodLocal), len(s.LogDirs)-len(nm.disks.goodLog)
	goodLocal, goodLog := append([]string(nil), nm.disks.goodLocal...), append([]string(nil), nm.disks.goodLog...)
	port := nm.port
	sh := nm.mrShuffle
	nm.mu.Unlock()
	host, _ := os.Hostname()
	const svc = "Hadoop:service=NodeManager,"
	out := []webapp.Bean{{Name: svc + "name=NodeManagerMetrics", ModelerType: "NodeManagerMetrics", Attrs: []webapp.Attr{
		{Key: "tag.Context", Value: "yarn"}, {Key: "tag.Hostname", Value: host},
		{Key: "ContainersLaunched", Value: nm.counts.launched.Count()}, {Key: "ContainersCompleted", Value: nm.counts.completed.Count()},
		{Key: "ContainersFailed", Value: nm.counts.failed.Count()}, {Key: "ContainersKilled", Value: nm.counts.killed.Count()},
		{Key: "ContainersIniting", Value: initing}, {Key: "ContainersRunning", Value: running},
		// The Java NM rounds memory to whole GB here; so does this.
		{Key: "AllocatedGB", Value: (alloc[0] + 512) / 1024}, {Key: "AllocatedContainers", Value: initing + running},
		{Key: "AvailableGB", Value: max(0, s.MemoryMB-alloc[0]) / 1024},
		{Key: "AllocatedVCores", Value: alloc[1]}, {Key: "AvailableVCores", Value: max(0, int64(s.VCores)-alloc[1])},
		{Key: "BadLocalDirs", Value: badLocal}, {Key: "BadLogDirs", Value: badLog},
		{Key: "GoodLocalDirsDiskUtilizationPerc", Value: diskUsedPercent(goodLocal)},
		{Key: "GoodLogDirsDiskUtilizationPerc", Value: diskUsedPercent(goodLog)},
	}}}
	if sh != nil {
		st := sh.h.Stats()
		out = append(out, webapp.Bean{Name: svc + "name=ShuffleMetrics", ModelerType: "ShuffleMetrics", Attrs: []webapp.Attr{
			{Key: "tag.Context", Value: "mapred"}, {Key: "tag.Hostname", Value: host},
			{Key: "ShuffleOutputBytes", Value: st.OutputBytes}, {Key: "ShuffleOutputsFailed", Value: st.OutputsFailed},
			{Key: "ShuffleOutputsOK", Value: st.OutputsOK}, {Key: "ShuffleConnections", Value: st.Connections},
		}})
	}
	if nm.cm != nil && port > 0 {
		out = append(out, webapp.RPCActivityBean("NodeManager", host, int(port), nm.cm.Activity()))
	}
	return out
}

// diskUsedPercent is the used share of the file systems under dirs (each counted once),
// as a whole percentage.
func diskUsedPercent(dirs []string) int64 {
	seen := map[uint64]bool{}
	var total, free float64
	for _, d := range dirs {
		var st syscall.Statfs_t
		if syscall.Statfs(d, &st) != nil {
			continue
		}
		id := uint64(st.Fsid.X__val[0])<<32 | uint64(uint32(st.Fsid.X__val[1]))
		if seen[id] {
			continue
		}
		seen[id] = true
		total += float64(st.Blocks) * float64(st.Bsize)
		free += float64(st.Bavail) * float64(st.Bsize)
	}
	if total == 0 {
		return 0
	}
	return int64((total - free) / total * 100)
}
