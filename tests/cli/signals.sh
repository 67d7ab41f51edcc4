#!/bin/sh
# SPDX-License-Identifier: MIT
# Grid signals in `sim`: carbon and cost per run, node, job and over time, integrated over the
# same pieces as energy (a constant signal gives energy x intensity; the nodes' figures add up
# to the run's), --trace-start, and bad signal files or covers reported with file and line;
# values outside the documented bounds, a FIFO and a gzip bomb refused (signals and traces).
set -eu
ECO="$1"
SRC="$2"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# A trace of three jobs on 1x8 (times relative to the trace's 0).
cat > "$T/trace.csv" <<CSV
job_id,submit_s,duration_s,gpus
a,0,3600,4
b,600,1800,2
c,1200,7200,8
CSV
# A constant 400 g/kWh and a price of 100 AUD/MWh over 2022-01-01, hourly.
{
    echo "time_utc,carbon_gco2eq_per_kwh"
    for h in 00 01 02 03 04 05 06 07 08 09 10 11 12 13 14 15 16 17 18 19 20 21 22 23; do
        echo "2022-01-01T$h:00:00Z,400"
    done
} > "$T/const.csv"
{
    echo "time_utc,price_aud_per_mwh"
    for h in 00 01 02 03 04 05 06 07 08 09 10 11 12 13 14 15 16 17 18 19 20 21 22 23; do
        echo "2022-01-01T$h:00:00Z,100"
    done
} > "$T/price.csv"
"$ECO" sim --trace "$T/trace.csv" --cluster 1x8 --carbon "$T/const.csv" --price "$T/price.csv" \
    --trace-start 2022-01-01T00:00:00Z --out "$T/o" -q > "$T/table.txt"
J="$T/o/summary.json"
num() { sed -n "s/^ *\"$1\": \\([-0-9.e+]*\\),\\{0,1\\}$/\\1/p" "$J" | head -1; }
e=$(num energy_kwh)
c=$(num carbon_kg)
k=$(num cost)
# A constant signal: carbon = energy x 0.4 kg/kWh, cost = energy x 0.1 AUD/kWh.
awk -v e="$e" -v c="$c" -v k="$k" 'BEGIN { d = c - 0.4 * e; d2 = k - 0.1 * e;
    if (d < 0) d = -d; if (d2 < 0) d2 = -d2;
    exit !(e > 0 && d <= 1e-9 * c && d2 <= 1e-9 * k) }' ||
    fail "constant signal: carbon $c and cost $k against energy $e kWh"
grep -q '"cost_currency": "AUD"' "$J" || fail "cost_currency missing"
grep -q '"trace_start": "2022-01-01T00:00:00Z"' "$J" || fail "trace_start missing"
grep -q 'carbon_kg *cost' "$T/table.txt" || fail "table lacks carbon and cost columns"
grep -q ' AUD' "$T/table.txt" || fail "table lacks the currency"
# Per node and per job: the nodes add up to the run; each job's carbon is its GPU energy's.
head -1 "$T/o/nodes.csv" | grep -q ',carbon_kg,cost$' || fail "nodes.csv columns"
awk -F, -v c="$c" 'NR > 1 { s += $7 } END { d = s - c; if (d < 0) d = -d; exit !(d <= 1e-9 * c) }' \
    "$T/o/nodes.csv" || fail "nodes' carbon does not add up to $c"
head -1 "$T/o/jobs.csv" | grep -q ',carbon_kg,cost$' || fail "jobs.csv columns"
awk -F, 'NR > 1 { d = $12 - $10 / 3.6e6 * 0.4; if (d < 0) d = -d; if (d > 1e-12 + 1e-9 * $12) bad = 1 }
    END { exit bad }' "$T/o/jobs.csv" || fail "a job's carbon is not its energy x intensity"
head -1 "$T/o/timeline.csv" | grep -q ',carbon_g_per_kwh,carbon_kg,price_per_mwh,cost$' ||
    fail "timeline.csv columns"
# The last timeline row's cumulative carbon is the run's.
tail -1 "$T/o/timeline.csv" | awk -F, -v c="$c" '{ d = $8 - c; if (d < 0) d = -d; exit !(d <= 1e-9 * c) }' ||
    fail "timeline's last carbon is not the run's $c"

# A step signal: 100 g/kWh until 01:00, 300 after. Job a alone on 1x8 from 00:30 to 01:30 draws
# constant power, so its carbon splits at the step: half its energy at 100, half at 300.
cat > "$T/one.csv" <<CSV
job_id,submit_s,duration_s,gpus
a,1800,3600,8
CSV
printf 'time_utc,carbon_gco2eq_per_kwh\n2022-01-01T00:00:00Z,100\n2022-01-01T01:00:00Z,300\n' > "$T/step.csv"
"$ECO" sim --trace "$T/one.csv" --cluster 1x8 --carbon "$T/step.csv" --trace-start 2022-01-01 \
    --out "$T/s" -q > /dev/null
J="$T/s/summary.json"
e=$(num energy_kwh)
c=$(num carbon_kg)
awk -v e="$e" -v c="$c" 'BEGIN { d = c - e * (0.5 * 0.1 + 0.5 * 0.3); if (d < 0) d = -d;
    exit !(d <= 1e-9 * c) }' || fail "step signal: carbon $c for $e kWh, want half at 100 and half at 300"

# Without --trace-start: the signal's start, said in a note.
"$ECO" sim --trace "$T/one.csv" --cluster 1x8 --carbon "$T/step.csv" 2> "$T/err" > /dev/null
grep -q "note: no --trace-start: the trace's time 0 is 2022-01-01T00:00:00Z" "$T/err" ||
    fail "no note about the default trace start: $(cat "$T/err")"
# Without signals nothing changes: no carbon columns.
"$ECO" sim --trace "$T/one.csv" --cluster 1x8 --out "$T/n" -q > "$T/plain.txt"
grep -q carbon "$T/plain.txt" "$T/n/jobs.csv" "$T/n/nodes.csv" "$T/n/timeline.csv" "$T/n/summary.json" &&
    fail "carbon columns without a signal"

# Errors, exit 2, naming what to fix.
expect_err() { # expect_err WANT ARGS...: exit 2 and WANT on stderr
    want="$1"
    shift
    set +e
    "$ECO" sim --trace "$T/one.csv" --cluster 1x8 -q "$@" > /dev/null 2> "$T/err"
    rc=$?
    set -e
    [ "$rc" -eq 2 ] || fail "exit $rc (want 2) for $*: $(cat "$T/err")"
    grep -qF -- "$want" "$T/err" || fail "for $*: want '$want', got: $(cat "$T/err")"
}
expect_err "the carbon signal covers 2022-01-01T00:00:00Z to 2022-01-01T02:00:00Z, and the run starts at 2021-12-31T00:30:00Z" \
    --carbon "$T/step.csv" --trace-start 2021-12-31
expect_err "and the run runs from 2022-01-01T01:30:00Z to 2022-01-01T02:30:00Z" \
    --carbon "$T/step.csv" --trace-start 2022-01-01T01:00:00Z
expect_err "sim: --trace-start: '2022-01-01T00:00:00+01:00': the time must be UTC" \
    --carbon "$T/step.csv" --trace-start 2022-01-01T00:00:00+01:00
printf 'time_utc,carbon_gco2eq_per_kwh\n2022-01-01T00:00:00Z,100\n2022-01-01T01:00:00Z,x\n' > "$T/bad.csv"
expect_err "sim: --carbon: $T/bad.csv:3: column 2 (carbon_gco2eq_per_kwh): 'x' is not a number" \
    --carbon "$T/bad.csv"
expect_err "sim: --price: $T/step.csv:1: no price column" --price "$T/step.csv"
expect_err "sim: --carbon: $T/missing.csv" --carbon "$T/missing.csv"
expect_err "sim: --price-column needs --price FILE" --price-column price_eur_per_mwh

# Values outside the documented bounds (docs/formats/grid-signal.md, "Limits"), refused with
# file, line and column before the run: carbon 0..5000 g/kWh, prices within +-1e7 per MWh
# (+-1e4 per kWh), so that no figure turns into inf or NaN.
sigfile() { # sigfile FILE COLUMN VALUE: two hourly rows, the second VALUE
    printf 'time_utc,%s\n2022-01-01T00:00:00Z,100\n2022-01-01T01:00:00Z,%s\n' "$2" "$3" > "$1"
}
sigfile "$T/c308.csv" carbon_gco2eq_per_kwh 1e308
expect_err "sim: --carbon: $T/c308.csv:3: column 2 (carbon_gco2eq_per_kwh): 1e+308 is outside 0..5000" \
    --carbon "$T/c308.csv"
sigfile "$T/c5001.csv" carbon_gco2eq_per_kwh 5001
expect_err "$T/c5001.csv:3: column 2 (carbon_gco2eq_per_kwh): 5001 is outside 0..5000" --carbon "$T/c5001.csv"
sigfile "$T/c5000.csv" carbon_gco2eq_per_kwh 5000
"$ECO" sim --trace "$T/one.csv" --cluster 1x8 -q --carbon "$T/c5000.csv" --trace-start 2022-01-01 \
    > /dev/null 2> "$T/err" || fail "carbon 5000 g/kWh (the bound) refused: $(cat "$T/err")"
for v in 1e+300 -1e+300; do
    sigfile "$T/p.csv" price_usd_per_mwh "$v"
    expect_err "$T/p.csv:3: column 2 (price_usd_per_mwh): $v is outside -1e+07..1e+07" --price "$T/p.csv"
done
sigfile "$T/pk.csv" price_usd_per_kwh 1e306
expect_err "$T/pk.csv:3: column 2 (price_usd_per_kwh): 1e+306 is outside -10000..10000" --price "$T/pk.csv"
sigfile "$T/neg.csv" price_eur_per_mwh -500
"$ECO" sim --trace "$T/one.csv" --cluster 1x8 -q --price "$T/neg.csv" --trace-start 2022-01-01 \
    > /dev/null 2> "$T/err" || fail "a negative price refused: $(cat "$T/err")"
# --json refuses before it runs (nothing on stdout), not after the simulation
set +e
"$ECO" sim --trace "$T/one.csv" --cluster 1x8 --json --carbon "$T/c308.csv" > "$T/out" 2> "$T/err"
rc=$?
set -e
[ "$rc" -eq 2 ] && [ ! -s "$T/out" ] && grep -q "c308.csv:3:" "$T/err" ||
    fail "--json with carbon 1e308: exit $rc, stdout '$(cat "$T/out")', stderr $(cat "$T/err")"

# A FIFO in place of a signal or a trace is refused at once (the open does not wait for a
# writer; timeout only catches a hang), naming the file.
mkfifo "$T/fifo"
for opt in --carbon --price --trace; do
    set +e
    if [ "$opt" = --trace ]; then
        timeout 20 "$ECO" sim --trace "$T/fifo" --cluster 1x8 -q > /dev/null 2> "$T/err"
    else
        timeout 20 "$ECO" sim --trace "$T/one.csv" --cluster 1x8 -q "$opt" "$T/fifo" > /dev/null 2> "$T/err"
    fi
    rc=$?
    set -e
    [ "$rc" -eq 2 ] && grep -q "$T/fifo: cannot read: a FIFO, not a regular file" "$T/err" ||
        fail "$opt FIFO: exit $rc (124: it hung), $(cat "$T/err")"
done

# A gzip bomb: a header and 65 MiB of newlines in 65 KB of gzip (made here, not committed).
# The reader stops at 64 MiB of text, naming the file and the limit.
if command -v python3 > /dev/null; then
    python3 -c '
import gzip, sys
with gzip.open(sys.argv[1], "wb", compresslevel=9) as f:
    f.write(b"time_utc,carbon_gco2eq_per_kwh\n")
    chunk = b"\n" * (1 << 20)
    for _ in range(65):
        f.write(chunk)
' "$T/bomb.csv.gz"
    [ "$(wc -c < "$T/bomb.csv.gz")" -lt 200000 ] || fail "the bomb is not small"
    expect_err "sim: --carbon: $T/bomb.csv.gz:" --carbon "$T/bomb.csv.gz"
    grep -q "more than 64 MiB of text (after decompression): the limit for a grid-signal file" "$T/err" ||
        fail "gzip bomb: $(cat "$T/err")"
else
    echo "note: python3 not found: the gzip bomb is not tested"
fi

# The bundled series read; a gap is noted.
PJM="$SRC/data/grid_signals/us_eia930_2022/eia930_PJM_2022_carbon.csv.gz"
"$ECO" sim --trace "$T/trace.csv" --cluster 1x8 --carbon "$PJM" --trace-start 2022-06-01 \
    2> "$T/err" > /dev/null || fail "PJM: $(cat "$T/err")"
grep -q "note: --carbon: .*: 28 empty values, each holding the value before" "$T/err" ||
    fail "no gap note for PJM: $(cat "$T/err")"
# Carbon policies: a deferrable job waits for the clean hour (lwa, shift), counted in the
# summary; the agnostic run defers nothing; wrong uses exit 2.
printf 'time_utc,carbon_gco2eq_per_kwh\n' > "$T/day.csv"
for h in 00 01 02 03 04 05 06 07 08 09 10 11; do
    v=300; [ "$h" = 05 ] && v=50
    echo "2022-01-01T$h:00:00Z,$v" >> "$T/day.csv"
done
printf 'job_id,submit_s,duration_s,gpus\nx,0,3600,8\n' > "$T/x.csv"
for cp in lwa shift:lambda=0 threshold:0; do
    "$ECO" sim --trace "$T/x.csv" --cluster 1x8 --carbon "$T/day.csv" --trace-start 2022-01-01 \
        --carbon-policy "$cp" --forecast oracle --max-delay 8h --out "$T/c" -q > /dev/null
    J="$T/c/summary.json"
    [ "$(num avg_deferral_s)" = 18000.0 ] || fail "$cp: deferral $(num avg_deferral_s), want 18000 (to 05:00)"
    grep -q '"deferred": 1,' "$J" || fail "$cp: deferred count"
    awk -F, 'NR == 2 { exit !($3 == 18000) }' "$T/c/jobs.csv" || fail "$cp: the job did not start at 5 h"
done
"$ECO" sim --trace "$T/x.csv" --cluster 1x8 --carbon "$T/day.csv" --trace-start 2022-01-01 \
    --out "$T/c" -q > /dev/null
grep -q '"deferred"' "$T/c/summary.json" && fail "deferred without a carbon policy"
expect_err "sim: --carbon-policy shift needs a signal to follow" --carbon-policy shift
expect_err "sim: --carbon-policy: unknown policy 'psychic' (known: none, shift, lwa, lwa-int, threshold)" \
    --carbon "$T/step.csv" --carbon-policy psychic
expect_err "sim: --carbon-policy: threshold:PCT: '120' is not a percentile" \
    --carbon "$T/step.csv" --carbon-policy threshold:120
# Interrupting shifting: a 2-hour 8-GPU job with 3 h of slack, clean (100) only in hours 0
# and 3: lwa-int runs it [0, 1 h) and [3 h, 4 h), its carbon its energy x 0.1 kg/kWh (lwa
# and shift without interrupt: one run from 0, x 0.3); shift:interrupt=1 at lambda 0 the
# same. A suspension costing 600 s is 600 s more of the job's work: hour 1's first 600 s.
printf 'job_id,submit_s,duration_s,gpus\na,0,7200,8\n' > "$T/two.csv"
printf 'time_utc,carbon_gco2eq_per_kwh\n' > "$T/dirty.csv"
for h in 00 01 02 03 04 05 06 07 08 09 10 11; do
    v=500; { [ "$h" = 00 ] || [ "$h" = 03 ]; } && v=100
    echo "2022-01-01T$h:00:00Z,$v" >> "$T/dirty.csv"
done
for cp in lwa-int shift:lambda=0,interrupt=1; do
    "$ECO" sim --trace "$T/two.csv" --cluster 1x8 --carbon "$T/dirty.csv" --trace-start 2022-01-01 \
        --carbon-policy "$cp" --forecast oracle --max-delay 3h --suspend-cost 0 --out "$T/i" -q > /dev/null
    J="$T/i/summary.json"
    grep -q '"suspensions": 1,' "$J" || fail "$cp: suspensions: $(grep suspensions "$J")"
    awk -F, 'NR == 2 { d = $12 - $10 / 3.6e6 * 0.1; if (d < 0) d = -d;
        exit !($3 == 0 && $4 == 14400 && d <= 1e-9 * $12) }' "$T/i/jobs.csv" ||
        fail "$cp: not run in the clean hours: $(cat "$T/i/jobs.csv")"
done
"$ECO" sim --trace "$T/two.csv" --cluster 1x8 --carbon "$T/dirty.csv" --trace-start 2022-01-01 \
    --carbon-policy shift:lambda=0 --forecast oracle --max-delay 3h --out "$T/i" -q > /dev/null
grep -q '"suspensions"' "$T/i/summary.json" && fail "shift without interrupt reports suspensions"
awk -F, 'NR == 2 { exit !($4 == 7200) }' "$T/i/jobs.csv" || fail "shift without interrupt split the job"
"$ECO" sim --trace "$T/two.csv" --cluster 1x8 --carbon "$T/dirty.csv" --trace-start 2022-01-01 \
    --carbon-policy lwa-int --forecast oracle --max-delay 3h --suspend-cost 600 --out "$T/i" -q > /dev/null
J="$T/i/summary.json"
[ "$(num checkpoint_s)" = 600.0 ] || fail "checkpoint_s $(num checkpoint_s), want 600"
awk -F, 'NR == 2 { exit !($4 == 14400) }' "$T/i/jobs.csv" || fail "lwa-int with a 600 s suspension: $(cat "$T/i/jobs.csv")"
# Capacity: two such jobs on 1x8 want the same hours; the queue still places them one at a time.
printf 'job_id,submit_s,duration_s,gpus\na,0,7200,8\nb,0,7200,8\n' > "$T/two2.csv"
"$ECO" sim --trace "$T/two2.csv" --cluster 1x8 --carbon "$T/dirty.csv" --trace-start 2022-01-01 \
    --carbon-policy lwa-int --forecast oracle --max-delay 3h --suspend-cost 0 --out "$T/i" -q > /dev/null
awk -F, 'NR > 1 && $4 != "" { n++; gs += $5 } END { exit !(n == 2) }' "$T/i/jobs.csv" ||
    fail "two lwa-int jobs did not both finish: $(cat "$T/i/jobs.csv")"
# Demand response: a budget of 1500 W in the hours whose forecast price is above the day's
# 80th percentile, 3000 W otherwise. Day 1's dear hours are 17-20, day 2's 5-8. An oracle
# forecast lowers the budget at 17:00 and on day 2 at 05:00; seasonal persistence (day 2
# forecast as day 1 repeated) keeps 3000 W at day 2's 06:00 and lowers it at its 18:00: the
# steps come from the forecast, not from the signal.
printf 'time_utc,price_aud_per_mwh\n' > "$T/dr.csv"
for d in 01 02; do
    for h in 00 01 02 03 04 05 06 07 08 09 10 11 12 13 14 15 16 17 18 19 20 21 22 23; do
        v=50
        if [ "$d" = 01 ]; then [ "$h" -ge 17 ] && [ "$h" -le 20 ] && v=300; fi
        if [ "$d" = 02 ]; then [ "$h" -ge 5 ] && [ "$h" -le 8 ] && v=300; fi
        echo "2022-01-$d""T$h:00:00Z,$v" >> "$T/dr.csv"
    done
done
printf 'job_id,submit_s,duration_s,gpus\na,0,160000,8\n' > "$T/long.csv"
budget_at() { awk -F, -v t="$1" 'NR > 1 && $1 <= t { b = $3 } END { print b }' "$T/d/timeline.csv"; }
for fc in oracle persist; do
    "$ECO" sim --trace "$T/long.csv" --cluster 1x8 --price "$T/dr.csv" --trace-start 2022-01-01 \
        --power-budget-follow 3000:1500:80 --forecast "$fc" --out "$T/d" -q > /dev/null 2> "$T/err" ||
        fail "follow $fc: $(cat "$T/err")"
    [ "$(budget_at 61199)" = 3000 ] && [ "$(budget_at 61200)" = 1500 ] ||
        [ "$fc" = persist ] || fail "$fc: day 1 17:00 budget $(budget_at 61200)"
    want=1500; [ "$fc" = persist ] && want=3000
    [ "$(budget_at 108000)" = "$want" ] || fail "$fc: day 2 06:00 budget $(budget_at 108000), want $want"
    want=3000; [ "$fc" = persist ] && want=1500
    [ "$(budget_at 151200)" = "$want" ] || fail "$fc: day 2 18:00 budget $(budget_at 151200), want $want"
done
expect_err "sim: --power-budget-follow: '3000:4000:80': want 0 < LOW_W <= HIGH_W" \
    --price "$T/dr.csv" --power-budget-follow 3000:4000:80
expect_err "sim: --power-budget-follow: '3000:1500': PCT is missing" --price "$T/dr.csv" \
    --power-budget-follow 3000:1500
expect_err "sim: --power-budget-follow needs the signal it follows: --carbon FILE" \
    --price "$T/dr.csv" --power-budget-follow 3000:1500:80:carbon
expect_err "sim: give one of --power-budget, --power-budget-file and --power-budget-follow" \
    --price "$T/dr.csv" --power-budget 2000 --power-budget-follow 3000:1500:80
expect_err "sim: --max-delay: '6x': unknown unit 'x'" --carbon "$T/step.csv" --carbon-policy lwa --max-delay 6x
expect_err "sim: --forecast: unknown forecast 'psychic'" --carbon "$T/step.csv" --carbon-policy lwa --forecast psychic
echo "ok"
