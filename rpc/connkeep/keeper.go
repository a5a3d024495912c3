// Package connkeep keeps an IPC server's sockets open while the server's process is
// dead, so that a restarted server takes over its listeners and its clients' connections.
//
// Why: a Hadoop client whose RPC connection breaks (EOFException, connection reset)
// sleeps yarn.resourcemanager.connect.retry-interval.ms — 30 s by default — before it
// tries again, so an RM that is back in one second still costs every AM and NodeManager
// 30 s. A socket survives its process when another process holds a descriptor of it.
//
// The keeper is a small process of its own (`bobbin connection-keeper`, started by the
// server and surviving it: its own session, its own descriptors). The server hands it
// each listener and each accepted connection (SCM_RIGHTS on a unix socket in a directory
// only its user may enter, peers checked to be the same user) and records in a shared slot table what it is doing
// with each connection. While no server is attached, the kernel queues new connections in
// the listen backlog and buffers the calls clients send. When a server attaches again it
// gets everything back: the listeners, and every connection that was idle between two
// frames with every call answered, which it serves from the next frame on; a connection
// the dead server was in the middle of is closed, and its client retries as before.
//
// A server that stops cleanly says bye and the keeper closes everything and exits; one
// that is not back within the linger time is taken as gone, and the keeper does the same.
// That is the design of systemd's file descriptor store and of hot restarts in proxies,
// plus the per-connection record that makes taking over an RPC stream safe.
package connkeep

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// keeper is the state of the keeper process.
type keeper struct {
	log       *logrus.Entry
	table     int // memfd of the slot table
	listeners map[string]held
	conns     map[int]int // slot -> fd
}

type held struct {
	addr string
	fd   int
}

// RunKeeper is the keeper process: it serves one attached server at a time on the
// socket at path (in a PrivateDir) until a server says bye or none is attached for linger.
func RunKeeper(path string, linger time.Duration, log *logrus.Entry) error {
	if err := PrivateDir(filepath.Dir(path)); err != nil {
		return err
	}
	ln, err := listenAt(path)
	if err != nil {
		return err
	}
	defer func() {
		// The name goes first: a keeper started for the next server binds it afresh
		// while this one closes what it held.
		os.Remove(path)
		ln.Close()
	}()
	fd, err := unix.MemfdCreate("bobbin-connkeep-slots", unix.MFD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("connkeep: memfd: %w", err)
	}
	if err := unix.Ftruncate(fd, tableSize); err != nil {
		unix.Close(fd)
		return fmt.Errorf("connkeep: size the slot table: %w", err)
	}
	k := &keeper{log: log.WithField("keeper", path), table: fd, listeners: map[string]held{}, conns: map[int]int{}}
	k.log.Info("connection keeper started")
	// The linger time runs from the start and from each detach of a server; peers that
	// come and go without attaching do not extend it.
	ln.SetDeadline(time.Now().Add(linger))
	for {
		uc, err := ln.AcceptUnix()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				k.log.WithFields(logrus.Fields{"listeners": len(k.listeners), "connections": len(k.conns)}).
					Warnf("no server attached for %v: closing what was kept", linger)
				// Close, not shut down: should the server still be alive, having lost only
				// its link to the keeper, its own copies go on working.
				k.closeAll(false)
				return nil
			}
			k.closeAll(false)
			return fmt.Errorf("connkeep: accept: %w", err)
		}
		if err := sameUser(uc); err != nil {
			k.log.WithError(err).Warn("attach refused")
			uc.Close()
			continue
		}
		attached, bye, err := k.session(uc)
		uc.Close()
		if bye {
			k.log.Info("server said bye: closing what was kept")
			k.closeAll(true)
			return nil
		}
		if attached {
			k.log.WithError(err).Warn("server detached without bye; keeping its sockets")
			ln.SetDeadline(time.Now().Add(linger))
		}
	}
}

// session serves one peer: it greets it (a peer acts only on a greeting, so what a peer
// queued while the keeper served another is never acted on after that peer left), then
// serves its messages until it says bye or goes away. A peer has ioTimeout to say hello
// or bye after the greeting, and to take each message sent to it: a silent one would
// keep every other peer (the restarted server among them) waiting, and the keeper alive
// past its linger.
func (k *keeper) session(uc *net.UnixConn) (attached, bye bool, err error) {
	uc.SetWriteDeadline(time.Now().Add(ioTimeout))
	if err := send(uc, -1, "K"); err != nil {
		return false, false, err
	}
	uc.SetReadDeadline(time.Now().Add(ioTimeout))
	for {
		f, fd, err := recv(uc)
		if err != nil {
			return attached, false, err
		}
		if f[0] == "hello" {
			// The attached server speaks when it has something to hand over: no deadline.
			uc.SetReadDeadline(time.Time{})
		}
		switch {
		case f[0] == "hello" && fd < 0:
			attached = true
			if err := k.hello(uc); err != nil {
				return attached, false, err
			}
		case f[0] == "L" && len(f) == 3 && fd >= 0:
			if old, ok := k.listeners[f[1]]; ok {
				unix.Close(old.fd)
			}
			k.listeners[f[1]] = held{addr: f[2], fd: fd}
		case f[0] == "U" && len(f) == 2 && fd < 0:
			if old, ok := k.listeners[f[1]]; ok {
				unix.Close(old.fd)
				delete(k.listeners, f[1])
			}
		case f[0] == "C" && len(f) == 2 && fd >= 0:
			slot, err := strconv.Atoi(f[1])
			if err != nil || slot < 0 || slot >= slotCount {
				unix.Close(fd)
				continue
			}
			if old, ok := k.conns[slot]; ok {
				unix.Close(old)
			}
			k.conns[slot] = fd
		case f[0] == "D" && len(f) == 2 && fd < 0:
			if slot, err := strconv.Atoi(f[1]); err == nil {
				if old, ok := k.conns[slot]; ok {
					unix.Close(old)
					delete(k.conns, slot)
				}
			}
		case f[0] == "bye":
			if fd >= 0 {
				unix.Close(fd)
			}
			return attached, true, nil
		default:
			if fd >= 0 {
				unix.Close(fd)
			}
			k.log.Warnf("unknown message %q", f)
		}
	}
}

// hello hands everything held to a (re)attaching server.
func (k *keeper) hello(uc *net.UnixConn) error {
	uc.SetWriteDeadline(time.Now().Add(ioTimeout))
	defer uc.SetWriteDeadline(time.Time{})
	if err := send(uc, k.table, "T", strconv.Itoa(tableSize)); err != nil {
		return err
	}
	for name, h := range k.listeners {
		if err := send(uc, h.fd, "L", name, h.addr); err != nil {
			return err
		}
	}
	for slot, fd := range k.conns {
		if err := send(uc, fd, "C", strconv.Itoa(slot)); err != nil {
			return err
		}
	}
	return send(uc, -1, "E")
}

// closeAll lets go of everything. shut: also shut the connections down (after bye: the
// server's clients must see the end even if it still holds a copy).
func (k *keeper) closeAll(shut bool) {
	for _, h := range k.listeners {
		unix.Close(h.fd)
	}
	for _, fd := range k.conns {
		if shut {
			unix.Shutdown(fd, syscall.SHUT_RDWR)
		}
		unix.Close(fd)
	}
	unix.Close(k.table)
}

// listenAt binds the keeper's socket at path. A socket file left by a keeper that died
// is removed first; one a live keeper answers on is not: two keepers for one server would
// each hold half of what it hands over.
func listenAt(path string) (*net.UnixListener, error) {
	if st, err := os.Lstat(path); err == nil {
		if st.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("connkeep: %s exists and is not a socket", path)
		}
		if c, err := dial(path); err == nil {
			c.Close()
			return nil, fmt.Errorf("connkeep: a keeper already serves %s", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("connkeep: remove the stale socket: %w", err)
		}
	}
	var ln *net.UnixListener
	err := viaShortPath(path, func(p string) (err error) {
		ln, err = net.ListenUnix("unixpacket", sockAddr(p))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("connkeep: listen on %s: %w", path, err)
	}
	// Closing unlinks by the name it was bound with, which may be a /proc/self/fd one
	// whose descriptor is gone by then: the keeper removes the file itself.
	ln.SetUnlinkOnClose(false)
	return ln, nil
}
