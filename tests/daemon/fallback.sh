#!/bin/sh
# SPDX-License-Identifier: MIT
# powerd's fallback lease (POST /v1/node/budget {"fallback_w", "lease_s"}; lease.c), and a node's
# limits and lease in one request (POST /v1/node/limits, bad bodies refused whole): two 2-GPU
# jobs on a fake 4-GPU V100 server (busy 200 W each: 800 W uncapped, limits 100..250 W) under
# limits "powerd" set (240 W) and a 500 W fallback with a 1 s lease. When the renewals stop
# the daemon takes the fallback as its node budget: the GPUs' power goes under 500 W; a
# restart keeps the caps (put back before the first tick, the fallback taken again); a new
# lease ends the fallback and the limits stay as they were for powerd to take over. Bad leases
# are refused naming the field. Prints the figures docs/slurm/powerd.md's "Faults" table
# quotes (time to fallback, readings, the limits across the restart).
. "$(dirname "$0")/common.shlib"
PATH="$PATH:$SRC/.tools/bin"
for tool in curl jq; do
    command -v $tool >/dev/null || { echo "SKIP: $tool not found (scripts/setup.sh installs it)"; exit 77; }
done
[ "$(id -u)" -eq 0 ] || { echo "SKIP: POST /v1/node/budget and /v1/gpus/N/limit need root"; exit 77; }
export ECOSCHED_FAKE_NVML_GPUS=4
# proportional: its split is reached in one or two ticks (mpc dithers a job's first 10 limits
# to learn it, budget.sh), so that the test measures the fallback, not the capper's learning
POLICY=proportional
# 500 W fallback: between the minimum limits' 400 W and the 800 W uncapped draw, so it binds;
# 515 W is one grid step of the family's allocation above it (budget.sh)
FALLBACK=500
LIMIT=515

node() { curl -s --unix-socket "$SOCK" http://localhost/v1/node; }
num() { node | jq -r "$1"; }
post() { # post PATH BODY: the HTTP code, the reply in $T/post.out
    curl -s --unix-socket "$SOCK" -o "$T/post.out" -w '%{http_code}' -X POST \
        -H 'Content-Type: application/json' -d "$2" "http://localhost$1"
}
limits() { awk '$1 == "gpu" { printf "%s ", $4 / 1000 }' "$ECOSCHED_FAKE_NVML_STATE"; }
# under N: N consecutive readings of GET /v1/node's power_w at most $LIMIT within 40 readings
# (0.25 s apart, 10 s); the readings in $seen
under() {
    ok=0; i=0; seen=""
    while [ $i -lt 40 ] && [ $ok -lt "$1" ]; do
        p=$(num .power_w); seen="$seen $p"
        if awk "BEGIN { exit !(${p:-1e9} <= $LIMIT) }"; then ok=$((ok + 1)); else ok=0; fi
        sleep 0.25; i=$((i + 1))
    done
    [ $ok -ge "$1" ]
}

start_daemon --power-policy $POLICY
for body in '{"fallback_w": -1, "lease_s": 5}:fallback_w' '{"fallback_w": 500}:lease_s' \
    '{"fallback_w": 500, "lease_s": 0}:lease_s' '{"fallback_w": "x", "lease_s": 5}:fallback_w' \
    '{"lease_s": 5}:fallback_w' '{"fallback_w": 500, "lease_s": 1e9}:lease_s' \
    '{"fallback": 500}:fallback'; do
    code=$(post /v1/node/budget "${body%:*}")
    check "bad lease ${body%:*}: 400 naming ${body##*:} ($code $(cat "$T/post.out"))" \
        sh -c "[ $code = 400 ] && grep -q '\"field\": *\"${body##*:}\"' '$T/post.out'"
done
check "no lease after bad ones ($(num .fallback))" [ "$(num .fallback)" = null ]

# POST /v1/node/limits: a node's limits and lease in one request (powerd's each period); a bad
# body is refused whole, naming the field, nothing applied
gl() { node | jq -r '[.gpus[].power_limit_w] | map(tostring) | join(" ")'; }
code=$(post /v1/node/limits '{"limits_w": {"0": 150, "3": 200}, "fallback_w": 600, "lease_s": 60}')
check "node limits: 200 ($code $(cat "$T/post.out"))" [ "$code" = 200 ]
check "... what was set per GPU" \
    [ "$(jq -c '.limits_w' "$T/post.out")" = '{"0":150,"3":200}' ]
check "... the lease taken ($(num .fallback.fallback_w))" [ "$(num .fallback.fallback_w)" = 600 ]
check "... the limits set ($(gl))" [ "$(gl)" = "150 250 250 200" ]
for body in '{"limits_w": {"0": 160, "3": 251}}:limits_w.3' \
    '{"limits_w": {"0": 160, "7": 200}}:limits_w.7' '{"limits_w": {"1": "max"}}:limits_w.1' \
    '{"limits_w": {"0": 160}, "fallback_w": 500}:lease_s' \
    '{"limits_w": {"0": 160}, "fallback_w": 500, "lease_s": 0.1}:lease_s' \
    '{"limits_w": {"0": 160}, "budget_w": 500}:budget_w' '{"fallback_w": 500, "lease_s": 5}:limits_w' \
    '{"limits_w": 160}:limits_w'; do
    code=$(post /v1/node/limits "${body%:*}")
    check "bad node limits ${body%:*}: 400 naming ${body##*:} ($code $(cat "$T/post.out"))" \
        sh -c "[ $code = 400 ] && grep -q '\"field\": *\"${body##*:}\"' '$T/post.out'"
done
check "... limits unchanged after bad bodies ($(gl))" [ "$(gl)" = "150 250 250 200" ]
check "... lease unchanged ($(num .fallback.fallback_w))" [ "$(num .fallback.fallback_w)" = 600 ]
code=$(post /v1/node/limits '{"limits_w": {"0": "default", "3": "default"}, "fallback_w": 0, "lease_s": 0}')
check "node limits back to default, lease released ($code $(gl), $(num .fallback))" \
    sh -c "[ $code = 200 ] && [ '$(gl)' = '250 250 250 250' ] && [ '$(num .fallback)' = null ]"

a=$("$ECO" submit --gpus 2 -- sh -c "while [ ! -e $T/go ]; do sleep 0.1; done")
b=$("$ECO" submit --gpus 2 -- sh -c "while [ ! -e $T/go ]; do sleep 0.1; done")
until_state "$a" running && until_state "$b" running || echo "FAIL: jobs did not start"
for g in 0 1 2 3; do post /v1/gpus/$g/limit '{"power_limit_w": 240}' >/dev/null; done
code=$(post /v1/node/budget "{\"fallback_w\": $FALLBACK, \"lease_s\": 1}")
check "lease taken ($code $(cat "$T/post.out"))" [ "$code" = 200 ]
t0=$(date +%s.%N)
# the renewals stop: the fallback within the lease and a tick (1 s + 1 s), polled 0.1 s apart
i=0
while [ $i -lt 50 ] && [ "$(num .fallback.active)" != true ]; do sleep 0.1; i=$((i + 1)); done
t1=$(date +%s.%N)
tf=$(awk "BEGIN { printf \"%.2f\", $t1 - $t0 }")
check "fallback active after the 1 s lease (${tf} s)" [ "$(num .fallback.active)" = true ]
check "its log line, once" [ "$(grep -c 'fallback node budget' "$T/daemon.log")" -eq 1 ]
under 6
check "GPU power under the ${FALLBACK} W fallback (readings:$seen)" [ $ok -ge 6 ]
echo "fallback: active ${tf} s after the last renewal (lease 1 s); readings:$seen"
curl -s --unix-socket "$SOCK" -o "$T/metrics" http://localhost/metrics
check "/metrics: fallback active" grep -q '^ecosched_node_fallback_active 1$' "$T/metrics"
check "/metrics: fallback watts" grep -q "^ecosched_node_fallback_watts $FALLBACK$" "$T/metrics"
check "node budget is the fallback ($(num .power_budget.budget_w))" \
    [ "$(num .power_budget.budget_w)" = $FALLBACK ]

# restart: the caps are kept (put back at start, before the first tick), the fallback again
sleep 1.5 # the limits of the last ticks reach the lease file
before=$(limits)
stop_daemon
start_daemon --power-policy $POLICY
# what the start put back, before its first tick re-took the fallback (the log's lines)
kept=$(sed -n "s/.*powerd's last limits kept (W per GPU): \(.*\)/\1 /p" "$T/daemon.log")
want=$(echo "$before" | awk '{ for (i = 1; i <= NF; i++) printf "%.0f ", $i }')
check "restart puts the fallback's limits back (before: $before; put back: $kept)" \
    [ "$kept" = "$want" ]
check "no GPU went to its default at the restart" \
    sh -c "! grep -q 'default 250 W (no capped job)' '$T/daemon.log'"
after=$(limits)
check "the fallback again after the restart" [ "$(num .fallback.active)" = true ]
under 6
check "GPU power under the fallback after the restart (readings:$seen)" [ $ok -ge 6 ]
echo "restart: limits before $before, after $after; readings:$seen"

# powerd heard again: the fallback ends, the limits stay for powerd to take over
held=$(limits)
code=$(post /v1/node/budget "{\"fallback_w\": $FALLBACK, \"lease_s\": 30}")
check "new lease ($code $(cat "$T/post.out"))" [ "$code" = 200 ]
check "fallback ended ($(num .fallback.active))" [ "$(num .fallback.active)" = false ]
check "node budget back to none ($(num .power_budget.budget_w))" [ "$(num .power_budget.budget_w)" = 0 ]
# no step to the default (250 W) while powerd takes over: sampled for 2 s (a tick decided under
# the fallback just before the renewal may still land, so the limits may move, never to 250 W)
no_default() {
    i=0; seen_l=""
    while [ $i -lt 8 ]; do
        l=$(limits); seen_l="$seen_l | $l"
        case " $l" in *" 250 "* | *" 250.0 "*) return 1 ;; esac
        sleep 0.25; i=$((i + 1))
    done
}
seen_l=""
check "limits not back to the default after the end (held $held)" no_default
echo "fallback ended: limits held $held$seen_l"
curl -s --unix-socket "$SOCK" -o "$T/metrics" http://localhost/metrics
check "/metrics: fallback inactive" grep -q '^ecosched_node_fallback_active 0$' "$T/metrics"
check "the end logged" grep -q "powerd heard again: fallback ended" "$T/daemon.log"
# the release (taking ecosched out, docs/slurm/deploy.md): no lease, nothing kept at a restart
code=$(post /v1/node/budget '{"fallback_w": 0, "lease_s": 0}')
check "lease released ($code $(cat "$T/post.out"))" [ "$code" = 200 ]
check "no lease after the release ($(num .fallback))" [ "$(num .fallback)" = null ]
check "the release logged" grep -q "powerd's lease released: no fallback" "$T/daemon.log"
touch "$T/go"
"$ECO" wait "$a" >/dev/null; "$ECO" wait "$b" >/dev/null
stop_daemon

finish
