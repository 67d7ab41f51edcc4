#!/bin/sh
# SPDX-License-Identifier: MIT
# `ecosched sim` on a site's Slurm history (docs/formats/traces.md, "sacct"): the exports of a
# real Slurm 22.05 (tests/data/trace_sacct/) as -P, -P with steps and --json, and the same jobs
# written in the canonical format, give the same jobs.csv; the cluster from that Slurm's own
# scontrol and sinfo listings; the trace's Submit times place a --carbon signal without
# --trace-start; easy:limits plans with the users' limits; bad input exits 2 naming file, line
# and column.
set -u
ECO="$1"
SRC="$2"
T=$(mktemp -d /tmp/ecosched-sacct.XXXXXX)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/expect.shlib"
D="$SRC/tests/data/trace_sacct"
MAP="a100=A100-SXM,tesla=V100"
CL="2x2:A100-SXM,2x2:V100"
# jobs.csv's columns of the run itself (the sacct fields come after them)
run() { # NAME TRACE ARGS...: the run's jobs.csv cut to its first 11 columns in $T/NAME.csv
    name="$1"; tr="$2"; shift 2
    n=$((n + 1))
    if ! "$ECO" sim -q --trace "$tr" --gpu-type-map "$MAP" --tz UTC --out "$T/$name" "$@" >/dev/null 2>"$T/$name.err"; then
        echo "FAIL: sim --trace $tr $*: $(head -3 "$T/$name.err")"; fail=$((fail + 1)); return
    fi
    cut -d, -f1-11 "$T/$name/jobs.csv" >"$T/$name.csv"
}
same() { # A B: the two runs' jobs are the same
    n=$((n + 1))
    cmp -s "$T/$1.csv" "$T/$2.csv" ||
        { echo "FAIL: $1 and $2 differ:"; diff "$T/$1.csv" "$T/$2.csv" | head -6; fail=$((fail + 1)); }
}
run x "$D/jobs-X.sacct" --cluster "$CL"
run steps "$D/jobs-steps.sacct" --cluster "$CL"
run json "$D/jobs.json" --cluster "$CL" --format sacct
same x steps
same x json
n=$((n + 1))
grep -q '^job_id,.*,user,account,partition,state$' "$T/x/jobs.csv" &&
    grep -q '^5,.*,root,proj-b,gpu,COMPLETED$' "$T/x/jobs.csv" &&
    grep -q '^8,.*,root,proj-b,gpu,FAILED$' "$T/x/jobs.csv" ||
    { echo "FAIL: jobs.csv lacks the sacct columns:"; head -3 "$T/x/jobs.csv"; fail=$((fail + 1)); }
# Elapsed as measured and scaled by the speed of the type it ran on: on V100 nodes (speed 1)
# the measured durations run as Elapsed, the scaled ones of a100 jobs longer
"$ECO" sim -q --trace "$D/jobs-X.sacct" --gpu-type-map "$MAP" --tz UTC --cluster 1x2:V100 --elapsed-as-measured --out "$T/meas" >/dev/null 2>&1
"$ECO" sim -q --trace "$D/jobs-X.sacct" --gpu-type-map "$MAP" --tz UTC --cluster 1x2:V100 --out "$T/scaled" >/dev/null 2>&1
n=$((n + 1))
m3=$(awk -F, '$1 == "3" { print $4 - $3 }' "$T/meas/jobs.csv")
s3=$(awk -F, '$1 == "3" { print $4 - $3 }' "$T/scaled/jobs.csv")
m2=$(awk -F, '$1 == "2" { print $4 - $3 }' "$T/meas/jobs.csv")
s2=$(awk -F, '$1 == "2" { print $4 - $3 }' "$T/scaled/jobs.csv")
[ "$m3" = 2 ] && [ "$m2" = 4 ] && [ "$s2" = 4 ] && awk "BEGIN { exit !(${s3:-0} > 2.5) }" ||
    { echo "FAIL: --elapsed-as-measured: job 3 $m3 / $s3 s, job 2 $m2 / $s2 s"; fail=$((fail + 1)); }
# the same jobs in the canonical format give the same run (durations as measured, so that
# the file can write them exactly; the scaling is test_trace_sacct's; gpu_type where the job
# asked for a type)
cat >"$T/canon_trace.csv" <<EOF
job_id,submit_s,duration_s,gpus,gpu_type,user
1,0,3,1,A100-SXM,root
2,0,4,2,V100,root
3,0,2,1,,root
4_0,0,2,1,,root
4_1,0,2,1,,root
4_2,0,2,1,,root
5,0,2,2,,root
8,0,1,2,A100-SXM,root
EOF
run canon "$T/canon_trace.csv" --cluster "$CL"
run measured "$D/jobs-X.sacct" --cluster "$CL" --elapsed-as-measured
run measured_json "$D/jobs.json" --cluster "$CL" --elapsed-as-measured
same canon measured
same canon measured_json
# the cluster from the same Slurm: scontrol and sinfo --json give the same run
run sc "$D/jobs.json" --cluster "$D/nodes.scontrol"
run si "$D/jobs.json" --cluster "$D/sinfo.json"
same sc si
expect 0 "warning: $D/nodes.scontrol: skipped 1 node without GPUs: n3" -- sim --trace "$D/jobs.json" --gpu-type-map "$MAP" --cluster "$D/nodes.scontrol"
expect 0 "in partitions gpu,all" -- sim --trace "$D/jobs.json" --gpu-type-map "$MAP" --cluster "$D/sinfo.json"
expect 0 "jobs.json: skipped 2 jobs: 1 pending or running, 0 that never ran, 1 CPU-only" -- sim --trace "$D/jobs.json" --gpu-type-map "$MAP" --cluster "$CL"
expect 2 "GPU type 'a100' is not in the catalog (map it: --gpu-type-map a100=TYPE" -- sim --trace "$D/jobs.json" --gpu-type-map tesla=V100 --cluster "$D/nodes.scontrol"
expect 2 "jobs-X.sacct:2: column 'AllocTRES': 'a100' is not a GPU type of the catalog" -- sim --trace "$D/jobs-X.sacct" --cluster "$CL"
# calendar time from Submit: a carbon signal of that day, no --trace-start and no note about it
cat >"$T/carbon.csv" <<EOF
time_utc,carbon_gco2eq_per_kwh
2026-12-04T00:00:00Z,100
2026-12-04T00:55:00Z,300
2026-12-04T02:00:00Z,300
EOF
n=$((n + 1))
out=$("$ECO" sim --trace "$D/jobs.json" --gpu-type-map "$MAP" --cluster "$CL" --carbon "$T/carbon.csv" --json 2>&1)
case "$out" in
    *"no --trace-start"*) echo "FAIL: --carbon with a sacct trace still asks for --trace-start"; fail=$((fail + 1)) ;;
esac
# all its energy at 300 g/kWh (the jobs ran after 00:55), none at the signal's 100
kg=$(echo "$out" | sed -n 's/.*"carbon_kg": *\([0-9.e+-]*\).*/\1/p' | head -1)
kwh=$(echo "$out" | sed -n 's/.*"energy_kwh": *\([0-9.e+-]*\).*/\1/p' | head -1)
n=$((n + 1))
awk "BEGIN { r = ($kg) / ($kwh); exit !(r > 0.299 && r < 0.301) }" 2>/dev/null ||
    { echo "FAIL: carbon $kg kg for $kwh kWh is not at 300 g/kWh (Submit's calendar time)"; fail=$((fail + 1)); }
# easy:limits: B (2 GPUs) waits for A; C (1 GPU, 50 s) backfills with true run times, not
# with its 2000 s limit, which ends after A's 1000 s limit
cat >"$T/easy.sacct" <<EOF
JobID|Submit|Start|End|ElapsedRaw|Timelimit|AllocTRES
1|2024-03-01T12:00:00|2024-03-01T12:00:00|2024-03-01T12:01:40|100|00:16:40|gres/gpu=1
2|2024-03-01T12:00:01|2024-03-01T12:01:40|2024-03-01T12:03:20|100|10|gres/gpu=2
3|2024-03-01T12:00:02|2024-03-01T12:03:20|2024-03-01T12:04:10|50|33:20|gres/gpu=1
EOF
run true "$T/easy.sacct" --cluster 1x2:V100 --policy easy
run lim "$T/easy.sacct" --cluster 1x2:V100 --policy easy:limits
n=$((n + 1))
c1=$(awk -F, '$1 == "3" { print $3 }' "$T/true.csv")
c2=$(awk -F, '$1 == "3" { print $3 }' "$T/lim.csv")
[ "$c1" = 2 ] && [ "$c2" = 200 ] ||
    { echo "FAIL: easy vs easy:limits: job 3 starts at $c1 and $c2, want 2 and 200"; fail=$((fail + 1)); }
expect 2 "easy: unknown parameter 'limit' (known: limits)" -- sim --trace "$T/easy.sacct" --cluster 1x2:V100 --policy easy:limit
# bad input: exit 2, file, line and column
printf 'JobID|Submit|ElapsedRaw|AllocTRES\n1|2024-03-01T12:00:00|x|gres/gpu=1\n' >"$T/bad.sacct"
expect 2 "bad.sacct:2: column 'ElapsedRaw': 'x' is not a whole number of seconds" -- sim --trace "$T/bad.sacct" --cluster 1x2
expect 2 "time zone 'Nowhere/City' is unknown" -- sim --trace "$T/easy.sacct" --cluster 1x2 --tz Nowhere/City
expect 2 "--gpu-type-map: part 'a100': expected SITE=TYPE" -- sim --trace "$T/easy.sacct" --cluster 1x2 --gpu-type-map a100
printf 'NodeName=a Gres=gpu:v100:x\n' >"$T/bad.nodes"
expect 2 "bad.nodes:1: node 'a': field 'Gres': 'gpu:v100:x' has a malformed entry" -- sim --trace "$T/easy.sacct" --cluster "$T/bad.nodes"
expect 0 "warning: --tz and --elapsed-as-measured matter only with a sacct trace" -- sim --trace "$T/canon_trace.csv" --cluster 1x2 --tz UTC
expect 0 "warning: --gpu-type-map matters only with a sacct trace or a Slurm node list" -- sim --trace "$T/canon_trace.csv" --cluster 1x2 --gpu-type-map a=V100
echo "sacct: $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
