#!/bin/sh
# SPDX-License-Identifier: MIT
# Reproduces docs/results/power-capping.md: the cappers of the family under budgets of 60%,
# 75% and 90% of peak demand and a budget-step scenario, on ITP clusters 02, 04, 07, 08 and
# Philly, on both knobs; each policy's parameters are tuned on seeds (and traces) apart from the
# seeds reported, with the same rule for every policy.
# Usage: scripts/results_powercap.sh [BUILD_DIR] > docs/results/power-capping.md
# Environment: JOBS (1000), TRACES, SEEDS ("4 5 6", reported), TUNE_TRACES ("itp02 itp04"),
# TUNE_SEEDS ("1 2 3"), TUNE_BUDGETS ("60 75"), BUDGETS ("60 75 90 step"), KNOBS ("limit
# clock"), QUEUE (the queue policy of every run, lsf), PAR (parallel runs; the number of CPUs),
# GRID_<policy> (its tuning candidates).
set -eu
COMMON="--policy ${QUEUE:-lsf} --placement pack --workload-mix default --deadlines factor:1.5-3 --quiet"
field() { sed -n "s/^ *\"$1\": \\([-0-9.e+]*\\),\\{0,1\\}$/\\1/p" "$2" | head -1; }
trace_file() {
    case $1 in
    itp*) echo "data/itp/cluster${1#itp}.csv.gz" ;;
    philly) echo "data/philly/philly_multigpu_pass_jobs.csv.gz" ;;
    *) echo "results_powercap: unknown trace '$1'" >&2; exit 2 ;;
    esac
}

# Per trace and seed: the cluster (half V100, half A40 8-GPU nodes, as many as the peak GPU
# demand of the uncapped run needs), the uncapped run's peak power and the budget-step file.
prepare() { # trace seed
    d="$WORK/base/$1-$2"
    mkdir -p "$d"
    tr=$(trace_file "$1")
    # shellcheck disable=SC2086
    "$ECO" sim --trace "$tr" --max-jobs "$JOBS" --cluster peak $COMMON --seed "$2" --out "$d/sz" >/dev/null
    gpus=$(field cluster_gpus "$d/sz/summary.json")
    half=$(( ((gpus + 7) / 8 + 1) / 2 ))
    echo "${half}x8:V100,${half}x8:A40" > "$d/spec"
    # shellcheck disable=SC2086
    "$ECO" sim --trace "$tr" --max-jobs "$JOBS" --cluster "$(cat "$d/spec")" $COMMON --seed "$2" --out "$d/run" >/dev/null
    f="$d/run/summary.json"
    awk -v p="$(field peak_power_w "$f")" -v s="$(field makespan_s "$f")" -v t0="$(field window_start_s "$f")" \
        'BEGIN { printf "time_s,watts\n%.0f,%.3f\n%.0f,%.3f\n%.0f,%.3f\n", t0, 0.9*p, t0+s/3, 0.7*p, t0+2*s/3, 0.9*p }' > "$d/step.csv"
    echo "$1 $2 $(cat "$d/spec") $(field peak_power_w "$f") $(field deadline_miss_ratio "$f") $(field avg_jct_s "$f") $(field energy_kwh "$f")" > "$d/line"
    field peak_power_w "$f" > "$d/peak"
    rm -rf "$d/sz" "$d/run"
}

# One capped run; its result line goes to $WORK/rows/<id>: trace seed budget policy knob params
# mae_bind mae_all settled_over max_over over_s over_kwh misses deadline_jobs jct energy rejected.
run() { # id trace seed budget policy knob params
    id=$1 t=$2 s=$3 b=$4 pol=$5 knob=$6 par=$7
    d="$WORK/base/$t-$s"
    if [ "$b" = step ]; then
        budget="--power-budget-file $d/step.csv"
    else
        budget="--power-budget $(awk -v p="$(cat "$d/peak")" -v b="$b" 'BEGIN { printf "%.3f", p*b/100 }')"
    fi
    spec=$pol
    [ "$par" = - ] || spec="$pol:$par"
    o="$WORK/run/$id"
    mkdir -p "$o"
    # shellcheck disable=SC2086
    if ! "$ECO" sim --trace "$(trace_file "$t")" --max-jobs "$JOBS" --cluster "$(cat "$d/spec")" $COMMON \
        --seed "$s" --power-policy "$spec" --power-knob "$knob" $budget --out "$o" >/dev/null 2>"$o/err"; then
        echo "results_powercap: run $id ($t seed $s budget $b $spec $knob) failed: $(cat "$o/err")" >&2
        exit 1
    fi
    f="$o/summary.json"
    dj=$(field deadline_jobs "$f")
    misses=$(awk -v r="$(field deadline_miss_ratio "$f")" -v n="$dj" 'BEGIN { printf "%.0f", r*n }')
    echo "$t $s $b $pol $knob $par $(field power_cap_mae_pct "$f") $(field power_cap_mae_all_pct "$f")" \
        "$(field power_cap_max_overshoot_pct "$f") $(field power_cap_raw_overshoot_pct "$f")" \
        "$(field overshoot_s "$f") $(field power_cap_over_kwh "$f") $misses $dj $(field avg_jct_s "$f")" \
        "$(field energy_kwh "$f") $(field rejected "$f")" > "$WORK/rows/$id"
    rm -rf "$o"
}

case "${1:-}" in
--prepare) shift; prepare "$@"; exit ;;
--run) shift; run "$@"; exit ;;
esac

BUILD="${1:-build}"
ECO="$BUILD/ecosched"
JOBS=${JOBS:-1000}
TRACES=${TRACES:-"itp02 itp04 itp07 itp08 philly"}
TUNE_TRACES=${TUNE_TRACES:-"itp02 itp04"}
TUNE_SEEDS=${TUNE_SEEDS:-"1 2 3"}
TUNE_BUDGETS=${TUNE_BUDGETS:-"60 75"}
SEEDS=${SEEDS:-"4 5 6"}
BUDGETS=${BUDGETS:-"60 75 90 step"}
KNOBS=${KNOBS:-"limit clock"}
PAR=${PAR:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}
BASELINES="uniform proportional threshold"
TUNED="mpc $BASELINES"
# Tuning candidates: the shared knobs (feedback gain on measured power, admission rule, slew) for
# every policy, then each one's own. The oracle is the bound: not tuned, default parameters.
GRID_mpc=${GRID_mpc:-"- miss=3 miss=30 admit=deadline slew=0.2 slew=0"}
GRID_uniform=${GRID_uniform:-"- gain=0 gain=0.5 admit=deadline slew=0.2 slew=0"}
GRID_proportional=${GRID_proportional:-"- gain=0 gain=0.5 admit=deadline slew=0.2 slew=0"}
GRID_threshold=${GRID_threshold:-"- step=0.02 rebalance=5 rebalance=5,step=0.02"}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export ECO JOBS COMMON WORK
self="$0"
pool() { xargs -P "$PAR" -L 1 sh "$self" "$1"; }
mkdir -p "$WORK/rows"

# 1. The uncapped runs of every trace and seed.
for t in $(echo $TRACES $TUNE_TRACES | tr ' ' '\n' | sort -u); do
    for s in $(echo $TUNE_SEEDS $SEEDS | tr ' ' '\n' | sort -u); do echo "$t $s"; done
done | pool --prepare

# 2. Tuning: every candidate on the tuning traces, seeds and budgets, limit knob.
i=0
for pol in $TUNED; do
    eval "grid=\$GRID_$pol"
    for par in $grid; do
        for t in $TUNE_TRACES; do for s in $TUNE_SEEDS; do for b in $TUNE_BUDGETS; do
            i=$((i + 1)); echo "t$i $t $s $b $pol limit $par"
        done; done; done
    done
done > "$WORK/tune.list"
pool --run < "$WORK/tune.list"
cat "$WORK"/rows/t* > "$WORK/tune.txt"
rm -f "$WORK"/rows/t*
# The rule, the same for every policy: the candidate with the fewest deadline misses among
# those whose mean MAE over binding periods is <= 0.5%; ties and, when none qualifies, the
# lowest mean MAE decide.
awk '{ k = $4 " " $6; n[k]++; m[k] += $13; e[k] += $7; j[k] += $15 }
     END { for (k in n) { split(k, a, " "); me = e[k] / n[k]
               ok = me <= 0.5; s = ok ? m[k] : 1e12 + me
               if (!(a[1] in best) || s < bs[a[1]] || (s == bs[a[1]] && j[k] < bj[a[1]])) {
                   best[a[1]] = a[2]; bs[a[1]] = s; bj[a[1]] = j[k] } }
           for (p in best) print p, best[p] }' "$WORK/tune.txt" > "$WORK/chosen"
chosen() { awk -v p="$1" '$1 == p { print $2 }' "$WORK/chosen"; }

# 3. The reported runs: every trace, the held-out seeds, every budget, both knobs.
i=0
for t in $TRACES; do for s in $SEEDS; do for b in $BUDGETS; do
    for knob in $KNOBS; do
        for pol in mpc oracle $BASELINES; do
            # proportional splits power limits: it has no clock form
            [ "$pol/$knob" = proportional/clock ] && continue
            par=-
            [ "$pol" = oracle ] || par=$(chosen "$pol")
            i=$((i + 1)); echo "r$i $t $s $b $pol $knob $par"
        done
    done
done; done; done > "$WORK/report.list"
pool --run < "$WORK/report.list"
cat "$WORK"/rows/r* > "$WORK/report.txt"

# 4. The page.
ver=$("$ECO" --version | cut -d' ' -f2)
cat <<HEAD
# Power capping results

Produced by \`scripts/results_powercap.sh > docs/results/power-capping.md\` (ecosched $ver,
$(date -u +%Y-%m-%d)). Each trace's first $JOBS jobs run on a heterogeneous cluster, half 8-GPU
V100 and half 8-GPU A40 nodes, as many as the uncapped run's peak GPU demand needs
(\`--cluster peak\`). Jobs draw workloads from \`--workload-mix default\` (the six measured
workloads) and deadlines from \`--deadlines factor:1.5-3\`; queue policy \`${QUEUE:-lsf}\` (least slack
first, the same for every policy; docs/policies/lsf.md), placement
\`pack\`, nodes always on, control period 1 s, measurement noise 2% on power and 1% on progress.

Budgets are 60%, 75% and 90% of the uncapped run's peak power (per seed); the step scenario
starts at 90%, steps to 70% at a third of the uncapped makespan and back to 90% at two thirds.
Knob: \`limit\` caps with GPU power limits, \`clock\` with locked SM clocks
(docs/models/clock.md).

**Held-out seeds.** Every policy but the oracle was tuned with the same rule on traces
$(echo $TUNE_TRACES | sed 's/ /, /g'), seeds $(echo $TUNE_SEEDS | sed 's/ /, /g'), budgets
$(echo $TUNE_BUDGETS | sed 's/ /%, /g')%, limit knob: among its candidates, the one with the fewest
deadline misses whose mean MAE over binding periods is at most 0.5%. The tables report seeds
$(echo $SEEDS | sed 's/ /, /g') only, on every trace (the tuning traces' reported seeds are
unseen; $(for t in $TRACES; do case " $TUNE_TRACES " in *" $t "*) ;; *) printf '%s ' "$t";; esac; done)were not tuned on at all).

**Same information.** Every policy sees the same view each period (fresh remaining work,
deadlines, the learned models, measured draws and the measured total), gets the same slew bound
(a setting rises by at most 10% of its range per period) and the same downward exploration
unless its parameters turn them off, and may use the same admission rules. Feedback on the
measured total: mpc corrects the bias of the models it decides with (the disturbance observer),
uniform and proportional, whose splits do not predict through the models, with the integral
(with the observer, uniform held MAE 5.7% on ITP cluster 04 at 60%); both are family keys
(\`observer=0|1\`) open to every policy. The oracle alone decides with the true curves, and
every run is judged with the true curves (docs/policies/powercap.md).

**Columns** (docs/policies/powercap.md, "Metrics"): MAE bind = mean |power - budget| / budget
over the periods whose demand at full power exceeds the budget; MAE all = over every period;
settled over = largest excess over the budget after the first period following a budget
change or an admission; max over = largest excess; over s and over kWh = time and energy
above the budget; misses = deadline misses summed over the reported seeds (of the deadline
jobs); JCT = average job completion time; energy = cluster energy. Each figure is the mean over
the reported seeds, misses the sum. rejected = jobs needing more power than the budget allows
even alone at minimum limits.

## Tuning

| policy | candidate | misses | mean MAE bind % | mean JCT h | chosen |
|---|---|---:|---:|---:|---|
HEAD
awk -v chosen="$(tr '\n' ';' < "$WORK/chosen")" '
    BEGIN { n = split(chosen, c, ";"); for (i = 1; i <= n; i++) { split(c[i], a, " "); ch[a[1]] = a[2] } }
    { k = $4 " " $6; if (!(k in cnt)) order[++no] = k; cnt[k]++; m[k] += $13; e[k] += $7; j[k] += $15 }
    END { for (i = 1; i <= no; i++) { k = order[i]; split(k, a, " ")
              printf "| %s | %s | %d | %.3f | %.2f | %s |\n", a[1], a[2] == "-" ? "defaults" : "`" a[2] "`", m[k], e[k] / cnt[k], j[k] / cnt[k] / 3600, ch[a[1]] == a[2] ? "yes" : "" } }' "$WORK/tune.txt"
echo
for t in $TRACES; do
    echo "## $t"
    echo
    cat "$WORK"/base/"$t"-*/line | awk -v seeds=" $SEEDS " 'index(seeds, " " $2 " ") { n++; spec = $3; p += $4; m += $5; j += $6; e += $7 }
        END { printf "Cluster %s. Uncapped (mean over the reported seeds): peak %.1f kW, deadline-miss ratio %.3f, average JCT %.2f h, energy %.1f kWh.\n\n", spec, p/n/1000, m/n, j/n/3600, e/n }'
    echo "| budget | policy | knob | MAE bind % | MAE all % | settled over % | max over % | over s | over kWh | misses | JCT h | energy kWh | rejected |"
    echo "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    awk -v t="$t" -v budgets="$BUDGETS" -v knobs="$KNOBS" '
        $1 == t { k = $3 " " $4 " " $5; cnt[k]++; mb[k] += $7; ma[k] += $8; so[k] += $9; mo[k] += $10
                  os[k] += $11; ok[k] += $12; mi[k] += $13; dj[k] += $14; j[k] += $15; e[k] += $16; r[k] += $17 }
        END { nb = split(budgets, B, " "); nk = split(knobs, K, " "); np = split("mpc oracle uniform proportional threshold", P, " ")
              for (b = 1; b <= nb; b++) for (q = 1; q <= nk; q++) for (p = 1; p <= np; p++) {
                  k = B[b] " " P[p] " " K[q]; if (!(k in cnt)) continue; n = cnt[k]
                  printf "| %s | %s | %s | %.3f | %.3f | %.2f | %.2f | %.0f | %.2f | %d / %d | %.2f | %.1f | %d |\n",
                      B[b] == "step" ? "step 90-70-90%" : B[b] "%", P[p], K[q], mb[k]/n, ma[k]/n, so[k]/n, mo[k]/n,
                      os[k]/n, ok[k]/n, mi[k], dj[k], j[k]/n/3600, e[k]/n, r[k] } }' "$WORK/report.txt"
    echo
done

echo "## Goals"
echo
echo "Goals (issue 16): mpc misses at least 25% fewer deadlines than the best baseline (the one"
echo "with the fewest misses, same trace, budget and knob) wherever the budget is at most 75% and"
echo "that baseline misses at least 5% of the deadline jobs; MAE over binding periods at most 0.5%;"
echo "settled overshoot at most 1%; average JCT no worse than the best baseline's (the lowest JCT"
echo "among the baselines). Figures over the reported seeds. A baseline whose mean MAE over"
echo "binding periods exceeds 1% does not hold the budget and is not counted as the best: its"
echo "misses and JCT are bought with power above the budget (the column names it)."
echo
echo "| trace | budget | knob | best baseline | its misses | mpc misses | fewer | oracle misses | misses goal | MAE bind % | settled over % | mpc JCT h | best baseline JCT h | JCT goal |"
echo "|---|---|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---|"
awk -v traces="$TRACES" -v budgets="$BUDGETS" -v knobs="$KNOBS" -v bl="$BASELINES" '
    { k = $1 " " $3 " " $4 " " $5; cnt[k]++; mi[k] += $13; dj[k] += $14; mb[k] += $7; so[k] += $9; j[k] += $15 }
    END { nt = split(traces, T, " "); nb = split(budgets, B, " "); nk = split(knobs, K, " "); nl = split(bl, L, " ")
          for (t = 1; t <= nt; t++) for (b = 1; b <= nb; b++) for (q = 1; q <= nk; q++) {
              base = T[t] " " B[b]; km = base " mpc " K[q]; if (!(km in cnt)) continue
              best = ""; bj = 1e300
              # the best baseline among those that hold the budget (MAE bind <= 1%): one that
              # draws more than the budget buys its misses and JCT with power it may not use
              for (l = 1; l <= nl; l++) { kl = base " " L[l] " " K[q]; if (!(kl in cnt)) continue
                  if (mb[kl] / cnt[kl] > 1.0) { over = over (over == "" ? "" : ", ") L[l]; continue }
                  if (best == "" || mi[kl] < mi[base " " best " " K[q]]) best = L[l]
                  if (j[kl] / cnt[kl] < bj) bj = j[kl] / cnt[kl] }
              ko = base " oracle " K[q]
              if (best == "") { # no baseline to compare with: the figures of mpc alone, the comparisons n/a
                  printf "| %s | %s | %s | none holds the budget (%s above it) | - | %d | - | %s | n/a | %.3f%s | %.2f%s | %.2f | - | n/a |\n",
                      T[t], B[b] == "step" ? "step" : B[b] "%", K[q], over, mi[km], (ko in cnt) ? mi[ko] : "-",
                      mb[km] / cnt[km], mb[km] / cnt[km] <= 0.5 ? "" : " (**not met**)", so[km] / cnt[km], so[km] / cnt[km] <= 1 ? "" : " (**not met**)",
                      j[km] / cnt[km] / 3600; over = ""; continue }
              kb = base " " best " " K[q]
              red = mi[kb] > 0 ? 100 * (mi[kb] - mi[km]) / mi[kb] : 0
              applies = B[b] != "step" && B[b] + 0 <= 75 && mi[kb] >= 0.05 * dj[kb]
              g = applies ? (red >= 25 ? "met" : "**not met**") : "n/a"
              jg = j[km] / cnt[km] <= bj * 1.0005 ? "met" : "**not met**"
              printf "| %s | %s | %s | %s%s | %d | %d | %.0f%% | %s | %s | %.3f%s | %.2f%s | %.2f | %.2f | %s |\n", T[t],
                  B[b] == "step" ? "step" : B[b] "%", K[q], best, over == "" ? "" : " (" over " above the budget, not counted)", mi[kb], mi[km], red, (ko in cnt) ? mi[ko] : "-", g,
                  mb[km] / cnt[km], mb[km] / cnt[km] <= 0.5 ? "" : " (**not met**)", so[km] / cnt[km], so[km] / cnt[km] <= 1 ? "" : " (**not met**)",
                  j[km] / cnt[km] / 3600, bj / 3600, jg; over = "" } }' "$WORK/report.txt" | tee "$WORK/goals.txt"
echo
# The count of each goal met, from the table above.
awk -F'|' '{ n++
        if ($10 ~ /not met/) mn++; else if ($10 ~ /met/) mm++
        if ($11 ~ /not met/) an++; else am++
        if ($12 ~ /not met/) on++; else om++
        if ($5 ~ /none holds/) nb++; else if ($15 ~ /not met/) jn++; else jm++ }
    END { printf "Summary: the misses goal applies in %d of the %d cases and is met in %d; MAE over binding periods <= 0.5%% is met in %d of %d; settled overshoot <= 1%% in %d of %d; average JCT no worse than the best baseline in %d of %d (in %d no baseline holds the budget).\n", mm + mn, n, mm, am, n, om, n, jm, n - nb, nb + 0 }' "$WORK/goals.txt"
