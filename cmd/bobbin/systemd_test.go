package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The systemd units make install puts in place are valid for systemd (systemd-analyze
// verify says nothing of them) and start the daemons this binary has.
func TestSystemdUnitsVerify(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze not installed: the units are not verified")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	units, _ := filepath.Glob("../../scripts/systemd/*.service")
	if len(units) != 2 {
		t.Fatalf("units: %v, want the RM's and the NM's", units)
	}
	for _, u := range units {
		b, err := os.ReadFile(u)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		daemon := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(u), "bobbin-"), ".service")
		if !strings.Contains(text, "ExecStart=/usr/local/bin/bobbin "+daemon+" --conf ") {
			t.Errorf("%s does not start bobbin %s", u, daemon)
		}
		// systemd checks that ExecStart's binary exists: this one, for the check.
		local := filepath.Join(t.TempDir(), filepath.Base(u))
		if err := os.WriteFile(local, []byte(strings.ReplaceAll(text, "/usr/local/bin/bobbin", self)), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(analyze, "verify", local).CombinedOutput()
		if err != nil || len(strings.TrimSpace(string(out))) > 0 {
			t.Errorf("systemd-analyze verify %s: %v\n%s", u, err, out)
		}
	}
}
