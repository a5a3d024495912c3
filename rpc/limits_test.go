package rpc

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	commonpb "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
)

// A peer that has not authenticated cannot make the server hold more than
// PreAuthMaxFrame: a 60 MiB frame announced on eight connections at once is refused
// from its length alone, before anything is allocated, and the server serves on.
func TestUnauthenticatedFrameRefusedBeforeAllocation(t *testing.T) {
	s := startServer(t, ServerOptions{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := dialRaw(t, s)
			head := append(Preamble{Version: 9, Auth: AuthSASL}.Bytes(), binary.BigEndian.AppendUint32(nil, 60<<20)...)
			r.send(append(head, make([]byte, 4096)...))
			h := r.expectFatalThenClose(commonpb.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER)
			if !strings.Contains(h.GetErrorMsg(), "before the connection is established") {
				t.Errorf("message %q", h.GetErrorMsg())
			}
		}()
	}
	wg.Wait()
	if n := s.opts.ReadBudget.InUse(); n != 0 {
		t.Fatalf("%d bytes held after the refusals", n)
	}
	if _, err := echo(t, newTestClient(t, s, ClientOptions{}), "after"); err != nil {
		t.Fatal(err)
	}
}

// The request bytes held across connections stay within the read budget: six callers
// each send a 1.5 MiB call to a handler that holds it; with a 2 MiB budget one call is
// read and held, the others wait with their bytes in the kernel, and each is read and
// answered once the one before is done.
func TestReadBudgetBoundsRequestMemory(t *testing.T) {
	const limit = 2 << 20
	release := make(chan struct{})
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	var held atomic.Int32
	s := NewServer(ServerOptions{MaxDataLength: 8 << 20, ReadBudget: NewReadBudget(limit), Logger: testutil.QuietLogger()})
	p := echoProtocol()
	p.Methods["hold"] = Unary(func(ctx context.Context, r *echoReq) (*echoResp, error) {
		held.Add(1)
		defer held.Add(-1)
		<-release
		return &echoResp{}, nil
	})
	s.Register(p)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	defer s.Shutdown(context.Background())
	defer free() // before the shutdown, which waits for the held calls
	for s.Addr() == nil {
		time.Sleep(time.Millisecond)
	}
	big := strings.Repeat("x", 3<<19) // 1.5 MiB
	errs := make(chan error, 6)
	for range 6 {
		c := newTestClient(t, s, ClientOptions{MaxDataLength: 8 << 20})
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			errs <- c.Call(ctx, "hold", &echoReq{QueueName: proto.String(big)}, &echoResp{})
		}()
	}
	testutil.Eventually(t, 10*time.Second, "one call held, with its bytes", func() bool {
		n := s.opts.ReadBudget.InUse()
		return held.Load() == 1 && n > int64(len(big)) && n < int64(len(big))+1024 // the call's headers and its string
	})
	// Room for the readers that wait to take what is left, were they not bounded.
	for range 20 {
		if n := s.opts.ReadBudget.InUse(); n > limit || held.Load() != 1 {
			t.Fatalf("%d bytes held (budget %d), %d calls held", n, limit, held.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	free()
	for range 6 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	testutil.Eventually(t, 5*time.Second, "the budget given back", func() bool { return s.opts.ReadBudget.InUse() == 0 })
}

// established opens a connection and finishes a SIMPLE handshake on it.
func established(t *testing.T, s *Server) *rawConn {
	r := dialRaw(t, s)
	r.nc.SetDeadline(time.Time{})
	r.send(Preamble{Version: 9}.Bytes())
	r.frame(hdr(CallIDConnectionContext), &commonpb.IpcConnectionContextProto{UserInfo: &commonpb.UserInformationProto{EffectiveUser: proto.String("idle")},
		Protocol: proto.String(testProtocol)})
	return r
}

// closedByServer reports whether the server closed r (a read returns EOF at once).
func closedByServer(r *rawConn) bool {
	r.nc.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err := r.nc.Read(make([]byte, 1))
	return err == io.EOF
}

// Idle connections are closed as Java's ConnectionManager closes them: only above
// ipc.client.idlethreshold, at most ipc.client.kill.max per scan, those with no call in
// progress that sent nothing for ipc.client.connection.maxidletime. A connection that
// never finishes its handshake is closed after that time whatever the count.
func TestIdleConnectionsAreClosed(t *testing.T) {
	s := startServer(t, ServerOptions{Idle: IdleSettings{MaxIdle: 300 * time.Millisecond, Threshold: 4, KillMax: 2, ScanInterval: time.Millisecond}})
	silent := dialRaw(t, s)
	silent.nc.SetDeadline(time.Time{})
	testutil.Eventually(t, 5*time.Second, "a connection without a handshake closed", func() bool { return closedByServer(silent) })

	var conns []*rawConn
	for range 8 {
		conns = append(conns, established(t, s))
	}
	testutil.Eventually(t, 5*time.Second, "eight connections", func() bool { return s.connCount() == 8 })
	open := func() int {
		n := 0
		for _, r := range conns {
			if !closedByServer(r) {
				n++
			}
		}
		return n
	}
	// The scan's rules, an hour on: two per scan, and none at or below the threshold.
	later := time.Now().Add(time.Hour)
	s.closeIdle(later)
	testutil.Eventually(t, 5*time.Second, "two closed by one scan", func() bool { return s.connCount() == 6 })
	s.closeIdle(later)
	testutil.Eventually(t, 5*time.Second, "two more closed", func() bool { return s.connCount() == 4 })
	s.closeIdle(later)
	if n := open(); n != 4 {
		t.Fatalf("%d connections open after a scan at the threshold, want 4", n)
	}
	// A connection's arrival makes the server scan: idle ones go without being asked.
	testutil.Eventually(t, 10*time.Second, "idle connections closed as new ones arrive", func() bool {
		established(t, s)
		return open() < 4
	})
	// A client with calls goes on being served.
	if _, err := echo(t, newTestClient(t, s, ClientOptions{}), "still"); err != nil {
		t.Fatal(err)
	}
}

// Unauthenticated peers cannot spend the budget authenticated callers need: frames
// announced before a connection is established are charged as their bytes arrive, to a
// budget of their own. Announcing frames costs nothing, and once unauthenticated bytes
// fill PreAuthBudget, further ones are refused rather than waited for, while calls on
// established connections go on.
func TestUnauthenticatedPeersCannotStallCalls(t *testing.T) {
	s := startServer(t, ServerOptions{ReadBudget: NewReadBudget(4 << 20)})
	head := append(Preamble{Version: 9, Auth: AuthSASL}.Bytes(), binary.BigEndian.AppendUint32(nil, PreAuthMaxFrame)...)
	for range 8 { // 8 MiB announced, none of it sent
		r := dialRaw(t, s)
		r.nc.SetDeadline(time.Time{})
		r.send(head)
	}
	c := newTestClient(t, s, ClientOptions{})
	if _, err := echo(t, c, "not stalled"); err != nil {
		t.Fatal(err)
	}
	// Unauthenticated bytes actually sent, up to the pre-auth budget and past it.
	body := make([]byte, PreAuthMaxFrame-1)
	var senders []*rawConn
	for range PreAuthBudget / PreAuthMaxFrame {
		r := dialRaw(t, s)
		r.nc.SetDeadline(time.Time{})
		r.send(head)
		r.send(body)
		senders = append(senders, r)
	}
	testutil.Eventually(t, 5*time.Second, "the pre-auth budget spent", func() bool { return s.preAuth.InUse() == PreAuthBudget })
	late := dialRaw(t, s)
	late.send(head)
	late.send(body[:1000])
	h := late.expectFatalThenClose(commonpb.RpcResponseHeaderProto_FATAL_UNKNOWN)
	if !strings.Contains(h.GetErrorMsg(), "Server too busy") {
		t.Fatalf("refusal %q", h.GetErrorMsg())
	}
	if _, err := echo(t, c, "still served"); err != nil {
		t.Fatal(err)
	}
	// The echo's own call is charged while the server handles it and given back just
	// after its answer leaves: wait for that, then nothing may be left.
	testutil.Eventually(t, 5*time.Second, "unauthenticated bytes took none of the read budget", func() bool { return s.opts.ReadBudget.InUse() == 0 })
	for _, r := range senders {
		r.nc.Close()
	}
	testutil.Eventually(t, 5*time.Second, "the pre-auth budget given back", func() bool { return s.preAuth.InUse() == 0 })
}
