#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/bench_powerd_nodes.c with a private munged (its own key and socket, as
# tests/daemon/cluster-auth.sh starts them) for its --node-auth munge rows; without munged, or
# when it does not start, the rows without credentials alone. Usage: bench_powerd_nodes.sh BUILD
BUILD=${1:-build}
T=$(mktemp -d /tmp/eco-bpn-munge.XXXXXX)
MPID=
stop() { [ -n "$MPID" ] && kill "$MPID" 2>/dev/null; wait 2>/dev/null; rm -rf "$T"; }
trap stop EXIT
if command -v munged >/dev/null && command -v munge >/dev/null; then
    dd if=/dev/urandom of="$T/key" bs=1024 count=1 2>/dev/null && chmod 400 "$T/key"
    munged -F --force --socket="$T/sock" --key-file="$T/key" --pid-file="$T/pid" \
        --log-file="$T/log" --seed-file="$T/seed" 2>>"$T/log" &
    MPID=$!
    i=0
    until munge -n -S "$T/sock" >/dev/null 2>&1 || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done
    if [ $i -lt 50 ]; then
        export ECO_BENCH_MUNGE_SOCKET="$T/sock"
    else
        echo "bench_powerd_nodes.sh: munged did not start ($(tail -1 "$T/log")): no MUNGE rows" >&2
    fi
fi
"$BUILD/eco_bench_powerd_nodes"
