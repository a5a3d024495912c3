#!/bin/bash
# fair-pi.sh OUT_DIR: a real run of the Fair Scheduler's weights (issue 22). Bobbin's RM and
# NM (12 GB, 12 vcores) run a fair-scheduler.xml with queues a, b, c weighted 1:2:3 (each at
# most 2 running applications, no AM limit); two Hadoop 2.7.3 pi jobs (MAPS maps of 1 GB,
# default 30; reducers of REDUCE_MB, default the configuration's 256) per queue are submitted at once, the RM's REST scheduler view is sampled every 0.5 s, and
# each queue's share of what the three hold is averaged over the samples in which all three
# have containers pending. PREEMPTION=1 turns on the Fair Scheduler's preemption
# (yarn.scheduler.fair.preemption), which takes back what a queue took while the others' AMs
# were starting from a queue starved below THRESHOLD (defaultFairSharePreemptionThreshold,
# default 0.5) of its fair share. Run as root (it uses a private network namespace):
#   unshare -n integration/bench/fair-pi.sh /tmp/fairpi
set -u
out=${1:?usage: fair-pi.sh OUT_DIR}
repo=$(cd "$(dirname "$0")/../.." && pwd)
S=$repo/../shared/hadoop/real-hadoop.sh
mkdir -p "$out" && cd "$out" || exit 1
(cd "$repo" && go build -o "$out/bobbin" ./cmd/bobbin) || exit 1
eval "$($S env "$HOME/hadoop-dist" 2.7.3)"
NM_MEM_MB=12288 NM_VCORES=12 RM_PORT=18032 RM_SCHED_PORT=18030 RM_TRACKER_PORT=18031 RM_ADMIN_PORT=18033 \
  RM_WEB_PORT=18088 NM_PORT=18041 NM_WEB_PORT=18042 SHUFFLE_PORT=18562 $S conf "$HOME/hadoop-dist" "$out/conf" 2.7.3
sed -i 's|</configuration>|<property><name>yarn.resourcemanager.scheduler.class</name><value>org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler</value></property>\n</configuration>|' conf/yarn-site.xml
if [ -n "${PREEMPTION:-}" ]; then
  sed -i 's|</configuration>|<property><name>yarn.scheduler.fair.preemption</name><value>true</value></property>\n</configuration>|' conf/yarn-site.xml
fi
cat > conf/fair-scheduler.xml <<XML
<?xml version="1.0"?>
<allocations>
  <queueMaxAMShareDefault>-1</queueMaxAMShareDefault>
  <defaultFairSharePreemptionThreshold>${THRESHOLD:-0.5}</defaultFairSharePreemptionThreshold>
  <queue name="a"><weight>1</weight><maxRunningApps>2</maxRunningApps></queue>
  <queue name="b"><weight>2</weight><maxRunningApps>2</maxRunningApps></queue>
  <queue name="c"><weight>3</weight><maxRunningApps>2</maxRunningApps></queue>
  <queuePlacementPolicy>
    <rule name="specified" create="false"/>
    <rule name="default" queue="a"/>
  </queuePlacementPolicy>
</allocations>
XML
export HADOOP_CONF_DIR=$out/conf YARN_CONF_DIR=$out/conf
ip link set lo up 2>/dev/null
./bobbin resourcemanager --conf conf > rm.log 2>&1 & RM=$!
sleep 2
./bobbin nodemanager --conf conf > nm.log 2>&1 & NM=$!
sleep 4
EX=$HADOOP_HOME/share/hadoop/mapreduce/hadoop-mapreduce-examples-2.7.3.jar
pids=()
for q in a b c; do for i in 1 2; do
  timeout $((30 * ${MAPS:-30})) hadoop jar "$EX" pi -Dmapreduce.job.queuename=root.$q -Dmapreduce.map.memory.mb=1024 ${REDUCE_MB:+-Dmapreduce.reduce.memory.mb=$REDUCE_MB} \
    -Dyarn.app.mapreduce.am.resource.mb=1024 "${MAPS:-30}" 2000 > "pi-$q-$i.log" 2>&1 & pids+=($!)
done; done
python3 - > samples.txt <<'PY' &
import json, time, urllib.request
while True:
    try:
        d = json.load(urllib.request.urlopen("http://127.0.0.1:18088/ws/v1/cluster/scheduler", timeout=5))
        # The Fair Scheduler's view: what each queue holds, and its demand beyond that.
        row = {q["queueName"]: [q["usedResources"]["memory"], q["demandResources"]["memory"] - q["usedResources"]["memory"], q["usedResources"]["vCores"]]
               for q in d["scheduler"]["schedulerInfo"]["rootQueue"]["childQueues"]["queue"]}
        print(json.dumps([time.time(), row]), flush=True)
    except Exception as e:
        print(json.dumps([time.time(), str(e)]), flush=True)
    time.sleep(0.5)
PY
SP=$!
for p in "${pids[@]}"; do wait "$p"; done
kill $SP $NM; sleep 1; kill $RM; wait
grep -c "completed successfully" pi-*.log
python3 - <<'PY'
import json
rows = [json.loads(l) for l in open("samples.txt")]
qs, weights = ["root.a", "root.b", "root.c"], [1/6, 2/6, 3/6]
for idx, name in [(0, "memory"), (2, "vcores")]:
    tot, n = {q: 0.0 for q in qs}, 0
    for t, row in rows:
        if isinstance(row, str) or not all(q in row and row[q][1] > 0 for q in qs):
            continue
        used = sum(row[q][idx] for q in qs)
        if used:
            n += 1
            for q in qs:
                tot[q] += row[q][idx] / used
    print(f"by {name}, {n} samples:", ", ".join(f"{q} {tot[q]/n:.3f} (weight {w:.3f}, {100*(tot[q]/n-w)/w:+.1f} %)" for q, w in zip(qs, weights)))
PY
