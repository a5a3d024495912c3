// Package zktest starts a private ZooKeeper server (Debian's zookeeper package) on
// loopback for tests, in a temporary directory, and stops it when the test ends. Tests
// skip with a clear message when ZooKeeper is not installed.
package zktest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/bobbin-yarn/bobbin/internal/testutil"
)

// Script is Debian's ZooKeeper launcher.
const Script = "/usr/share/zookeeper/bin/zkServer.sh"

// Server is a running ZooKeeper.
type Server struct {
	Addr string // host:port
	dir  string
	cmd  *exec.Cmd
	t    testing.TB
}

// Start starts a ZooKeeper server, or skips the test when ZooKeeper or Java is missing.
func Start(t testing.TB) *Server {
	t.Helper()
	if _, err := os.Stat(Script); err != nil {
		t.Skipf("ZooKeeper is not installed (%s): apt-get install zookeeper (.ci/run does)", Script)
	}
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("ZooKeeper needs java")
	}
	dir := t.TempDir()
	s := &Server{dir: dir, t: t, Addr: freeAddr(t)}
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

func (s *Server) start() error {
	_, port, _ := net.SplitHostPort(s.Addr)
	cfg := filepath.Join(s.dir, "zoo.cfg")
	os.MkdirAll(filepath.Join(s.dir, "data"), 0o755)
	conf := strings.Join([]string{"tickTime=500", "dataDir=" + filepath.Join(s.dir, "data"), "clientPort=" + port, "clientPortAddress=127.0.0.1",
		"admin.enableServer=false", "minSessionTimeout=1000", "maxSessionTimeout=60000", ""}, "\n")
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		return err
	}
	log, err := os.Create(filepath.Join(s.dir, "zookeeper.out"))
	if err != nil {
		return err
	}
	s.cmd = exec.Command(Script, "start-foreground", cfg)
	s.cmd.Env = append(os.Environ(), "ZOO_LOG_DIR="+s.dir)
	s.cmd.Stdout, s.cmd.Stderr = log, log
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("zookeeper: %w", err)
	}
	// Ready is when a session can be had and used: the port listens before the server
	// takes sessions.
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if ready(s.Addr) {
			return nil
		}
	}
	s.Stop()
	out, _ := os.ReadFile(filepath.Join(s.dir, "zookeeper.out"))
	return fmt.Errorf("zookeeper did not listen on %s within 30 s:\n%s", s.Addr, out)
}

// Stop kills the server (its whole process group).
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	s.cmd.Wait()
	s.cmd = nil
}

// Restart starts the server again on the same address and data (after Stop).
func (s *Server) Restart() {
	s.t.Helper()
	if err := s.start(); err != nil {
		s.t.Fatal(err)
	}
}

// ready reports whether a ZooKeeper session can be established and used at addr.
func ready(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	conn, events, err := zk.Connect([]string{addr}, 5*time.Second, zk.WithLogger(quiet{}))
	if err != nil {
		return false
	}
	defer conn.Close()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				_, _, err := conn.Exists("/")
				return err == nil
			}
		case <-timeout:
			return false
		}
	}
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

func freeAddr(t testing.TB) string {
	t.Helper()
	return testutil.FreeAddr(t)
}
