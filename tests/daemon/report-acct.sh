#!/bin/sh
# SPDX-License-Identifier: MIT
# `ecosched report --accounting daemon:SOCKET` (docs/report.md, "Accounting report"): the jobs
# of a running ecoschedd on fake GPUs under a 400 g/kWh carbon signal, two of root's (1 and 2
# GPUs) and one of nobody's, summed per user against the jobs' own figures (energy_j,
# carbon_kg; GPU hours = gpus x (end_s - start_s)); the same from a saved GET /v1/jobs page,
# the HTML page, and a daemon that is not there or a bad page refused naming the field.
# Needs root and setpriv for the second user (else skipped, exit 77).
. "$(dirname "$0")/common.shlib"
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null || ! getent passwd 65534 >/dev/null ||
    ! getent group 65534 >/dev/null; then
    echo "SKIP: needs root, setpriv and a user and group 65534 (a second user's jobs)"
    exit 77
fi
OTHER="setpriv --reuid=65534 --regid=65534 --clear-groups"
nobody=$(getent passwd 65534 | cut -d: -f1)
# a carbon signal of 400 g/kWh over the hours around now: each job's carbon_kg is known
now=$(date +%s)
awk -v now="$now" 'BEGIN { print "time_utc,carbon_gco2eq_per_kwh"; h0 = now - now % 3600
    for (h = -48; h <= 48; h++) print strftime("%Y-%m-%dT%H:00:00Z", h0 + 3600 * h, 1) ",400" }' \
    >"$T/carbon.csv"
start_daemon --socket-group "$(getent group 65534 | cut -d: -f1)" --carbon "$T/carbon.csv" # nobody may submit
chmod 666 "$T/fake.state" # and its job's fake-GPU wrapper update the fake GPUs
r1=$("$ECO" submit --gpus 1 -- sleep 1.5)
r2=$("$ECO" submit --gpus 2 -- sleep 1)
o1=$(cd "$T" && $OTHER "$ECO" submit --gpus 1 -- sleep 1) # a cwd nobody may enter
for j in $r1 $r2 $o1; do "$ECO" wait "$j" >/dev/null; done
states="$(field "$r1" state) $(field "$r2" state) $(field "$o1" state)"
check "the three jobs are done ($states)" [ "$states" = "done done done" ]
check "nobody's job ran as uid 65534" [ "$(field "$o1" uid)" = 65534 ]

# the expected figures from each job's own fields: energy J, GPU hours, carbon g
fig() { # fig ID: "ENERGY GPU_HOURS CARBON_G"
    e=$(jfield "$1" energy_j); s=$(jfield "$1" start_s); t=$(jfield "$1" end_s)
    g=$(jfield "$1" gpus); c=$(jfield "$1" carbon_kg)
    awk "BEGIN { printf \"%.17g %.17g %.17g\", $e, $g * ($t - $s) / 3600, $c * 1000 }"
}
set -- $(fig "$r1") $(fig "$r2") $(fig "$o1")
root_e=$(awk "BEGIN { printf \"%.1f\", $1 + $4 }"); root_h=$(awk "BEGIN { printf \"%.3f\", $2 + $5 }")
root_c=$(awk "BEGIN { printf \"%.2f\", $3 + $6 }")
nob_e=$(awk "BEGIN { printf \"%.1f\", $7 }"); nob_h=$(awk "BEGIN { printf \"%.3f\", $8 }")
nob_c=$(awk "BEGIN { printf \"%.2f\", $9 }")
check "the jobs measured some energy ($root_e J, $nob_e J)" \
    awk "BEGIN { exit !($root_e > 0 && $nob_e > 0) }"

"$ECO" report --accounting "daemon:$SOCK" >"$T/got" 2>"$T/err"; rc=$?
check "report --accounting daemon:SOCK exits 0 (rc $rc: $(cat "$T/err"))" [ "$rc" -eq 0 ]
# row USER: "JOBS ENERGY_J GPU_HOURS MEASURED CARBON_G" of the table
row() { awk -v u="$1" '$1 == "user" && $2 == u { print $3, $4, $6, $7, $8, $9 }' "$T/got"; }
check "root's row: 2 jobs, $root_e J, $root_h GPU h, 2/2 measured, $root_c g for 2/2 ($(row root))" \
    [ "$(row root)" = "2 $root_e $root_h 2/2 $root_c 2/2" ]
check "$nobody's row: 1 job, $nob_e J, $nob_h GPU h, $nob_c g ($(row "$nobody"))" \
    [ "$(row "$nobody")" = "1 $nob_e $nob_h 1/1 $nob_c 1/1" ]
check "carbon = energy x 400 g/kWh ($root_c g for $root_e J)" \
    awk "BEGIN { x = $root_e / 3.6e6 * 400; exit !($root_c > x - 0.01 && $root_c < x + 0.01) }"
check "no account rows (the daemon has no accounts)" sh -c "! grep -q '^account' '$T/got'"
check "two user rows in name order" \
    [ "$(awk 'NR > 1 { printf "%s ", $2 }' "$T/got")" = "$(printf '%s\n' root "$nobody" | sort | tr '\n' ' ')" ]

ECOSCHED_SOCKET="$SOCK" "$ECO" report --accounting daemon: >"$T/got2" 2>&1
check "daemon: alone uses \$ECOSCHED_SOCKET" cmp -s "$T/got" "$T/got2"
curl -s --unix-socket "$SOCK" "http://x/v1/jobs?limit=1000" >"$T/page.json"
"$ECO" report --accounting "$T/page.json" >"$T/got3" 2>&1
check "a saved GET /v1/jobs page gives the same table" cmp -s "$T/got" "$T/got3"

"$ECO" report --accounting "daemon:$SOCK" -o "$T/acct.html" --title "GPU energy" >/dev/null 2>&1
check "HTML page with a row per user and no account table" sh -c \
    "grep -q '<td>root</td><td>2</td>' '$T/acct.html' && grep -q '<td>$nobody</td><td>1</td>' '$T/acct.html' &&
     ! grep -q 'Per account' '$T/acct.html' && grep -q \"the daemon's jobs\" '$T/acct.html'"

out=$("$ECO" report --accounting "daemon:$T/none.sock" 2>&1); rc=$?
check "a daemon that is not there: exit 2 naming the socket ($rc: $out)" \
    sh -c "[ $rc -eq 2 ] && printf '%s' \"\$1\" | grep -q 'none.sock: .*(GET /v1/jobs'" _ "$out"
printf '{"jobs":[{"uid":0,"energy_j":"x","gpus":1}],"next":null}' >"$T/bad.json"
out=$("$ECO" report --accounting "$T/bad.json" 2>&1); rc=$?
check "a bad saved page: exit 2 naming jobs[0].energy_j ($rc: $out)" \
    sh -c "[ $rc -eq 2 ] && printf '%s' \"\$1\" | grep -q 'bad.json: jobs\[0\].energy_j'" _ "$out"
stop_daemon
finish
