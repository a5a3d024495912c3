#!/usr/bin/env bash
# rm-saturation.sh: each ResourceManager at its peak, then all at one rate.
#
#   eval "$(../shared/hadoop/real-hadoop.sh env /root/hadoop)"   # HADOOP_HOME (2.7.3), JAVA_HOME
#   export HADOOP3_HOME=/root/hadoop/hadoop-3.1.1
#   make build
#   integration/bench/rm-saturation.sh OUT_DIR [bobbin bench rm flags...]
#
# (a) Saturation: for each RM in RMS (default: apache apache-fair apache3-async bobbin; see
#     rm-side-by-side.sh), the offered load is stepped up — every AM keeps STEPS
#     containers outstanding (default 50 100 200 400 800 1600 3200, 200 AMs, 2,000 NMs)
#     — each step a fresh RM and a DURATION window (default 30s), until two steps in a
#     row rise by less than 5 % over the best so far. The RM's peak is its best step;
#     OUT_DIR/peak.md tabulates every RM at its peak (latencies, RSS, CPU, GC, and the
#     generator's own CPU, which shows when the generator rather than the RM is the limit).
# (b) Equal load: every RM again at the best Apache peak rate (`bench rm --rate`, with
#     3200 outstanding per AM allowed so the rate, not the cap, is the limit):
#     OUT_DIR/equal.md.
# Extra arguments go to every `bobbin bench rm` (e.g. --nodes, --apps).
set -euo pipefail
out=${1:?usage: rm-saturation.sh OUT_DIR [bobbin bench rm flags...]}
shift
here=$(cd "$(dirname "$0")" && pwd)
rms=${RMS:-apache apache-fair apache3-async bobbin}
steps=${STEPS:-50 100 200 400 800 1600 3200}
duration=${DURATION:-30s}
bobbin=${BOBBIN:-$here/../../bin/bobbin}
mkdir -p "$out"
out=$(cd "$out" && pwd)

rate_of() { # result JSON -> allocations/s
	sed -n 's/.*"containers_allocated_per_second": *\([0-9.eE+-]*\).*/\1/p' "$1" | head -1
}
better() { # a b -> exit 0 when a > b*1.05
	awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > b * 1.05) }'
}

declare -A peak_dir peak_rate
for rm in $rms; do
	best=0 bestdir="" flat=0
	for k in $steps; do
		dir=$out/saturation/$rm/asks-$k
		RMS=$rm SKIP_STARTUP=1 "$here/rm-side-by-side.sh" "$dir" --asks-per-app "$k" --duration "$duration" "$@" >/dev/null
		r=$(rate_of "$dir/$rm.json")
		echo "$rm, $k outstanding per AM: $r allocations/s" | tee -a "$out/steps.txt" >&2
		if better "$r" "$best"; then
			best=$r bestdir=$dir flat=0
		else
			# Two steps in a row without a 5 % rise: the peak is behind us. (One is not
			# enough: the Java schedulers can stall at one step and rise at the next.)
			if awk -v a="$r" -v b="$best" 'BEGIN { exit !(a > b) }'; then best=$r bestdir=$dir; fi
			flat=$((flat + 1))
			[ "$flat" -lt 2 ] || break
		fi
	done
	peak_dir[$rm]=$bestdir peak_rate[$rm]=$best
done

args=()
for rm in $rms; do
	args+=("$rm=${peak_dir[$rm]}/$rm.json,${peak_dir[$rm]}/$rm-gc.json")
done
"$bobbin" bench compare "${args[@]}" | tee "$out/peak.md"

# The best Apache configuration's peak rate is the equal load.
equal=0
for rm in $rms; do
	if [[ $rm == apache* ]] && awk -v a="${peak_rate[$rm]}" -v b="$equal" 'BEGIN { exit !(a > b) }'; then equal=${peak_rate[$rm]}; fi
done
if [ "$equal" = 0 ]; then
	echo "no Apache RM in RMS: no equal-load run" >&2
	exit 0
fi
echo "equal load: $equal containers/s" | tee -a "$out/steps.txt" >&2
args=()
for rm in $rms; do
	dir=$out/equal/$rm
	RMS=$rm SKIP_STARTUP=1 "$here/rm-side-by-side.sh" "$dir" --rate "$equal" --asks-per-app 3200 --duration "$duration" "$@" >/dev/null
	args+=("$rm=$dir/$rm.json,$dir/$rm-gc.json")
done
"$bobbin" bench compare "${args[@]}" | tee "$out/equal.md"
