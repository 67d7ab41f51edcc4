#!/bin/sh
# SPDX-License-Identifier: MIT
# Times and durations too large for a double (found by fuzz/fuzz_time.c): `submit --deadline`
# and `--max-delay` refuse them with the value named, before any daemon is asked (they were
# taken as infinity and dropped from the request without a word), and `sim --max-delay` too;
# and a relative deadline so small that it rounds to now is not a future time.
set -u
ECO="$1"; SRC="$2"
. "$SRC/tests/cli/expect.shlib"
export ECOSCHED_SOCKET=/nonexistent/ecosched-time-values.sock
for v in @1e400 @inf @16E779630000000 +1e306d 1e306h 1e308m +0.000000000002h 1e-300s; do
    expect 2 "--deadline: '$v' is not a future time" -- submit --deadline "$v" -- true
done
for v in 1e306d 1e308h 1e400; do
    expect 2 "--max-delay: '$v': " -- submit --max-delay "$v" -- true
done
expect 2 "'1e306d' is too long a duration" -- submit --max-delay 1e306d -- true
# in range, they reach the client's connection (no daemon here)
expect 1 "cannot reach ecoschedd" -- submit --deadline +30m -- true
expect 1 "cannot reach ecoschedd" -- submit --max-delay 31d -- true
expect 2 "'1e306d' is too long a duration" -- sim --trace "$SRC/tests/data/trace/itp.csv" \
    --cluster 1x8:V100 --carbon "$SRC/fuzz/corpus/grid_signal/eia_carbon.csv" \
    --carbon-policy shift --max-delay 1e306d -q
echo "time_values: $((n - fail)) of $n passed"
[ "$fail" -eq 0 ]
