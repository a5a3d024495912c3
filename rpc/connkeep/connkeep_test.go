package connkeep

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/rpc/token"
)

// The tests run real processes: the test binary re-executes itself as a keeper and as a
// server, and kills servers with SIGKILL.
const modeEnv = "BOBBIN_CONNKEEP_TEST"

func TestMain(m *testing.M) {
	switch os.Getenv(modeEnv) {
	case "keeper":
		linger, _ := time.ParseDuration(os.Getenv("LINGER"))
		if err := RunKeeper(os.Getenv("NAME"), linger, testutil.QuietLogger()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case "server":
		os.Exit(serverMain())
	case "squatter":
		os.Exit(squatterMain())
	}
	os.Exit(m.Run())
}

const echoProtocol = "org.bobbin.test.EchoPB"

type secrets struct{}

func (secrets) TokenKind() string { return "TEST_TOKEN" }
func (secrets) RetrievePassword(id []byte) ([]byte, string, error) {
	return token.Password([]byte("k"), id), string(id), nil
}

// serverMain serves echo ("<user>/<auth>/<pid>/<text>") and sleep on a kept listener.
func serverMain() int {
	name := os.Getenv("NAME")
	att, err := Attach(Options{Path: name, Logger: testutil.QuietLogger(), Spawn: func(string) error {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), modeEnv+"=keeper")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		return cmd.Start()
	}})
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	s := rpc.NewServer(rpc.ServerOptions{Name: "Echo", SecretManager: secrets{}, Logger: testutil.QuietLogger()})
	s.Register(&rpc.Protocol{Name: echoProtocol, Version: 1, Methods: map[string]rpc.Method{
		"echo": rpc.Unary(func(ctx context.Context, r *yarnpb.GetQueueInfoRequestProto) (*yarnpb.GetQueueInfoResponseProto, error) {
			c, _ := rpc.CallerFrom(ctx)
			return &yarnpb.GetQueueInfoResponseProto{QueueInfo: &yarnpb.QueueInfoProto{QueueName: proto.String(
				fmt.Sprintf("%s/%s/%d/%s", c.User, c.Auth, os.Getpid(), r.GetQueueName()))}}, nil
		}),
		"sleep": rpc.Unary(func(ctx context.Context, r *yarnpb.GetQueueInfoRequestProto) (*yarnpb.GetQueueInfoResponseProto, error) {
			fmt.Println("sleeping") // the test waits for this line: the call is running
			time.Sleep(time.Minute)
			return &yarnpb.GetQueueInfoResponseProto{}, nil
		}),
	}})
	var keeper rpc.ConnKeeper = att
	if at := os.Getenv("DIE"); at != "" {
		keeper = dyingKeeper{att, at}
	}
	s.SetKeeper(keeper)
	ln, err := att.Listen("ipc", "127.0.0.1:0")
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	go s.Serve(ln)
	kept, dropped := att.TakeBack()
	for _, k := range kept {
		if err := s.Adopt(k.Conn, k.State, k.Record); err != nil {
			fmt.Println("error", err)
			return 1
		}
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	fmt.Printf("ready %s %d %d\n", ln.Addr(), len(kept), dropped)
	<-sigs
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.Shutdown(ctx)
	att.Close()
	return 0
}

// dyingKeeper SIGKILLs its process at a chosen point of the first answer's write: "written"
// (the client has the answer; the record does not count it yet) or "writing" (nothing is
// out). It is how the tests hit the window a real kill hits by chance.
type dyingKeeper struct {
	*Attachment
	at string
}

func (k dyingKeeper) Keep(server string, nc net.Conn) rpc.KeptConn {
	if kc := k.Attachment.Keep(server, nc); kc != nil {
		return dyingRecord{kc, k.at}
	}
	return nil
}

type dyingRecord struct {
	rpc.KeptConn
	at string
}

func (r dyingRecord) Writing(n int, answer bool) {
	r.KeptConn.Writing(n, answer)
	if answer && r.at == "writing" {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
}

func (r dyingRecord) Written(n int, answer bool) {
	if answer && r.at == "written" {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	r.KeptConn.Written(n, answer)
}

type server struct {
	cmd              *exec.Cmd
	out              *bufio.Reader // the server's stdout after its ready line
	addr             string
	adopted, dropped int
}

// await waits until the server prints line (within 10 s).
func (s *server) await(t *testing.T, line string) {
	t.Helper()
	got := make(chan error, 1)
	go func() { // ends with the server's stdout
		for {
			l, err := s.out.ReadString('\n')
			if err != nil {
				got <- err
				return
			}
			if strings.TrimSpace(l) == line {
				got <- nil
				return
			}
		}
	}()
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("server ended before it printed %q: %v", line, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("server did not print %q in 10 s", line)
	}
}

func startServer(t *testing.T, name string, linger time.Duration, env ...string) *server {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(append(os.Environ(), modeEnv+"=server", "NAME="+name, "LINGER="+linger.String()), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	br := bufio.NewReader(out)
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatalf("server: %v", err)
	}
	s := &server{cmd: cmd, out: br}
	if _, err := fmt.Sscanf(line, "ready %s %d %d", &s.addr, &s.adopted, &s.dropped); err != nil {
		t.Fatalf("server said %q", line)
	}
	return s
}

func (s *server) kill(t *testing.T) {
	t.Helper()
	s.cmd.Process.Signal(syscall.SIGKILL)
	s.cmd.Wait()
}

// keeperName is a keeper socket in a private directory of the test's.
func keeperName(t *testing.T) string {
	name := filepath.Join(t.TempDir(), "keeper", "keeper.sock")
	t.Cleanup(func() {
		if err := Release(name); err != nil {
			t.Error(err)
		}
	})
	return name
}

// client is an RPC client that counts the connections it makes.
func client(addr string, tok *token.Token, w *testutil.Wire) *rpc.Client {
	return rpc.NewClient(rpc.ClientOptions{Addr: addr, Protocol: echoProtocol, User: "alice", Token: tok, ConnectRetries: -1,
		Logger: testutil.QuietLogger(), Dial: w.Dial})
}

func echo(c *rpc.Client, text string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	resp := &yarnpb.GetQueueInfoResponseProto{}
	err := c.Call(ctx, "echo", &yarnpb.GetQueueInfoRequestProto{QueueName: proto.String(text)}, resp)
	return resp.GetQueueInfo().GetQueueName(), err
}

// A SIGKILLed server's clients keep their connections: a call sent while no server runs
// is answered by the next one, on the same connection, SIMPLE and TOKEN alike.
func TestConnectionsSurviveKill(t *testing.T) {
	name := keeperName(t)
	s1 := startServer(t, name, time.Minute)
	var simpleWire, tokenWire testutil.Wire
	simple := client(s1.addr, nil, &simpleWire)
	defer simple.Close()
	withToken := client(s1.addr, &token.Token{Identifier: []byte("bob"), Password: token.Password([]byte("k"), []byte("bob")), Kind: "TEST_TOKEN"}, &tokenWire)
	defer withToken.Close()
	for _, c := range []*rpc.Client{simple, withToken} {
		if _, err := echo(c, "before", 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	// A server that would release the keeper while another is attached is refused, and
	// what it sent is never acted on (the keeper still keeps after s1's death).
	if err := Release(name); err == nil {
		t.Fatal("Release of a keeper serving a live server succeeded")
	}
	s1.kill(t)

	// Calls made while no server runs wait in the socket.
	type answer struct {
		text string
		err  error
	}
	answers := make(chan answer, 2)
	simpleBefore, tokenBefore := simpleWire.Writes.Load(), tokenWire.Writes.Load()
	for _, c := range []*rpc.Client{simple, withToken} {
		go func() {
			text, err := echo(c, "during", 20*time.Second)
			answers <- answer{text, err}
		}()
	}
	// Both calls are in the dead server's socket before the next server starts.
	testutil.Eventually(t, 10*time.Second, "both calls written while no server runs", func() bool {
		return simpleWire.Writes.Load() > simpleBefore && tokenWire.Writes.Load() > tokenBefore
	})
	restarted := time.Now()
	s2 := startServer(t, name, time.Minute)
	if s2.addr != s1.addr || s2.adopted != 2 || s2.dropped != 0 {
		t.Fatalf("second server: addr %s (first %s), took over %d, dropped %d; want the same address and 2, 0", s2.addr, s1.addr, s2.adopted, s2.dropped)
	}
	want := map[string]bool{fmt.Sprintf("alice/SIMPLE/%d/during", s2.cmd.Process.Pid): true, fmt.Sprintf("bob/TOKEN/%d/during", s2.cmd.Process.Pid): true}
	for range 2 {
		a := <-answers
		if a.err != nil || !want[a.text] {
			t.Fatalf("call made while the server was dead: %q, %v; want one of %v", a.text, a.err, want)
		}
		delete(want, a.text)
	}
	t.Logf("answered %v after the new server started", time.Since(restarted))
	if simpleWire.Dials.Load() != 1 || tokenWire.Dials.Load() != 1 {
		t.Fatalf("clients dialled %d and %d times; the connections should have survived", simpleWire.Dials.Load(), tokenWire.Dials.Load())
	}
	// A new client connects to the same listener.
	var w testutil.Wire
	fresh := client(s1.addr, nil, &w)
	defer fresh.Close()
	if _, err := echo(fresh, "new", 5*time.Second); err != nil {
		t.Fatal(err)
	}
}

// A connection the dead server was answering cannot be taken over: it is closed, so its
// client sees the loss at once (no hang) and reconnects.
func TestBusyConnectionIsClosed(t *testing.T) {
	name := keeperName(t)
	s1 := startServer(t, name, time.Minute)
	var w testutil.Wire
	c := client(s1.addr, nil, &w)
	defer c.Close()
	if _, err := echo(c, "x", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		errc <- c.Call(ctx, "sleep", &yarnpb.GetQueueInfoRequestProto{}, &yarnpb.GetQueueInfoResponseProto{})
	}()
	s1.await(t, "sleeping")
	s1.kill(t)
	s2 := startServer(t, name, time.Minute)
	if s2.adopted != 0 || s2.dropped != 1 {
		t.Fatalf("took over %d, dropped %d; want 0, 1", s2.adopted, s2.dropped)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, rpc.ErrConnLost) {
			t.Fatalf("the interrupted call ended with %v; want the connection lost", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the interrupted call hangs")
	}
	text, err := echo(c, "again", 5*time.Second)
	if err != nil || !strings.HasSuffix(text, "/again") || w.Dials.Load() != 2 {
		t.Fatalf("after reconnecting: %q, %v, %d dials", text, err, w.Dials.Load())
	}
}

// A server killed after writing an answer and before counting it: the client has its
// answer, and the next server sees from the socket's own send count that the answer went
// out, so it takes the connection over. Killed before the answer went out, the call is
// lost: the connection is closed, and the client reconnects.
func TestKillAroundAnAnswer(t *testing.T) {
	for _, tc := range []struct {
		at      string
		resumed bool
	}{{"written", true}, {"writing", false}} {
		t.Run(tc.at, func(t *testing.T) {
			name := keeperName(t)
			s1 := startServer(t, name, time.Minute, "DIE="+tc.at)
			var w testutil.Wire
			c := client(s1.addr, nil, &w)
			defer c.Close()
			first := make(chan error, 1)
			go func() {
				_, err := echo(c, "first", 20*time.Second)
				first <- err
			}()
			s1.cmd.Wait() // it kills itself at the answer
			if tc.resumed {
				if err := <-first; err != nil {
					t.Fatalf("the answer written before the kill: %v", err)
				}
			}
			s2 := startServer(t, name, time.Minute)
			if !tc.resumed {
				if s2.adopted != 0 || s2.dropped != 1 {
					t.Fatalf("took over %d, dropped %d; want 0, 1", s2.adopted, s2.dropped)
				}
				if err := <-first; !errors.Is(err, rpc.ErrConnLost) {
					t.Fatalf("the call whose answer never went out: %v; want the connection lost", err)
				}
				return
			}
			if s2.adopted != 1 || s2.dropped != 0 {
				t.Fatalf("took over %d, dropped %d; want 1, 0", s2.adopted, s2.dropped)
			}
			text, err := echo(c, "second", 5*time.Second)
			if err != nil || text != fmt.Sprintf("alice/SIMPLE/%d/second", s2.cmd.Process.Pid) || w.Dials.Load() != 1 {
				t.Fatalf("after the takeover: %q, %v, %d dials; want the new server's answer on the same connection", text, err, w.Dials.Load())
			}
		})
	}
}

// Without a server coming back the keeper lets go after its linger time, and a server
// that stops cleanly frees its port at once.
func TestLingerAndCleanStop(t *testing.T) {
	name := keeperName(t)
	s1 := startServer(t, name, 500*time.Millisecond)
	var w testutil.Wire
	c := client(s1.addr, nil, &w)
	defer c.Close()
	if _, err := echo(c, "x", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	s1.kill(t)
	start := time.Now()
	if _, err := echo(c, "y", 10*time.Second); !errors.Is(err, rpc.ErrConnLost) {
		t.Fatalf("with no server back: %v; want the connection lost after the linger time", err)
	}
	if d := time.Since(start); d < 300*time.Millisecond || d > 5*time.Second {
		t.Fatalf("connection ended after %v; linger is 500ms", d)
	}
	// The keeper exited: a new server binds afresh, and on SIGTERM lets the port go.
	s2 := startServer(t, name, time.Minute)
	s2.cmd.Process.Signal(syscall.SIGTERM)
	if err := s2.cmd.Wait(); err != nil {
		t.Fatalf("clean stop: %v", err)
	}
	testutil.Eventually(t, 5*time.Second, "port still held after a clean stop", func() bool {
		ln, err := net.Listen("tcp", s2.addr)
		if err == nil {
			ln.Close()
		}
		return err == nil
	})
}

func TestStateRoundTrip(t *testing.T) {
	st := rpc.ConnState{SASL: true, Auth: rpc.AuthToken, User: "u", RealUser: "r", TokenKind: "YARN_AM_RM_TOKEN", TokenID: []byte{0, 1, 2}, Protocol: "p"}
	server, got, err := decodeState(encodeState("Sched", st))
	if err != nil || server != "Sched" || got.User != "u" || string(got.TokenID) != "\x00\x01\x02" || !got.SASL || got.Auth != rpc.AuthToken || got.Protocol != "p" || got.RealUser != "r" || got.TokenKind != st.TokenKind {
		t.Fatalf("round trip: %q %+v %v", server, got, err)
	}
	for i := range len(encodeState("Sched", st)) {
		if _, _, err := decodeState(encodeState("Sched", st)[:i]); err == nil {
			t.Fatalf("a state cut at %d bytes decoded", i)
		}
	}
}

// squatterMain binds a keeper socket at $NAME (as whatever user it runs as), says what
// happened, and waits to be killed.
func squatterMain() int {
	os.MkdirAll(filepath.Dir(os.Getenv("NAME")), 0o777)
	ln, err := net.ListenUnix("unixpacket", sockAddr(os.Getenv("NAME")))
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	defer ln.Close()
	os.Chmod(os.Getenv("NAME"), 0o777)
	fmt.Println("listening")
	for {
		c, err := ln.AcceptUnix()
		if err != nil {
			return 1
		}
		send(c, -1, "K") // greets like a keeper, then says nothing more
	}
}

// A same-user peer that connects to the keeper and says nothing is dropped after
// ioTimeout: a restarted server still attaches and takes its connections back, and a
// keeper whose server is gone still exits once its linger is over.
func TestSilentPeerDoesNotHoldTheKeeper(t *testing.T) {
	name := keeperName(t)
	s1 := startServer(t, name, time.Minute)
	var w testutil.Wire
	c := client(s1.addr, nil, &w)
	defer c.Close()
	if _, err := echo(c, "before", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	s1.kill(t)
	silent, err := net.DialUnix("unixpacket", nil, sockAddr(name))
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	s2 := startServer(t, name, time.Minute)
	if s2.adopted != 1 {
		t.Fatalf("the restarted server adopted %d connections, want 1", s2.adopted)
	}
	if got, err := echo(c, "after", 5*time.Second); err != nil || !strings.HasSuffix(got, "/after") || w.Dials.Load() != 1 {
		t.Fatalf("after the restart: %q %v, %d dials", got, err, w.Dials.Load())
	}

	name2 := keeperName(t)
	s3 := startServer(t, name2, 300*time.Millisecond)
	s3.kill(t)
	quiet, err := net.DialUnix("unixpacket", nil, sockAddr(name2))
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Close()
	start := time.Now()
	for {
		probe, err := net.DialUnix("unixpacket", nil, sockAddr(name2))
		if err != nil {
			break // the keeper exited
		}
		probe.Close()
		if time.Since(start) > 3*ioTimeout {
			t.Fatalf("the keeper still runs %v after its server died (linger 300ms) with a silent peer connected", time.Since(start))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Another user can neither take the keeper's socket (its directory is the server's
// user's alone) nor pass for a keeper: a directory it made is refused before any socket
// in it is used, and a keeper socket it serves is refused by its peer's credentials.
func TestForeignUserCannotStandInForTheKeeper(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running a process as another user needs root")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("no user nobody: %v", err)
	}
	uid, _ := strconv.Atoi(nobody.Uid)
	gid, _ := strconv.Atoi(nobody.Gid)
	// A world-writable, sticky parent, as /tmp is.
	shared := t.TempDir()
	os.Chmod(shared, 0o777|os.ModeSticky)
	for d := filepath.Dir(shared); d != os.TempDir() && d != "/"; d = filepath.Dir(d) { // never $TMPDIR itself
		os.Chmod(d, 0o755)
	}
	// The test binary, where the other user may run it.
	exe := filepath.Join(shared, "squatter")
	if b, err := os.ReadFile(os.Args[0]); err != nil || os.WriteFile(exe, b, 0o755) != nil {
		t.Fatalf("copy the test binary: %v", err)
	}
	squat := func(path string) (string, *exec.Cmd) {
		t.Helper()
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), modeEnv+"=squatter", "NAME="+path)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		line, _ := bufio.NewReader(out).ReadString('\n')
		return line, cmd
	}

	mine := filepath.Join(shared, "mine", "rm.sock")
	if err := PrivateDir(filepath.Dir(mine)); err != nil {
		t.Fatal(err)
	}
	if line, _ := squat(mine); !strings.Contains(line, "permission denied") {
		t.Fatalf("another user binding in the private dir: %q", line)
	}

	theirs := filepath.Join(shared, "theirs", "rm.sock")
	if line, _ := squat(theirs); !strings.HasPrefix(line, "listening") {
		t.Fatalf("squatter: %q", line)
	}
	if _, err := SocketPath(filepath.Dir(theirs), "rm.sock"); err == nil || !strings.Contains(err.Error(), "owned by uid "+nobody.Uid) {
		t.Fatalf("SocketPath in the squatter's dir: %v", err)
	}
	if _, err := Attach(Options{Path: theirs}); err == nil || !strings.Contains(err.Error(), "runs as uid "+nobody.Uid) {
		t.Fatalf("Attach to the squatter's socket: %v", err)
	}
	if err := Release(theirs); err == nil || !strings.Contains(err.Error(), "runs as uid "+nobody.Uid) {
		t.Fatalf("Release of the squatter's socket: %v", err)
	}
}

// A socket path longer than a unix socket address holds (a long hadoop.tmp.dir) is bound
// and reached through its directory's descriptor: connections still survive a kill.
func TestLongSocketPath(t *testing.T) {
	dir := t.TempDir()
	for len(dir) < 120 {
		dir = filepath.Join(dir, "a-long-directory-name")
	}
	name := filepath.Join(dir, "keeper", "rm-127.0.0.1:8032.sock")
	t.Cleanup(func() { Release(name) })
	s1 := startServer(t, name, time.Minute)
	var w testutil.Wire
	c := client(s1.addr, nil, &w)
	defer c.Close()
	if _, err := echo(c, "before", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(name); err != nil {
		t.Fatalf("the socket is not at its long path: %v", err)
	}
	s1.kill(t)
	s2 := startServer(t, name, time.Minute)
	if got, err := echo(c, "after", 5*time.Second); err != nil || s2.adopted != 1 || w.Dials.Load() != 1 {
		t.Fatalf("after the restart: %q %v, adopted %d, %d dials", got, err, s2.adopted, w.Dials.Load())
	}
}
