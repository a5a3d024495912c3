package cgroups_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/container"
	"github.com/bobbin-yarn/bobbin/container/umltest"
)

// The v2 tests the host cannot run (it binds every controller to v1, leaving its v2
// hierarchy empty), each of which must pass in the guest, none skip.
var v2Tests = []string{
	"TestEscapesStayInTheCgroupAndDie", "TestStartRunsNothingOutsideTheCgroup", "TestMemoryLimitOOMKills",
	"TestCPUSharesSplitAContendedCore", "TestCPUQuotaCaps", "TestPidsLimitStopsAForkBomb",
	"TestDeniedDevicesCannotBeOpened", "TestSubtreeOOMHoldIsHeardAndEnded",
}

// TestCgroupsV2InAUMLGuest runs this package's tests on cgroups v2 with every controller:
// in a User-Mode Linux guest (Debian's kernel has cgroups, the memory, CPU, CFS
// bandwidth, pids and BPF device controllers) that mounts cgroup2, runs this test
// package's tests (built for it) as its container, and reports. The guest's root is the host's, read-only.
func TestCgroupsV2InAUMLGuest(t *testing.T) {
	if os.Getenv("BOBBIN_TEST_CGROUPS_V2_MOUNT") != "" {
		t.Skip("in the guest already")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: the guest's tests create cgroups and device nodes as the guest's root, which is the host's user")
	}
	// The v2 controllers are tested in a UML guest, on a kernel that runs on this host.
	kernel := umltest.Kernel(t, container.ProbeKernel)
	// This package's tests, built without the race detector: its shadow memory cannot be
	// mapped in a guest's address space.
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("needs the go tool to build the tests the guest runs")
	}
	self := filepath.Join(t.TempDir(), "cgroups.test")
	build := exec.Command(goTool, "test", "-c", "-o", self, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go test -c: %v\n%s", err, b)
	}
	host, _ := os.Hostname()
	e := &container.UMLExecutor{Kernel: kernel, Mconsole: "uml_mconsole", StateDir: t.TempDir(), TmpDir: "/dev/shm", MemOverheadMB: 64,
		BootTimeout: time.Minute, Hostname: host}
	if st, err := os.Stat(e.TmpDir); err != nil || !st.IsDir() {
		e.TmpDir = os.TempDir()
	}
	if err := e.CheckUML(); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(t.TempDir(), "guest")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	// The guest's init mounted cgroup2 and runs the container in /container, under a
	// memory limit; the tests' subtrees are its siblings, with cpu and pids delegated.
	script := filepath.Join(work, "launch_container.sh")
	body := "#!/bin/bash\n" +
		"echo '+cpu +pids +memory' >/sys/fs/cgroup/cgroup.subtree_control || exit 90\n" +
		"echo controllers: $(cat /sys/fs/cgroup/cgroup.subtree_control)\n" +
		"export BOBBIN_TEST_CGROUPS_V2_MOUNT=/sys/fs/cgroup TMPDIR=/dev/shm\n" +
		"exec " + self + " -test.run '^(" + strings.Join(v2Tests, "|") + ")$' -test.v -test.count=1 -test.timeout 8m\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(work, "console.out")
	p, err := e.Launch(context.Background(), container.Spec{ID: "container_1_0001_01_000099", Script: script, WorkDir: work,
		Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"}, OutputFile: out, MemoryMB: 1024})
	if err != nil {
		t.Fatal(err)
	}
	code := p.Wait()
	p.Stop(time.Second)
	b, _ := os.ReadFile(out)
	console := string(b)
	t.Logf("the guest's run (exit %d):\n%s", code, console)
	if code != 0 {
		t.Fatalf("the v2 tests in the guest exited %d", code)
	}
	for _, name := range v2Tests {
		if !regexp.MustCompile(`--- PASS: ` + name + `\b`).MatchString(console) {
			t.Errorf("%s did not pass on v2 in the guest", name)
		}
	}
	if strings.Contains(console, "--- SKIP") {
		t.Errorf("a test skipped in the guest: it did not run on v2")
	}
}
