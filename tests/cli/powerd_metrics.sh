#!/bin/sh
# SPDX-License-Identifier: MIT
# `ecosched powerd --metrics-listen HOST:PORT`: GET /metrics on a loopback TCP port, the same
# families as on the API socket, valid for `promtool check metrics`; nothing else is served
# there (no status, no budget change); a bad address exits 2 naming the flag (issue 31). No
# Slurm needed: powerd logs that Slurm does not answer and serves its first, empty period.
set -u
ECO="$1"
SRC="${2:-.}"
T=$(mktemp -d /tmp/ecosched-pmetrics.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null; [ -n "$pid" ] && wait "$pid" 2>/dev/null; rm -rf "$T"' EXIT
. "$(dirname "$0")/expect.shlib"
PATH="$PATH:$SRC/.tools/bin"
# stand-ins for Slurm's commands that fail at once: a real sinfo without a cluster waits for
# its controller, which would hold powerd's first period (and its stop) for a minute
mkdir "$T/bin"
for c in sinfo squeue scontrol; do printf '#!/bin/sh\nexit 1\n' >"$T/bin/$c"; chmod +x "$T/bin/$c"; done
expect 0 "--metrics-listen HOST:PORT" -- powerd --help
expect 0 "--node-timeout SECONDS" -- powerd --help
expect 2 "--metrics-listen 'localhost' is not HOST:PORT" -- \
    powerd --budget 1000 --socket "$T/x.sock" --metrics-listen localhost
expect 2 "--metrics-listen '127.0.0.1:70000' is not HOST:PORT" -- \
    powerd --budget 1000 --socket "$T/x.sock" --metrics-listen 127.0.0.1:70000
expect 2 "--node-timeout 5 must be shorter than --period 5" -- \
    powerd --budget 1000 --socket "$T/x.sock" --node-timeout 5
expect 2 "--node-timeout: 'x' is not a number of seconds" -- \
    powerd --budget 1000 --socket "$T/x.sock" --node-timeout x
expect 0 "--node-lease SECONDS" -- powerd --help
expect 2 "--node-lease 5 must be longer than --period + --node-timeout (5.5 s)" -- \
    powerd --budget 1000 --socket "$T/x.sock" --node-lease 5
expect 2 "--node-lease: 'x' is not a number of seconds" -- \
    powerd --budget 1000 --socket "$T/x.sock" --node-lease x
command -v curl >/dev/null || { echo "SKIP: curl not found (Debian: curl)"; exit 77; }
# a free loopback port: a few tries from a pseudo-random start
port=
for try in 1 2 3 4 5; do
    p=$(( ($$ * 7 + try * 7919) % 20000 + 30000 ))
    PATH="$T/bin:$PATH" SLURM_CONF="$T/none.conf" "$ECO" powerd --budget 1000 --period 3600 --nodes "$T/%n.sock" \
        --socket "$T/p.sock" --metrics-listen "127.0.0.1:$p" 2>"$T/powerd.log" &
    pid=$!
    i=0
    while [ $i -lt 50 ] && kill -0 "$pid" 2>/dev/null && ! curl -fsS "http://127.0.0.1:$p/metrics" -o "$T/m.txt" 2>/dev/null; do
        sleep 0.1; i=$((i + 1))
    done
    if [ -s "$T/m.txt" ]; then port=$p; break; fi
    kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; pid=
done
n=$((n + 1))
[ -n "$port" ] || { echo "FAIL: powerd's --metrics-listen never answered:"; head -5 "$T/powerd.log"; fail=$((fail + 1)); echo "powerd_metrics: $((n - fail)) passed, $fail failed"; exit 1; }
check() { # NAME COMMAND...
    n=$((n + 1))
    if ! "$@" >"$T/out" 2>&1; then echo "FAIL: $1 ($*):"; head -5 "$T/out"; fail=$((fail + 1)); fi
}
check grep -q '^ecosched_powerd_budget_watts 1000' "$T/m.txt"
# the same families as the API socket's /metrics
curl -fsS --unix-socket "$T/p.sock" http://x/metrics -o "$T/u.txt"
curl -fsS "http://127.0.0.1:$port/metrics" -o "$T/m.txt"
grep '^# TYPE' "$T/u.txt" >"$T/u.types"
grep '^# TYPE' "$T/m.txt" >"$T/m.types"
check cmp -s "$T/u.types" "$T/m.types"
if command -v promtool >/dev/null; then
    check sh -c "promtool check metrics <'$T/m.txt'"
else
    echo "powerd_metrics: promtool check skipped (sh scripts/setup.sh check unpacks it into .tools/bin)"
fi
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
n=$((n + 4))
[ "$(code "http://127.0.0.1:$port/v1/status")" = 404 ] || { echo "FAIL: /v1/status served on TCP"; fail=$((fail + 1)); }
[ "$(code -X POST -d '{"budget_w":1}' "http://127.0.0.1:$port/v1/budget")" = 404 ] || { echo "FAIL: /v1/budget served on TCP"; fail=$((fail + 1)); }
[ "$(code -X POST -d '' "http://127.0.0.1:$port/metrics")" = 405 ] || { echo "FAIL: POST /metrics not 405"; fail=$((fail + 1)); }
st=$(curl -fsS --unix-socket "$T/p.sock" http://x/v1/status)
case "$st" in *'"budget_w": 1000'*|*'"budget_w":1000'*) ;; *) echo "FAIL: the budget moved: $st"; fail=$((fail + 1)) ;; esac
echo "powerd_metrics: $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
