package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// requireUML skips a test when the UML packages are not installed.
func requireUML(t *testing.T) {
	t.Helper()
	for _, bin := range []string{"linux.uml", "uml_mconsole", "slirp-fullbolt"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s not installed (apt-get install user-mode-linux uml-utilities slirp); skipping the UML executor test", bin)
		}
	}
}

// umlNM makes a NodeManager run its containers in User-Mode Linux guests.
func umlNM(c *nsCluster, props map[string]string) {
	props["bobbin.nodemanager.container-executor"] = "uml"
	// The JVMs of AMs and tasks need room beside the container's memory in the guest.
	props["bobbin.nodemanager.uml.memory-overhead-mb"] = "320"
	// Jobs with a file:// default FS write their output under the client's directory.
	props["bobbin.nodemanager.uml.extra-rw-dirs"] = c.path("work") + "," + filepath.Join(c.confDir, "tmp")
	props["yarn.nodemanager.delete.debug-delay-sec"] = "600"
	os.MkdirAll(filepath.Join(c.confDir, "tmp"), 0o755)
}

// TestDistributedShellInUMLGuests is the UML executor's acceptance on Bobbin's RM and
// NodeManager with the real Hadoop 2.7.3 distributed shell:
//   - a job with an AM and one shell container succeeds, both run in guests (the AM's
//     work dir holds the guest's exit file) and the shell's output says /proc/cpuinfo is
//     "User Mode Linux";
//   - a container whose command is `exit 3` is reported to the AM with exit status 3;
//   - a container that outgrows its memory is killed with exit status -104 and a
//     diagnostic naming the guest's OOM killer.
func TestDistributedShellInUMLGuests(t *testing.T) {
	requireUML(t)
	c := newNSCluster(t)
	c.bobbinNM = true
	c.nmProps = func(_ int, p map[string]string) { umlNM(c, p) }
	dshell := filepath.Join(c.home, "share", "hadoop", "yarn", "hadoop-yarn-applications-distributedshell-2.7.3.jar")
	scripts := map[string]string{
		"cpuinfo.sh": "grep -m1 vendor_id /proc/cpuinfo\n",
		"exit3.sh":   "echo about to fail\nexit 3\n",
		"hog.sh":     "x=$(head -c 1500000000 /dev/zero | tr '\\0' a)\necho survived ${#x}\n",
	}
	for name, body := range scripts {
		if err := os.WriteFile(c.path(name), []byte("#!/bin/bash\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ds := func(script, log string) string {
		return fmt.Sprintf("timeout 300 $Y jar %[1]s -jar %[1]s -shell_script %[2]s -num_containers 1 -master_memory 256 -container_memory 128 > %[3]s 2>&1; echo \"%[4]s exit $?\"",
			dshell, c.path(script), c.path(log), strings.TrimSuffix(script, ".sh"))
	}
	start := time.Now()
	out, err := c.run(t, 15*time.Minute, "Y=$HADOOP_HOME/bin/yarn\n"+
		ds("cpuinfo.sh", "ds1.log")+"\n"+ds("exit3.sh", "ds2.log")+"\n"+ds("hog.sh", "ds3.log")+"\n"+
		"$Y application -list -appStates ALL 2>&1 | grep application_")
	t.Logf("three distributed-shell jobs in UML guests: %v", time.Since(start))
	fail := func(what string) {
		c.keep(t)
		t.Fatalf("%s\nerr %v\noutput:\n%s\nNM log:\n%s\nds1:\n%s\nds2:\n%s\nds3:\n%s", what, err, out, c.logTail("nm.log", 60),
			c.logTail("ds1.log", 20), c.logTail("ds2.log", 20), c.logTail("ds3.log", 20))
	}
	if !strings.Contains(out, "cpuinfo exit 0") {
		fail("distributed shell in UML guests did not succeed")
	}
	apps := appDirs(c.path("nm-logs"))
	if len(apps) != 3 {
		fail(fmt.Sprintf("%d application log dirs, want 3: %v", len(apps), apps))
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
	amLog := func(app string) string {
		b, _ := os.ReadFile(filepath.Join(c.path("nm-logs"), app, containerOf(app, 1), "AppMaster.stderr"))
		return string(b)
	}
	// Job 2: exit 3 reaches the AM.
	if l := amLog(apps[1]); !strings.Contains(l, "exitStatus=3") {
		fail("the AM of the exit-3 job did not see exit status 3:\n" + tail(l, 20))
	}
	// Job 3: out of memory in the guest.
	if l := amLog(apps[2]); !strings.Contains(l, "exitStatus=-104") || !strings.Contains(l, "ran out of memory in its User-Mode Linux guest") {
		fail("the AM of the memory hog did not see -104 with the guest's diagnostic:\n" + tail(l, 20))
	}
	for _, l := range strings.Split(c.logTail("nm.log", 100000), "\n") {
		if strings.Contains(l, "ran out of memory") {
			t.Log(strings.TrimSpace(l))
			break
		}
	}
}

// appDirs lists application_* directories under dir, oldest first.
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
