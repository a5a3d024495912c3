package umlrelay

import (
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/internal/testutil"
)

// A service the "guest" listens on (here: a port the agent reports, served by a test
// server elsewhere) is reached at the host on the same port, both ways and repeatedly,
// and stops being reached when the guest stops listening.
func TestRelayForwardsWhatTheGuestListensOn(t *testing.T) {
	svc, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	go func() {
		for {
			c, err := svc.Accept()
			if err != nil {
				return
			}
			go func() { // echo, upper-cased
				b, _ := io.ReadAll(c)
				c.Write([]byte(strings.ToUpper(string(b))))
				c.Close()
			}()
		}
	}()
	port := testutil.FreePort(t)
	r, err := Start(nil, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var mu sync.Mutex
	listening := map[int]bool{port: true}
	g := &Guest{Relay: net.JoinHostPort("127.0.0.1", strconv.Itoa(r.Port())), Token: r.Token(), Poll: 10 * time.Millisecond,
		Listening: func() (map[int]bool, error) {
			mu.Lock()
			defer mu.Unlock()
			out := map[int]bool{}
			for p := range listening {
				out[p] = true
			}
			return out, nil
		},
		Dial: func(ctx context.Context, p int) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", svc.Addr().String())
		}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	defer func() { cancel(); <-done }()
	testutil.Eventually(t, 5*time.Second, "the port is not forwarded", func() bool { return len(r.Forwarded()) == 1 })
	for i := 0; i < 3; i++ {
		c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte("hello guest"))
		c.(*net.TCPConn).CloseWrite()
		b, err := io.ReadAll(c)
		c.Close()
		if err != nil || string(b) != "HELLO GUEST" {
			t.Fatalf("through the relay: %q %v", b, err)
		}
	}
	mu.Lock()
	delete(listening, port)
	mu.Unlock()
	testutil.Eventually(t, 5*time.Second, "the port is still forwarded", func() bool { return len(r.Forwarded()) == 0 })
	if c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err == nil {
		c.Close()
		t.Error("the port still accepts connections after the guest stopped listening")
	}
}

// A connection to the relay without the guest's token is dropped, and forwards nothing.
func TestRelayRefusesAWrongToken(t *testing.T) {
	r, err := Start(nil, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(r.Port())))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("CTL not-the-token\nLISTEN 45678\n"))
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("the relay kept a connection with a wrong token")
	}
	if len(r.Forwarded()) != 0 {
		t.Fatalf("forwarded %v for a stranger", r.Forwarded())
	}
}

func TestParseProcNetTCP(t *testing.T) {
	const tcp = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 1 1 0000000000000000 100 0 0 10 0
   1: 1002000A:B4A2 0202000A:1F93 01 00000000:00000000 00:00000000 00000000  1000        0 2 1 0000000000000000 20 4 30 10 -1
   2: 0100007F:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 3 1 0000000000000000 100 0 0 10 0
`
	got := parseProcNetTCP(tcp)
	if len(got) != 2 || !got[8080] || !got[80] {
		t.Fatalf("listening ports %v, want 8080 and 80", got)
	}
	const tcp6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:B6FF 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4 1 0000000000000000 100 0 0 10 0
`
	if got := parseProcNetTCP(tcp6); len(got) != 1 || !got[0xB6FF] {
		t.Fatalf("tcp6 listening ports %v", got)
	}
}

func FuzzParseMessage(f *testing.F) {
	for _, s := range []string{"CTL abc", "DATA abc 7", "LISTEN 8080", "CLOSE 1", "OPEN 3 65535", "OPEN 3 0", "LISTEN -1", "", "DATA x y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := parseMessage(s)
		if err != nil {
			return
		}
		// What parses is printed back as a line that parses to the same message.
		again, err := parseMessage(m.String())
		if err != nil || again != m {
			t.Fatalf("%q parsed as %+v, printed %q, parsed again as %+v (%v)", s, m, m.String(), again, err)
		}
	})
}

// startPair runs a relay and an agent whose guest listens on one free port, dialled by
// dial; it returns the port and the relay.
func startPair(t *testing.T, dial func(ctx context.Context, port int) (net.Conn, error)) (int, *Relay) {
	t.Helper()
	port := testutil.FreePort(t)
	r, err := Start(nil, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	g := &Guest{Relay: net.JoinHostPort("127.0.0.1", strconv.Itoa(r.Port())), Token: r.Token(), Poll: 10 * time.Millisecond,
		Listening: func() (map[int]bool, error) { return map[int]bool{port: true}, nil }, Dial: dial}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	t.Cleanup(func() { cancel(); r.Close(); <-done })
	testutil.Eventually(t, 5*time.Second, "the port is not forwarded", func() bool { return len(r.Forwarded()) == 1 })
	return port, r
}

// A connection to a port whose service the agent cannot reach is closed at once, not
// after the relay's wait for a data connection.
func TestRelayClosesWhatTheGuestCannotServe(t *testing.T) {
	port, _ := startPair(t, func(ctx context.Context, port int) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Err: io.ErrClosedPipe}
	})
	c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(openTimeout / 3))
	if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("read %d, %v: want the connection closed at once", n, err)
	}
}

// Closing the relay while a connection waits for the guest's data connection ends the
// wait at once.
func TestRelayCloseEndsAWait(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	port, r := startPair(t, func(ctx context.Context, port int) (net.Conn, error) {
		select {
		case <-block:
		case <-ctx.Done():
		}
		return nil, ctx.Err()
	})
	c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	testutil.Eventually(t, 5*time.Second, "the relay has not asked the agent", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return len(r.pending) == 1
	})
	closed := make(chan struct{})
	go func() { r.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(openTimeout / 3):
		t.Fatal("Close waited for the guest's data connection")
	}
}
