#!/bin/sh
# SPDX-License-Identifier: MIT
# `ecosched sim --consolidation`: bad thresholds and options exit 2 naming the field; identical
# runs give identical files; every policy runs, and the summaries hold together.
set -u
ECO="$1"; SRC="$2"
PODS="$SRC/data/alibaba_gpu_v2023_openb/openb_pod_list_default.csv.gz"
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
. "$(dirname "$0")/expect.shlib"
S="sim --trace $PODS --cluster 20x8:V100 --containers 100 --hours 2"
expect 0 "--thresholds" -- sim --consolidation none --help
expect 0 "--consolidation P" -- sim --help
expect 2 "HI_UTIL = 1.2 is outside 0-1" -- $S --consolidation dgddep --thresholds 0.3,1.2,0.3,0.8
expect 2 "LO_MEM 0.9 must be below HI_MEM 0.8" -- $S --consolidation dgddep --thresholds 0.3,0.8,0.9,0.8
expect 2 "HI_MEM is missing" -- $S --consolidation dgddep --thresholds 0.3,0.8,0.3
expect 2 "unknown policy 'best'" -- $S --consolidation best
expect 2 "--containers: '0'" -- $S --consolidation none --containers 0
expect 2 "--period: 'x'" -- $S --consolidation none --period x
expect 2 "does not apply with --consolidation" -- $S --consolidation none --policy fifo
expect 2 "cluster too small" -- sim --trace "$PODS" --cluster 2x8 --containers 100 --consolidation none
expect 2 "no-such.csv" -- sim --trace "$SRC/no-such.csv" --cluster 2x8 --consolidation none
expect 2 "needs --trace PODS" -- sim --cluster 2x8 --consolidation none
expect 2 "--thr: '1.5'" -- $S --consolidation thr-mmt --thr 1.5
expect 2 "--mad-safety: '0'" -- $S --consolidation mad-mmt --mad-safety 0
expect 2 "--underload-horizon: '-5'" -- $S --consolidation dgddep --underload-horizon -5
expect 2 "--judge: 'philly' is not a pair set (lucid or gavel)" -- $S --consolidation dgddep --judge philly
expect 2 "--decide: '' is not a pair set" -- $S --consolidation dgddep --decide ''
expect 0 "charged_kwh" -- $S --consolidation dgddep --judge gavel --decide lucid
expect 2 "--coloc-gate: '1'" -- $S --consolidation thr-mmt --coloc-gate 1
expect 0 "charged_kwh" -- $S --consolidation thr-mmt,dual-ff --coloc-gate 0.05
expect 2 "--bound: '2'" -- $S --consolidation none --bound 2
expect 0 '"bound_kwh"' -- $S --consolidation none --bound 0.01 --judge gavel

ALL=none,thr-mmt,mad-mmt,iqr-mmt,lr-mmt,dual-pabfd,dgddep
for run in a b; do
    $ECO $S --consolidation $ALL --seed 3 --out "$TMP/$run" >/dev/null 2>"$TMP/err" || {
        echo "FAIL: run $run exited $?"; cat "$TMP/err"; exit 1; }
done
for p in none thr-mmt mad-mmt iqr-mmt lr-mmt dual-pabfd dgddep; do
    for f in summary.json timeline.csv; do
        n=$((n + 1))
        if ! cmp -s "$TMP/a/$p/$f" "$TMP/b/$p/$f"; then
            echo "FAIL: $p/$f differs between two identical runs"; fail=$((fail + 1))
        fi
    done
    # 2 h of 300 s periods: 24 timeline rows after the header.
    n=$((n + 1))
    rows=$(($(wc -l < "$TMP/a/$p/timeline.csv") - 1))
    [ "$rows" -eq 24 ] || { echo "FAIL: $p: $rows timeline rows, want 24"; fail=$((fail + 1)); }
done
# The energy parts add up, none never migrates, and consolidation saves energy over none.
# field FILE NAME: the number after "NAME": in a summary.json.
field() { tr ',{}' '\n\n\n' < "$1" | sed -n "s/^ *\"$2\": *//p" | head -1; }
lost_col() { sed -n 's/.*"colocation": \([-0-9.e+]*\).*/\1/p' "$1"; }
for p in none thr-mmt mad-mmt iqr-mmt lr-mmt dual-pabfd dgddep; do
    f="$TMP/a/$p/summary.json"
    n=$((n + 1))
    ok=$(awk -v t="$(field "$f" total)" -v a="$(field "$f" hosts_on)" -v b="$(field "$f" hosts_off)" \
        -v c="$(field "$f" boot)" -v d="$(field "$f" migration)" -v s="$(field "$f" sla_violation)" \
        'BEGIN { x = a + b + c + d - t; if (x < 0) x = -x;
                 print (t > 0 && x <= 1e-6 * t && s >= 0 && s <= 1) ? 1 : 0 }')
    [ "$ok" = 1 ] || { echo "FAIL: $p: energy parts do not add up or SLA out of 0-1"; cat "$f"; fail=$((fail + 1)); }
done
n=$((n + 1))
[ "$(field "$TMP/a/none/summary.json" migrations)" = 0 ] || { echo "FAIL: none migrated"; fail=$((fail + 1)); }
n=$((n + 1))
less=$(awk -v a="$(field "$TMP/a/dgddep/summary.json" energy_kwh)" \
    -v b="$(field "$TMP/a/none/summary.json" energy_kwh)" 'BEGIN { print (a > 0 && a < b) ? 1 : 0 }')
[ "$less" = 1 ] || { echo "FAIL: dgddep used no less energy than none"; fail=$((fail + 1)); }
# The default pairs are Lucid's for both judge and decider: the same files, byte for byte; Gavel's
# as judge change the co-location loss. The lost work is charged: charged energy >= energy.
$ECO $S --consolidation dgddep --seed 3 --judge lucid --decide lucid --out "$TMP/jl" >/dev/null 2>&1
$ECO $S --consolidation dgddep --seed 3 --judge gavel --out "$TMP/jg" >/dev/null 2>&1
n=$((n + 1))
cmp -s "$TMP/a/dgddep/summary.json" "$TMP/jl/summary.json" ||
    { echo "FAIL: --judge lucid --decide lucid differs from the default"; fail=$((fail + 1)); }
n=$((n + 1))
[ "$(lost_col "$TMP/jg/summary.json")" != "$(lost_col "$TMP/jl/summary.json")" ] ||
    { echo "FAIL: --judge gavel left the co-location loss unchanged"; fail=$((fail + 1)); }
for p in thr-mmt dgddep; do
    f="$TMP/a/$p/summary.json"
    n=$((n + 1))
    ok=$(awk -v e="$(field "$f" energy_kwh)" -v c="$(field "$f" energy_charged_kwh)" \
        -v l="$(field "$f" lost_work_share)" 'BEGIN { print (c >= e && l > 0 && c - e * (1 / (1 - l)) < 1e-6 * c && e * (1 / (1 - l)) - c < 1e-6 * c) ? 1 : 0 }')
    [ "$ok" = 1 ] || { echo "FAIL: $p: charged energy is not energy / (1 - lost work)"; fail=$((fail + 1)); }
done
# A different seed gives different containers.
n=$((n + 1))
$ECO $S --consolidation dgddep --seed 4 --out "$TMP/c" >/dev/null 2>&1
if cmp -s "$TMP/a/dgddep/timeline.csv" "$TMP/c/timeline.csv"; then
    echo "FAIL: seeds 3 and 4 gave the same timeline"; fail=$((fail + 1))
fi
echo "$((n - fail))/$n consolidation CLI checks passed"
[ "$fail" -eq 0 ]
