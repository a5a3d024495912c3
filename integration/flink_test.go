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

// flinkVersion is the Flink integration/peers/fetch.sh fetches (PyPI's
// apache-flink-libraries, whose lib directory holds flink-dist).
const flinkVersion = "1.20.3"

// flinkJavaOpts are the options Flink's distribution puts in env.java.default-opts.all
// (its conf/config.yaml) for Java 17: Flink's RPC and Kryo serialization need them.
const flinkJavaOpts = "--add-exports=java.base/sun.net.util=ALL-UNNAMED --add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED " +
	"--add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED " +
	"--add-opens=java.base/java.net=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED " +
	"--add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.text=ALL-UNNAMED " +
	"--add-opens=java.base/java.time=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.util.concurrent=ALL-UNNAMED " +
	"--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED --add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED"

// requireFlink is Flink's lib directory, or skips the test.
func requireFlink(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(peersCache(), "flink-"+flinkVersion)
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err != nil {
		t.Skipf("Flink %s is not in the peers cache (%s): run integration/peers/fetch.sh (.ci/run does)", flinkVersion, dir)
	}
	if _, err := exec.LookPath("javac"); err != nil {
		t.Skip("needs javac to compile the Flink test job (the JDK; .ci/run installs it)")
	}
	return filepath.Join(dir, "lib")
}

// flinkJob compiles testdata/flink/BobbinFlinkWordCount.java against flink-dist into
// dir/bobbin-flink-wordcount.jar.
func flinkJob(t *testing.T, lib, dir string) string {
	t.Helper()
	src, err := filepath.Abs("testdata/flink/BobbinFlinkWordCount.java")
	if err != nil {
		t.Fatal(err)
	}
	classes := filepath.Join(dir, "flink-job-classes")
	jar := filepath.Join(dir, "bobbin-flink-wordcount.jar")
	for _, args := range [][]string{
		{"javac", "-nowarn", "-d", classes, "-cp", filepath.Join(lib, "flink-dist-"+flinkVersion+".jar"), src},
		{"jar", "cfe", jar, "BobbinFlinkWordCount", "-C", classes, "."}, // Main-Class: Flink's entry point
	} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	return jar
}

// TestFlinkWordCountApplicationMode runs a Flink word count in YARN application mode
// (`flink run-application -t yarn-application`, Flink's CLI run by its class) on Bobbin's
// RM and NodeManager, on Apache 3.4.2's (and each mix: pairings), with the same configuration
// (issue 47 item 5): the client ships flink-dist and the job jar, the JobManager runs as the AM and asks
// for a TaskManager container, and the job's output must hold the words' counts.
func TestFlinkWordCountApplicationMode(t *testing.T) {
	t.Parallel() // its subtests are namespace clusters
	lib := requireFlink(t)
	for _, setup := range pairings() {
		t.Run(setup.name, func(t *testing.T) {
			t.Parallel() // its own network namespace
			c := newNSClusterVersion(t, hadoop34)
			c.apacheRM, c.bobbinNM = setup.apacheRM, setup.bobbinNM
			job := flinkJob(t, lib, c.dir)
			// Only what the job needs is shipped: flink-dist (Flink's runtime and its YARN
			// deployment) and log4j.
			slim := c.path("flink-lib")
			os.MkdirAll(slim, 0o755)
			jars, _ := filepath.Glob(filepath.Join(lib, "*.jar"))
			for _, j := range jars {
				if b := filepath.Base(j); strings.HasPrefix(b, "flink-dist-") || strings.HasPrefix(b, "log4j-") {
					if err := os.Symlink(j, filepath.Join(slim, b)); err != nil {
						t.Fatal(err)
					}
				}
			}
			flinkConf := c.path("flink-conf")
			os.MkdirAll(flinkConf, 0o755)
			config := strings.Join([]string{
				"jobmanager.memory.process.size: 1024m",
				"taskmanager.memory.process.size: 1280m",
				"taskmanager.memory.managed.size: 64m",
				"taskmanager.numberOfTaskSlots: 1",
				"parallelism.default: 1",
				"yarn.application-attempts: 1",
				"classloader.check-leaked-classloader: false",
				"env.java.opts.all: " + flinkJavaOpts,
			}, "\n") + "\n"
			log4j := "rootLogger.level = INFO\nrootLogger.appenderRef.console.ref = ConsoleAppender\nappender.console.name = ConsoleAppender\n" +
				"appender.console.type = CONSOLE\nappender.console.layout.type = PatternLayout\nappender.console.layout.pattern = %d{ISO8601} %-5p %c - %m%n\n"
			for name, body := range map[string]string{"config.yaml": config, "log4j.properties": log4j, "log4j-cli.properties": log4j} {
				if err := os.WriteFile(filepath.Join(flinkConf, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var in strings.Builder
			want := map[string]int{}
			for i := 1; i <= 9; i++ {
				w := fmt.Sprintf("word%d", i)
				for j := 0; j < i*7; j++ {
					in.WriteString(w + " ")
					want[w]++
				}
				in.WriteString("\n")
			}
			input, output := c.path("flink-in.txt"), c.path("flink-out")
			if err := os.WriteFile(input, []byte(in.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			script := fmt.Sprintf(`export FLINK_CONF_DIR=%[1]s FLINK_LIB_DIR=%[2]s
export HADOOP_CLASSPATH=$($HADOOP_HOME/bin/hadoop classpath)
S=$(date +%%s.%%N)
timeout 240 $JAVA_HOME/bin/java %[3]s -Dlog4j.configurationFile=file://%[1]s/log4j-cli.properties -cp "%[2]s/*:$HADOOP_CLASSPATH" \
  org.apache.flink.client.cli.CliFrontend run-application -t yarn-application %[4]s file://%[5]s file://%[6]s > flink.log 2>&1
echo "=== submit_exit $?"
APP=$(grep -o 'application_[0-9]*_[0-9]*' flink.log | head -1)
for i in $(seq 1 480); do
  STATE=$(curl -s "http://127.0.0.1:8088/ws/v1/cluster/apps/$APP" 2>/dev/null | grep -o '"finalStatus" *: *"[A-Z]*"' | grep -o '[A-Z]*"$' | tr -d '"')
  [ -n "$STATE" ] && [ "$STATE" != UNDEFINED ] && break
  sleep 0.5
done
echo "=== final $STATE"
echo "=== seconds $(echo "$(date +%%s.%%N) - $S" | bc)"
$HADOOP_HOME/bin/yarn application -list -appStates ALL 2>&1 | grep application_`, flinkConf, slim, flinkJavaOpts, job, input, output)
			res, err := c.run(t, 8*time.Minute, script)
			got := scriptResults(res)
			fail := func(what string) {
				c.keep(t)
				t.Fatalf("%s\nerr %v\n%s\nRM log:\n%s\nNM log:\n%s\nclient:\n%s", what, err, res, c.logTail("rm.log", 30), c.logTail("nm.log", 40), c.logTail("work/flink.log", 80))
			}
			if err != nil || got["submit_exit"] != "0" || got["final"] != "SUCCEEDED" {
				fail("the Flink application did not succeed")
			}
			b, _ := os.ReadFile(output)
			counts := map[string]int{}
			for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				var w string
				var n int
				if _, err := fmt.Sscanf(l, "%s\t%d", &w, &n); err == nil {
					counts[w] = n
				}
			}
			if fmt.Sprint(counts) != fmt.Sprint(want) {
				fail(fmt.Sprintf("counts %v, want %v", counts, want))
			}
			t.Logf("Flink %s word count in application mode, %s: %s s from submission to the end", flinkVersion, setup.name, got["seconds"])
		})
	}
}
