#!/bin/sh
# SPDX-License-Identifier: MIT
# Bad input to `ecosched sim` refused with file, line and column (or the flag), exit 2; output
# failures named with path and reason, exit 1; and what a new user trips over (issue 15).
set -u
ECO="$1"; SRC="$2"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/expect.shlib"
# refuse NEEDLE -- ARGS...: like expect, and the output must not hold NEEDLE.
refuse() {
    needle="$1"; shift 2
    n=$((n + 1))
    out=$("$ECO" "$@" 2>&1)
    case "$out" in *"$needle"*) echo "FAIL: ecosched $*: output has '$needle'"; fail=$((fail + 1)) ;; esac
}
H=job_id,submit_s,duration_s,gpus
good() { printf '%s\na,0,100,1\nb,10,100,2\nc,20,50,1\n' "$H"; }

# point 14: values outside the documented ranges (docs/formats/traces.md), one file each
while IFS='|' read -r name row want; do
    printf '%s,gpu_mem_gb,deadline_s\na,0,100,1,,\n%s\n' "$H" "$row" > "$T/$name.csv"
    expect 2 "$name.csv:3: column '$want" -- sim --trace "$T/$name.csv" --cluster 1x8
done <<'CASES'
dur308|b,0,1e308,1,,|duration_s': '1e308' is outside 0..1e9 s
durbig|b,0,2e9,1,,|duration_s': '2e9' is outside 0..1e9 s
sub263|b,9223372036854775808,3600,1,,|submit_s': '9223372036854775808' is outside 0..1e10 s
gpus|b,0,10,4000000,,|gpus': '4000000' is outside 1..1048576 GPUs
mem|b,0,10,1,1e9,|gpu_mem_gb': '1e9' is outside 0..1e4 GB
deadline|b,0,10,1,,1e300|deadline_s': '1e300' is outside 0..1e10 s
CASES
# ... and the output writers say which file failed and why, exit 1
good > "$T/good.csv"
mkdir "$T/full"; ln -s /dev/full "$T/full/jobs.csv"
if [ -w /dev/full ]; then
    expect 1 "cannot write $T/full/jobs.csv: No space left on device" -- sim --trace "$T/good.csv" --cluster 1x8 --out "$T/full"
    mkdir "$T/full2"; ln -s /dev/full "$T/full2/timeline.csv"
    expect 1 "cannot write $T/full2/timeline.csv: No space left on device" -- sim --trace "$T/good.csv" --cluster 1x8 --out "$T/full2"
    n=$((n + 1))
    out=$("$ECO" sim --trace "$T/good.csv" --cluster 1x8 --json 2>&1 >/dev/full); rc=$?
    case "$rc:$out" in 1:*"standard output: No space left on device"*) ;;
        *) echo "FAIL: --json >/dev/full: exit $rc: $out"; fail=$((fail + 1)) ;; esac
else
    echo "note: /dev/full is not writable here; its three checks skipped"
fi
expect 1 "cannot create output directory $T/good.csv/out" -- sim --trace "$T/good.csv" --cluster 1x8 --out "$T/good.csv/out"

# point 15: NUL bytes stop the load with file, line and column (they used to merge rows)
printf '%s\nj1\000,0,10,1\nj2,0,10,1\n' "$H" > "$T/nul.csv"
expect 2 "nul.csv:2: NUL byte at column 3" -- sim --trace "$T/nul.csv" --cluster 1x8
printf '%s\nj1,0,10,1\nj2,0,10,1\n' "$H" | gzip -c > "$T/nul.csv.gz"
printf 'job_id,sub\000mit_s,duration_s,gpus\nj1,0,10,1\n' | gzip -c > "$T/nulh.csv.gz"
expect 2 "nulh.csv.gz:1: NUL byte at column 11" -- sim --trace "$T/nulh.csv.gz" --cluster 1x8
printf 'time_s,watts\n0,3000\000\n3600,2000\n' > "$T/budget_nul.csv"
expect 2 "budget_nul.csv:2: NUL byte at column 7" -- sim --trace "$T/good.csv" --cluster 1x8 --power-budget-file "$T/budget_nul.csv"
printf 'time_s,watts\n0,1e300\n' > "$T/budget_big.csv"
expect 2 "budget_big.csv:2: column 'watts': '1e300' is outside 0..1e15 W" -- sim --trace "$T/good.csv" --cluster 1x8 --power-budget-file "$T/budget_big.csv"
printf 'time_s,watts\n1e300,1000\n' > "$T/budget_late.csv"
expect 2 "budget_late.csv:2: column 'time_s': '1e300' is not a number in 0..1e10 s" -- sim --trace "$T/good.csv" --cluster 1x8 --power-budget-file "$T/budget_late.csv"

# point 16: period flags bounded, also against the trace's span; empty traces, repeated ids
expect 2 "--sample-s: '1e-9' is below the minimum 1 s" -- sim --trace "$T/good.csv" --cluster 1x8 --sample-s 1e-9
expect 2 "--control-period: '1e-9' is below the minimum 0.1 s" -- sim --trace "$T/good.csv" --cluster 1x8 --power-budget 3000 --control-period 1e-9
printf '%s\na,0,100,1\nb,1e9,100,1\n' "$H" > "$T/long.csv"
expect 2 "give --sample-s 1001 or more" -- sim --trace "$T/long.csv" --cluster 1x8 --out "$T/o_long" --sample-s 60
expect 2 "give --control-period 11 or more" -- sim --trace "$T/long.csv" --cluster 1x8 --power-budget 3000
expect 2 "at most 10000000 with --control-skip off: give --control-period 101 or more" -- sim --trace "$T/long.csv" --cluster 1x8 --power-budget 3000 --control-skip off
printf '%s\n' "$H" > "$T/empty.csv"
expect 2 "empty.csv: holds no job (a header line and no rows)" -- sim --trace "$T/empty.csv" --cluster 1x8
printf '%s\na,0,10,1\nb,0,10,1\na,5,10,1\n' "$H" > "$T/dup.csv"
expect 2 "dup.csv:4: column 'job_id': 'a' repeats the job id of line 2" -- sim --trace "$T/dup.csv" --cluster 1x8
expect 0 '"skipped_rows": 1' -- sim --trace "$T/dup.csv" --cluster 1x8 --skip-bad-rows --json
expect 2 "--max-jobs: 0 would read no job" -- sim --trace "$T/good.csv" --cluster 1x8 --max-jobs 0

# point 18
expect 0 "report: $T/r.html" -- sim --trace "$T/good.csv" --cluster 1x8 --report "$T/r.html"
n=$((n + 1)); [ -s "$T/r.html" ] || { echo "FAIL: --report without --out wrote no report"; fail=$((fail + 1)); }
expect 0 "using mpc, the default" -- sim --trace "$T/good.csv" --cluster 1x8 --power-budget 3000
expect 0 "  edf           earliest deadline first" -- sim --help
expect 2 "(known: fifo, greedy, easy, sjf, las, edf, lsf)" -- sim --trace "$T/good.csv" --cluster 1x8 --policy rr
expect 2 "(known: fifo, greedy, easy, sjf, las, edf, lsf)" -- sim --trace "$T/good.csv" --cluster 1x8 --compare fifo,rr
printf '%s,gpu_type\na,0,100,1,A100-SXM\nb,0,100,1,\n' "$H" > "$T/typed.csv"
expect 0 "job a (line 2, 1 GPUs A100-SXM): needs a GPU type the cluster has none of" -- sim --trace "$T/typed.csv" --cluster 1x8:V100
refuse "larger than all GPUs" -- sim --trace "$T/typed.csv" --cluster 1x8:V100
expect 2 "--cluster: $T: is a directory" -- sim --trace "$T/good.csv" --cluster "$T"
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\np0,1000,1024,1,1000,,LS,Running,0,100,0\np1,1000,1024,0,0,,LS,Running,0,100,0\np2,1000,1024,1,1000,,LS,Pending,0,,\n' > "$T/openb.csv"
expect 0 "skipped 1 CPU-only and 1 pending pods" -- sim --trace "$T/openb.csv" --cluster 1x8
# --cluster auto's choice in the table, and the table aligned with long names
n=$((n + 1))
out=$("$ECO" sim --trace "$T/good.csv" --cluster auto -q --compare fifo,greedy --placement dot-product --power-down idle:86400 2>&1)
hdr=$(echo "$out" | head -1)
case "$hdr" in *" cluster "*) ;; *) echo "FAIL: no cluster column: $hdr"; fail=$((fail + 1)) ;; esac
case "$out" in *"1x8:V100"*) ;; *) echo "FAIL: --cluster auto size not in the table: $out"; fail=$((fail + 1)) ;; esac
# every row's "jobs" field ends in the column where the header's does
want=$(echo "$hdr" | awk '{ print index($0, " jobs") + 4 }')
echo "$out" | tail -n +2 | while read -r line; do
    got=$(echo "$line" | awk '{ p = index($0, $5); print p + length($5) - 1 }')
    [ "$got" = "$want" ] || { echo "FAIL: misaligned row (jobs ends at $got, header at $want): $line"; exit 1; }
done || fail=$((fail + 1))

echo "input: $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
