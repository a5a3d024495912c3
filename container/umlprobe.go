package container

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A UML kernel's ptrace code must hand the host exactly the host CPU's register state:
// Debian's 6.1 kernel (and upstream's up to 6.12) sends a fixed 2,696-byte XSAVE area,
// which a host whose CPU has more state (AMX: 11,008 bytes) refuses, and then the guest
// dies at its first process or its first signal. Nothing in the kernel's version says
// which CPUs it handles, so the NodeManager boots one tiny guest before it offers UML
// containers (ProbeUML), and refuses to start when that guest cannot run.

//go:embed uml-probe-init.sh
var probeInit []byte

// ProbeTimeout bounds a probe, or the executor's BootTimeout when that is longer: a guest
// that runs boots and powers off in a second or two (a kernel that cannot run fails at
// once); one that hangs is a failure too, but a loaded host must not pass for one.
const ProbeTimeout = 8 * time.Second

// UMLProbe is what booting one probe guest showed.
type UMLProbe struct {
	Kernel        string        // the kernel binary, as resolved on PATH
	KernelVersion string        // what it says to --version
	Host          string        // the host's kernel release and CPU
	Boot          time.Duration // from start to the guest's power-off (or to the failure)
	Console       []string      // the guest's console, boot noise left out
	Err           error         // nil: guests run on this host
}

// probeSteps are the console lines a guest that runs prints, in order (uml-probe-init.sh).
var probeSteps = []struct{ line, what string }{
	{"bobbin-probe: init", "started its init"},
	{"bobbin-probe: proc", "mounted /proc"},
	{"bobbin-probe: exec", "ran a program"},
	{"bobbin-probe: signal", "had bash take a signal"},
	{"bobbin-probe: bash 42", "had bash go on after its signal handler"},
	{"bobbin-probe: done", "finished"},
}

// telling are the console lines that say why a guest died: the ones a failure report
// quotes.
var telling = regexp.MustCompile(`(?i)panic|ptrace|fp.?reg|xstate|errno|segfault|segmentation|fault|failed|error|killed|returned -\d+|not syncing`)

// ProbeUML boots one tiny guest with the executor's kernel, on the host's root read-only
// and without a network, and checks that it runs programs and delivers a signal. Its
// files live in a directory of their own under the state directory (or the system's
// temporary directory), removed afterwards with every process the guest started.
func (e *UMLExecutor) ProbeUML(ctx context.Context) *UMLProbe {
	start := time.Now()
	p := &UMLProbe{Kernel: e.Kernel, Host: hostDescription()}
	fail := func(err error) *UMLProbe {
		p.Boot = time.Since(start)
		p.Err = err
		return p
	}
	kernel, err := exec.LookPath(e.Kernel)
	if err != nil {
		return fail(fmt.Errorf("uml executor: bobbin.nodemanager.uml.kernel = %q: %w (Debian package user-mode-linux, or a kernel built by `make uml-kernel`)", e.Kernel, err))
	}
	p.Kernel = kernel
	p.KernelVersion = kernelVersion(ctx, kernel)
	parent := e.StateDir
	if parent == "" {
		parent = os.TempDir()
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fail(fmt.Errorf("uml executor: probe: %w", err))
	}
	dir, err := os.MkdirTemp(parent, "probe-")
	if err != nil {
		return fail(fmt.Errorf("uml executor: probe: %w", err))
	}
	defer os.RemoveAll(dir)
	// The guest reads its init through hostfs as the NodeManager's user.
	if err := os.Chmod(dir, 0o755); err != nil {
		return fail(fmt.Errorf("uml executor: probe: %w", err))
	}
	initPath := filepath.Join(dir, "init")
	if err := os.WriteFile(initPath, probeInit, 0o755); err != nil {
		return fail(fmt.Errorf("uml executor: probe: %w", err))
	}
	tmp := e.TmpDir
	if tmp == "" {
		tmp = os.TempDir()
	}
	umid := filepath.Base(dir)
	mark := Mark{ID: "bobbin-uml-" + umid + "-" + strconv.Itoa(os.Getpid())}
	// loglevel=4: the kernel's errors (the ptrace failures among them) reach the console,
	// where a container's guest (loglevel=2) shows only emergencies.
	cmd := exec.Command(kernel, "mem=64M", "umid="+umid, "uml_dir="+dir,
		"root=/dev/root", "rootfstype=hostfs", "rootflags=/", "ro",
		"con=null", "con0=null,fd:1", "quiet", "loglevel=4", "init="+initPath)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + dir, "TMPDIR=" + tmp}, mark.env()...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	// A file, not a pipe: Wait returns when the kernel ends, whatever its helpers hold.
	consoleFile := filepath.Join(dir, "console")
	out, err := os.Create(consoleFile)
	if err != nil {
		return fail(fmt.Errorf("uml executor: probe: %w", err))
	}
	cmd.Stdout, cmd.Stderr = out, out
	err = cmd.Start()
	out.Close()
	if err != nil {
		return fail(fmt.Errorf("uml executor: start %s: %w", kernel, err))
	}
	done := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(done)
	}()
	limit := max(ProbeTimeout, e.BootTimeout)
	timer := time.NewTimer(limit)
	defer timer.Stop()
	timedOut := false
	select {
	case <-done:
	case <-timer.C:
		timedOut = true
	case <-ctx.Done():
		timedOut = true
	}
	p.Boot = time.Since(start)
	// The guest's helpers outlive a kernel that crashed; none may stay behind.
	killAll(mark, cmd.Process.Pid, done)
	<-done
	p.Console = consoleLines(readHead(consoleFile, 256<<10))
	reached := -1
	for i, s := range probeSteps {
		if !slices.Contains(p.Console, s.line) {
			break
		}
		reached = i
	}
	if reached == len(probeSteps)-1 {
		return p
	}
	var how string
	switch {
	case timedOut && ctx.Err() != nil:
		how = fmt.Sprintf("the probe was cancelled after %v", p.Boot.Round(time.Millisecond))
	case timedOut:
		how = fmt.Sprintf("its guest did not power off within %v", limit)
	default:
		how = fmt.Sprintf("its guest ended after %v (%v)", p.Boot.Round(time.Millisecond), exitDescription(waitErr))
	}
	next := probeSteps[reached+1].what
	return fail(fmt.Errorf("uml executor: the UML kernel %s (%s) cannot run guests on this host (%s): %s before it %s; console: %s. "+
		"Fix: use a UML kernel that handles this host's CPU — `make uml-kernel` builds one from Debian's kernel source (docs/borrowed-servers.md) — "+
		"and name it in bobbin.nodemanager.uml.kernel; or run containers as processes (bobbin.nodemanager.container-executor=process)",
		kernel, orUnknown(p.KernelVersion), p.Host, how, next, quoteLines(tellingLines(p.Console))))
}

// readHead is the first max bytes of a file (a looping guest could print without end
// until the probe's timeout).
func readHead(path string, max int64) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, max))
	return b
}

func orUnknown(s string) string {
	if s == "" {
		return "version unknown"
	}
	return s
}

func exitDescription(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "killed by " + unix.SignalName(ws.Signal())
		}
		return "exit status " + strconv.Itoa(ee.ExitCode())
	}
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// kernelVersion is what the kernel binary says to --version ("6.1.176"), "" when it says
// nothing within a few seconds.
func kernelVersion(ctx context.Context, kernel string) string {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	b, err := exec.CommandContext(ctx, kernel, "--version").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(firstLine(string(b)))
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// hostDescription names the host's kernel and CPU, and the CPU features whose register
// state UML kernels have mishandled (AVX-512, AMX).
func hostDescription() string {
	release, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	desc := "Linux " + strings.TrimSpace(string(release))
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return desc
	}
	defer f.Close()
	model, flags := "", ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() && (model == "" || flags == "") {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "model name":
			model = strings.TrimSpace(v)
		case "flags":
			flags = " " + v + " "
		}
	}
	var has []string
	for _, ft := range []string{"avx512f", "amx_tile"} {
		if strings.Contains(flags, " "+ft+" ") {
			has = append(has, ft)
		}
	}
	if model != "" {
		desc += ", " + model
	}
	if len(has) > 0 {
		desc += " with " + strings.Join(has, ", ")
	}
	return desc
}

// consoleLines are the console's lines without the boot noise every guest prints.
func consoleLines(b []byte) []string {
	var out []string
	for _, line := range bytes.Split(b, []byte("\n")) {
		line = bytes.TrimRight(line, "\r")
		if !isNoise(line) {
			out = append(out, string(bytes.TrimSpace(line)))
		}
	}
	return out
}

// tellingLines are the console lines a failure report quotes: those that say why, or
// else the last few.
func tellingLines(lines []string) []string {
	var out []string
	for _, l := range lines {
		// Not the call trace's frames ("[<6004b1ca>] ? put_fp_registers+0x10/0x12").
		if telling.MatchString(l) && !strings.HasPrefix(l, "bobbin-probe:") && !strings.HasPrefix(l, "[<") {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		out = lines[max(0, len(lines)-6):]
	}
	if len(out) > 8 {
		out = out[len(out)-8:]
	}
	return out
}

func quoteLines(lines []string) string {
	if len(lines) == 0 {
		return "(empty)"
	}
	q := make([]string, len(lines))
	for i, l := range lines {
		q[i] = strconv.Quote(l)
	}
	return strings.Join(q, " | ")
}

// ProbeKernel boots a probe guest with kernel (its files under stateDir, its RAM file in
// tmpDir) and returns why guests cannot run on this host, nil when they can.
func ProbeKernel(kernel, stateDir, tmpDir string) error {
	e := &UMLExecutor{Kernel: kernel, StateDir: stateDir, TmpDir: tmpDir, BootTimeout: 30 * time.Second}
	return e.ProbeUML(context.Background()).Err
}
