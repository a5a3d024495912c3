package container

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/container/umltest"
)

func TestProbeUMLRunsAGuest(t *testing.T) {
	kernel := umltest.Kernel(t, ProbeKernel)
	e := &UMLExecutor{Kernel: kernel, StateDir: t.TempDir(), TmpDir: umltest.RAMDir()}
	p := e.ProbeUML(context.Background())
	if p.Err != nil {
		t.Fatal(p.Err)
	}
	t.Logf("%s (%s) on %s: guest booted, ran bash through a signal and powered off in %v", p.Kernel, p.KernelVersion, p.Host, p.Boot)
	if p.KernelVersion == "" || p.Boot <= 0 || !slices.Contains(p.Console, "bobbin-probe: signal") {
		t.Errorf("probe report incomplete: version %q, boot %v, console %q", p.KernelVersion, p.Boot, p.Console)
	}
	if ents, _ := os.ReadDir(e.StateDir); len(ents) != 0 {
		t.Errorf("the probe left %v in its state directory", ents)
	}
}

// A kernel whose writes of a guest process's FP registers the host refuses (as a host
// with AMX refuses Debian's 6.1 UML) fails the probe at the guest's first process, and
// the report names the kernel, the host and the console line that says why, in a few
// seconds, leaving no process behind.
func TestProbeUMLNamesAKernelThatCannotRun(t *testing.T) {
	kernel := umltest.InstalledKernel(t)
	e := &UMLExecutor{Kernel: umltest.FPFaultKernel(t, kernel), StateDir: t.TempDir(), TmpDir: umltest.RAMDir()}
	start := time.Now()
	p := e.ProbeUML(context.Background())
	took := time.Since(start)
	if p.Err == nil {
		t.Fatalf("a kernel that cannot write FP registers passed the probe; console:\n%s", strings.Join(p.Console, "\n"))
	}
	msg := p.Err.Error()
	t.Logf("probe failed in %v: %s", took, msg)
	for _, want := range []string{e.Kernel, p.Host, "cannot run guests on this host", "errno = 14", "bobbin.nodemanager.uml.kernel", "make uml-kernel"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the probe's error lacks %q", want)
		}
	}
	if took > 10*time.Second {
		t.Errorf("the probe took %v", took)
	}
	if ents, _ := os.ReadDir(e.StateDir); len(ents) != 0 {
		t.Errorf("the probe left %v in its state directory", ents)
	}
}
