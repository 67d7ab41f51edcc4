#!/bin/sh
# SPDX-License-Identifier: MIT
# The cluster listener (cluster_listen) with MUNGE credentials, on two private munged (the
# second with another key): a credential bound to the request is served (200); none, a garbled
# one, a replayed one, an expired one, one for another path or body, one of the other key are
# 401 naming why;
# an unprivileged user's is 403 unless cluster_read_users (GET) or cluster_admin_user (POST)
# lets it; a root POST changes the fake GPU's limit; munged gone is 503; powerd reaches the
# node with --node-auth munge (and not without) over https with --node-ca; bad settings are
# refused at start naming the key. Needs root and munged (installed when missing; skipped,
# exit 77, with the reason otherwise), curl, and openssl for the TLS part.
. "$(dirname "$0")/common.shlib"
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (private munged daemons, credentials of another user)"
command -v curl >/dev/null || skip "curl missing (sh scripts/setup.sh check)"
if ! command -v munged >/dev/null || ! command -v munge >/dev/null; then
    echo "installing: munge"
    { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends munge; } \
        >/dev/null 2>&1 || skip "munged missing and could not install munge with apt-get"
fi
PATH="$PATH:/usr/sbin:/sbin"
MPIDS=""
trap 'for p in $MPIDS; do kill "$p" 2>/dev/null; done; cleanup' EXIT

# start_munged NAME: a munged of its own key on $T/NAME.sock
start_munged() {
    dd if=/dev/urandom of="$T/$1.key" bs=1024 count=1 2>/dev/null && chmod 400 "$T/$1.key"
    munged -F --force --socket="$T/$1.sock" --key-file="$T/$1.key" --pid-file="$T/$1.pid" \
        --log-file="$T/$1.log" --seed-file="$T/$1.seed" 2>>"$T/$1.log" &
    MPIDS="$MPIDS $!"
    i=0
    until munge -n -S "$T/$1.sock" >/dev/null 2>&1; do
        i=$((i + 1)); [ $i -lt 50 ] || skip "munged did not start: $(tail -2 "$T/$1.log")"
        sleep 0.1
    done
}
start_munged m1
start_munged m2
M1="$T/m1.sock"
# ports below the ephemeral range (32768..), apart from tcp.sh's
PORT=$((10000 + $$ % 10000)); PORT2=$((PORT + 1))
URL="http://127.0.0.1:$PORT"

"$ECOD" --foreground --socket "$T/x.sock" --state-dir "$T/x" --platform none \
    --cluster-listen "127.0.0.1:$PORT" --munge-socket "$M1" 2>"$T/err" &
xp=$!; sleep 0.3; kill "$xp" 2>/dev/null; wait "$xp" 2>/dev/null
grep -q "built without libmunge" "$T/err" && skip "ecoschedd was built without libmunge (libmunge-dev)"

# payload, cred: MUNGE credentials bound to a request (docs/http-api.md)
. "$SRC/tests/munge.shlib"
# req CRED METHOD PATH [BODY]: HTTP status, the answer in $T/r
req() {
    if [ "$2" = POST ]; then
        curl -s -o "$T/r" -w '%{http_code}' ${1:+-H "Authorization: MUNGE $1"} \
            -H 'Content-Type: application/json' -d "$4" "$URL$3"
    else
        curl -s -o "$T/r" -w '%{http_code}' ${1:+-H "Authorization: MUNGE $1"} "$URL$3"
    fi
}
limit0() {
    curl -s --unix-socket "$SOCK" http://x/v1/gpus | grep -o '"power_limit_w":[0-9.]*' | head -1 |
        cut -d: -f2
}
B200='{"power_limit_w":200}'

start_daemon --cluster-listen "127.0.0.1:$PORT" --munge-socket "$M1"
check "start-up names the cluster listener" grep -q "also serving on http 127.0.0.1:$PORT for MUNGE" "$T/daemon.log"
c=$(cred "$M1" GET /v1/node "")
code=$(req "$c" GET /v1/node)
check "GET /v1/node with root's credential: 200 (got $code)" [ "$code" = 200 ]
check "... the node's answer" grep -q '"gpus"' "$T/r"
code=$(req "$c" GET /v1/node)
check "the same credential again: 401 (got $code)" [ "$code" = 401 ]
check "... credential replayed" grep -q "credential replayed" "$T/r"
code=$(req "" GET /v1/node)
check "no header: 401 (got $code)" [ "$code" = 401 ]
check "... says what to send" grep -q "no Authorization header" "$T/r"
check "401 carries WWW-Authenticate: MUNGE" sh -c "curl -s -D - -o /dev/null '$URL/v1/node' | grep -qi '^WWW-Authenticate: MUNGE'"
code=$(curl -s -o "$T/r" -w '%{http_code}' -H "Authorization: MUNGE" "$URL/v1/node")
check "a garbled header: 401 (got $code)" [ "$code" = 401 ]
check "... garbled" grep -q "garbled Authorization header" "$T/r"
code=$(req "$(cred "$M1" GET /v1/gpus "")" GET /v1/node)
check "a credential for another path: 401 (got $code)" [ "$code" = 401 ]
check "... names both paths" grep -q "made for path /v1/gpus, not /v1/node" "$T/r"
code=$(req "$(cred "$M1" POST /v1/gpus/0/limit '{"power_limit_w":210}')" POST /v1/gpus/0/limit "$B200")
check "a credential for another body: 401 (got $code)" [ "$code" = 401 ]
check "... another body" grep -q "another body" "$T/r"
code=$(req "$(cred "$M1" POST /v1/node "")" GET /v1/node)
check "a credential for another method: 401 (got $code)" [ "$code" = 401 ]
code=$(req "$(cred "$T/m2.sock" GET /v1/node "")" GET /v1/node)
check "a credential of another munge key: 401 (got $code)" [ "$code" = 401 ]
check "... another munge key" grep -q "another munge key" "$T/r"
c=$(payload GET /v1/node "" | munge -S "$M1" -t 1); sleep 2.2
code=$(req "$c" GET /v1/node)
check "a credential past its TTL: 401 (got $code)" [ "$code" = 401 ]
check "... says the clocks differ by more than the TTL, and what to run" \
    grep -q "expired or from the future: clocks of the two hosts differ by more than munge's TTL (1 s).*NTP" "$T/r"
code=$(req "garbage-not-a-credential" GET /v1/node)
check "not a credential: 401 (got $code)" [ "$code" = 401 ]
code=$(req "$(cred "$M1" POST /v1/gpus/0/limit "$B200" nobody)" POST /v1/gpus/0/limit "$B200")
check "nobody's POST limit: 403 (got $code)" [ "$code" = 403 ]
check "... names the uid" grep -q "uid 65534 may not POST" "$T/r"
code=$(req "$(cred "$M1" GET /v1/node "" nobody)" GET /v1/node)
check "nobody's GET by default: 403 (got $code)" [ "$code" = 403 ]
check "... names the uid" grep -q "uid 65534 may not read" "$T/r"
code=$(req "$(cred "$M1" POST /v1/gpus/0/limit "$B200")" POST /v1/gpus/0/limit "$B200")
check "root's POST limit: 200 (got $code)" [ "$code" = 200 ]
check "... the fake GPU's limit is 200 W (got $(limit0))" [ "$(limit0)" = 200.0 ]
code=$(req "$(cred "$M1" GET /v1/status "")" GET /v1/status)
check "the other routes act as the credential's uid" grep -q '"peer_uid":0' "$T/r"

# powerd without credentials: the node refuses it, the limit stays
mkdir -p "$T/bin"
printf '#!/bin/sh\necho %s\n' "'{\"nodes\":[{\"name\":\"127.0.0.1\",\"gres\":\"gpu:2\",\"state\":\"idle\",\"weight\":1}]}'" >"$T/bin/sinfo"
printf '#!/bin/sh\necho %s\n' "'{\"jobs\":[]}'" >"$T/bin/squeue"
printf '#!/bin/sh\nexit 0\n' >"$T/bin/scontrol"
chmod +x "$T/bin/sinfo" "$T/bin/squeue" "$T/bin/scontrol"
# powerd_run SECONDS OPTIONS...: powerd beside the fake Slurm for a while
powerd_run() {
    s="$1"; shift
    PATH="$T/bin:$PATH" timeout -s TERM "$s" "$ECO" powerd --budget 1000 --period 1 --no-weights \
        --socket "$T/powerd.sock" "$@" >>"$T/powerd.log" 2>&1
}
: >"$T/powerd.log"
powerd_run 3 --nodes "http://%n:$PORT"
check "powerd without --node-auth: the limit stays 200 W (got $(limit0))" [ "$(limit0)" = 200.0 ]
check "... the node is down for it, and powerd says why" \
    grep -q "node 127.0.0.1: no answer from its ecoschedd (HTTP 401: no Authorization header" "$T/powerd.log"
"$ECO" powerd --budget 1000 --nodes "http://%n:$PORT" --node-auth munge \
    --munge-socket "$T/none.sock" --socket "$T/powerd.sock" >"$T/perr" 2>&1; rc=$?
check "powerd --node-auth munge without munged: exit non-zero (got $rc)" [ "$rc" -ne 0 ]
check "... munged not reachable" grep -q "munged not reachable" "$T/perr"
"$ECO" powerd --budget 1000 --node-auth kerberos --socket "$T/powerd.sock" >"$T/perr" 2>&1; rc=$?
check "powerd --node-auth kerberos: usage error (got $rc)" [ "$rc" -eq 2 ]
check "... names the option" grep -q "\-\-node-auth: 'kerberos' is not none or munge" "$T/perr"

# munged gone: 503, and the daemon goes on
kill "$(cat "$T/m1.pid")"; sleep 0.3
code=$(req "AAAA" GET /v1/node)
check "munged gone: 503 (got $code)" [ "$code" = 503 ]
check "... munged not reachable" grep -q "munged not reachable" "$T/r"
stop_daemon
start_munged m1

# readers and the admin from the config file
cat >"$T/c.conf" <<EOF
cluster_listen = 127.0.0.1:$PORT
munge_socket = $M1
cluster_read_users = *
cluster_admin_user = nobody
EOF
start_daemon --config "$T/c.conf"
code=$(req "$(cred "$M1" GET /v1/node "" nobody)" GET /v1/node)
check "cluster_read_users = *: nobody's GET 200 (got $code)" [ "$code" = 200 ]
code=$(req "$(cred "$M1" POST /v1/gpus/0/limit '{"power_limit_w":220}' nobody)" POST /v1/gpus/0/limit '{"power_limit_w":220}')
check "cluster_admin_user = nobody: its POST limit 200 (got $code)" [ "$code" = 200 ]
check "... the limit is 220 W (got $(limit0))" [ "$(limit0)" = 220.0 ]
stop_daemon

# https (cluster_tls_*), and powerd with --node-auth munge and --node-ca
if command -v openssl >/dev/null &&
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/key.pem" -out "$T/cert.pem" -days 1 \
        -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1; then
    cat >"$T/tls.conf" <<EOF
cluster_listen = 127.0.0.1:$PORT2
munge_socket = $M1
cluster_tls_cert = $T/cert.pem
cluster_tls_key = $T/key.pem
EOF
    start_daemon --config "$T/tls.conf"
    check "start-up says https" grep -q "also serving on https 127.0.0.1:$PORT2" "$T/daemon.log"
    code=$(curl -s -o "$T/r" -w '%{http_code}' --cacert "$T/cert.pem" \
        -H "Authorization: MUNGE $(cred "$M1" GET /v1/node "")" "https://127.0.0.1:$PORT2/v1/node")
    check "https GET /v1/node with a credential: 200 (got $code)" [ "$code" = 200 ]
    code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT2/v1/node")
    check "plain http to the https listener gets no answer (got $code)" [ "$code" != 200 ]
    code=$(curl -s -o "$T/r" -w '%{http_code}' --cacert "$T/cert.pem" -H 'Content-Type: application/json' \
        -H "Authorization: MUNGE $(cred "$M1" POST /v1/gpus/0/limit "$B200")" -d "$B200" \
        "https://127.0.0.1:$PORT2/v1/gpus/0/limit")
    check "https POST limit: 200 (got $code), limit $(limit0) W" [ "$code" = 200 ] && [ "$(limit0)" = 200.0 ]
    lines=$(wc -l <"$T/daemon.log")
    : >"$T/powerd.log"
    powerd_run 4 --nodes "https://%n:$PORT2" --node-auth munge --munge-socket "$M1" --node-ca "$T/cert.pem"
    check "powerd --node-auth munge over https: the free GPU back to its default 250 W (got $(limit0))" \
        [ "$(limit0)" = 250.0 ]
    check "... and the node daemon refused none of its requests" \
        sh -c "! tail -n +$lines '$T/daemon.log' | grep -q 'cluster listener: .* refused'"
    check "... powerd logged no failed node request" sh -c "! grep -qi 'not set\|401' '$T/powerd.log'"
    stop_daemon
    printf 'cluster_listen = 127.0.0.1:%s\nmunge_socket = %s\ncluster_tls_cert = %s\n' \
        "$PORT2" "$M1" "$T/cert.pem" >"$T/bad.conf"
    "$ECOD" --foreground --config "$T/bad.conf" --socket "$T/x.sock" --state-dir "$T/x" \
        --platform none 2>"$T/err"; rc=$?
    check "cluster_tls_cert without cluster_tls_key: exit 2 (got $rc)" [ "$rc" -eq 2 ]
    check "... names both keys" grep -q "key 'cluster_tls_cert': needs cluster_tls_key too" "$T/err"
else
    echo "SKIP (part): openssl cannot make a self-signed certificate: TLS not checked"
fi

# refused settings
"$ECOD" --foreground --socket "$T/x.sock" --state-dir "$T/x" --platform none \
    --cluster-listen "127.0.0.1:$PORT" --munge-socket "$T/none.sock" 2>"$T/err"; rc=$?
check "cluster_listen without munged: exit non-zero (got $rc)" [ "$rc" -ne 0 ]
check "... munged not reachable, and what to do" grep -q "munged not reachable on $T/none.sock.*start munged" "$T/err"
printf 'cluster_listen = 127.0.0.1:%s\ncluster_admin_user = no-such-user-x\n' "$PORT" >"$T/bad.conf"
"$ECOD" --foreground --config "$T/bad.conf" --socket "$T/x.sock" --state-dir "$T/x" \
    --platform none 2>"$T/err"; rc=$?
check "a cluster_admin_user that does not exist: exit 2 (got $rc)" [ "$rc" -eq 2 ]
check "... names the key" grep -q "key 'cluster_admin_user': no such user 'no-such-user-x'" "$T/err"
printf 'cluster_read_users = root,,nobody\n' >"$T/bad.conf"
"$ECOD" --foreground --config "$T/bad.conf" --socket "$T/x.sock" --state-dir "$T/x" \
    --platform none 2>"$T/err"; rc=$?
check "a cluster_read_users with an empty name: exit 2 (got $rc)" [ "$rc" -eq 2 ]
check "... names the key" grep -q "key 'cluster_read_users'" "$T/err"
"$ECOD" --foreground --socket "$T/x.sock" --state-dir "$T/x" --platform none \
    --cluster-listen "10.0.0.1:99999" 2>"$T/err"; rc=$?
check "--cluster-listen with port 99999: exit 2 (got $rc)" [ "$rc" -eq 2 ]
check "... names the key" grep -q "cluster_listen '10.0.0.1:99999': port must be 1..65535" "$T/err"
finish
