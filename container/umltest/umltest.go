// Package umltest is what the tests that boot User-Mode Linux guests share: the kernel
// they use, probed once per test binary (they skip with the probe's one-line reason on a
// host where it cannot run), and a kernel that fails on this host as UML kernels fail on
// CPUs whose register state they mishandle.
package umltest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Probe boots a probe guest with kernel, keeping its files under stateDir and its RAM
// file in tmpDir, and says why guests cannot run (container.UMLExecutor.ProbeUML; a
// function here, since the container package's own tests use this one).
type Probe func(kernel, stateDir, tmpDir string) error

// KernelEnv names the UML kernel the tests use; .ci/run sets it to the kernel it built
// when Debian's packaged linux.uml fails the probe. Unset: linux.uml on PATH.
const KernelEnv = "BOBBIN_UML_KERNEL"

// probed is the one probe of a test binary: every UML test asks the same question of the
// same kernel and host, and a probe boots a guest.
var probed struct {
	once   sync.Once
	kernel string
	skip   string
	fatal  bool // the kernel was named in KernelEnv: one that cannot run is a failure
}

// Kernel is the UML kernel for this host, or skips t: when no kernel is installed, or
// when the kernel's probe guest cannot run here (the reason then quotes the console
// lines that say why). A kernel named in KernelEnv (as .ci/run names the one it probed)
// that cannot run fails t instead: a loaded host must not silently skip the UML tests.
func Kernel(t testing.TB, probe Probe) string {
	t.Helper()
	probed.once.Do(func() {
		kernel, named := kernelName()
		probed.fatal = named
		path, err := exec.LookPath(kernel)
		if err != nil {
			probed.skip = kernel + " not installed (apt-get install user-mode-linux uml-utilities slirp, or " + KernelEnv + "=<kernel>); skipping the UML test"
			return
		}
		dir, err := os.MkdirTemp("", "bobbin-uml-probe-")
		if err != nil {
			probed.skip = "UML probe: " + err.Error()
			return
		}
		defer os.RemoveAll(dir)
		if err := probe(path, dir, RAMDir()); err != nil {
			probed.skip = "skipping the UML test: " + strings.ReplaceAll(err.Error(), "\n", " ")
			return
		}
		probed.kernel = path
	})
	if probed.skip != "" {
		if probed.fatal {
			t.Fatalf("%s=%s: %s", KernelEnv, os.Getenv(KernelEnv), probed.skip)
		}
		t.Skip(probed.skip)
	}
	return probed.kernel
}

// kernelName is the kernel the tests use: KernelEnv's (named true), else linux.uml.
func kernelName() (kernel string, named bool) {
	if k := os.Getenv(KernelEnv); k != "" {
		return k, true
	}
	return "linux.uml", false
}

// RAMDir is where the tests' guests keep their RAM files: /dev/shm where there is one.
func RAMDir() string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		return "/dev/shm"
	}
	return os.TempDir()
}

// InstalledKernel is the UML kernel the tests would use, unprobed, or skips t when none
// is installed.
func InstalledKernel(t testing.TB) string {
	t.Helper()
	kernel, _ := kernelName()
	path, err := exec.LookPath(kernel)
	if err != nil {
		t.Skip(kernel + " not installed (apt-get install user-mode-linux); skipping the UML test")
	}
	return path
}

// FPFaultKernel is a kernel that cannot run on this host, for the tests of what the
// NodeManager does then: a script that runs the real kernel with the host refusing its
// writes of a guest process's extended FP registers (ptrace PTRACE_SETREGSET of
// NT_X86_XSTATE fails with EFAULT), as a host whose CPU has more register state than
// the kernel hands it refuses them (umltest's seccomp filter, installed by this test
// binary itself re-run as the script's first step).
func FPFaultKernel(t testing.TB, kernel string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "linux.uml-fp-fault")
	body := "#!/bin/sh\nexec env " + faultEnv + "=" + shellQuote(kernel) + " " + shellQuote(self) + " \"$@\"\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
