#!/usr/bin/env bash
# `make run`: starts a ResourceManager on loopback with built-in defaults (no conf dir is
# read), asks it for a new application id and the cluster state with Bobbin's own IPC
# client, then keeps it running until Ctrl-C. The NodeManager and a demo job join this
# script when those issues land.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=./bin/bobbin
work=$(mktemp -d /tmp/bobbin-run.XXXXXX)
port=${BOBBIN_RM_PORT:-8032}
cat >"$work/yarn-site.xml" <<XML
<configuration>
  <property><name>yarn.resourcemanager.hostname</name><value>127.0.0.1</value></property>
  <property><name>yarn.resourcemanager.address</name><value>127.0.0.1:${port}</value></property>
</configuration>
XML
echo "Starting bobbin resourcemanager on 127.0.0.1:${port} (logs: $work/rm.log)"
"$bin" resourcemanager --conf "$work" >"$work/rm.log" 2>&1 &
rm_pid=$!
trap 'kill -TERM $rm_pid 2>/dev/null; wait $rm_pid 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 1 100); do
  if "$bin" client --rm "127.0.0.1:${port}" cluster >/dev/null 2>&1; then break; fi
  if ! kill -0 $rm_pid 2>/dev/null; then cat "$work/rm.log"; exit 1; fi
  sleep 0.1
done
"$bin" client --rm "127.0.0.1:${port}" cluster
"$bin" client --rm "127.0.0.1:${port}" new-application
"$bin" client --rm "127.0.0.1:${port}" queue default
if [ -n "${BOBBIN_RUN_ONCE:-}" ]; then exit 0; fi
echo "ResourceManager running; point HADOOP_CONF_DIR at a conf with yarn.resourcemanager.address=127.0.0.1:${port}. Ctrl-C stops it."
wait $rm_pid
