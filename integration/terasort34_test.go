package integration

import (
	"fmt"
	"testing"
	"time"
)

// TestCurrentHadoopTerasortAndLogs is issue 47's small terasort with today's Hadoop
// (3.4.2's MapReduce, client and, on the Apache side, daemons): teragen of 2,000 rows in
// two maps, terasort with one reduce, teravalidate, and `yarn logs` of the terasort, on
// Bobbin's RM and NM and on Apache's with the same configuration. Each job succeeds; the
// aggregated logs show every container of the terasort (its AM, two maps, the reduce),
// each with its syslog, on both, in the same place: the bucketed layout of 3.3+.
func TestCurrentHadoopTerasortAndLogs(t *testing.T) {
	t.Parallel() // its subtests are namespace clusters
	for _, setup := range pairings() {
		t.Run(setup.name, func(t *testing.T) {
			t.Parallel() // its own network namespace
			c := newNSClusterVersion(t, hadoop34)
			c.apacheRM, c.bobbinNM = setup.apacheRM, setup.bobbinNM
			c.nmProps = func(_ int, p map[string]string) {
				p["yarn.log-aggregation-enable"] = "true"
				p["yarn.nodemanager.remote-app-log-dir"] = "file://" + c.path("app-logs")
				// Hadoop 3.3+'s layout, <dir>/<user>/bucket-logs-tfile/<bucket>/<app>, where its
				// clients look: Bobbin's NM writes it with this key of its own; Apache 3.4's
				// writes nothing else and ignores the key.
				p["bobbin.log-aggregation.layout"] = "bucketed"
			}
			writeMapredSite(t, c)
			out, err := c.run(t, 10*time.Minute, fmt.Sprintf(`H=$HADOOP_HOME/bin/hadoop
Y=$HADOOP_HOME/bin/yarn
for step in "teragen -D mapreduce.job.maps=2 2000 $PWD/tera-in" "terasort -D mapreduce.job.reduces=1 $PWD/tera-in $PWD/tera-out" "teravalidate $PWD/tera-out $PWD/tera-report"; do
  name=${step%%%% *}
  S=$(date +%%s.%%N)
  timeout 300 $H jar %[1]s $step > $name.log 2>&1
  echo "=== ${name}_exit $?"
  echo "=== ${name}_seconds $(echo "$(date +%%s.%%N) - $S" | bc)"
done
APP=$($Y application -list -appStates ALL 2>/dev/null | grep -i 'terasort' | grep -o 'application_[0-9]*_[0-9]*' | head -1)
for i in $(seq 1 60); do $Y logs -applicationId $APP > logs.out 2>&1 && [ "$(grep -c '^LogType:syslog$' logs.out)" -ge 4 ] && break; sleep 1; done
echo "=== logs_containers $(grep -o '^Container: container_[0-9e_]*' logs.out | sort -u | wc -l)"
echo "=== logs_syslogs $(grep -c '^LogType:syslog$' logs.out)"
echo "=== logs_bucketed $(ls -d %[2]s/*/bucket-logs-tfile/$(printf %%04d $((10#${APP##*_} %% 10000)))/$APP 2>/dev/null | wc -l)"
echo "=== validate_errors $(grep -c 'misorder\|error' tera-report/part-r-00000 2>/dev/null)"`, c.examplesJar(), c.path("app-logs")))
			got := scriptResults(out)
			if err != nil || got["teragen_exit"] != "0" || got["terasort_exit"] != "0" || got["teravalidate_exit"] != "0" ||
				got["logs_containers"] != "4" || got["logs_syslogs"] != "4" || got["logs_bucketed"] != "1" || got["validate_errors"] != "0" {
				c.keep(t)
				t.Fatalf("%s: %v\nerr %v\n%s\nRM log:\n%s\nterasort:\n%s", setup.name, got, err, out, c.logTail("rm.log", 30), c.logTail("work/terasort.log", 30))
			}
			t.Logf("3.4.2 teragen/terasort/teravalidate, %s: %s / %s / %s s", setup.name, got["teragen_seconds"], got["terasort_seconds"], got["teravalidate_seconds"])
		})
	}
}
