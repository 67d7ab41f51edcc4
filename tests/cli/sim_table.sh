#!/bin/sh
# SPDX-License-Identifier: MIT
# The simulator's summary table as a new user reads it (issue 30): the cluster column in the
# inline spec's form for every kind of --cluster; "-" in the columns that do not apply (dl_miss
# without deadlines, the capping columns without a binding budget) and numbers where they do,
# while --json keeps numbers; the rejected jobs' listing that says how many more and where.
set -u
ECO="$1"; SRC="$2"
T="$SRC/data/itp/cluster02.csv.gz"
[ -r "$T" ] || { echo "SKIP: $T not found (the bundled traces are needed)"; exit 77; }
. "$(dirname "$0")/expect.shlib"
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
check() {
    what="$1"; shift
    n=$((n + 1))
    if ! "$@"; then echo "FAIL: $what"; fail=$((fail + 1)); fi
}
# col NAME: the column NAME of the table's first row (stdin)
col() { awk -v c="$1" 'NR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next } NR == 2 { print $k[c] }'; }
sim() { "$ECO" sim --trace "$T" --max-jobs 100 --policy easy --quiet "$@"; }

# the cluster column: one form, whatever gave the cluster
got=$(sim --cluster 30x8:V100,4x8:A100-SXM | col cluster)
check "inline spec: cluster '$got'" [ "$got" = 30x8:V100,4x8:A100-SXM ]
got=$(sim --cluster "$SRC/tests/data/cluster/hetero.json" 2>/dev/null | col cluster)
check "JSON file: cluster '$got'" [ "$got" = 2x8:V100,1x4:H100-SXM ]
got=$(sim --cluster auto | col cluster)
check "auto: cluster '$got' in the same form" sh -c "echo '$got' | grep -qE '^[0-9]+x8:V100$'"

# not applicable: "-"; applicable: a number
sim --cluster 20x8:V100,20x8:A40 >"$TMP/plain"
for c in dl_miss cap_mae% all_mae% cap_ovr%; do
    got=$(col "$c" <"$TMP/plain")
    check "uncapped, no deadlines: $c is '-' ('$got')" [ "$got" = - ]
done
cap="--cluster 20x8:V100,20x8:A40 --power-policy mpc --deadlines factor:1.5-3 --workload-mix default"
# shellcheck disable=SC2086
sim $cap --power-budget 60000 >"$TMP/loose"
got=$(col dl_miss <"$TMP/loose")
check "with deadlines: dl_miss is a number ('$got')" sh -c "echo '$got' | grep -qE '^[0-9]+\.[0-9]{3}$'"
for c in cap_mae% all_mae% cap_ovr%; do
    got=$(col "$c" <"$TMP/loose")
    check "a budget that never binds (60 kW over a 40 kW peak): $c is '-' ('$got')" [ "$got" = - ]
done
# shellcheck disable=SC2086
sim $cap --power-budget 36000 >"$TMP/tight"
for c in cap_mae% all_mae% cap_ovr%; do
    got=$(col "$c" <"$TMP/tight")
    check "a budget that binds (36 kW): $c is a number ('$got')" \
        sh -c "echo '$got' | grep -qE '^[0-9]+\.[0-9]{3}$'"
done
# shellcheck disable=SC2086
check "--json keeps numbers for a budget that never binds" \
    sh -c "'$ECO' sim --trace '$T' --max-jobs 100 --policy easy --quiet $cap --power-budget 60000 --json |
        grep -q '\"power_cap_mae_all_pct\": [0-9]'"
expect 0 '"-": the column does not apply' -- sim --help

# rejected jobs: the first five, then how many more, why, and where they all are
"$ECO" sim --trace "$T" --cluster "$SRC/tests/data/cluster/hetero.json" --policy easy \
    --out "$TMP/rej" >/dev/null 2>"$TMP/rej.err"
check "the warning counts 50 of 5778 rejected" grep -q "warning: 50 of 5778 job(s) rejected" "$TMP/rej.err"
check "five rejected jobs listed" [ "$(grep -c '^ecosched:   rejected: job ' "$TMP/rej.err")" -eq 5 ]
check "then '... and 45 more' with the reason and the file" grep -q \
    "\.\.\. and 45 more, up to 64 GPUs (45 larger than all GPUs of the cluster it may use; see $TMP/rej/rejected.csv)" \
    "$TMP/rej.err"
check "rejected.csv lists all 50" [ "$(($(wc -l <"$TMP/rej/rejected.csv") - 1))" -eq 50 ]
"$ECO" sim --trace "$T" --cluster "$SRC/tests/data/cluster/hetero.json" --policy easy \
    >/dev/null 2>"$TMP/rej2.err"
check "without --out: how to get them all" grep -q "and 45 more.*--out DIR lists them all" "$TMP/rej2.err"
echo "sim_table: $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
