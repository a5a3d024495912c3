package nodemanager

import (
	"net"
	"os"
	"strings"
	"testing"
)

// TestNodeHostIsTheCanonicalName: the NodeId host is the canonical name of the configured
// address, as the Java NodeManager's: an NM on 127.0.0.1 is localhost (where the hosts
// file says so), one on the wildcard is named after the local host.
func TestNodeHostIsTheCanonicalName(t *testing.T) {
	want := "127.0.0.1"
	if names, err := net.LookupAddr("127.0.0.1"); err == nil && len(names) > 0 {
		want = strings.TrimSuffix(names[0], ".")
	}
	if got := NodeHost("127.0.0.1"); got != want {
		t.Errorf("NodeHost(127.0.0.1) = %q, want %q", got, want)
	}
	if b, err := os.ReadFile("/etc/hosts"); err == nil && strings.Contains(string(b), "127.0.0.1 localhost") && want != "localhost" {
		t.Errorf("the hosts file names 127.0.0.1 localhost, the lookup %q", want)
	}
	if got := NodeHost("localhost"); got != want {
		t.Errorf("NodeHost(localhost) = %q, want %q", got, want)
	}
	h, _ := os.Hostname()
	if got, local := NodeHost("0.0.0.0"), NodeHost(h); got != local {
		t.Errorf("NodeHost(0.0.0.0) = %q, want the local host's %q", got, local)
	}
	if got := NodeHost("no-such-host.invalid"); got != "no-such-host.invalid" {
		t.Errorf("an unresolvable name became %q", got)
	}
}
