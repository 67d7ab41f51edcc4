#!/bin/sh
# SPDX-License-Identifier: MIT
# `ecosched place --sweep`'s report.html in headless Chromium: no script and no external
# asset; after rendering, the four plots are there, each with one mean line and one band per
# algorithm, and the key-point table has a row per algorithm with the CSV's figures. Leaves a
# screenshot in BUILD/test-artifacts/place-sweep.png. Skips (77) without Chromium.
set -u
ECO="$1"; SRC="$2"
T=$(mktemp -d /tmp/ecosched-sweep-page.XXXXXX)
trap 'rm -rf "$T"' EXIT
. "$SRC/tests/chromium.shlib"
if [ -z "$CHROMIUM" ]; then
    echo "SKIP: chromium not found (the Debian package chromium, scripts/setup.sh)"
    exit 77
fi
fail=0
check() {
    what="$1"; shift
    if ! "$@"; then echo "FAIL: $what"; fail=$((fail + 1)); fi
}
D="$SRC/data/alibaba_gpu_v2023_openb"
"$ECO" place --sweep --nodes "$D/openb_node_list_all_node.csv.gz" \
    --items "$D/openb_pod_list_gpushare40.csv.gz" --algo random,gpu-packing,fgd --seeds 1-2 \
    --sweep-step 2 --out "$T/s" > "$T/stdout" 2>&1
check "place --sweep runs" [ $? -eq 0 ]
H="$T/s/report.html"
check "report.html has no script" sh -c "! grep -qi '<script' '$H'"
check "no external asset (src= or href= to another host)" \
    sh -c "! grep -Eiq '(src|href)=\"?(https?:)?//' '$H'"
chromium_dom "file://$H" "$T/dom.html" 1000
check "Chromium rendered the page" grep -q '<h1>Placement sweep' "$T/dom.html"
for id in unalloc unalloc-zoom failed frag; do
    # the plot's own markup, from its <svg> to its </svg>
    sed -n "/<svg id=\"$id\"/,/<\/svg>/p" "$T/dom.html" > "$T/$id.svg"
    check "plot $id is in the rendered page" [ -s "$T/$id.svg" ]
    for algo in random gpu-packing fgd; do
        m=$(grep -c "<polyline class=\"mean\" data-algo=\"$algo\"" "$T/$id.svg")
        b=$(grep -c "<polygon class=\"band\" data-algo=\"$algo\"" "$T/$id.svg")
        check "plot $id: one mean line and one band for $algo (got $m, $b)" [ "$m" = 1 ] && [ "$b" = 1 ]
    done
done
# the full-range plot's mean line has a point per grid step: 0, 2, ..., 130 % (66 points)
pts=$(grep -o '<polyline class="mean" data-algo="fgd"[^>]*points="[^"]*"' "$T/unalloc.svg" |
      sed 's/.*points="//; s/"$//' | wc -w)
check "unalloc: fgd's line has 66 points (got $pts)" [ "$pts" -eq 66 ]
# the table's 130 % cell of fgd is the CSV's mean at 130 %
csv=$(awk -F, '$1 == "fgd" && $2 == 130 { printf "%.2f", $4 }' "$T/s/curve.csv")
row=$(grep -o '<tr><td>fgd</td>.*</tr>' "$T/dom.html" | head -1)
case "$row" in *">$csv</td>"*) ok=1 ;; *) ok=0 ;; esac
check "table row of fgd holds the CSV's 130 % figure $csv" [ $ok -eq 1 ]
A=$(artefact_dir "$ECO")
chromium_shot "file://$H" "$A/place-sweep.png" 1100 1600 1000
check "screenshot taken" [ -s "$A/place-sweep.png" ]
[ $fail -eq 0 ] && echo "place --sweep report: all checks passed"
exit $fail
