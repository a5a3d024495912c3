package integration

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/client/rmclient"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/rpc"
)

const squatterEnv = "BOBBIN_TEST_SQUATTER"

// squat binds a unix socket at each path ("@name": abstract), greets whoever connects
// the way a connection keeper does and then says nothing, until killed.
func squat(paths []string) int {
	for _, p := range paths {
		if !strings.HasPrefix(p, "@") {
			os.MkdirAll(filepath.Dir(p), 0o777)
			os.Chmod(filepath.Dir(p), 0o777)
		}
		ln, err := net.ListenUnix("unixpacket", &net.UnixAddr{Name: p, Net: "unixpacket"})
		if err != nil {
			fmt.Println("error", err)
			return 1
		}
		go func() {
			for {
				c, err := ln.AcceptUnix()
				if err != nil {
					return
				}
				c.Write([]byte("K"))
			}
		}()
	}
	fmt.Println("listening")
	select {}
}

// TestRMStartsWhateverAnotherUserSquats: an unprivileged user (nobody) binds the
// connection keeper's old abstract name and makes the keeper's directory under a
// world-writable hadoop.tmp.dir its own, with a socket in it, before the RM starts. The
// RM starts and serves all the same, with recovery on (without a keeper, saying why) and
// with recovery off (not looking for one), and never talks to the squatter.
func TestRMStartsWhateverAnotherUserSquats(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running a process as another user needs root")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("no user nobody: %v", err)
	}
	uid, _ := strconv.Atoi(nobody.Uid)
	gid, _ := strconv.Atoi(nobody.Gid)
	// A short path: a unix socket's path has at most 107 bytes.
	shared, err := os.MkdirTemp("", "squat")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(shared) })
	for d := filepath.Dir(shared); d != os.TempDir() && d != "/"; d = filepath.Dir(d) { // never $TMPDIR itself
		os.Chmod(d, 0o755)
	}
	os.Chmod(shared, 0o777|os.ModeSticky) // as /tmp is
	exe := filepath.Join(shared, "squatter")
	if b, err := os.ReadFile(os.Args[0]); err != nil || os.WriteFile(exe, b, 0o755) != nil {
		t.Fatalf("copy the test binary: %v", err)
	}
	tmp := filepath.Join(shared, "hadoop-tmp")
	os.Mkdir(tmp, 0o755)
	os.Chmod(tmp, 0o777|os.ModeSticky)

	for _, recovery := range []string{"true", "false"} {
		t.Run("recovery="+recovery, func(t *testing.T) {
			rmAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
			squatted := []string{"@bobbin-rm-connection-keeper/" + rmAddr, filepath.Join(tmp, "connection-keeper", "rm-"+rmAddr+".sock")}
			cmd := exec.Command(exe)
			cmd.Env = append(os.Environ(), squatterEnv+"="+strings.Join(squatted, ","))
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
			out, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			if line, _ := bufio.NewReader(out).ReadString('\n'); !strings.HasPrefix(line, "listening") {
				t.Fatalf("squatter: %q", line)
			}
			confDir := t.TempDir()
			writeConf(t, confDir, map[string]string{
				"yarn.resourcemanager.address":                  rmAddr,
				"yarn.resourcemanager.scheduler.address":        fmt.Sprintf("127.0.0.1:%d", freePort(t)),
				"yarn.resourcemanager.resource-tracker.address": fmt.Sprintf("127.0.0.1:%d", freePort(t)),
				"yarn.resourcemanager.admin.address":            fmt.Sprintf("127.0.0.1:%d", freePort(t)),
				"yarn.resourcemanager.webapp.address":           fmt.Sprintf("127.0.0.1:%d", freePort(t)),
				"yarn.resourcemanager.recovery.enabled":         recovery,
				"yarn.resourcemanager.fs.state-store.uri":       "file://" + filepath.Join(confDir, "store"),
				"hadoop.tmp.dir":                                tmp,
			})
			rm := startDaemon(t, "resourcemanager", "--conf", confDir)
			rm.waitListening(t, rmAddr)
			cl := rmclient.New(rmAddr, "alice", rpc.ClientOptions{Logger: testutil.QuietLogger()})
			defer cl.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if _, err := cl.GetNewApplication(ctx); err != nil {
				t.Fatalf("the RM does not serve: %v\n%s", err, rm.Log())
			}
			if recovery == "true" && !strings.Contains(rm.Log(), "owned by uid "+nobody.Uid) {
				t.Errorf("the RM does not say why it keeps no connections:\n%s", rm.Log())
			}
			if strings.Contains(rm.Log(), "not started") {
				t.Errorf("%s", rm.Log())
			}
		})
	}
}
