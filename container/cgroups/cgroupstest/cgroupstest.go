// Package cgroupstest gives tests a cgroups subtree of their own on this machine's real
// hierarchies, removed after them, or skips them where there is none to write.
package cgroupstest

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/bobbin-yarn/bobbin/container/cgroups"
)

// Subtree opens s under a hierarchy named for the test and this process, and removes it
// (and any container cgroup left in it) when the test ends. It skips the test when the
// NodeManager could not open it here: not root, or a controller s needs is missing.
func Subtree(t testing.TB, s cgroups.Settings) *cgroups.Subtree {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create cgroups")
	}
	s.Hierarchy = fmt.Sprintf("bobbin-test-%d-%s", os.Getpid(), strings.NewReplacer("/", "-", " ", "_").Replace(t.Name()))
	tree, err := cgroups.Open(s)
	if err != nil {
		t.Skipf("no cgroups for the test here: %v", err)
	}
	t.Cleanup(func() { tree.Remove() })
	return tree
}
