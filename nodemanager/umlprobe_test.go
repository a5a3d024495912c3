package nodemanager

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/container/umltest"
)

// A NodeManager configured for UML guests on a host where its kernel cannot run them
// (here: the real kernel, with the host refusing its writes of a guest process's FP
// registers, as a host with AMX refuses Debian's 6.1 UML) refuses to start, saying why
// and how to fix it, within seconds.
func TestNodeManagerRefusesAUMLKernelThatCannotRun(t *testing.T) {
	kernel := umltest.InstalledKernel(t)
	dir := t.TempDir()
	c := conf.New()
	for k, v := range map[string]string{
		"yarn.resourcemanager.resource-tracker.address": "127.0.0.1:1", "yarn.nodemanager.hostname": "127.0.0.1",
		"yarn.nodemanager.address": "127.0.0.1:0", "yarn.nodemanager.webapp.address": "127.0.0.1:0",
		"yarn.nodemanager.local-dirs": filepath.Join(dir, "local"), "yarn.nodemanager.log-dirs": filepath.Join(dir, "logs"),
		"bobbin.nodemanager.container-executor": "uml", "bobbin.nodemanager.uml.kernel": umltest.FPFaultKernel(t, kernel),
		"bobbin.nodemanager.uml.mconsole": "", "bobbin.nodemanager.uml.slirp": "", "bobbin.nodemanager.uml.tmp-dir": umltest.RAMDir(),
	} {
		c.Set(k, v)
	}
	start := time.Now()
	nm, err := New(Options{Conf: c, Logger: testLog(t)})
	took := time.Since(start)
	if err == nil {
		nm.Shutdown(t.Context())
		t.Fatal("the NodeManager started with a UML kernel that cannot run guests")
	}
	t.Logf("refused in %v: %v", took, err)
	for _, want := range []string{"bobbin.nodemanager.container-executor=uml", "cannot run guests on this host", "ptrace set fp regs failed, errno = 14", "bobbin.nodemanager.uml.kernel", "make uml-kernel"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal lacks %q", want)
		}
	}
	if took > 10*time.Second {
		t.Errorf("refusing took %v, want under 10 s", took)
	}
}
