package connkeep

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"

	"github.com/bobbin-yarn/bobbin/rpc"
)

// Options configure Attach.
type Options struct {
	// Path is the keeper's socket, from SocketPath: one per server instance on the host
	// (the RM names it by its client address).
	Path string
	// Spawn starts a keeper process for Path when none is running; it must return once
	// the process is started (Attach waits for its socket).
	Spawn  func(path string) error
	Logger *logrus.Entry
}

// Attachment is a server process's link to its keeper. It implements rpc.ConnKeeper.
type Attachment struct {
	uc    *net.UnixConn
	table table
	log   *logrus.Entry

	mu        sync.Mutex
	free      []int
	listeners map[string]heldListener // handed back by the keeper, not yet taken
	conns     map[int]*os.File        // handed back, not yet adopted
	broken    atomic.Bool             // the keeper is gone: keep nothing more
	closed    bool
}

type heldListener struct {
	addr string
	f    *os.File
}

// Attach connects to the keeper named in o (starting one with o.Spawn when there is
// none) and takes back what it holds.
func Attach(o Options) (*Attachment, error) {
	if o.Logger == nil {
		o.Logger = logrus.NewEntry(logrus.StandardLogger())
	}
	uc, err := dial(o.Path)
	if err != nil {
		if o.Spawn == nil {
			return nil, fmt.Errorf("connkeep: no keeper at %s: %w", o.Path, err)
		}
		if err := o.Spawn(o.Path); err != nil {
			return nil, fmt.Errorf("connkeep: start a keeper: %w", err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			if uc, err = dial(o.Path); err == nil {
				break
			}
			if time.Now().After(deadline) {
				return nil, fmt.Errorf("connkeep: the keeper at %s did not come up: %w", o.Path, err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	a := &Attachment{uc: uc, log: o.Logger.WithField("keeper", o.Path), listeners: map[string]heldListener{}, conns: map[int]*os.File{}}
	if err := a.hello(); err != nil {
		uc.Close()
		return nil, err
	}
	return a, nil
}

func (a *Attachment) hello() (err error) {
	if err := sameUser(a.uc); err != nil {
		return err
	}
	defer func() {
		if err != nil { // give back what came
			for _, h := range a.listeners {
				h.f.Close()
			}
			for _, f := range a.conns {
				f.Close()
			}
			if a.table != nil {
				unix.Munmap(a.table)
			}
		}
	}()
	// A keeper serves one server at a time and greets a peer when it turns to it: one
	// busy with another process is not waited for (a silent peer of the keeper's is
	// dropped after ioTimeout, so twice that is room for one).
	a.uc.SetDeadline(time.Now().Add(2 * ioTimeout))
	defer a.uc.SetDeadline(time.Time{})
	if err := awaitGreeting(a.uc); err != nil {
		return err
	}
	if err := a.send(-1, "hello"); err != nil {
		return fmt.Errorf("connkeep: hello: %w", err)
	}
	used := map[int]bool{}
	for {
		f, fd, err := recv(a.uc)
		if err != nil {
			return fmt.Errorf("connkeep: hello: %w (is another server attached to this keeper?)", err)
		}
		switch {
		case f[0] == "T" && fd >= 0:
			mem, err := unix.Mmap(fd, 0, tableSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
			unix.Close(fd)
			if err != nil {
				return fmt.Errorf("connkeep: map the slot table: %w", err)
			}
			a.table = mem
		case f[0] == "L" && len(f) == 3 && fd >= 0:
			a.listeners[f[1]] = heldListener{addr: f[2], f: os.NewFile(uintptr(fd), "listener "+f[1])}
		case f[0] == "C" && len(f) == 2 && fd >= 0:
			slot, err := strconv.Atoi(f[1])
			if err != nil || slot < 0 || slot >= slotCount {
				unix.Close(fd)
				continue
			}
			a.conns[slot] = os.NewFile(uintptr(fd), "connection")
			used[slot] = true
		case f[0] == "E":
			if fd >= 0 {
				unix.Close(fd)
			}
			if a.table == nil {
				return errors.New("connkeep: the keeper sent no slot table")
			}
			for s := slotCount - 1; s >= 0; s-- {
				if !used[s] {
					a.free = append(a.free, s)
				}
			}
			return nil
		default:
			if fd >= 0 {
				unix.Close(fd)
			}
			return fmt.Errorf("connkeep: unexpected message %q", f)
		}
	}
}

// Listen returns the listener the keeper held under name when it was bound to the same
// configured address, else binds addr and hands the new listener to the keeper.
func (a *Attachment) Listen(name, addr string) (net.Listener, error) {
	a.mu.Lock()
	h, ok := a.listeners[name]
	delete(a.listeners, name)
	a.mu.Unlock()
	if ok {
		defer h.f.Close()
		if h.addr == addr {
			ln, err := net.FileListener(h.f)
			if err == nil {
				a.log.WithFields(logrus.Fields{"listener": name, "addr": ln.Addr().String()}).Info("listener taken back from the keeper")
				return ln, nil
			}
			a.log.WithError(err).WithField("listener", name).Warn("kept listener unusable; binding again")
		}
		// The address changed (or the socket is unusable): the keeper lets go of it, as
		// it may hold the port the new address needs.
		if !a.broken.Load() {
			if err := a.send(-1, "U", name); err != nil {
				a.lost(err)
			}
		}
	}
	ln, err := net.Listen("tcp", addr)
	for i := 0; ok && err != nil && errors.Is(err, syscall.EADDRINUSE) && i < 50; i++ {
		time.Sleep(20 * time.Millisecond) // until the keeper has closed its copy
		ln, err = net.Listen("tcp", addr)
	}
	if err != nil {
		return nil, err
	}
	if !a.broken.Load() {
		if err := a.sendConn(ln.(*net.TCPListener), "L", name, addr); err != nil {
			a.lost(err)
		}
	}
	return ln, nil
}

// Kept is a connection handed back by the keeper that can be taken over.
type Kept struct {
	Server string // the name of the server that accepted it (rpc.ServerOptions.Name)
	Conn   net.Conn
	State  rpc.ConnState
	Record rpc.KeptConn
}

// TakeBack returns the connections that can be served again, and closes the others
// (their clients see the connection end and retry, as they would have without a keeper).
// Call it once, after the servers are ready to serve.
func (a *Attachment) TakeBack() (kept []Kept, dropped int) {
	a.mu.Lock()
	conns := a.conns
	a.conns = map[int]*os.File{}
	a.mu.Unlock()
	for slot, f := range conns {
		var server string
		var st rpc.ConnState
		nc, err := net.FileConn(f)
		ok := err == nil
		if ok {
			server, st, ok = a.table.resumable(slot, func() (uint32, error) { return sentBySocket(nc) })
		}
		f.Close()
		if !ok {
			if nc != nil {
				nc.Close()
			}
			// The keeper's copy is the last one: when it lets go the connection ends.
			a.release(slot)
			dropped++
			continue
		}
		kept = append(kept, Kept{Server: server, Conn: nc, State: st, Record: &record{a: a, server: server, slot: slot, nc: nc}})
	}
	return kept, dropped
}

// Keep implements rpc.ConnKeeper.
func (a *Attachment) Keep(server string, nc net.Conn) rpc.KeptConn {
	tc, ok := nc.(*net.TCPConn)
	if !ok || a.broken.Load() || a.table == nil {
		return nil
	}
	a.mu.Lock()
	if a.closed || len(a.free) == 0 {
		a.mu.Unlock()
		return nil
	}
	slot := a.free[len(a.free)-1]
	a.free = a.free[:len(a.free)-1]
	a.mu.Unlock()
	base, err := sentBySocket(tc)
	if err != nil {
		a.mu.Lock()
		a.free = append(a.free, slot)
		a.mu.Unlock()
		return nil
	}
	a.table.reset(slot, base)
	if err := a.sendConn(tc, "C", strconv.Itoa(slot)); err != nil {
		a.lost(err)
		a.mu.Lock()
		a.free = append(a.free, slot)
		a.mu.Unlock()
		return nil
	}
	return &record{a: a, server: server, slot: slot, nc: nc}
}

// release frees a slot: the keeper lets go of its copy and the slot can be used again.
func (a *Attachment) release(slot int) {
	a.table.reset(slot, 0)
	if !a.broken.Load() {
		if err := a.send(-1, "D", strconv.Itoa(slot)); err != nil {
			a.lost(err)
		}
	}
	a.mu.Lock()
	a.free = append(a.free, slot)
	a.mu.Unlock()
}

// send and sendConn talk to the keeper, giving up after a second: a keeper that stopped
// reading must not stall accepts or closes.
func (a *Attachment) send(fd int, fields ...string) error {
	a.uc.SetWriteDeadline(time.Now().Add(time.Second))
	return send(a.uc, fd, fields...)
}

func (a *Attachment) sendConn(sc syscall.Conn, fields ...string) error {
	a.uc.SetWriteDeadline(time.Now().Add(time.Second))
	return sendConn(a.uc, sc, fields...)
}

func (a *Attachment) lost(err error) {
	if a.broken.CompareAndSwap(false, true) {
		a.log.WithError(err).Error("connection keeper lost: connections will not survive a crash of this process")
	}
}

// Close tells the keeper this server stops for good: it closes everything and exits.
// Call it after the servers have shut down.
func (a *Attachment) Close() error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	rest := a.listeners
	a.listeners = nil
	a.mu.Unlock()
	for _, h := range rest {
		h.f.Close()
	}
	// Bye even when the keeper seemed lost: if it is alive it must let the ports go.
	a.broken.Store(true) // nothing is sent after bye
	err := a.send(-1, "bye")
	// The slot table stays mapped: a connection still being served may write to it; the
	// mapping ends with the process.
	a.uc.Close()
	return err
}

// awaitGreeting waits for the keeper to turn to this peer.
func awaitGreeting(uc *net.UnixConn) error {
	f, fd, err := recv(uc)
	if fd >= 0 {
		unix.Close(fd)
	}
	if err != nil {
		return fmt.Errorf("connkeep: no greeting from the keeper (is another server attached to it?): %w", err)
	}
	if f[0] != "K" {
		return fmt.Errorf("connkeep: unexpected greeting %q", f)
	}
	return nil
}

// Release makes a keeper left by an earlier process at path let go of everything (a
// server that no longer keeps connections must be able to bind its ports). No keeper
// is not an error; a keeper serving another live process is.
func Release(path string) error {
	uc, err := dial(path)
	if err != nil {
		return nil
	}
	defer uc.Close()
	if err := sameUser(uc); err != nil {
		return err
	}
	uc.SetDeadline(time.Now().Add(ioTimeout))
	if err := awaitGreeting(uc); err != nil {
		return fmt.Errorf("connkeep: release %s: %w", path, err)
	}
	if err := send(uc, -1, "bye"); err != nil {
		return err
	}
	// Wait for the keeper to let go of the ports: its socket disappears when it exits.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		c, err := dial(path)
		if err != nil {
			return nil
		}
		c.Close()
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("connkeep: the keeper at %s did not exit", path)
}

// record is one kept connection's slot.
type record struct {
	a      *Attachment
	server string
	slot   int
	nc     net.Conn
}

func (r *record) Reader() io.Reader { return &peekReader{r: r} }

func (r *record) Established(st rpc.ConnState) {
	if !r.a.table.establish(r.slot, r.server, st) {
		r.a.log.WithField("user", st.User).Debug("connection state too large to keep")
	}
}

func (r *record) Idle() { atomic.StoreUint32(r.a.table.word(r.slot, offReading), 0) }

func (r *record) CallStarted() { atomic.AddUint32(r.a.table.word(r.slot, offCalls), 1) }

func (r *record) CallAnswered() { atomic.AddUint32(r.a.table.word(r.slot, offCalls), ^uint32(0)) }

func (r *record) Writing(n int, answer bool) { r.a.table.writing(r.slot, n, answer) }

func (r *record) Written(n int, answer bool) { r.a.table.written(r.slot, n, answer) }

// Broken unmarks the slot as established, for good: established is only ever set by the
// handshake.
func (r *record) Broken() { atomic.StoreUint32(r.a.table.word(r.slot, offEstab), 0) }

func (r *record) Closed() { r.a.release(r.slot) }

// peekReader marks the slot as reading before it consumes anything: it waits until the
// socket has input (or EOF) by peeking, which takes nothing, then marks, then reads. A
// process killed at any point leaves either nothing consumed or the mark set.
type peekReader struct {
	r  *record
	rc syscall.RawConn
}

func (p *peekReader) Read(b []byte) (int, error) {
	if p.rc == nil {
		sc, ok := p.r.nc.(syscall.Conn)
		if !ok {
			return 0, errors.New("connkeep: connection has no descriptor")
		}
		rc, err := sc.SyscallConn()
		if err != nil {
			return 0, err
		}
		p.rc = rc
	}
	var one [1]byte
	var perr error
	err := p.rc.Read(func(fd uintptr) bool {
		_, _, e := syscall.Recvfrom(int(fd), one[:], syscall.MSG_PEEK)
		if e == syscall.EAGAIN || e == syscall.EINTR {
			return false
		}
		perr = e
		return true
	})
	if err != nil {
		return 0, err
	}
	if perr != nil {
		return 0, perr
	}
	atomic.StoreUint32(p.r.a.table.word(p.r.slot, offReading), 1)
	return p.r.nc.Read(b)
}

// sentBySocket is how many bytes the kernel has been given to send on a TCP socket, mod
// 2^32: those the peer acknowledged plus those still queued. It counts from the
// connection's start (a slot keeps the figure at accept as its base), whichever process
// wrote them, so it settles whether a dead process's last write went out.
func sentBySocket(nc net.Conn) (uint32, error) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return 0, errors.New("connkeep: connection has no descriptor")
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0, err
	}
	var sum uint32
	var serr error
	if err := rc.Control(func(fd uintptr) { sum, serr = sendCounts(int(fd)) }); err != nil {
		return 0, err
	}
	if serr != nil {
		return 0, fmt.Errorf("connkeep: socket send counts: %w", serr)
	}
	return sum, nil
}

// sendCounts reads acked and queued bytes as one consistent pair: an ACK arriving between
// the two reads moves bytes from one to the other, so the acked count is read on both
// sides and the pair kept only when it did not move.
func sendCounts(fd int) (uint32, error) {
	acked := func() (uint64, error) {
		info, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO)
		if err != nil {
			return 0, err
		}
		return info.Bytes_acked, nil
	}
	for range 100 {
		before, err := acked()
		if err != nil {
			return 0, err
		}
		queued, err := unix.IoctlGetInt(fd, unix.SIOCOUTQ)
		if err != nil {
			return 0, err
		}
		after, err := acked()
		if err != nil {
			return 0, err
		}
		if before == after {
			return uint32(after) + uint32(queued), nil
		}
	}
	return 0, errors.New("acknowledgements kept arriving")
}
