package nodemanager

// Java auxiliary services (Spark's YarnShuffleService, Tez's ShuffleHandler, ...): an
// admin's yarn-site.xml names them as for the Java NodeManager
// (yarn.nodemanager.aux-services.<name>.class, and in 3.x .classpath), and each runs in
// a helper JVM (auxservices/javahost) on the node's Hadoop jars and configuration.

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/nodemanager/auxservices/javahost"
)

// javaAux is one Java auxiliary service as configured.
type javaAux struct {
	Name, Class string
	// Classpath is yarn.nodemanager.aux-services.<name>.classpath as written: the Java
	// NodeManager splits it on ':' (not ','), takes DIR/* for a directory's jars and DIR
	// for its classes, and skips entries that are not there.
	Classpath string
}

// The Java NodeManager's rule for service names (they become environment variables).
var auxName = regexp.MustCompile(`^[A-Za-z_]+[A-Za-z0-9_]*$`)

// readJavaAux reads the services other than the built-in shuffle; one Bobbin cannot run
// is refused, naming its key.
func readJavaAux(c *conf.Configuration, names []string) ([]javaAux, error) {
	var out []javaAux
	var errs []error
	for _, name := range names {
		if name == shuffleService {
			continue
		}
		if !auxName.MatchString(name) {
			errs = append(errs, &conf.ValueError{Source: c.Source("yarn.nodemanager.aux-services"), Key: "yarn.nodemanager.aux-services", Value: name,
				Reason: "is not a valid auxiliary service name (letters, digits and _, not starting with a digit)"})
			continue
		}
		prefix := "yarn.nodemanager.aux-services." + name
		class, err := c.Trimmed(prefix + ".class")
		if err == nil && class == "" {
			err = &conf.ValueError{Source: c.Source(prefix + ".class"), Key: prefix + ".class", Value: "",
				Reason: fmt.Sprintf("names no class for auxiliary service %s", name)}
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if remote, _ := c.Trimmed(prefix + ".remote-classpath"); remote != "" {
			errs = append(errs, &conf.ValueError{Source: c.Source(prefix + ".remote-classpath"), Key: prefix + ".remote-classpath", Value: remote,
				Reason: "a classpath fetched from a file system is not supported by Bobbin's NodeManager: put the jars on the node and name them in " + prefix + ".classpath"})
			continue
		}
		cp, err := c.Trimmed(prefix + ".classpath")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, javaAux{Name: name, Class: class, Classpath: cp})
	}
	return out, errors.Join(errs...)
}

// javaAuxService is the helper-JVM service for a, on this node's Java and Hadoop.
func (nm *NodeManager) javaAuxService(a javaAux) (*javahost.Service, error) {
	java := "java"
	if home := os.Getenv("JAVA_HOME"); home != "" {
		java = filepath.Join(home, "bin", "java")
	} else if p, err := exec.LookPath("java"); err == nil {
		java = p
	} else {
		return nil, fmt.Errorf("auxiliary service %s (%s) runs in a JVM: set JAVA_HOME or put java on PATH", a.Name, a.Class)
	}
	cp, err := nm.javaAuxClasspath(a)
	if err != nil {
		return nil, err
	}
	for _, p := range strings.Split(a.Classpath, ":") {
		if p == "" {
			continue
		}
		st, err := os.Stat(strings.TrimSuffix(p, "/*"))
		switch {
		case err != nil:
			// The Java NodeManager skips it without a word, leaving a ClassNotFoundException
			// to explain.
			nm.log.WithFields(logrus.Fields{"service": a.Name, "entry": p}).Warnf(
				"yarn.nodemanager.aux-services.%s.classpath names what is not there (entries are split on ':'); it is skipped: %v", a.Name, err)
		case st.IsDir() && !strings.HasSuffix(p, "/*"):
			if jars, _ := filepath.Glob(filepath.Join(p, "*.jar")); len(jars) > 0 {
				nm.log.WithFields(logrus.Fields{"service": a.Name, "entry": p}).Warnf(
					"yarn.nodemanager.aux-services.%s.classpath names a directory that holds jars: as the Java NodeManager reads it, a directory is one of classes; %s/* is its jars", a.Name, p)
			}
		}
	}
	cfg := javahost.Config{Name: a.Name, Class: a.Class, Java: java, Classpath: cp, ServiceClasspath: a.Classpath,
		WorkDir:      filepath.Join(nm.settings.LocalDirs[0], "aux-services", a.Name),
		StartTimeout: 2 * time.Minute, CallTimeout: time.Minute, Logger: nm.log}
	if nm.settings.Recovery {
		// Where the Java NodeManager puts its services' recovery state.
		cfg.RecoveryDir = filepath.Join(nm.settings.RecoveryDir, "nm-aux-services", a.Name)
	}
	return javahost.New(cfg), nil
}

// javaAuxClasspath is the helper's classpath, the Java NodeManager's own: the
// configuration directory, Hadoop's common, HDFS and YARN jars (from HADOOP_COMMON_HOME,
// HADOOP_HDFS_HOME, HADOOP_YARN_HOME, else HADOOP_HOME) and HADOOP_CLASSPATH. A service's
// .classpath is not on it: the helper loads that in a class loader of its own, as the
// Java NodeManager does (Spark's service brings a newer netty than Hadoop's).
func (nm *NodeManager) javaAuxClasspath(a javaAux) ([]string, error) {
	var cp []string
	confDir := nm.opts.ConfDir
	if confDir == "" {
		confDir = os.Getenv("HADOOP_CONF_DIR")
	}
	if confDir != "" {
		cp = append(cp, confDir)
	}
	home := func(env string) string {
		if v := os.Getenv(env); v != "" {
			return v
		}
		return os.Getenv("HADOOP_HOME")
	}
	for _, part := range []struct{ env, dir string }{
		{"HADOOP_COMMON_HOME", "common"}, {"HADOOP_HDFS_HOME", "hdfs"}, {"HADOOP_YARN_HOME", "yarn"},
	} {
		h := home(part.env)
		if h == "" {
			return nil, fmt.Errorf("auxiliary service %s (%s) needs the node's Hadoop jars for AuxiliaryService: set %s or HADOOP_HOME", a.Name, a.Class, part.env)
		}
		base := filepath.Join(h, "share", "hadoop", part.dir)
		cp = append(cp, filepath.Join(base, "*"), filepath.Join(base, "lib", "*"))
	}
	for _, p := range strings.Split(os.Getenv("HADOOP_CLASSPATH"), ":") {
		if p != "" {
			cp = append(cp, p)
		}
	}
	return cp, nil
}
