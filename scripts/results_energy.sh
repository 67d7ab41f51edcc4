#!/bin/sh
# SPDX-License-Identifier: MIT
# Reproduces docs/results/energy.md: power-down judged against Slurm's idle:T swept over T, at
# offered utilisations from 0.5x to 1x of peak and auto, with oracle bounds and sensitivities.
# Usage: scripts/results_energy.sh [BUILD_DIR] > docs/results/energy.md   (JOBS=2 runs at once)
set -eu
BUILD="${1:-build}"
ECO="$BUILD/ecosched"
JOBS="${JOBS:-2}"
SRC=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/r" "$tmp/o"

# Traces: id and file. Tuning traces (forecast's knobs are chosen on them): itp01-itp05; the
# others are held out.
cat > "$tmp/traces" <<EOF
itp01 data/itp/cluster01.csv.gz
itp02 data/itp/cluster02.csv.gz
itp03 data/itp/cluster03.csv.gz
itp04 data/itp/cluster04.csv.gz
itp05 data/itp/cluster05.csv.gz
itp06 data/itp/cluster06.csv.gz
itp07 data/itp/cluster07.csv.gz
itp08 data/itp/cluster08.csv.gz
itp09 data/itp/cluster09.csv.gz
itp10 data/itp/cluster10.csv.gz
philly data/philly/philly_multigpu_pass_jobs.csv.gz
openb data/alibaba_gpu_v2023_openb/openb_pod_list_default.csv.gz
EOF
if [ -n "${ONLY:-}" ]; then # a subset for trying the script out: ONLY='itp01|openb'
    grep -E "^($ONLY) " "$tmp/traces" > "$tmp/t2"; mv "$tmp/t2" "$tmp/traces"
fi
TS="0 300 600 1800 3600 7200" # Slurm SuspendTime values swept
SIZES="0.5 0.625 0.75 0.875 1 auto"
MARGINS="0 0.25 0.5 1 2"
DWELLS="0 900 1800"
# Sensitivity variants (point 4), each one figure moved from its default (docs/models/energy.md).
VARIANTS="base_w=150 base_w=941 boot_s=120 boot_s=600 cycle_j=0 cycle_j=720000 gpu_idle_w=10 gpu_idle_w=50"

idx=0
: > "$tmp/manifest"
: > "$tmp/cmds"
add() { # add TRACE_ID FILE SIZE CLUSTER PD PL NODEPOWER SEED OUT
    idx=$((idx + 1))
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$idx" "$1" "$3" "$5" "$6" "$7" "$8" >> "$tmp/manifest"
    extra=""
    [ "$7" = "-" ] || extra="$extra --node-power $7"
    [ "$8" = "0" ] || extra="$extra --workload-mix default --seed $8"
    [ "$9" = "0" ] || extra="$extra --out $tmp/o/$idx --sample-s 60"
    echo "cd '$SRC' && '$ECO' sim -q --trace $2 --cluster $4 --policy easy --placement $6 --power-down $5$extra --json > '$tmp/r/$idx.json'" >> "$tmp/cmds"
}
run_all() {
    nice -n 10 xargs -P "$JOBS" -I{} sh -c '{}' < "$tmp/cmds"
    : > "$tmp/cmds"
}
nodes_of() { # nodes_of IDX: cluster_nodes of a finished run
    sed -n 's/^ *"cluster_nodes": \([0-9]*\),$/\1/p' "$tmp/r/$1.json"
}
start=$(date +%s)

# Phase 0: peak sizes.
while read -r id file; do add "$id" "$file" peak peak none pack - 0 0; done < "$tmp/traces"
run_all
i=0
while read -r id file; do
    i=$((i + 1))
    echo "$id $file $(nodes_of $i)"
done < "$tmp/traces" > "$tmp/peaks"

cluster_for() { # cluster_for SIZE PEAK_NODES
    if [ "$1" = auto ]; then echo auto; else
        awk -v f="$1" -v p="$2" 'BEGIN { n = f * p; c = int(n); if (c < n) c++; if (c < 1) c = 1; printf "%dx8\n", c }'
    fi
}
grid() { # grid ID FILE SIZE CLUSTER NODEPOWER OUT_FOR_NONE SEED FORECASTS
    add "$1" "$2" "$3" "$4" none pack "$5" "$7" "$6"
    add "$1" "$2" "$3" "$4" none energy "$5" "$7" 0
    for t in $TS; do
        for pl in pack energy; do add "$1" "$2" "$3" "$4" "idle:$t" $pl "$5" "$7" 0; done
    done
    for fc in $8; do
        for pl in pack energy; do add "$1" "$2" "$3" "$4" "$fc" $pl "$5" "$7" 0; done
    done
}

# Phase 1: every trace and size; idle:T front, default forecast.
while read -r id file peak; do
    for s in $SIZES; do grid "$id" "$file" "$s" "$(cluster_for "$s" "$peak")" - 1 0 forecast; done
done < "$tmp/peaks"
# Phase 2: forecast's knobs on the tuning traces at 0.75x peak and auto (energy placement).
while read -r id file peak; do
    case "$id" in itp0[1-5]) ;; *) continue ;; esac
    for s in 0.75 auto; do
        for m in $MARGINS; do for d in $DWELLS; do
            add "$id" "$file" "$s" "$(cluster_for "$s" "$peak")" "forecast:margin=$m,dwell=$d" energy - 0 0
        done; done
    done
done < "$tmp/peaks"
run_all
for n in $(ls "$tmp/o"); do # the oracle on each always-on run's busy series
    echo "python3 '$SRC/scripts/pd_oracle.py' '$tmp/o/$n/timeline.csv' --time-col time_s --used-col busy_gpus --gpus-per-node 8 --total-nodes $(nodes_of "$n") > '$tmp/o/$n.oracle' && rm -rf '$tmp/o/$n'" >> "$tmp/cmds"
done
run_all
tuned=$(python3 "$SRC/scripts/results_energy_tables.py" tune "$tmp")
# Phase 3: the tuned forecast everywhere; sensitivity and workload seeds at auto.
while read -r id file peak; do
    for s in $SIZES; do
        c=$(cluster_for "$s" "$peak")
        for pl in pack energy; do add "$id" "$file" "$s" "$c" "$tuned" $pl - 0 0; done
    done
    for v in $VARIANTS; do grid "$id" "$file" auto auto "$v" 0 0 "$tuned"; done
    for seed in 1 2 3; do grid "$id" "$file" auto auto - 0 "$seed" "$tuned"; done
done < "$tmp/peaks"
run_all
end=$(date +%s)
python3 "$SRC/scripts/results_energy_tables.py" page "$tmp" "$tuned" "$("$ECO" --version | cut -d' ' -f2)" \
    "$(wc -l < "$tmp/manifest")" "$((end - start))" "$JOBS"
