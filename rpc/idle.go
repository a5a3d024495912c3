package rpc

import (
	"sort"
	"time"

	"github.com/sirupsen/logrus"
)

// IdleSettings are when a server closes idle connections, with the keys and defaults of
// Java's Server.ConnectionManager.
type IdleSettings struct {
	// MaxIdle is ipc.client.connection.maxidletime (10 s): a connection with no call in
	// progress that sent nothing for longer is idle.
	MaxIdle time.Duration
	// Threshold is ipc.client.idlethreshold (4000): idle connections are closed only while
	// the server has more connections than this.
	Threshold int
	// KillMax is ipc.client.kill.max (10): at most this many are closed per scan.
	KillMax int
	// ScanInterval is ipc.client.connection.idle-scan-interval.ms (10 s).
	ScanInterval time.Duration
}

// DefaultIdleSettings are Hadoop's defaults.
var DefaultIdleSettings = IdleSettings{MaxIdle: 10 * time.Second, Threshold: 4000, KillMax: 10, ScanInterval: 10 * time.Second}

// maybeCloseIdle is Java's ConnectionManager.closeIdle, run as a connection arrives (no
// goroutine or timer per server: a simulator runs thousands of servers): at most once per
// ScanInterval, and only above Threshold connections, it closes up to KillMax connections
// that have no call in progress and sent nothing for MaxIdle. A connection that has not
// finished its handshake is not left to this: its reads have a deadline of MaxIdle
// (serverConn.serve), whatever the count, as a Hadoop client sends its handshake at once
// and such a connection is someone holding a socket and a goroutine open for nothing.
func (s *Server) maybeCloseIdle(now time.Time) {
	st := s.opts.Idle
	last := s.lastScan.Load()
	if now.UnixNano()-last < int64(st.ScanInterval) || s.connCount() <= st.Threshold || !s.lastScan.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	s.closeIdle(now)
}

// closeIdle closes the connections idle at now by the rules of maybeCloseIdle.
func (s *Server) closeIdle(now time.Time) {
	st := s.opts.Idle
	oldest := now.Add(-st.MaxIdle).UnixNano()
	s.mu.Lock()
	total := len(s.conns)
	var idle []*serverConn
	for c := range s.conns {
		if c.inflight.Load() == 0 && !c.busy.Load() && c.lastContact.Load() < oldest {
			idle = append(idle, c)
		}
	}
	s.mu.Unlock()
	// The longest idle first, as they have waited longest.
	sort.Slice(idle, func(i, j int) bool { return idle[i].lastContact.Load() < idle[j].lastContact.Load() })
	closed := 0
	for _, c := range idle {
		if total <= st.Threshold || closed == st.KillMax {
			break
		}
		s.log.WithFields(logrus.Fields{"remote": c.nc.RemoteAddr().String(), "connections": total}).Info("idle IPC connection closed (ipc.client.idlethreshold exceeded)")
		c.stopReading()
		total--
		closed++
	}
}
