#!/bin/sh
# SPDX-License-Identifier: MIT
# Pruning finished jobs (keep_finished_s) keeps the all-jobs counters of /metrics (energy,
# carbon, cost) where they were, across the prune and across a restart, counts the pruned jobs
# (ecosched_jobs_pruned_total), and `report --accounting daemon:` still sums them per user and
# says how many were pruned (docs/report.md, "Accounting report"; docs/daemon/README.md).
. "$(dirname "$0")/common.shlib"
C="$T/d.conf"
# a carbon and a price signal over the hours around now: each job's carbon and cost are known
now=$(date +%s)
awk -v now="$now" 'BEGIN { print "time_utc,carbon_gco2eq_per_kwh"; h0 = now - now % 3600
    for (h = -48; h <= 48; h++) print strftime("%Y-%m-%dT%H:00:00Z", h0 + 3600 * h, 1) ",400" }' \
    >"$T/carbon.csv"
awk -v now="$now" 'BEGIN { print "time_utc,price_aud_per_mwh"; h0 = now - now % 3600
    for (h = -48; h <= 48; h++) print strftime("%Y-%m-%dT%H:00:00Z", h0 + 3600 * h, 1) ",100" }' \
    >"$T/price.csv"
SIG="--carbon $T/carbon.csv --price $T/price.csv"
echo "keep_finished_s = 0" >"$C" # nothing pruned while the figures are taken
start_daemon --config "$C" $SIG
for k in 1 2 3; do last=$("$ECO" submit --gpus 1 -- sleep 1); done
for k in 1 2 3; do "$ECO" wait "$k" >/dev/null; done
check "three jobs done" [ "$("$ECO" ls done | awk 'NR > 1' | wc -l)" -eq 3 ]

# metric NAME: the value of the one sample of NAME (any labels)
metric() {
    curl -s --unix-socket "$SOCK" http://localhost/metrics |
        awk -v m="$1" '$1 == m || index($1, m "{") == 1 { print $2; exit }'
}
e1=$(metric ecosched_jobs_energy_joules_total); c1=$(metric ecosched_jobs_carbon_kg_total)
p1=$(metric ecosched_jobs_cost_total)
check "the jobs used energy, carbon and cost ($e1 J, $c1 kg, $p1)" \
    awk "BEGIN { exit !($e1 > 0 && $c1 > 0 && $p1 > 0) }"
"$ECO" report --accounting daemon: >"$T/before" 2>&1
row() { awk '$1 == "user" && $2 == "root" { print $3, $4, $6, $7, $8, $9 }' "$1"; }
check "report before: root's 3 jobs ($(row "$T/before"))" [ "$(row "$T/before" | cut -d' ' -f1)" = 3 ]
stop_daemon

# a tiny age: the three finished jobs (rows and logs) go
echo "keep_finished_s = 1" >"$C"
start_daemon --config "$C" $SIG
i=0
while [ -e "$T/state/logs/$last.out" ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
check "the jobs were pruned" [ "$("$ECO" ls --all | awk 'NR > 1' | wc -l)" -eq 0 ]
check "their logs were deleted" [ ! -e "$T/state/logs/1.out" ]
# same(A, B): A equals B to 12 significant digits (the sums are added in another order)
same() { awk "BEGIN { d = $1 - $2; if (d < 0) d = -d; exit !(d <= 1e-12 * $2) }"; }
e2=$(metric ecosched_jobs_energy_joules_total); c2=$(metric ecosched_jobs_carbon_kg_total)
p2=$(metric ecosched_jobs_cost_total)
check "energy counter kept after the prune ($e1 -> $e2)" same "$e2" "$e1"
check "carbon counter kept after the prune ($c1 -> $c2)" same "$c2" "$c1"
check "cost counter kept after the prune ($p1 -> $p2)" same "$p2" "$p1"
check "ecosched_jobs_pruned_total is 3 ($(metric ecosched_jobs_pruned_total))" \
    [ "$(metric ecosched_jobs_pruned_total)" = 3 ]
"$ECO" report --accounting daemon: >"$T/after" 2>&1
check "report after: root's row as before ($(row "$T/before") / $(row "$T/after"))" \
    [ "$(row "$T/after")" = "$(row "$T/before")" ]
check "the report says 3 jobs were pruned ($(grep pruned "$T/after"))" \
    grep -q "^pruned: 3 jobs" "$T/after"
curl -s --unix-socket "$SOCK" "http://x/v1/jobs?limit=1000" >"$T/page.json"
"$ECO" report --accounting "$T/page.json" >"$T/saved" 2>&1
check "a saved first page gives the same report" cmp -s "$T/after" "$T/saved"
"$ECO" report --accounting daemon: -o "$T/acct.html" >/dev/null 2>&1
check "the HTML report says so too" grep -q "3 jobs .*were pruned" "$T/acct.html"
stop_daemon

# counters survive a restart, and grow again with a new job
start_daemon --config "$C" $SIG
e3=$(metric ecosched_jobs_energy_joules_total)
check "energy counter kept across a restart ($e2 -> $e3)" same "$e3" "$e2"
j=$("$ECO" submit --gpus 1 -- sleep 1)
"$ECO" wait "$j" >/dev/null
e4=$(metric ecosched_jobs_energy_joules_total)
check "a new job adds to it ($e3 -> $e4)" awk "BEGIN { exit !($e4 > $e3) }"
check "its id ($j) is above the pruned ones" [ "$j" -gt 3 ]
stop_daemon
finish
