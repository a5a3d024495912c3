package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPlacementConstraintsLikeApache: the real distributed shell's -placement_spec, with
// yarn.resourcemanager.placement-constraints.handler=scheduler, on Bobbin's RM and on
// Apache's of the same version, two Bobbin NodeManagers each:
//   - 3.1.1 (whose Capacity Scheduler takes anti-affinity on a node only):
//     zk=2,NOTIN,NODE,zk puts the two containers on different nodes;
//   - 3.4.2 (its syntax): zk(2),notin,node,zk the same; zk(1),notin,node,zk:hb(2),in,node,zk
//     puts the two hb containers on the zk container's node.
//
// Each job succeeds and its containers are where the constraints say, on both RMs. The
// containers run 20 s: constraints count the containers running now, and a container that
// has ended no longer holds its node (an hb placed after its zk ended would go anywhere),
// so each job's containers must overlap even on a slow machine.
func TestPlacementConstraintsLikeApache(t *testing.T) {
	t.Parallel() // its subtests are namespace clusters
	jobs := map[string][]struct {
		name, spec string
		// nodes is how many nodes the job's task containers spread over, tasks how many.
		nodes, tasks int
	}{
		hadoop3:  {{"anti", "zk=2,NOTIN,NODE,zk", 2, 2}},
		hadoop34: {{"anti", "zk(2),notin,node,zk", 2, 2}, {"affinity", "zk(1),notin,node,zk:hb(2),in,node,zk", 1, 3}},
	}
	for _, v := range []string{hadoop3, hadoop34} {
		for _, rm := range []string{"bobbin", "apache"} {
			t.Run(v+"-"+rm+"-rm", func(t *testing.T) {
				t.Parallel() // its own network namespace
				c := newNSClusterVersion(t, v)
				c.apacheRM, c.bobbinNM, c.secondNM = rm == "apache", true, true
				props := nmConf(c.dir)
				props["yarn.resourcemanager.placement-constraints.handler"] = "scheduler"
				writeConf(t, c.confDir, props)
				script := "Y=$HADOOP_HOME/bin/yarn\n"
				for _, j := range jobs[v] {
					script += fmt.Sprintf(`S=$(date +%%s.%%N)
timeout 240 %[1]s -shell_command 'sleep 20; echo hello' -num_containers %[4]d -master_memory 256 -container_memory 128 -placement_spec '%[2]s' > %[3]s.log 2>&1
echo "=== %[3]s_exit $?"
echo "=== %[3]s_seconds $(echo "$(date +%%s.%%N) - $S" | bc)"
`, c.dshellCommand(), j.spec, j.name, j.tasks)
				}
				out, err := c.run(t, 10*time.Minute, script+"$Y application -list -appStates ALL 2>&1 | grep application_")
				got := scriptResults(out)
				for i, j := range jobs[v] {
					// The job's hello containers, by node (each NM's log dir).
					byNode := map[string]int{}
					for node, logs := range map[string]string{"nm1": c.path("nm-logs"), "nm2": c.path("nm2/nm-logs")} {
						outs, _ := filepath.Glob(filepath.Join(logs, fmt.Sprintf("application_*_%04d", i+1), "container_*", "stdout"))
						for _, f := range outs {
							if b, _ := os.ReadFile(f); strings.TrimSpace(string(b)) == "hello" {
								byNode[node]++
							}
						}
					}
					total := 0
					for _, n := range byNode {
						total += n
					}
					if err != nil || got[j.name+"_exit"] != "0" || total != j.tasks || len(byNode) != j.nodes {
						c.keep(t)
						t.Fatalf("%s (%s): exit %q, hello containers by node %v; want %d over %d nodes\nerr %v\n%s\nRM log:\n%s\nclient:\n%s", j.name, j.spec,
							got[j.name+"_exit"], byNode, j.tasks, j.nodes, err, out, c.logTail("rm.log", 40), c.logTail("work/"+j.name+".log", 30))
					}
					t.Logf("%s %s on the %s RM: %s s, containers by node %v", v, j.spec, rm, got[j.name+"_seconds"], byNode)
				}
			})
		}
	}
}
