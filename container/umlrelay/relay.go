package umlrelay

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
)

// openTimeout bounds how long an accepted connection waits for the guest's data
// connection.
const openTimeout = 15 * time.Second

// Relay is the host's end for one guest: a loopback listener the guest's agent connects
// to, and a listener at the host for each port the guest listens on. It owns every
// goroutine and connection it starts; Close ends them all.
type Relay struct {
	token string
	ln    net.Listener
	log   logrus.FieldLogger
	// listenAddr is where forwarded ports are listened on at the host ("" is every
	// address, as a process container's wildcard bind).
	listenAddr string

	// done is closed by Close: a connection waiting for the guest's data connection
	// gives up at once.
	done      chan struct{}
	closeOnce sync.Once

	// mu guards the fields below. Lock order: mu is a leaf.
	mu       sync.Mutex
	ctl      net.Conn
	forwards map[int]net.Listener
	pending  map[uint64]chan net.Conn
	nextID   uint64
	closed   bool
	conns    map[net.Conn]bool // every open connection the relay holds, closed with it

	wg sync.WaitGroup
}

// Start opens a relay for one guest, its agent's listener on the host's loopback (which
// a guest reaches as 10.0.2.2 through slirp).
func Start(log logrus.FieldLogger, listenAddr string) (*Relay, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("umlrelay: %w", err)
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		ln.Close()
		return nil, fmt.Errorf("umlrelay: token: %w", err)
	}
	if log == nil {
		l := logrus.New()
		l.SetOutput(io.Discard)
		log = l
	}
	r := &Relay{token: hex.EncodeToString(b), ln: ln, log: log, listenAddr: listenAddr, done: make(chan struct{}),
		forwards: map[int]net.Listener{}, pending: map[uint64]chan net.Conn{}, conns: map[net.Conn]bool{}}
	r.wg.Add(1)
	go r.accept()
	return r, nil
}

// Port is the relay's loopback port, and Token the secret the guest's agent presents.
func (r *Relay) Port() int     { return r.ln.Addr().(*net.TCPAddr).Port }
func (r *Relay) Token() string { return r.token }
func (r *Relay) Forwarded() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ports []int
	for p := range r.forwards {
		ports = append(ports, p)
	}
	return ports
}

// Close stops forwarding and closes every connection the relay holds, then waits for its
// goroutines (every call waits).
func (r *Relay) Close() {
	r.closeOnce.Do(r.shut)
	r.wg.Wait()
}

func (r *Relay) shut() {
	close(r.done)
	r.mu.Lock()
	r.closed = true
	r.ln.Close()
	if r.ctl != nil {
		r.ctl.Close()
	}
	for _, l := range r.forwards {
		l.Close()
	}
	for c := range r.conns {
		c.Close()
	}
	r.mu.Unlock()
}

// track records an open connection, to be closed with the relay; false when the relay is
// closed already (the connection is then closed).
func (r *Relay) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		c.Close()
		return false
	}
	r.conns[c] = true
	return true
}

func (r *Relay) untrack(c net.Conn) {
	r.mu.Lock()
	delete(r.conns, c)
	r.mu.Unlock()
}

// accept serves the agent's connections: one control connection, then data connections.
func (r *Relay) accept() {
	defer r.wg.Done()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.serveAgent(c)
		}()
	}
}

func (r *Relay) serveAgent(c net.Conn) {
	if !r.track(c) {
		return
	}
	handedOn := false
	defer func() {
		if !handedOn {
			r.untrack(c)
		}
	}()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := readLine(c)
	c.SetReadDeadline(time.Time{})
	m, perr := parseMessage(line)
	if err != nil || perr != nil || (m.verb != "CTL" && m.verb != "DATA") || m.token != r.token {
		c.Close()
		return
	}
	if m.verb == "DATA" {
		r.mu.Lock()
		defer r.mu.Unlock()
		ch, ok := r.pending[m.id]
		delete(r.pending, m.id)
		if !ok {
			c.Close()
			return
		}
		// Under mu, so a waiter that gives up (deleting its entry under mu first) never
		// leaves it in the channel; buffered, so this never blocks. The waiter owns it
		// now, still tracked.
		ch <- c
		handedOn = true
		return
	}
	r.mu.Lock()
	if r.closed || r.ctl != nil {
		r.mu.Unlock()
		c.Close()
		return
	}
	r.ctl = c
	r.mu.Unlock()
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, maxLine), maxLine)
	for sc.Scan() {
		m, err := parseMessage(sc.Text())
		if err != nil {
			r.log.WithError(err).Warn("UML relay: the guest's agent sent a bad line; relay stopped")
			break
		}
		switch m.verb {
		case "LISTEN":
			r.forward(m.port)
		case "CLOSE":
			r.mu.Lock()
			if l, ok := r.forwards[m.port]; ok {
				l.Close()
				delete(r.forwards, m.port)
			}
			r.mu.Unlock()
		}
	}
	c.Close()
}

// forward listens at the host on a port the guest listens on.
func (r *Relay) forward(port int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.forwards[port] != nil {
		return
	}
	l, err := net.Listen("tcp", net.JoinHostPort(r.listenAddr, strconv.Itoa(port)))
	if err != nil {
		r.log.WithError(err).WithField("port", port).Warn("UML relay: a port the guest listens on is taken on the host: unreachable from outside the guest")
		return
	}
	r.forwards[port] = l
	r.log.WithField("port", port).Debug("UML relay: forwarding a port the guest listens on")
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			r.wg.Add(1)
			go func() {
				defer r.wg.Done()
				r.relay(c, port)
			}()
		}
	}()
}

// relay joins a connection accepted at the host with one the agent opens to the guest's
// service.
func (r *Relay) relay(c net.Conn, port int) {
	ch := make(chan net.Conn, 1)
	r.mu.Lock()
	if r.closed || r.ctl == nil {
		r.mu.Unlock()
		c.Close()
		return
	}
	r.nextID++
	id := r.nextID
	r.pending[id] = ch
	ctl := r.ctl
	r.conns[c] = true
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.pending, id)
		delete(r.conns, c)
		r.mu.Unlock()
		c.Close()
		// A data connection handed on as this gave up (none can come after the delete).
		select {
		case late := <-ch:
			r.untrack(late)
			late.Close()
		default:
		}
	}()
	if _, err := fmt.Fprintf(ctl, "%s\n", message{verb: "OPEN", id: id, port: port}); err != nil {
		return
	}
	timer := time.NewTimer(openTimeout)
	defer timer.Stop()
	var g net.Conn
	select {
	case g = <-ch:
	case <-r.done:
		return
	case <-timer.C:
		r.log.WithField("port", port).Warn("UML relay: the guest's agent did not open a connection to its service in time")
		return
	}
	defer func() {
		r.untrack(g)
		g.Close()
	}()
	join(c, g)
}

// join copies both ways until both directions end, passing each end's close on as a
// half-close.
func join(a, b net.Conn) {
	var wg sync.WaitGroup
	half := func(dst, src net.Conn) {
		defer wg.Done()
		io.Copy(dst, src)
		if tc, ok := dst.(interface{ CloseWrite() error }); ok {
			tc.CloseWrite()
		} else {
			dst.Close()
		}
	}
	wg.Add(2)
	go half(a, b)
	go half(b, a)
	wg.Wait()
}
