#!/bin/sh
# SPDX-License-Identifier: MIT
# Reproduces docs/results/power-capping.md: every capper of the family on whole traces (ITP
# clusters 02 and 04 and Philly; TRACES adds itp08) and on a fixed set of concurrent jobs (no queue), under
# budgets swept in 2.5-point steps across the band where deadlines start to be missed, on
# held-out seeds, beside a clairvoyant lower bound on the misses (`ecosched sim --miss-bound`).
# Each policy's parameters are tuned on other seeds with one rule for every policy.
# Usage: scripts/results_powercap.sh [BUILD_DIR] > docs/results/power-capping.md
# Environment: TRACES, TUNE_TRACES ("itp02 philly"), TUNE_SEEDS ("1 2"), SEEDS ("3 4 5 6 7",
# reported), STEP (2.5), COARSE (the budgets of the pass that finds each trace's band), SLOT
# (the bound's slot, 14400 s), QUEUE (lsf), PAR (parallel runs; the number of CPUs), KEEP (a
# directory to keep the rows in; a run kept there resumes), GRID_<policy> (its tuning candidates).
set -eu
COMMON="--policy ${QUEUE:-lsf} --placement pack --workload-mix default --deadlines factor:1.5-3 --quiet"
field() { sed -n "s/^ *\"$1\": \\([-0-9.e+]*\\),\\{0,1\\}$/\\1/p" "$2" | head -1; }
trace_file() {
    case $1 in
    itp*) echo "data/itp/cluster${1#itp}.csv.gz" ;;
    philly) echo "data/philly/philly_multigpu_pass_jobs.csv.gz" ;;
    alloc) echo "$WORK/alloc.csv" ;;
    *) echo "results_powercap: unknown trace '$1'" >&2; exit 2 ;;
    esac
}

# Per trace and seed: the cluster (half V100, half A40 8-GPU nodes, as many as the peak GPU
# demand of the uncapped run needs) and the uncapped run's peak power.
prepare() { # trace seed
    d="$WORK/base/$1-$2"
    [ -s "$d/line" ] && return 0 # kept from an earlier run (KEEP)
    mkdir -p "$d"
    tr=$(trace_file "$1")
    # shellcheck disable=SC2086
    "$ECO" sim --trace "$tr" --cluster peak $COMMON --seed "$2" --out "$d/sz" >/dev/null
    gpus=$(field cluster_gpus "$d/sz/summary.json")
    half=$(( ((gpus + 7) / 8 + 1) / 2 ))
    echo "${half}x8:V100,${half}x8:A40" > "$d/spec"
    # shellcheck disable=SC2086
    "$ECO" sim --trace "$tr" --cluster "$(cat "$d/spec")" $COMMON --seed "$2" --out "$d/run" >/dev/null
    f="$d/run/summary.json"
    echo "$1 $2 $(cat "$d/spec") $(field peak_power_w "$f") $(field deadline_miss_ratio "$f") $(field avg_jct_s "$f") $(field energy_kwh "$f")" > "$d/line"
    field peak_power_w "$f" > "$d/peak"
    rm -rf "$d/sz" "$d/run"
}

watts() { awk -v p="$(cat "$WORK/base/$1-$2/peak")" -v b="$3" 'BEGIN { printf "%.3f", p*b/100 }'; }

# One capped run (limit knob); its line goes to $WORK/rows/<id>: trace seed budget policy params
# mae_bind mae_all settled_over max_over over_s over_kwh misses deadline_jobs jct energy rejected
# p95_wait.
run() { # id trace seed budget policy params
    id=$1 t=$2 s=$3 b=$4 pol=$5 par=$6
    [ -s "$WORK/rows/$id" ] && return 0
    spec=$pol
    [ "$par" = - ] || spec="$pol:$par"
    o="$WORK/run/$id"
    mkdir -p "$o"
    # shellcheck disable=SC2086
    if ! "$ECO" sim --trace "$(trace_file "$t")" --cluster "$(cat "$WORK/base/$t-$s/spec")" $COMMON \
        --seed "$s" --power-policy "$spec" --power-budget "$(watts "$t" "$s" "$b")" --out "$o" \
        >/dev/null 2>"$o/err"; then
        echo "results_powercap: run $id ($t seed $s budget $b $spec) failed: $(cat "$o/err")" >&2
        exit 1
    fi
    f="$o/summary.json"
    dj=$(field deadline_jobs "$f")
    misses=$(awk -v r="$(field deadline_miss_ratio "$f")" -v n="$dj" 'BEGIN { printf "%.0f", r*n }')
    echo "$t $s $b $pol $par $(field power_cap_mae_pct "$f") $(field power_cap_mae_all_pct "$f")" \
        "$(field power_cap_max_overshoot_pct "$f") $(field power_cap_raw_overshoot_pct "$f")" \
        "$(field overshoot_s "$f") $(field power_cap_over_kwh "$f") $misses $dj $(field avg_jct_s "$f")" \
        "$(field energy_kwh "$f") $(field rejected "$f") $(field p95_wait_s "$f")" > "$WORK/rows/$id"
    rm -rf "$o"
}

# The clairvoyant bound on the misses of one case: trace seed budget bound misses deadline_jobs
# met_lp solve_s.
bound() { # id trace seed budget
    id=$1 t=$2 s=$3 b=$4
    [ -s "$WORK/rows/$id" ] && return 0
    # shellcheck disable=SC2086
    out=$("$ECO" sim --trace "$(trace_file "$t")" --cluster "$(cat "$WORK/base/$t-$s/spec")" $COMMON \
        --seed "$s" --power-budget "$(watts "$t" "$s" "$b")" --miss-bound "$SLOT" --json) || {
        echo "results_powercap: bound $id ($t seed $s budget $b) failed" >&2
        exit 1
    }
    echo "$out" | sed 's/[{}",]//g; s/: / /g' | awk -v t="$t" -v s="$s" -v b="$b" \
        '{ for (i = 1; i < NF; i += 2) v[$i] = $(i + 1)
           print t, s, b, "bound", v["miss_bound"], v["deadline_jobs"], v["met_lp"], v["solve_s"] }' \
        > "$WORK/rows/$id"
}

case "${1:-}" in
--prepare) shift; prepare "$@"; exit ;;
--run) shift; run "$@"; exit ;;
--bound) shift; bound "$@"; exit ;;
esac

BUILD="${1:-build}"
ECO="$BUILD/ecosched"
TRACES=${TRACES:-"itp02 itp04 philly alloc"}
TUNE_TRACES=${TUNE_TRACES:-"itp02 philly"}
TUNE_SEEDS=${TUNE_SEEDS:-"1 2"}
SEEDS=${SEEDS:-"3 4 5 6 7"}
STEP=${STEP:-2.5}
COARSE=${COARSE:-"35 40 45 50 55 60 70 80 90"}
SLOT=${SLOT:-14400}
PAR=${PAR:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}
POLICIES="mpc oracle uniform proportional threshold"
TUNED="mpc uniform proportional threshold"
# Tuning candidates: the shared knobs (feedback gain on measured power, the feedback's margin
# below the budget, admission rule, slew) for every policy, alone and with the one that helped it
# most before (mpc: slew=0; uniform and proportional: gain=0.5), then each one's own. The oracle
# is not tuned: it takes mpc's chosen parameters (it is mpc with the true curves; its own
# defaults turn off exploration and the feedback, which the truth needs neither of).
GRID_mpc=${GRID_mpc:-"- slew=0 margin=0 admit=deadline slew=0,margin=0,admit=deadline miss=3"}
GRID_uniform=${GRID_uniform:-"- gain=0.5 margin=0 admit=deadline gain=0.5,margin=0,admit=deadline slew=0"}
GRID_proportional=${GRID_proportional:-"- gain=0.5 margin=0 admit=deadline gain=0.5,margin=0,admit=deadline slew=0"}
GRID_threshold=${GRID_threshold:-"- step=0.02 rebalance=5 rebalance=5,step=0.02"}
if [ -n "${KEEP:-}" ]; then
    WORK=$KEEP
    mkdir -p "$WORK"
else
    WORK=$(mktemp -d)
    trap 'rm -rf "$WORK"' EXIT
fi
export ECO COMMON WORK SLOT
self="$0"
pool() { xargs -P "$PAR" -L 1 sh "$self" "$1"; }
mkdir -p "$WORK/rows"
started=$(date +%s)

# The allocator-only case: 200 jobs of ITP cluster 04 (its first by submit time, work and GPUs
# as traced) all submitted at time 0 on a cluster that runs them all at once: no queue, so the
# misses come from the split of power alone.
gzip -dc data/itp/cluster04.csv.gz | awk -F, -v OFS=, 'NR == 1 { print; next } NR <= 201 { $2 = 0; print }' \
    > "$WORK/alloc.csv"

# 1. The uncapped runs of every trace and seed.
for t in $(echo "$TRACES $TUNE_TRACES" | tr ' ' '\n' | sort -u); do
    for s in $(echo "$TUNE_SEEDS $SEEDS" | tr ' ' '\n' | sort -u); do echo "$t $s"; done
done | pool --prepare

# 2. Each trace's band, from a coarse pass of mpc (defaults) on the first tuning seed: from the
# highest coarse budget where at least half the deadline jobs miss (or the lowest that admits
# jobs) to the lowest above it where at most 1 % miss, in STEP-point steps.
s0=${TUNE_SEEDS%% *}
i=0
[ -s "$WORK/bands" ] || for t in $(echo "$TRACES $TUNE_TRACES" | tr ' ' '\n' | sort -u); do
    for b in $COARSE; do i=$((i + 1)); echo "c$i $t $s0 $b mpc -"; done
done | pool --run
if [ ! -s "$WORK/bands" ]; then
cat "$WORK"/rows/c* | sort -k1,1 -k3,3n > "$WORK/coarse.txt"
rm -f "$WORK"/rows/c*
awk -v step="$STEP" '{ r = $13 > 0 ? $12 / $13 : -1; if (!($1 in n)) ts[++nt] = $1
                       n[$1]++; B[$1, n[$1]] = $3; R[$1, n[$1]] = r }
    END { for (i = 1; i <= nt; i++) { t = ts[i]; lo = ""; hi = ""
              for (k = 1; k <= n[t]; k++) { if (R[t, k] < 0) continue
                  if (lo == "" || R[t, k] >= 0.5) lo = B[t, k] }
              for (k = 1; k <= n[t]; k++)
                  if (hi == "" && R[t, k] >= 0 && B[t, k] > lo + 0 && R[t, k] <= 0.01) hi = B[t, k]
              if (hi == "") hi = B[t, n[t]]
              printf "%s", t; for (b = lo + 0; b <= hi + 1e-9; b += step) printf " %g", b; printf "\n" } }' \
    "$WORK/coarse.txt" > "$WORK/bands"
fi
band() { awk -v t="$1" '$1 == t { $1 = ""; print }' "$WORK/bands"; }

# 3. Tuning: every candidate on the tuning traces and seeds, at the band's second and third
# budgets (where misses are many but not all).
i=0
for pol in $TUNED; do
    grid=""
    eval "grid=\$GRID_$pol"
    for par in $grid; do
        for t in $TUNE_TRACES; do
            tb=$(band "$t" | awk '{ print $2, $3 }')
            for s in $TUNE_SEEDS; do for b in $tb; do
                i=$((i + 1)); echo "t$i $t $s $b $pol $par"
            done; done
        done
    done
done > "$WORK/tune.list"
if [ ! -s "$WORK/chosen" ]; then
pool --run < "$WORK/tune.list"
cat "$WORK"/rows/t* > "$WORK/tune.txt"
rm -f "$WORK"/rows/t*
# The rule, the same for every policy: the candidate with the fewest deadline misses among
# those whose mean MAE over binding periods is <= 0.5%; ties and, when none qualifies, the
# lowest mean MAE decide.
awk '{ k = $4 " " $5; n[k]++; m[k] += $12; e[k] += $6; j[k] += $14 }
     END { for (k in n) { split(k, a, " "); me = e[k] / n[k]
               ok = me <= 0.5; s = ok ? m[k] : 1e12 + me
               if (!(a[1] in best) || s < bs[a[1]] || (s == bs[a[1]] && j[k] < bj[a[1]])) {
                   best[a[1]] = a[2]; bs[a[1]] = s; bj[a[1]] = j[k] } }
           for (p in best) print p, best[p] }' "$WORK/tune.txt" > "$WORK/chosen"
fi
chosen() { awk -v p="$1" '$1 == p { print $2 }' "$WORK/chosen"; }

# 4. The reported runs and the bound: every trace, the held-out seeds, every budget of its band.
i=0
for t in $TRACES; do for s in $SEEDS; do for b in $(band "$t"); do
    i=$((i + 1)); echo "--bound r$i $t $s $b"
    for pol in $POLICIES; do
        if [ "$pol" = oracle ]; then par=$(chosen mpc); else par=$(chosen "$pol"); fi
        i=$((i + 1)); echo "--run r$i $t $s $b $pol $par"
    done
done; done; done > "$WORK/report.list"
xargs -P "$PAR" -L 1 sh "$self" < "$WORK/report.list"
cat "$WORK"/rows/r* > "$WORK/report.txt"
cat "$WORK"/base/*/line > "$WORK/base.txt"

# 5. The page.
ELAPSED=$(( $(date +%s) - started )) VERSION=$("$ECO" --version | cut -d' ' -f2) \
    TRACES="$TRACES" TUNE_TRACES="$TUNE_TRACES" TUNE_SEEDS="$TUNE_SEEDS" SEEDS="$SEEDS" \
    STEP="$STEP" SLOT="$SLOT" QUEUE="${QUEUE:-lsf}" PAR="$PAR" \
    python3 "$(dirname "$self")/results_powercap_page.py" "$WORK"
