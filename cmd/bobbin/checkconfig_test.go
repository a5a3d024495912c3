package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bobbin-yarn/bobbin/container/umltest"
)

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func xmlProps(kv ...string) string {
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\"?>\n<configuration>\n")
	for i := 0; i+1 < len(kv); i += 2 {
		b.WriteString("<property><name>" + kv[i] + "</name><value>" + kv[i+1] + "</value></property>\n")
	}
	b.WriteString("</configuration>\n")
	return b.String()
}

// check-config lists every key set: read by Bobbin (with what it does), not applicable,
// or not read; and exits 0 when both daemons would start.
func TestCheckConfigListsEveryKey(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"yarn-site.xml": xmlProps("yarn.resourcemanager.hostname", "rm1.example.com", "yarn.example.not-a-key", "7",
			"yarn.resourcemanager.am.max-attempts", "4"),
		"capacity-scheduler.xml": xmlProps("yarn.scheduler.capacity.root.queues", "default", "yarn.scheduler.capacity.root.default.capacity", "100",
			"yarn.scheduler.capacity.root.default.minimum-user-limit-percent", "25",
			"yarn.scheduler.capacity.per-node-heartbeat.maximum-offswitch-assignments", "4"),
	})
	var out, errb bytes.Buffer
	if code := run([]string{"check-config", "--conf", dir}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s%s", code, out.String(), errb.String())
	}
	for _, want := range []string{
		"  read    yarn.resourcemanager.hostname = rm1.example.com\n          Host the RM addresses below default to.",
		"  read    yarn.resourcemanager.am.max-attempts = 4",
		"  unused  yarn.example.not-a-key = 7\n          not read by Bobbin: it has no effect here",
		"  read    yarn.scheduler.capacity.root.default.minimum-user-limit-percent = 25",
		"  n/a     yarn.scheduler.capacity.per-node-heartbeat.maximum-offswitch-assignments = 4\n          Bobbin does not assign per node heartbeat",
		"7 keys set: 6 read by Bobbin (or not applicable to it), 1 not read.",
		"resourcemanager: starts with this configuration.",
		"nodemanager: starts with this configuration.",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// What a daemon cannot honour is an ERROR naming the key (or the allocation file's
// element), and the exit status is 1.
func TestCheckConfigReportsWhatStopsADaemon(t *testing.T) {
	for name, tc := range map[string]struct {
		files map[string]string
		want  []string
	}{
		"scheduler class": {map[string]string{"yarn-site.xml": xmlProps("yarn.resourcemanager.scheduler.class", "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoScheduler")},
			[]string{"resourcemanager: would not start:", "ERROR", "yarn.resourcemanager.scheduler.class"}},
		"fair allocation file": {map[string]string{
			"yarn-site.xml":      xmlProps("yarn.resourcemanager.scheduler.class", "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler"),
			"fair-scheduler.xml": `<allocations><queue name="etl"><minResources>50%</minResources></queue></allocations>`},
			[]string{"Fair Scheduler allocation file", "resourcemanager: would not start:", "queue root.etl: <minResources> \"50%\": write it as amounts"}},
		"capacity key": {map[string]string{"capacity-scheduler.xml": xmlProps("yarn.scheduler.capacity.root.queues", "default",
			"yarn.scheduler.capacity.root.default.capacity", "100", "yarn.scheduler.capacity.root.default.acl_application_max_priority", "[user=alice max_priority=5]")},
			[]string{"ERROR", "acl_application_max_priority", "not implemented"}},
		"nodemanager key": {map[string]string{"yarn-site.xml": xmlProps("yarn.nodemanager.vmem-pmem-ratio", "lots")},
			[]string{"nodemanager: would not start:", "yarn.nodemanager.vmem-pmem-ratio"}},
	} {
		var out, errb bytes.Buffer
		if code := run([]string{"check-config", "--conf", writeFiles(t, tc.files)}, &out, &errb); code != 1 {
			t.Errorf("%s: exit %d, want 1:\n%s%s", name, code, out.String(), errb.String())
		}
		for _, want := range tc.want {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%s: output lacks %q:\n%s", name, want, out.String())
			}
		}
	}
}

// With the UML executor, check-config boots a probe guest with the configured kernel, as
// the NodeManager does at start, and reports a kernel that cannot run guests here.
func TestCheckConfigProbesTheUMLKernel(t *testing.T) {
	kernel := umltest.InstalledKernel(t)
	dir := writeFiles(t, map[string]string{"yarn-site.xml": xmlProps("bobbin.nodemanager.container-executor", "uml",
		"bobbin.nodemanager.uml.kernel", umltest.FPFaultKernel(t, kernel), "bobbin.nodemanager.uml.slirp", "", "bobbin.nodemanager.uml.tmp-dir", umltest.RAMDir())})
	var out, errb bytes.Buffer
	if code := run([]string{"check-config", "--conf", dir}, &out, &errb); code != 1 {
		t.Fatalf("exit %d, want 1:\n%s%s", code, out.String(), errb.String())
	}
	for _, want := range []string{"nodemanager: would not start:", "cannot run guests on this host", "errno = 14"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// The configurations kept in integration/testdata read cleanly: every key set is read.
func TestCheckConfigOnTestdata(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"check-config", "--conf", "../../integration/testdata/sls"}, &out, &errb); code != 0 || !strings.Contains(out.String(), ", 0 not read.") {
		t.Fatalf("exit %d:\n%s%s", code, out.String(), errb.String())
	}
}

// On a node without Java or Hadoop, check-config says what the NodeManager's containers
// would lack and which jobs that breaks (the NodeManager still starts: jobs may ship
// their framework); with HADOOP_HOME set, the launcher's derivations leave no gap.
func TestCheckConfigSaysWhatContainersLack(t *testing.T) {
	dir := writeFiles(t, map[string]string{"yarn-site.xml": xmlProps("yarn.resourcemanager.hostname", "rm1.example.com")})
	for _, k := range []string{"JAVA_HOME", "HADOOP_HOME", "HADOOP_PREFIX", "HADOOP_COMMON_HOME", "HADOOP_HDFS_HOME", "HADOOP_YARN_HOME", "HADOOP_MAPRED_HOME"} {
		t.Setenv(k, "")
	}
	t.Setenv("PATH", t.TempDir()) // no java on it
	var out, errb bytes.Buffer
	if code := run([]string{"check-config", "--conf", dir}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s%s", code, out.String(), errb.String())
	}
	for _, want := range []string{"nodemanager: starts with this configuration.\n  WARN  containers get no JAVA_HOME",
		"NoClassDefFoundError: org/apache/hadoop/service/CompositeService", "containers get no HADOOP_MAPRED_HOME"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	t.Setenv("JAVA_HOME", "/usr/lib/jvm/java-17")
	t.Setenv("HADOOP_HOME", "/opt/hadoop")
	out.Reset()
	run([]string{"check-config", "--conf", dir}, &out, &errb)
	if strings.Contains(out.String(), "WARN") {
		t.Errorf("with JAVA_HOME and HADOOP_HOME set, check-config warns:\n%s", out.String())
	}
}
