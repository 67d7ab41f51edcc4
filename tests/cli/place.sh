#!/bin/sh
# SPDX-License-Identifier: MIT
# `ecosched place`: a hand-computed instance (ffd and ilp), outputs, determinism of pso, the
# openb lists, and bad input refused with file, line and column.
set -u
ECO="$1"; SRC="$2"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail=0
check() { # check NAME STATUS WANT_STATUS OUTPUT NEEDLE
    if [ "$2" -ne "$3" ]; then echo "FAIL $1: exit $2, want $3"; echo "$4" | head -5; fail=1; return; fi
    case "$4" in *"$5"*) ;; *) echo "FAIL $1: output lacks '$5'"; echo "$4" | head -8; fail=1 ;; esac
}
cat > "$T/nodes.csv" <<'CSV'
name,cpu_cores,memory_gib,gpus,gpu_model
a,8,32,2,T4
b,16,64,4,V100
CSV
cat > "$T/items.csv" <<'CSV'
name,cpu_cores,memory_gib,gpus,gpu_model
x,4,16,2,
y,2,8,0.5,T4
z,4,8,4,
CSV
# ffd by hand: dominant shares (mean node: 12 cores, 48 GiB, 3 GPUs) x 0.67, y 0.17, z 1.33,
# so z, x, y: z -> b (a has 2 GPUs), x -> a, y (T4 only) finds a's GPUs taken: fails.
out=$("$ECO" place --nodes "$T/nodes.csv" --items "$T/items.csv" --algo ffd --out "$T/ffd" 2>&1)
check ffd $? 0 "$out" "placed 2, failed 1, first failed item 1"
check ffd-hosts 0 0 "$out" "active hosts 2;"
want="item,name,node,node_name,gpus
0,x,0,a,0;1
1,y,,,
2,z,1,b,0;1;2;3"
got=$(cat "$T/ffd/assignment.csv")
[ "$got" = "$want" ] || { echo "FAIL assignment.csv:"; echo "$got"; fail=1; }
grep -q '"first_failed": 1' "$T/ffd/metrics.json" || { echo "FAIL metrics.json"; fail=1; }
# ilp: y needs a (T4); x and z cannot share b (6 GPUs > 4) nor x share a with y; so at most 2
# items, on 2 hosts, proven optimal.
out=$("$ECO" place --nodes "$T/nodes.csv" --items "$T/items.csv" --algo ilp --json 2>&1)
check ilp $? 0 "$out" '"placed": 2, "failed": 1'
check ilp-hosts 0 0 "$out" '"active_hosts": 2,'
check ilp-opt 0 0 "$out" '"optimal": true, "bound_hosts": 2, "gap": 0.000000'
# pso is deterministic for a seed when no time limit stops it
"$ECO" place --nodes "$T/nodes.csv" --items "$T/items.csv" --algo pso --seed 3 --time-limit 0 \
    --iterations 20 --out "$T/p1" >/dev/null 2>&1
"$ECO" place --nodes "$T/nodes.csv" --items "$T/items.csv" --algo pso --seed 3 --time-limit 0 \
    --iterations 20 --out "$T/p2" >/dev/null 2>&1
cmp -s "$T/p1/assignment.csv" "$T/p2/assignment.csv" || { echo "FAIL pso not deterministic"; fail=1; }
# the bundled openb lists as they are
D="$SRC/data/alibaba_gpu_v2023_openb"
out=$("$ECO" place --nodes "$D/openb_node_list_gpu_node.csv.gz" \
      --items "$D/openb_pod_list_default.csv.gz" --algo ffd 2>&1)
check openb $? 0 "$out" "1213 nodes, 8152 items"
# bad input: file, line and column, exit 2
printf 'name,cpu_cores,memory_gib,gpus,gpu_model\na,8,32,2,T4\nb,x,64,4,V100\n' > "$T/bad_nodes.csv"
out=$("$ECO" place --nodes "$T/bad_nodes.csv" --items "$T/items.csv" --algo ffd 2>&1)
check bad-node $? 2 "$out" "bad_nodes.csv:3: column 'cpu_cores': 'x' is not a number"
printf 'name,cpu_cores,memory_gib,gpus\nx,1,1,2.5\n' > "$T/bad_items.csv"
out=$("$ECO" place --nodes "$T/nodes.csv" --items "$T/bad_items.csv" --algo ffd 2>&1)
check bad-item $? 2 "$out" "bad_items.csv:2: column 'gpus': '2.5' must be a share below 1"
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1000,1024,1\n' > "$T/short.csv"
out=$("$ECO" place --nodes "$T/nodes.csv" --items "$T/short.csv" --algo ffd 2>&1)
check short-row $? 2 "$out" "short.csv:2: 4 fields, but the header has 5 columns"
printf 'name,memory_mib,num_gpu\n' > "$T/nocpu.csv"
out=$("$ECO" place --nodes "$T/nodes.csv" --items "$T/nocpu.csv" --algo ffd 2>&1)
check no-cpu $? 2 "$out" "nocpu.csv:1: missing column 'cpu_milli' or 'cpu_cores'"
out=$("$ECO" place --nodes "$T/none.csv" --items "$T/items.csv" --algo ffd 2>&1)
check missing-file $? 2 "$out" "none.csv: cannot open"
out=$("$ECO" place --nodes "$T/nodes.csv" --items "$T/items.csv" --algo best 2>&1)
check bad-algo $? 2 "$out" "unknown 'best'"
out=$("$ECO" place --nodes "$T/nodes.csv" --items "$T/items.csv" --algo ilp --objective frag 2>&1)
check ilp-frag $? 2 "$out" "only --objective hosts"
out=$("$ECO" place --nodes "$T/nodes.csv" --algo ffd 2>&1)
check no-items $? 2 "$out" "--items and --algo are required"
out=$("$ECO" place --nodes "$T/nodes.csv" --items "$T/items.csv" --algo pso --seed -1 2>&1)
check bad-seed $? 2 "$out" "--seed: '-1' is not a whole number in 0..9007199254740992"
# a fraction where a whole number is due is refused with a message (it used to exit 2 silently)
out=$("$ECO" place --nodes "$T/nodes.csv" --items "$T/items.csv" --algo pso --swarm 2.5 2>&1)
check bad-swarm $? 2 "$out" "--swarm: '2.5' is not a whole number in 1..10000"
# no "first failed item -1" when every item is placed
printf 'name,cpu_cores,memory_gib,gpus\nx,1,1,1\n' > "$T/one.csv"
out=$("$ECO" place --nodes "$T/nodes.csv" --items "$T/one.csv" --algo ffd 2>&1)
check all-placed $? 0 "$out" "placed 1, failed 0"
case "$out" in *"item -1"*) echo "FAIL all-placed: prints 'first failed item -1'"; fail=1 ;; esac
# a directory, NUL bytes and a repeated node name: file (and line), never zlib's "<fd:3>"
out=$("$ECO" place --nodes "$T" --items "$T/items.csv" --algo ffd 2>&1)
check dir $? 2 "$out" "$T: cannot read: Is a directory"
case "$out" in *"<fd:"*) echo "FAIL dir: message names <fd:N>: $out"; fail=1 ;; esac
printf 'name,cpu_cores,memory_gib,gpus,gpu_model\na,8,32,2,T4\000b,16,64,4,V100\n' > "$T/nul.csv"
out=$("$ECO" place --nodes "$T/nul.csv" --items "$T/items.csv" --algo ffd 2>&1)
check nul $? 2 "$out" "nul.csv:2: NUL byte at column 12"
printf 'name,cpu_cores,memory_gib,gpus,gpu_model\na,8,32,2,T4\na,16,64,4,V100\n' > "$T/dup.csv"
out=$("$ECO" place --nodes "$T/dup.csv" --items "$T/items.csv" --algo ffd 2>&1)
check dup-node $? 2 "$out" "dup.csv:3: column 'name': 'a' names a node a second time"
out=$("$ECO" place --help 2>&1)
check help $? 0 "$out" "--objective O"
check help-shuffle 0 0 "$out" "--shuffle"
# --shuffle: the same seed gives the same order, another seed another, the pods are the same
# multiset (the names column of assignment.csv is in item order)
sh_run() { # sh_run DIR ARGS...
    o="$1"; shift
    "$ECO" place --nodes "$D/openb_node_list_gpu_node.csv.gz" \
        --items "$D/openb_pod_list_default.csv.gz" --algo ffd --out "$T/$o" "$@" >/dev/null 2>&1
    cut -d, -f2 "$T/$o/assignment.csv" > "$T/$o.names"
}
sh_run plain; sh_run s1 --shuffle --seed 1; sh_run s1b --shuffle --seed 1
sh_run s2 --shuffle --seed 2
cmp -s "$T/s1.names" "$T/s1b.names" || { echo "FAIL shuffle: seed 1 twice differs"; fail=1; }
cmp -s "$T/s1.names" "$T/s2.names" && { echo "FAIL shuffle: seeds 1 and 2 agree"; fail=1; }
cmp -s "$T/s1.names" "$T/plain.names" && { echo "FAIL shuffle: order unchanged"; fail=1; }
sort "$T/s1.names" > "$T/s1.sorted"; sort "$T/plain.names" > "$T/plain.sorted"
cmp -s "$T/s1.sorted" "$T/plain.sorted" || { echo "FAIL shuffle: not the same pods"; fail=1; }
# online pso (--window): the hand case of tests/test_place.c test_pso_window_by_hand. n0 2 GPUs,
# n1 1 GPU; i0 1 GPU, i1 2 GPUs, then 40 pods of 64 cores that fit nowhere. fgd and a window
# of 1 put i0 on n0 and i1 fails (1 GPU placed); a window of 2 places both (3 GPUs).
{ echo "name,cpu_cores,memory_gib,gpus,gpu_model"; echo "n0,32,1024,2,T4"; echo "n1,32,1024,1,T4"; } \
    > "$T/win_nodes.csv"
{ echo "name,cpu_cores,memory_gib,gpus,gpu_model"; echo "i0,1,1,1,"; echo "i1,1,1,2,"
  k=0; while [ $k -lt 40 ]; do echo "big$k,64,1,1,"; k=$((k + 1)); done; } > "$T/win_items.csv"
win() { "$ECO" place --nodes "$T/win_nodes.csv" --items "$T/win_items.csv" --time-limit 0 "$@" 2>&1; }
out=$(win --algo fgd); check win-fgd $? 0 "$out" "GPUs requested 43.00, placed 1.00"
out=$(win --algo pso --window 1); check win-1 $? 0 "$out" "GPUs requested 43.00, placed 1.00"
out=$(win --algo pso --window 2); check win-2 $? 0 "$out" "GPUs requested 43.00, placed 3.00"
out=$(win --algo pso --window 2 --pso-off mutation,adaptive --json)
check win-off $? 0 "$out" '"gpus_placed": 3.000'
check win-cpu 0 0 "$out" '"solve_cpu_s": '
out=$(win --algo pso --pso-off swarm,local-search --json)
check swarm-off $? 0 "$out" '"iterations": 0'
out=$("$ECO" place --help 2>&1)
check help-window 0 0 "$out" "--window N"
check help-pso-off 0 0 "$out" "--pso-off LIST"
# bad values of the new flags: a clear message, exit 2
out=$(win --algo pso --window 0); check win-zero $? 2 "$out" "--window"
out=$(win --algo pso --window x); check win-nan $? 2 "$out" "--window"
out=$(win --algo ffd --window 4)
check win-algo $? 2 "$out" "place: --window: only pso and pso-basic place in windows, not 'ffd'"
out=$(win --algo pso --pso-off mutation,bogus)
check off-bad $? 2 "$out" "place: --pso-off: unknown operator 'bogus' (known: mutation, adaptive"
out=$(win --algo pso --pso-off "")
check off-empty $? 2 "$out" "place: --pso-off: unknown operator ''"
out=$(win --algo pso --pso-off seeding,swarm)
check off-both $? 2 "$out" "'seeding' and 'swarm' together leave nothing to run"
out=$(win --algo pso-basic --pso-off mutation)
check off-basic $? 2 "$out" "place: --pso-off: only pso has these operators, not 'pso-basic'"
# scripts/crosscheck_fgd.sh (never run here: it needs Go and the reference's checkout) skips
# with 77 and says why when the checkout is not one
out=$(bash "$SRC/scripts/crosscheck_fgd.sh" "$T" "$(dirname "$ECO")" 2>&1); st=$?
check crosscheck_skip "$st" 77 "$out" "is not a checkout of hkust-adsl/kubernetes-scheduler-simulator"
out=$(bash "$SRC/scripts/crosscheck_fgd.sh" 2>&1); st=$?
check crosscheck_usage "$st" 2 "$out" "usage:"
exit $fail
