package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestSparkDynamicAllocationWithShuffleService is issue 46's third item: an admin's
// yarn-site.xml written for Apache's NodeManagers, with Spark's shuffle service as the
// auxiliary service spark_shuffle (yarn.nodemanager.aux-services.spark_shuffle.class,
// its jars in ...spark_shuffle.classpath, Maven Central's Spark 3.5.5 shuffle service and
// what it needs), works unchanged on Bobbin's NodeManager: a word count with
// spark.dynamicAllocation.enabled and spark.shuffle.service.enabled counts, lets every
// executor idle out (5 s), then reads the first action's shuffle output again through
// the service, from new executors, and its counts are right. The NodeManager's resident
// memory and its service JVM's are logged. It runs on Bobbin's RM and NodeManager and on
// each mix with Apache 3.1.1's (one release each: skipMixUnlessRun); with
// BOBBIN_SPARK_APACHE=1 on Apache's RM and NodeManager too, from the same yarn-site.xml:
// the comparison.
func TestSparkDynamicAllocationWithShuffleService(t *testing.T) {
	t.Parallel() // its subtests are namespace clusters
	for _, kind := range sparkPairings {
		for _, r := range sparkReleases {
			t.Run(kind.name+"-spark-"+r.version, func(t *testing.T) {
				t.Parallel() // its own network namespace
				kind.skipMixUnlessRun(t, r)
				sparkHome := requireSpark(t, r)
				service := filepath.Join(peersCache(), "spark-3.5.5", "yarn-shuffle")
				if !fileExists(filepath.Join(service, "spark-network-yarn_2.12-3.5.5.jar")) {
					t.Skipf("Spark's shuffle service is not in the peers cache (%s): run integration/peers/fetch.sh", service)
				}
				c := newNSClusterVersion(t, hadoop3)
				c.bobbinNM, c.apacheRM, c.nmMemoryMB = kind.bobbinNM, kind.apacheRM, 4096
				c.capacityProps = map[string]string{
					"yarn.scheduler.capacity.maximum-am-resource-percent":   "0.5",
					"yarn.scheduler.capacity.root.queues":                   "default",
					"yarn.scheduler.capacity.root.default.capacity":         "100",
					"yarn.scheduler.capacity.root.default.maximum-capacity": "100",
				}
				c.nmProps = func(_ int, props map[string]string) {
					props["yarn.nodemanager.aux-services"] = "mapreduce_shuffle,spark_shuffle"
					props["yarn.nodemanager.aux-services.spark_shuffle.class"] = "org.apache.spark.network.yarn.YarnShuffleService"
					// As Apache's NodeManager reads it: DIR/* for a directory's jars.
					props["yarn.nodemanager.aux-services.spark_shuffle.classpath"] = service + "/*"
				}
				runSparkDynamicAllocation(t, c, r, sparkHome)
			})
		}
	}
}

// runSparkDynamicAllocation runs the job without Spark's UI, which it does not test: in
// client mode Spark 3.2+ attaches the UI's handlers once the application runs
// (SPARK-36237) while the AM's registration adds its proxy filter to them from another
// thread, and a driver whose AM registered quickly died once of Jetty's
// ConcurrentModificationException in ServletHandler.initialize (Spark 4.1.4, CI).
func runSparkDynamicAllocation(t *testing.T, c *nsCluster, r sparkRelease, sparkHome string) {
	jar := sparkJob(t, sparkHome, c.dir)
	submit := sparkSubmit(t, sparkHome, c.dir)
	want := sparkWords(t, c.path("words"))
	out, err := c.run(t, 8*time.Minute, fmt.Sprintf(`export SPARK_HOME=%[1]s SPARK_SCALA_VERSION=%[2]s SPARK_LOCAL_IP=127.0.0.1
S=%[3]s
for i in $(seq 1 240); do (exec 3<>/dev/tcp/127.0.0.1/7337) 2>/dev/null && break; sleep 0.25; done
echo "=== service port $( (exec 3<>/dev/tcp/127.0.0.1/7337) 2>/dev/null && echo open || echo closed)"
T0=$(date +%%s.%%N)
timeout 300 $S --deploy-mode client --conf spark.ui.enabled=false --conf spark.dynamicAllocation.enabled=true --conf spark.shuffle.service.enabled=true \
  --conf spark.dynamicAllocation.initialExecutors=2 --conf spark.dynamicAllocation.minExecutors=0 --conf spark.dynamicAllocation.maxExecutors=3 \
  --conf spark.dynamicAllocation.executorIdleTimeout=5s --class BobbinSparkJob %[5]s dynamic file://%[4]s/words %[4]s/counts.txt > %[4]s/dynamic.out 2>&1
RC=$?
echo "=== dynamic exit $RC wall $(echo "$(date +%%s.%%N) - $T0" | bc)"
NM=$(echo $NMS | cut -d' ' -f1)
# The service's JVM: a child of Bobbin's NodeManager (none of Apache's, which hosts the
# service itself); [.] keeps this script's own text out.
HELPER=$(pgrep -P $NM -f 'AuxServiceHost[.]java spark_shuffle' | head -1)
echo "=== rss nm $(ps -o rss= -p $NM 2>/dev/null | tr -d ' ') helper $( [ -n "$HELPER" ] && ps -o rss= -p $HELPER | tr -d ' ')"`,
		sparkHome, r.scala, sparkSubmitPrefix(submit), c.dir, jar))
	t.Logf("%s", out)
	fail := sparkFailure(t, c, out)
	if err != nil {
		fail(fmt.Sprintf("cluster script: %v", err))
	}
	if !strings.Contains(out, "=== service port open") {
		fail("Spark's shuffle service never listened on 7337")
	}
	if !strings.Contains(out, "=== dynamic exit 0 ") {
		fail("the job failed", "dynamic.out")
	}
	driver, _ := os.ReadFile(c.path("dynamic.out"))
	if !strings.Contains(string(driver), "executors left: 0") {
		fail("the executors were not all released between the two actions", "dynamic.out")
	}
	if got, want := readFile(c.path("counts.txt")), wordCounts(want); got != want {
		fail(fmt.Sprintf("word counts read back through the shuffle service:\n%s\nwant:\n%s", got, want), "dynamic.out")
	}
	if m := regexp.MustCompile(`=== dynamic exit 0 wall ([0-9.]+)`).FindStringSubmatch(out); m != nil {
		t.Logf("spark %s dynamic allocation word count: %s s", r.version, m[1])
	}
	if m := regexp.MustCompile(`=== rss nm (\d*) helper (\d*)`).FindStringSubmatch(out); m != nil {
		if m[2] == "" {
			t.Logf("resident memory with the shuffle service loaded: NodeManager %s KB, the service inside it", m[1])
		} else {
			t.Logf("resident memory with the shuffle service loaded: NodeManager %s KB, its service JVM %s KB", m[1], m[2])
		}
	}
}
