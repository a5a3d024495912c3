package testutil

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"testing"
)

// handedOut holds every port FreeAddr has returned in this test process. A port is only
// probed free and closed again, so without it two calls for one server's addresses (an
// RM's five) could return the same port and the server's second bind fails. Process-wide
// on purpose: the ports of all tests of a package share the one kernel.
var handedOut = struct {
	sync.Mutex
	ports map[string]bool
}{ports: map[string]bool{}}

// claim records addr as handed out; false when it already was.
func claim(addr string) bool {
	handedOut.Lock()
	defer handedOut.Unlock()
	if handedOut.ports[addr] {
		return false
	}
	handedOut.ports[addr] = true
	return true
}

// FreeAddr is a loopback address ("127.0.0.1:port") nothing listens on now, for a
// server whose address must be known before it starts (configuration files, a restart on
// the same ports, HA peers). The port comes from below the kernel's ephemeral range: a
// port from ":0" is an ephemeral one, and any outgoing connection of this or another
// test process may take it before the server binds it.
func FreeAddr(t testing.TB) string {
	t.Helper()
	low := ephemeralLow()
	const floor = 10000
	if low-floor >= 1000 {
		for range 200 {
			addr := fmt.Sprintf("127.0.0.1:%d", floor+rand.IntN(low-floor))
			if !claim(addr) {
				continue
			}
			if l, err := net.Listen("tcp", addr); err == nil {
				l.Close()
				return addr
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// FreePort is FreeAddr's port.
func FreePort(t testing.TB) int {
	t.Helper()
	a, err := net.ResolveTCPAddr("tcp", FreeAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	return a.Port
}

// ephemeralLow is the first port of the kernel's ephemeral range (32768 when unknown).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	var low, high int
	if _, err := fmt.Sscan(string(b), &low, &high); err != nil || low <= 0 {
		return 32768
	}
	return low
}
