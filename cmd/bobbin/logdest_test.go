package main

import (
	"os"
	"path/filepath"
	"testing"
)

// Standard error unless asked: --log-dir, or the environment `yarn --daemon start`
// sets for the Java daemons (a file appender in the root logger and its directory).
func TestLogDestination(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	for _, c := range []struct {
		flag       string
		env        map[string]string
		dir, level string
	}{
		{"", nil, "", ""},
		{"", map[string]string{"HADOOP_LOG_DIR": "/var/log/hadoop"}, "", ""}, // a log dir alone: the console still
		{"", map[string]string{"YARN_ROOT_LOGGER": "INFO,RFA", "YARN_LOG_DIR": "/var/log/yarn"}, "/var/log/yarn", "info"},
		{"", map[string]string{"HADOOP_ROOT_LOGGER": "DEBUG,DRFA", "HADOOP_LOG_DIR": "/var/log/hadoop"}, "/var/log/hadoop", "debug"},
		{"/tmp/x", map[string]string{"YARN_ROOT_LOGGER": "WARN,console"}, "/tmp/x", "warn"},
	} {
		dir, level := logDestination(c.flag, env(c.env))
		if dir != c.dir || level != c.level {
			t.Errorf("%q %v: %q %q, want %q %q", c.flag, c.env, dir, level, c.dir, c.level)
		}
	}
}

// The rolling settings come from the conf dir's log4j.properties as Hadoop's do.
func TestLog4jRolling(t *testing.T) {
	dir := t.TempDir()
	if max, n, err := log4jRolling(dir); err != nil || max != 256<<20 || n != 20 {
		t.Errorf("defaults: %d %d %v", max, n, err)
	}
	os.WriteFile(filepath.Join(dir, "log4j.properties"), []byte("# a comment\nhadoop.log.maxfilesize=64MB\nhadoop.log.maxbackupindex = 5\nlog4j.rootLogger=${hadoop.root.logger}\n"), 0o644)
	if max, n, err := log4jRolling(dir); err != nil || max != 64<<20 || n != 5 {
		t.Errorf("from the file: %d %d %v", max, n, err)
	}
	os.WriteFile(filepath.Join(dir, "log4j.properties"), []byte("hadoop.log.maxfilesize=big\n"), 0o644)
	if _, _, err := log4jRolling(dir); err == nil {
		t.Error("a bad size accepted")
	}
}
