package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bobbin-yarn/bobbin/internal/logfile"
)

// Where a daemon logs. Standard error by default (make run, a terminal, systemd's
// journal); a rolling file where the admin's settings for the Java daemons say:
// --log-dir, or $YARN_LOG_DIR (then $HADOOP_LOG_DIR) when $YARN_ROOT_LOGGER (then
// $HADOOP_ROOT_LOGGER) names a file appender (RFA, DRFA), as `yarn --daemon start`
// sets it. The file is Hadoop 2's yarn-<user>-<daemon>-<host>.log, rolled as the
// conf dir's log4j.properties says (hadoop.log.maxfilesize, hadoop.log.maxbackupindex;
// 256 MB and 20 by default, as Hadoop's).

// logDestination is the log directory and level the flags and environment ask for ("":
// standard error; level "" when the environment names none).
func logDestination(flagDir string, getenv func(string) string) (dir, level string) {
	root := firstSet(getenv, "YARN_ROOT_LOGGER", "HADOOP_ROOT_LOGGER")
	if flagDir != "" {
		return flagDir, rootLevel(root)
	}
	appenders := strings.ToUpper(root)
	if !strings.Contains(appenders, "RFA") {
		return "", ""
	}
	return firstSet(getenv, "YARN_LOG_DIR", "HADOOP_LOG_DIR"), rootLevel(root)
}

func firstSet(getenv func(string) string, keys ...string) string {
	for _, k := range keys {
		if v := strings.TrimSpace(getenv(k)); v != "" {
			return v
		}
	}
	return ""
}

// rootLevel is the level of a log4j root logger setting ("INFO,RFA": info).
func rootLevel(root string) string {
	lv, _, _ := strings.Cut(root, ",")
	switch lv = strings.ToLower(strings.TrimSpace(lv)); lv {
	case "trace", "debug", "info", "warn", "error", "fatal":
		return lv
	}
	return ""
}

// log4jRolling reads hadoop.log.maxfilesize and hadoop.log.maxbackupindex from a
// log4j.properties (missing file or keys: Hadoop's defaults).
func log4jRolling(confDir string) (maxBytes int64, backups int, err error) {
	maxBytes, backups = 256<<20, 20
	if confDir == "" {
		return maxBytes, backups, nil
	}
	f, err := os.Open(filepath.Join(confDir, "log4j.properties"))
	if err != nil {
		return maxBytes, backups, nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !ok || strings.HasPrefix(k, "#") {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "hadoop.log.maxfilesize":
			n, err := log4jSize(v)
			if err != nil {
				return 0, 0, fmt.Errorf("%s: hadoop.log.maxfilesize = %q: %w", f.Name(), v, err)
			}
			maxBytes = n
		case "hadoop.log.maxbackupindex":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return 0, 0, fmt.Errorf("%s: hadoop.log.maxbackupindex = %q: not a count", f.Name(), v)
			}
			backups = n
		}
	}
	return maxBytes, backups, sc.Err()
}

// log4jSize reads log4j's file sizes: a number with KB, MB or GB.
func log4jSize(v string) (int64, error) {
	u := strings.ToUpper(v)
	mult := int64(1)
	for _, s := range []struct {
		suffix string
		m      int64
	}{{"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}} {
		if strings.HasSuffix(u, s.suffix) {
			u, mult = strings.TrimSpace(strings.TrimSuffix(u, s.suffix)), s.m
			break
		}
	}
	n, err := strconv.ParseInt(u, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("not a size (like 256MB)")
	}
	return n * mult, nil
}

// openLogFile opens the daemon's rolling log file in dir.
func openLogFile(dir, daemon, confDir string) (*logfile.Writer, error) {
	maxBytes, backups, err := log4jRolling(confDir)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	return logfile.Open(dir, fmt.Sprintf("yarn-%s-%s-%s.log", currentUser(), daemon, host), maxBytes, backups)
}
