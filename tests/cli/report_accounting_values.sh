#!/bin/sh
# SPDX-License-Identifier: MIT
# `ecosched report --accounting`: an empty job list (sacct --json with no job) gives the
# table's heading alone, and the AdminComment's figures are plain decimal numbers below a
# petajoule (docs/report.md): inf, nan, 1e999, hexadecimal and signed values are refused
# naming the job and the field.
set -u
ECO="$1"; SRC="$2"
T=$(mktemp -d /tmp/ecosched-racctv.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail=0; n=0
expect() { # expect STATUS NEEDLE ARGS...: exit STATUS, NEEDLE in the output
    want="$1"; needle="$2"; shift 2
    n=$((n + 1))
    out=$("$ECO" "$@" 2>&1 <"$T/in"); rc=$?
    if [ "$rc" -ne "$want" ]; then
        echo "FAIL: ecosched $* <$(cat "$T/in"): exit $rc, want $want: $out"; fail=$((fail + 1)); return
    fi
    case "$out" in
        *"$needle"*) ;;
        *) echo "FAIL: ecosched $*: output lacks '$needle': $out"; fail=$((fail + 1)) ;;
    esac
}
job() { # job COMMENT: a sacct --json file of one job with that AdminComment
    printf '{"jobs": [{"job_id": 1, "user": "u", "account": "a", "comment": {"administrator": "%s"}, "time": {"elapsed": 60}}]}\n' "$1" >"$T/in"
}
HEAD="KIND     NAME               JOBS       ENERGY_J"

# no job at all (qsort(NULL, 0) once: undefined, UBSan aborted)
echo '{"jobs": []}' >"$T/in"
expect 0 "$HEAD" report --accounting -
lines=$("$ECO" report --accounting - <"$T/in" | wc -l)
[ "$lines" -eq 1 ] || { echo "FAIL: empty list: $lines lines, want the heading alone"; fail=$((fail + 1)); }
echo '{"jobs": [], "next": null}' >"$T/in" # a saved empty page of ecoschedd's /v1/jobs
expect 0 "$HEAD" report --accounting -

# figures the plugin writes, and the largest accepted
job "ecosched gpu_energy_j=3600000.0 carbon_g=500.00 nodes=1 n1=3600000.0J,500.00g"
expect 0 "user     u                     1      3600000.0       1.0000" report --accounting -
job "ecosched gpu_energy_j=999999999999999.9 nodes=1 n1=999999999999999.9J"
expect 0 "user     u                     1 999999999999999.9" report --accounting -

# energies and carbon that are no count of joules or grams
for e in inf INF nan 1e999 0x1p10 -5.0 +5.0 1e15 1000000000000000.0 5.0e3 " 5.0" .5 5.; do
    job "ecosched gpu_energy_j=$e nodes=1 n1=5.0J"
    expect 2 "-: jobs[0].comment.administrator: 'ecosched gpu_energy_j=$e" report --accounting -
done
for g in inf nan 1e999 0x1p3 -1.00 1e15; do
    job "ecosched gpu_energy_j=5.0 carbon_g=$g nodes=1 n1=5.0J,1.00g"
    expect 2 "-: jobs[0].comment.administrator: carbon_g is not a number of grams" report --accounting -
done

echo "$(basename "$0" .sh): $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
