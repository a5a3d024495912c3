package integration

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/rpc"
)

// peakRSSMB is a process's peak resident memory (VmHWM), in MB.
func peakRSSMB(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.Atoi(f[1])
			return kb / 1024
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// TestUnauthenticatedFramesDoNotGrowTheRM is the probe of issue 42 against the real
// `bobbin resourcemanager`: eight connections that never authenticate each announce a
// 60 MiB frame and send it. Each is answered FATAL from the length alone and closed, the
// RM's peak memory does not grow by the frames (it grew by some 480 MB when it read
// them), and the RM serves on.
func TestUnauthenticatedFramesDoNotGrowTheRM(t *testing.T) {
	c := startBobbinCluster(t)
	before := peakRSSMB(t, c.rm.cmd.Process.Pid)
	var wg sync.WaitGroup
	answers := make([]string, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nc, err := net.Dial("tcp", c.rmAddr)
			if err != nil {
				answers[i] = err.Error()
				return
			}
			defer nc.Close()
			nc.SetDeadline(time.Now().Add(30 * time.Second))
			head := append(rpc.Preamble{Version: rpc.CurrentVersion, Auth: rpc.AuthSASL}.Bytes(), binary.BigEndian.AppendUint32(nil, 60<<20)...)
			go func() { // the body, as far as the RM reads it
				nc.Write(head)
				nc.Write(bytes.Repeat([]byte{'x'}, 60<<20))
			}()
			pkt, err := rpc.ReadFrame(nc, rpc.DefaultMaxDataLength)
			if err != nil {
				answers[i] = "no answer: " + err.Error()
				return
			}
			h, _, _ := rpc.DecodeResponse(pkt)
			answers[i] = h.GetStatus().String() + " " + h.GetErrorMsg()
			io.Copy(io.Discard, nc) // until the RM closes
		}()
	}
	wg.Wait()
	for i, a := range answers {
		if !strings.HasPrefix(a, "FATAL") || !strings.Contains(a, "before the connection is established") {
			t.Errorf("connection %d: %s", i, a)
		}
	}
	after := peakRSSMB(t, c.rm.cmd.Process.Pid)
	t.Logf("RM peak RSS %d MB before, %d MB after", before, after)
	if after-before > 64 {
		t.Errorf("the RM's peak RSS grew from %d to %d MB", before, after)
	}
	if out, err := c.demo(t, "--containers", "1", "--command", "true"); err != nil {
		t.Fatalf("the RM after the probe: %v\n%s", err, out)
	}
}
