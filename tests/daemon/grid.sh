#!/bin/sh
# SPDX-License-Identifier: MIT
# Grid signals in ecoschedd (docs/daemon/README.md, "Grid signals"): each job's carbon and cost
# integrated over the same pieces as its energy (a constant signal gives energy x intensity
# exactly), shown by `show`, the API and /metrics; a signal that does not cover the run marks
# the figure partial (nothing invented); the file re-read when it changes, a bad refresh kept
# out with file and line in the log; *_url refused unless loopback, and read from a loopback
# source; submit --max-delay / --not-before validated, stored, shown, and a deferrable job held
# until the carbon policy's release time from the operator's forecast. Signals are read off the
# event loop: a file replaced by a FIFO, a gzip bomb or a value out of bounds is refused and
# logged while submits are answered; a *_url source is fetched without the environment's proxy,
# its body bounded, and a slow one does not hold submits back.
. "$(dirname "$0")/common.shlib"
command -v curl >/dev/null || { echo "SKIP: curl not found"; exit 77; }
export ECOSCHED_FAKE_NVML_GPUS=1
now=$(date +%s)
# sig FILE COLUMN VALUE FROM_H TO_H [LOW_H LOW_VALUE]: hourly rows from FROM_H to TO_H hours
# around the current hour, VALUE in each (LOW_VALUE in hour LOW_H)
sig() {
    awk -v col="$2" -v v="$3" -v a="$4" -v b="$5" -v lh="${6:-x}" -v lv="${7:-0}" -v now="$now" '
        BEGIN { print "time_utc," col; h0 = now - now % 3600
                for (h = a; h <= b; h++) print strftime("%Y-%m-%dT%H:00:00Z", h0 + 3600 * h, 1) "," (h == lh "" ? lv : v) }' > "$1.tmp"
    mv "$1.tmp" "$1"
}
scrape() { curl -s --unix-socket "$SOCK" -o "$T/metrics" http://localhost/metrics; }
metric() { awk -v p="$1" 'index($0, p) == 1 { print $NF; exit }' "$T/metrics"; }
sig "$T/carbon.csv" carbon_gco2eq_per_kwh 400 -48 48
sig "$T/price.csv" price_aud_per_mwh 120 -48 48

# ---- accounting under constant signals
start_daemon --carbon "$T/carbon.csv" --price "$T/price.csv"
j=$("$ECO" submit -- sh -c "while [ ! -e $T/go ]; do sleep 0.05; done")
check "job runs" until_state "$j" running
sleep 2.5
scrape
check "running job's carbon series" grep -q "^ecosched_running_job_carbon_kg_total{job_id=\"$j\"," "$T/metrics"
check "running job's cost series" grep -q "^ecosched_running_job_cost_total{job_id=\"$j\"," "$T/metrics"
check "intensity gauge 400" [ "$(metric ecosched_grid_carbon_gco2eq_per_kwh)" = 400 ]
PATH="$PATH:$SRC/.tools/bin"
if command -v promtool >/dev/null; then
    promtool check metrics <"$T/metrics" >"$T/promtool.out" 2>&1; rc=$?
    check "promtool check metrics is clean with the grid series (rc $rc: $(cat "$T/promtool.out"))" \
        sh -c "[ $rc -eq 0 ] && [ ! -s '$T/promtool.out' ]"
else
    echo "note: promtool not found: the exposition is not linted"
fi
touch "$T/go"
"$ECO" wait "$j" >/dev/null
e=$(jfield "$j" energy_j); kg=$(jfield "$j" carbon_kg); cost=$(jfield "$j" cost)
check "energy > 0 ($e J)" awk "BEGIN { exit !($e > 0) }"
check "carbon = energy x 400 g/kWh ($kg kg for $e J)" awk "BEGIN { x = $e / 3.6e6 * 0.4; exit !($kg > x * 0.999999 && $kg < x * 1.000001) }"
check "cost = energy x 120 AUD/MWh ($cost)" awk "BEGIN { x = $e / 3.6e9 * 120; exit !($cost > x * 0.999999 && $cost < x * 1.000001) }"
check "currency AUD in the API" [ "$(jfield "$j" currency)" = '"AUD"' ]
check "carbon not partial" [ "$(jfield "$j" carbon_partial)" = false ]
check "show prints carbon_kg and currency" sh -c "'$ECO' show $j | grep -q '^carbon_kg' && '$ECO' show $j | grep -q '^currency *AUD'"
check "listing carries carbon_kg" sh -c "curl -s --unix-socket '$SOCK' http://localhost/v1/jobs | grep -q '\"carbon_kg\": *[0-9]'"
scrape
check "daemon-wide carbon counter" sh -c "[ -n \"\$(awk '/^ecosched_jobs_carbon_kg_total /' '$T/metrics')\" ]"

# ---- refresh: a bad file is logged with file and line and the old series kept; a good one is taken
printf 'time_utc,carbon_gco2eq_per_kwh\n2026-01-01T00:00:00Z,abc\n2026-01-01T01:00:00Z,1\n' > "$T/bad.csv"
mv "$T/bad.csv" "$T/carbon.csv"
sleep 1.5
check "bad refresh logged with file and line" grep -q "previous one is kept: $T/carbon.csv:2:" "$T/daemon.log"
scrape
check "old series kept (400)" [ "$(metric ecosched_grid_carbon_gco2eq_per_kwh)" = 400 ]
sig "$T/carbon.csv" carbon_gco2eq_per_kwh 250 -48 48
sleep 1.5
scrape
check "refreshed series taken (250)" [ "$(metric ecosched_grid_carbon_gco2eq_per_kwh)" = 250 ]

# ---- deferral: validation, and a job held to the low hour of the operator's forecast
check "--max-delay refuses a bad duration" sh -c "! '$ECO' submit --max-delay 6x -- true 2>'$T/err' && grep -q max-delay '$T/err'"
check "--not-before refuses a bad time" sh -c "! '$ECO' submit --not-before tomorrow -- true 2>'$T/err' && grep -q not-before '$T/err'"
code=$(curl -s -o "$T/ans" -w '%{http_code}' --unix-socket "$SOCK" -H 'Content-Type: application/json' \
    -d "{\"argv\":[\"true\"],\"cwd\":\"$T\",\"max_delay\":1e9}" http://localhost/v1/jobs)
check "API max_delay out of range: 400 naming the field ($code $(cat "$T/ans"))" sh -c "[ $code = 400 ] && grep -q max_delay '$T/ans'"
nb=$(date -u -d "@$((now + 2))" +%Y-%m-%dT%H:%M:%SZ)
k=$("$ECO" submit --not-before "$nb" -- true)
check "not_before stored" [ "$(jfield "$k" not_before_s)" = "$((now + 2)).0" ]
check "--not-before job runs after its time" sh -c "'$ECO' wait $k >/dev/null && [ \$('$ECO' show --json $k | awk '\$1 == \"\\\"start_s\\\":\" { print int(\$2) }') -ge $((now + 2)) ]"
stop_daemon

sig "$T/carbon.csv" carbon_gco2eq_per_kwh 500 -48 48 3 50
start_daemon --carbon "$T/carbon.csv" --carbon-policy lwa
h=$("$ECO" submit --max-delay 6h -- true)
sleep 1.2
check "deferrable job held" [ "$(field "$h" state)" = queued ]
held=$(jfield "$h" held_until_s)
h3=$(( now - now % 3600 + 3 * 3600 ))
check "held until the low hour ($held, expected $h3)" awk "BEGIN { exit !($held == $h3) }"
check "forecast named: operator" [ "$(jfield "$h" forecast)" = '"operator"' ]
check "max_delay stored (21600)" awk "BEGIN { exit !($(jfield "$h" max_delay_s) == 21600) }"
"$ECO" cancel "$h" >/dev/null
stop_daemon

# ---- partial: a signal that ended before the job ran
sig "$T/old.csv" carbon_gco2eq_per_kwh 300 -30 -6
start_daemon --carbon "$T/old.csv"
p=$("$ECO" submit -- sleep 1.5)
"$ECO" wait "$p" >/dev/null
check "uncovered run: carbon partial" [ "$(jfield "$p" carbon_partial)" = true ]
check "uncovered run: nothing invented (0 kg)" awk "BEGIN { exit !($(jfield "$p" carbon_kg) == 0) }"
stop_daemon

# ---- URL sources: only loopback, and read from one
"$ECOD" --foreground --socket "$T/x.sock" --state-dir "$T/x" --platform fake \
    --carbon-url http://192.0.2.1:80/carbon.csv >"$T/url.out" 2>&1; rc=$?
check "non-loopback carbon_url refused (rc $rc)" sh -c "[ $rc -eq 2 ] && grep -q 'not a loopback host' '$T/url.out'"
if command -v python3 >/dev/null; then
    mkdir -p "$T/www"
    sig "$T/www/carbon.csv" carbon_gco2eq_per_kwh 321 -48 48
    python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$T/www" >"$T/http.out" 2>&1 &
    HPID=$!
    i=0
    while [ $i -lt 50 ] && ! grep -q 'port' "$T/http.out"; do sleep 0.1; i=$((i + 1)); done
    port=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$T/http.out" | head -1)
    start_daemon --carbon-url "http://127.0.0.1:$port/carbon.csv"
    scrape
    check "carbon read from the loopback source (321)" [ "$(metric ecosched_grid_carbon_gco2eq_per_kwh)" = 321 ]
    stop_daemon
    kill "$HPID"; wait "$HPID" 2>/dev/null
else
    echo "note: python3 not found: the loopback source read is not tested"
fi

# until_log TEXT: waits (at most 60 s: only a hang fails it) until the daemon log holds TEXT
until_log() {
    i=0
    while [ $i -lt 600 ]; do
        grep -qF -- "$1" "$T/daemon.log" && return 0
        sleep 0.1; i=$((i + 1))
    done
    return 1
}
# until_metric VALUE: waits (at most 15 s) until the intensity gauge shows VALUE
until_metric() {
    i=0
    while [ $i -lt 150 ]; do
        scrape; [ "$(metric ecosched_grid_carbon_gco2eq_per_kwh)" = "$1" ] && return 0
        sleep 0.1; i=$((i + 1))
    done
    return 1
}

# ---- bad replacements of a signal file: refused and logged, the loop never waits for them
if ! command -v python3 >/dev/null; then
    echo "note: python3 not found: FIFO, gzip bomb and URL source limits are not tested"
    finish; exit
fi
sig "$T/carbon.csv" carbon_gco2eq_per_kwh 400 -48 48
start_daemon --carbon "$T/carbon.csv"
sig "$T/carbon.csv" carbon_gco2eq_per_kwh 1e308 -48 48
check "carbon 1e308 refused with file, line and the bound" \
    until_log "previous one is kept: $T/carbon.csv:2: column 2 (carbon_gco2eq_per_kwh): 1e+308 is outside 0..5000"
scrape
check "gauge keeps 400, never +Inf ($(metric ecosched_grid_carbon_gco2eq_per_kwh))" \
    [ "$(metric ecosched_grid_carbon_gco2eq_per_kwh)" = 400 ]
# a gzip bomb of about 70 KB: hourly rows padded to 64,000 bytes by an ignored column, 65 MiB
# in all (rows rather than blank lines: the same limit, reached in 1,100 lines rather than
# 68 million, which a sanitizer build reads slowly)
python3 -c '
import gzip, sys
with gzip.open(sys.argv[1], "wb", compresslevel=9) as f:
    f.write(b"time_utc,carbon_gco2eq_per_kwh,pad\n")
    for h in range(1066):
        day, hour = divmod(h, 24)
        row = b"2000-%02d-%02dT%02d:00:00Z,100," % (1 + day // 28, 1 + day % 28, hour)
        f.write(row + b"x" * (64000 - len(row) - 1) + b"\n")
' "$T/bomb.gz"
mv "$T/bomb.gz" "$T/carbon.csv"
check "gzip bomb stopped at 64 MiB" \
    until_log "more than 64 MiB of text (after decompression): the limit for a grid-signal file"
check "gzip bomb: file and line named" grep -q "kept: $T/carbon.csv:[0-9]*: more than 64 MiB" "$T/daemon.log"
rm -f "$T/carbon.csv"
mkfifo "$T/carbon.csv"
check "FIFO refused, named" until_log "$T/carbon.csv: cannot read: a FIFO, not a regular file"
# timeout only catches the hang the FIFO caused before (the loop blocked in open())
check "submit answered with a FIFO in place of the file" sh -c "timeout 20 '$ECO' submit -- true >'$T/fifo-sub'"
check "the job ran" sh -c "'$ECO' wait \$(cat '$T/fifo-sub') >/dev/null"
# a reader still blocked in open() on the FIFO (it must not be) is let go, so the daemon can stop
python3 -c '
import os, sys
try:
    os.close(os.open(sys.argv[1], os.O_WRONLY | os.O_NONBLOCK))
    print("a reader was waiting on the FIFO")
except OSError:
    pass
' "$T/carbon.csv" >"$T/fifo-reader"
check "nothing waited on the FIFO" [ ! -s "$T/fifo-reader" ]
rm -f "$T/carbon.csv"
sig "$T/carbon.csv" carbon_gco2eq_per_kwh 250 -48 48
check "a good file taken after them (250)" until_metric 250
stop_daemon

# ---- a loopback source: no proxy from the environment, the body bounded, a slow one read off
# the loop. The server's mode file: normal, slow (half the body, then wait for `release` or the
# client to go; `slow-started` and `slow-end` mark when) or big (200 MiB of body).
mkdir -p "$T/www"
cat >"$T/srv.py" <<'EOP'
import http.server, os, select, sys, time
d = sys.argv[1]
def mark(name):
    open(os.path.join(d, name), "w").close()
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass
    def do_GET(self):
        try:
            mode = open(os.path.join(d, "mode")).read().strip()
        except OSError:
            mode = "normal"
        body = open(os.path.join(d, "carbon.csv"), "rb").read()
        self.send_response(200)
        if mode == "big":
            self.end_headers()
            try:
                self.wfile.write(body.split(b"\n")[0] + b"\n")
                for _ in range(200):
                    self.wfile.write(b"\n" * (1 << 20))
            except OSError:
                pass
            return
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if mode == "slow":
            half = len(body) // 2
            self.wfile.write(body[:half])
            self.wfile.flush()
            mark("slow-started")
            for _ in range(300):  # 30 s at most: a hang guard only
                if os.path.exists(os.path.join(d, "release")):
                    break
                r, _, _ = select.select([self.connection], [], [], 0.1)
                if r and not self.connection.recv(1, 2):  # MSG_PEEK: the client went
                    break
            mark("slow-end")
            try:
                self.wfile.write(body[half:])
            except OSError:
                pass
            return
        self.wfile.write(body)
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print("port", s.server_address[1], flush=True)
s.serve_forever()
EOP
sig "$T/www/carbon.csv" carbon_gco2eq_per_kwh 321 -48 48
echo normal >"$T/www/mode"
python3 -u "$T/srv.py" "$T/www" >"$T/srv.out" 2>&1 &
HPID=$!
i=0
while [ $i -lt 50 ] && ! grep -q '^port' "$T/srv.out"; do sleep 0.1; i=$((i + 1)); done
port=$(sed -n 's/^port \([0-9]*\)/\1/p' "$T/srv.out")
echo "signal_fetch_s = 1" >"$T/fetch.conf"
# a proxy nobody listens on (port 9): a request that went through it would fail
export http_proxy=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9 ALL_PROXY=http://127.0.0.1:9
export no_proxy="" NO_PROXY=""
start_daemon --config "$T/fetch.conf" --carbon-url "http://127.0.0.1:$port/carbon.csv"
scrape
check "source read despite http_proxy (321)" [ "$(metric ecosched_grid_carbon_gco2eq_per_kwh)" = 321 ]
unset http_proxy HTTP_PROXY ALL_PROXY no_proxy NO_PROXY
# slow: the fetch hangs half-way until released; a submit is answered meanwhile (ordering:
# the server has not ended the request when the submit returns)
sig "$T/www/carbon.csv" carbon_gco2eq_per_kwh 777 -48 48
echo slow >"$T/www/mode"
i=0
while [ $i -lt 100 ] && [ ! -e "$T/www/slow-started" ]; do sleep 0.1; i=$((i + 1)); done
check "the slow fetch began" [ -e "$T/www/slow-started" ]
echo normal >"$T/www/mode"
check "submit answered during the slow fetch" sh -c "timeout 20 '$ECO' submit -- true >'$T/slow-sub'"
check "... before the slow request ended" [ ! -e "$T/www/slow-end" ]
touch "$T/www/release"
check "the slow answer taken once released (777)" until_metric 777
# big: the body is cut at 64 MiB, the old series kept
echo big >"$T/www/mode"
check "a body over 64 MiB refused, named" \
    until_log "http://127.0.0.1:$port/carbon.csv: the answer is longer than 64 MiB, the limit for a signal"
echo normal >"$T/www/mode"
scrape
check "old series kept (777)" [ "$(metric ecosched_grid_carbon_gco2eq_per_kwh)" = 777 ]
stop_daemon
kill "$HPID"; wait "$HPID" 2>/dev/null
finish
