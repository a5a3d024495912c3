package nodemanager

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A Java NodeManager is started by Hadoop's launcher (the yarn script and
// hadoop-config.sh), which exports JAVA_HOME, HADOOP_CONF_DIR and the HADOOP_*_HOME
// variables; its containers inherit them, and the default classpaths of MapReduce and
// of YARN applications are written in them ($HADOOP_COMMON_HOME/share/hadoop/common/*,
// $HADOOP_MAPRED_HOME/share/hadoop/mapreduce/*). `bobbin nodemanager` is its own
// launcher: LauncherEnv derives what Hadoop's would, and ContainerEnvGaps says what is
// still missing and which jobs that breaks.

// hadoopHomes are the variables Hadoop's launcher sets to HADOOP_HOME when unset.
var hadoopHomes = []string{"HADOOP_COMMON_HOME", "HADOOP_HDFS_HOME", "HADOOP_YARN_HOME", "HADOOP_MAPRED_HOME"}

// LauncherEnv is what Hadoop's launcher would add to the NodeManager's environment
// (getenv): HADOOP_HOME from 2.x's HADOOP_PREFIX; the four HADOOP_*_HOME from
// HADOOP_HOME; HADOOP_CONF_DIR from the configuration directory the NodeManager was
// started with (yarn --config), else HADOOP_HOME/etc/hadoop; JAVA_HOME from the java on
// PATH (Hadoop's scripts stop without it; Bobbin's NodeManager is not a JVM and has none
// of its own). Each value comes with where it came from.
func LauncherEnv(getenv func(string) (string, bool), confDir string, lookPath func(string) (string, error)) (vars map[string]string, from map[string]string) {
	vars, from = map[string]string{}, map[string]string{}
	get := func(k string) string {
		if v, ok := vars[k]; ok {
			return v
		}
		v, _ := getenv(k)
		return v
	}
	set := func(k, v, src string) {
		if get(k) == "" && v != "" {
			vars[k], from[k] = v, src
		}
	}
	set("HADOOP_HOME", get("HADOOP_PREFIX"), "HADOOP_PREFIX")
	if home := get("HADOOP_HOME"); home != "" {
		for _, k := range hadoopHomes {
			set(k, home, "HADOOP_HOME")
		}
	}
	if confDir != "" {
		// As yarn --config: the directory the daemon reads is its containers' too,
		// whatever the environment said, and absolute (containers run elsewhere).
		if abs, err := filepath.Abs(confDir); err == nil {
			confDir = abs
		}
		if cur, _ := getenv("HADOOP_CONF_DIR"); cur != confDir {
			vars["HADOOP_CONF_DIR"], from["HADOOP_CONF_DIR"] = confDir, "--conf"
		}
	} else if home := get("HADOOP_HOME"); home != "" {
		if st, err := os.Stat(filepath.Join(home, "etc", "hadoop")); err == nil && st.IsDir() {
			set("HADOOP_CONF_DIR", filepath.Join(home, "etc", "hadoop"), "HADOOP_HOME")
		}
	}
	if get("JAVA_HOME") == "" && lookPath != nil {
		if java, err := lookPath("java"); err == nil {
			if real, err := filepath.EvalSymlinks(java); err == nil && filepath.Base(filepath.Dir(real)) == "bin" {
				set("JAVA_HOME", filepath.Dir(filepath.Dir(real)), "the java on PATH ("+java+")")
			}
		}
	}
	return vars, from
}

// ContainerEnvGaps says which of the variables MapReduce, Spark and the distributed shell
// rely on the NodeManager's environment (getenv) leaves unset, and what each breaks.
// Nothing is wrong with a node that runs only jobs which ship their own framework; the
// words say how.
func ContainerEnvGaps(getenv func(string) (string, bool)) []string {
	unset := func(keys ...string) []string {
		var out []string
		for _, k := range keys {
			if v, ok := getenv(k); !ok || v == "" {
				out = append(out, k)
			}
		}
		return out
	}
	var gaps []string
	if len(unset("JAVA_HOME")) > 0 {
		gaps = append(gaps, "containers get no JAVA_HOME (unset, and no java on PATH): MapReduce and Spark containers run $JAVA_HOME/bin/java and fail with "+
			"\"/bin/java: No such file or directory\"; install a JDK or set JAVA_HOME")
	}
	if u := unset("HADOOP_COMMON_HOME", "HADOOP_HDFS_HOME", "HADOOP_YARN_HOME"); len(u) > 0 {
		gaps = append(gaps, fmt.Sprintf("containers get no %s (unset, and no HADOOP_HOME to derive them from): an application master whose classpath is "+
			"yarn.application.classpath's default ($HADOOP_COMMON_HOME/share/hadoop/common/*, ...) fails with NoClassDefFoundError: org/apache/hadoop/service/CompositeService "+
			"(MapReduce, the distributed shell); set HADOOP_HOME to a Hadoop install, or have jobs ship one: MapReduce with mapreduce.application.framework.path, "+
			"Spark with spark.yarn.archive or spark.yarn.jars (README: \"Nodes without a Hadoop install\")", strings.Join(u, ", ")))
	}
	if len(unset("HADOOP_MAPRED_HOME")) > 0 {
		gaps = append(gaps, "containers get no HADOOP_MAPRED_HOME: MapReduce jobs whose mapreduce.application.classpath is the default "+
			"($HADOOP_MAPRED_HOME/share/hadoop/mapreduce/*) cannot start their application master (its classes are not on the classpath), "+
			"unless they ship the framework (mapreduce.application.framework.path) or set yarn.app.mapreduce.am.env and mapreduce.map.env/mapreduce.reduce.env")
	}
	return gaps
}
