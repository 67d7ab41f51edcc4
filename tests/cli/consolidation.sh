#!/bin/sh
# SPDX-License-Identifier: MIT
# `ecosched sim --consolidation`: bad thresholds and options exit 2 naming the field; identical
# runs give identical files; every policy runs, and the summaries hold together.
set -u
ECO="$1"; SRC="$2"
PODS="$SRC/data/alibaba_gpu_v2023_openb/openb_pod_list_default.csv.gz"
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
fail=0; n=0
expect() {
    want="$1"; needle="$2"; shift 3
    n=$((n + 1))
    out=$("$ECO" "$@" 2>&1); rc=$?
    if [ "$rc" -ne "$want" ]; then
        echo "FAIL: ecosched $*: exit $rc, want $want"; echo "$out" | head -5; fail=$((fail + 1)); return
    fi
    case "$out" in
        *"$needle"*) ;;
        *) echo "FAIL: ecosched $*: output lacks '$needle':"; echo "$out" | head -5; fail=$((fail + 1)) ;;
    esac
}
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
n=$((n + 1))
python3 - "$TMP/a" <<'PY' || fail=$((fail + 1))
import json, sys
d = sys.argv[1]
s = {p: json.load(open(f"{d}/{p}/summary.json")) for p in
     "none thr-mmt mad-mmt iqr-mmt lr-mmt dual-pabfd dgddep".split()}
ok = True
for p, v in s.items():
    e = v["energy_j"]
    parts = e["hosts_on"] + e["hosts_off"] + e["boot"] + e["migration"]
    if abs(parts - e["total"]) > 1e-6 * e["total"]:
        print(f"FAIL: {p}: energy parts {parts} != total {e['total']}"); ok = False
    if not 0 <= v["sla_violation"] <= 1:
        print(f"FAIL: {p}: sla_violation {v['sla_violation']}"); ok = False
if s["none"]["migrations"] != 0:
    print("FAIL: none migrated"); ok = False
if not s["dgddep"]["energy_kwh"] < s["none"]["energy_kwh"]:
    print("FAIL: dgddep used no less energy than none"); ok = False
sys.exit(0 if ok else 1)
PY
# A different seed gives different containers.
n=$((n + 1))
$ECO $S --consolidation dgddep --seed 4 --out "$TMP/c" >/dev/null 2>&1
if cmp -s "$TMP/a/dgddep/timeline.csv" "$TMP/c/timeline.csv"; then
    echo "FAIL: seeds 3 and 4 gave the same timeline"; fail=$((fail + 1))
fi
echo "$((n - fail))/$n consolidation CLI checks passed"
[ "$fail" -eq 0 ]
