#!/bin/sh
# SPDX-License-Identifier: MIT
# `ecosched advise` (docs/advise.md) on a slice of a bundled trace: every lever's row, the
# held-out split stated, a lever that cannot pay reported as such, carbon shifting evaluated
# only with a signal, the deployment lines, --out's pages (in headless Chromium), one progress
# line per run, and the bad-flag errors.
set -u
ECO="$1"; SRC="$2"
TRACE="$SRC/data/itp/cluster02.csv.gz"
CARBON="$SRC/data/grid_signals/us_eia930_2022/eia930_CISO_2022_carbon.csv.gz"
. "$(dirname "$0")/expect.shlib"
. "$SRC/tests/chromium.shlib"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
check() {
    what="$1"; shift
    n=$((n + 1))
    "$@" || { echo "FAIL: $what"; fail=$((fail + 1)); }
}
has() { grep -q -- "$2" "$1"; }

# the slice: 400 jobs, 200 to tune on, 200 held out
"$ECO" advise --trace "$TRACE" --cluster auto --max-jobs 400 --out "$T/o" > "$T/out" 2> "$T/err"
check "advise exits 0" [ $? -eq 0 ]
for lever in power-down power-budget carbon-shift combined; do
    check "a row for $lever" has "$T/out" "^$lever "
done
check "the split is stated" has "$T/out" "tuned on the first 200 jobs by submit time (50 %), reported on the other 200 (held out"
check "the rule is stated" has "$T/out" "^rule: per lever, the largest energy saving on the tuning part with avg JCT within +2 %"
check "carbon shifting not evaluated without a signal" has "$T/out" "^carbon-shift  not evaluated: give --carbon FILE or --price FILE"
check "every setting of the tuning part listed" [ "$(grep -c '^  power-budget  mpc \(limit\|clock\) [0-9]*%' "$T/out")" -eq 6 ]
check "power-down deploys as slurm.conf lines" has "$T/out" "^    SuspendTime=[0-9]"
check "the suspend program" has "$T/out" "^    SuspendProgram=/usr/local/sbin/ecosched-suspend"
# one progress line per run: 12 tuning runs, the held-out baseline, each pick, the combination
tune=$(grep -c '^ecosched: advise: tune [0-9]*/12: .*: [0-9.]* s$' "$T/err")
check "12 tuning progress lines ($tune)" [ "$tune" -eq 12 ]
check "held-out progress lines" has "$T/err" "^ecosched: advise: held-out 1/[0-9]: baseline: [0-9.]* s$"
check "--out: index.html" [ -s "$T/o/index.html" ]
check "--out: report.html" [ -s "$T/o/report.html" ]
check "--out: advise.txt is the table" cmp -s "$T/out" "$T/o/advise.txt"
check "--out: the held-out baseline's files" [ -s "$T/o/runs/0/summary.json" ]
check "index.html is one document" [ "$(grep -c '</html>' "$T/o/index.html")" -eq 1 ]
check "index.html links report.html" has "$T/o/index.html" 'href="report.html"'

# a lever that cannot pay: every setting must improve avg JCT by half
"$ECO" advise --trace "$TRACE" --cluster auto --max-jobs 200 --max-jct-pct -50 -q > "$T/nopay" 2>&1
check "advise with limits no setting keeps exits 0" [ $? -eq 0 ]
check "power-down does not pay" has "$T/nopay" "^power-down    does not pay: the settings that save energy break a limit (.*avg JCT"
check "the budget does not pay" has "$T/nopay" "^power-budget  does not pay: "
check "nothing combined" has "$T/nopay" "^combined      does not pay: no lever pays alone"
check "nothing to deploy" has "$T/nopay" "^deploy: nothing (no lever pays on the held-out part)"
check "-q: no progress lines" sh -c "! grep -q 'advise: tune' '$T/nopay'"

# with a carbon signal: shifting evaluated, carbon the goal, carbon saved a column
"$ECO" advise --trace "$TRACE" --cluster auto --max-jobs 200 --carbon "$CARBON" \
    --trace-start 2022-06-01T00:00:00Z -q > "$T/carbon" 2>&1
check "advise --carbon exits 0" [ $? -eq 0 ]
check "carbon is the goal" has "$T/carbon" "^rule: per lever, the largest carbon saving"
check "shifting evaluated" sh -c "! grep -q '^carbon-shift  not evaluated' '$T/carbon'"
check "both delays tried" [ "$(grep -c '^  carbon-shift  shift max-delay=\(6\|24\)h' "$T/carbon")" -eq 2 ]

# a bundled region (read from the checkout): a price signal, cost the goal
(cd "$SRC" && "$ECO" advise --trace "$TRACE" --cluster auto --max-jobs 200 --region NSW1 \
    --trace-start 2022-06-01T00:00:00Z -q) > "$T/region" 2>&1
check "advise --region exits 0" [ $? -eq 0 ]
check "--region NSW1: cost is the goal" has "$T/region" "^rule: per lever, the largest cost saving"
check "--region NSW1: the cost column in AUD" has "$T/region" " cost_AUD "

# errors
expect 2 "advise: --region: unknown region 'XX' (known: AZPS, BPAT, CISO" -- advise --trace "$TRACE" --cluster auto --region XX
expect 2 "advise: --region: give a bundled region or --carbon/--price FILE, not both" -- advise --trace "$TRACE" --cluster auto --region CISO --carbon "$CARBON"
expect 0 "usage: ecosched advise --trace FILE --cluster SPEC" -- advise --help
expect 0 "advise" -- --help
expect 2 "advise: --trace FILE is required" -- advise --cluster auto
expect 2 "advise: --cluster SPEC is required" -- advise --trace "$TRACE"
expect 2 "advise: --tune-share: '1.5' is not a number > 0 and <= 1" -- advise --trace "$TRACE" --cluster auto --tune-share 1.5
expect 2 "the tuning share must be between 0 and 1 (got 1)" -- advise --trace "$TRACE" --cluster auto --max-jobs 100 --tune-share 1
expect 2 "advise: --max-jct-pct: 'abc' is not a number in -100..1000" -- advise --trace "$TRACE" --cluster auto --max-jct-pct abc
expect 2 "advise: --max-p95-wait-pct: '2000'" -- advise --trace "$TRACE" --cluster auto --max-p95-wait-pct 2000
expect 2 "advise: unknown option '--bogus'" -- advise --trace "$TRACE" --cluster auto --bogus
expect 2 "advise: option '--out' needs a value" -- advise --trace "$TRACE" --cluster auto --out
expect 2 "advise: --max-jobs: '0'" -- advise --trace "$TRACE" --cluster auto --max-jobs 0
expect 2 "advise: --forecast:" -- advise --trace "$TRACE" --cluster auto --forecast psychic
expect 2 "advise: --carbon:" -- advise --trace "$TRACE" --cluster auto --carbon "$SRC/no-such.csv"
expect 2 "advise: --cluster:" -- advise --trace "$TRACE" --cluster 2x8:K80
expect 2 "advise: unexpected argument 'extra'" -- advise --trace "$TRACE" --cluster auto extra
# a history longer than capped runs may span (50 jobs 5e6 s apart: 2.45e8 s)
awk 'BEGIN { print "job_id,submit_s,duration_s,gpus"; for (i = 0; i < 50; i++) printf "j%d,%d,3600,1\n", i, i * 5e6 }' > "$T/long.csv"
expect 2 "the tuning part spans at least 120003600 s, more than the 100000000 control periods" -- advise --trace "$T/long.csv" --cluster 1x8
# the real Slurm fixture: 8 GPU jobs are too few to split
SACCT="$SRC/tests/data/trace_sacct"
expect 2 "too short to split: 8 jobs give 4 to tune on and 4 to report on; each part needs at least 20" -- \
    advise --trace "$SACCT/jobs-X.sacct" --cluster "$SACCT/nodes.scontrol" --gpu-type-map a100=A100-SXM,tesla=V100

# the pages in the browser
chromium_require
chromium_dom "file://$T/o/index.html" "$T/dom.txt" 500
check "index.html: the advice in the DOM" has "$T/dom.txt" '<pre id="advice">ecosched advise: '
check "index.html: every lever in the DOM" [ "$(grep -c '^\(power-down\|power-budget\|carbon-shift\|combined\)  ' "$T/dom.txt")" -eq 4 ]
check "index.html: the levers' table, one row each" [ "$(grep -o '<tr><th>\(power-down\|power-budget\|carbon-shift\|combined\)</th>' "$T/dom.txt" | wc -l)" -eq 4 ]
check "index.html: the report's style sheet" has "$T/o/index.html" "td.best{font-weight:700}"
chromium_shot "file://$T/o/index.html" "$(artefact_dir "$ECO")/advise.png" 1280 1400 500
sed 's#</body></html>##' "$T/o/report.html" > "$T/check.html"
{ echo '<script>'; cat "$SRC/tests/browser/report-check.js"; echo '</script></body></html>'; } >> "$T/check.html"
chromium_dom "file://$T/check.html" "$T/rdom.txt" 1000
sed -n '/<pre id="check">/,/<\/pre>/p' "$T/rdom.txt" | grep = > "$T/vals"
v() { sed -n "s/^$1=//p" "$T/vals"; }
check "report.html: the checker ran" [ -s "$T/vals" ]
check "report.html: every plot drawn with a size ($(v svg_bad) not)" [ "$(v svg_bad)" = 0 ]
check "report.html: no text outside its plot ($(v text_outside))" [ "$(v text_outside)" = 0 ]

echo "advise: $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
