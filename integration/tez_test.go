package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// tezVersion is the Tez integration/peers/fetch.sh fetches (tez-pom.xml).
const tezVersion = "0.10.4"

// requireTez is the directory of Tez's jars (its full tarball's set), or skips the test.
func requireTez(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(peersCache(), "tez-"+tezVersion)
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err != nil {
		t.Skipf("Tez %s is not in the peers cache (%s): run integration/peers/fetch.sh (.ci/run does)", tezVersion, dir)
	}
	return filepath.Join(dir, "lib")
}

// pairing is one cluster's daemons: whose RM, whose NodeManager.
type pairing struct {
	name               string
	apacheRM, bobbinNM bool
}

// pairings are Bobbin's RM and NM and Apache's, side by side; with BOBBIN_ALL_PAIRINGS=1
// also each mix (Bobbin's RM with Apache's NM, Apache's RM with Bobbin's NM), which CI
// leaves out for time (TestCurrentHadoopJobs runs the mixes with 3.4.2 and 3.5.0).
func pairings() []pairing {
	out := []pairing{{"bobbin", false, true}, {"apache", true, false}}
	if os.Getenv("BOBBIN_ALL_PAIRINGS") != "" {
		out = append(out, pairing{"bobbin-rm-apache-nm", false, false}, pairing{"apache-rm-bobbin-nm", true, true})
	}
	return out
}

// TestTezOrderedWordCount runs Tez's OrderedWordCount example, unchanged, on file://
// paths (issue 47 item 5): on Bobbin's RM and NodeManager, on Apache 3.4.2's RM and
// NodeManager with the same configuration (and each mix: pairings). The Tez AM and tasks run from the jars
// tez.lib.uris names (Tez's full set, with Hadoop 3.3.6's clients), and the tasks fetch
// their inputs through the NodeManager's mapreduce_shuffle service, as Tez does by
// default. The counts must be the words' and ordered by count.
func TestTezOrderedWordCount(t *testing.T) {
	t.Parallel() // its subtests are namespace clusters
	lib := requireTez(t)
	for _, setup := range pairings() {
		t.Run(setup.name, func(t *testing.T) {
			t.Parallel() // its own network namespace
			c := newNSClusterVersion(t, hadoop34)
			c.apacheRM, c.bobbinNM = setup.apacheRM, setup.bobbinNM
			// The input: word i of 12 occurs i times... over enough lines for two splits' worth of work.
			var in strings.Builder
			want := map[string]int{}
			for i := 1; i <= 12; i++ {
				w := fmt.Sprintf("w%02d", i)
				for j := 0; j < i*50; j++ {
					in.WriteString(w)
					in.WriteString(" ")
					want[w]++
					if j%10 == 9 {
						in.WriteString("\n")
					}
				}
				in.WriteString("\n")
			}
			inDir := c.path("tez-in")
			os.MkdirAll(inDir, 0o755)
			if err := os.WriteFile(filepath.Join(inDir, "words.txt"), []byte(in.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			tezConf := c.path("tez-conf")
			os.MkdirAll(tezConf, 0o755)
			opts := javaOpts + " -Xmx300m"
			if err := os.WriteFile(filepath.Join(tezConf, "tez-site.xml"), []byte(configXML(map[string]string{
				"tez.lib.uris":                       "file://" + lib,
				"tez.use.cluster.hadoop-libs":        "false",
				"tez.staging-dir":                    "file://" + c.path("tez-staging"),
				"tez.am.resource.memory.mb":          "512",
				"tez.task.resource.memory.mb":        "512",
				"tez.am.launch.cmd-opts":             opts,
				"tez.task.launch.cmd-opts":           opts,
				"tez.runtime.io.sort.mb":             "32",
				"tez.am.session.min.held-containers": "0",
			})), 0o644); err != nil {
				t.Fatal(err)
			}
			out := c.path("tez-out")
			script := fmt.Sprintf(`cp %[1]s/*.xml %[2]s/
S=$(date +%%s.%%N)
timeout 300 $JAVA_HOME/bin/java %[5]s -cp "%[2]s:%[3]s/*" org.apache.tez.examples.OrderedWordCount file://%[4]s file://%[6]s 2 > tez.log 2>&1
echo "=== tez_exit $?"
echo "=== tez_seconds $(echo "$(date +%%s.%%N) - $S" | bc)"
# The client is done when the DAG is; the Tez AM then shuts down.
for i in $(seq 1 120); do [ -z "$(running_app)" ] && break; sleep 0.5; done
$HADOOP_HOME/bin/yarn application -list -appStates ALL 2>&1 | grep application_`, c.confDir, tezConf, lib, inDir, javaOpts, out)
			res, err := c.run(t, 8*time.Minute, script)
			got := scriptResults(res)
			fail := func(what string) {
				c.keep(t)
				t.Fatalf("%s\nerr %v\n%s\nRM log:\n%s\nNM log:\n%s\nclient:\n%s", what, err, res, c.logTail("rm.log", 30), c.logTail("nm.log", 40), c.logTail("work/tez.log", 60))
			}
			if err != nil || got["tez_exit"] != "0" {
				fail("OrderedWordCount did not succeed")
			}
			// It ran on the cluster, as a TEZ application, not in Tez's local mode.
			if !regexp.MustCompile(`application_\d+_\d+\s+\S+\s+TEZ\s+.*FINISHED\s+SUCCEEDED`).MatchString(res) {
				fail("no finished TEZ application in the RM's list")
			}
			parts, _ := filepath.Glob(filepath.Join(out, "part-*"))
			sort.Strings(parts)
			counts := map[string]int{}
			var order []int
			for _, p := range parts {
				b, _ := os.ReadFile(p)
				for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
					f := strings.Fields(l)
					if len(f) != 2 {
						continue
					}
					n, _ := strconv.Atoi(f[1])
					counts[f[0]] = n
					order = append(order, n)
				}
			}
			if fmt.Sprint(counts) != fmt.Sprint(want) || !sort.IntsAreSorted(order) {
				fail(fmt.Sprintf("counts %v in order %v; want %v ordered by count", counts, order, want))
			}
			t.Logf("Tez %s OrderedWordCount, %s: %s s", tezVersion, setup.name, got["tez_seconds"])
		})
	}
}
