#!/bin/sh
# SPDX-License-Identifier: MIT
# `ecosched report --accounting`: a hand-made `sacct --json` file (tests/data/sacct/jobs.json)
# summed per user and per account by hand (energy from the AdminComment the SPANK plugin
# writes, lower case included; carbon where known; GPU hours = allocated gres/gpu x elapsed),
# the same from stdin, the HTML page, and bad input refused naming the file and the field.
set -u
ECO="$1"; SRC="$2"
T=$(mktemp -d /tmp/ecosched-racct.XXXXXX)
trap 'rm -rf "$T"' EXIT
J="$SRC/tests/data/sacct/jobs.json"
fail=0; n=0
check() {
    what="$1"; shift
    n=$((n + 1))
    if ! "$@"; then echo "FAIL: $what"; fail=$((fail + 1)); fi
}
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

# alice: job 11 (2 GPUs x 1 h, 1 kWh, 500 g) + job 12 (4 GPUs x 0.5 h, 0.5 kWh, no carbon);
# bob: job 13 (1 GPU x 2 h, not measured) + job 14 (no GPU, 360 J, 0.05 g)
cat >"$T/want" <<'EOF'
KIND     NAME               JOBS       ENERGY_J   ENERGY_KWH  GPU_HOURS  MEASURED     CARBON_G  CARBON_FOR
user     alice                 2      5400000.0       1.5000      4.000       2/2       500.00         1/2
user     bob                   2          360.0       0.0001      2.000       1/2         0.05         1/2
account  proj-a                3      3600360.0       1.0001      4.000       2/3       500.05         2/3
account  proj-b                1      1800000.0       0.5000      2.000       1/1            -         0/1
EOF
"$ECO" report --accounting "$J" >"$T/got" 2>&1
check "the table per user and per account, as summed by hand" diff "$T/want" "$T/got"
"$ECO" report --accounting - <"$J" >"$T/got2" 2>&1
check "the same from stdin (sacct --json | ecosched report --accounting -)" diff "$T/want" "$T/got2"
"$ECO" report --accounting "$J" -o "$T/acct.html" --title "GPU energy, November" >"$T/html.out" 2>&1
check "HTML written ($(cat "$T/html.out"))" grep -q "report: $T/acct.html" "$T/html.out"
check "HTML: per user and per account tables" \
    sh -c "grep -q '<h2>Per user</h2>' '$T/acct.html' && grep -q '<h2>Per account</h2>' '$T/acct.html'"
check "HTML: alice's row" grep -q '<tr><td>alice</td><td>2</td><td>1.5000</td><td>5400000.0</td><td>4.000</td><td>2 of 2</td><td>500.00</td><td>1 of 2</td></tr>' "$T/acct.html"
# each header names the cell below it (the header once listed carbon before GPU hours)
check "HTML: the headers in the cells' order" grep -q '<tr><th>user</th><th>jobs</th><th>energy (kWh)</th><th>energy (J)</th><th>GPU hours</th><th>jobs measured</th><th>carbon (g CO2e)</th><th>jobs with carbon</th></tr>' "$T/acct.html"
check "HTML: the title" grep -q '<h1>GPU energy, November</h1>' "$T/acct.html"

# bad input: file, then the field
printf '{"jobs": [' >"$T/trunc.json"
expect 2 "$T/trunc.json:1: not JSON" report --accounting "$T/trunc.json"
echo '{"errors": []}' >"$T/nojobs.json"
expect 2 "$T/nojobs.json: field 'jobs': missing or not an array" report --accounting "$T/nojobs.json"
sed 's/"elapsed": 1800/"elapsed": "30m"/' "$J" >"$T/el.json"
expect 2 "$T/el.json: jobs[1].time.elapsed: missing or not seconds" report --accounting "$T/el.json"
sed 's/"user": "bob"/"user": 7/' "$J" >"$T/user.json"
expect 2 "$T/user.json: jobs[2].user: missing or not a name" report --accounting "$T/user.json"
sed 's/gpu_energy_j=360.0 carbon_g=0.05/gpu_energy_j=lots carbon_g=0.05/' "$J" >"$T/cm.json"
expect 2 "$T/cm.json: jobs[3].comment.administrator: 'ecosched gpu_energy_j=lots" report --accounting "$T/cm.json"
sed 's/"id": 1001, "count": 4/"id": 1001, "count": "four"/' "$J" >"$T/cnt.json"
expect 2 "$T/cnt.json: jobs[1].tres.allocated[0].count: not a GPU count" report --accounting "$T/cnt.json"
expect 2 "not JSON" report --accounting "$T/missing.json"
expect 2 "--accounting reads one sacct --json file, not DIRs" report --accounting "$J" somedir
expect 0 "--accounting FILE" report --help

echo "$(basename "$0" .sh): $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
