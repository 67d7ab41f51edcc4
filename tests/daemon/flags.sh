#!/bin/sh
# SPDX-License-Identifier: MIT
# Every ecoschedd option sets its config key through the config table (ecod__config_set): a bad
# value is refused with exit 2 before anything is touched, with the message it always had,
# and the bounds of the config file's keys hold on the command line too (a --socket longer
# than sun_path, a --state-dir longer than the state_dir key).
. "$(dirname "$0")/common.shlib"

# flag VALUE EXPECTED: `ecoschedd FLAG VALUE` exits 2 with EXPECTED on stderr, no state made.
flag() {
    rm -rf "$T/f-state"
    "$ECOD" --foreground --state-dir "$T/f-state" --socket "$T/f.sock" "$1" "$2" \
        >"$T/f.out" 2>&1
    rc=$?
    check "$1 (${#2} bytes): exit 2 ($rc)" [ "$rc" -eq 2 ]
    check "$1 (${#2} bytes): says: $3" grep -qF -- "$3" "$T/f.out"
    check "$1 (${#2} bytes): nothing created" [ ! -e "$T/f-state" ]
}

flag --grace -1 "ecoschedd: --grace: '-1' is not a number of seconds 0..86400"
flag --util-window abc "ecoschedd: --util-window: 'abc' is not a number of seconds 0..86400"
flag --memthr-wait 90000 "ecoschedd: --memthr-wait: '90000' is not a number of seconds 0..86400"
flag --queue-policy nope "ecoschedd: --queue-policy: 'nope' is not fifo, greedy or edf"
flag --log-level loud "ecoschedd: --log-level: 'loud' is not error, warning, info or debug"
flag --gpu-strategy x "ecoschedd: --gpu-strategy: unknown 'x' (exclusive, memory-threshold, live or share-fit)"
flag --platform x "ecoschedd: --platform: unknown 'x' (nvml, fake, none or auto)"
flag --power-budget -3 "ecoschedd: power_budget_w '-3': '-3' is not a power in watts 0..100000"
flag --tcp-listen 10.0.0.1:80 "ecoschedd: tcp_listen '10.0.0.1:80': only loopback addresses"
long=$(printf 'a%.0s' $(seq 1 120))
flag --socket "$T/$long" "ecoschedd: --socket: longer than 107 bytes"
flag --state-dir "/tmp/$(printf "$long%.0s" $(seq 1 35))" "ecoschedd: --state-dir: longer than 3999 bytes"

# the last of a repeated option wins, as with getopt
start_daemon --grace 5 --grace 7 --queue-policy greedy
check "the daemon runs with options from the table" sh -c "'$ECO' gpus >/dev/null"
stop_daemon

finish
