#!/bin/sh
# SPDX-License-Identifier: MIT
# `ecosched report --accounting daemon:SOCKET` (docs/report.md, "Accounting report"): the jobs
# of a running ecoschedd on fake GPUs, two of root's (1 and 2 GPUs) and one of nobody's, summed
# per user against the jobs' own figures (energy_j; GPU hours = gpus x (end_s - start_s)); the
# same from a saved GET /v1/jobs page, the HTML page, and a daemon that is not there refused.
# Needs root and setpriv for the second user (else skipped, exit 77).
. "$(dirname "$0")/common.shlib"
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null || ! getent passwd 65534 >/dev/null ||
    ! getent group 65534 >/dev/null; then
    echo "SKIP: needs root, setpriv and a user and group 65534 (a second user's jobs)"
    exit 77
fi
OTHER="setpriv --reuid=65534 --regid=65534 --clear-groups"
nobody=$(getent passwd 65534 | cut -d: -f1)
start_daemon --socket-group "$(getent group 65534 | cut -d: -f1)" # nobody may submit
chmod 666 "$T/fake.state" # and its job's fake-GPU wrapper update the fake GPUs
r1=$("$ECO" submit --gpus 1 -- sleep 1.5)
r2=$("$ECO" submit --gpus 2 -- sleep 1)
o1=$(cd "$T" && $OTHER "$ECO" submit --gpus 1 -- sleep 1) # a cwd nobody may enter
for j in $r1 $r2 $o1; do "$ECO" wait "$j" >/dev/null; done
states="$(field "$r1" state) $(field "$r2" state) $(field "$o1" state)"
check "the three jobs are done ($states)" [ "$states" = "done done done" ]
check "nobody's job ran as uid 65534" [ "$(field "$o1" uid)" = 65534 ]

# the expected figures from each job's own fields: energy J and GPU hours
fig() { # fig ID: "ENERGY GPU_HOURS"
    e=$(jfield "$1" energy_j); s=$(jfield "$1" start_s); t=$(jfield "$1" end_s)
    g=$(jfield "$1" gpus)
    awk "BEGIN { printf \"%.1f %.3f\", $e, $g * ($t - $s) / 3600 }"
}
set -- $(fig "$r1") $(fig "$r2") $(fig "$o1")
root_e=$(awk "BEGIN { printf \"%.1f\", $1 + $3 }"); root_h=$(awk "BEGIN { printf \"%.3f\", $2 + $4 }")
nob_e=$5; nob_h=$6
check "the jobs measured some energy ($root_e J, $nob_e J)" \
    awk "BEGIN { exit !($root_e > 0 && $nob_e > 0) }"

"$ECO" report --accounting "daemon:$SOCK" >"$T/got" 2>"$T/err"; rc=$?
check "report --accounting daemon:SOCK exits 0 (rc $rc: $(cat "$T/err"))" [ "$rc" -eq 0 ]
# row USER: "JOBS ENERGY_J GPU_HOURS MEASURED CARBON_G" of the table
row() { awk -v u="$1" '$1 == "user" && $2 == u { print $3, $4, $6, $7, $8 }' "$T/got"; }
check "root's row: 2 jobs, $root_e J, $root_h GPU h, 2/2 measured, no carbon ($(row root))" \
    [ "$(row root)" = "2 $root_e $root_h 2/2 -" ]
check "$nobody's row: 1 job, $nob_e J, $nob_h GPU h ($(row "$nobody"))" \
    [ "$(row "$nobody")" = "1 $nob_e $nob_h 1/1 -" ]
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
