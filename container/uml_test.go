package container

import (
	"github.com/bobbin-yarn/bobbin/container/cgroups"
	"github.com/bobbin-yarn/bobbin/container/cgroups/cgroupstest"
	"github.com/bobbin-yarn/bobbin/container/umltest"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"

	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// These tests boot real User-Mode Linux guests (Debian's user-mode-linux, uml-utilities
// and slirp packages); they skip where linux.uml is not installed.

func umlExecutor(t *testing.T) *UMLExecutor {
	t.Helper()
	kernel := umltest.Kernel(t, ProbeKernel)
	tmp := "/dev/shm"
	if st, err := os.Stat(tmp); err != nil || !st.IsDir() {
		tmp = os.TempDir()
	}
	host, _ := os.Hostname()
	e := &UMLExecutor{Kernel: kernel, Mconsole: "uml_mconsole", Slirp: "/usr/bin/slirp-fullbolt", StateDir: t.TempDir(),
		TmpDir: tmp, MemOverheadMB: 32, HostLoopback: true, BootTimeout: time.Minute, Hostname: host}
	if _, err := exec.LookPath(e.Slirp); err != nil {
		e.Slirp = ""
	}
	if err := e.CheckUML(); err != nil {
		t.Fatal(err)
	}
	return e
}

func umlLaunch(t *testing.T, e *UMLExecutor, id, script string, memMB int64, dirs ...string) (Process, outputFile, string) {
	t.Helper()
	work := filepath.Join(t.TempDir(), id)
	if e.RootDir != "" {
		work = filepath.Join(e.RootDir, "nm", id)
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(work, "launch_container.sh")
	if err := os.WriteFile(path, []byte("#!/bin/bash\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	out := outputFile(filepath.Join(work, "launch.out"))
	p, err := e.Launch(context.Background(), Spec{ID: id, Owner: testMark(t, id).Owner, Script: path, WorkDir: work, Env: []string{"PATH=/usr/bin:/bin", "GREETING=it's me"},
		OutputFile: string(out), MemoryMB: memMB, Dirs: dirs})
	if err != nil {
		t.Fatal(err)
	}
	return p, out, work
}

func TestUMLContainerRunsInGuest(t *testing.T) {
	e := umlExecutor(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("hello from the host\n"))
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	logs := t.TempDir()
	script := fmt.Sprintf(`grep -m1 vendor_id /proc/cpuinfo
echo "greeting: $GREETING"
echo "marker: $%s"
echo written > %s/out.txt
`, MarkerEnv, logs)
	if e.Slirp != "" {
		script += fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && head -1 <&3\n", port)
	}
	script += "exit 3\n"
	start := time.Now()
	p, out, _ := umlLaunch(t, e, "container_1_0001_01_000001", script, 64, logs)
	code := p.Wait()
	p.Stop(time.Second)
	t.Logf("guest boot + job + halt: %v", time.Since(start))
	if code != 3 {
		_, diag, _ := p.(Verdicter).Verdict()
		t.Fatalf("exit code %d, want 3 (%s); console:\n%s", code, diag, out.String())
	}
	for _, want := range []string{"User Mode Linux", "greeting: it's me", "marker: container_1_0001_01_000001"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("console lacks %q:\n%s", want, out.String())
		}
	}
	if e.Slirp != "" && !strings.Contains(out.String(), "hello from the host") {
		t.Errorf("guest did not reach the host's loopback through slirp:\n%s", out.String())
	}
	if b, err := os.ReadFile(filepath.Join(logs, "out.txt")); err != nil || string(b) != "written\n" {
		t.Errorf("container's directory not writable from the guest: %q %v", b, err)
	}
	if _, _, ok := p.(Verdicter).Verdict(); ok {
		t.Errorf("a plain exit has a verdict")
	}
	if ents, _ := os.ReadDir(filepath.Join(e.StateDir, "ip")); len(ents) != 0 {
		t.Errorf("address slot not freed: %v", ents)
	}
}

// A container whose guest dies before its launch script ran (here its kernel's writes of
// FP registers refused by the host, as a host with AMX refuses Debian's 6.1 UML) is lost,
// and its diagnostics carry the guest's console: the line that says why.
func TestUMLGuestThatDiesShowsItsConsole(t *testing.T) {
	e := umlExecutor(t)
	e.Kernel = umltest.FPFaultKernel(t, e.Kernel)
	p, out, _ := umlLaunch(t, e, "container_1_0001_01_000009", "echo never\n", 64)
	code := p.Wait()
	p.Stop(time.Second)
	verdict, diag, ok := p.(Verdicter).Verdict()
	if code != exitcode.Lost || !ok || verdict != exitcode.Lost || !strings.Contains(diag, "its console is below") {
		t.Fatalf("exit %d, verdict %d %v %q", code, verdict, ok, diag)
	}
	tail := Tail(p, string(out), 4096)
	if !strings.Contains(tail, "ptrace set fp regs failed, errno = 14") || strings.Contains(tail, "never") {
		t.Errorf("the console's tail does not say why the guest died:\n%s", tail)
	}
}

func TestUMLOutOfMemoryIsReported(t *testing.T) {
	e := umlExecutor(t)
	// A shell variable far larger than the guest's memory.
	p, out, _ := umlLaunch(t, e, "container_1_0001_01_000002", "x=$(head -c 200000000 /dev/zero | tr '\\0' a); echo survived ${#x}\n", 64)
	p.Wait()
	p.Stop(time.Second)
	exit, diag, ok := p.(Verdicter).Verdict()
	if !ok || exit != -104 || !strings.Contains(diag, "ran out of memory in its User-Mode Linux guest") {
		t.Fatalf("verdict %d %q %v; console:\n%s", exit, diag, ok, out.String())
	}
}

func TestUMLStopLeavesNothing(t *testing.T) {
	e := umlExecutor(t)
	id := "container_1_0001_01_000003"
	p, out, work := umlLaunch(t, e, id, "echo started; sleep 1000\n", 64)
	testutil.PollEvery(time.Minute, 50*time.Millisecond, func() bool { return strings.Contains(out.String(), "started") })
	if u := p.Usage(); u.RSS == 0 || u.Procs == 0 {
		t.Errorf("usage of a running guest: %+v", u)
	}
	p.Stop(500 * time.Millisecond)
	p.Wait()
	if left := Stragglers(testMark(t, id), p.Pid()); len(left) != 0 {
		t.Fatalf("processes left after Stop: %v", left)
	}
	if _, err := os.Stat(filepath.Join(e.StateDir, "umid", id)); !os.IsNotExist(err) {
		t.Errorf("umid directory left: %v", err)
	}
	if _, _, ok := p.(Verdicter).Verdict(); !ok {
		t.Errorf("a halted guest wrote no exit code, yet no verdict (console %s, work %s)", out.String(), work)
	}
}

func TestUMLParallelStartsGetDistinctAddresses(t *testing.T) {
	e := umlExecutor(t)
	if e.Slirp == "" {
		t.Skip("slirp-fullbolt not installed")
	}
	var wg sync.WaitGroup
	outs := make([]outputFile, 3)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, out, _ := umlLaunch(t, e, fmt.Sprintf("container_1_0001_01_00001%d", i), "ip -4 -o addr show dev "+e.Network.device()+" | awk '{print \"addr\", $4}'; sleep 8\n", 48)
			outs[i] = out
			if c := p.Wait(); c != 0 {
				t.Errorf("guest %d exit %d: %s", i, c, out.String())
			}
			p.Stop(time.Second)
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, o := range outs {
		i := strings.Index(o.String(), "addr ")
		if i < 0 {
			t.Fatalf("no address printed: %s", o.String())
		}
		a := strings.Fields(o.String()[i:])[1]
		if seen[a] {
			t.Errorf("address %s given twice: %q", a, outs)
		}
		seen[a] = true
	}
}

// TestUMLConfinedRootProtectsHostFiles: in confined mode a container that tries to write
// outside its directories — directly, through a new hostfs mount of "/", or by
// remounting its root read-write — leaves the host's files unchanged.
func TestUMLConfinedRootProtectsHostFiles(t *testing.T) {
	e := umlExecutor(t)
	e.Slirp = ""
	root := t.TempDir()
	if err := prepareRoot(root); err != nil {
		t.Fatal(err)
	}
	e.RootDir = root
	if err := e.CheckUML(); err != nil {
		t.Fatal(err)
	}
	victimDir := t.TempDir()
	victim := filepath.Join(victimDir, "victim.txt")
	if err := os.WriteFile(victim, []byte("original\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf(`echo overwritten > %[1]s && echo wrote-direct
mkdir -p /dev/shm/h && mount -t hostfs -o / hostfs /dev/shm/h && echo overwritten > /dev/shm/h%[1]s && echo wrote-hostfs
mount -o remount,rw / && mkdir -p %[2]s && echo overwritten > %[1]s && echo wrote-remount
echo own > "$PWD/own.txt" && echo wrote-own
exit 0
`, victim, victimDir)
	p, out, work := umlLaunch(t, e, "container_1_0001_01_000020", script, 48)
	code := p.Wait()
	p.Stop(time.Second)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	if b, _ := os.ReadFile(victim); string(b) != "original\n" {
		t.Fatalf("host file outside the container changed to %q; console:\n%s", b, out.String())
	}
	if b, err := os.ReadFile(filepath.Join(work, "own.txt")); err != nil || string(b) != "own\n" {
		t.Fatalf("container's own directory not writable: %q %v\n%s", b, err, out.String())
	}
}

// prepareRoot copies a shell, coreutils and mount with their libraries into dir: the
// smallest root a confined guest can run a launch script in. Copies, never hard links: a
// guest that remounts its root read-write must not reach the host's files through them.
func prepareRoot(dir string) error {
	bins := []string{"sh", "bash", "echo", "cat", "mkdir", "mount", "mv", "sync", "sleep", "ip", "head", "tr", "grep", "ls", "touch", "awk"}
	files := map[string]bool{}
	for _, b := range bins {
		p, err := exec.LookPath(b)
		if err != nil {
			continue
		}
		p, _ = filepath.EvalSymlinks(p)
		files[p] = true
		libs, _ := exec.Command("ldd", p).Output()
		for _, line := range strings.Split(string(libs), "\n") {
			for _, f := range strings.Fields(line) {
				if strings.HasPrefix(f, "/") {
					files[f] = true
				}
			}
		}
	}
	for f := range files {
		real, err := filepath.EvalSymlinks(f)
		if err != nil {
			return err
		}
		for _, dst := range []string{f, real} {
			if err := copyFile(real, filepath.Join(dir, dst)); err != nil {
				return err
			}
		}
	}
	for _, d := range []string{"bin", "proc", "sys", "dev", "tmp", "etc", "nm"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	for _, b := range bins {
		if p, err := exec.LookPath(b); err == nil {
			real, _ := filepath.EvalSymlinks(p)
			copyFile(real, filepath.Join(dir, "bin", b))
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, b, st.Mode().Perm())
}

// BenchmarkContainerStart measures a trivial container from Launch to exit under each
// executor; for UML it also reports launch-to-running (the guest's init has mounted the
// container's dirs and configured its network, just before the launch script runs).
//
//	go test -run '^$' -bench ContainerStart -benchtime 10x ./container
func BenchmarkContainerStart(b *testing.B) {
	run := func(b *testing.B, ex Executor, uml bool) {
		var toUp time.Duration
		for i := 0; i < b.N; i++ {
			work := filepath.Join(b.TempDir(), "w")
			os.MkdirAll(work, 0o755)
			script := filepath.Join(work, "launch_container.sh")
			os.WriteFile(script, []byte("#!/bin/bash\nexit 0\n"), 0o755)
			start := time.Now()
			p, err := ex.Launch(context.Background(), Spec{ID: fmt.Sprintf("container_1_0001_01_%06d", i+1), Script: script, WorkDir: work,
				Env: []string{"PATH=/usr/bin:/bin"}, MemoryMB: 64})
			if err != nil {
				b.Fatal(err)
			}
			if uml {
				for {
					if _, err := os.Stat(filepath.Join(work, ".bobbin-uml", "up")); err == nil {
						break
					}
					time.Sleep(2 * time.Millisecond)
				}
				toUp += time.Since(start)
			}
			if c := p.Wait(); c != 0 {
				b.Fatalf("exit %d", c)
			}
			p.Stop(time.Second)
		}
		if uml {
			b.ReportMetric(float64(toUp.Milliseconds())/float64(b.N), "ms-to-running/op")
		}
	}
	b.Run("process", func(b *testing.B) { run(b, ProcessExecutor{}, false) })
	b.Run("uml", func(b *testing.B) {
		kernel := umltest.Kernel(b, ProbeKernel)
		host, _ := os.Hostname()
		e := &UMLExecutor{Kernel: kernel, Mconsole: "uml_mconsole", Slirp: "/usr/bin/slirp-fullbolt", StateDir: b.TempDir(),
			TmpDir: "/dev/shm", MemOverheadMB: 32, HostLoopback: true, BootTimeout: time.Minute, Hostname: host}
		if err := e.CheckUML(); err != nil {
			b.Skip(err)
		}
		b.Run("slirp", func(b *testing.B) { run(b, e, true) })
		nonet := *e
		nonet.Slirp = ""
		b.Run("no-network", func(b *testing.B) { run(b, &nonet, true) })
	})
}

// A guest booted by one executor is taken back by another over the same state dir (a
// NodeManager that restarted): it runs on, its exit code comes from the guest's exit
// file, its address slot is freed and a stop through the reattached process halts it.
func TestUMLReattach(t *testing.T) {
	e := umlExecutor(t)
	id := "container_1_0001_01_000041"
	p, out, work := umlLaunch(t, e, id, "echo started; sleep 4; exit 5\n", 48)
	testutil.PollEvery(time.Minute, 50*time.Millisecond, func() bool { return strings.Contains(out.String(), "started") })
	again := *e
	r, err := again.Reattach(Spec{ID: id, Owner: testMark(t, id).Owner, WorkDir: work, MemoryMB: 48}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Pid() != p.Pid() {
		t.Fatalf("reattached kernel pid %d, launched %d", r.Pid(), p.Pid())
	}
	if code := r.Wait(); code != 5 {
		t.Fatalf("reattached guest exit %d, want 5; console:\n%s", code, out.String())
	}
	p.Wait()
	if ents, _ := os.ReadDir(filepath.Join(e.StateDir, "ip")); len(ents) != 0 {
		t.Errorf("address slot not freed: %v", ents)
	}
	// A guest stopped through its reattached process leaves nothing behind.
	id = "container_1_0001_01_000042"
	p, out, work = umlLaunch(t, e, id, "echo started; sleep 1000\n", 48)
	testutil.PollEvery(time.Minute, 50*time.Millisecond, func() bool { return strings.Contains(out.String(), "started") })
	r, _ = again.Reattach(Spec{ID: id, Owner: testMark(t, id).Owner, WorkDir: work, MemoryMB: 48}, p.Pid())
	r.Stop(500 * time.Millisecond)
	r.Wait()
	p.Wait()
	if left := Stragglers(testMark(t, id), p.Pid()); len(left) != 0 {
		t.Fatalf("processes left after a reattached Stop: %v", left)
	}
}

// TestUMLMapCountKillIsExplained: with the host's vm.max_map_count below a guest's pages,
// UML kills a guest process that maps more pages than the host allows (exit 137, not the
// OOM killer); the container's diagnostic names the sysctl and the value it needs.
func TestUMLMapCountKillIsExplained(t *testing.T) {
	e := umlExecutor(t)
	have, err := hostMaxMapCount()
	if err != nil {
		t.Fatal(err)
	}
	// A guest half again as large as what the host's limit can map, so the hog reaches
	// the limit well before the guest's memory is gone (adjacent pages whose mappings
	// merge take fewer than one each).
	memMB := MapCountMB(have) * 3 / 2
	if memMB > 2048 {
		t.Skipf("vm.max_map_count is %d: a guest that outgrows it needs %d MB; nothing to explain on this host", have, memMB)
	}
	memMB -= e.MemOverheadMB
	if _, need, short, _ := e.MapCountShortfall(memMB); !short {
		t.Fatalf("MapCountShortfall(%d MB) not short of %d (need %d)", memMB, have, need)
	}
	p, out, _ := umlLaunch(t, e, "container_1_0001_01_000002", "tail /dev/zero\n", memMB)
	p.Wait()
	p.Stop(time.Second)
	exit, diag, ok := p.(Verdicter).Verdict()
	// SIGKILL in 6.1 guests, SIGSEGV in 7.x ones.
	if !ok || (exit != 137 && exit != 139) || !strings.Contains(diag, "sysctl -w vm.max_map_count=") {
		t.Fatalf("verdict %d %q %v; console:\n%s", exit, diag, ok, out.String())
	}
	t.Log(diag)
}

// With cgroups, a guest's host processes (the kernel, a process per guest address
// space, its helpers) are in the container's cgroup from the kernel's first
// instruction: a quarter-processor cap binds the whole guest, its memory is left to
// mem=, and a stop leaves neither a process nor the cgroup.
func TestUMLGuestInItsCgroup(t *testing.T) {
	e := umlExecutor(t)
	tree := cgroupstest.Subtree(t, cgroups.Settings{Version: cgroups.V1, CPU: true, Pids: true})
	if tree.Path("cpuacct") == "" {
		t.Skip("no cpuacct controller to measure with")
	}
	e.Cgroups = tree
	id := "container_1_0001_01_000051"
	work := filepath.Join(t.TempDir(), id)
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(work, "launch_container.sh")
	if err := os.WriteFile(script, []byte("#!/bin/bash\necho started; while :; do :; done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := outputFile(filepath.Join(work, "launch.out"))
	p, err := e.Launch(context.Background(), Spec{ID: id, Owner: testMark(t, id).Owner, Script: script, WorkDir: work, Env: []string{"PATH=/usr/bin:/bin"}, OutputFile: string(out),
		MemoryMB: 64, Limits: cgroups.Limits{CPUShares: 1024, CPUCores: 0.25, PidsMax: 256, MemoryBytes: 64 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { p.Stop(0); p.Wait() }()
	testutil.PollEvery(time.Minute, 50*time.Millisecond, func() bool { return strings.Contains(out.String(), "started") })
	g, ok := tree.Adopt(id)
	if !ok {
		t.Fatal("the guest has no cgroup")
	}
	in, err := g.Pids()
	if err != nil {
		t.Fatal(err)
	}
	host := Stragglers(testMark(t, id), p.Pid())
	for _, pid := range append(host, p.Pid()) {
		if !slices.Contains(in, pid) {
			t.Errorf("the guest's host process %d is not in its cgroup (%v)", pid, in)
		}
	}
	if len(in) < 2 {
		t.Errorf("the guest's cgroup holds %v: want the kernel and its helpers", in)
	}
	cpu := func() time.Duration {
		st, err := g.Stats()
		if err != nil {
			t.Fatal(err)
		}
		return st.CPU
	}
	c0, w0 := cpu(), time.Now()
	testutil.PollEvery(time.Minute, 100*time.Millisecond, func() bool { return time.Since(w0) > 4*time.Second })
	w := time.Since(w0)
	share, bound := float64(cpu()-c0)/float64(w), 0.25*float64(w+time.Second)/float64(w)
	t.Logf("a busy guest under a 0.25 quota: %.3f of a processor (at most %.3f over %v)", share, bound, w)
	if share > bound || share < 0.1 {
		t.Errorf("the busy guest used %.3f of a processor; want its cap, 0.25", share)
	}
	if st, err := g.Stats(); err == nil && st.MemoryLimit != 0 && st.MemoryLimit < 1<<40 {
		t.Errorf("the guest's cgroup has a memory limit of %d: mem= is its cap", st.MemoryLimit)
	}
	p.Stop(500 * time.Millisecond)
	p.Wait()
	if g.Exists() {
		t.Error("the guest's cgroup is left after its stop")
	}
	// Killed with the cgroup; one whose parent died with it is reaped by init a moment
	// later (a zombie has ended: only the reaping is left).
	running := func() []int {
		var left []int
		for _, pid := range in {
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
				if i := strings.LastIndexByte(string(b), ')'); i > 0 && len(b) > i+2 && b[i+2] != 'Z' {
					left = append(left, pid)
				}
			}
		}
		return left
	}
	if !testutil.PollEvery(10*time.Second, 50*time.Millisecond, func() bool { return len(running()) == 0 }) {
		t.Errorf("the guest's host processes %v outlived its stop", running())
	}
}

// A service a container listens on in its guest is reached from the host at the same
// port (the relay agent in the guest, the relay in the executor), as a process
// container's would be; once the guest has ended, the port is free again.
func TestUMLGuestServiceIsReachedFromTheHost(t *testing.T) {
	e := umlExecutor(t)
	if e.Network == NetworkNone {
		t.Skip("guests have no network here")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("needs python3 for the guest's web server")
	}
	e.RelayAgent = buildBobbin(t)
	port := testutil.FreePort(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("served from the guest\n"), 0o644)
	stop := filepath.Join(dir, "stop")
	script := fmt.Sprintf("python3 -m http.server %d --bind 0.0.0.0 --directory %s >/dev/null 2>&1 &\nfor i in $(seq 1 600); do [ -e %s ] && break; sleep 0.1; done\n", port, dir, stop)
	p, out, _ := umlLaunch(t, e, "container_1_0001_01_000020", script, 128, dir)
	url := fmt.Sprintf("http://127.0.0.1:%d/hello.txt", port)
	var body string
	testutil.Eventually(t, 60*time.Second, "the guest's web server was not reached from the host", func() bool {
		resp, err := http.Get(url)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
		return resp.StatusCode == 200
	})
	if body != "served from the guest\n" {
		t.Errorf("the host read %q", body)
	}
	os.WriteFile(stop, nil, 0o644)
	if code := p.Wait(); code != 0 {
		t.Errorf("exit %d; console:\n%s", code, out.String())
	}
	p.Stop(time.Second)
	if ln, err := net.Listen("tcp", fmt.Sprintf(":%d", port)); err != nil {
		t.Errorf("the forwarded port is still held after the guest ended: %v", err)
	} else {
		ln.Close()
	}
}

// buildBobbin builds the bobbin binary (without the race detector, whose shadow memory a
// guest cannot map) for a guest to run.
func buildBobbin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bobbin")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/bobbin").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
