package nmweb

import (
	"os"
	"syscall"

	"github.com/bobbin-yarn/bobbin/nodemanager/containers"
	"github.com/bobbin-yarn/bobbin/yarn/webapp"
)

// beans are the Java NM's MBeans that monitoring reads: NodeManagerMetrics,
// ShuffleMetrics and RpcActivityForPort<port> of ContainerManager's port.
func (s *server) beans() []webapp.Bean {
	res, f := s.Resources, s.Node.Figures()
	var initing, running int64
	var alloc [2]int64 // memory MB, vcores
	for _, v := range s.Table.Views() {
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
	host, _ := os.Hostname()
	const svc = "Hadoop:service=NodeManager,"
	out := []webapp.Bean{{Name: svc + "name=NodeManagerMetrics", ModelerType: "NodeManagerMetrics", Attrs: []webapp.Attr{
		{Key: "tag.Context", Value: "yarn"}, {Key: "tag.Hostname", Value: host},
		{Key: "ContainersLaunched", Value: f.Launched}, {Key: "ContainersCompleted", Value: f.Completed},
		{Key: "ContainersFailed", Value: f.Failed}, {Key: "ContainersKilled", Value: f.Killed},
		{Key: "ContainersIniting", Value: initing}, {Key: "ContainersRunning", Value: running},
		// The Java NM rounds memory to whole GB here; so does this.
		{Key: "AllocatedGB", Value: (alloc[0] + 512) / 1024}, {Key: "AllocatedContainers", Value: initing + running},
		{Key: "AvailableGB", Value: max(0, res.MemoryMB-alloc[0]) / 1024},
		{Key: "AllocatedVCores", Value: alloc[1]}, {Key: "AvailableVCores", Value: max(0, int64(res.VCores)-alloc[1])},
		{Key: "BadLocalDirs", Value: f.BadLocalDirs}, {Key: "BadLogDirs", Value: f.BadLogDirs},
		{Key: "GoodLocalDirsDiskUtilizationPerc", Value: diskUsedPercent(f.GoodLocalDirs)},
		{Key: "GoodLogDirsDiskUtilizationPerc", Value: diskUsedPercent(f.GoodLogDirs)},
	}}}
	if st := f.Shuffle; st != nil {
		out = append(out, webapp.Bean{Name: svc + "name=ShuffleMetrics", ModelerType: "ShuffleMetrics", Attrs: []webapp.Attr{
			{Key: "tag.Context", Value: "mapred"}, {Key: "tag.Hostname", Value: host},
			{Key: "ShuffleOutputBytes", Value: st.OutputBytes}, {Key: "ShuffleOutputsFailed", Value: st.OutputsFailed},
			{Key: "ShuffleOutputsOK", Value: st.OutputsOK}, {Key: "ShuffleConnections", Value: st.Connections},
		}})
	}
	if f.IPCPort > 0 {
		out = append(out, webapp.RPCActivityBean("NodeManager", host, f.IPCPort, f.IPC))
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
