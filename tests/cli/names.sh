#!/bin/sh
# SPDX-License-Identifier: MIT
# Names come from the registries: every ops table defined in the sources (queue policies,
# placements, power-down policies, capper families) has its entry in `sim --help` and in the
# "known: ..." message of a bad name; --policy NAME:PARAMS carries parameters (las:T1,T2 as
# --las-thresholds T1,T2), and bad ones exit 2 with a message naming the policy.
set -u
ECO="$1"; SRC="$2"
TRACE="$SRC/data/itp/cluster10.csv.gz"
. "$(dirname "$0")/expect.shlib"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT

# The names of the ops tables of type $1 defined under the given sources: the first .name after
# each "struct $1 ... = {".
names() {
    type="$1"; shift
    awk -v t="struct $type [A-Za-z_0-9]+ = [{]" 'FNR == 1 {want = 0} $0 ~ t {want = 1; next}
        want && /\.name = "/ {sub(/.*\.name = "/, ""); sub(/".*/, ""); print; want = 0}' "$@"
}
P=$(names eco_policy_ops "$SRC"/src/core/policy/*.c)
L=$(names eco_placement_ops "$SRC"/src/core/policy/*.c "$SRC"/src/place/*.c)
D=$(names eco_powerdown_ops "$SRC"/src/core/policy/*.c)
C=$(names eco_capper_ops "$SRC"/src/core/powercap/*.c)
K=$(names eco_carbon_ops "$SRC"/src/core/carbon/*.c)
n=$((n + 1))
if [ "$(echo $P | wc -w)" -lt 7 ] || [ "$(echo $L | wc -w)" -lt 12 ] || [ "$(echo $D | wc -w)" -lt 3 ] ||
   [ "$(echo $C | wc -w)" -lt 5 ] || [ "$(echo $K | wc -w)" -lt 3 ]; then
    echo "FAIL: too few ops tables found in the sources: policies '$P' placements '$L' power-down '$D' cappers '$C'"
    fail=$((fail + 1))
fi
"$ECO" sim --help > "$T/help" 2>&1
# each name has its own entry line ("  NAME   summary"; idle as idle:SECONDS) in its section
section() { awk -v h="$1" 'index($0, h) == 1 {on = 1; next} on && /^$/ {on = 0} on' "$T/help"; }
section "Queue policies" > "$T/policies"
section "Placements" > "$T/placements"
section "Power-down policies" > "$T/powerdown"
section "Power policies" > "$T/cappers"
section "Carbon policies" > "$T/carbon"
entry() { # FILE NAME
    n=$((n + 1))
    grep -Eq "^  $2(:[A-Z]+)? " "$1" || { echo "FAIL: sim --help: no entry for '$2' in $(basename "$1")"; fail=$((fail + 1)); }
}
for p in $P; do entry "$T/policies" "$p"; done
for p in $L; do entry "$T/placements" "$p"; done
for p in $D; do entry "$T/powerdown" "$p"; done
for p in $C; do entry "$T/cappers" "$p"; done
for p in none $K; do entry "$T/carbon" "$p"; done
# and in the "known: ..." messages
known() { # FLAG VALUE NAMES...
    flag="$1"; val="$2"; shift 2
    out=$("$ECO" sim --trace "$TRACE" --cluster 2x8 "$flag" "$val" 2>&1)
    for p in "$@"; do
        n=$((n + 1))
        case "$out" in
            *"known: "*"$p"*) ;;
            *) echo "FAIL: $flag $val: '$p' missing from: $out"; fail=$((fail + 1)) ;;
        esac
    done
}
known --policy rr $P
known --compare fifo,rr $P
known --placement best $L
known --power-down sleep $D
known --power-policy magic $C
CK="$SRC/data/grid_signals/us_eia930_2022/eia930_CISO_2022_carbon.csv.gz"
out=$("$ECO" sim --trace "$TRACE" --cluster 2x8 --carbon "$CK" --carbon-policy psychic 2>&1)
for p in none $K; do
    n=$((n + 1))
    case "$out" in *"known: "*"$p"*) ;; *) echo "FAIL: --carbon-policy: '$p' missing: $out"; fail=$((fail + 1)) ;; esac
done
out=$("$ECO" place --nodes x --items y --algo nope 2>&1)
for p in ffd bfd fgd pso ilp; do
    n=$((n + 1))
    case "$out" in *"known: "*"$p"*) ;; *) echo "FAIL: place --algo: '$p' missing: $out"; fail=$((fail + 1)) ;; esac
done

# --policy las:PARAMS is --policy las --las-thresholds PARAMS (the wall time masked)
run() { "$ECO" sim --trace "$TRACE" --cluster 2x8 --max-jobs 200 --json "$@" 2>&1 | grep -v sim_wall_s; }
run --policy las:100,1000 > "$T/a"; run --policy las --las-thresholds 100,1000 > "$T/b"
run --policy las > "$T/c"
n=$((n + 1))
if ! cmp -s "$T/a" "$T/b" || cmp -s "$T/a" "$T/c" || ! grep -q '"policy": "las"' "$T/a"; then
    echo "FAIL: --policy las:100,1000 differs from --las-thresholds 100,1000 (or equals the defaults)"
    fail=$((fail + 1))
fi
run --compare fifo,las:100,1000,easy > "$T/cmp"
n=$((n + 1))
[ "$(grep -c '"policy"' "$T/cmp")" -eq 3 ] || { echo "FAIL: --compare fifo,las:100,1000,easy is not 3 runs"; fail=$((fail + 1)); }
expect 2 "sim: --policy las: las thresholds: '5,1' must increase" -- sim --trace "$TRACE" --cluster 2x8 --policy las:5,1
expect 2 "sim: --policy las: las thresholds: 'x' is not a comma-separated list" -- sim --trace "$TRACE" --cluster 2x8 --policy las:x
expect 2 "sim: --compare las: las thresholds: '5,1' must increase" -- sim --trace "$TRACE" --cluster 2x8 --compare fifo,las:5,1
expect 2 "sim: --policy fifo: this policy takes no parameters (got '3')" -- sim --trace "$TRACE" --cluster 2x8 --policy fifo:3
expect 2 "las already has its thresholds from its name (las:1,2)" -- sim --trace "$TRACE" --cluster 2x8 --policy las:1,2 --las-thresholds 3,4
expect 2 "unknown policy 'lass:1'" -- sim --trace "$TRACE" --cluster 2x8 --policy lass:1
echo "names: $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
