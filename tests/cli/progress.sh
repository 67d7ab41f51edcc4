#!/bin/sh
# SPDX-License-Identifier: MIT
# Progress of long runs on stderr: under a pseudo-terminal (`script` from bsdutils) a
# power-capped sim, `sim --placement ilp`, `place --algo pso`, `place --algo ilp` and
# `place --sweep` draw a progress line; with stderr in a file they print none (unless --progress), --no-progress
# silences the terminal, and stdout is the same either way.
set -u
ECO="$1"; SRC="$2"
T=$(mktemp -d /tmp/ecosched-progress.XXXXXX)
trap 'rm -rf "$T"' EXIT
if ! command -v script >/dev/null; then
    echo "SKIP: script (bsdutils) not found: no pseudo-terminal to run under"
    exit 77
fi
fail=0; n=0
check() {
    what="$1"; shift
    n=$((n + 1))
    if ! "$@"; then echo "FAIL: $what"; fail=$((fail + 1)); fi
}
# tty FILE CMD...: runs CMD with stdin, stdout and stderr on a pseudo-terminal, output in FILE
tty() {
    out="$1"; shift
    script -qec "$*" /dev/null > "$out" 2>&1 </dev/null
}
TRACE="$SRC/data/itp/cluster02.csv.gz"
OPENB="$SRC/data/alibaba_gpu_v2023_openb"
# about 2.5 s in the Release build (a line is due each second, so two or more lines): mpc
# re-plans each control period (the 1 s loop; skipping settled periods, the default, finishes
# this case too fast to draw a line)
CAP="sim --trace $TRACE --cluster 20x8:V100,20x8:A40 --policy easy --power-policy mpc \
--power-budget 60000 --workload-mix default --max-jobs 300 --control-skip off -q"
# about 2 s: the 245th job makes the batch ILP of some passes work
ILP="sim --trace $TRACE --cluster 16x8:V100 --placement ilp --max-jobs 245 -q"
zcat "$OPENB/openb_node_list_gpu_node.csv.gz" | head -21 > "$T/nodes.csv"
zcat "$OPENB/openb_pod_list_default.csv.gz" | head -61 > "$T/items.csv"

# power-capped sim: the line on a terminal, none in a file, the same stdout
tty "$T/cap.tty" "$ECO" $CAP
check "sim mpc on a terminal: a progress line ($(tr '\r' '\n' < "$T/cap.tty" | grep -m1 'jobs done'))" \
    grep -q 'sim easy (1/1): simulated [0-9.]* d, [0-9]*/300 jobs done ([0-9]*%), [0-9.]* s wall' "$T/cap.tty"
check "... redrawn in place with \\r" sh -c "tr '\\r' '\\n' < '$T/cap.tty' | grep -c 'jobs done' | grep -qv '^[01]$'"
# shellcheck disable=SC2086
"$ECO" $CAP --json > "$T/cap.out" 2> "$T/cap.err"
check "sim mpc, stderr a file: no progress ($(head -c 200 "$T/cap.err"))" \
    sh -c "! grep -q 'jobs done' '$T/cap.err'"
# shellcheck disable=SC2086
"$ECO" $CAP --json --progress > "$T/cap2.out" 2> "$T/cap2.err"
check "sim mpc --progress, stderr a file: progress lines, one per line" \
    sh -c "grep -q '^sim easy (1/1): .* jobs done' '$T/cap2.err' && ! grep -q \"\$(printf '\\r')\" '$T/cap2.err'"
check "... and the same stdout (but the wall time)" \
    sh -c "grep -v wall '$T/cap.out' > '$T/a'; grep -v wall '$T/cap2.out' > '$T/b'; cmp -s '$T/a' '$T/b'"
tty "$T/cap3.tty" "$ECO" $CAP --no-progress
check "sim mpc --no-progress on a terminal: none" sh -c "! grep -q 'jobs done' '$T/cap3.tty'"
check "--help names --progress" sh -c "'$ECO' sim --help | grep -q -- '--no-progress'"

# sim --placement ilp
tty "$T/ilp.tty" "$ECO" $ILP
check "sim --placement ilp on a terminal: a progress line" \
    grep -q 'sim fifo (1/1): simulated .* jobs done' "$T/ilp.tty"

# place --algo pso and ilp
tty "$T/pso.tty" "$ECO" place --nodes "$OPENB/openb_node_list_gpu_node.csv.gz" \
    --items "$OPENB/openb_pod_list_default.csv.gz" --algo pso --time-limit 1.5
check "place pso on a terminal: a progress line ($(tr '\r' '\n' < "$T/pso.tty" | grep -m1 'place pso'))" \
    grep -q 'place pso: \(seeding\|iterating\) [0-9]*/[0-9]*, best [0-9]* placed, objective .* s of 1.5 s' "$T/pso.tty"
check "... the result still printed, after the line is cleared" \
    grep -q "$(printf '\r\033')\\[Kalgo pso (objective hosts)" "$T/pso.tty"
tty "$T/lp.tty" "$ECO" place --nodes "$T/nodes.csv" --items "$T/items.csv" --algo ilp --time-limit 1.5
check "place ilp on a terminal: a progress line ($(tr '\r' '\n' < "$T/lp.tty" | grep -m1 'place ilp'))" \
    grep -q 'place ilp: branch and cut [0-9]* nodes' "$T/lp.tty"
"$ECO" place --nodes "$T/nodes.csv" --items "$T/items.csv" --algo ilp --time-limit 1.5 \
    > "$T/lp.out" 2> "$T/lp.err"
check "place ilp, stderr a file: no progress" sh -c "! grep -q 'branch and cut' '$T/lp.err'"
check "place --help names --progress" sh -c "'$ECO' place --help | grep -q -- '--no-progress'"

# place --sweep: a line at each placement (seed and algorithm), on a terminal only unless
# --progress, and the same stdout
SW="place --sweep --nodes $T/nodes.csv --items $T/items.csv --algo random,fgd --seeds 1-2 --sweep-step 10"
# shellcheck disable=SC2086
tty "$T/sw.tty" "$ECO" $SW
check "place --sweep on a terminal: a progress line ($(tr '\r' '\n' < "$T/sw.tty" | grep -m1 'place --sweep'))" \
    grep -q 'place --sweep: placement 4/4 (seed 2, fgd), [0-9.]* s' "$T/sw.tty"
# shellcheck disable=SC2086
"$ECO" $SW > "$T/sw.out" 2> "$T/sw.err"
check "place --sweep, stderr a file: no progress" sh -c "! grep -q 'place --sweep:' '$T/sw.err'"
# shellcheck disable=SC2086
"$ECO" $SW --progress > "$T/sw2.out" 2> "$T/sw2.err"
check "place --sweep --progress, stderr a file: one line per placement" \
    [ "$(grep -c '^place --sweep: placement [1-4]/4 (seed [12], ' "$T/sw2.err")" -eq 4 ]
check "... and the same stdout" cmp -s "$T/sw.out" "$T/sw2.out"

echo "progress: $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
