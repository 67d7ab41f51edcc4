#!/bin/sh
# SPDX-License-Identifier: MIT
# The README's command lines work as written on a minimal Debian root (issue 30): no `sudo`
# (absent there; the README says which lines need root), no `pidof` to stop the daemon (it
# names every ecoschedd of the host: the pid file names this one), no two simulator examples
# writing to the same --out directory (the second overwrites the first's files); the JSON
# cluster example sized for its trace and the capping example under a budget that binds.
set -u
SRC="$2"
fail=0; n=0
check() {
    what="$1"; shift
    n=$((n + 1))
    if ! "$@"; then echo "FAIL: $what"; fail=$((fail + 1)); fi
}
# the shell lines of the ```sh blocks, continuation lines joined
awk '/^```sh/ { on = 1; next } /^```/ { on = 0 } on' "$SRC/README.md" |
    sed -e ':a' -e '/\\$/N; s/\\\n//; ta' >"${TMPDIR:-/tmp}/ecosched-readme.$$"
L="${TMPDIR:-/tmp}/ecosched-readme.$$"
trap 'rm -f "$L"' EXIT
check "README: a command line uses sudo: $(grep -n 'sudo ' "$L" | grep -v '^[0-9]*:#' | head -1)" \
    sh -c "! grep -v '^ *#' '$L' | grep -q '\\bsudo '"
check "README: the daemon is stopped by pidof: $(grep -n pidof "$L" | head -1)" \
    sh -c "! grep -v '^ *#' '$L' | grep -q pidof"
dups=$(grep -o -- '--out [^ ]*' "$L" | awk '{ d = $2; sub(/\/$/, "", d); print d }' | sort | uniq -d)
check "README: examples share an --out directory: $dups" [ -z "$dups" ]
# the simulator examples run as written (from the checkout, T the README's trace) and make sense:
# the JSON cluster fits the trace (no job rejected), the capping example's budget binds
T=data/itp/cluster02.csv.gz
run_example() { # $1: a pattern of the example's line; prints its --json summary
    line=$(grep -e "$1" "$L" | grep '^build/ecosched sim' | head -1)
    [ -n "$line" ] || { echo "no README example matches $1" >&2; return 1; }
    line=$(echo "$line" | sed -e "s|^build/ecosched|$ECO|" -e 's|\$T|'"$T"'|g' \
        -e 's| --out [^ ]*||' -e 's| --json||' -e 's| --sample-s [^ ]*||')
    # shellcheck disable=SC2086 # the example's words
    (cd "$SRC" && $line --json --quiet)
}
jfield() { awk -v k="\"$1\":" '$1 == k { v = $2; sub(/,$/, "", v); print v; exit }'; }
ECO="$1"
case "$ECO" in /*) ;; */*) ECO="$PWD/$ECO" ;; esac
if [ -r "$SRC/$T" ]; then
    js=$(run_example 'cluster [^ ]*\.json')
    check "README: the JSON-cluster example rejects no job ($(echo "$js" | jfield rejected))" \
        [ "$(echo "$js" | jfield rejected)" = 0 ]
    js=$(run_example '--power-budget')
    cp=$(echo "$js" | jfield capped_periods)
    check "README: the capping example's budget binds (capped_periods '$cp')" \
        sh -c "[ -n '$cp' ] && [ '$cp' -gt 0 ]"
else
    echo "note: $T not found: the examples not run"
fi
echo "readme: $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
