package integration

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sparkRelease is a Spark release as integration/peers/fetch.sh lays it out in the peers
// cache: a distribution's bin/ (4.x, from PyPI's pyspark) or only its jars (3.5, from
// Maven Central), jars/ and python/lib/.
type sparkRelease struct {
	version, scala string
}

var sparkReleases = []sparkRelease{{"3.5.5", "2.12"}, {"4.1.4", "2.13"}}

// sparkPairing is whose RM and whose NodeManagers a Spark test runs on: Bobbin's, Apache
// 3.1.1's, or one of each.
type sparkPairing struct {
	name               string
	bobbinNM, apacheRM bool
}

var sparkPairings = []sparkPairing{
	{"bobbin-rm-bobbin-nm", true, false},
	{"bobbin-rm-apache-nm", false, false},
	{"apache-rm-bobbin-nm", true, true},
	{"apache-rm-apache-nm", false, true},
}

// skipUnlessRun skips Apache's RM with Apache's NodeManagers, the comparison, unless
// BOBBIN_SPARK_APACHE=1 asks for it.
func (p sparkPairing) skipUnlessRun(t *testing.T) {
	t.Helper()
	if p.name == "apache-rm-apache-nm" && os.Getenv("BOBBIN_SPARK_APACHE") == "" {
		t.Skip("Apache 3.1.1's RM and NodeManagers alone are the comparison (docs/benchmarks.md): BOBBIN_SPARK_APACHE=1 runs them")
	}
}

// skipMixUnlessRun is skipUnlessRun for the features and shuffle-service tests, whose
// mixed pairings run one release each by default, for CI's time: Bobbin's RM with
// Apache's NodeManagers on Spark 3.5, Apache's RM with Bobbin's on Spark 4.
// BOBBIN_ALL_PAIRINGS=1 runs both releases on each mix.
func (p sparkPairing) skipMixUnlessRun(t *testing.T, r sparkRelease) {
	t.Helper()
	p.skipUnlessRun(t)
	mixed := p.bobbinNM == p.apacheRM
	first := r.version == sparkReleases[0].version
	if mixed && first != (p.name == "bobbin-rm-apache-nm") && os.Getenv("BOBBIN_ALL_PAIRINGS") == "" {
		t.Skipf("%s runs Spark %s in CI; BOBBIN_ALL_PAIRINGS=1 runs it with Spark %s too", p.name, otherSparkRelease(r).version, r.version)
	}
}

func otherSparkRelease(r sparkRelease) sparkRelease {
	if r.version == sparkReleases[0].version {
		return sparkReleases[1]
	}
	return sparkReleases[0]
}

// peersCache is where integration/peers/fetch.sh puts the peers.
func peersCache() string {
	if d := os.Getenv("BOBBIN_PEERS_CACHE"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "bobbin-peers")
}

// requireSpark is the release's SPARK_HOME, or skips the test.
func requireSpark(t *testing.T, r sparkRelease) string {
	t.Helper()
	home := filepath.Join(peersCache(), "spark-"+r.version)
	if _, err := os.Stat(filepath.Join(home, ".complete")); err != nil {
		t.Skipf("Spark %s is not in the peers cache (%s): run integration/peers/fetch.sh (.ci/run does)", r.version, home)
	}
	if _, err := exec.LookPath("javac"); err != nil {
		t.Skip("needs javac to compile the Spark test job (the JDK; .ci/run installs it)")
	}
	return home
}

// sparkJob compiles testdata/spark/BobbinSparkJob.java against the release's jars into
// dir/bobbin-spark-job.jar: Spark publishes no examples jar on Maven Central.
func sparkJob(t *testing.T, sparkHome, dir string) string {
	t.Helper()
	src, err := filepath.Abs("testdata/spark/BobbinSparkJob.java")
	if err != nil {
		t.Fatal(err)
	}
	classes := filepath.Join(dir, "spark-job-classes")
	jar := filepath.Join(dir, "bobbin-spark-job.jar")
	for _, args := range [][]string{
		{"javac", "-nowarn", "-d", classes, "-cp", filepath.Join(sparkHome, "jars", "*"), src},
		{"jar", "cf", jar, "-C", classes, "."},
	} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return jar
}

// sparkSubmit is the spark-submit command of a release: the distribution's, or for the
// jars-only 3.5 a script doing what its bin/spark-class does (the launcher library prints
// the command, with the JVM options Java 17 needs, and the script runs it).
func sparkSubmit(t *testing.T, sparkHome, dir string) string {
	t.Helper()
	if bin := filepath.Join(sparkHome, "bin", "spark-submit"); fileExists(bin) {
		return bin
	}
	script := filepath.Join(dir, "spark-submit")
	body := `#!/usr/bin/env bash
# What Spark's bin/spark-class does: org.apache.spark.launcher.Main prints a NUL, then
# the command NUL-separated; the script runs it.
CMD=()
started=
while IFS= read -d '' -r ARG; do
  ARG=${ARG#$'\n'}
  if [ -n "$started" ]; then CMD+=("$ARG"); elif [ -z "$ARG" ]; then started=1; else printf '%s\n' "$ARG"; fi
done < <("$JAVA_HOME/bin/java" -Xmx128m -cp "$SPARK_HOME/jars/*" org.apache.spark.launcher.Main org.apache.spark.deploy.SparkSubmit "$@"; printf "%d\0" $?)
LAST=$((${#CMD[@]} - 1))
[ "$LAST" -ge 0 ] && [ "${CMD[$LAST]}" = 0 ] || exit 1
exec "${CMD[@]:0:$LAST}"
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestSparkOnYarn is issue 46's jobs with real Spark 3.5 and 4.x, unchanged, on two
// NodeManagers: SparkPi in cluster and client mode, a word count (a shuffle) with three
// executors spread over both nodes, and a PySpark DataFrame job in cluster mode; on
// Bobbin's RM and NodeManagers, on Bobbin's RM with Apache 3.1.1 NodeManagers, and on
// Apache's 3.1.1 RM with Bobbin's NodeManagers (and, for the benchmark's baseline, on
// Apache's alone). Each job's result is checked and its wall time logged
// (docs/benchmarks.md).
func TestSparkOnYarn(t *testing.T) {
	t.Parallel() // its subtests are namespace clusters: see parallelism in cluster_test.go
	for _, kind := range sparkPairings {
		for _, r := range sparkReleases {
			t.Run(fmt.Sprintf("%s-spark-%s", kind.name, r.version), func(t *testing.T) {
				t.Parallel() // its own network namespace
				kind.skipUnlessRun(t)
				sparkHome := requireSpark(t, r)
				c := newNSClusterVersion(t, hadoop3)
				c.bobbinNM, c.apacheRM, c.secondNM, c.nmMemoryMB = kind.bobbinNM, kind.apacheRM, true, 2048
				c.capacityProps = map[string]string{
					"yarn.scheduler.capacity.maximum-am-resource-percent":   "0.5",
					"yarn.scheduler.capacity.root.queues":                   "default",
					"yarn.scheduler.capacity.root.default.capacity":         "100",
					"yarn.scheduler.capacity.root.default.maximum-capacity": "100",
				}
				runSparkJobs(t, c, r, sparkHome)
			})
		}
	}
}

// sparkWords writes the word count's input: three files of words drawn from five, and
// returns the counts.
func sparkWords(t *testing.T, dir string) map[string]int {
	t.Helper()
	words := []string{"alpha", "beta", "gamma", "delta", "epsilon"}
	counts := map[string]int{}
	os.MkdirAll(dir, 0o755)
	for f := 0; f < 3; f++ {
		var b strings.Builder
		for line := 0; line < 400; line++ {
			for i := 0; i < 15; i++ {
				w := words[(f*7+line*3+i*i)%len(words)]
				counts[w]++
				b.WriteString(w + " ")
			}
			b.WriteString("\n")
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("part-%d.txt", f)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return counts
}

func runSparkJobs(t *testing.T, c *nsCluster, r sparkRelease, sparkHome string) {
	jar := sparkJob(t, sparkHome, c.dir)
	submit := sparkSubmit(t, sparkHome, c.dir)
	want := sparkWords(t, c.path("words"))
	df, err := filepath.Abs("testdata/spark/dataframe.py")
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.run(t, 9*time.Minute, fmt.Sprintf(`export SPARK_HOME=%[1]s SPARK_SCALA_VERSION=%[2]s SPARK_LOCAL_IP=127.0.0.1 PYSPARK_PYTHON=python3
S=%[3]s
job() { # NAME ARGS...: runs spark-submit, prints its exit, application and wall time
  local name=$1; shift
  local t0=$(date +%%s.%%N)
  timeout 240 $S "$@" > %[4]s/$name.out 2>&1
  local rc=$?
  echo "=== $name exit $rc app $(grep -o 'application_[0-9]*_[0-9]*' %[4]s/$name.out | head -1) wall $(echo "$(date +%%s.%%N) - $t0" | bc)"
}
job pi-cluster --deploy-mode cluster --num-executors 2 --class BobbinSparkJob %[5]s pi 4
# Client mode runs without Spark's UI (tested through the proxy in cluster mode, in
# TestSparkFeaturesOnYarn): a driver whose AM registers before it has attached its UI's
# handlers dies of Jetty's ConcurrentModificationException (SPARK-36237's late attach
# racing the AM's proxy filter), seen with Spark 4.1.4 in CI.
job pi-client --deploy-mode client --conf spark.ui.enabled=false --num-executors 2 --class BobbinSparkJob %[5]s pi 4
# The word count waits for all three executors (Spark starts the job once 80 %% have
# registered, or after 30 s), so that it runs on both nodes however loaded the host.
job wordcount --deploy-mode client --conf spark.ui.enabled=false --num-executors 3 --conf spark.scheduler.minRegisteredResourcesRatio=1.0 --conf spark.scheduler.maxRegisteredResourcesWaitingTime=200s --class BobbinSparkJob %[5]s wordcount file://%[4]s/words %[4]s/counts.txt
job pyspark --deploy-mode cluster --num-executors 2 %[6]s`, sparkHome, r.scala, sparkSubmitPrefix(submit), c.dir, jar, df))
	t.Logf("%s", out)
	fail := sparkFailure(t, c, out)
	if err != nil {
		fail(fmt.Sprintf("cluster script: %v", err))
	}
	jobs := map[string]string{}
	for _, m := range regexp.MustCompile(`=== (\S+) exit (\d+) app (\S*) wall ([0-9.]+)`).FindAllStringSubmatch(out, -1) {
		if m[2] != "0" {
			fail(fmt.Sprintf("spark job %s exited %s", m[1], m[2]), m[1]+".out")
		}
		jobs[m[1]] = m[3]
		t.Logf("spark %s %s: %s s (%s)", r.version, m[1], m[4], m[3])
	}
	if len(jobs) != 4 {
		fail(fmt.Sprintf("%d of 4 jobs ran", len(jobs)))
	}
	// Each application's container dirs on both nodes, and what its AM (the driver in
	// cluster mode) printed.
	containerDirs := func(app string) []string {
		a, _ := filepath.Glob(c.path(filepath.Join("nm-logs", app, "container_*")))
		b, _ := filepath.Glob(c.path(filepath.Join("nm2", "nm-logs", app, "container_*")))
		return append(a, b...)
	}
	driverOut := func(app string) string {
		for _, d := range containerDirs(app) {
			if strings.HasSuffix(d, "_01_000001") {
				b, _ := os.ReadFile(filepath.Join(d, "stdout"))
				return string(b)
			}
		}
		return ""
	}
	checkPi := func(name, text string) {
		m := regexp.MustCompile(`Pi is roughly ([0-9.]+)`).FindStringSubmatch(text)
		if m == nil {
			fail(name+": no estimate of pi", name+".out")
		}
		if v, _ := strconv.ParseFloat(m[1], 64); math.Abs(v-math.Pi) > 0.05 {
			fail(fmt.Sprintf("%s: pi is roughly %v?", name, v))
		}
	}
	checkPi("pi-cluster", driverOut(jobs["pi-cluster"]))
	client, _ := os.ReadFile(c.path("pi-client.out"))
	checkPi("pi-client", string(client))

	// The word count's three executors ran on both nodes, and its counts are right.
	dirs := containerDirs(jobs["wordcount"])
	onNode2 := 0
	for _, d := range dirs {
		if strings.Contains(d, "/nm2/") {
			onNode2++
		}
	}
	if len(dirs) < 4 || onNode2 == 0 || onNode2 == len(dirs) {
		fail(fmt.Sprintf("wordcount's AM and three executors should spread over both nodes: %v", dirs))
	}
	if got, want := readFile(c.path("counts.txt")), wordCounts(want); got != want {
		fail(fmt.Sprintf("word counts:\n%s\nwant:\n%s", got, want), "wordcount.out")
	}

	// The DataFrame job's groups: keys 0..6 of 0..9999.
	var wantDF strings.Builder
	for k := 0; k < 7; k++ {
		n, s := 0, 0
		for v := k; v < 10000; v += 7 {
			n, s = n+1, s+v
		}
		fmt.Fprintf(&wantDF, "k=%d n=%d s=%d\n", k, n, s)
	}
	if got := driverOut(jobs["pyspark"]); got != wantDF.String() {
		fail(fmt.Sprintf("the PySpark driver printed:\n%s\nwant:\n%s", got, wantDF.String()), "pyspark.out")
	}
}

// sparkSubmitPrefix is the scripts' $S: spark-submit to YARN with small JVMs (512 MB heaps,
// one core, so that two 2 GB NodeManagers hold an AM and three executors), its driver and
// executors on the loopback address, the namespace's only one.
func sparkSubmitPrefix(submit string) string {
	return `"` + submit + ` --master yarn --driver-memory 512m --executor-memory 512m --executor-cores 1 --conf spark.yarn.am.memory=512m` +
		` --conf spark.ui.showConsoleProgress=false --conf spark.yarn.appMasterEnv.SPARK_LOCAL_IP=127.0.0.1 --conf spark.executorEnv.SPARK_LOCAL_IP=127.0.0.1"`
}

// sparkFailure is a Spark test's failure: the cluster kept, the script's output, the named
// files' tails and the daemons'.
func sparkFailure(t *testing.T, c *nsCluster, out string) func(why string, logs ...string) {
	return func(why string, logs ...string) {
		t.Helper()
		c.keep(t)
		msg := why + "\n" + out
		for _, l := range logs {
			msg += "\n--- " + l + ":\n" + c.logTail(l, 60)
		}
		t.Fatalf("%s\n--- rm:\n%s\n--- nm:\n%s", msg, c.logTail("rm.log", 30), c.logTail("nm.log", 40))
	}
}

// wordCounts is BobbinSparkJob's word count output for these counts: "word<TAB>n" lines
// in word order.
func wordCounts(counts map[string]int) string {
	var lines []string
	for w, n := range counts {
		lines = append(lines, fmt.Sprintf("%s\t%d\n", w, n))
	}
	sort.Strings(lines)
	return strings.Join(lines, "")
}

func readFile(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}
