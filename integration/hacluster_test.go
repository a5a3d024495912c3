package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/bobbin-yarn/bobbin/internal/zktest"
)

// haRMs are the HA clusters' RM ids; RM i's ports are the usual ones plus i×10000 (rm1's
// web UI at 8088, rm2's at 18088).
var haRMs = []string{"rm1", "rm2"}

// haConf turns a one-RM configuration into the HA one every daemon and client of an HA
// cluster reads: two RMs on this host, a ZooKeeper store and election on 127.0.0.1:2181
// with a 4 s session.
func haConf(props map[string]string) {
	for k, v := range map[string]string{
		"yarn.resourcemanager.ha.enabled": "true", "yarn.resourcemanager.ha.rm-ids": "rm1,rm2", "yarn.resourcemanager.cluster-id": "bobbin-ha",
		"hadoop.zk.address": "127.0.0.1:2181", "yarn.resourcemanager.zk-address": "127.0.0.1:2181", "yarn.resourcemanager.zk-timeout-ms": "4000",
		"yarn.resourcemanager.recovery.enabled": "true", "yarn.resourcemanager.store.class": "org.apache.hadoop.yarn.server.resourcemanager.recovery.ZKRMStateStore",
		// The Java clients' failover back-off (AM, NM, job client) defaults to sleeps of
		// up to 30 s between RMs while neither is active yet: a CI run saw the Apache NM
		// come back 80 s after the kill and pi end near its 200 s limit. Shorter sleeps
		// keep the tests about Bobbin's failover, not Java's back-off.
		"yarn.client.failover-sleep-base-ms": "500", "yarn.client.failover-sleep-max-ms": "3000",
	} {
		props[k] = v
	}
	delete(props, "yarn.resourcemanager.hostname")
	delete(props, "yarn.resourcemanager.fs.state-store.uri")
	// Every RM address is on this one host: Hadoop's HAUtil, which NodeManagers and clients
	// run too, refuses a configuration where several ids match the local address unless
	// ha.id names one (their failover proxies go through every id regardless).
	props["yarn.resourcemanager.ha.id"] = "rm1"
	for i, id := range haRMs {
		off := i * 10000
		for key, port := range map[string]int{"address": 8032, "scheduler.address": 8030, "resource-tracker.address": 8031, "admin.address": 8033, "webapp.address": 8088} {
			props[fmt.Sprintf("yarn.resourcemanager.%s.%s", key, id)] = fmt.Sprintf("127.0.0.1:%d", port+off)
		}
		props["yarn.resourcemanager.hostname."+id] = "127.0.0.1"
	}
}

// writeRMConfs writes each HA RM's conf dir (<id>-conf): the cluster's yarn-site.xml
// (props) with its own id, and its capacity-scheduler.xml; and ZooKeeper's (zk/zoo.cfg).
func (c *nsCluster) writeRMConfs(t *testing.T, props map[string]string) {
	t.Helper()
	for _, id := range haRMs {
		dir := c.path(id + "-conf")
		os.MkdirAll(dir, 0o755)
		own := map[string]string{}
		for k, v := range props {
			own[k] = v
		}
		own["yarn.resourcemanager.ha.id"] = id
		writeConf(t, dir, own)
		copyFile(t, filepath.Join(c.confDir, "capacity-scheduler.xml"), filepath.Join(dir, "capacity-scheduler.xml"))
	}
	c.writeZKConf()
}

// writeZKConf writes the cluster's ZooKeeper configuration (zk/zoo.cfg: 127.0.0.1:2181).
func (c *nsCluster) writeZKConf() {
	os.MkdirAll(c.path("zk/data"), 0o755)
	os.WriteFile(c.path("zk/zoo.cfg"), []byte("tickTime=250\ndataDir="+c.path("zk/data")+"\nclientPort=2181\nclientPortAddress=127.0.0.1\nadmin.enableServer=false\nminSessionTimeout=1000\n"), 0o644)
}

// startZK is the script that starts the cluster's ZooKeeper alone (for a one-RM cluster
// with ZKRMStateStore, as its preStart) and waits for its port.
func (c *nsCluster) startZK(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(zktest.Script); err != nil {
		t.Skipf("ZooKeeper is not installed (%s): apt-get install zookeeper (.ci/run does)", zktest.Script)
	}
	c.writeZKConf()
	// Up to 3 minutes: CI's loaded cores have taken over a minute to start its JVM.
	return fmt.Sprintf(`ZOO_LOG_DIR=%[1]s/zk %[2]s start-foreground %[1]s/zk/zoo.cfg >> %[1]s/zk/zk.out 2>&1 &
for i in $(seq 1 900); do (exec 3<>/dev/tcp/127.0.0.1/2181) 2>/dev/null && break; sleep 0.2; done`, c.dir, zktest.Script)
}

// startHA is the script that starts an HA cluster's ZooKeeper (start_zk, $ZK) and its
// RMs (start_rm ID: $PID_<id>, output in <id>.log), rm1 first so that it is the active;
// $RM is rm1. Its functions: ha_state PORT is the haState the RM with that web port
// answers ("" for none); watch_roles polls both RMs' (one line a poll, rm1's then rm2's)
// until killed; roles_seen FILE sums up what watch_roles wrote (see splitBrain).
func (c *nsCluster) startHA(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(zktest.Script); err != nil {
		t.Skipf("ZooKeeper is not installed (%s): apt-get install zookeeper (.ci/run does)", zktest.Script)
	}
	return fmt.Sprintf(`start_zk() { ZOO_LOG_DIR=%[1]s/zk %[2]s start-foreground %[1]s/zk/zoo.cfg >> %[1]s/zk/zk.out 2>&1 & ZK=$!; for i in $(seq 1 300); do (exec 3<>/dev/tcp/127.0.0.1/2181) 2>/dev/null && break; sleep 0.2; done; }
start_rm() { %[3]s resourcemanager --conf %[1]s/$1-conf >> %[1]s/$1.log 2>&1 & eval "PID_$1=$!"; }
ha_state() { curl -s -m 1 http://127.0.0.1:$1/ws/v1/cluster/info 2>/dev/null | grep -o '"haState":"[A-Z]*"' | cut -d'"' -f4; }
watch_roles() { while :; do echo "$(ha_state 8088) $(ha_state 18088)"; sleep 0.05; done; }
roles_seen() { echo "=== roles: both active $(grep -c 'ACTIVE ACTIVE' $1) of $(wc -l < $1) polls, none active $(grep -vc ACTIVE $1)"; }
start_zk
start_rm rm1
# A loaded machine has taken 20 s to start ZooKeeper's JVM: rm1 must be the active before
# rm2 starts, or the test would kill the standby.
for i in $(seq 1 300); do [ "$(ha_state 8088)" = ACTIVE ] && break; sleep 0.2; done
[ "$(ha_state 8088)" = ACTIVE ] || echo "=== rm1 did not become active"
start_rm rm2
RM=$PID_rm1`, c.dir, zktest.Script, bobbinBinary(t))
}

// splitBrain reads roles_seen's line in out: how many polls found both RMs answering as
// active (a split brain: it must be 0), and how many polls there were.
func splitBrain(t *testing.T, out string) (both, polls int) {
	t.Helper()
	m := regexp.MustCompile(`=== roles: both active (\d+) of (\d+) polls`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no roles were watched:\n%s", out)
	}
	both, _ = strconv.Atoi(m[1])
	polls, _ = strconv.Atoi(m[2])
	return both, polls
}
