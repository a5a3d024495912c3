package nodemanager

import (
	"errors"
	"net"
	"os"
	"strconv"

	"github.com/bobbin-yarn/bobbin/nodemanager/gpu"
	"github.com/bobbin-yarn/bobbin/nodemanager/nmweb"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/yarn/aggregatedlog"
	"github.com/bobbin-yarn/bobbin/yarn/remotefs"
	"github.com/bobbin-yarn/bobbin/yarn/secureio"
)

// webNode is what the web port (package nmweb) asks of the NodeManager.
type webNode struct{ nm *NodeManager }

var _ nmweb.Node = webNode{}

func (w webNode) Status() nmweb.Status { return w.nm.webStatus() }

func (nm *NodeManager) webStatus() nmweb.Status {
	health := nm.healthStatus()
	nm.mu.Lock()
	defer nm.mu.Unlock()
	return nmweb.Status{ID: nm.nodeID, HTTPAddress: nm.httpAddress(), Started: nm.startedAt, Health: health}
}

func (w webNode) ContainerLogs(id records.ContainerID, appUser string) ([]secureio.Entry, bool) {
	return w.nm.listContainerLogs(id, appUser)
}

func (w webNode) OpenContainerLog(id records.ContainerID, name string) (*os.File, error) {
	return w.nm.openContainerLog(id, name)
}

func (w webNode) AggregatedLogs(id records.ContainerID, user string) (*aggregatedlog.Found, string, error) {
	s := w.nm.settings.LogAggregation
	if !s.Enabled {
		return nil, "", errors.New("log aggregation is off (yarn.log-aggregation-enable)")
	}
	// A read holds up to aggregatedlog.MaxFileBytes: two at a time, the others refused.
	select {
	case w.nm.aggReads <- struct{}{}:
		defer func() { <-w.nm.aggReads }()
	default:
		return nil, "", errors.New("the node is reading other aggregated logs; try again")
	}
	fs, err := remotefs.Open(w.nm.opts.Conf, s.FS, user)
	if err != nil {
		return nil, "", err
	}
	defer fs.Close()
	dir := s.Location.AppDir(s.Root, user, id.Attempt.App)
	f, err := aggregatedlog.ContainerLogs(fs, dir, id.String(), aggregatedlog.NodeFileName(w.nm.NodeID()))
	return f, fs.URI(dir), err
}

func (w webNode) Borrowed() (nmweb.Borrowed, bool) {
	h := w.nm.host
	if h == nil {
		return nmweb.Borrowed{}, false
	}
	b := nmweb.Borrowed{Settings: h.settings.Meter, Interval: h.settings.Interval, History: h.historyInOrder()}
	if d, ok := h.decision(); ok {
		b.Latest = &d
	}
	return b, true
}

func (w webNode) Figures() nmweb.Figures { return w.nm.figures() }

func (w webNode) Resource(name string) (any, bool) {
	if name != gpu.ResourceName || w.nm.gpus == nil {
		return nil, false
	}
	return w.nm.gpus.resourceInfo(), true
}

func (nm *NodeManager) figures() nmweb.Figures {
	s := nm.settings
	f := nmweb.Figures{Launched: nm.counts.launched.Count(), Completed: nm.counts.completed.Count(),
		Failed: nm.counts.failed.Count(), Killed: nm.counts.killed.Count()}
	if sh := nm.mrShuffle; sh != nil {
		st := sh.h.Stats()
		f.Shuffle = &st
	}
	nm.mu.Lock()
	f.BadLocalDirs, f.BadLogDirs = len(s.LocalDirs)-len(nm.disks.goodLocal), len(s.LogDirs)-len(nm.disks.goodLog)
	f.GoodLocalDirs, f.GoodLogDirs = append([]string(nil), nm.disks.goodLocal...), append([]string(nil), nm.disks.goodLog...)
	port := nm.port
	nm.mu.Unlock()
	if nm.cm != nil && port > 0 {
		f.IPCPort, f.IPC = int(port), nm.cm.Activity()
	}
	return f
}

// httpAddress is the web address as the node's id names its host; call with nm.mu held.
func (nm *NodeManager) httpAddress() string {
	return net.JoinHostPort(nm.settings.Host, strconv.Itoa(int(nm.httpPort)))
}
