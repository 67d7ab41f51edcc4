#!/bin/sh
# SPDX-License-Identifier: MIT
# `ecosched powerd` and `ecosched power`: bad flags and values exit 2 naming what to fix, an
# absent controller exits 1, and the ResumeProgram expands Slurm hostlists (no Slurm needed).
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
echo "power: $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
