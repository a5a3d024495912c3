#!/usr/bin/env bash
# sls-side-by-side.sh: one Scheduler Load Simulator trace through Apache SLS (the
# distribution's share/hadoop/tools/sls, Apache's CapacityScheduler) and through
# `bobbin sim --sls` (Bobbin's scheduling engine), with the same nodes and queues.
#
#   eval "$(../shared/hadoop/real-hadoop.sh env /root/hadoop)"   # HADOOP_HOME, JAVA_HOME
#   make build
#   integration/bench/sls-side-by-side.sh OUT_DIR [SLS-JOBS.json NODES.json CAPACITY-SCHEDULER.xml]
#
# The default trace is integration/testdata/sls/jobs30.json on nodes10.json (30 MapReduce
# jobs, 771 tasks, 10 nodes of 10 GB / 10 vcores, two queues of 50%). SLS runs in real
# time (about 4 minutes for it); bobbin sim in simulated time. OUT_DIR gets the SLS
# output (apache/), bobbin.json, both wall times and peak RSS (time.txt) and
# comparison.md (bobbin bench sls-compare).
set -euo pipefail

out=${1:?usage: sls-side-by-side.sh OUT_DIR [SLS-JOBS.json NODES.json CAPACITY-SCHEDULER.xml]}
here=$(cd "$(dirname "$0")/../.." && pwd)
jobs=$(realpath "${2:-$here/integration/testdata/sls/jobs30.json}")
nodes=$(realpath "${3:-$here/integration/testdata/sls/nodes10.json}")
capsched=$(realpath "${4:-$here/integration/testdata/sls/capacity-scheduler.xml}")
bobbin=${BOBBIN:-$here/bin/bobbin}
[ -x "$bobbin" ] || { echo "no $bobbin: run make build" >&2; exit 1; }
[ -n "${HADOOP_HOME:-}" ] || { echo "HADOOP_HOME is unset: eval \"\$(../shared/hadoop/real-hadoop.sh env /root/hadoop)\" first" >&2; exit 1; }
sls=$HADOOP_HOME/share/hadoop/tools/sls
[ -x "$sls/bin/slsrun.sh" ] || [ -f "$sls/bin/slsrun.sh" ] || { echo "no SLS in $sls" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
conf=$out/conf
rm -rf "$conf" "$out/apache"
mkdir -p "$conf" "$out/apache"

# SLS's own settings (node and container sizes, heartbeats) as shipped; the RM with the
# CapacityScheduler and the queues Bobbin reads too. Token services by host name: the
# simulated nodes' names do not resolve.
cp "$sls/sample-conf/sls-runner.xml" "$conf/"
cp "$capsched" "$conf/capacity-scheduler.xml"
prop() { printf '  <property><name>%s</name><value>%s</value></property>\n' "$1" "$2"; }
{
	echo '<?xml version="1.0"?><configuration>'
	prop yarn.resourcemanager.scheduler.class org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler
	for p in webapp:18088 resource-tracker:18031 scheduler:18030 "":18032 admin:18033; do
		name=${p%%:*}
		prop "yarn.resourcemanager.${name:+$name.}address" "localhost:${p##*:}"
	done
	prop hadoop.security.token.service.use_ip false
	echo '</configuration>'
} >"$conf/yarn-site.xml"
echo '<?xml version="1.0"?><configuration></configuration>' >"$conf/core-site.xml"
cat >"$conf/log4j.properties" <<EOF
log4j.rootLogger=INFO,file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File=$out/apache/sls.log
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=%d{ABSOLUTE} %5p %c{1}:%L - %m%n
EOF

# Hadoop 2.7's host-name token services reach into JDK internals Java 17 closes.
export HADOOP_CONF_DIR=$conf
export HADOOP_OPTS="${HADOOP_OPTS:-} --add-exports java.base/sun.net.dns=ALL-UNNAMED --add-exports java.base/sun.net.util=ALL-UNNAMED"
echo "Apache SLS: $jobs on $nodes (real time; several minutes)" >&2
# The html dir SLS serves from is relative to its bin's parent.
(cd "$sls" && /usr/bin/time -f "apache_sls wall_s=%e peak_rss_kb=%M" -o "$out/time.txt" \
	bash bin/slsrun.sh --input-sls="$jobs" --nodes="$nodes" --output-dir="$out/apache" >"$out/apache/slsrun.out" 2>&1)

echo "bobbin sim --sls" >&2
/usr/bin/time -a -f "bobbin_sim wall_s=%e peak_rss_kb=%M" -o "$out/time.txt" \
	"$bobbin" sim --sls --sls-nodes "$nodes" --capacity-scheduler "$capsched" "$jobs" >"$out/bobbin.json"

"$bobbin" bench sls-compare --trace "$jobs" --sls-nodes "$nodes" --apache "$out/apache" --bobbin "$out/bobbin.json" >"$out/comparison.md"
cat "$out/time.txt" "$out/comparison.md"
