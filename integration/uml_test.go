package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/container"
	"github.com/bobbin-yarn/bobbin/container/umltest"
)

// requireUML skips a test when the UML packages are not installed, or when the UML
// kernel cannot run guests on this host (its probe's reason); it returns the kernel.
func requireUML(t *testing.T) string {
	t.Helper()
	kernel := umltest.Kernel(t, container.ProbeKernel)
	// The NodeManagers' guests have a network, by the route the kernel has.
	e := &container.UMLExecutor{Kernel: kernel, Mconsole: "uml_mconsole", Slirp: "/usr/bin/slirp-fullbolt", StateDir: t.TempDir(), TmpDir: umltest.RAMDir()}
	if err := e.CheckUML(); err != nil {
		t.Skipf("skipping the UML executor test: %v (apt-get install uml-utilities slirp vdeplug libvdeplug-slirp)", err)
	}
	return kernel
}

// umlMemOverheadMB is the guests' memory beside their container's: the JVMs of AMs and
// tasks need room beside the container's memory in the guest.
const umlMemOverheadMB = 320

// umlNM makes a NodeManager run its containers in User-Mode Linux guests of kernel.
func umlNM(c *nsCluster, kernel string, props map[string]string) {
	props["bobbin.nodemanager.container-executor"] = "uml"
	props["bobbin.nodemanager.uml.kernel"] = kernel
	props["bobbin.nodemanager.uml.memory-overhead-mb"] = fmt.Sprint(umlMemOverheadMB)
	// Jobs with a file:// default FS write their output under the client's directory.
	// and an AM in a guest writes its job's history files to the staging dir.
	props["bobbin.nodemanager.uml.extra-rw-dirs"] = c.path("work") + "," + filepath.Join(c.confDir, "tmp") + "," + c.path("staging")
	props["yarn.nodemanager.delete.debug-delay-sec"] = "600"
	os.MkdirAll(filepath.Join(c.confDir, "tmp"), 0o755)
}

// TestDistributedShellInUMLGuests is the UML executor's acceptance on Bobbin's RM and
// NodeManager with the real Hadoop 2.7.3 distributed shell:
//   - a job with an AM and one shell container succeeds, both run in guests (the AM's
//     work dir holds the guest's exit file) and the shell's output says /proc/cpuinfo is
//     "User Mode Linux";
//   - in a second job of two containers, the one whose command is `exit 3` is reported
//     to the AM with exit status 3, and the one that outgrows its memory is killed with
//     exit status -104 and a diagnostic naming the guest's OOM killer. (One job for both
//     saves an AM's start in a guest, a minute or two of the suite.)
func TestDistributedShellInUMLGuests(t *testing.T) {
	t.Parallel() // its own network namespace: see parallelism in cluster_test.go
	kernel := requireUML(t)
	c := newNSCluster(t)
	c.bobbinNM = true
	c.nmProps = func(_ int, p map[string]string) { umlNM(c, kernel, p) }
	dshell := c.dshellJar()
	// Shell commands reach the container through the launch script's exec /bin/bash -c
	// "...", so they hold no double quotes.
	ds := func(command string, n int, log, name string) string {
		return fmt.Sprintf("timeout 420 $Y jar %[1]s -jar %[1]s -shell_command '%[2]s' -num_containers %[3]d -master_memory 256 -container_memory 128 > %[4]s 2>&1; echo \"%[5]s exit $?\"",
			dshell, command, n, c.path(log), name)
	}
	// The memory hog: tail buffering an endless line (its guest, boot included, ends in
	// 19 s alone) instead of a shell variable fed through a pipe (55 s, a syscall per 4 KB
	// under ptrace); but the host must let the guest map all its pages, or UML kills tail
	// before the OOM killer can.
	hog := "tail /dev/zero"
	if _, need, short, err := (&container.UMLExecutor{MemOverheadMB: umlMemOverheadMB}).MapCountShortfall(128); err != nil || short {
		hog = "x=$(head -c 1500000000 /dev/zero | tr -c x y); echo survived ${#x}"
		t.Logf("the host's vm.max_map_count is below the %d pages of the hog's guest (%v): the slower hog, which the OOM killer ends before it needs them (.ci/run raises the limit)", need, err)
	}
	// Container 2 fails with exit 3, container 3 is the hog.
	failAndHog := "case $CONTAINER_ID in *2) echo about to fail; exit 3;; *) " + hog + ";; esac"
	start := time.Now()
	out, err := c.run(t, 15*time.Minute, "Y=$HADOOP_HOME/bin/yarn\n"+
		ds("grep -m1 vendor_id /proc/cpuinfo", 1, "ds1.log", "cpuinfo")+"\n"+ds(failAndHog, 2, "ds2.log", "exit3+hog")+"\n"+
		"$Y application -list -appStates ALL 2>&1 | grep application_")
	t.Logf("two distributed-shell jobs in UML guests: %v", time.Since(start))
	apps := appDirs(c.path("nm-logs"))
	fail := func(what string) {
		c.keep(t)
		guests := ""
		if len(apps) == 2 {
			for n := 2; n <= 3; n++ {
				for _, f := range []string{"stdout", "stderr"} {
					guests += fmt.Sprintf("\ncontainer %d %s:\n%s", n, f, c.logTail(filepath.Join("nm-logs", apps[1], containerOf(apps[1], n), f), 30))
				}
			}
		}
		load, _ := os.ReadFile("/proc/loadavg")
		t.Fatalf("%s\nerr %v\noutput:\n%s\nNM log:\n%s\nds1:\n%s\nds2:\n%s%s\nhost load average: %s", what, err, out, c.logTail("nm.log", 60),
			c.logTail("ds1.log", 20), c.logTail("ds2.log", 20), guests, load)
	}
	if !strings.Contains(out, "cpuinfo exit 0") {
		fail("distributed shell in UML guests did not succeed")
	}
	if len(apps) != 2 {
		fail(fmt.Sprintf("%d application log dirs, want 2: %v", len(apps), apps))
	}
	// Job 1: the shell container's output, and the AM's guest exit file.
	shellOut, _ := os.ReadFile(filepath.Join(c.path("nm-logs"), apps[0], containerOf(apps[0], 2), "stdout"))
	if !strings.Contains(string(shellOut), "User Mode Linux") {
		fail(fmt.Sprintf("the shell container's stdout %q does not show a UML guest", shellOut))
	}
	amExit := filepath.Join(c.path("nm-local"), "usercache", "root", "appcache", apps[0], containerOf(apps[0], 1), ".bobbin-uml", "exit")
	if b, err := os.ReadFile(amExit); err != nil || !strings.HasPrefix(string(b), "0 ") {
		fail(fmt.Sprintf("the AM's guest exit file %s: %q %v", amExit, b, err))
	}
	// What the RM hands the AMs in allocate (completed container statuses).
	rmLog := c.logTail("rm.log", 100000)
	completed := func(app string, n int, status string) bool {
		return regexp.MustCompile(`containers completed.*containers="?[^"]*\b` + containerOf(app, n) + `:` + regexp.QuoteMeta(status) + `[ "\n]`).MatchString(rmLog)
	}
	// Job 2: exit 3 reaches the AM, and so does the hog's end, out of memory in its guest.
	if !completed(apps[1], 2, "3") {
		fail("the exit-3 container was not reported with exit status 3")
	}
	nmLog := c.logTail("nm.log", 100000)
	if !completed(apps[1], 3, "-104") || !strings.Contains(nmLog, "ran out of memory in its User-Mode Linux guest") {
		fail("the memory hog was not reported with -104 and the guest's diagnostic")
	}
	for _, l := range strings.Split(nmLog, "\n") {
		if strings.Contains(l, "ran out of memory") {
			t.Log(strings.TrimSpace(l))
			break
		}
	}
}

func appDirs(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "application_") {
			out = append(out, e.Name())
		}
	}
	return out
}

// containerOf is container n of an application's first attempt.
func containerOf(app string, n int) string {
	return fmt.Sprintf("container_%s_01_%06d", strings.TrimPrefix(app, "application_"), n)
}
