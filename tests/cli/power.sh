#!/bin/sh
# SPDX-License-Identifier: MIT
# `ecosched powerd` and `ecosched power`: bad flags and values exit 2 naming what to fix, the
# API socket's mode and group, an absent controller exits 1, and the ResumeProgram expands
# Slurm hostlists (no Slurm needed).
set -u
ECO="$1"
T=$(mktemp -d /tmp/ecosched-power.XXXXXX)
trap 'rm -rf "$T"' EXIT
export ECOSCHED_POWERD_SOCKET="$T/none.sock"
. "$(dirname "$0")/expect.shlib"
expect 0 "usage: ecosched powerd --budget WATTS" -- powerd --help
expect 2 "--budget WATTS is required" -- powerd
expect 2 "--budget: 'abc' is not a number > 0" -- powerd --budget abc
expect 2 "--period: '0' is not a number of seconds > 0" -- powerd --budget 1000 --period 0
expect 2 "--nodes must contain %n" -- powerd --budget 1000 --nodes /run/x.sock
expect 2 "unknown policy 'sleepy'" -- powerd --budget 1000 --power-down sleepy
expect 0 "--policy P[:PARAMS]" -- powerd --help
expect 2 "unknown policy 'sleepy'" -- powerd --budget 1000 --policy sleepy
expect 2 "unknown parameter 'gian'" -- powerd --budget 1000 --policy mpc:gian=0.5
expect 2 "--socket-group 'no-such-group-x': no such group" -- \
    powerd --budget 1000 --socket "$T/p.sock" --socket-group no-such-group-x
# the API socket is 0660, group powerd's own or --socket-group's (issue 28: it was 0666, so
# every user read every user's jobs and energy); no Slurm here: powerd logs that and serves
SLURM_CONF="$T/none.conf" "$ECO" powerd --budget 1000 --period 3600 --nodes "$T/%n.sock" \
    --socket "$T/p.sock" --socket-group "$(id -gn)" 2>"$T/powerd.log" &
pid=$!
i=0; while [ $i -lt 100 ] && [ ! -S "$T/p.sock" ]; do sleep 0.1; i=$((i + 1)); done
n=$((n + 1))
mode=$(stat -c '%a %G' "$T/p.sock" 2>/dev/null)
[ "$mode" = "660 $(id -gn)" ] || { echo "FAIL: powerd's socket is '$mode', want '660 $(id -gn)'"; fail=$((fail + 1)); }
kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
expect 0 "usage: ecosched power COMMAND" -- power --help
expect 2 "usage: ecosched power COMMAND" -- power
expect 2 "WATTS must be a number > 0" -- power budget -5
expect 2 "WATTS must be a number > 0" -- power budget 12x
expect 1 "powerd: $T/none.sock" -- power budget 500
expect 1 "powerd: $T/none.sock" -- power status
expect 2 "bad hostlist 'n[1-'" -- power resume 'n[1-'
expect 2 "bad hostlist 'n[3-1]'" -- power suspend 'n[3-1]'
expect 0 "a09: powering on" -- power resume 'a[08-10],gpu7' --command "echo %n >>$T/on"
n=$((n + 1))
got=$(tr '\n' ' ' <"$T/on" 2>/dev/null)
[ "$got" = "a08 a09 a10 gpu7 " ] || { echo "FAIL: resume ran for '$got', want 'a08 a09 a10 gpu7 '"; fail=$((fail + 1)); }
expect 0 "n1: powering off" -- power suspend n1 --command true
# scripts/pd_oracle.py, the oracle bound of docs/results/energy.md: 2 nodes, one idle for
# 2,000 s; powering it down saves (497.7 - 15) W x 2,000 s - (497.7 - 15) W x 330 s - 180 kJ
# = 626,109 J = 0.174 kWh; the 60 s idle at the end is too short to pay for a cycle.
if [ -n "${2:-}" ] && command -v python3 >/dev/null 2>&1; then
    printf 'time,active\n0,1\n2000,2\n3000,1\n' >"$T/act.csv"
    printf 'time,active\n0,1\n20x0,2\n' >"$T/bad.csv"
    n=$((n + 3))
    got=$(python3 "$2/scripts/pd_oracle.py" "$T/act.csv" --total-nodes 2 2>&1)
    case "$got" in *"saved_kwh=0.174 idle_kwh=0.285 "*"cycles=1 "*) ;;
    *) echo "FAIL: pd_oracle gave '$got'"; fail=$((fail + 1)) ;; esac
    got=$(python3 "$2/scripts/pd_oracle.py" "$T/bad.csv" --total-nodes 2 2>&1) &&
        { echo "FAIL: pd_oracle took a bad number"; fail=$((fail + 1)); }
    case "$got" in *"bad.csv:3: bad number in 'time'"*) ;;
    *) echo "FAIL: pd_oracle said '$got'"; fail=$((fail + 1)) ;; esac
    got=$(python3 "$2/scripts/pd_oracle.py" "$T/act.csv" --used-col busy --total-nodes 2 2>&1) &&
        { echo "FAIL: pd_oracle took a missing column"; fail=$((fail + 1)); }
    # --jobs: the bound on a run's own placement, from jobs.csv. Node 1 is idle from 500 to
    # 2,500 between its jobs: the same 2,000 s interval, the same 0.174 kWh; node 0 is never
    # idle. A job on a node beyond --total-nodes is an error naming the line.
    printf 'job_id,submit_s,start_s,end_s,gpus,nodes\na,0,0,3000,8,0\nb,0,0,500,8,1\nc,0,2500,3000,8,1\n' >"$T/jobs.csv"
    n=$((n + 2))
    got=$(python3 "$2/scripts/pd_oracle.py" "$T/jobs.csv" --jobs --total-nodes 2 2>&1)
    case "$got" in *"saved_kwh=0.174 idle_kwh=0.277 "*"cycles=1 "*) ;;
    *) echo "FAIL: pd_oracle --jobs gave '$got'"; fail=$((fail + 1)) ;; esac
    got=$(python3 "$2/scripts/pd_oracle.py" "$T/jobs.csv" --jobs --total-nodes 1 2>&1) &&
        { echo "FAIL: pd_oracle --jobs took a node beyond --total-nodes"; fail=$((fail + 1)); }
    case "$got" in *"jobs.csv:3: node 1 not below --total-nodes 1"*) ;;
    *) echo "FAIL: pd_oracle --jobs said '$got'"; fail=$((fail + 1)) ;; esac
    # The arrival jitter of docs/results/energy.md's seeds: each submit moves by at most the
    # half-width, never below 0, the other columns stay; the same seed gives the same file.
    printf 'job_id,submission_time,duration,num_gpu\na,10,100,1\nb,5000,200,8\nc,9000,50,2\n' >"$T/itp.csv"
    n=$((n + 2))
    tab="$2/scripts/results_energy_tables.py"
    if python3 "$tab" jitter "$T/itp.csv" "$T/j1.csv" 7 900 && python3 "$tab" jitter "$T/itp.csv" "$T/j2.csv" 7 900 &&
        cmp -s "$T/j1.csv" "$T/j2.csv" && ! cmp -s "$T/itp.csv" "$T/j1.csv"; then :; else
        echo "FAIL: jitter not repeatable or not moving anything"; fail=$((fail + 1))
    fi
    got=$(paste -d, "$T/itp.csv" "$T/j1.csv" | awk -F, 'NR > 1 { d = $6 - $2; if (d < 0) d = -d
        if (d > 900 || $6 < 0 || $3 != $7 || $4 != $8) print "bad row " NR }')
    [ -z "$got" ] || { echo "FAIL: jitter: $got"; fail=$((fail + 1)); }
else
    echo "power: pd_oracle checks skipped (no python3 or no source directory)"
fi
echo "power: $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
