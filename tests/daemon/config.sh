#!/bin/sh
# SPDX-License-Identifier: MIT
# ecoschedd --config: a good file is used (command-line options override it); bad files
# (unknown key, bad value, non-loopback tcp_listen, missing '=', repeated key, missing file)
# are refused with exit 2 and a message naming file, line and key, before anything is applied.
. "$(dirname "$0")/common.shlib"

C="$T/ecoschedd.conf"
cat >"$C" <<EOC
# a complete file
socket = $SOCK
state_dir = $T/state
platform = fake
log_level = error
util_window_s = 1
grace_s = 5
tick_s = 0.5
auto_cap_max_slowdown = 0.25
EOC

# good file; --log-level on the command line overrides the file's "error"
"$ECOD" --config "$C" --foreground --log-level info 2>>"$T/daemon.log" &
DPID=$!
i=0; while [ $i -lt 100 ] && ! "$ECO" gpus >/dev/null 2>&1; do sleep 0.1; i=$((i + 1)); done
check "daemon serves on the config file's socket" sh -c "'$ECO' gpus >/dev/null"
check "state_dir from the file" [ -f "$T/state/jobs.db" ]
j=$("$ECO" submit --power-cap auto -- true)
"$ECO" wait "$j"
check "auto_cap_max_slowdown from the file" grep -q "job $j: power_cap auto: .*<= 25%" "$T/daemon.log"
check "--log-level overrides the file (info lines)" grep -q "info: main: ecoschedd" "$T/daemon.log"
stop_daemon

# bad BODY EXPECTED: a file with BODY is refused with exit 2 and EXPECTED on stderr.
bad() {
    printf '%s\n' "$1" >"$T/bad.conf"
    rm -rf "$T/bad-state"
    "$ECOD" --config "$T/bad.conf" --foreground --state-dir "$T/bad-state" \
        --socket "$T/bad.sock" >"$T/bad.out" 2>&1
    rc=$?
    check "refused with exit 2 ($rc): $2" [ "$rc" -eq 2 ]
    check "message '$2' ($(cat "$T/bad.out"))" grep -qF "$2" "$T/bad.out"
    check "nothing applied for '$2'" [ ! -e "$T/bad-state" -a ! -e "$T/bad.sock" ]
}
bad "$(printf '# c\nplatform = none\nbogus = 1')" "$T/bad.conf:3: unknown key 'bogus'"
bad "$(printf 'tick_s = 0')" "$T/bad.conf:1: key 'tick_s': '0' is not a number of seconds 0.1..60"
bad "$(printf 'grace_s = soon')" "$T/bad.conf:1: key 'grace_s': 'soon' is not a number"
bad "$(printf 'auto_cap_max_slowdown = 1.5')" "$T/bad.conf:1: key 'auto_cap_max_slowdown': '1.5'"
bad "$(printf 'log_level = loud')" "$T/bad.conf:1: key 'log_level': must be error"
bad "$(printf 'platform = cuda')" "$T/bad.conf:1: key 'platform': must be nvml, fake, none or auto"
bad "$(printf 'socket =')" "$T/bad.conf:1: key 'socket': needs a value"
bad "$(printf 'tcp_listen = 0.0.0.0:8080\ntcp_token_file = /t')" \
    "$T/bad.conf:1: key 'tcp_listen': only loopback addresses"
bad "$(printf 'tcp_listen = 10.1.2.3:80\ntcp_token_file = /t')" "key 'tcp_listen': only loopback"
bad "$(printf 'tcp_listen = 127.0.0.1:99999\ntcp_token_file = /t')" "port must be 1..65535"
bad "$(printf 'tcp_listen = 127.0.0.1:8080')" "$T/bad.conf:1: key 'tcp_listen': needs tcp_token_file"
bad "$(printf 'queue_policy = sjf')" "$T/bad.conf:1: key 'queue_policy': must be fifo, greedy or edf"
bad "$(printf 'platform = none\ngpu_strategy = random')" "$T/bad.conf:2: key 'gpu_strategy': must be exclusive"
bad "$(printf 'memthr_wait_s = -1')" "$T/bad.conf:1: key 'memthr_wait_s'"
bad "$(printf 'just words')" "$T/bad.conf:1: expected 'key = value'"
bad "$(printf 'grace_s = 1\ngrace_s = 2')" "$T/bad.conf:2: key 'grace_s': already set on line 1"
# every error of a file is reported, not only the first
bad "$(printf 'a = 1\nb = 2')" "$T/bad.conf:2: unknown key 'b'"

"$ECOD" --config "$T/missing.conf" --foreground >"$T/bad.out" 2>&1; rc=$?
check "missing --config file: exit 2 ($rc)" [ "$rc" -eq 2 ]
check "missing --config file named" grep -q "missing.conf" "$T/bad.out"
finish
