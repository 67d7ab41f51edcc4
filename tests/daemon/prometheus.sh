#!/bin/sh
# SPDX-License-Identifier: MIT
# contrib/'s Prometheus rules and Grafana dashboard against a real Prometheus server scraping
# ecoschedd over its loopback TCP listener: `promtool check rules` and `promtool test rules`,
# then every dashboard query through `promtool query instant` while two jobs share a fake GPU
# (each returns series, the Slurm-only one excepted: no Slurm job here), the per-user rule
# adds up the jobs' power, and a finished job's series go stale. Skips (77) without the server.
. "$(dirname "$0")/common.shlib"
PATH="$PATH:$SRC/.tools/bin"
for tool in prometheus promtool curl jq; do
    command -v "$tool" >/dev/null || {
        echo "SKIP: $tool not found (the Prometheus server: Debian package prometheus, or" \
            "sh scripts/setup.sh check, which unpacks prometheus and promtool into .tools/bin)"
        exit 77
    }
done
RULES="$(cd "$SRC" && pwd)/contrib/prometheus/ecosched-rules.yml" # absolute: read from $T
DASH="$SRC/contrib/grafana/ecosched-jobs.json"
check "promtool check rules" sh -c "promtool check rules '$RULES' >'$T/rules.out' 2>&1"
check "promtool test rules" sh -c "cd '$SRC/contrib/prometheus' && promtool test rules ecosched-rules.test.yml >'$T/rtest.out' 2>&1"
check "the dashboard is JSON with queries" sh -c "jq -e '[.panels[].targets[].expr] | length > 0' '$DASH' >/dev/null"

export ECOSCHED_FAKE_NVML_GPUS=1
PORT=$((20000 + $$ % 20000)); PPORT=$((PORT + 1))
TOK="$T/token"
head -c 24 /dev/urandom | base64 > "$TOK"
chmod 600 "$TOK"
start_daemon --tcp-listen "127.0.0.1:$PORT" --tcp-token-file "$TOK"
cat > "$T/prom.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $RULES
scrape_configs:
  - job_name: ecoschedd
    static_configs:
      - targets: ['127.0.0.1:$PORT']
    authorization:
      type: Bearer
      credentials_file: $TOK
EOF
prometheus --config.file="$T/prom.yml" --storage.tsdb.path="$T/prom" \
    --web.listen-address="127.0.0.1:$PPORT" >"$T/prometheus.log" 2>&1 &
PPID_=$!
PURL="http://127.0.0.1:$PPORT"
stop_prom() { kill "$PPID_" 2>/dev/null; wait "$PPID_" 2>/dev/null; }
trap 'stop_prom; cleanup' EXIT
i=0; while [ $i -lt 100 ] && ! curl -sf "$PURL/-/ready" >/dev/null; do sleep 0.1; i=$((i + 1)); done
check "Prometheus is ready" curl -sf "$PURL/-/ready" -o /dev/null || { tail -20 "$T/prometheus.log"; finish; exit 1; }

# q EXPR: the instant query's result vector as JSON (promtool's json output)
q() { promtool query instant -o json "$PURL" "$1" 2>>"$T/query.err"; }
# n EXPR: how many series it returns
n() { q "$1" | jq 'length' 2>/dev/null || echo 0; }
# until_n EXPR COUNT: waits (at most 20 s) until EXPR returns COUNT series
until_n() {
    i=0
    while [ $i -lt 100 ]; do [ "$(n "$1")" = "$2" ] && return 0; sleep 0.2; i=$((i + 1)); done
    return 1
}

hold=$("$ECO" submit -- sh -c "while [ ! -e $T/go-hold ]; do sleep 0.05; done")
until_state "$hold" running
a=$(ECOSCHED_FAKE_NVML_PROC_SM_PCT=70 "$ECO" submit --share -- sh -c "while [ ! -e $T/go-a ]; do sleep 0.05; done")
b=$(ECOSCHED_FAKE_NVML_PROC_SM_PCT=30 "$ECO" submit --share -- sh -c "while [ ! -e $T/go-b ]; do sleep 0.05; done")
touch "$T/go-hold"
"$ECO" wait "$hold"
check "a runs" until_state "$a" running 100
check "b runs" until_state "$b" running 50
check "the target is up" until_n 'up{job="ecoschedd"} == 1' 1
check "Prometheus has both jobs' power" until_n ecosched_running_job_power_watts 2
check "the per-user rule has a sample" until_n user:ecosched_running_job_power_watts:sum 1
sleep 2 # a few more scrapes and evaluations, so that [5m] ranges hold several samples

jq -r '.panels[] | .title as $t | .targets[] | [$t, .expr] | @tsv' "$DASH" > "$T/queries"
check "the dashboard has at least 6 queries" [ "$(wc -l < "$T/queries")" -ge 6 ]
while IFS="$(printf '\t')" read -r title expr; do
    e=$(printf '%s' "$expr" | sed -e 's/\$user/.*/g' -e 's/\$__range/5m/g')
    out=$(q "$e"); rc=$?
    check "dashboard '$title': query runs (rc $rc: $e)" [ "$rc" -eq 0 ]
    case "$e" in
    *'slurm_job_id!=""'*) ;; # Slurm jobs only: none here
    *) check "dashboard '$title': returns series ($e)" \
        sh -c "printf '%s' '$out' | jq -e 'length > 0' >/dev/null" ;;
    esac
done < "$T/queries"
u=$(q 'user:ecosched_running_job_power_watts:sum' | jq -r '.[0].value[1]')
g=$(q 'sum(ecosched_gpu_power_watts)' | jq -r '.[0].value[1]')
check "the per-user rule adds up the two jobs: $u W of the GPU's $g W" \
    awk "BEGIN { d = $u - $g; if (d < 0) d = -d; exit !(d <= 0.02 * $g) }"
pa=$(q "ecosched_running_job_power_watts{job_id=\"$a\"}" | jq -r '.[0].value[1]')
check "job a's power in Prometheus is 70 % of the GPU's ($pa W of $g W)" \
    awk "BEGIN { exit !($pa > 0.68 * $g && $pa < 0.72 * $g) }"
touch "$T/go-a"
"$ECO" wait "$a"
check "finished a's series go stale in Prometheus" until_n "ecosched_running_job_power_watts{job_id=\"$a\"}" 0
check "b's remain" [ "$(n "ecosched_running_job_power_watts{job_id=\"$b\"}")" = 1 ]
touch "$T/go-b"
"$ECO" wait "$b"
stop_prom
stop_daemon
[ "$fail" -eq 0 ] || { echo "--- prometheus log"; tail -20 "$T/prometheus.log"; cat "$T/query.err" 2>/dev/null | tail -5; }
finish
