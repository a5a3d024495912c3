package rmstate

import (
	"os"
	"path/filepath"
	"testing"
)

// TestHostListsNameHostsOrAddresses: as in the Java RM, an include or exclude file may
// name a node's host, its address, or (Bobbin) its host:port.
func TestHostListsNameHostsOrAddresses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	h, err := LoadHostLists("", write("exclude", "127.0.0.1 # the loopback, by address\n"))
	if err != nil {
		t.Fatal(err)
	}
	if h.Allows("localhost", "localhost:8041") {
		t.Error("localhost allowed by an exclude file naming 127.0.0.1")
	}
	if !h.Allows("no-such-host.invalid", "no-such-host.invalid:8041") {
		t.Error("an unrelated (unresolvable) host excluded")
	}
	h, err = LoadHostLists(write("include", "127.0.0.1\nother:8041\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]bool{"localhost": true, "127.0.0.1": true, "other": true, "no-such-host.invalid": false} {
		if got := h.Allows(host, host+":8041"); got != want {
			t.Errorf("include: %s allowed %v, want %v", host, got, want)
		}
	}
}
