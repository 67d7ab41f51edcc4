#!/bin/sh
# SPDX-License-Identifier: MIT
# ecoschedd's live page at /: served with no external asset, and in headless Chromium its
# script fills the GPU, running-job and queue tables from the API (through a socat TCP proxy
# of the unix socket); job names show as text, never as markup. Leaves a screenshot in
# BUILD/test-artifacts/daemon-page.png.
. "$(dirname "$0")/common.shlib"
. "$SRC/tests/chromium.shlib"
chromium_require
for tool in curl socat; do
    command -v "$tool" >/dev/null || {
        echo "FAIL: $tool not found (install the Debian package $tool, as scripts/setup.sh does)"
        exit 1
    }
done
start_daemon

# the page itself: HTML, a policy that forbids loading anything from elsewhere, no URL to
# another host
curl -s --unix-socket "$SOCK" -D "$T/headers" -o "$T/page.html" http://localhost/
check "GET / answers 200" grep -q '^HTTP/1.1 200' "$T/headers"
check "Content-Type text/html" grep -qi '^Content-Type: text/html; charset=utf-8' "$T/headers"
check "Content-Security-Policy default-src 'none', connect-src 'self'" \
    grep -qi "^Content-Security-Policy: default-src 'none';.*connect-src 'self'" "$T/headers"
check "the page is the compiled-in page.html" cmp -s "$T/page.html" "$SRC/src/daemon/page.html"
check "no external asset (src= or href= to another host)" \
    sh -c "! grep -Eiq '(src|href)=\"?(https?:)?//' '$T/page.html'"
st=$(curl -s --unix-socket "$SOCK" -o /dev/null -w '%{http_code}' -X POST http://localhost/)
check "POST / -> 405 (got $st)" [ "$st" = 405 ]

# two running jobs (both GPUs), two queued behind them, one with markup in its name
a=$("$ECO" submit --name trainer-a -- sh -c "while [ ! -e $T/go ]; do sleep 0.1; done")
b=$("$ECO" submit --name trainer-b --power-cap 150 -- sh -c "while [ ! -e $T/go ]; do sleep 0.1; done")
check "job a runs" until_state "$a" running
check "job b runs" until_state "$b" running
q1=$("$ECO" submit --name '<b>bold</b>' -- true)
q2=$("$ECO" submit --gpus 2 -- true)
check "two jobs queued" [ "$(field "$q1" state)/$(field "$q2" state)" = queued/queued ]
sleep 1.2 # some energy for the running jobs

# the proxy: a free loopback port forwarded to the unix socket (stopped on any exit)
port=""; SPID=""
stop_proxy() { [ -n "$SPID" ] && kill "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null; SPID=""; }
trap 'stop_proxy; cleanup' EXIT
for try in 1 2 3 4 5 6 7 8; do
    p=$((20000 + ($$ * 7 + try * 911) % 40000))
    socat "TCP-LISTEN:$p,bind=127.0.0.1,reuseaddr,fork" "UNIX-CONNECT:$SOCK" 2>>"$T/socat.log" &
    SPID=$!
    sleep 0.3
    if kill -0 "$SPID" 2>/dev/null && curl -s -o /dev/null "http://127.0.0.1:$p/v1/status"; then
        port=$p; break
    fi
    kill "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null; SPID=""
done
check "socat proxy on a loopback port ($port)" [ -n "$port" ]
URL="http://127.0.0.1:$port/"

chromium_dom "$URL" "$T/dom.html" 2000
# attr TABLE NAME: an attribute of a table's element in the DOM dump
attr() { grep -o "<table id=\"$1\"[^>]*>" "$T/dom.html" | grep -o "$2=\"[^\"]*\"" | cut -d'"' -f2; }
check "the script ran and refreshed at least once" \
    grep -Eq '<body[^>]* data-refreshes="[1-9]' "$T/dom.html"
check "status says updated" grep -q 'id="status" class="meta">updated ' "$T/dom.html"
check "2 GPU rows (got '$(attr gpus data-rows)')" [ "$(attr gpus data-rows)" = 2 ]
check "2 running jobs (got '$(attr running data-rows)')" [ "$(attr running data-rows)" = 2 ]
check "2 queued jobs (got '$(attr queued data-rows)')" [ "$(attr queued data-rows)" = 2 ]
for j in $a $b; do
    check "running job $j has a row" grep -q "<tr data-job=\"$j\"><td class=\"num\">$j</td><td>trainer-" "$T/dom.html"
done
for j in $q1 $q2; do
    check "queued job $j has a row" grep -q "<tr data-job=\"$j\">" "$T/dom.html"
done
check "the markup in a job name shows as text" grep -q '<td>&lt;b&gt;bold&lt;/b&gt;</td>' "$T/dom.html"
check "no <b> element made from a job name" sh -c "! grep -q '<b>bold</b>' '$T/dom.html'"
check "power cap of b shown" grep -q '<td>150 W</td>' "$T/dom.html"
me=$(id -un)
check "running job $a shows its owner by name ($me), not uid" \
    grep -q "<tr data-job=\"$a\"><td class=\"num\">$a</td><td>trainer-[^<]*</td><td>$me</td>" \
    "$T/dom.html"
model=$(curl -s --unix-socket "$SOCK" http://localhost/v1/gpus | sed -n 's/.*"name":"\([^"]*\)".*/\1/p' | head -1)
check "GPU model from /v1/gpus shown ('$model')" grep -q "<td>$model</td>" "$T/dom.html"
limit=$(curl -s --unix-socket "$SOCK" http://localhost/v1/gpus | grep -o '"power_limit_w":[0-9.]*' | cut -d: -f2 | sort -n | head -1)
check "b's GPU shows its 150 W limit (lowest limit $limit)" sh -c \
    "awk 'BEGIN { exit !($limit == 150) }' && grep -q '<td class=\"num limit\"[^>]*>150</td>' '$T/dom.html'"
check "energy column of running jobs > 0" \
    sh -c "grep -o 'class=\"num energy\" data-j=\"[0-9.e+-]*\"' '$T/dom.html' | cut -d'\"' -f4 | awk '\$1 > 0 { n++ } END { exit n != 2 }'"
check "each GPU has a power sparkline" [ "$(grep -o '<svg class="spark"' "$T/dom.html" | wc -l)" -eq 2 ]

# a screenshot as the test's artefact
ART=$(artefact_dir "$ECO")
chromium_shot "$URL?refresh=0.5" "$ART/daemon-page.png" 1280 760 3000
check "screenshot written ($ART/daemon-page.png)" test -s "$ART/daemon-page.png"
check "screenshot is a PNG" sh -c "head -c 8 '$ART/daemon-page.png' | od -c | grep -q 'P   N   G'"

# when the API fails, the page says so instead of showing stale figures: the page is served
# by a stand-in that answers every API path with 503
touch "$T/go"
"$ECO" wait "$a" >/dev/null; "$ECO" wait "$b" >/dev/null
stop_daemon
stop_proxy
cat > "$T/standin.sh" <<EOS
read -r method path version
if [ "\$path" = / ]; then
    printf 'HTTP/1.0 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n'
    cat '$T/page.html'
else
    printf 'HTTP/1.0 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n'
    printf '{"error":"daemon stopped"}\n'
fi
EOS
socat "TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr,fork" "SYSTEM:sh $T/standin.sh" 2>>"$T/socat.log" &
SPID=$!
sleep 0.3
chromium_dom "$URL" "$T/dom2.html" 1000
check "a failing API shows as an error on the page" \
    grep -q 'id="status" class="meta err">cannot reach the daemon: /v1/[a-z?=]*: HTTP 503: daemon stopped' "$T/dom2.html"
stop_proxy
finish
