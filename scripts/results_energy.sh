#!/bin/sh
# SPDX-License-Identifier: MIT
# Reproduces docs/results/energy.md: Slurm's idle:T and ecosched's forecast power-down, each
# with its knobs tuned on tuning traces by one rule and judged on held-out traces, by energy
# against p95 queue wait and boot-delayed starts, as a share of the oracle's saving.
# Usage: scripts/results_energy.sh [BUILD_DIR] > docs/results/energy.md   (JOBS=2 runs at once)
set -eu
BUILD="${1:-build}"
ECO="$BUILD/ecosched"
JOBS="${JOBS:-2}"
SRC=$(cd "$(dirname "$0")/.." && pwd)
TABLES="$SRC/scripts/results_energy_tables.py"
if [ -n "${KEEP_DIR:-}" ]; then # keep the runs there (to redo the page: python3 $TABLES page ...)
    tmp="$KEEP_DIR"; rm -rf "$tmp"; mkdir -p "$tmp"
else
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
fi
mkdir -p "$tmp/r" "$tmp/o" "$tmp/t"

# Traces: id and file. Tuning traces (every policy's knobs are chosen on them): itp01-itp05;
# the others are held out.
cat > "$tmp/traces" <<TR
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
TR
if [ -n "${ONLY:-}" ]; then # a subset for trying the script out: ONLY='itp01|openb'
    grep -E "^($ONLY) " "$tmp/traces" > "$tmp/t2"; mv "$tmp/t2" "$tmp/traces"
fi
SIZES="${SIZES:-0.5 0.625 0.75 0.875 1 auto}"
# idle:T knobs: SuspendTime T (T <= 712 s all act as 712 s, the break-even of an 8-GPU V100
# node: docs/policies/power-down.md) and the placement.
TS="0 900 1800 3600 7200 14400"
# forecast knobs: margin, dwell and the placement (window stays 3600 s).
MARGINS="0 0.5 1 2 4"
DWELLS="0 900 1800"
PLACEMENTS="pack energy"
SEEDS="${SEEDS-1 2 3}" # arrival-jitter seeds (0: the trace as it is)
JITTER_S=900    # each job's submit moved by U(-JITTER_S, +JITTER_S), seeded
# Sensitivity variants, one node figure moved (docs/models/energy.md).
VARIANTS="${VARIANTS-base_w=150 base_w=941 boot_s=120 boot_s=600 cycle_j=0 cycle_j=720000 gpu_idle_w=10 gpu_idle_w=50}"

idx=0
: > "$tmp/manifest"
: > "$tmp/cmds"
add() { # add TRACE_ID FILE SIZE CLUSTER PD PL NODEPOWER SEED OUT
    idx=$((idx + 1))
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$idx" "$1" "$3" "$5" "$6" "$7" "$8" >> "$tmp/manifest"
    extra=""
    [ "$7" = "-" ] || extra="$extra --node-power $7"
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
oracles() { # the oracles on each run written with --out: packed busy series, and per node
    for dir in "$tmp"/o/*/; do
        [ -d "$dir" ] || continue
        n=$(basename "$dir")
        fig=$(awk -F'\t' -v i="$n" '$1 == i { print $6 }' "$tmp/manifest")
        of=$(python3 "$TABLES" oracle-args "$fig")
        # shellcheck disable=SC2086 # $of is a word list on purpose
        echo "python3 '$SRC/scripts/pd_oracle.py' '$tmp/o/$n/timeline.csv' --time-col time_s --used-col busy_gpus --gpus-per-node 8 --total-nodes $(nodes_of "$n") $of > '$tmp/o/$n.oracle' && python3 '$SRC/scripts/pd_oracle.py' '$tmp/o/$n/jobs.csv' --jobs --total-nodes $(nodes_of "$n") $of > '$tmp/o/$n.nodeoracle' && rm -rf '$tmp/o/$n'" >> "$tmp/cmds"
    done
    run_all
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
always_on() { # always_on ID FILE SIZE CLUSTER NODEPOWER SEED: none with each placement, written out
    for pl in $PLACEMENTS; do add "$1" "$2" "$3" "$4" none "$pl" "$5" "$6" 1; done
}

# Phase 1: every trace and size as it is (seed 0): always-on, every idle:T and forecast knob.
while read -r id file peak; do
    for s in $SIZES; do
        c=$(cluster_for "$s" "$peak")
        always_on "$id" "$file" "$s" "$c" - 0
        for pl in $PLACEMENTS; do
            for t in $TS; do add "$id" "$file" "$s" "$c" "idle:$t" "$pl" - 0 0; done
            for m in $MARGINS; do for d in $DWELLS; do
                add "$id" "$file" "$s" "$c" "forecast:margin=$m,dwell=$d" "$pl" - 0 0
            done; done
        done
    done
done < "$tmp/peaks"
run_all
oracles
# Phase 2: each policy's knobs tuned on the tuning traces (one rule for both).
python3 "$TABLES" tune "$tmp" > "$tmp/tuned"
idle_pd=$(sed -n 1p "$tmp/tuned"); idle_pl=$(sed -n 2p "$tmp/tuned")
fc_pd=$(sed -n 3p "$tmp/tuned"); fc_pl=$(sed -n 4p "$tmp/tuned")
# Phase 3: the tuned settings on arrival-jittered copies of every trace (seeds), and under
# moved node figures at auto (sensitivity); always-on and its oracles beside each.
while read -r id file peak; do
    for seed in $SEEDS; do
        jf="$tmp/t/$id.$seed.csv"
        python3 "$TABLES" jitter "$SRC/$file" "$jf" "$seed" "$JITTER_S"
        for s in $SIZES; do
            c=$(cluster_for "$s" "$peak")
            always_on "$id" "$jf" "$s" "$c" - "$seed"
            add "$id" "$jf" "$s" "$c" "$idle_pd" "$idle_pl" - "$seed" 0
            add "$id" "$jf" "$s" "$c" "$fc_pd" "$fc_pl" - "$seed" 0
        done
    done
    for v in $VARIANTS; do
        always_on "$id" "$file" auto auto "$v" 0
        add "$id" "$file" auto auto "$idle_pd" "$idle_pl" "$v" 0 0
        add "$id" "$file" auto auto "$fc_pd" "$fc_pl" "$v" 0 0
    done
done < "$tmp/peaks"
run_all
oracles
end=$(date +%s)
python3 "$TABLES" page "$tmp" "$("$ECO" --version | cut -d' ' -f2)" "$(wc -l < "$tmp/manifest")" \
    "$((end - start))" "$JOBS" "$JITTER_S"
