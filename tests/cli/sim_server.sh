#!/bin/sh
# SPDX-License-Identifier: MIT
# `ecosched sim --server`: hand-computed runs on one and two GPUs (measured pair factors from
# data/gpu_colocation), the static assignment, memory-threshold stacking, live sharing,
# share-fit stacking three jobs, live's cap on jobs per GPU, Poisson arrivals, the Gavel judge, live deciding with Gavel's pairs (--decide),
# the decision model reaching no strategy under unknown workloads, byte-identical repeated runs,
# and bad input.
set -u
ECO="$1"; SRC="$2"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail=0; n=0
check() { what="$1"; shift; n=$((n + 1)); if ! "$@"; then echo "FAIL: $what"; fail=$((fail + 1)); fi; }
near() { awk -v a="$1" -v b="$2" -v e="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= e) }'; }
# col FILE ID COLUMN: one column of one job row of jobs-*.csv
col() { awk -F, -v id="$2" -v c="$3" 'NR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next }
        $1 == id { print $k[c] }' "$1"; }
jget() { sed -n "s/.*\"strategy\": \"$2\".*\"$3\": \([0-9.]*\).*/\1/p" "$1"; }

# Two ResNet18 CIFAR-10 bs32 jobs of 100 s on one V100, no start-up, no noise.
R18="ResNet18 CIFAR-10 bs32"
printf 'id,workload,gpus,work_s,submit_s\n1,%s,1,100,0\n2,%s,1,100,0\n' "$R18" "$R18" > "$T/two.csv"
"$ECO" sim --server --gpus 1 --series "$T/two.csv" --startup 0 --noise 0 --out "$T/o1" --json > "$T/o1.json"
check "sim --server exits 0" [ $? -eq 0 ]
# Lucid measured the pair at 0.949 and 0.972 (row 740) and 88.027% utilisation; alone 58.667%.
f=$(awk -F, '$1 == 740 { print ($7 + $13) / 2 }' "$SRC/data/gpu_colocation/lucid_colocate_info.csv")
want=$(awk -v f="$f" 'BEGIN { printf "%.3f", 100 / f }')
check "live: job 2 shares from t = 0" [ "$(col "$T/o1/jobs-live.csv" 2 start_s)" = 0.000 ]
check "live: job 2 ends at 100 / $f = $want" near "$(col "$T/o1/jobs-live.csv" 2 end_s)" "$want" 0.002
check "live: makespan $want" near "$(jget "$T/o1.json" live makespan_s)" "$want" 0.002
check "live: shared GPU at the measured 88.03%" near "$(jget "$T/o1.json" live gpu_util)" 0.8803 0.0001
check "static: one after the other, ends 100 and 200" \
    sh -c "[ '$(col "$T/o1/jobs-static.csv" 1 end_s)' = 100.000 ] && [ '$(col "$T/o1/jobs-static.csv" 2 end_s)' = 200.000 ]"
check "static: utilisation of ResNet18 alone (58.667%)" near "$(jget "$T/o1.json" static gpu_util)" 0.5867 0.0001
check "exclusive: makespan 200" near "$(jget "$T/o1.json" exclusive makespan_s)" 200 0.001
# A higher bar for sharing than the pair gives: live runs them one after the other.
"$ECO" sim --server --gpus 1 --series "$T/two.csv" --startup 0 --noise 0 --strategy live \
    --share-min-gain 1.95 --json > "$T/o2.json"
check "live with --share-min-gain 1.95 (pair 1.921) does not share" near "$(jget "$T/o2.json" live makespan_s)" 200 0.001

# Static keeps its fixed GPUs: jobs 1 and 3 on GPU 0, job 2 on GPU 1; job 3 waits for job 1
# although GPU 1 is free from t = 50. Exclusive gives it GPU 1 at t = 50.
printf 'id,workload,gpus,work_s,submit_s\n1,%s,1,100,0\n2,%s,1,50,0\n3,%s,1,10,0\n' "$R18" "$R18" "$R18" > "$T/three.csv"
"$ECO" sim --server --gpus 2 --series "$T/three.csv" --startup 0 --noise 0 --ts-wait 0 \
    --strategy static,exclusive,memory-threshold --out "$T/o3" > /dev/null
check "static: job 3 on GPU 0 from 100 to 110" \
    sh -c "[ '$(col "$T/o3/jobs-static.csv" 3 gpu_ids)/$(col "$T/o3/jobs-static.csv" 3 start_s)/$(col "$T/o3/jobs-static.csv" 3 end_s)' = 0/100.000/110.000 ]"
check "exclusive: job 3 on GPU 1 from 50 to 60" \
    sh -c "[ '$(col "$T/o3/jobs-exclusive.csv" 3 gpu_ids)/$(col "$T/o3/jobs-exclusive.csv" 3 start_s)/$(col "$T/o3/jobs-exclusive.csv" 3 end_s)' = 1/50.000/60.000 ]"
# ResNet18 holds 2,360 MiB, under 10% of a 32 GiB V100: task-spooler's rule sees GPU 0 free and
# stacks job 2 on it, while GPU 1 stays idle (2 slots: job 3 waits).
check "memory-threshold: job 2 stacked on GPU 0" [ "$(col "$T/o3/jobs-memory-threshold.csv" 2 gpu_ids)" = 0 ]
check "memory-threshold: job 2 ran shared" awk "BEGIN { exit !($(col "$T/o3/jobs-memory-threshold.csv" 2 shared_s) > 0) }"

# Determinism: drawn series, all strategies, twice.
for r in a b; do
    "$ECO" sim --server --jobs 30 --seed 5 --out "$T/d$r" --write-series "$T/d$r.csv" > "$T/d$r.txt" || check "drawn run" false
done
for f in jobs-static.csv jobs-exclusive.csv jobs-memory-threshold.csv jobs-live.csv; do
    check "$f identical in two runs" cmp -s "$T/da/$f" "$T/db/$f"
done
check "tables identical" cmp -s "$T/da.txt" "$T/db.txt"
check "series file has 30 jobs" [ "$(wc -l < "$T/da.csv")" -eq 31 ]
"$ECO" sim --server --series "$T/da.csv" --seed 5 > "$T/dc.txt"
check "the written series reproduces the run" cmp -s "$T/da.txt" "$T/dc.txt"
"$ECO" sim --server --jobs 30 --seed 6 > "$T/d6.txt"
check "another seed, another result" sh -c "! cmp -s '$T/da.txt' '$T/d6.txt'"

# share-fit and --judge: two ResNet50 ImageNet bs32 jobs of 100 s on one V100. Lucid never
# measured the pair (utilisation rule: 2^-0.5 each); Gavel's ResNet-50 (batch size 32) with
# itself on V100 runs at 0.366248 each. Both live (deciding with Lucid) and share-fit share.
R50="ResNet50 ImageNet bs32"
printf 'id,workload,gpus,work_s,submit_s\n1,%s,1,100,0\n2,%s,1,100,0\n' "$R50" "$R50" > "$T/r50.csv"
"$ECO" sim --server --gpus 1 --series "$T/r50.csv" --startup 0 --noise 0 --strategy live,share-fit,exclusive --json > "$T/jl.json"
"$ECO" sim --server --gpus 1 --series "$T/r50.csv" --startup 0 --noise 0 --strategy live,share-fit,exclusive --json --judge lucid > "$T/jl2.json"
check "--judge lucid is the default, byte for byte" cmp -s "$T/jl.json" "$T/jl2.json"
"$ECO" sim --server --gpus 1 --series "$T/r50.csv" --startup 0 --noise 0 --strategy live,share-fit,exclusive --json --judge gavel > "$T/jg.json"
check "judged by Lucid: share-fit makespan 141.421" near "$(jget "$T/jl.json" share-fit makespan_s)" 141.421 0.002
check "judged by Gavel: share-fit makespan 273.038" near "$(jget "$T/jg.json" share-fit makespan_s)" 273.038 0.002
check "judged by Gavel: live still shares (decides with Lucid), 273.038" near "$(jget "$T/jg.json" live makespan_s)" 273.038 0.002
check "judged by Gavel: exclusive unchanged, 200" near "$(jget "$T/jg.json" exclusive makespan_s)" 200 0.001
check "the JSON names the Gavel judge" grep -q '"judge": "gavel"' "$T/jg.json"
check "the default JSON has no judge key (output as before)" sh -c "! grep -q judge '$T/jl.json'"
# --decide: live deciding with Gavel's pairs (0.366 each, summed 0.73 < 1.1) does not share the
# ResNet50 pair; share-fit (no look-up) still does; --decide lucid is the default, byte for byte.
"$ECO" sim --server --gpus 1 --series "$T/r50.csv" --startup 0 --noise 0 --strategy live,share-fit,exclusive --json --decide lucid > "$T/dl.json"
check "--decide lucid is the default, byte for byte" cmp -s "$T/jl.json" "$T/dl.json"
"$ECO" sim --server --gpus 1 --series "$T/r50.csv" --startup 0 --noise 0 --strategy live,share-fit --json --decide gavel --judge lucid --out "$T/dg" > "$T/dg.json"
check "decided by Gavel: live does not share (shared 0)" [ "$(jget "$T/dg.json" live shared_gpu_s)" = 0 ]
check "decided by Gavel: live's job 2 starts after job 1 ends" awk "BEGIN { exit !($(col "$T/dg/jobs-live.csv" 2 start_s) >= 100) }"
check "decided by Gavel: share-fit still 141.421" near "$(jget "$T/dg.json" share-fit makespan_s)" 141.421 0.002
check "the JSON names both models and says held out" grep -q '"judge": "lucid", "decide": "gavel", "held_out": true' "$T/dg.json"
# --share-util: live without workloads shares by the utilisation rule. Job 2 arrives at 40 s, when
# the window shows ResNet18's 58.667% alone: under 0.7 (the default) it joins at once, under 0.5
# it waits for job 1 to end (100 s) and the GPU to be seen free (101 s).
printf 'id,workload,gpus,work_s,submit_s\n1,%s,1,100,0\n2,%s,1,100,40\n' "$R18" "$R18" > "$T/late2.csv"
for u in 0.7 0.5; do
    "$ECO" sim --server --gpus 1 --series "$T/late2.csv" --startup 0 --noise 0 --strategy live \
        --unknown-workloads --share-util "$u" --out "$T/su$u" > /dev/null
done
check "--share-util 0.7: job 2 shares from 40 s" [ "$(col "$T/su0.7/jobs-live.csv" 2 start_s)" = 40.000 ]
check "--share-util 0.5: job 2 waits until 101 s" [ "$(col "$T/su0.5/jobs-live.csv" 2 start_s)" = 101.000 ]
# Unknown workloads: the decision model reaches no strategy (a drawn series, Gavel judge).
for d in lucid gavel; do
    "$ECO" sim --server --jobs 30 --seed 4 --judge gavel --unknown-workloads --decide "$d" \
        --strategy static,exclusive,memory-threshold,live,share-fit --out "$T/u$d" > /dev/null || check "unknown-workloads run" false
done
for f in jobs-static.csv jobs-exclusive.csv jobs-memory-threshold.csv jobs-live.csv jobs-share-fit.csv; do
    check "unknown workloads: $f the same whichever model live would decide with" cmp -s "$T/ulucid/$f" "$T/ugavel/$f"
done
# Three ResNet18 bs32 jobs on one GPU: share-fit stacks all three, each at 0.9605^2.
printf 'id,workload,gpus,work_s,submit_s\n1,%s,1,100,0\n2,%s,1,100,0\n3,%s,1,100,0\n' "$R18" "$R18" "$R18" > "$T/r3.csv"
"$ECO" sim --server --gpus 1 --series "$T/r3.csv" --startup 0 --noise 0 --strategy share-fit --out "$T/o4" > /dev/null
check "share-fit: job 3 shares GPU 0 from t = 0" [ "$(col "$T/o4/jobs-share-fit.csv" 3 gpu_ids)/$(col "$T/o4/jobs-share-fit.csv" 3 start_s)" = 0/0.000 ]
check "share-fit: three on one GPU end at 100 / 0.9605^2 = 108.394" near "$(col "$T/o4/jobs-share-fit.csv" 3 end_s)" 108.394 0.001
"$ECO" sim --server --gpus 1 --series "$T/r3.csv" --startup 0 --noise 0 --strategy share-fit,exclusive --json > "$T/o4.json"
check "share-fit: 109 GPU-seconds with three jobs" [ "$(jget "$T/o4.json" share-fit shared3_gpu_s)" = 109 ]
check "exclusive: none with three" [ "$(jget "$T/o4.json" exclusive shared3_gpu_s)" = 0 ]

# Bad input: clear message naming file, line and field, exit 2.
bad() {
    what="$1"; want="$2"; shift 2
    out=$("$ECO" sim --server "$@" 2>&1 >/dev/null); rc=$?
    check "$what: exit 2 (got $rc)" [ "$rc" -eq 2 ]
    check "$what: message '$want' (got: $out)" sh -c "printf '%s' \"\$1\" | grep -q -- \"\$2\"" _ "$out" "$want"
}
printf 'id,workload,gpus,work_s,submit_s\n1,NoSuchNet,1,100,0\n' > "$T/b1.csv"
bad "unknown workload" "b1.csv:2: workload: unknown 'NoSuchNet'" --series "$T/b1.csv"
printf 'id,workload,gpus,work_s,submit_s\n1,%s,1,-5,0\n' "$R18" > "$T/b2.csv"
bad "negative work" "b2.csv:2: work_s" --series "$T/b2.csv"
printf 'id,workload,gpus,work_s,submit_s\n1,%s,1,5,10\n2,%s,1,5,3\n' "$R18" "$R18" > "$T/b3.csv"
bad "submission going back" "b3.csv:3: submit_s" --series "$T/b3.csv"
printf 'id,workload,gpus\n' > "$T/b4.csv"
bad "bad header" "b4.csv:1: header" --series "$T/b4.csv"
printf 'id,workload,gpus,work_s,submit_s\n1,%s,3,5,0\n' "$R18" > "$T/b5.csv"
bad "job wider than the server" "job 1" --series "$T/b5.csv" --gpus 2
bad "missing series file" "nope.csv: cannot open" --series "$T/nope.csv"
bad "unknown strategy" "unknown 'fastest'" --strategy live,fastest
bad "bad --gpus" "--gpus: '0'" --gpus 0
bad "bad --work" "--work: '9:3'" --work 9:3
bad "unknown GPU type" "--gpu-type: unknown 'Z80'" --gpu-type Z80
bad "unknown judge" "--judge: unknown 'oracle' (lucid or gavel)" --judge oracle
bad "--share-util past 1" "--share-util" --share-util 1.5
bad "unknown decision model" "--decide: unknown 'oracle' (lucid or gavel)" --decide oracle
bad "unknown option" "unknown option '--fast'" --fast
bad "fractional --gpus" "--gpus: '2.5' is not a whole number in 1..64" --gpus 2.5
bad "fractional --jobs" "--jobs: '2.5' is not a whole number in 1..1024" --jobs 2.5
bad "unknown arrivals" "--arrivals: unknown 'burst' (even or poisson)" --arrivals burst
bad "--share-max-jobs past 16" "--share-max-jobs" --share-max-jobs 17
bad "negative --share-settle" "--share-settle" --share-settle -1
# Poisson arrivals: the jobs of the even series, submitted after exponential gaps (first at 0)
"$ECO" sim --server --jobs 200 --seed 3 --strategy exclusive --write-series "$T/ev.csv" > /dev/null
"$ECO" sim --server --jobs 200 --seed 3 --strategy exclusive --arrivals poisson --submit-every 100 \
    --write-series "$T/po.csv" > /dev/null
check "poisson: the same jobs as the even series" \
    cmp -s "$(cut -d, -f1-4 "$T/ev.csv" > "$T/ev4"; echo "$T/ev4")" "$(cut -d, -f1-4 "$T/po.csv" > "$T/po4"; echo "$T/po4")"
check "poisson: first at 0, mean gap within 20% of 100 s" awk -F, 'NR == 2 && $5 != 0 { exit 1 }
    NR > 2 { if ($5 < p) exit 1; g += $5 - p; n++ } NR > 1 { p = $5 } END { exit !(n == 199 && g / n > 80 && g / n < 120) }' "$T/po.csv"
# --share-max-jobs 2: share-fit stacks three ResNet18 jobs on one GPU, live at most two
for m in 0 2; do
    "$ECO" sim --server --gpus 1 --series "$T/r3.csv" --startup 0 --noise 0 --strategy live \
        --unknown-workloads --share-max-jobs "$m" --json > "$T/cap$m.json"
done
check "live without a cap: three on the GPU" [ "$(jget "$T/cap0.json" live shared3_gpu_s)" -gt 0 ]
check "live --share-max-jobs 2: never three on a GPU" [ "$(jget "$T/cap2.json" live shared3_gpu_s)" = 0 ]
# --server is a subcommand entry of sim's option table: it may follow the server's options
"$ECO" sim --gpus 1 --series "$T/two.csv" --startup 0 --noise 0 --json --server > "$T/late.json"
check "--server after the server's options runs the same" cmp -s "$T/late.json" "$T/o1.json"
"$ECO" sim --server --help | grep -q -- "--share-min-gain"
check "--server --help lists the options" [ $? -eq 0 ]

echo "sim_server: $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
