#!/bin/sh
# SPDX-License-Identifier: MIT
# `ecosched report` and `sim --report`: the HTML report of --compare and single runs, byte for
# byte deterministic; bad or missing files are refused with file, line and field; in headless
# Chromium every plot is drawn inside its box, the table has a row per summary figure, and the
# points and lines read back from the screen are the runs' summary figures. Leaves a
# screenshot in BUILD/test-artifacts/report.png.
set -u
ECO="$1"; SRC="$2"
T=$(mktemp -d /tmp/ecosched-report.XXXXXX)
trap 'rm -rf "$T"' EXIT
. "$SRC/tests/chromium.shlib"
TRACE="$SRC/data/itp/cluster10.csv.gz"
fail=0; n=0
check() {
    what="$1"; shift
    n=$((n + 1))
    if ! "$@"; then echo "FAIL: $what"; fail=$((fail + 1)); fi
}
# expect STATUS NEEDLE ARGS...: ecosched's exit status and message
expect() {
    want="$1"; needle="$2"; shift 2
    n=$((n + 1))
    out=$("$ECO" "$@" 2>&1); rc=$?
    if [ "$rc" -ne "$want" ]; then
        echo "FAIL: ecosched $*: exit $rc, want $want: $out"; fail=$((fail + 1)); return
    fi
    case "$out" in
        *"$needle"*) ;;
        *) echo "FAIL: ecosched $*: output lacks '$needle': $out"; fail=$((fail + 1)) ;;
    esac
}
# close A B: |A - B| <= 1% of |B| (and 1e-9)
close() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b; exit !(a != "" && d <= 0.01 * m + 1e-9) }'; }
# runs_in FILE ELEMENT: the data-run names of ELEMENT ("g class=\"point\"") in order, by commas
runs_in() { grep -o "<$2 data-run=\"[^\"]*\"" "$1" | sed 's/.*data-run="//; s/"$//' | tr '\n' ,; }
# sfield FILE KEY: a top-level number of summary.json
sfield() { sed -n "s/^  \"$2\": \\([-0-9.e+]*\\),\$/\\1/p" "$1"; }

SIM="sim --trace $TRACE --cluster 4x8 --max-jobs 400 -q"
# shellcheck disable=SC2086
"$ECO" $SIM --compare fifo,sjf,las --out "$T/cmp" >/dev/null
# shellcheck disable=SC2086
"$ECO" $SIM --power-policy uniform --power-budget 6000 --control-period 60 --out "$T/cap" \
    --report "$T/cap.html" >/dev/null
check "sim --report writes the report" test -s "$T/cap.html"

expect 0 "report: $T/cmp/report.html" report "$T/cmp"
check "report of a --compare directory written" test -s "$T/cmp/report.html"
cp "$T/cmp/report.html" "$T/first.html"
"$ECO" report "$T/cmp" >/dev/null
check "same files, same bytes" cmp -s "$T/first.html" "$T/cmp/report.html"
expect 0 "report: $T/two.html" report -o "$T/two.html" --title 'Budget & queues' "$T/cmp" "$T/cap"
check "several directories: 4 runs" [ "$(grep -c '<g class="point"' "$T/two.html")" -eq 4 ]
check "title escaped" grep -q '<h1>Budget &amp; queues</h1>' "$T/two.html"
check "several directories: names without the shared directories" \
    sh -c "grep -o '<g class=\"point\" data-run=\"[^\"]*\"' '$T/two.html' | cut -d'\"' -f4 | tr '\n' , | grep -qx 'cmp/fifo,cmp/sjf,cmp/las,cap,'"
# shellcheck disable=SC2086
"$ECO" $SIM --compare las,fifo --out "$T/ord" --report "$T/ord.html" >/dev/null
check "sim --report keeps the --compare order" \
    sh -c "grep -o '<g class=\"point\" data-run=\"[a-z]*\"' '$T/ord.html' | cut -d'\"' -f4 | tr '\n' , | grep -qx 'las,fifo,'"
check "sim --compare --out writes the order (compare.txt: $(tr '\n' , < "$T/ord/compare.txt"))" \
    [ "$(tr '\n' , < "$T/ord/compare.txt")" = "las,fifo," ]
"$ECO" report -o "$T/ord2.html" "$T/ord" >/dev/null
check "report DIR keeps the --compare order: points ($(runs_in "$T/ord2.html" 'g class="point"'))" \
    [ "$(runs_in "$T/ord2.html" 'g class="point"')" = "las,fifo," ]
check "... headline rows ($(runs_in "$T/ord2.html" tr))" [ "$(runs_in "$T/ord2.html" tr)" = "las,fifo," ]
check "... over-time lines ($(runs_in "$T/ord2.html" 'g class="run"'))" \
    [ "$(runs_in "$T/ord2.html" 'g class="run"')" = "las,fifo,las,fifo,las,fifo,las,fifo," ]
check "the headline table comes first" sh -c \
    "grep -o '<section id=\"[a-z]*\"' '$T/ord2.html' | head -1 | grep -q headline"
check "the table of every figure starts with the headline figures" sh -c \
    "grep -o '<tr data-key=\"[a-z_.0-9]*\"' '$T/ord2.html' | head -3 | cut -d'\"' -f2 | tr '\n' , | grep -qx 'avg_jct_s,p95_jct_s,avg_wait_s,'"
# one unit per figure: every run's avg_jct_s in the row's one unit, the unit cell says which
check "a figure's values share one unit" sh -c \
    "grep '<tr data-key=\"avg_jct_s\">' '$T/ord2.html' | grep -Eq '<td class=\"u\">(s|min|h|d)</td>(<td data-v=\"[0-9.e+]*\" title=\"[0-9.e+]*\"( class=\"best\")?>[0-9.]*</td>){2}</tr>'"
check "no script in the report" sh -c "! grep -qi '<script' '$T/cmp/report.html'"
check "no external asset" sh -c "! grep -Eiq '(src|href)=\"?(https?:)?//' '$T/cmp/report.html'"

# bad input: clear errors, exit 2, no report left behind
mkdir -p "$T/bad"
expect 2 "$T/nope" report "$T/nope"
expect 2 "no summary.json" report "$T/bad"
expect 0 "fifo" $SIM --report "$T/x.html"
check "--report without --out writes the report" test -s "$T/x.html"
mkdir -p "$T/tmpdir"
out=$(TMPDIR="$T/tmpdir" "$ECO" $SIM --compare las,fifo --report "$T/x2.html" 2>&1 >/dev/null)
check "--compare --report without --out: the report, in --compare order" \
    [ "$(runs_in "$T/x2.html" 'g class="point"')" = "las,fifo," ]
check "... and the temporary directory removed without a warning ($out)" \
    sh -c "[ -z \"\$(ls -A '$T/tmpdir')\" ] && ! printf '%s' '$out' | grep -q warning"
expect 2 "-o FILE.html" report "$T/cmp" "$T/cap"
expect 2 "unknown option '--bogus'" report --bogus "$T/cmp"
expect 0 "usage: ecosched report" report --help
cp -r "$T/cap" "$T/b1"; printf '{"policy": "fifo",\n  "avg_jct_s": x}\n' > "$T/b1/summary.json"
expect 2 "$T/b1/summary.json: line 2:" report "$T/b1"
cp -r "$T/cap" "$T/b2"; grep -v avg_jct_s "$T/cap/summary.json" > "$T/b2/summary.json"
expect 2 "$T/b2/summary.json: field 'avg_jct_s' is missing" report "$T/b2"
cp -r "$T/cap" "$T/b3"; awk -F, 'NR == 3 { $2 = "lots" } 1' OFS=, "$T/cap/timeline.csv" > "$T/b3/timeline.csv"
expect 2 "$T/b3/timeline.csv: line 3: field 'power_w': 'lots'" report "$T/b3"
cp -r "$T/cap" "$T/b4"; sed '1s/jct_s/jct/' "$T/cap/jobs.csv" > "$T/b4/jobs.csv"
expect 2 "$T/b4/jobs.csv: line 1: no column 'jct_s'" report "$T/b4"
cp -r "$T/cap" "$T/b5"; rm "$T/b5/timeline.csv"
expect 2 "$T/b5/timeline.csv: No such file" report "$T/b5"
check "no report left after errors" sh -c "! ls '$T'/b*/report.html* >/dev/null 2>&1"

# in the browser
chromium_require
for r in cmp/report cap; do
    sed 's#</body></html>##' "$T/$r.html" > "$T/check.html"
    { echo '<script>'; cat "$SRC/tests/browser/report-check.js"; echo '</script></body></html>'; } >> "$T/check.html"
    chromium_dom "file://$T/check.html" "$T/dom.txt" 1000
    sed -n '/<pre id="check">/,/<\/pre>/p' "$T/dom.txt" | grep = > "$T/vals"
    v() { sed -n "s/^$1=//p" "$T/vals"; }
    check "$r: the checker ran" [ -s "$T/vals" ]
    check "$r: every plot drawn with a size ($(v svg_bad) not)" [ "$(v svg_bad)" = 0 ]
    check "$r: no text outside its plot ($(v text_outside))" [ "$(v text_outside)" = 0 ]
    check "$r: no overlapping tick labels ($(v tick_overlap))" [ "$(v tick_overlap)" = 0 ]
    [ $r = cap ] || check "$r: no point label overlaps ($(v label_overlap))" [ "$(v label_overlap)" = 0 ]
    check "$r: one over-time figure per measure ($(v timelines))" [ "$(v timelines)" = 4 ]
    nr=$( [ $r = cap ] && echo 1 || echo 3)
    check "$r: one line per run in each ($(v timeline_lines))" [ "$(v timeline_lines)" = "$nr,$nr,$nr,$nr" ]
    for run in $( [ $r = cap ] && echo . || echo fifo sjf las ); do
        s="$T/${r%/report}/$run/summary.json"
        label=$( [ $r = cap ] && echo fifo || echo $run)
        keys=$(grep -cE '^ *"[a-z_0-9]+": [^{]' "$s")
        check "$r: a table row per summary figure ($(v rows) vs $keys)" [ "$(v rows)" = "$keys" ]
        check "$r/$label: peak power drawn $(v "peak.$label") W = peak_power_w $(sfield "$s" peak_power_w)" \
            close "$(v "peak.$label")" "$(sfield "$s" peak_power_w)"
        [ $r = cap ] && continue
        check "$r/$label: point at the average JCT ($(v "point.$label.jct_s") vs $(sfield "$s" avg_jct_s))" \
            close "$(v "point.$label.jct_s")" "$(sfield "$s" avg_jct_s)"
        e=$(sed -n 's/^    "total": \([-0-9.e+]*\),$/\1/p' "$s")
        check "$r/$label: point at the energy ($(v "point.$label.energy_j") vs $e)" \
            close "$(v "point.$label.energy_j")" "$e"
        check "$r/$label: JCT in the table" \
            grep -q "<tr data-key=\"avg_jct_s\">.*data-v=\"$(awk -v x="$(sfield "$s" avg_jct_s)" 'BEGIN { printf "%.15g", x }')\"" "$T/$r.html"
    done
    for c in jct-cdf.0 wait-cdf.0; do
        check "$r: $c runs from 0 to 100 % ($(v $c.bottom), $(v $c.top))" \
            sh -c "awk 'BEGIN { exit !($(v $c.top) > 99 && $(v $c.top) < 101 && $(v $c.bottom) > -1 && $(v $c.bottom) < 1) }'"
    done
done
check "cap: budget line at 6000 W ($(v budget.fifo))" close "$(v budget.fifo)" 6000
for label in 'time since first submit (days)' 'power (kW)' 'average job completion time (hours)' \
    'energy (MWh)' 'jobs at or below (%)' 'job completion time (log scale)' 'power budget'; do
    check "axis label or legend '$label'" sh -c "cat '$T/cmp/report.html' '$T/cap.html' | grep -qF '>$label<'"
done

# long run names are cut to their end and legends wrap: still nothing outside its plot
mkdir -p "$T/a-rather-long-directory-name-for-a-run"
for p in fifo sjf; do cp -r "$T/cmp/$p" "$T/a-rather-long-directory-name-for-a-run/$p-with-a-long-name-too"; done
"$ECO" report -o "$T/long.html" "$T/a-rather-long-directory-name-for-a-run" "$T/cmp" "$T/cap" >/dev/null
sed 's#</body></html>##' "$T/long.html" > "$T/check.html"
{ echo '<script>'; cat "$SRC/tests/browser/report-check.js"; echo '</script></body></html>'; } >> "$T/check.html"
chromium_dom "file://$T/check.html" "$T/dom.txt" 1000
sed -n '/<pre id="check">/,/<\/pre>/p' "$T/dom.txt" | grep = > "$T/vals"
check "long names: 6 runs drawn ($(v timeline_runs))" [ "$(v timeline_runs)" = 6 ]
check "long names: no text outside its plot ($(v text_outside))" [ "$(v text_outside)" = 0 ]
check "long names: every plot drawn with a size ($(v svg_bad) not)" [ "$(v svg_bad)" = 0 ]

# runs with equal or nearly equal figures: their point labels must still not overlap
mkdir -p "$T/crowd"
for k in a b c d e f; do cp -r "$T/cmp/fifo" "$T/crowd/run-$k"; done
# and long-named points a little more than 80 units apart on one energy (labels 150 wide)
for j in 100000:1 145000:2 190000:3 235000:4 330000:5; do
    d="$T/crowd/long-named-run-number-${j#*:}"
    cp -r "$T/cmp/fifo" "$d"
    sed -i "s/^  \"avg_jct_s\": .*/  \"avg_jct_s\": ${j%:*}.0,/" "$d/summary.json"
done
"$ECO" report -o "$T/crowd.html" "$T/crowd" >/dev/null
sed 's#</body></html>##' "$T/crowd.html" > "$T/check.html"
{ echo '<script>'; cat "$SRC/tests/browser/report-check.js"; echo '</script></body></html>'; } >> "$T/check.html"
chromium_dom "file://$T/check.html" "$T/dom.txt" 1000
sed -n '/<pre id="check">/,/<\/pre>/p' "$T/dom.txt" | grep = > "$T/vals"
check "crowded points: no label overlaps a label or point ($(v label_overlap))" [ "$(v label_overlap)" = 0 ]
check "crowded points: no text outside its plot ($(v text_outside))" [ "$(v text_outside)" = 0 ]

ART=$(artefact_dir "$ECO")
chromium_shot "file://$T/cmp/report.html" "$ART/report.png" 1280 2400 500
check "screenshot written ($ART/report.png)" test -s "$ART/report.png"
echo "report: $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
