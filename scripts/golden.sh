#!/bin/sh
# SPDX-License-Identifier: MIT
# Golden outputs: a handful of simulator scenarios whose files are committed under
# tests/data/golden/NAME/ and compared byte for byte (ctest cli_golden runs the check).
#   sh scripts/golden.sh ECOSCHED [SRC]            compare (exit 1 naming each file that differs)
#   sh scripts/golden.sh --update ECOSCHED [SRC]   rewrite the committed files on purpose
# A change that moves a number in these files changes the simulator's output: update them only
# when that is the intent, and say why in the commit.
set -u
update=0
if [ "${1:-}" = "--update" ]; then update=1; shift; fi
if [ $# -lt 1 ]; then
    echo "usage: sh scripts/golden.sh [--update] ECOSCHED [SRC]" >&2; exit 2
fi
ECO="$1"; SRC="${2:-$(cd "$(dirname "$0")/.." && pwd)}"
case "$ECO" in /*) ;; */*) ECO="$PWD/$ECO" ;; esac
GOLD="$SRC/tests/data/golden"
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT

# NAME|FILES|ARGS (ARGS after `ecosched`, --out and --quiet are added). Each runs well under 2 s.
# Paths in ARGS are relative to SRC (the command runs there) so that no absolute path can leak
# into an output file.
SCENARIOS="replay|summary.json jobs.csv|sim --trace data/itp/cluster02.csv.gz --cluster 4x8 --max-jobs 300 --policy easy --seed 1
las-spread|summary.json jobs.csv|sim --trace data/itp/cluster02.csv.gz --cluster 4x8 --max-jobs 300 --policy las --placement spread --seed 5
powerdown|summary.json jobs.csv|sim --trace data/itp/cluster02.csv.gz --cluster 6x8:V100,2x8:A100-SXM --max-jobs 300 --policy sjf --placement energy --power-down idle:600 --seed 2
capped-mpc|summary.json jobs.csv|sim --trace data/itp/cluster02.csv.gz --cluster 4x8 --max-jobs 200 --power-policy mpc --power-budget 6000 --control-period 30 --seed 3
consolidation|summary.json timeline.csv|sim --consolidation dgddep --trace data/alibaba_gpu_v2023_openb/openb_pod_list_default.csv.gz --cluster 20x8:V100 --containers 100 --hours 2 --seed 4"

for f in data/itp/cluster02.csv.gz data/alibaba_gpu_v2023_openb/openb_pod_list_default.csv.gz; do
    [ -r "$SRC/$f" ] || { echo "SKIP: $f not found (the bundled traces are needed)"; exit 77; }
done
n=0; fail=0
while IFS='|' read -r name files args; do
    [ -n "$name" ] || continue
    # shellcheck disable=SC2086 # ARGS is a word list on purpose
    if ! (cd "$SRC" && "$ECO" $args --out "$TMP/$name" --quiet >/dev/null); then
        echo "FAIL: $name: ecosched exited non-zero: $ECO $args"; fail=$((fail + 1)); continue
    fi
    for f in $files; do
        n=$((n + 1))
        if [ "$update" = 1 ]; then
            mkdir -p "$GOLD/$name" && cp "$TMP/$name/$f" "$GOLD/$name/$f" ||
                { echo "FAIL: cannot write $GOLD/$name/$f"; fail=$((fail + 1)); }
        elif [ ! -f "$GOLD/$name/$f" ]; then
            echo "FAIL: $name/$f: no golden file (sh scripts/golden.sh --update ECOSCHED)"
            fail=$((fail + 1))
        elif ! cmp -s "$GOLD/$name/$f" "$TMP/$name/$f"; then
            echo "FAIL: $name/$f differs from tests/data/golden/$name/$f:"
            diff "$GOLD/$name/$f" "$TMP/$name/$f" | head -10
            fail=$((fail + 1))
        fi
    done
done <<EOF
$SCENARIOS
EOF
if [ "$update" = 1 ]; then
    echo "golden: $((n - fail)) files written under tests/data/golden/, $fail failed"
else
    echo "golden: $((n - fail)) files identical, $fail differ"
fi
[ "$fail" -eq 0 ]
