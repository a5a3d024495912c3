#!/usr/bin/env bash
# rm-side-by-side.sh: Apache ResourceManagers and the Bobbin ResourceManager under the
# same load, one after the other, on this machine, with the same configuration.
#
#   eval "$(../shared/hadoop/real-hadoop.sh env /root/hadoop)"   # HADOOP_HOME, JAVA_HOME, YARN_OPTS
#   export HADOOP3_HOME=/root/hadoop/hadoop-3.1.1                  # for apache3-async
#   make build
#   integration/bench/rm-side-by-side.sh OUT_DIR [bobbin bench rm flags...]
#
# For each RM it times start-to-serving (bobbin bench startup; SKIP_STARTUP=1 skips it),
# starts it again with GC logging, runs `bobbin bench rm --rm-pid` against it, stops it
# and summarizes its GC log. OUT_DIR gets <rm>.json, the GC logs, the RMs' logs and
# summary.md (the table docs/benchmarks.md shows). RMS names the RMs, in order (default
# "apache bobbin"):
#   apache         Apache 2.7.3, CapacityScheduler as shipped (one off-switch container per
#                  node heartbeat)
#   apache-fair    Apache 2.7.3, FairScheduler with assignmultiple=true, max.assign=-1
#   apache3-async  Apache 3.1.1 ($HADOOP3_HOME), CapacityScheduler with
#                  schedule-asynchronously.enable=true and
#                  per-node-heartbeat.maximum-offswitch-assignments=100
#   bobbin         `bobbin resourcemanager` with its defaults
# RECOVERY=1 runs each RM with its state store on (yarn.resourcemanager.recovery.enabled,
# FileSystemRMStateStore in OUT_DIR/rmstore, emptied before each RM).
# ZK_ADDRESS=host:port (with RECOVERY=1) puts the store in that running ZooKeeper instead
# (ZKRMStateStore under /rmbench, deleted before each RM with $ZK_CLI, by default
# /usr/share/zookeeper/bin/zkCli.sh).
# RESTART_AFTER=DURATION (implies RECOVERY=1) kills each RM (kill -9) that far into the
# window and starts it again on its store: the result's "restart" says when it served,
# when every NodeManager and AM had resynced, and the containers it held then
# (`bobbin bench rm --restart-cmd`).
# PPROF=1 serves the Bobbin RM's /debug/pprof (bobbin.resourcemanager.webapp.pprof.enabled).
# RM_GOMAXPROCS sets the Bobbin RM's GOMAXPROCS (not the generator's), RM_GOGC its GOGC.
# PIN=1 runs the RM on CPU 0 and the load generator on CPU 1 (taskset), so neither can
# take the other's processor; unset, both share every CPU.
set -euo pipefail

out=${1:?usage: rm-side-by-side.sh OUT_DIR [bobbin bench rm flags...]}
shift
here=$(cd "$(dirname "$0")/../.." && pwd)
bobbin=${BOBBIN:-$here/bin/bobbin}
rms=${RMS:-apache bobbin}
rm_cpu_s="" gen_cpu=() # rm_cpu_s is a string: restart_rm, run by the generator, needs it
if [ -n "${PIN:-}" ]; then
	rm_cpu_s="taskset -c 0" gen_cpu=(taskset -c 1)
fi
export rm_cpu_s
[ -x "$bobbin" ] || { echo "no $bobbin: run make build" >&2; exit 1; }
if [[ " $rms " == *" apache"* ]] && [ -z "${HADOOP_HOME:-}" ]; then
	echo "HADOOP_HOME is unset: eval \"\$(../shared/hadoop/real-hadoop.sh env /root/hadoop)\" first (or RMS=bobbin)" >&2
	exit 1
fi
if [[ " $rms " == *" apache3-async "* ]] && [ ! -x "${HADOOP3_HOME:-}/bin/yarn" ]; then
	echo "HADOOP3_HOME does not hold Hadoop 3.1.1 (needed by apache3-async)" >&2
	exit 1
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
conf=$out/conf
mkdir -p "$conf"

# One configuration for both: the RM's four addresses on loopback and YARN's defaults
# for everything else (the Apache RM reads capacity-scheduler.xml from the same dir).
prop() { printf '  <property><name>%s</name><value>%s</value></property>\n' "$1" "$2"; }
{
	echo '<?xml version="1.0"?><configuration>'
	prop yarn.resourcemanager.hostname 127.0.0.1
	prop yarn.resourcemanager.webapp.address 127.0.0.1:${WEB_PORT:-8088}
	prop yarn.nodemanager.resource.memory-mb 65536
	if [ -n "${PPROF:-}" ]; then prop bobbin.resourcemanager.webapp.pprof.enabled true; fi
	if [ -n "${RECOVERY:-}${RESTART_AFTER:-}" ]; then
		prop yarn.resourcemanager.recovery.enabled true
		prop yarn.resourcemanager.fs.state-store.uri "file://$out/rmstore"
		if [ -n "${ZK_ADDRESS:-}" ]; then
			prop yarn.resourcemanager.store.class org.apache.hadoop.yarn.server.resourcemanager.recovery.ZKRMStateStore
			prop yarn.resourcemanager.zk-address "$ZK_ADDRESS"
			prop hadoop.zk.address "$ZK_ADDRESS"
			prop yarn.resourcemanager.zk-state-store.parent-path /rmbench
		fi
	fi
	echo '</configuration>'
} >"$conf/yarn-site.xml"
rm -rf "$out/rmstore"
{
	echo '<?xml version="1.0"?><configuration>'
	prop fs.defaultFS file:///
	prop hadoop.tmp.dir "$out/tmp"
	echo '</configuration>'
} >"$conf/core-site.xml"
{
	echo '<?xml version="1.0"?><configuration>'
	prop yarn.scheduler.capacity.root.queues default
	prop yarn.scheduler.capacity.root.default.capacity 100
	prop yarn.scheduler.capacity.root.default.maximum-capacity 100
	prop yarn.scheduler.capacity.maximum-applications 10000
	echo '</configuration>'
} >"$conf/capacity-scheduler.xml"
if [ -n "${HADOOP_HOME:-}" ]; then
	cp "$HADOOP_HOME/etc/hadoop/log4j.properties" "$conf/"
fi

# Each Apache variant gets its own copy of the configuration with its scheduler's keys.
variant_conf() { # name, then yarn-site properties as name=value
	local dir=$out/conf-$1
	shift
	rm -rf "$dir"
	cp -r "$conf" "$dir"
	local extra=""
	for kv in "$@"; do extra+=$(prop "${kv%%=*}" "${kv#*=}"); done
	sed -i "s|</configuration>|$extra</configuration>|" "$dir/yarn-site.xml"
}
variant_conf apache-fair \
	yarn.resourcemanager.scheduler.class=org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler \
	yarn.scheduler.fair.assignmultiple=true yarn.scheduler.fair.max.assign=-1
variant_conf apache3-async \
	yarn.scheduler.capacity.schedule-asynchronously.enable=true \
	yarn.scheduler.capacity.per-node-heartbeat.maximum-offswitch-assignments=100
# 3.1.1's async scheduler keys are read from capacity-scheduler.xml.
sed -i "s|</configuration>|$(prop yarn.scheduler.capacity.schedule-asynchronously.enable true)$(prop yarn.scheduler.capacity.per-node-heartbeat.maximum-offswitch-assignments 100)</configuration>|" \
	"$out/conf-apache3-async/capacity-scheduler.xml"

apache_cmd() {
	YARN_LOG_DIR=$out/apache-logs YARN_PID_DIR=$out YARN_RESOURCEMANAGER_OPTS="${1:-}" \
		exec "$HADOOP_HOME/bin/yarn" --config "$conf" resourcemanager
}
apache_fair_cmd() {
	YARN_LOG_DIR=$out/apache-fair-logs YARN_PID_DIR=$out YARN_RESOURCEMANAGER_OPTS="${1:-}" \
		exec "$HADOOP_HOME/bin/yarn" --config "$out/conf-apache-fair" resourcemanager
}
apache3_async_cmd() {
	local h=$HADOOP3_HOME
	HADOOP_HOME=$h HADOOP_PREFIX=$h HADOOP_COMMON_HOME=$h HADOOP_HDFS_HOME=$h HADOOP_YARN_HOME=$h HADOOP_MAPRED_HOME=$h \
		HADOOP_LOG_DIR=$out/apache3-async-logs HADOOP_PID_DIR=$out YARN_RESOURCEMANAGER_OPTS="${1:-}" \
		exec "$h/bin/yarn" --config "$out/conf-apache3-async" resourcemanager
}
bobbin_cmd() {
	if [ -n "${RM_GOGC:-}" ]; then export GOGC=$RM_GOGC; fi
	GOMAXPROCS=${RM_GOMAXPROCS:-} exec "$bobbin" resourcemanager --conf "$conf"
}
export -f apache_cmd apache_fair_cmd apache3_async_cmd bobbin_cmd
export HADOOP_HOME HADOOP3_HOME out conf bobbin

wait_serving() { # pid
	for _ in $(seq 600); do
		if "$bobbin" client --rm 127.0.0.1:8032 cluster >/dev/null 2>&1; then return 0; fi
		kill -0 "$1" 2>/dev/null || { echo "RM $1 died; see $out" >&2; return 1; }
		sleep 0.2
	done
	echo "RM $1 not serving after 120 s" >&2
	return 1
}

# start_rm RM: starts it in the background, its pid in OUT_DIR/rm.pid (a restart appends
# to its log; a JVM's GC log is the last process's).
start_rm() {
	case $1 in
	apache*) $rm_cpu_s bash -c "${1//-/_}_cmd -Xlog:gc:file=$out/$1-gc.log" >>"$out/$1-rm.out" 2>&1 </dev/null & ;;
	bobbin) GODEBUG=gctrace=1 $rm_cpu_s bash -c bobbin_cmd >>"$out/bobbin-rm.log" 2>&1 </dev/null & ;;
	esac
	echo $! >"$out/rm.pid"
}
# restart_rm RM: kill -9 and start again; prints the new pid (bench rm --restart-cmd).
restart_rm() {
	local old
	old=$(cat "$out/rm.pid")
	kill -9 "$old"
	# The new RM opens the same store and ports: wait until the old one is gone.
	for _ in $(seq 300); do gone "$old" && break; sleep 0.1; done
	# The killed JVM stays a zombie of this script's shell, so Hadoop's start script
	# would find its pid alive in the pid file and refuse to start.
	rm -f "$out"/*-resourcemanager.pid
	start_rm "$1"
	cat "$out/rm.pid"
}

gone() { # pid: exited (a zombie too: a restarted RM is not this shell's child)
	! kill -0 "$1" 2>/dev/null || [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = Z ]
}
export -f start_rm restart_rm gone
stop_rm() { # pid
	kill "$1" 2>/dev/null || true
	for _ in $(seq 150); do gone "$1" && return 0; sleep 0.2; done
	kill -9 "$1" 2>/dev/null || true
}

for rm in $rms; do
	declare -F "${rm//-/_}_cmd" >/dev/null || { echo "unknown RM $rm (apache, apache-fair, apache3-async, bobbin)" >&2; exit 1; }
	if [ -z "${SKIP_STARTUP:-}" ]; then
		echo "== $rm: start-to-serving" >&2
		"$bobbin" bench startup --conf "$conf" -- $rm_cpu_s bash -c "${rm//-/_}_cmd" >"$out/$rm-startup.json"
		cat "$out/$rm-startup.json" >&2
		sleep 2
	fi
	echo "== $rm: load" >&2
	rm -rf "$out/rmstore" "$out/$rm-rm.out" "$out/bobbin-rm.log"
	if [ -n "${ZK_ADDRESS:-}" ] && [ -n "${RECOVERY:-}${RESTART_AFTER:-}" ]; then
		"${ZK_CLI:-/usr/share/zookeeper/bin/zkCli.sh}" -server "$ZK_ADDRESS" deleteall /rmbench >/dev/null 2>&1 || true
	fi
	start_rm "$rm"
	pid=$(cat "$out/rm.pid")
	wait_serving "$pid"
	extra=()
	if [ "$rm" = bobbin ]; then extra=(--rm-web "127.0.0.1:${WEB_PORT:-8088}"); fi # its GC pauses and live heap
	if [ -n "${RESTART_AFTER:-}" ]; then extra+=(--restart-after "$RESTART_AFTER" --restart-cmd "restart_rm $rm"); fi
	"${gen_cpu[@]}" "$bobbin" bench rm --conf "$conf" --rm-pid "$pid" "${extra[@]}" "$@" >"$out/$rm.json" || { stop_rm "$(cat "$out/rm.pid")"; exit 1; }
	pid=$(cat "$out/rm.pid")
	stop_rm "$pid"
	wait "$pid" 2>/dev/null || true
	sleep 2
done

# GC summaries: collections, total and longest stop-the-world pause, from the JVM's
# unified GC log and from the Go runtime's gctrace (the two stop-the-world phases).
gc_apache() { # rm name
	awk '/Pause/ { n++; ms=$NF; sub("ms","",ms); ms+=0; t+=ms; if (ms>m) m=ms }
		END { printf "{\"collections\": %d, \"pause_total_ms\": %.1f, \"pause_max_ms\": %.1f}\n", n, t, m }' "$out/$1-gc.log"
}
gc_bobbin() {
	awk '/^gc [0-9]+ @/ { n++; split($5, c, "+"); p=c[1]+c[3]; t+=p; if (p>m) m=p }
		END { printf "{\"collections\": %d, \"pause_total_ms\": %.1f, \"pause_max_ms\": %.1f}\n", n, t, m }' "$out/bobbin-rm.log"
}
args=()
for rm in $rms; do
	case $rm in
	apache*) gc_apache "$rm" >"$out/$rm-gc.json" ;;
	bobbin) gc_bobbin >"$out/$rm-gc.json" ;;
	esac
	if [ -z "${SKIP_STARTUP:-}" ]; then
		args+=("$rm=$out/$rm.json,$out/$rm-startup.json,$out/$rm-gc.json")
	else
		args+=("$rm=$out/$rm.json,$out/$rm-gc.json")
	fi
done
"$bobbin" bench compare "${args[@]}" | tee "$out/summary.md"
