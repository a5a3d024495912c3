#!/usr/bin/env bash
# `make run`: starts a ResourceManager and a NodeManager on loopback with built-in defaults
# (only addresses and directories are set), runs the demo application — a Go AM that runs a
# shell command in three containers through Bobbin's own AM and NM clients — prints what
# the containers wrote, then keeps the cluster running until Ctrl-C (BOBBIN_RUN_ONCE=1
# stops at once). No Hadoop needed. The configuration it writes stays in $BOBBIN_RUN_CONF
# (/tmp/bobbin-run-conf) after it stops, for Hadoop clients to point at.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(pwd)/bin/bobbin
work=$(mktemp -d /tmp/bobbin-run.XXXXXX)
conf=${BOBBIN_RUN_CONF:-/tmp/bobbin-run-conf}
mkdir -p "$conf"
port=${BOBBIN_RM_PORT:-8032}
cat >"$conf/yarn-site.xml" <<XML
<configuration>
  <property><name>yarn.resourcemanager.hostname</name><value>127.0.0.1</value></property>
  <property><name>yarn.resourcemanager.address</name><value>127.0.0.1:${port}</value></property>
  <property><name>yarn.nodemanager.hostname</name><value>127.0.0.1</value></property>
  <property><name>yarn.nodemanager.local-dirs</name><value>$work/nm-local</value></property>
  <property><name>yarn.nodemanager.log-dirs</name><value>$work/nm-logs</value></property>
  <property><name>yarn.scheduler.minimum-allocation-mb</name><value>128</value></property>
  <!-- Go and Java runtimes reserve far more virtual memory than they use: like most
       clusters, the demo keeps the physical-memory check and turns the virtual one off. -->
  <property><name>yarn.nodemanager.vmem-check-enabled</name><value>false</value></property>
</configuration>
XML
echo "Starting bobbin resourcemanager on 127.0.0.1:${port} and a nodemanager (logs: $work/rm.log, $work/nm.log)"
echo "Configuration: $conf/yarn-site.xml (kept after this stops: export HADOOP_CONF_DIR=$conf for the yarn CLI)"
"$bin" resourcemanager --conf "$conf" >"$work/rm.log" 2>&1 &
rm_pid=$!
nm_pid=
cleanup() {
  [ -n "$nm_pid" ] && kill -TERM "$nm_pid" 2>/dev/null && wait "$nm_pid" 2>/dev/null
  kill -TERM $rm_pid 2>/dev/null; wait $rm_pid 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
for _ in $(seq 1 100); do
  if "$bin" client --rm "127.0.0.1:${port}" cluster >/dev/null 2>&1; then break; fi
  if ! kill -0 $rm_pid 2>/dev/null; then cat "$work/rm.log"; exit 1; fi
  sleep 0.1
done
"$bin" nodemanager --conf "$conf" >"$work/nm.log" 2>&1 &
nm_pid=$!
for _ in $(seq 1 100); do
  if grep -q "registered with the ResourceManager" "$work/nm.log"; then break; fi
  if ! kill -0 $nm_pid 2>/dev/null; then cat "$work/nm.log"; exit 1; fi
  sleep 0.1
done
"$bin" client --rm "127.0.0.1:${port}" cluster
echo
echo "Running the demo application:"
"$bin" demo --rm "127.0.0.1:${port}" --scheduler 127.0.0.1:8030 --containers 3 \
  --command 'echo "hello from $CONTAINER_ID on $(hostname), $(nproc) cores"'
echo
echo "What the containers wrote:"
for f in "$work"/nm-logs/application_*/container_*/stdout; do
  case "$f" in *_000001/*) continue ;; esac
  echo "  $(basename "$(dirname "$f")"): $(cat "$f")"
done
if [ -n "${BOBBIN_RUN_ONCE:-}" ]; then exit 0; fi
echo
echo "RM and NM running (web UI: http://127.0.0.1:8088/cluster). Hadoop clients: export HADOOP_CONF_DIR=$conf; yarn node -list. Ctrl-C stops them."
wait $rm_pid
