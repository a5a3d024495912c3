package integration

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestHadoop3FeaturesOffLikeApache is issue 43's items 2, 3, 5 and 6 with the real 3.1.1
// clients, and issue 47's with 3.4.2's, on Bobbin's RM and NM and on Apache's of the same
// version, with the same default files:
//   - the distributed shell with -placement_spec (placement constraints, which Bobbin does
//     not serve) ends within seconds as the Java RM ends it with its handler disabled
//     (the registration refused, the application FAILED), where it used to wait until its
//     client gave up;
//   - -container_type OPPORTUNISTIC -promote_opportunistic_after_start runs to success
//     with GUARANTEED containers and no promotion, as on the Java RM with opportunistic
//     allocation off;
//   - `yarn queue -status default` says Preemption : disabled (no scheduling monitor);
//   - -container_resources memory-mb=256,vcores=1 (resource types in the shell's asks)
//     runs to success;
//   - `yarn container -signal C GRACEFUL_SHUTDOWN` ends a distributed shell's container
//     (SIGTERM from its NodeManager), and the shell with it, FAILED;
//   - the NodeManager serving on 127.0.0.1:8041 is the node localhost:8041, its canonical
//     name, as the Java NodeManager names itself.
func TestHadoop3FeaturesOffLikeApache(t *testing.T) {
	t.Parallel() // its subtests are clusters in their own network namespaces
	for _, v := range []string{hadoop3, hadoop34} {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			featuresOffLikeApache(t, v)
		})
	}
}

// featuresOffLikeApache runs TestHadoop3FeaturesOffLikeApache's jobs with Hadoop v's
// clients and daemons.
func featuresOffLikeApache(t *testing.T, v string) {
	results := map[string]map[string]string{"bobbin": {}, "apache": {}}
	// The distributed shell's placement syntax changed in 3.3.
	spec := "foo=2,NOTIN,NODE,foo"
	if isCurrentHadoop(v) {
		spec = "foo(2),notin,node,foo"
	}
	// The two clusters run side by side; their answers are compared once both ended.
	t.Run("clusters", func(t *testing.T) {
		for name, got := range results {
			t.Run(name, func(t *testing.T) {
				t.Parallel() // its own network namespace: see parallelism in cluster_test.go
				c := newNSClusterVersion(t, v)
				c.bobbinNM, c.apacheRM = name == "bobbin", name == "apache"
				dshell := c.dshellCommand()
				out, err := c.run(t, 8*time.Minute, fmt.Sprintf(`Y=$HADOOP_HOME/bin/yarn
cd %[1]s
echo "=== node $($Y node -list -all 2>/dev/null | grep -o '^ *[a-z0-9.]*:8041' | tr -d ' ')"
echo "=== preemption $($Y queue -status default 2>/dev/null | grep -o 'Preemption : [a-z]*')"
START=$(date +%%s)
timeout 200 %[2]s -shell_command 'echo hello' -num_containers 2 -master_memory 256 -container_memory 128 -placement_spec '%[3]s' > placement.log 2>&1
echo "=== placement_exit $?"
echo "=== placement_seconds $(( $(date +%%s) - START ))"
echo "=== placement_state $($Y application -list -appStates ALL 2>/dev/null | grep DistributedShell | awk '{print $6 "/" $7}' | tail -1)"
timeout 200 %[2]s -shell_command 'echo hello' -num_containers 1 -master_memory 256 -container_memory 128 -container_type OPPORTUNISTIC -promote_opportunistic_after_start > opportunistic.log 2>&1
echo "=== opportunistic_exit $?"
echo "=== promotions $(cat nm-logs/application_*/container_*/AppMaster.* 2>/dev/null | grep -ci 'promot')"
grep -hi 'promot' nm-logs/application_*/container_*/AppMaster.* 2>/dev/null | head -5
timeout 200 %[2]s -shell_command 'echo hello' -num_containers 1 -master_memory 256 -container_resources memory-mb=256,vcores=1 > resources.log 2>&1
echo "=== resources_exit $?"
echo "=== resources_state $($Y application -list -appStates ALL 2>/dev/null | grep DistributedShell | awk '{print $6 "/" $7}' | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
timeout 300 %[2]s -shell_command 'sleep 600' -num_containers 1 -master_memory 256 -container_memory 128 > signal.log 2>&1 &
for i in $(seq 1 240); do APP=$(running_app); [ -n "$APP" ] && [ "$(app_containers $APP)" -ge 2 ] && break; sleep 0.5; done
C=$($Y container -list appattempt_${APP#application_}_000001 2>/dev/null | grep -o 'container_[0-9e_]*' | grep -v '_000001$' | head -1)
S=$(date +%%s)
echo "=== signal_out $($Y container -signal $C GRACEFUL_SHUTDOWN 2>&1 | grep -Ev '^[0-9]{4}-|^WARNING' | tr '\n' ' ' | sed "s/$C/CONTAINER/g")"
for i in $(seq 1 240); do [ -z "$(running_app)" ] && break; sleep 0.5; done
echo "=== signal_seconds $(( $(date +%%s) - S ))"
echo "=== signal_state $($Y application -list -appStates ALL 2>/dev/null | grep $APP | awk '{print $6 "/" $7}')"
echo "=== signal_exit $(grep -ho 'exit status=[-0-9]*\|exitStatus=[-0-9]*' nm-logs/$APP/container_*_000001/AppMaster.* 2>/dev/null | sort -u | tr '\n' ' ')"`, c.dir, dshell, spec))
				if err != nil || !strings.Contains(out, "=== opportunistic_exit") {
					t.Fatalf("%s: %v\n%s\nRM log:\n%s\nplacement client:\n%s", name, err, out, c.logTail("rm.log", 30), c.logTail("placement.log", 20))
				}
				for _, m := range regexp.MustCompile(`(?m)^=== (\w+) (.*)$`).FindAllStringSubmatch(out, -1) {
					got[m[1]] = strings.TrimSpace(m[2])
				}
				t.Logf("%s: %v\n%s", name, got, tail(out, 8))
				if secs, _ := strconv.Atoi(got["placement_seconds"]); got["placement_exit"] == "0" || secs > 120 {
					t.Errorf("%s: the placement-constraint job exited %s after %s s; want it refused within seconds", name, got["placement_exit"], got["placement_seconds"])
				}
			})
		}
	})
	if t.Failed() || len(results["apache"]) == 0 || len(results["bobbin"]) == 0 {
		return
	}
	for _, k := range []string{"node", "preemption", "placement_exit", "placement_state", "opportunistic_exit", "promotions", "resources_exit", "resources_state",
		"signal_out", "signal_state", "signal_exit"} {
		if results["bobbin"][k] != results["apache"][k] {
			t.Errorf("%s: Bobbin %q, Apache %q", k, results["bobbin"][k], results["apache"][k])
		}
	}
	// The signalled container ends (SIGTERM) within seconds, and the shell with it, FAILED
	// (one of its containers failed), on both RMs.
	if secs, _ := strconv.Atoi(results["bobbin"]["signal_seconds"]); secs > 60 || results["bobbin"]["signal_state"] != "FINISHED/FAILED" {
		t.Errorf("Bobbin: after yarn container -signal GRACEFUL_SHUTDOWN the shell ended %q after %s s; want FINISHED/FAILED within a minute",
			results["bobbin"]["signal_state"], results["bobbin"]["signal_seconds"])
	}
	if results["bobbin"]["node"] != "localhost:8041" || results["bobbin"]["preemption"] != "Preemption : disabled" || results["bobbin"]["opportunistic_exit"] != "0" {
		t.Errorf("Bobbin: %v", results["bobbin"])
	}
}
