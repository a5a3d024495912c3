package nodemanager

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func envOf(kv map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := kv[k]; return v, ok }
}

// Hadoop's launcher's derivations: the homes from HADOOP_HOME (2.x: HADOOP_PREFIX), the
// conf dir the NodeManager was started with, JAVA_HOME from the java on PATH; what is
// set already stays.
func TestLauncherEnvAsHadoopsLauncher(t *testing.T) {
	dir := t.TempDir()
	jdk := filepath.Join(dir, "jdk-17")
	if err := os.MkdirAll(filepath.Join(jdk, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(jdk, "bin", "java"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "java") // as /usr/bin/java -> /etc/alternatives/java -> the JDK's
	if err := os.Symlink(filepath.Join(jdk, "bin", "java"), link); err != nil {
		t.Fatal(err)
	}
	lookPath := func(string) (string, error) { return link, nil }
	vars, from := LauncherEnv(envOf(map[string]string{"HADOOP_PREFIX": "/opt/hadoop", "HADOOP_YARN_HOME": "/opt/yarn"}), "/etc/hadoop/conf", lookPath)
	want := map[string]string{"HADOOP_HOME": "/opt/hadoop", "HADOOP_COMMON_HOME": "/opt/hadoop", "HADOOP_HDFS_HOME": "/opt/hadoop", "HADOOP_MAPRED_HOME": "/opt/hadoop",
		"HADOOP_CONF_DIR": "/etc/hadoop/conf", "JAVA_HOME": jdk}
	if len(vars) != len(want) {
		t.Errorf("derived %v, want %v", vars, want)
	}
	for k, v := range want {
		if vars[k] != v || from[k] == "" {
			t.Errorf("%s = %q (from %q), want %q", k, vars[k], from[k], v)
		}
	}
	// Nothing to derive from: nothing set.
	vars, _ = LauncherEnv(envOf(nil), "", func(string) (string, error) { return "", errors.New("not found") })
	if len(vars) != 0 {
		t.Errorf("derived from nothing: %v", vars)
	}
}

// A node without Java or Hadoop is told what its containers will lack and which jobs
// fail; a node with both is told nothing.
func TestContainerEnvGapsNameWhatBreaks(t *testing.T) {
	gaps := ContainerEnvGaps(envOf(map[string]string{"HADOOP_HDFS_HOME": "/opt/hadoop"}))
	all := strings.Join(gaps, "\n")
	for _, want := range []string{"JAVA_HOME", "HADOOP_COMMON_HOME, HADOOP_YARN_HOME", "NoClassDefFoundError: org/apache/hadoop/service/CompositeService",
		"mapreduce.application.framework.path", "spark.yarn.archive", "HADOOP_MAPRED_HOME"} {
		if !strings.Contains(all, want) {
			t.Errorf("the gaps do not say %q:\n%s", want, all)
		}
	}
	full := map[string]string{"JAVA_HOME": "/usr/lib/jvm/java-17"}
	for _, k := range hadoopHomes {
		full[k] = "/opt/hadoop"
	}
	if gaps := ContainerEnvGaps(envOf(full)); len(gaps) != 0 {
		t.Errorf("a full environment has gaps: %v", gaps)
	}
}
