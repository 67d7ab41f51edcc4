#!/bin/sh
# SPDX-License-Identifier: MIT
# `ecosched place --sweep`: curve.csv on a hand-computed case (every value known), on openb
# (arrived share on the grid and increasing, values in range, unallocated share never rising),
# the LP bound (--lp-bound) on the hand-computed case, and bad sweep options refused with a
# message (a --sweep-step below 0.1 % among them).
set -u
ECO="$1"; SRC="$2"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail=0
check() { # check NAME STATUS WANT_STATUS OUTPUT NEEDLE
    if [ "$2" -ne "$3" ]; then echo "FAIL $1: exit $2, want $3"; echo "$4" | head -5; fail=1; return; fi
    case "$4" in *"$5"*) ;; *) echo "FAIL $1: output lacks '$5'"; echo "$4" | head -8; fail=1 ;; esac
}
# By hand: one node of 2 GPUs, one listed pod of 0.6 GPU (30 % of the GPUs). --inflate 130
# draws copies until the requests reach 130 %: 5 pods (30, 60, 90, 120, 150 %). Every
# algorithm puts pod 1 on GPU 0, pod 2 on GPU 1 (0.4 left on GPU 0 does not hold 0.6), and
# pods 3-5 fit nowhere. A point x is the state after the pod whose arrival reaches x:
# 0 %: nothing placed (unallocated 100, frag 0); 10-30 %: 0.6 placed, unallocated 1.4 GPUs
# = 70 %, the typical pod (0.6) cannot use GPU 0's 0.4: frag 0.4 / 1.4 = 28.5714 %;
# 40-60 %: 1.2 placed, unallocated 40 %, no GPU holds 0.6: frag 100 %; 70-90 %: pod 3
# failed (30 % of the GPUs); 100-120 %: 60 %; 130 %: 90 %. Same for every seed.
cat > "$T/nodes.csv" <<'CSV'
name,cpu_cores,memory_gib,gpus,gpu_model
n0,8,32,2,T4
CSV
cat > "$T/items.csv" <<'CSV'
name,cpu_cores,memory_gib,gpus,gpu_model
p,1,1,0.6,
CSV
out=$("$ECO" place --sweep --nodes "$T/nodes.csv" --items "$T/items.csv" --algo random,fgd \
      --seeds 1-3 --sweep-step 10 --out "$T/hand" 2>&1)
check hand $? 0 "$out" "mean of 3 seeds"
want="algo,arrived_pct,seeds,unalloc_pct_mean,unalloc_pct_min,unalloc_pct_max,failed_pct_mean,failed_pct_min,failed_pct_max,frag_rate_pct_mean,frag_rate_pct_min,frag_rate_pct_max"
for algo in random fgd; do
    for row in "0 100 0 0" "10 70 0 28.5714" "20 70 0 28.5714" "30 70 0 28.5714" \
               "40 40 0 100" "50 40 0 100" "60 40 0 100" "70 40 30 100" "80 40 30 100" \
               "90 40 30 100" "100 40 60 100" "110 40 60 100" "120 40 60 100" "130 40 90 100"; do
        set -- $row
        u=$(printf '%.4f' "$2"); f=$(printf '%.4f' "$3"); r=$(printf '%.4f' "$4")
        want="$want
$algo,$1,3,$u,$u,$u,$f,$f,$f,$r,$r,$r"
    done
done
got=$(cat "$T/hand/curve.csv")
if [ "$got" != "$want" ]; then
    echo "FAIL hand curve.csv:"; echo "$want" > "$T/want.csv"; diff -u "$T/want.csv" "$T/hand/curve.csv"; fail=1
fi
[ -s "$T/hand/report.html" ] || { echo "FAIL hand: no report.html"; fail=1; }

# --lp-bound on the same case, with online pso in the list: 70-90 % arrived is 3 pods (1.8
# GPUs), 100-120 % 4 and 130 % 5. The plain LP fills the 2 GPUs up to the demand: 1.8 GPUs
# (10 % unallocated), then 2 (0 %); the dual feasible function u^(1) counts a 0.6 share as a
# whole GPU, so at most 2 pods, 1.2 GPUs (40 %), which every policy reaches.
out=$("$ECO" place --sweep --nodes "$T/nodes.csv" --items "$T/items.csv" --algo fgd,pso \
      --window 2 --swarm 2 --iterations 2 --time-limit 0 --seeds 1-3 --sweep-step 10 \
      --lp-bound --out "$T/bound" 2>&1)
check lp-bound $? 0 "$out" "lp-bound"
want="arrived_pct,seeds,bound_unalloc_pct_mean,bound_unalloc_pct_min,bound_unalloc_pct_max,plain_unalloc_pct_mean,plain_unalloc_pct_min,plain_unalloc_pct_max"
for row in "70 10" "80 10" "90 10" "100 0" "110 0" "120 0" "130 0"; do
    set -- $row
    p=$(printf '%.4f' "$2")
    want="$want
$1,3,40.0000,40.0000,40.0000,$p,$p,$p"
done
got=$(cat "$T/bound/bound.csv" 2>/dev/null)
if [ "$got" != "$want" ]; then
    echo "FAIL lp-bound bound.csv:"; echo "$want" > "$T/want.csv"; diff -u "$T/want.csv" "$T/bound/bound.csv"; fail=1
fi
grep -q '^pso,130,3,40.0000,' "$T/bound/curve.csv" 2>/dev/null ||
    { echo "FAIL lp-bound: no pso curve at 40 % unallocated"; fail=1; }
out=$("$ECO" place --nodes "$T/nodes.csv" --items "$T/items.csv" --algo fgd --lp-bound 2>&1)
check lp-bound-alone $? 2 "$out" "--lp-bound needs --sweep"
out=$("$ECO" place --sweep --nodes "$T/nodes.csv" --items "$T/items.csv" --algo fgd --window 4 2>&1)
check window-no-pso $? 2 "$out" "--window: only pso and pso-basic"

# openb default on all nodes, two baselines, two seeds, 5 % steps: 27 points per algorithm
# (0..130), arrived on the grid and increasing, every value in 0..100, min <= mean <= max,
# and the unallocated share never rising (pods arrive, none leaves).
D="$SRC/data/alibaba_gpu_v2023_openb"
out=$("$ECO" place --sweep --nodes "$D/openb_node_list_all_node.csv.gz" \
      --items "$D/openb_pod_list_default.csv.gz" --algo random,best-fit --seeds 1-2 \
      --sweep-step 5 --out "$T/openb" 2>&1)
check openb $? 0 "$out" "% of 6212 GPUs"
awk -F, 'NR == 1 { next }
    { n[$1]++; want = (n[$1] - 1) * 5
      if ($2 != want) { print "FAIL openb: " $1 " point " n[$1] " arrived " $2 ", want " want; bad = 1 }
      for (i = 4; i <= 12; i++) if ($i < 0 || $i > 100) { print "FAIL openb: out of range: " $0; bad = 1 }
      for (i = 4; i <= 12; i += 3) if ($(i+1) > $i + 1e-9 || $i > $(i+2) + 1e-9) { print "FAIL openb: min/mean/max: " $0; bad = 1 }
      if (n[$1] > 1 && $4 > last[$1] + 1e-9) { print "FAIL openb: unallocated rose: " $0; bad = 1 }
      last[$1] = $4 }
    END { for (a in n) if (n[a] != 27) { print "FAIL openb: " a " has " n[a] " points"; bad = 1 }
          if (length(n) != 2) { print "FAIL openb: " length(n) " algorithms"; bad = 1 }
          exit bad }' "$T/openb/curve.csv" || fail=1
# same seeds, same curves (the sweep is deterministic)
"$ECO" place --sweep --nodes "$D/openb_node_list_all_node.csv.gz" \
    --items "$D/openb_pod_list_default.csv.gz" --algo random,best-fit --seeds 1-2 \
    --sweep-step 5 --out "$T/openb2" >/dev/null 2>&1
cmp -s "$T/openb/curve.csv" "$T/openb2/curve.csv" || { echo "FAIL openb: not deterministic"; fail=1; }

# bad sweep options
out=$("$ECO" place --sweep --nodes "$T/nodes.csv" --items "$T/items.csv" --algo random,best 2>&1)
check bad-algo $? 2 "$out" "--algo: unknown 'best'"
out=$("$ECO" place --sweep --nodes "$T/nodes.csv" --items "$T/items.csv" --algo fgd --seeds 3-1 2>&1)
check bad-seeds $? 2 "$out" "--seeds '3-1'"
out=$("$ECO" place --sweep --nodes "$T/nodes.csv" --items "$T/items.csv" --algo fgd --sweep-step 0 2>&1)
check bad-step $? 2 "$out" "--sweep-step"
# --sweep-step below 0.1 % (a bound on the curve's points: 10001 at most, --inflate 1000): a
# step of 1e-300 once made floor(130 / step) overflow a size_t, and 1e-5 took 923 MB
for step in 1e-300 1e-5 0.05 0x1p-3; do
    out=$("$ECO" place --sweep --nodes "$T/nodes.csv" --items "$T/items.csv" --algo fgd \
          --sweep-step "$step" 2>&1)
    check "tiny-step $step" $? 2 "$out" "--sweep-step: '$step' is not a number in 0.1..100"
done
# the smallest step is taken: 1301 points per algorithm from 0 to 130 %
out=$("$ECO" place --sweep --nodes "$T/nodes.csv" --items "$T/items.csv" --algo fgd \
      --sweep-step 0.1 --out "$T/fine" 2>&1)
check fine-step $? 0 "$out" "fgd"
rows=$(grep -c '^fgd,' "$T/fine/curve.csv" 2>/dev/null)
[ "$rows" = 1301 ] || { echo "FAIL fine-step: $rows points, want 1301"; fail=1; }
grep -q '^fgd,130,' "$T/fine/curve.csv" 2>/dev/null || { echo "FAIL fine-step: no point at 130 %"; fail=1; }
out=$("$ECO" place --nodes "$T/nodes.csv" --items "$T/items.csv" --algo fgd --seeds 1-2 2>&1)
check seeds-alone $? 2 "$out" "--seeds needs --sweep"
out=$("$ECO" place --sweep --json --nodes "$T/nodes.csv" --items "$T/items.csv" --algo fgd 2>&1)
check sweep-json $? 2 "$out" "--json does not apply to --sweep"
printf 'name,cpu_cores,memory_gib,gpus\nc,1,1,0\n' > "$T/cpuonly.csv"
out=$("$ECO" place --sweep --nodes "$T/nodes.csv" --items "$T/cpuonly.csv" --algo fgd 2>&1)
check no-gpu-requests $? 2 "$out" "cpuonly.csv requests no GPUs"
[ $fail -eq 0 ] && echo "place --sweep: all checks passed"
exit $fail
