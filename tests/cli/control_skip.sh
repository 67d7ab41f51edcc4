#!/bin/sh
# SPDX-License-Identifier: MIT
# `sim --control-skip`: skipping settled control periods (the default) runs far fewer ticks
# than the 1 s loop (--control-skip off) and agrees with it on a small capped case within the
# tolerances docs/policies/powercap.md states; a bad value exits 2 naming the flag.
set -u
ECO="$1"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TRACE="$ROOT/data/itp/cluster02.csv.gz"
. "$(dirname "$0")/expect.shlib"
[ -r "$TRACE" ] || { echo "SKIP: $TRACE is missing"; exit 77; }
expect 2 "--control-skip: expected on or off (got 'maybe')" -- sim --trace "$TRACE" \
    --cluster 2x8:V100 --power-budget 5000 --control-skip maybe
run() { # $1: on|off, $2: policy; prints the summary row's named columns
    "$ECO" sim --trace "$TRACE" --cluster 20x8:V100,20x8:A40 --policy easy --max-jobs 300 \
        --power-policy "$2" --power-budget 60000 --deadlines factor:1.5-3 \
        --workload-mix default --control-skip "$1" --seed "${3:-1}" |
        awk 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
             { print $col["avg_jct_h"], $col["energy_kwh"], $col["events"], $col["dl_miss"], $col["cap_mae%"] }'
}
# mpc's MAE over the binding periods, a few per cent of them, moves by up to 0.15 points from
# seed to seed with the skip (a held span keeps one error where the 1 s loop averages many):
# for mpc the MAE compared is the mean over seeds 1-3 (each seed: the same seed for both), for
# uniform, which holds since its integral no longer rings (0.25 to 0.63 over seeds 1-8 on the
# clock knob), over seeds 1-5.
mean_mae() { # $1: on|off, $2: the case (run|slack), $3: policy, $4: knob (slack), $5: seeds
    m=0
    seed=1
    while [ "$seed" -le "$5" ]; do
        if [ "$2" = run ]; then
            x=$(run "$1" "$3" "$seed" | awk '{ print $5 }')
        else
            x=$(slack "$1" "$3" "$4" "$seed" | awk '{ print $5 }')
        fi
        m=$(echo "$m $x $5" | awk '{ print $1 + $2 / $3 }')
        seed=$((seed + 1))
    done
    echo "$m"
}
# Reads "off-row on-row" (the five fields of run each); prints ok or the fields that differ.
# $1: the MAE tolerance in points (negative: not checked), $2: the least ratio of events.
judge() {
    awk -v tol="$1" -v ratio="$2" '{
        bad = ""
        if ($6 > $1 * 1.005 || $6 < $1 * 0.995) bad = bad " avg_jct"
        if ($7 > $2 * 1.005 || $7 < $2 * 0.995) bad = bad " energy"
        if ($9 - $4 > 0.02 || $4 - $9 > 0.02) bad = bad " dl_miss"
        if (tol >= 0 && ($10 - $5 > tol || $5 - $10 > tol)) bad = bad " mae"
        if ($8 * ratio > $3) bad = bad " events"
        print bad == "" ? "ok" : bad }'
}
for pol in mpc proportional; do
    n=$((n + 1))
    off=$(run off $pol)
    on=$(run on $pol)
    if [ "$pol" = mpc ]; then # the MAE field becomes the mean over seeds 1-3
        off=$(echo "$off" | awk -v m="$(mean_mae off run mpc limit 3)" '{ $5 = m; print }')
        on=$(echo "$on" | awk -v m="$(mean_mae on run mpc limit 3)" '{ $5 = m; print }')
    fi
    # JCT and energy within 0.5 %, miss ratio within 0.02, MAE within 0.1 points (0.2 for
    # proportional, whose limits follow the measured noise: docs/policies/powercap.md), and at
    # least 3x fewer events (ticks) than the 1 s loop.
    tol=0.1
    [ "$pol" = proportional ] && tol=0.2
    verdict=$(echo "$off $on" | judge "$tol" 3)
    if [ "$verdict" != ok ]; then
        echo "FAIL: $pol: skip on ($on) vs off ($off) differ in:$verdict"
        fail=$((fail + 1))
    fi
done
# Slack (docs/policies/powercap.md, "Slack"): a cluster mostly idle, whose budget binds in a few
# per cent of the periods, for every capper and both knobs. The 1 s loop and the skip agree on
# JCT and energy within 0.5 % and misses within 0.02; on MAE within 0.1 points for mpc, uniform
# (means over seeds, above) and oracle, 0.2 for proportional (its limits follow the measured noise). threshold's MAE
# (few binding periods, each an overshoot it reacts to) and mpc's on the clock knob differ more
# and are not checked (the docs give the figures). At least 10x fewer events.
slack() { # $1: on|off, $2: policy, $3: knob
    "$ECO" sim --trace "$TRACE" --cluster 40x8:V100 --policy easy --max-jobs 300 \
        --power-policy "$2" --power-budget 45000 --deadlines factor:1.5-3 \
        --workload-mix default --power-knob "$3" --control-skip "$1" --seed "${4:-1}" |
        awk 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
             { print $col["avg_jct_h"], $col["energy_kwh"], $col["events"], $col["dl_miss"], $col["cap_mae%"] }'
}
for case in mpc:limit uniform:limit proportional:limit threshold:limit oracle:limit \
    mpc:clock uniform:clock threshold:clock oracle:clock; do
    pol=${case%%:*} knob=${case#*:}
    n=$((n + 1))
    off=$(slack off "$pol" "$knob")
    on=$(slack on "$pol" "$knob")
    seeds=0
    [ "$case" = mpc:limit ] && seeds=3
    [ "$pol" = uniform ] && seeds=5
    if [ "$seeds" -gt 0 ]; then
        off=$(echo "$off" | awk -v m="$(mean_mae off slack "$pol" "$knob" $seeds)" '{ $5 = m; print }')
        on=$(echo "$on" | awk -v m="$(mean_mae on slack "$pol" "$knob" $seeds)" '{ $5 = m; print }')
    fi
    tol=0.1
    [ "$pol" = proportional ] && tol=0.2
    [ "$pol" = threshold ] || [ "$case" = mpc:clock ] && tol=-1
    verdict=$(echo "$off $on" | judge "$tol" 10)
    if [ "$verdict" != ok ]; then
        echo "FAIL: slack $case: skip on ($on) vs off ($off) differ in:$verdict"
        fail=$((fail + 1))
    fi
done
echo "control_skip: $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
