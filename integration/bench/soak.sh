#!/bin/bash
# soak.sh OUT_DIR: issue 44's recovery soak. An RM and two NodeManagers (4 GB, 4 vcores each)
# with work-preserving RM recovery (FileSystemRMStateStore on file://) and NM recovery on
# run a continuous mix of Hadoop 2.7.3 jobs — pi 2 10, a sleep job (2 maps of 4 s, a reduce
# of 2 s) and a distributed shell (2 containers sleeping 5 s) — JOBS at a time (default 3),
# for DURATION seconds (default 1200), while every 20-60 s (at random) the RM or one of the
# NodeManagers is killed with SIGKILL and started again 2 s later. Then it waits for the
# jobs still running and prints what became of every job:
#   submitted, succeeded, failed (the client's exit status, or pi without its estimate),
#   lost (an application a client was told it submitted that the RM does not list at the
#   end),
#   and the extra wall time: the jobs' time beyond what each kind took in a calibration
#   before the soak (one job of each kind at once, no kills).
# RM=bobbin (default) runs Bobbin's RM and NodeManagers; RM=apache Apache 2.7.3's, with the
# same configuration; a JobHistoryServer runs beside either. SEED seeds the kills' schedule (default 44). Run as root, in a private
# network namespace (the daemons use YARN's default ports):
#   unshare -n integration/bench/soak.sh /tmp/soak-bobbin
#   RM=apache unshare -n integration/bench/soak.sh /tmp/soak-apache
set -u
out=${1:?usage: soak.sh OUT_DIR}
kind=${RM:-bobbin}
duration=${DURATION:-1200}
jobs=${JOBS:-3}
RANDOM=${SEED:-44}
repo=$(cd "$(dirname "$0")/../.." && pwd)
S=$repo/../shared/hadoop/real-hadoop.sh
mkdir -p "$out" && out=$(cd "$out" && pwd) && cd "$out" || exit 1
rm -rf conf conf1 work work1 rmstore nm-recovery-* jobs results kills
mkdir -p jobs
(cd "$repo" && go build -o "$out/bobbin" ./cmd/bobbin) || exit 1
eval "$($S env "$HOME/hadoop-dist" 2.7.3)"
$S conf "$HOME/hadoop-dist" "$out/conf" 2.7.3 > /dev/null
WORK=$out/work1 NM_PORT=8051 NM_LOC_PORT=8050 NM_WEB_PORT=8052 SHUFFLE_PORT=13563 $S conf "$HOME/hadoop-dist" "$out/conf1" 2.7.3 > /dev/null
for i in 0 1; do
  c=$out/conf; [ $i = 1 ] && c=$out/conf1
  sed -i "s|</configuration>|<property><name>yarn.resourcemanager.recovery.enabled</name><value>true</value></property>\
<property><name>yarn.resourcemanager.store.class</name><value>org.apache.hadoop.yarn.server.resourcemanager.recovery.FileSystemRMStateStore</value></property>\
<property><name>yarn.resourcemanager.fs.state-store.uri</name><value>file://$out/rmstore</value></property>\
<property><name>yarn.nodemanager.recovery.enabled</name><value>true</value></property>\
<property><name>yarn.nodemanager.recovery.dir</name><value>$out/nm-recovery-$i</value></property>\
<property><name>yarn.resourcemanager.nodemanagers.heartbeat-interval-ms</name><value>500</value></property>\n</configuration>|" "$c/yarn-site.xml"
done
export HADOOP_CONF_DIR=$out/conf YARN_CONF_DIR=$out/conf
ip link set lo up 2>/dev/null

start_rm() {
  if [ "$kind" = apache ]; then
    yarn resourcemanager >> rm.log 2>&1 &
  else
    ./bobbin resourcemanager --conf conf >> rm.log 2>&1 &
  fi
  RMPID=$!
}
start_nm() { # i
  local c=$out/conf; [ "$1" = 1 ] && c=$out/conf1
  if [ "$kind" = apache ]; then
    env HADOOP_CONF_DIR="$c" YARN_CONF_DIR="$c" YARN_PID_DIR="$out/pids-$1" HADOOP_PID_DIR="$out/pids-$1" yarn nodemanager >> "nm$1.log" 2>&1 &
  else
    ./bobbin nodemanager --conf "$c" >> "nm$1.log" 2>&1 &
  fi
  eval "NM$1=\$!"
}
nodes_running() { curl -s http://127.0.0.1:8088/ws/v1/cluster/nodes 2>/dev/null | grep -o '"state" *: *"RUNNING"' | wc -l; }

EX=$HADOOP_HOME/share/hadoop/mapreduce/hadoop-mapreduce-examples-2.7.3.jar
TESTS=$HADOOP_HOME/share/hadoop/mapreduce/hadoop-mapreduce-client-jobclient-2.7.3-tests.jar
DS=$HADOOP_HOME/share/hadoop/yarn/hadoop-yarn-applications-distributedshell-2.7.3.jar
kinds=(pi sleep dshell)
command_of() {
  case $1 in
    pi) echo "hadoop jar $EX pi 2 10" ;;
    sleep) echo "env HADOOP_CLASSPATH=$TESTS hadoop org.apache.hadoop.mapreduce.SleepJob -m 2 -r 1 -mt 4000 -rt 2000" ;;
    dshell) echo "yarn jar $DS -jar $DS -shell_command 'sleep 5' -num_containers 2 -master_memory 256 -container_memory 128" ;;
  esac
}
# run_job N KIND: one job; its line in results: N KIND EXIT SECONDS APPLICATION.
run_job() {
  local t0 rc app
  t0=$(date +%s.%N)
  eval "timeout 900 $(command_of "$2")" > "jobs/$1.log" 2>&1
  rc=$?
  [ "$2" = pi ] && [ $rc = 0 ] && ! grep -q "Estimated value of Pi is" "jobs/$1.log" && rc=99
  app=$(grep -o 'Submitted application application_[0-9]*_[0-9]*' "jobs/$1.log" | head -1 | awk '{print $3}')
  echo "$1 $2 $rc $(echo "$(date +%s.%N) - $t0" | bc) ${app:-none}" >> results
}

start_rm
for i in 0 1; do start_nm $i; done
# A JobHistoryServer, as clusters run one: a job client that misses its AM's last seconds
# (slowed by a kill) asks it for the job's end. 2.7.3 reads the conf's empty address as
# its default, 0.0.0.0:10020.
mapred historyserver > jhs.log 2>&1 &
JHS=$!
for i in $(seq 1 240); do [ "$(nodes_running)" -ge 2 ] && break; sleep 0.5; done
echo "$(date +%T) $kind RM and 2 NodeManagers up"

# Calibration: one job of each kind at once (the soak's load, three jobs at a time), no kills.
cal=()
for k in "${kinds[@]}"; do run_job "calibrate-$k" "$k" & cal+=($!); done
for p in "${cal[@]}"; do wait "$p"; done
declare -A base
while read -r n k rc secs app; do base[$k]=$secs; done < results
echo "$(date +%T) calibration (s): pi ${base[pi]} sleep ${base[sleep]} dshell ${base[dshell]}"
mv results calibration

# The killer: every 20-60 s the RM or an NM, SIGKILL, started again 2 s later.
end=$(( $(date +%s) + duration ))
(
  while [ "$(date +%s)" -lt "$end" ]; do
    sleep $(( 20 + RANDOM % 41 ))
    [ "$(date +%s)" -ge "$end" ] && break
    case $(( RANDOM % 3 )) in
      0) kill -9 "$RMPID"; wait "$RMPID" 2>/dev/null; sleep 2; start_rm; echo "$(date +%T) rm" >> kills ;;
      *) i=$(( RANDOM % 2 )); eval "p=\$NM$i"; kill -9 "$p"; wait "$p" 2>/dev/null; sleep 2; start_nm $i; echo "$(date +%T) nm$i" >> kills ;;
    esac
    # The pids for the final stop.
    echo "$RMPID $NM0 $NM1" > daemons
  done
) &
KILLER=$!
echo "$RMPID $NM0 $NM1" > daemons

n=0
pids=()
running() { local c=0 p; for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && c=$((c + 1)); done; echo $c; }
while [ "$(date +%s)" -lt "$end" ]; do
  while [ "$(running)" -ge "$jobs" ] && [ "$(date +%s)" -lt "$end" ]; do sleep 0.5; done
  [ "$(date +%s)" -ge "$end" ] && break
  n=$((n + 1))
  run_job "$n" "${kinds[$((RANDOM % 3))]}" &
  pids+=($!)
done
wait $KILLER
echo "$(date +%T) soak over; waiting for the jobs still running"
for p in "${pids[@]}"; do wait "$p"; done

apps=$(yarn application -list -appStates ALL 2>/dev/null | grep -o 'application_[0-9]*_[0-9]*' | sort -u)
submitted=$(wc -l < results)
succeeded=$(awk '$3 == 0' results | wc -l)
failed=$(awk '$3 != 0' results | wc -l)
lost=0
while read -r n k rc secs app; do
  # A job whose client never got an application id submitted nothing to lose (it failed).
  if [ "$app" != none ] && ! grep -qx "$app" <<< "$apps"; then lost=$((lost + 1)); echo "lost: job $n ($k) application $app"; fi
done < results
extra=$(while read -r n k rc secs app; do echo "$secs - ${base[$k]}"; done < results | paste -sd+ | bc)
total=$(awk '{s += $4} END {print s}' results)
echo "$kind: duration ${duration}s, kills $(wc -l < kills) (rm $(grep -c ' rm$' kills), nm $(grep -c ' nm' kills)); jobs submitted $submitted, succeeded $succeeded, failed $failed, lost $lost; extra wall time ${extra} s over ${total} s of jobs"
awk '$3 != 0 {print "failed: job " $1 " (" $2 ") exit " $3 " " $5}' results
read -r a b c < daemons
kill $b $c $JHS 2>/dev/null; sleep 1; kill -9 $b $c 2>/dev/null; kill $a; wait
