package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/internal/zktest"
)

// sleeperService is Hadoop's own example service (yarn-service-examples/sleeper): two
// containers that sleep.
const sleeperService = `{
  "name": "sleeper-service",
  "version": "1.0",
  "components": [
    {"name": "sleeper", "number_of_containers": 2, "launch_command": "sleep 900000",
     "resource": {"cpus": 1, "memory": "256"}}
  ]
}`

// TestYarnServiceSleeperLikeApache runs the YARN service framework (issue 47 item 4) with
// Hadoop 3.4.2's client and service AM: `yarn app -launch` of the sleeper example, its
// status once stable, stop and destroy, on Bobbin's RM and NM and on Apache's. The client
// submits over RPC (ServiceClient): Bobbin's RM does not serve the services REST API that
// the default client class (ApiServiceClient) calls, and refuses to start with
// yarn.webapp.api-service.enable. The AM registers the service in the YARN registry, a
// ZooKeeper the test starts in the cluster's namespace.
func TestYarnServiceSleeperLikeApache(t *testing.T) {
	t.Parallel() // its subtests are namespace clusters
	if _, err := os.Stat(zktest.Script); err != nil {
		t.Skipf("ZooKeeper is not installed (%s): apt-get install zookeeper (.ci/run does)", zktest.Script)
	}
	for _, setup := range pairings() {
		t.Run(setup.name, func(t *testing.T) {
			t.Parallel() // its own network namespace
			c := newNSClusterVersion(t, hadoop34)
			c.apacheRM, c.bobbinNM = setup.apacheRM, setup.bobbinNM
			// The 3.4 client uploads the framework's dependency tarball to a fixed path,
			// /yarn-services/<version>/service-dep.tar.gz on the default FS (here the
			// host's root), when it is not there: clusters side by side re-uploading it
			// under each other's AM failed its localization ("changed on src
			// filesystem"). Each cluster has its own, in its own mount namespace.
			c.mountNS = true
			c.preStart = fmt.Sprintf("mkdir -p %[1]s/yarn-services /yarn-services && mount --bind %[1]s/yarn-services /yarn-services", c.dir)
			props := nmConf(c.dir)
			props["yarn.application.admin.client.class.yarn-service"] = "org.apache.hadoop.yarn.service.client.ServiceClient"
			props["hadoop.registry.zk.quorum"] = "127.0.0.1:2181"
			props["yarn.service.base.path"] = "file://" + c.path("services")
			writeConf(t, c.confDir, props)
			os.MkdirAll(c.path("zk/data"), 0o755)
			if err := os.WriteFile(c.path("zk/zoo.cfg"), []byte("tickTime=250\ndataDir="+c.path("zk/data")+"\nclientPort=2181\nclientPortAddress=127.0.0.1\nadmin.enableServer=false\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			// The service AM's log (the client ships this file to it), for a failed run.
			if err := os.WriteFile(filepath.Join(c.confDir, "yarnservice-log4j.properties"), []byte("log4j.rootLogger=INFO,console\nlog4j.appender.console=org.apache.log4j.ConsoleAppender\n"+
				"log4j.appender.console.layout=org.apache.log4j.PatternLayout\nlog4j.appender.console.layout.ConversionPattern=%d{ISO8601} %p %c: %m%n\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(c.path("sleeper.json"), []byte(sleeperService), 0o644); err != nil {
				t.Fatal(err)
			}
			script := fmt.Sprintf(`Y=$HADOOP_HOME/bin/yarn
ZOO_LOG_DIR=%[1]s/zk %[2]s start-foreground %[1]s/zk/zoo.cfg >> %[1]s/zk/zk.out 2>&1 &
ZK=$!
for i in $(seq 1 300); do (exec 3<>/dev/tcp/127.0.0.1/2181) 2>/dev/null && break; sleep 0.2; done
S=$(date +%%s.%%N)
timeout 180 $Y app -launch sleeper-service %[1]s/sleeper.json > launch.log 2>&1
L=$?
echo "=== launch_exit $L"
# Each status is a client JVM: polled over the RM's REST API until the AM is up, then a
# few times.
if [ $L = 0 ]; then
  for i in $(seq 1 240); do [ "$(app_containers $(running_app))" -ge 3 ] && break; sleep 0.5; done
  for i in $(seq 1 30); do $Y app -status sleeper-service 2>/dev/null | grep -q '"state" : "STABLE"' && break; sleep 1; done
fi
echo "=== stable_seconds $(echo "$(date +%%s.%%N) - $S" | bc)"
$Y app -status sleeper-service 2>/dev/null > status.json
echo "=== state $(grep -o '"state" : "[A-Z]*"' status.json | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
echo "=== containers $(grep -c '"id" : "container_' status.json)"
timeout 120 $Y app -stop sleeper-service > stop.log 2>&1
echo "=== stop_exit $?"
timeout 120 $Y app -destroy sleeper-service > destroy.log 2>&1
echo "=== destroy_exit $?"
echo "=== final $($Y application -list -appStates ALL 2>/dev/null | grep application_ | awk '{print $3 "/" $6 "/" $7}' | tr '\n' ' ')"
kill $ZK`, c.dir, zktest.Script)
			res, err := c.run(t, 10*time.Minute, script)
			got := scriptResults(res)
			if err != nil || got["launch_exit"] != "0" || got["containers"] != "2" || !strings.Contains(got["state"], `"state" : "STABLE"`) ||
				got["stop_exit"] != "0" || got["destroy_exit"] != "0" {
				c.keep(t)
				t.Fatalf("the sleeper service did not run as on Apache's daemons: %v\nerr %v\n%s\nRM log:\n%s\nlaunch:\n%s\nstop:\n%s", got, err, res,
					c.logTail("rm.log", 30), c.logTail("work/launch.log", 40), c.logTail("work/stop.log", 20))
			}
			t.Logf("YARN service sleeper, %s: stable %s s after launch; %v", setup.name, got["stable_seconds"], got)
		})
	}
}
