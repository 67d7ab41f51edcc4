#!/bin/sh
# SPDX-License-Identifier: MIT
# `sim --report` without --out writes the run's files into a temporary directory under
# $TMPDIR: SIGINT, SIGTERM or SIGHUP during the run must remove it, and the run must still end
# by that signal (exit status 128 + its number), not by a normal exit.
set -u
ECO="$1"; SRC="$2"
T=$(mktemp -d /tmp/ecosched-simsig.XXXXXX)
trap 'rm -rf "$T"' EXIT
# itp cluster04 at one sample a second: several seconds of run (more with sanitizers) between
# the temporary directory's creation and the report, 20-30 MB of files in it
TRACE="$SRC/data/itp/cluster04.csv.gz"
fail=0; n=0
for sig in INT:2 TERM:15 HUP:1; do
    num=${sig#*:}; sig=${sig%:*}
    n=$((n + 1))
    mkdir "$T/tmp-$sig"
    # a background job of a script ignores SIGINT unless told otherwise
    TMPDIR="$T/tmp-$sig" env --default-signal=INT,TERM,HUP "$ECO" sim --trace "$TRACE" \
        --cluster auto --sample-s 1 --report "$T/r-$sig.html" -q >"$T/out-$sig" 2>&1 &
    pid=$!
    i=0 # the directory and a file in it (the run under way), within 120 s
    while [ $i -lt 1200 ] && [ -z "$(ls -A "$T/tmp-$sig"/*/ 2>/dev/null)" ]; do
        sleep 0.1; i=$((i + 1))
    done
    kill -s "$sig" "$pid"
    wait "$pid"; rc=$?
    want=$((128 + num))
    left=$(ls -A "$T/tmp-$sig")
    if [ "$rc" -ne "$want" ]; then
        echo "FAIL: SIG$sig: exit $rc, want $want: $(head -3 "$T/out-$sig")"; fail=$((fail + 1))
    elif [ -n "$left" ]; then
        echo "FAIL: SIG$sig: the temporary directory is left: $left ($(du -sh "$T/tmp-$sig" | cut -f1))"
        fail=$((fail + 1))
    elif [ -e "$T/r-$sig.html" ]; then
        echo "FAIL: SIG$sig: a report was written"; fail=$((fail + 1))
    fi
done
# a run that is not interrupted removes it too, and writes its report
n=$((n + 1))
mkdir "$T/tmp-none"
TMPDIR="$T/tmp-none" "$ECO" sim --trace "$SRC/data/itp/cluster10.csv.gz" --cluster auto \
    --report "$T/r.html" -q >"$T/out-none" 2>&1; rc=$?
if [ "$rc" -ne 0 ] || [ -n "$(ls -A "$T/tmp-none")" ] || [ ! -s "$T/r.html" ]; then
    echo "FAIL: uninterrupted run: exit $rc, left: $(ls -A "$T/tmp-none"): $(head -3 "$T/out-none")"
    fail=$((fail + 1))
fi
echo "$(basename "$0" .sh): $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
