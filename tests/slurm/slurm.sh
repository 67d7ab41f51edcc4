#!/bin/sh
# SPDX-License-Identifier: MIT
# ecosched on a real Slurm, on this one machine: a private munged, slurmctld and three slurmd
# (n1..n3, two fake GPUs each: character devices for Slurm, the fake NVML library for
# ecosched), one ecoschedd per node and the SPANK plugin. Checks power caps set and restored,
# GPU energy recorded, a bad option refused, a cap outside the GPU's range refused and said in the
# job's output, a GPU shared with a daemon job keeping the lower cap through a Slurm job's
# prolog and epilog, the power controller holding the fake GPUs' power
# under a budget that steps down, a node daemon killed mid-run harming no job, and deferrable
# jobs held and released (never an administrator's hold; powerd's socket 0660).
# Arguments: ECOSCHED ECOSCHEDD FAKE_NVML_LIB FAKE_GPU_RUN SPANK_SO FAKE_NVML_PLAIN SOURCE_DIR.
# Needs root and a mounted /sys/fs/cgroup (else skipped, exit 77, the reason printed);
# installs the Slurm packages when missing; stops everything it starts by PID.
set -u
ECO="$1"; ECOD="$2"; FAKE_LIB="$3"; FAKE_RUN="$4"; SPANK="$5"; FAKE_PLAIN="$6"
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (starts munged, slurmctld and slurmd as root)"
[ -f "$SPANK" ] || skip "SPANK plugin not built (slurm/spank.h was missing at configure)"
# need_cgroup, need_packages, until_true, BASE (the port block), slurm_conf_base, start_slurmd,
# wait_nodes_idle
. "$(dirname "$0")/common.shlib"
need_cgroup
need_packages munge slurmctld slurmd slurm-client

R=$(mktemp -d /tmp/ecosched-slurm.XXXXXX)
chmod 755 "$R"
NODES="n1 n2 n3"
PIDS=""
fail=0; n=0
export SLURM_CONF="$R/slurm.conf"

cleanup() {
    for p in $PIDS; do kill -TERM "$p" 2>/dev/null; done
    sleep 0.5
    for p in $PIDS; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    if [ "$fail" -ne 0 ] || [ -n "${KEEP_T:-}" ]; then
        for f in "$R"/log/*; do echo "--- $f"; tail -25 "$f"; done
    fi
    [ -n "${KEEP_T:-}" ] || rm -rf "$R"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

check() {
    what="$1"; shift
    n=$((n + 1))
    if ! "$@"; then echo "FAIL: $what"; fail=$((fail + 1)); fi
}

mkdir -p "$R/log" "$R/state" "$R/fake" "$R/out"
# munge with its own key and socket
dd if=/dev/urandom of="$R/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$R/munge.key"
munged -F --force --socket="$R/munge.sock" --key-file="$R/munge.key" --pid-file="$R/munged.pid" \
    --log-file="$R/log/munged.log" --seed-file="$R/munge.seed" 2>>"$R/log/munged.log" &
PIDS="$PIDS $!"

HOST=$(hostname -s)
cat >"$R/slurm.conf" <<EOF
ClusterName=ecotest
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$BASE
$(slurm_conf_base "$R/munge.sock")
EOF
i=1
for nd in $NODES; do
    mkdir -p "$R/$nd"
    fake_gpu_devs "$nd"
    echo "NodeName=$nd NodeHostname=$HOST NodeAddr=127.0.0.1 Port=$((BASE + i)) CPUs=2 Sockets=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=1000 Gres=gpu:2 State=UNKNOWN" >>"$R/slurm.conf"
    echo "NodeName=$nd Name=gpu File=$R/dev/$nd/nvidia[0-1]" >>"$R/gres.conf"
    i=$((i + 1))
done
echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP" >>"$R/slurm.conf"
echo "AutoDetect=off" | cat - "$R/gres.conf" >"$R/gres.tmp" && mv "$R/gres.tmp" "$R/gres.conf"
# dcgm-exporter's job mapping per node (dcgm_job_map=DIR); GPU 0 of n1 already lists job 77
for nd in $NODES; do mkdir -p "$R/dcgm/$nd"; done
printf '77\n' >"$R/dcgm/n1/0"
echo "required $SPANK socket=$R/%n/d.sock platform=fake library=$FAKE_PLAIN fake_state=$R/fake/%n.state dcgm_job_map=$R/dcgm/%n" >"$R/plugstack.conf"

until_true 50 test -S "$R/munge.sock" || { echo "FAIL: munged did not start"; fail=1; exit 1; }

# one ecoschedd per node, each on its own fake GPUs
for nd in $NODES; do
    ECOSCHED_FAKE_NVML_STATE="$R/fake/$nd.state" ECOSCHED_FAKE_NVML_GPUS=2 \
        ECOSCHED_FAKE_NVML_LIB="$FAKE_LIB" "$ECOD" --foreground --socket "$R/$nd/d.sock" \
        --state-dir "$R/$nd/state" --platform fake --util-window 1 --log-level debug \
        2>>"$R/log/ecoschedd.$nd.log" &
    PIDS="$PIDS $!"
    eval "DPID_$nd=$!"
done
slurmctld -D -i >>"$R/log/slurmctld.out" 2>&1 &
PIDS="$PIDS $!"
for nd in $NODES; do
    start_slurmd "$nd"
done
wait_nodes_idle 3 $NODES || { fail=1; exit 1; }
for nd in $NODES; do
    until_true 50 test -S "$R/$nd/d.sock" || { echo "FAIL: ecoschedd on $nd"; fail=1; exit 1; }
done
echo "slurm up: $(sinfo -h -N -o '%N %t' | tr '\n' ' ')"

# limit_mw NODE GPU: the fake GPU's power limit in mW
limit_mw() { awk -v g="$2" '$1 == "gpu" && $2 == g { print $4 }' "$R/fake/$1.state"; }
# a job "on" its fake GPUs for S seconds (the fake library counts it busy)
gpu_job() { echo "ECOSCHED_FAKE_NVML_STATE=$R/fake/\$SLURMD_NODENAME.state $FAKE_RUN \$CUDA_VISIBLE_DEVICES sleep $1"; }
# the same until the test creates file $R/go (no race with a slow machine)
gpu_job_go() { echo "ECOSCHED_FAKE_NVML_STATE=$R/fake/\$SLURMD_NODENAME.state $FAKE_RUN \$CUDA_VISIBLE_DEVICES sh -c 'while [ ! -e $R/go ]; do sleep 0.2; done'"; }

# 1. srun with a cap: both GPUs of n1 at 150 W while it runs, back to 250 W after
srun -w n1 --gres=gpu:2 --gpu-power-cap=150 sh -c "$(gpu_job 3)" >"$R/out/srun1" 2>&1 &
SRUN=$!
capped() { [ "$(limit_mw n1 0)" = 150000 ] && [ "$(limit_mw n1 1)" = 150000 ]; }
check "srun --gpu-power-cap=150: both GPUs of n1 at 150 W while the job runs" until_true 100 capped
cp "$R/dcgm/n1/0" "$R/out/dcgm0" 2>/dev/null; cp "$R/dcgm/n1/1" "$R/out/dcgm1" 2>/dev/null
j1=$(squeue -h -w n1 -o %i 2>/dev/null | head -1)
wait $SRUN; rc=$?
check "the capped srun job exits 0 (got $rc: $(cat "$R/out/srun1"))" [ "$rc" -eq 0 ]
restored_n3() { [ "$(limit_mw n3 0)" = 250000 ] && [ "$(limit_mw n3 1)" = 250000 ]; }
restored() { [ "$(limit_mw n1 0)" = 250000 ] && [ "$(limit_mw n1 1)" = 250000 ]; }
check "limits back to 250 W after the job" until_true 100 restored
# the prolog listed the job on both GPUs' mapping files, beside job 77; the epilog took it out
check "dcgm_job_map: while job ${j1:-?} ran, n1's GPU files listed it ($(tr '\n' ' ' <"$R/out/dcgm0"))" \
    sh -c "[ -n '$j1' ] && grep -qx 77 '$R/out/dcgm0' && grep -qx '$j1' '$R/out/dcgm0' && grep -qx '$j1' '$R/out/dcgm1'"
dcgm_gone() { [ "$(cat "$R/dcgm/n1/0")" = 77 ] && [ ! -s "$R/dcgm/n1/1" ]; }
check "dcgm_job_map: after it, GPU 0 lists job 77 alone, GPU 1 none" until_true 100 dcgm_gone
# field NODE ID KEY: one field of `ecosched show ID` on NODE's daemon
field() { ECOSCHED_SOCKET="$R/$1/d.sock" "$ECO" show "$2" | awk -v k="$3" '$1 == k { print $2; exit }'; }
check "n1's ecoschedd recorded the Slurm job ($(field n1 1 name))" [ "$(field n1 1 name)" = "slurm-1" ]
e=$(field n1 1 energy_j)
# 2 GPUs x 150 W x 3 s busy = 900 J, plus idle draw (23 W) between prolog and start; the fake
# library charges the time since its last reading at the current draw, and the daemon reads
# once a second, so up to a second of the busy time may count as idle: 500..2000 J
check "GPU energy of the srun job recorded by n1's ecoschedd (${e:-none} J, expect 500..2000)" \
    awk "BEGIN { exit !(\"${e:-0}\" + 0 >= 500 && \"${e:-0}\" + 0 <= 2000) }"

# 2. sbatch --gpu-energy: the energy line in the job's output; auto cap chosen by the daemon
j=$(sbatch --parsable -w n2 --gres=gpu:1 --gpu-energy --gpu-power-cap=auto -o "$R/out/b-%j.out" \
    --wrap "$(gpu_job 2)")
check "sbatch accepted ($j)" [ -n "$j" ]
has_line() { grep -q "ecosched: job $j on n2: GPU energy [0-9.]* J" "$R/out/b-$j.out" 2>/dev/null; }
check "sbatch --gpu-energy: energy line in the job's output" until_true 300 has_line
grep "ecosched: job" "$R/out/b-$j.out"
check "auto cap applied and logged on n2" grep -q "job $j: GPU [01]: power limit 1[0-9][0-9] W" "$R/log/slurmd.n2.log"

# 3. a bad value is refused before the job starts
srun --gpu-power-cap=abc true >"$R/out/bad" 2>&1; rc=$?
check "srun --gpu-power-cap=abc refused (exit $rc)" [ "$rc" -ne 0 ]
check "the refusal names the option" grep -q "Invalid --gpu-power-cap argument: abc" "$R/out/bad"

# 3b. a cap outside the GPU's range (the fake V100s take 100..250 W) is refused before anything
#     is set: the job runs at the default limit, registered (its energy measured), and its
#     output says why (the epilog writes the line: the prolog's output is not the job's)
j=$(sbatch --parsable -w n2 --gres=gpu:1 --gpu-power-cap=50 -o "$R/out/r-%j.out" --wrap "$(gpu_job 1)")
check "sbatch --gpu-power-cap=50 accepted ($j)" [ -n "$j" ]
range_line() {
    grep -q "ecosched: job $j on n2: --gpu-power-cap=50 W is outside GPU [01]'s limit range 100..250 W: not applied" \
        "$R/out/r-$j.out" 2>/dev/null
}
check "out-of-range cap: the job's output says it was not applied" until_true 300 range_line
check "... the prolog logged the refusal" \
    grep -q "job $j: --gpu-power-cap=50 W is outside GPU" "$R/log/slurmd.n2.log"
check "... and never asked NVML for 50 W" sh -c "! grep -q 'job $j: GPU [01]: limit 50 W' '$R/log/slurmd.n2.log'"
check "... n2's limits at the default 250 W" \
    [ "$(limit_mw n2 0) $(limit_mw n2 1)" = "250000 250000" ]

# 3c. a GPU shared by a job of n1's daemon (cap 120 W) and a Slurm job (cap 200 W): the prolog
#     sets the lowest cap (120 W on the shared GPU, 200 W on the other), the epilog leaves the
#     shared GPU at the daemon job's 120 W (only the other back to 250 W), and the shared GPU
#     is back at 250 W once the daemon job ends too
dj=$(ECOSCHED_SOCKET="$R/n1/d.sock" "$ECO" submit --gpus 1 --power-cap 120 -- \
    sh -c "while [ ! -e $R/go-dj ]; do sleep 0.2; done")
dj_running() { [ "$(field n1 "$dj" state)" = running ]; }
check "daemon job $dj runs on n1" until_true 100 dj_running
g=$(field n1 "$dj" assigned_gpus | tr -d '[]'); o=$((1 - ${g:-0}))
check "the daemon job's GPU $g at 120 W ($(limit_mw n1 "$g"))" [ "$(limit_mw n1 "$g")" = 120000 ]
srun -w n1 --gres=gpu:2 --gpu-power-cap=200 sleep 4 >"$R/out/srun2" 2>&1 &
SRUN=$!
shared_caps() { [ "$(limit_mw n1 "$g")" = 120000 ] && [ "$(limit_mw n1 "$o")" = 200000 ]; }
check "prolog: shared GPU $g keeps the lower 120 W, GPU $o at 200 W" until_true 100 shared_caps
wait $SRUN; rc=$?
check "the Slurm job on the shared GPU exits 0 (got $rc: $(cat "$R/out/srun2"))" [ "$rc" -eq 0 ]
after_epilog() { [ "$(limit_mw n1 "$g")" = 120000 ] && [ "$(limit_mw n1 "$o")" = 250000 ]; }
check "epilog: GPU $g still at the daemon job's 120 W ($(limit_mw n1 "$g")), GPU $o back at 250 W" \
    until_true 100 after_epilog
touch "$R/go-dj"
ECOSCHED_SOCKET="$R/n1/d.sock" "$ECO" wait "$dj" >/dev/null
check "the daemon job ended: n1's GPUs back at 250 W" until_true 100 restored

# 4. the power controller: a job on each node (2 GPUs each; n1's with --gpu-power-cap=150, so
#    2 x 150 + 4 x 200 = 1100 W uncapped), budget 1000 W stepped down to 950 W, then n3's daemon
#    killed: n1 + n2 share 950 - n3's 500 W maximum
PSOCK="$R/powerd.sock"
export ECOSCHED_POWERD_SOCKET="$PSOCK"
"$ECO" powerd --budget 1000 --period 1 --nodes "$R/%n/d.sock" --socket "$PSOCK" \
    --power-down forecast:window=600,margin=10 2>>"$R/log/powerd.log" &
PPID_=$!
PIDS="$PIDS $PPID_"
# the API socket is 0660 in powerd's group (issue 28: it was 0666, every user read every user's
# jobs and energy); --socket-group below lets nobody's group read it
OTHER="setpriv --reuid=65534 --regid=65534 --clear-groups"
until_true 50 test -S "$PSOCK"
check "powerd's socket is 0660 ($(stat -c %a "$PSOCK"))" [ "$(stat -c %a "$PSOCK")" = 660 ]
check "another user cannot read powerd's status" \
    sh -c "! $OTHER curl -sf --max-time 2 --unix-socket '$PSOCK' http://x/v1/status >/dev/null 2>&1"
for nd in $NODES; do
    cap=""; [ "$nd" = n1 ] && cap=--gpu-power-cap=150
    [ "$nd" = n2 ] && cap=--deadline=now+1hour # powerd passes it to the capper
    sbatch --parsable -w "$nd" --gres=gpu:2 $cap -o "$R/out/p-$nd.out" \
        --wrap "$(gpu_job_go) && echo job-ok" >"$R/out/p-$nd.id"
done
# node_w NODES...: summed GPU power the node daemons report
node_w() {
    for nd in "$@"; do
        curl -s --max-time 2 --unix-socket "$R/$nd/d.sock" http://x/v1/node |
            sed 's/.*"platform":"fake","power_w":\([0-9.]*\).*/\1/'
    done | awk '{ s += $1 } END { printf "%.1f", s }'
}
all_busy() { [ "$(squeue -h -t R | wc -l)" -eq 3 ] && awk "BEGIN { exit !($(node_w $NODES) > 600) }"; }
check "three jobs running on the fake GPUs" until_true 200 all_busy
# under W for N samples in a row, within T tenths of a second
held_under() {
    w=$1; need=$2; shift 2; ok=0; i=0
    while [ $i -lt 150 ]; do
        p=$(node_w "$@")
        if awk "BEGIN { exit !($p <= $w) }"; then ok=$((ok + 1)); else ok=0; fi
        [ $ok -ge "$need" ] && { echo "  $* at $p W <= $w W"; return 0; }
        sleep 0.2; i=$((i + 1))
    done
    echo "  $* at $p W > $w W"; return 1
}
check "fake GPUs held under the 1000 W budget" held_under 1000 5 $NODES
check "n1's limits never above its --gpu-power-cap=150 ($(limit_mw n1 0), $(limit_mw n1 1) mW)" \
    [ "$(limit_mw n1 0)" -le 150000 -a "$(limit_mw n1 1)" -le 150000 ]
"$ECO" power budget 950 >"$R/out/budget" 2>&1
check "ecosched power budget 950 accepted ($(cat "$R/out/budget"))" grep -q "budget 950 W" "$R/out/budget"
check "fake GPUs held under 950 W after the budget step" held_under 950 5 $NODES
"$ECO" power status
# mfield KEY: a figure of the capping metrics in powerd's status (docs/policies/powercap.md)
mfield() {
    "$ECO" power status --json | tr -d ' \n' |
        sed -n "s/.*\"metrics\":{[^}]*\"$1\":\([-0-9.e+]*\).*/\1/p"
}
# a loaded machine may not have run four periods yet: wait for them (up to 20 s)
for _ in $(seq 20); do
    [ "$(mfield periods)" -gt 3 ] 2>/dev/null && break
    sleep 1
done
mp=$(mfield periods); ms=$(mfield settling_periods); mb=$(mfield binding_periods)
mo=$(mfield overshoot_pct); mr=$(mfield overshoot_raw_pct); msh=$(mfield above_share)
check "powerd's status has capping metrics over its periods ($mp periods, $mb binding)" \
    awk "BEGIN { exit !(${mp:-0} > 3 && ${mb:--1} >= 0 && ${mb:-0} <= ${mp:-0}) }"
check "job starts and the budget step mark settling periods ($ms)" \
    awk "BEGIN { exit !(${ms:-0} >= 2 && ${ms:-0} < ${mp:-0}) }"
check "settled overshoot ($mo%) within the raw one ($mr%), share above in [0, 1] ($msh)" \
    awk "BEGIN { exit !(\"$mo\" != \"\" && $mo <= ${mr:--1} && ${msh:--1} >= 0 && ${msh:-2} <= 1) }"
# the allocation comes from the capper family's shared decide, with the job's deadline
pstat=$("$ECO" power status --json | tr -d ' \n')
check "powerd's status names the capper (mpc, the family's decide)" \
    sh -c "printf '%s' '$pstat' | grep -q '\"capper\":\"mpc\"'"
check "powerd passes n2's sbatch --deadline to the capper" \
    sh -c "printf '%s' '$pstat' | grep -q '\"deadline_s\":[0-9]'"
# 4b. powerd's /metrics (docs/slurm/powerd.md, "Metrics"): one power and one energy series per
#     running Slurm job (job_id = slurm_job_id, user root), valid for promtool
pmetrics() { curl -s --max-time 2 --unix-socket "$PSOCK" http://x/metrics; }
PJOBS=$(cat "$R"/out/p-n1.id "$R"/out/p-n2.id "$R"/out/p-n3.id)
# jseries NAME ID: the sample value of job ID's series NAME
jseries() {
    pmetrics | sed -n "s/^$1{job_id=\"$2\",user=\"root\",slurm_job_id=\"$2\"} \(.*\)/\1/p"
}
job_energy_up() {
    for j in $PJOBS; do
        e=$(jseries ecosched_powerd_job_energy_joules_total "$j")
        awk "BEGIN { exit !(\"$e\" != \"\" && $e > 0) }" || return 1
    done
}
check "powerd's /metrics has each running job's energy, growing above 0" until_true 100 job_energy_up
for j in $PJOBS; do
    pw=$(jseries ecosched_powerd_job_power_watts "$j")
    check "job $j's power series in powerd's /metrics (${pw:-none} W)" \
        awk "BEGIN { exit !(\"$pw\" != \"\" && $pw > 0 && $pw <= 500) }"
done
pmetrics >"$R/out/pmetrics"
check "powerd's /metrics names the budget (950 W) and n1's power" \
    sh -c "grep -q '^ecosched_powerd_budget_watts 950$' '$R/out/pmetrics' &&
           grep -q '^ecosched_powerd_node_power_watts{node=\"n1\"} [0-9]' '$R/out/pmetrics'"
if command -v promtool >/dev/null 2>&1; then
    check "promtool check metrics accepts powerd's /metrics" \
        sh -c "promtool check metrics <'$R/out/pmetrics' >'$R/out/promtool' 2>&1"
else
    echo "note: promtool not installed, the format check of powerd's /metrics skipped"
fi
kill -KILL $DPID_n3
sleep 2 # a period or two: powerd finds n3 silent
n3_lim="$(limit_mw n3 0) $(limit_mw n3 1)"
check "n1 + n2 held under 950 - 500 W (n3's maximum) once n3's daemon is silent" \
    held_under 450 5 n1 n2
check "n3 keeps its limits ($n3_lim mW)" [ "$(limit_mw n3 0) $(limit_mw n3 1)" = "$n3_lim" ]
"$ECO" power status | sed -n 1p
wn1=$(scontrol show node n1 | sed -n 's/.*Weight=\([0-9]*\).*/\1/p')
wn3=$(scontrol show node n3 | sed -n 's/.*Weight=\([0-9]*\).*/\1/p')
check "node weights: n1 busy ($wn1) below n3 silent ($wn3)" [ "${wn1:-0}" -gt 0 -a "${wn1:-0}" -lt "${wn3:-0}" ]
touch "$R/go"
done_all() { [ "$(squeue -h | wc -l)" -eq 0 ]; }
check "the three jobs ended" until_true 600 done_all
no_job_series() { ! pmetrics | grep -q '^ecosched_powerd_job_'; }
check "the ended jobs' series left powerd's /metrics" until_true 50 no_job_series
check "... while the families' HELP lines stay" \
    sh -c "curl -s --max-time 2 --unix-socket '$PSOCK' http://x/metrics |
           grep -q '^# HELP ecosched_powerd_job_power_watts'"
for nd in $NODES; do
    check "job on $nd completed (its daemon killed or not)" grep -q job-ok "$R/out/p-$nd.out"
done
check "n3 not drained after its epilog found no daemon" \
    sh -c "sinfo -h -n n3 -o %t | grep -qv drain"
check "n3's epilog logged the missing daemon" grep -q "GPU energy unknown" "$R/log/slurmd.n3.log"
check "n3's limits restored by the epilog through the platform" restored_n3

# 5. SuspendProgram / ResumeProgram: 3 arrivals of 2 GPUs within forecast's 600 s window with
#    margin 10 make a reserve of 10 x 6 / 600 x 300 s = 30 GPUs: the idle nodes all stay on
n1_idle() { "$ECO" power status --json | tr -d ' \n' | grep -q '"idle":\[[^]]*"n1"'; }
check "powerd sees n1 idle" until_true 100 n1_idle
"$ECO" power suspend n1 --command "echo off %n >>$R/out/off" >"$R/out/susp" 2>&1
check "suspend keeps n1 on as part of the forecast reserve ($(cat "$R/out/susp"))" \
    sh -c "grep -q 'n1: kept on' '$R/out/susp' && [ ! -e '$R/out/off' ]"
"$ECO" power suspend 'n[2-3]' --socket "$R/none.sock" --command "echo off %n >>$R/out/off" \
    >"$R/out/susp2" 2>&1
check "without powerd, suspend powers off every node listed" \
    [ "$(cat "$R/out/off" 2>/dev/null | tr '\n' ' ')" = "off n2 off n3 " ]
"$ECO" power resume 'n[1-3]' --command "echo on %n >>$R/out/on" >/dev/null 2>&1
check "resume powers on every node listed" [ "$(wc -l <"$R/out/on")" -eq 3 ]
"$ECO" power budget -5 >/dev/null 2>&1; rc=$?
check "power budget -5 refused with exit 2 (got $rc)" [ "$rc" -eq 2 ]

# 6. grid signals (docs/slurm/powerd.md, "Grid signals"): a second powerd reads a carbon signal
#    that is high now and low in 3 hours (the operator's forecast), cuts the 1000 W budget to
#    max(600 W floor, 0.5 x 1000 W) while it is high, keeps a job submitted with sbatch --hold
#    --comment=ecosched:max-delay=6h held and releases it (scontrol release) once the refreshed signal
#    makes this hour the lowest (and the budget is whole again)
kill -TERM "$PPID_"; wait "$PPID_"; rc=$?
check "first powerd exits 0 on SIGTERM (got $rc)" [ "$rc" -eq 0 ]
# carbon_file LOW_HOUR: hourly rows -24..24 h around this hour, 500 g/kWh, 50 in LOW_HOUR and
# the hour after it (a run that crosses the hour while it waits still finds now low)
carbon_file() {
    gnow=$(date +%s); gh0=$((gnow - gnow % 3600))
    { echo time_utc,carbon_gco2eq_per_kwh
      for h in $(seq -24 24); do
          v=500; [ "$h" -eq "$1" ] || [ "$h" -eq $(($1 + 1)) ] && v=50
          echo "$(date -u -d "@$((gh0 + 3600 * h))" +%Y-%m-%dT%H:00:00Z),$v"
      done; } >"$R/carbon.tmp"
    mv "$R/carbon.tmp" "$R/carbon.csv"
}
carbon_file 3
"$ECO" powerd --budget 1000 --period 1 --nodes "$R/%n/d.sock" --socket "$PSOCK" \
    --carbon "$R/carbon.csv" --carbon-policy lwa --dr-above 300 --dr-scale 0.5 --dr-floor 600 \
    --socket-group "$(getent group 65534 | cut -d: -f1)" 2>>"$R/log/powerd.log" &
PPID_=$!
PIDS="$PIDS $PPID_"
# gfield KEY: a field of the grid part of powerd's status
gfield() {
    "$ECO" power status --json 2>/dev/null | python3 -c "import json, sys
print(json.load(sys.stdin).get('grid', {}).get('$1'))" 2>/dev/null
}
dr_cut() { [ "$(gfield budget_effective_w)" = 600.0 ]; }
check "demand response: budget 1000 W cut to the 600 W floor while carbon is 500 g/kWh" \
    until_true 100 dr_cut
gforecast=$(gfield forecast)
check "powerd names the operator's forecast ($gforecast)" [ "$gforecast" = operator ]
check "a member of --socket-group reads powerd's status" \
    sh -c "$OTHER curl -sf --max-time 2 --unix-socket '$PSOCK' http://x/v1/status | grep -q budget_w"
sbatch --parsable -w n1 --gres=gpu:1 --hold --comment=ecosched:max-delay=6h -o "$R/out/defer.out" \
    --wrap "echo deferred-ok" >"$R/out/defer.id"
DJ=$(cat "$R/out/defer.id")
is_held() { squeue -h -j "$DJ" -o %r 2>/dev/null | grep -q JobHeld; }
is_listed() { "$ECO" power status --json | tr -d ' \n' | grep -q "\"job_id\":$DJ"; }
check "deferrable job $DJ (sbatch --hold) decided by powerd and listed held" until_true 100 is_listed
check "it is held in Slurm" is_held
check "powerd logged its release time" grep -q "job $DJ: release at" "$R/log/powerd.log"
sleep 2
check "still held two periods later" is_held
carbon_file 0
dj_done() { grep -q deferred-ok "$R/out/defer.out" 2>/dev/null; }
check "released when the refreshed signal makes this hour the lowest; it ran" until_true 300 dj_done
dr_whole() { [ "$(gfield budget_effective_w)" = 1000.0 ]; }
check "budget whole again at 50 g/kWh" until_true 50 dr_whole
check "powerd logged the hold's release" grep -q "job $DJ released" "$R/log/powerd.log"
# issue 28: an administrator holds job AJ (JobHeldAdmin), its user then sets
# comment=ecosched:max-delay=0s: powerd must never release it (it did within a period); a
# comment beyond 31 days of slack is refused, logged with the job and the field
AJ=$(sbatch --parsable -w n1 --gres=gpu:1 --hold -o /dev/null --wrap true)
scontrol hold "$AJ"
scontrol update jobid="$AJ" comment=ecosched:max-delay=0s
BJ=$(sbatch --parsable -w n1 --gres=gpu:1 --hold --comment=ecosched:max-delay=30000000d \
    -o /dev/null --wrap true)
check "powerd logged job $AJ's administrator's hold as not its own" \
    until_true 100 grep -q "job $AJ: held by an administrator" "$R/log/powerd.log"
check "powerd refused job $BJ's max-delay of 30000000 days, naming the field" \
    until_true 100 grep -q "job $BJ: comment .*field max-delay must be seconds 0..2678400" \
    "$R/log/powerd.log"
sleep 3 # three periods
check "job $AJ still held by its administrator ($(squeue -h -j "$AJ" -o %r))" \
    [ "$(squeue -h -j "$AJ" -o %r)" = JobHeldAdmin ]
check "job $BJ still held by its user ($(squeue -h -j "$BJ" -o %r))" \
    [ "$(squeue -h -j "$BJ" -o %r)" = JobHeldUser ]
check "powerd never released them" sh -c "! grep -q -e 'job $AJ released' -e 'job $BJ released' '$R/log/powerd.log'"
scancel "$AJ" "$BJ"

# powerd and the node daemons stop cleanly (a sanitizer build reports leaks at exit)
kill -TERM "$PPID_"; wait "$PPID_"; rc=$?
check "powerd exits 0 on SIGTERM (got $rc)" [ "$rc" -eq 0 ]
check "powerd logs its capping metrics at exit" grep -q "metrics: [0-9]* periods" "$R/log/powerd.log"
for nd in n1 n2; do
    eval "p=\$DPID_$nd"; kill -TERM "$p"; wait "$p"; rc=$?
    check "ecoschedd on $nd exits 0 on SIGTERM (got $rc)" [ "$rc" -eq 0 ]
done
check "no sanitizer report from powerd or the node daemons" \
    sh -c "! grep -l -e AddressSanitizer -e 'runtime error' '$R'/log/powerd.log '$R'/log/ecoschedd.*.log"

echo "$(basename "$0" .sh): $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
