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
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", s.Addr, time.Second); err == nil {
			c.Close()
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

func freeAddr(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
