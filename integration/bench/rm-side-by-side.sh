#!/usr/bin/env bash
# rm-side-by-side.sh: the Apache ResourceManager and the Bobbin ResourceManager under the
# same load, one after the other, on this machine, with the same configuration.
#
#   eval "$(../shared/hadoop/real-hadoop.sh env /root/hadoop)"   # HADOOP_HOME, JAVA_HOME, YARN_OPTS
#   make build
#   integration/bench/rm-side-by-side.sh OUT_DIR [bobbin bench rm flags...]
#
# For each RM it times start-to-serving (bobbin bench startup), starts it again with GC
# logging, runs `bobbin bench rm --rm-pid` against it, stops it and summarizes its GC
# log. OUT_DIR gets apache.json, bobbin.json, the GC logs, the RMs' logs and
# summary.md (the table docs/benchmarks.md shows). RMS=bobbin or RMS=apache runs one.
# RECOVERY=1 runs each RM with its state store on (yarn.resourcemanager.recovery.enabled,
# FileSystemRMStateStore in OUT_DIR/rmstore-<rm>, emptied first).
# PIN=1 runs the RM on CPU 0 and the load generator on CPU 1 (taskset), so neither can
# take the other's processor; unset, both share every CPU.
set -euo pipefail

out=${1:?usage: rm-side-by-side.sh OUT_DIR [bobbin bench rm flags...]}
shift
here=$(cd "$(dirname "$0")/../.." && pwd)
bobbin=${BOBBIN:-$here/bin/bobbin}
rms=${RMS:-apache bobbin}
rm_cpu=() gen_cpu=()
if [ -n "${PIN:-}" ]; then
	rm_cpu=(taskset -c 0) gen_cpu=(taskset -c 1)
fi
[ -x "$bobbin" ] || { echo "no $bobbin: run make build" >&2; exit 1; }
if [[ " $rms " == *" apache "* ]] && [ -z "${HADOOP_HOME:-}" ]; then
	echo "HADOOP_HOME is unset: eval \"\$(../shared/hadoop/real-hadoop.sh env /root/hadoop)\" first (or RMS=bobbin)" >&2
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
	if [ -n "${RECOVERY:-}" ]; then
		prop yarn.resourcemanager.recovery.enabled true
		prop yarn.resourcemanager.fs.state-store.uri "file://$out/rmstore"
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

apache_cmd() {
	YARN_LOG_DIR=$out/apache-logs YARN_PID_DIR=$out YARN_RESOURCEMANAGER_OPTS="${1:-}" \
		exec "$HADOOP_HOME/bin/yarn" --config "$conf" resourcemanager
}
bobbin_cmd() {
	exec "$bobbin" resourcemanager --conf "$conf"
}
export -f apache_cmd bobbin_cmd
export HADOOP_HOME out conf bobbin

wait_serving() { # pid
	for _ in $(seq 600); do
		if "$bobbin" client --rm 127.0.0.1:8032 cluster >/dev/null 2>&1; then return 0; fi
		kill -0 "$1" 2>/dev/null || { echo "RM $1 died; see $out" >&2; return 1; }
		sleep 0.2
	done
	echo "RM $1 not serving after 120 s" >&2
	return 1
}

stop_rm() { # pid
	kill "$1" 2>/dev/null || true
	for _ in $(seq 150); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.2; done
	kill -9 "$1" 2>/dev/null || true
}

for rm in $rms; do
	echo "== $rm: start-to-serving" >&2
	"$bobbin" bench startup --conf "$conf" -- "${rm_cpu[@]}" bash -c "${rm}_cmd" >"$out/$rm-startup.json"
	cat "$out/$rm-startup.json" >&2
	sleep 2
	echo "== $rm: load" >&2
	case $rm in
	apache) "${rm_cpu[@]}" bash -c "apache_cmd -Xlog:gc:file=$out/apache-gc.log" >"$out/apache-rm.out" 2>&1 & ;;
	bobbin) GODEBUG=gctrace=1 "${rm_cpu[@]}" bash -c bobbin_cmd >"$out/bobbin-rm.log" 2>&1 & ;;
	esac
	pid=$!
	wait_serving "$pid"
	"${gen_cpu[@]}" "$bobbin" bench rm --conf "$conf" --rm-pid "$pid" "$@" >"$out/$rm.json" || { stop_rm "$pid"; exit 1; }
	stop_rm "$pid"
	wait "$pid" 2>/dev/null || true
	sleep 2
done

# GC summaries: collections, total and longest stop-the-world pause, from the JVM's
# unified GC log and from the Go runtime's gctrace (the two stop-the-world phases).
gc_apache() {
	awk '/Pause/ { n++; ms=$NF; sub("ms","",ms); ms+=0; t+=ms; if (ms>m) m=ms }
		END { printf "{\"collections\": %d, \"pause_total_ms\": %.1f, \"pause_max_ms\": %.1f}\n", n, t, m }' "$out/apache-gc.log"
}
gc_bobbin() {
	awk '/^gc [0-9]+ @/ { n++; split($5, c, "+"); p=c[1]+c[3]; t+=p; if (p>m) m=p }
		END { printf "{\"collections\": %d, \"pause_total_ms\": %.1f, \"pause_max_ms\": %.1f}\n", n, t, m }' "$out/bobbin-rm.log"
}
args=()
for rm in $rms; do
	"gc_$rm" >"$out/$rm-gc.json"
	args+=("$rm=$out/$rm.json,$out/$rm-startup.json,$out/$rm-gc.json")
done
"$bobbin" bench compare "${args[@]}" | tee "$out/summary.md"
