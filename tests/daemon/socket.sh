#!/bin/sh
# SPDX-License-Identifier: MIT
# ecoschedd and its socket path: a stale socket left by a killed daemon is replaced; a second
# daemon on the socket of a live one refuses to start before it touches the store or the GPUs
# (the first one's job and power cap untouched); a path that is not a socket is never removed.
. "$(dirname "$0")/common.shlib"

# second_daemon: another ecoschedd on the same socket and state directory; its output in $T/second
second_daemon() {
    "$ECOD" --foreground --socket "$SOCK" --state-dir "$T/state" --platform fake \
        --util-window 1 --log-level debug >"$T/second" 2>&1 &
    p=$!
    i=0
    while [ $i -lt 100 ] && kill -0 "$p" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
    if kill -0 "$p" 2>/dev/null; then kill -TERM "$p"; wait "$p"; return 99; fi
    wait "$p"
}

# 1. a regular file where the socket should be: refused, the file kept as it was
echo "precious" >"$SOCK"
timeout 10 "$ECOD" --foreground --socket "$SOCK" --state-dir "$T/state" --platform fake \
    >"$T/out1" 2>&1
rc=$?
check "a regular file at the socket path: start refused (rc $rc)" [ "$rc" -ne 0 ]
check "the refusal says it is not a socket ($(cat "$T/out1"))" grep -q "is not a socket" "$T/out1"
check "the file is left as it was" [ "$(cat "$SOCK" 2>/dev/null)" = precious ]
rm -f "$SOCK"

# 2. a stale socket of a killed daemon does not block the next start
start_daemon
kill -KILL "$DPID"; wait "$DPID" 2>/dev/null; DPID=""
check "the killed daemon left its socket file" [ -S "$SOCK" ]
start_daemon
check "the next start replaced the stale socket and says so" \
    grep -q "removed a stale socket" "$T/daemon.log"

# 3. a live daemon: a second one on its socket refuses, and its job and cap are untouched
j=$("$ECO" submit --gpus 1 --power-cap 150 -- sleep 30)
check "job $j runs" until_state "$j" running
cap_before=$(awk '$1 == "gpu" { print $4 }' "$ECOSCHED_FAKE_NVML_STATE" | sort | tr '\n' ' ')
second_daemon; rc=$?
check "a second daemon on the live socket exits non-zero (rc $rc)" [ "$rc" -ne 0 ] && [ "$rc" -ne 99 ]
check "it says another ecoschedd is running there ($(cat "$T/second"))" \
    grep -q "another ecoschedd is running there" "$T/second"
check "it did not open the store or the GPUs first" \
    sh -c "! grep -q -e recover -e adopt -e 'power limit' -e platform '$T/second'"
check "the first daemon still answers" sh -c "\"$ECO\" gpus >/dev/null"
check "job $j still running" [ "$(field "$j" state)" = running ]
cap_after=$(awk '$1 == "gpu" { print $4 }' "$ECOSCHED_FAKE_NVML_STATE" | sort | tr '\n' ' ')
check "power limits unchanged ($cap_before / $cap_after)" [ "$cap_before" = "$cap_after" ]
"$ECO" cancel "$j" >/dev/null
stop_daemon
check "a clean stop removes the socket" [ ! -e "$SOCK" ]
finish
