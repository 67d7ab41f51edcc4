#!/bin/sh
# SPDX-License-Identifier: MIT
# shellcheck disable=SC2046,SC2086 # the word splitting of set -- $(...) and of lists is meant
# Reproduces docs/results/placement.md: the FGD paper's protocol (`ecosched place --sweep`) on
# every openb pod list on the 1,213 GPU nodes of the reference simulator's experiments, with the
# paper's six online policies (seeds 1-10), the tuned online pso on held-out seeds 3-10 and the
# LP bound on allocatable GPUs (`--lp-bound`), the same sweep on all 1,523 nodes (fewer seeds),
# the HTML reports of the curves in docs/results/placement/, the placement optimisers on 50
# random instances against the exact optimum (ilp), the simulator placements on the ITP traces
# (JCT and energy), and scripts/results_pso.sh's tuning, ablation and offline section.
# Usage: scripts/results_placement.sh [BUILD_DIR [REPORT_DIR]] > docs/results/placement.md
# For a quick look (not the page): PLACE_FAMILIES="default gpushare100" PLACE_SEEDS_TUNE=1
# PLACE_SEEDS_HELD=3 PLACE_ALL_SEEDS= PLACE_PSO="4 4 3" PLACE_SWEEP_ONLY=1 (no pso tuning, no
# all-node sweep, no random instances, no ITP runs, no PSO section).
set -eu
JOB=""
if [ "${1:-}" = --job ]; then # one run of the sweeps' queue (below): --job BUILD TMP JOB...
    BUILD=$2 tmp=$3
    shift 3
    JOB="$*"
    set -- "$BUILD"
fi
BUILD="${1:-build}"
REPORTS="${2:-docs/results/placement}"
ECO="$BUILD/ecosched"
BENCH="$BUILD/eco_bench_place"
D=data/alibaba_gpu_v2023_openb
# the headline: the reference's experiments use the 1,213 GPU nodes (its
# data/node_yaml/openb_node_list_gpu_node.yaml; docs/results/fgd-reference.md)
NODES="$D/openb_node_list_gpu_node.csv.gz"
ALL_NODES="$D/openb_node_list_all_node.csv.gz"
# Every pod list of openb, in the paper's groups (default, then each variant family).
FAMILIES="${PLACE_FAMILIES:-default cpu0 cpu037 cpu050 cpu072 cpu100 cpu200 cpu235 cpu250 cpu300
gpushare20 gpushare40 gpushare60 gpushare80 gpushare100
gpuspec05 gpuspec10 gpuspec20 gpuspec25 gpuspec33
multigpu20 multigpu30 multigpu40 multigpu50}"
ALGOS="random dot-product-ref gpu-clustering gpu-packing best-fit fgd"
# Seeds 1-10 as the reference reports 10 runs: pso's knobs are tuned on seeds 1-2
# (scripts/results_pso.sh), every policy is reported on 3-10 (held out), and the six baselines'
# headline is over 1-10. The all-node sweep (secondary) runs fewer seeds to keep the run near
# 25 minutes on 2 free cores (the 2026-12-07 page took 54 minutes on 2 cores shared with other
# work, load average 3 to 8: the sweeps 44 minutes).
SEEDS_TUNE="${PLACE_SEEDS_TUNE:-1-2}"
SEEDS_HELD="${PLACE_SEEDS_HELD:-3-10}"
ALL_SEEDS="${PLACE_ALL_SEEDS-1-2}"
KEYS="70 80 90 100 110 120 130"
# the headline's seeds, for the text: both sets
if [ "$SEEDS_TUNE" = 1-2 ] && [ "$SEEDS_HELD" = 3-10 ]; then SEEDS_ALL=1-10; else
    SEEDS_ALL="$SEEDS_TUNE,$SEEDS_HELD"; fi
if [ -z "$JOB" ]; then
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    mkdir -p "$REPORTS" "$tmp/A" "$tmp/B" "$tmp/C" "$tmp/H" "$tmp/pso"
fi
load0=$(cut -d' ' -f1 /proc/loadavg)
t0=$(date +%s)
all6=$(echo "$ALGOS" | tr ' ' ',')
# sweep DIR NODES SEEDS ALGOS FAMILY [OPTIONS...]: one sweep into DIR/FAMILY (with DIR/FAMILY.txt,
# the table, and DIR/FAMILY.t0, .t1, its start and end)
sweep() {
    dir=$1 nodes=$2 seeds=$3 algos=$4 fam=$5
    shift 5
    date +%s.%N > "$dir/$fam.t0"
    nice -n 5 "$ECO" place --sweep --nodes "$nodes" --items "$D/openb_pod_list_$fam.csv.gz" \
        --algo "$algos" --seeds "$seeds" --lp-bound --time-limit 0 --no-progress "$@" \
        --out "$dir/$fam" > "$dir/$fam.txt"
    date +%s.%N > "$dir/$fam.t1"
}
# job tune | A FAMILY | B FAMILY: pso's tuning (seeds 1-2 of three lists), the six on the
# tuning seeds (A), the six and the tuned pso on the held-out seeds (B; it waits for the tuning,
# which the queue starts first)
job() {
    case $1 in
    tune)
        if [ -n "${PLACE_PSO:-}" ]; then
            echo "$PLACE_PSO" > "$tmp/pso/chosen.tmp"; echo 0 > "$tmp/pso/tune_s"
        else
            sh scripts/results_pso.sh tune "$BUILD" "$tmp/pso"
            mv "$tmp/pso/chosen" "$tmp/pso/chosen.tmp"
        fi
        mv "$tmp/pso/chosen.tmp" "$tmp/pso/ready" ;;
    A) sweep "$tmp/A" "$NODES" "$SEEDS_TUNE" "$all6" "$2" ;;
    B)
        while [ ! -s "$tmp/pso/ready" ]; do sleep 2; done
        set -- "$2" $(cat "$tmp/pso/ready")
        sweep "$tmp/B" "$NODES" "$SEEDS_HELD" "$all6,pso" "$1" --window "$2" --swarm "$3" \
            --iterations "$4" ;;
    esac
}

if [ -n "$JOB" ]; then
    job $JOB
    exit 0
fi

# ---- phases 1 and 2: pso's tuning and the sweeps, two runs at a time (one per core) --------
{ echo tune; for f in $FAMILIES; do echo "A $f"; done; for f in $FAMILIES; do echo "B $f"; done; } |
    xargs -P 2 -L 1 sh "$0" --job "$BUILD" "$tmp"
set -- $(cat "$tmp/pso/ready")
PSO_W=$1 PSO_S=$2 PSO_I=$3
t_ab=$(($(date +%s) - t0))
# ---- phase 3: the other parts, two single-threaded runs at a time -------------------------
field() { # field NAME < summary.json: the number after "NAME":
    sed -n "s/^ *\"$1\": \\([-0-9.e+]*\\),\\{0,1\\}$/\\1/p" | head -1
}
itp_runs() {
    for k in 01 02 03 04 05 06 07 08 09 10; do
        row="| $k |"
        for pl in pack first-fit spread dot-product fgd energy; do
            "$ECO" sim --trace data/itp/cluster$k.csv.gz --cluster peak --policy easy \
                --placement $pl --power-down forecast --quiet --out "$tmp/$k-$pl" >/dev/null
            f="$tmp/$k-$pl/summary.json"
            e=$(field energy_kwh < "$f")
            j=$(field avg_jct_s < "$f")
            row="$row $(awk -v e="$e" -v j="$j" 'BEGIN { printf "%.2f MWh, %.3f h", e/1000, j/3600 }') |"
        done
        echo "$row" >> "$tmp/sim.md"
        # Batch placements: the queue of each pass placed as a whole (pso, pso-basic: seed 1;
        # ilp: GLPK, 1 s per pass), against pack (best fit, their fallback).
        row="| $k |"
        for pl in pack pso pso-basic ilp; do
            ta=$(date +%s.%N)
            "$ECO" sim --trace data/itp/cluster$k.csv.gz --cluster peak --policy easy \
                --placement $pl --power-down forecast --seed 1 --quiet --out "$tmp/b$k-$pl" >/dev/null
            w=$(awk -v a="$ta" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
            f="$tmp/b$k-$pl/summary.json"
            e=$(field energy_kwh < "$f")
            j=$(field avg_jct_s < "$f")
            row="$row $(awk -v e="$e" -v j="$j" -v w="$w" 'BEGIN { printf "%.2f MWh, %.3f h, %.1f s", e/1000, j/3600, w }') |"
        done
        echo "$row" >> "$tmp/batch.md"
    done
}
: > "$tmp/random.md"; : > "$tmp/sim.md"; : > "$tmp/batch.md"; : > "$tmp/pso.md"
t2=$(date +%s)
if [ -z "${PLACE_SWEEP_ONLY:-}" ]; then
    nice -n 5 "$BENCH" random 50 10 > "$tmp/random.md" &
    p_random=$!
fi
(
    if [ -z "${PLACE_SWEEP_ONLY:-}" ]; then
        itp_runs
        sh scripts/results_pso.sh section "$BUILD" "$tmp/pso" > "$tmp/pso.md"
    fi
    tc=$(date +%s)
    if [ -n "$ALL_SEEDS" ]; then
        for f in $FAMILIES; do sweep "$tmp/C" "$ALL_NODES" "$ALL_SEEDS" "$all6" "$f"; done
    fi
    echo $(($(date +%s) - tc)) > "$tmp/C.s"
) &
p_rest=$!
[ -n "${p_random:-}" ] && wait "$p_random"
wait "$p_rest"
t_c=$(cat "$tmp/C.s")
t_rest=$(($(date +%s) - t2))

# ---- the figures ---------------------------------------------------------------------------
# keys DIR FAMILY: the key points of DIR/FAMILY/curve.csv and its LP bound as algo lp-bound
# (columns of curve.csv: 4-6 unallocated mean/min/max, 7-9 failed, 10-12 fragmentation rate)
keys() {
    awk -F, -v keys=" $KEYS " 'index(keys, " " $2 " ")' "$1/$2/curve.csv"
    awk -F, 'NR > 1 { printf "lp-bound,%s,%s,%s,%s,%s,0,0,0,0,0,0\n", $1, $2, $3, $4, $5 }' \
        "$1/$2/bound.csv"
}
# the headline over seeds 1-10: seeds 1-2 (A) and 3-10 (B) merged, means weighted by seeds
merge() {
    awk -F, -v OFS=, '{ k = $1 "," $2; if (!(k in n)) order[++no] = k
        n[k] += $3; s[k] += $3 * $4; f[k] += $3 * $7; r[k] += $3 * $10
        if (!(k in lo) || $5 < lo[k]) lo[k] = $5; if (!(k in hi) || $6 > hi[k]) hi[k] = $6 }
        END { for (i = 1; i <= no; i++) { k = order[i]
            print k, n[k], s[k] / n[k], lo[k], hi[k], f[k] / n[k], 0, 0, r[k] / n[k], 0, 0 } }'
}
for f in $FAMILIES; do
    keys "$tmp/A" "$f" > "$tmp/A/$f.keys"
    keys "$tmp/B" "$f" > "$tmp/B/$f.keys"
    grep -v '^pso,' "$tmp/B/$f.keys" | cat "$tmp/A/$f.keys" - | merge > "$tmp/H/$f.keys"
    [ -n "$ALL_SEEDS" ] && keys "$tmp/C" "$f" > "$tmp/C/$f.keys"
    cp "$tmp/B/$f/report.html" "$REPORTS/$f.html"
done
# at SET FAMILY ALGO PCT COLUMN: a figure of SET's key points (SET: H headline, B held-out,
# C all nodes)
at() {
    awk -F, -v a="$3" -v x="$4" -v c="$5" '$1 == a && $2 == x { printf "%.2f", $c; exit }' \
        "$tmp/$1/$2.keys"
}
# best SET FAMILY PCT: the lowest unallocated mean at PCT over the six policies
best() {
    for a in $ALGOS; do at "$1" "$2" "$a" "$3" 4; echo; done | sort -g | head -1
}
# mean over the lists of a figure
over() { # over SET ALGO PCT
    for f in $FAMILIES; do at "$1" "$f" "$2" "$3" 4; echo; done |
        awk '{ s += $1; n++ } END { printf "%.2f", s / n }'
}
# mean allocation (100 - unallocated) over 100, 101, ..., 130 % of ALGO in B's FAMILY curve
alloc_mean() { # alloc_mean FAMILY ALGO
    awk -F, -v a="$2" '$1 == a && $2 >= 100 && $2 <= 130 { s += 100 - $4; n++ }
        END { printf "%.4f", s / n }' "$tmp/B/$1/curve.csv"
}
solve_s() { # solve_s DIR FAMILY ALGO: mean solve time per seed (the sweep's table)
    awk -v a="$3" '$1 == a { printf "%.2f", $NF }' "$1/$2.txt"
}
# the 130 % table of a set: six policies, fgd - best other, the LP bound, fgd - bound
table130() { # table130 SET
    printf '| pods | Random | DotProduct | GpuClustering | GpuPacking | BestFit | FGD | fgd - best other | LP bound | fgd - bound |\n'
    printf '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
    for f in $FAMILIES; do
        b=$(best "$1" "$f" 130)
        row="| $f |"
        other=1000
        for a in $ALGOS; do
            m=$(at "$1" "$f" "$a" 130 4); lo=$(at "$1" "$f" "$a" 130 5); hi=$(at "$1" "$f" "$a" 130 6)
            cell="$m ($lo-$hi)"
            if [ "$m" = "$b" ]; then cell="**$m** ($lo-$hi)"; fi
            row="$row $cell |"
            if [ "$a" != fgd ]; then
                other=$(awk -v o="$other" -v m="$m" 'BEGIN { print (m < o ? m : o) }')
            fi
        done
        fg=$(at "$1" "$f" fgd 130 4); lb=$(at "$1" "$f" lp-bound 130 4)
        echo "$row $(awk -v a="$fg" -v b="$other" 'BEGIN { printf "%+.2f", a - b }') | $lb ($(at "$1" "$f" lp-bound 130 5)-$(at "$1" "$f" lp-bound 130 6)) | $(awk -v a="$fg" -v b="$lb" 'BEGIN { printf "%+.2f", a - b }') |"
    done
}
# counts: lists where fgd is the lowest (ties included) at 130 % / at every point 100-130 %
claim_counts() { # claim_counts SET -> "n_130 n_all"
    n130=0; nall=0
    for f in $FAMILIES; do
        lowall=1
        for x in 100 110 120 130; do
            if [ "$(at "$1" "$f" fgd "$x" 4)" = "$(best "$1" "$f" "$x")" ]; then
                [ "$x" = 130 ] && n130=$((n130 + 1))
            else
                lowall=0
            fi
        done
        nall=$((nall + lowall))
    done
    echo "$n130 $nall"
}
best_base() { # best_base SET PCT -> "mean name": the baseline of the lowest mean over lists
    for a in random dot-product-ref gpu-clustering gpu-packing best-fit; do
        echo "$(over "$1" "$a" "$2") $a"
    done | sort -g | head -1
}
n_fam=$(echo $FAMILIES | wc -w)
set -- $(claim_counts H); h130=$1 hall=$2
set -- $(best_base H 130); hb130=$1 hbname=$2
hf130=$(over H fgd 130); hl130=$(over H lp-bound 130)
hf100=$(over H fgd 100); hl100=$(over H lp-bound 100)
set -- $(best_base H 100); hb100=$1
hred=$(awk -v f="$hf130" -v b="$hb130" 'BEGIN { printf "%.1f", 100 * (b - f) / b }')
# fgd - bound per list at 100 and 130 %: smallest and largest
gaps() { # gaps SET PCT -> "min max"
    for f in $FAMILIES; do
        awk -v a="$(at "$1" "$f" fgd "$2" 4)" -v b="$(at "$1" "$f" lp-bound "$2" 4)" \
            'BEGIN { printf "%.2f %s\n", a - b, "'"$f"'" }'
    done | sort -g | awk 'NR == 1 { lo = $1 " (" $2 ")" } { hi = $1 " (" $2 ")" } END { print lo "|" hi }'
}
g100=$(gaps H 100); g130=$(gaps H 130)
# pso on the held-out seeds: pso - fgd in points of the mean allocation over 100-130 %
for f in $FAMILIES; do
    echo "$f $(alloc_mean "$f" fgd) $(alloc_mean "$f" pso) $(solve_s "$tmp/B" "$f" fgd) $(solve_s "$tmp/B" "$f" pso)"
done > "$tmp/pso_fgd"
pso_sum=$(awk '{ d = $3 - $2; s += d; if (NR == 1 || d < lo) lo = d; if (NR == 1 || d > hi) hi = d
        r += $5 / $4; ok += (d >= 1 && $5 <= 5 * $4); pos += (d > 0) }
    END { printf "%+.2f %+.2f %+.2f %.1f %d %d %d", s / NR, lo, hi, r / NR, ok, NR, pos }' "$tmp/pso_fgd")
set -- $pso_sum; pd_mean=$1 pd_lo=$2 pd_hi=$3 p_ratio=$4 p_ok=$5 p_n=$6 p_pos=$7
p_verdict=$([ "$p_ok" -eq "$p_n" ] && echo met || echo "NOT met")
ilp_line=$(grep -o 'ilp proven optimal on [0-9]*' "$tmp/random.md" | head -1 || true)

# ---- the page ------------------------------------------------------------------------------
cat <<HEAD
# Placement optimisers: results

Produced by \`scripts/results_placement.sh > docs/results/placement.md\` (ecosched
$("$ECO" --version | cut -d' ' -f2)) on $(nproc) cores ($(awk -F: '/model name/ {print $2; exit}' /proc/cpuinfo | sed 's/^ *//')),
load average $load0 at the start; times are wall-clock. Algorithms: the FGD paper's online
baselines and fgd ([placement.md](../policies/placement.md), "The FGD paper's online
baselines", [fgd.md](../policies/fgd.md)); [bin-packing.md](../policies/bin-packing.md) (ffd,
bfd, dot-product), [pso.md](../policies/pso.md) (pso, pso-basic), [ilp.md](../policies/ilp.md)
(ilp, and the LP bound). Every assignment below was checked feasible (\`eco_pl_verify\`) before
its figures were taken. The cross-check of fgd and the baselines against the reference
simulator built from source is [fgd-reference.md](fgd-reference.md).

## Summary

On openb's **1,213 GPU nodes** (the reference simulator's experiments), $n_fam pod lists, seeds
$SEEDS_ALL, the FGD paper's protocol:

- **FGD against the best baseline**: fgd leaves the fewest GPUs unallocated at 130 % arrived on
  **$h130 of $n_fam** pod lists (at every point from 100 to 130 % on $hall). Averaged over the lists,
  fgd leaves $hf130 % unallocated at 130 % against $hb130 % for the best baseline ($hbname),
  $hred % fewer unallocated GPUs (the paper: "up to 49 %"). The paper's claim that FGD is lowest
  at high load: $([ "$h130" -eq "$n_fam" ] && echo "**holds** on every list" || echo "**does not hold** on $((n_fam - h130)) of the lists").
- **Gap to the LP bound** (GLPK; no placement of the arrived pods can leave fewer GPUs
  unallocated): at 100 % arrived the bound is $hl100 % unallocated on average, fgd $hf100 % and
  the best baseline $hb100 %; at 130 % the bound is $hl130 %, fgd $hf130 %. fgd - bound per list:
  $(echo "$g100" | sed 's/|/ to /') points at 100 %, $(echo "$g130" | sed 's/|/ to /') at 130 %. This is
  what is left for any placement to win, at most: the bound is not known to be reachable (it
  relaxes integrality), so the true gap may be smaller.
- **Online pso on held-out seeds $SEEDS_HELD** (its knobs tuned on seeds 1-2: window $PSO_W, $PSO_S
  particles, $PSO_I iterations): pso - fgd in mean allocation over 100-130 % is $pd_mean points
  averaged over the lists ($pd_lo to $pd_hi; pso ahead on $p_pos of $p_n), at $p_ratio x fgd's
  solve time. Goal (pso >= fgd + 1 point on every list at <= 5x fgd's time): met on $p_ok of
  $p_n lists: **$p_verdict**.
- **Random instances** (ilp, 10 s limit): ${ilp_line:-not run} of 50; elsewhere the comparisons use
  ilp's best solution and GLPK's bound (see there).
HEAD
if [ -n "$ALL_SEEDS" ]; then
    set -- $(claim_counts C); c130=$1
    set -- $(best_base C 130); cb130=$1 cbname=$2
    echo "- **All 1,523 nodes** (secondary, seeds $ALL_SEEDS only): fgd lowest at 130 % on $c130 of"
    echo "  $n_fam lists; $(over C fgd 130) % unallocated on average against $cb130 % ($cbname); LP"
    echo "  bound $(over C lp-bound 130) %."
else
    echo "- The sweep on all 1,523 nodes was not run (PLACE_ALL_SEEDS empty)."
fi
cat <<SWEEP

## openb: the FGD paper's protocol on the 1,213 GPU nodes, every pod list

\`ecosched place --sweep --nodes $NODES --items $D/openb_pod_list_FAMILY.csv.gz
--algo ALGOS --seeds S --lp-bound --time-limit 0\` for each of the 24 pod lists of openb
(data/alibaba_gpu_v2023_openb; Weng et al., USENIX ATC '23, section 6 and Figure 7; the
reference simulator hkust-adsl/kubernetes-scheduler-simulator runs the same lists):

- **Nodes**: the 1,213 GPU nodes of openb (6,212 GPUs), as the reference's experiments
  (\`data/node_yaml/openb_node_list_gpu_node.yaml\` there, openb_node_list_gpu_node.csv.gz here,
  the node list docs/results/fgd-reference.md compares on). CPU-only pods go on GPU nodes.
- **Arrivals**: per seed, the listed pods shuffled, then pods drawn at random from the list
  appended until the requests reach 130 % of the cluster's GPUs (the reference's
  \`shufflePod\` and \`tuneUpPods\`; docs/policies/placement.md, "Reference protocol"). Every
  policy places the same arrivals, one pod at a time, given what is already placed; a pod
  that fits nowhere fails and the next arrives. Nothing leaves.
- **Measures**, after each 1 % of the GPUs requested (docs/formats/placement.md,
  "curve.csv"): the **unallocated GPU share**, GPUs not allocated in % of the cluster's
  (100 - allocation ratio; the paper's "unallocated GPUs", whose 49 % reduction is "290 more
  GPUs" of 6,212); and the **fragmentation rate**, FGD's fragmented GPUs (section 3, for the
  typical pods of the list) over unallocated GPUs, in %.
- **LP bound** (\`--lp-bound\`, [ilp.md](../policies/ilp.md#lp-bound)): at each key point, the
  unallocated share below which no placement of the pods arrived so far can go: GLPK's optimum
  of the LP relaxation of assigning those pods to nodes (identical pods and identical nodes
  aggregated; CPU, memory and GPUs as capacities; GPU models), tightened by valid rows of dual
  feasible functions (Fekete and Schepers, 2001: two pods of more than half a GPU never share
  one, and the like). It holds for any placement, online or not, so it bounds every policy.
- **Seeds**: $SEEDS_ALL (the reference reports 10 runs) for the six policies of the paper; online pso,
  whose knobs were tuned on seeds 1-2, is reported on seeds $SEEDS_HELD with the six beside it
  ("Online pso on held-out seeds" below).

The curves of seeds $SEEDS_HELD (mean and min-max band over the seeds, the 70-130 % range
enlarged, the failed requests and the fragmentation rate; the six policies and pso) are in one
HTML report per pod list, written beside this page: [placement/FAMILY.html](placement/), e.g.
[placement/default.html](placement/default.html).

### Unallocated GPU share at 130 % arrived (mean of seeds $SEEDS_ALL, min-max)

Lower is better; bold: the lowest of the six. "fgd - best other": fgd's mean minus the lowest
mean of the five baselines (negative: fgd lowest). "LP bound": the bound's mean (min-max) over
the seeds; "fgd - bound": what is left at most between fgd and any placement.

SWEEP
table130 H
cat <<KEYS

### Every key point

Unallocated GPU share (%) at each arrived share (mean of seeds $SEEDS_ALL; bold: the lowest
at that point for the pod list), the LP bound on the same arrivals (row lp-bound),
fragmentation rate (%) at 100 % arrived, and the mean solve time per seed (all arrivals, one
core; seeds $SEEDS_HELD).

KEYS
printf '| pods | policy |'; for x in $KEYS; do printf ' %s %% |' "$x"; done
printf ' frag rate at 100 %% | solve s |\n|---|---|'
for x in $KEYS; do printf -- '---:|'; done; printf -- '---:|---:|\n'
for f in $FAMILIES; do
    for a in $ALGOS lp-bound; do
        row="| $f | $a |"
        for x in $KEYS; do
            m=$(at H "$f" "$a" "$x" 4)
            if [ "$a" != lp-bound ] && [ "$m" = "$(best H "$f" "$x")" ]; then m="**$m**"; fi
            row="$row $m |"
        done
        if [ "$a" = lp-bound ]; then
            echo "$row - | $(solve_s "$tmp/B" "$f" lp-bound) |"
        else
            echo "$row $(at H "$f" "$a" 100 10) | $(solve_s "$tmp/B" "$f" "$a") |"
        fi
    done
done
cat <<CLAIM

### The paper's claim

The FGD paper (abstract, section 6.2, Figure 7): at high load FGD leaves fewer GPUs
unallocated than every baseline ("reduces unallocated GPUs by up to 49 %", 290 more GPUs
allocated). Here, mean over the $n_fam pod lists of the mean over seeds $SEEDS_ALL, and the LP bound:

| arrived | Random | DotProduct | GpuClustering | GpuPacking | BestFit | FGD | LP bound |
|---|---:|---:|---:|---:|---:|---:|---:|
CLAIM
for x in 100 110 120 130; do
    row="| $x % |"
    for a in $ALGOS lp-bound; do row="$row $(over H "$a" "$x") |"; done
    echo "$row"
done
walls=$(for f in $FAMILIES; do cat "$tmp/B/$f.t0" "$tmp/B/$f.t1" | tr '\n' ' '; echo; done |
    awk 'NR == 1 || $2 - $1 < lo { lo = $2 - $1 } NR == 1 || $2 - $1 > hi { hi = $2 - $1 }
         END { printf "%.0f to %.0f", lo, hi }')
cat <<CLAIM2

fgd is the lowest of the six (ties included, at two decimals) at 130 % arrived on $h130 of
$n_fam pod lists, and at every key point from 100 to 130 % on $hall of them. At 130 %,
averaged over the lists, fgd leaves $hf130 % of the GPUs unallocated against $hb130 % for the
best baseline on average, $hbname: a difference of $hred % of that baseline's unallocated GPUs
(positive: fgd leaves fewer). The claim is reproduced on a list where fgd's cell at 130 % is
bold and "fgd - best other" is at most 0; on the others it is not.

Run time of the sweeps and pso's tuning: $t_ab s wall, two runs at a time on the $(nproc) cores
(per list, seeds $SEEDS_HELD with the six and pso: $walls s).

### Online pso on held-out seeds $SEEDS_HELD

pso online (\`--window $PSO_W --swarm $PSO_S --iterations $PSO_I\`, [pso.md](../policies/pso.md)):
each window of $PSO_W arriving pods placed together given what is placed, nothing moved
afterwards. Its knobs were chosen on seeds 1-2 of three lists (default, gpushare40, multigpu50;
"Tuning" in the PSO section below); seeds $SEEDS_HELD were never used to tune it. The six
policies run on the same arrivals in the same sweep. Unallocated GPU share at 130 % arrived,
mean (min-max) over the seeds (bold: the lowest of the seven); "pso - fgd": the difference in mean allocation over 100, 101,
..., 130 % arrived, in points (positive: pso allocates more); time: mean solve time per seed,
pso / fgd.

| pods | Random | DotProduct | GpuClustering | GpuPacking | BestFit | FGD | pso | LP bound | pso - fgd | time pso / fgd |
|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|
CLAIM2
for f in $FAMILIES; do
    row="| $f |"
    b=$(for a in $ALGOS pso; do at B "$f" "$a" 130 4; echo; done | sort -g | head -1)
    for a in $ALGOS pso lp-bound; do
        m=$(at B "$f" "$a" 130 4)
        cell="$m ($(at B "$f" "$a" 130 5)-$(at B "$f" "$a" 130 6))"
        if [ "$a" != lp-bound ] && [ "$m" = "$b" ]; then cell="**$m** ($(at B "$f" "$a" 130 5)-$(at B "$f" "$a" 130 6))"; fi
        row="$row $cell |"
    done
    echo "$row $(awk -v f="$f" '$1 == f { printf "%+.2f | %.1fx", $3 - $2, $5 / $4 }' "$tmp/pso_fgd") |"
done
cat <<PSOSUM

Over the $p_n lists: pso - fgd $pd_mean points on average (smallest $pd_lo, largest $pd_hi),
pso ahead on $p_pos; time $p_ratio x fgd's. Goal (online pso >= fgd + 1 point at 100-130 %
load on every list at <= 5x fgd's time, docs/policies/pso.md): met on $p_ok of $p_n lists:
**$p_verdict**.
PSOSUM
if [ -n "$ALL_SEEDS" ]; then
    cat <<ALL

## Secondary: all 1,523 nodes (seeds $ALL_SEEDS)

The same protocol on all of openb's nodes (openb_node_list_all_node.csv.gz: the 1,213 GPU nodes
and 310 CPU-only nodes, which take CPU-only pods; the same 6,212 GPUs), the six policies, seeds
$ALL_SEEDS only (the 10 seeds of the previous page's run did not fit the page's run time beside
the headline; $t_c s here). Unallocated GPU share at 130 % arrived:

ALL
    table130 C
fi
cat <<MID

## Random instances: gap to the exact optimum

Seeded random instances (\`eco_pl_random_instance\`, src/core/place/random.c): 20 to 60 items
(10 % CPU-only, 35 % shares of 0.25, 0.5 or 0.81 GPU, the rest 1, 2 or 4 whole GPUs; 20 % of
GPU items bound to one of the two GPU models), 1 to 12 cores and 2 to 48 GiB each, on nodes of
4 GPUs, 32 cores and 256 GiB, half of each model, enough for every item. Objective: fewest
active hosts. ilp runs with a 10 s limit; where it is not proven optimal its solution is the
best it found and the "gap" its distance to GLPK's bound. "Excess over ilp" compares active
hosts with ilp's solution on instances where both place the same items; pso and pso-basic run
200 iterations with 20 particles (seed 1). This part, the next and the PSO section run after
the sweeps, two at a time.

MID
# GLPK prints its internal errors (caught by the error hook, that solve falls back) to stdout.
grep -v -e '^<!--' -e '^Assertion failed: ' -e '^Error detected in file ' "$tmp/random.md" || true
cat <<SIM

## In the simulator: JCT and energy on the ITP traces

\`ecosched sim --placement\` with the rules of the optimisers that place one job at a time
(docs/policies/placement.md): each ITP cluster on 8-GPU V100 nodes sized for its peak
(\`--cluster peak\`), queue policy \`easy\`, power-down \`forecast\`. With GPUs the only resource
and jobs placed one by one in queue order, \`ffd\` and \`bfd\` are \`first-fit\` and \`pack\`;
\`fgd\` and \`dot-product\` are their own rules. Energy in MWh, average JCT in hours.

| cluster | pack | first-fit | spread | dot-product | fgd | energy |
|---|---|---|---|---|---|---|
SIM
cat "$tmp/sim.md"
cat <<BATCH

### Batch placements: pso, pso-basic, ilp

The same runs with the placements that place the queue of each scheduling pass as a whole
(docs/policies/placement.md, "Batch placements"): up to 64 queued single-node jobs per pass
are assigned to nodes by \`pso\` or \`pso-basic\` (10 particles, 30 iterations, seeded from
\`--seed 1\`) or by \`ilp\` (GLPK, 1 s per pass), fewest nodes touched; the queue policy's
starts follow that plan where it still fits and fall back to best fit (\`pack\`) otherwise.
Each cell: energy, average JCT, and the run's wall-clock time (the whole \`ecosched sim\`).

| cluster | pack | pso | pso-basic | ilp |
|---|---|---|---|---|
BATCH
cat "$tmp/batch.md"
if [ -s "$tmp/pso.md" ]; then
    echo
    cat "$tmp/pso.md"
fi
cat <<END

## What this does not cover

- The openb sweep places a static list (FGD's setting): pods arrive and never leave; their
  durations are not replayed. Its random orders are ecosched's (\`eco_rng\`), not the
  reference's Go \`math/rand\` seeded with 42, so single runs differ from the reference's
  while the distribution of orders is the same.
- The LP bound relaxes integrality: it is an upper bound on what any placement allocates, not
  an allocation some placement reaches; the exact optimum of the openb instances (10,000 pods
  on 1,213 nodes) is out of ilp's reach. At 130 % arrived an offline placement may choose which
  of the arrived pods to place, which the online policies cannot: the bound also counts that.
- The all-node sweep runs seeds $ALL_SEEDS only (time). There the CPU-only pods have nodes of
  their own; on the GPU nodes alone they take CPU that GPU pods then lack, which is why the
  lists with more CPU (cpu200 to cpu300) leave more GPUs unallocated in the headline than in
  the all-node table (compare the two). The LP bound may leave CPU-only pods out (they
  allocate no GPU), which a policy that places every pod that fits cannot: on those lists the
  gap between the policies and the bound is mostly that.
- The batch placements see only what is queued at each pass: on clusters sized for their
  peak the queue is short most of the time and a pass with one queued job is placed by best
  fit alone, so pso, pso-basic and ilp differ little from \`pack\` here; their plan also
  counts only the nodes a batch touches (the optimisers' \`hosts\` objective), not the jobs
  already on a node.
- ilp proves optimality only on part of the random instances within its limit; where it does
  not, pso is compared with ilp's best solution and with GLPK's bound (the "gap" columns).

Whole script: $(($(date +%s) - t0)) s wall (after the sweeps: $t_rest s for the random
instances, the ITP runs, the PSO section and the all-node sweep, two at a time).
END
