#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs one fuzz target as a ctest (fuzz/CMakeLists.txt): FUZZER CORPUS WORKDIR SECONDS. New
# inputs go to WORKDIR/corpus (the committed CORPUS is only read), a crashing input to
# WORKDIR/crash-*; the seed is fixed, so a run follows the same mutations. Fails (exit 1) on a
# crash, a leak, a timeout (-timeout, per input), a memory blow-up (-rss_limit_mb) or a broken
# check, and prints how to replay the input.
set -u
fuzzer="$1" corpus="$2" work="$3" seconds="$4"
rm -rf "$work"
mkdir -p "$work/corpus" || exit 1
"$fuzzer" -seed=1 -max_total_time="$seconds" -rss_limit_mb=1024 -timeout=5 \
    -print_final_stats=1 -artifact_prefix="$work/" "$work/corpus" "$corpus" >"$work/log" 2>&1
rc=$?
tail -40 "$work/log"
set -- "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*
for f in "$@"; do
    [ -e "$f" ] || continue
    echo "FAIL: $(basename "$fuzzer") found $f; replay: $fuzzer $f"
    rc=1
done
exit $rc
