#!/bin/sh
# SPDX-License-Identifier: MIT
# ecosched on a Slurm cluster of separate hosts, made on this machine from network namespaces
# joined by veth pairs to a bridge: a controller host (slurmctld, slurmdbd on MariaDB, powerd)
# and four compute hosts h1..h4, each with its own address, munged (the site's key), slurmd and
# ecoschedd on two fake GPUs, the node daemon serving powerd on the cluster network with MUNGE
# credentials. Checks a job spanning two hosts capped, its energy in sacct, the cluster budget
# held across hosts (MAE and overshoot from powerd), requests refused without a credential,
# with a replayed one, one of an unprivileged user and one from another munge key, and the
# budget through faults: powerd killed and restarted, a host cut off, a node daemon killed and
# restarted (docs/slurm/powerd.md, "Faults").
# Arguments: ECOSCHED ECOSCHEDD FAKE_NVML_LIB FAKE_GPU_RUN SPANK_SO FAKE_NVML_PLAIN SOURCE_DIR.
# Needs root, `ip netns`, a mounted /sys/fs/cgroup, munge, Slurm, slurmdbd and MariaDB (skipped,
# exit 77, with the reason where any is missing); sends traffic only to the addresses of the
# namespaces it creates, and removes them, their links and everything it started.
set -u
ECO="$1"; ECOD="$2"; FAKE_LIB="$3"; FAKE_RUN="$4"; SPANK="$5"; FAKE_PLAIN="$6"
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (creates network namespaces, starts munged and Slurm)"
[ -f "$SPANK" ] || skip "SPANK plugin not built (slurm/spank.h was missing at configure)"
command -v ip >/dev/null || skip "no ip command (package iproute2)"
# need_cgroup, need_packages, until_true, spawn, at, slurm_conf_*, fake_gpu_devs, start_munged,
# start_slurmd, wait_nodes_idle, start_accounting
. "$(dirname "$0")/common.shlib"
need_cgroup
need_packages munge slurmctld slurmd slurm-client slurmdbd mariadb-server

R=$(mktemp -d /tmp/ecosched-mhost.XXXXXX)
chmod 755 "$R"
HOSTS="h1 h2 h3 h4"
PIDS=""
fail=0; n=0
NS="eco$$" # namespaces eco<PID>c (controller) and eco<PID>h1..h4: unique per run
NET=10.213.0 # the cluster network, inside the namespaces only
CTL_ADDR=$NET.1
addr_of() { echo "$NET.1${1#h}"; } # h1 -> 10.213.0.11
NODE_PORT=7071                      # ecoschedd's cluster listener on each host (docs/slurm/deploy.md)
mkdir -p "$R/log" "$R/out" "$R/fake" "$R/lock" "$R/ctl"
chmod 0700 "$R/lock"
export SLURM_CONF="$R/ctl/slurm.conf"
CTL_NS="${NS}c" # where Slurm's clients run (common.shlib)

cleanup() {
    for p in $PIDS; do kill -TERM "$p" 2>/dev/null; done
    sleep 1
    for p in $PIDS; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    for h in c $HOSTS; do ip netns del "$NS$h" 2>/dev/null; rm -rf "/etc/netns/$NS$h"; done
    rmdir /etc/netns 2>/dev/null
    if [ "$fail" -ne 0 ] || [ -n "${KEEP_T:-}" ]; then
        for f in "$R"/log/*; do echo "--- $f"; tail -20 "$f"; done
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

# ---- the hosts: a bridge in the controller's namespace, a veth pair to each compute host
ip netns add "${NS}c" 2>"$R/log/netns.err" ||
    skip "ip netns add not permitted here: $(cat "$R/log/netns.err")"
# In a chroot whose / is not a mount point, ip netns add only warns ("mount --make-rslave /"
# failed) and the namespace cannot be entered: try it before building on it.
{ ip netns exec "${NS}c" true && ip -n "${NS}c" link set lo up; } 2>>"$R/log/netns.err" ||
    skip "network namespaces are not usable here (a chroot whose / is not a mount point?):" \
        "$(tr '\n' ' ' <"$R/log/netns.err")"
ip -n "${NS}c" link add br0 type bridge
ip -n "${NS}c" addr add "$CTL_ADDR/24" dev br0
ip -n "${NS}c" link set br0 up
for h in $HOSTS; do
    ip netns add "$NS$h" || { echo "FAIL: ip netns add $NS$h"; fail=1; exit 1; }
    ip -n "$NS$h" link set lo up
    ip -n "${NS}c" link add "v$h" type veth peer name eth0 netns "$NS$h" ||
        { echo "FAIL: veth pair to $h"; fail=1; exit 1; }
    ip -n "${NS}c" link set "v$h" master br0 up
    ip -n "$NS$h" addr add "$(addr_of "$h")/24" dev eth0
    ip -n "$NS$h" link set eth0 up
done
# the hosts' names, as a site's DNS gives them (ip netns exec mounts /etc/netns/NS/hosts)
{
    echo "127.0.0.1 localhost"
    echo "$CTL_ADDR ctl"
    for h in $HOSTS; do echo "$(addr_of "$h") $h"; done
} >"$R/hosts"
for h in c $HOSTS; do mkdir -p "/etc/netns/$NS$h" && cp "$R/hosts" "/etc/netns/$NS$h/hosts"; done

# ---- munge: the site's key on every host, each host its own munged; a rogue key elsewhere
dd if=/dev/urandom of="$R/munge.key" bs=1024 count=1 2>/dev/null
dd if=/dev/urandom of="$R/rogue.key" bs=1024 count=1 2>/dev/null
chmod 400 "$R/munge.key" "$R/rogue.key"
start_munged "$R/ctl" "$R/munge.key" ctl "${NS}c" || skip "munged did not start"
for h in $HOSTS; do
    mkdir -p "$R/$h"
    start_munged "$R/$h" "$R/munge.key" "$h" "$NS$h" || { echo "FAIL: munged on $h"; fail=1; exit 1; }
done
mkdir -p "$R/rogue"
start_munged "$R/rogue" "$R/rogue.key" rogue "${NS}c" || { echo "FAIL: rogue munged"; fail=1; exit 1; }

# ---- Slurm: one slurm.conf, each host's copy naming its own munge socket
HOST=$(hostname -s)
slurm_conf() { # MUNGE_SOCKET
    cat <<EOF
ClusterName=ecomulti
SlurmctldHost=$HOST($CTL_ADDR)
$(slurm_conf_base "$1")
$(slurm_conf_acct "$1" "$CTL_ADDR" 6819)
DebugFlags=NO_CONF_HASH
EOF
    for _h in $HOSTS; do
        echo "NodeName=$_h NodeHostname=$HOST NodeAddr=$(addr_of "$_h") CPUs=2 Sockets=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=1000 Gres=gpu:2 State=UNKNOWN"
    done
    echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
}
mkdir -p "$R/state"
slurm_conf "$R/ctl/munge.sock" >"$R/ctl/slurm.conf"
echo "AutoDetect=off" >"$R/ctl/gres.conf"
for h in $HOSTS; do
    fake_gpu_devs "$h"
    echo "NodeName=$h Name=gpu File=$R/dev/$h/nvidia[0-1]" >>"$R/ctl/gres.conf"
done
for h in $HOSTS; do
    slurm_conf "$R/$h/munge.sock" >"$R/$h/slurm.conf"
    cp "$R/ctl/gres.conf" "$R/$h/gres.conf"
done
echo "required $SPANK socket=$R/%n/d.sock platform=fake library=$FAKE_PLAIN fake_state=$R/fake/%n.state accounting=admincomment lock_dir=$R/lock" >"$R/plugstack.conf"

DBD_ADDR=$CTL_ADDR start_accounting "$R/ctl/munge.sock" ecomulti 3306 6819 "${NS}c"

# ---- a node daemon per compute host: the unix socket for the SPANK plugin, the cluster
#      listener for powerd (MUNGE credentials; root may set limits, nobody may read)
for h in $HOSTS; do
    cat >"$R/$h/ecoschedd.conf" <<EOF
socket = $R/$h/d.sock
state_dir = $R/$h/state
platform = fake
cluster_listen = $(addr_of "$h"):$NODE_PORT
munge_socket = $R/$h/munge.sock
EOF
    ECOSCHED_FAKE_NVML_STATE="$R/fake/$h.state" ECOSCHED_FAKE_NVML_GPUS=2 \
        ECOSCHED_FAKE_NVML_LIB="$FAKE_LIB" spawn "$NS$h" "$R/log/ecoschedd.$h.log" \
        "$ECOD" --config "$R/$h/ecoschedd.conf" --foreground --util-window 1 --log-level debug
    eval "DPID_$h=$SPAWNED"
done
spawn "${NS}c" "$R/log/slurmctld.out" slurmctld -D -i
for h in $HOSTS; do
    SLURM_CONF="$R/$h/slurm.conf" SLURMD_NS="$NS$h" start_slurmd "$h"
done
wait_nodes_idle 4 $HOSTS || { fail=1; exit 1; }
for h in $HOSTS; do
    until_true 50 test -S "$R/$h/d.sock" || { echo "FAIL: ecoschedd on $h"; fail=1; exit 1; }
done
echo "cluster up: $(at "$CTL_NS" sinfo -h -N -o '%N %t' | tr '\n' ' ')"

# Slurm's clients run on the controller host
ctl() { at "${NS}c" "$@"; }
limit_mw() { awk -v g="$2" '$1 == "gpu" && $2 == g { print $4 }' "$R/fake/$1.state"; }
gpu_job() { echo "ECOSCHED_FAKE_NVML_STATE=$R/fake/\$SLURMD_NODENAME.state $FAKE_RUN \$CUDA_VISIBLE_DEVICES sleep $1"; }
gpu_job_go() { echo "ECOSCHED_FAKE_NVML_STATE=$R/fake/\$SLURMD_NODENAME.state $FAKE_RUN \$CUDA_VISIBLE_DEVICES sh -c 'while [ ! -e $R/go ]; do sleep 0.2; done'"; }
comment() { ctl sacct -n -X -P -j "$1" -o AdminComment 2>/dev/null | tail -1; }

# ---- 1. a job spanning two hosts, capped, its energy in sacct
ctl srun -N 2 -w h1,h2 --gres=gpu:2 --gpu-power-cap=150 sh -c "echo \$SLURM_JOB_ID; $(gpu_job 3)" \
    >"$R/out/srun1" 2>&1 &
SRUN=$!
capped2() {
    for h in h1 h2; do
        [ "$(limit_mw "$h" 0)" = 150000 ] && [ "$(limit_mw "$h" 1)" = 150000 ] || return 1
    done
}
check "two-host srun --gpu-power-cap=150: the GPUs of h1 and h2 at 150 W while it runs" \
    until_true 150 capped2
wait $SRUN; rc=$?
j1=$(head -1 "$R/out/srun1")
check "the two-host job exits 0 (got $rc: $(tr '\n' ' ' <"$R/out/srun1"))" [ "$rc" -eq 0 ]
two_parts() { comment "$j1" | grep -q "ecosched gpu_energy_j=[0-9.]* nodes=2 .*h1=.*h2=\|ecosched gpu_energy_j=[0-9.]* nodes=2 .*h2=.*h1="; }
check "the two-host job's GPU energy from both hosts in sacct" until_true 300 two_parts
echo "sacct -j $j1: $(comment "$j1")"
e1=$(comment "$j1" | sed -n 's/.*ecosched gpu_energy_j=\([0-9.]*\) .*/\1/p')
# 2 hosts x 2 GPUs x 150 W x 3 s = 1,800 J busy, plus idle draw; at least half of it
check "... above 900 J (${e1:-none} J)" awk "BEGIN { exit !(\"${e1:-0}\" + 0 > 900) }"


# ---- 2. the cluster listener refuses what it must, over the cluster network
# payload, cred: MUNGE credentials bound to a request (docs/http-api.md)
. "$(dirname "$0")/../munge.shlib"
# req HOST CRED METHOD PATH [BODY]: from the controller host, the HTTP status; answer in out/r
req() {
    url="http://$1:$NODE_PORT$4"
    if [ "$3" = POST ]; then
        ctl curl -s --max-time 5 -o "$R/out/r" -w '%{http_code}' ${2:+-H "Authorization: MUNGE $2"} \
            -H 'Content-Type: application/json' -d "$5" "$url"
    else
        ctl curl -s --max-time 5 -o "$R/out/r" -w '%{http_code}' ${2:+-H "Authorization: MUNGE $2"} "$url"
    fi
}
CS="$R/ctl/munge.sock"
c=$(cred "$CS" GET /v1/node "")
code=$(req h1 "$c" GET /v1/node)
check "h1's cluster listener: root's credential from the controller's munged: 200 (got $code)" [ "$code" = 200 ]
code=$(req h1 "$c" GET /v1/node)
check "the same credential again: 401 credential replayed (got $code: $(cat "$R/out/r"))" \
    sh -c "[ '$code' = 401 ] && grep -q 'credential replayed' '$R/out/r'"
code=$(req h2 "" GET /v1/node)
check "no credential: 401 (got $code)" [ "$code" = 401 ]
B='{"power_limit_w":120}'
code=$(req h2 "$(cred "$CS" POST /v1/gpus/0/limit "$B" nobody)" POST /v1/gpus/0/limit "$B")
check "an unprivileged user's credential for a limit: 403 (got $code: $(cat "$R/out/r"))" \
    sh -c "[ '$code' = 403 ] && grep -q 'uid 65534 may not' '$R/out/r'"
code=$(req h2 "$(cred "$R/rogue/munge.sock" POST /v1/gpus/0/limit "$B")" POST /v1/gpus/0/limit "$B")
check "a credential of another munge key: 401 (got $code: $(cat "$R/out/r"))" \
    sh -c "[ '$code' = 401 ] && grep -q 'another munge key' '$R/out/r'"
check "... and h2's GPU 0 keeps its 250 W ($(limit_mw h2 0) mW)" [ "$(limit_mw h2 0)" = 250000 ]

# ---- 3. powerd on the controller holds the cluster budget across the hosts
BUDGET=1100
LEASE=3
PSOCK="$R/powerd.sock"
export ECOSCHED_POWERD_SOCKET="$PSOCK"
start_powerd() {
    # ip netns exec: powerd resolves the node names through the hosts' /etc/hosts
    spawn "" "$R/log/powerd.log" ip netns exec "${NS}c" "$ECO" powerd --budget "$BUDGET" \
        --period 1 --nodes "http://%n:$NODE_PORT" --node-auth munge --munge-socket "$CS" \
        --node-lease "$LEASE" --socket "$PSOCK"
    PPID_=$SPAWNED
    until_true 50 test -S "$PSOCK"
}
start_powerd
# node_w HOSTS...: the summed GPU power the node daemons read
node_w() {
    for h in "$@"; do
        curl -s --max-time 2 --unix-socket "$R/$h/d.sock" http://x/v1/node |
            sed 's/.*"platform":"fake","power_w":\([0-9.]*\).*/\1/'
    done | awk '{ s += $1 } END { printf "%.1f", s }'
}
# sample SECONDS FILE: the cluster's GPU power every 0.25 s into FILE; prints the largest
sample() {
    : >"$2"; i=0; k=$(($1 * 4))
    while [ $i -lt $k ]; do node_w $HOSTS >>"$2"; echo >>"$2"; sleep 0.25; i=$((i + 1)); done
    awk 'BEGIN { m = 0 } $1 > m { m = $1 } END { printf "%.1f", m }' "$2"
}
under() { awk "BEGIN { exit !($1 <= $2) }"; }
# each step on its own node's fake GPUs until $R/go (SLURMD_NODENAME: the step's node)
gpu_job_go >"$R/step.sh"
ja=$(ctl sbatch --parsable -N 2 -w h1,h2 --gres=gpu:2 -o "$R/out/a.out" --wrap "srun -N 2 sh $R/step.sh && echo job-ok")
jb=$(ctl sbatch --parsable -N 2 -w h3,h4 --gres=gpu:2 -o "$R/out/b.out" --wrap "srun -N 2 sh $R/step.sh && echo job-ok")
check "two two-host jobs accepted ($ja, $jb)" [ -n "$ja" ] && [ -n "$jb" ]
running() { [ "$(ctl squeue -h -t R | wc -l)" -eq "$1" ]; }
check "both running" until_true 300 running 2
# settled: 5 samples in a row under the budget (the models learn in their first ~10 periods)
held() {
    ok=0; i=0
    while [ $i -lt 200 ]; do
        p=$(node_w $HOSTS)
        if under "$p" "$1"; then ok=$((ok + 1)); else ok=0; fi
        [ $ok -ge 5 ] && return 0
        sleep 0.2; i=$((i + 1))
    done
    echo "  cluster at $p W > $1 W"; return 1
}
mfield() {
    ECOSCHED_POWERD_SOCKET="$PSOCK" "$ECO" power status --json | tr -d ' \n' |
        sed -n "s/.*\"metrics\":{[^}]*\"$1\":\([-0-9.e+]*\).*/\1/p"
}
# the capper family teaches each new job's model with its first 10 limits dithered by +-15 %
# of the range (docs/policies/powercap.md): the budget is held from about the 11th period
p0=$(mfield periods)
learnt() { [ "$(mfield periods)" -ge $((${p0:-0} + 12)) ] 2>/dev/null; }
check "powerd ran the 12 periods of the jobs' learning" until_true 300 learnt
check "the four hosts' GPUs held under the ${BUDGET} W budget (8 GPUs busy, 1600 W uncapped)" held "$BUDGET"
m=$(sample 8 "$R/out/steady")
echo "steady: largest cluster power over 8 s: $m W (budget $BUDGET W)"
st=$(awk -v b="$BUDGET" '$1 != "" { n++; d = ($1 - b) / b; e += d < 0 ? -d : d; if (d > o) o = d }
    END { printf "MAE %.1f %%, largest overshoot %.1f %% over %d samples", 100 * e / n, 100 * o, n }' "$R/out/steady")
echo "steady (after the learning): $st"
echo "powerd's capping metrics since its start, the learning included: periods $(mfield periods), binding $(mfield binding_periods), MAE $(mfield mae_binding_pct | cut -c1-5) %, overshoot $(mfield overshoot_pct | cut -c1-5) %"
check "steady: under the budget plus one grid step (3 %) at every sample ($m W)" under "$m" "$BUDGET * 1.03"
lim_sum() { for h in $HOSTS; do limit_mw "$h" 0; limit_mw "$h" 1; done | awk '{ s += $1 / 1000 } END { printf "%.0f", s }'; }

# ---- 4. faults (docs/slurm/powerd.md, "Faults")
# 4a. powerd killed: the nodes keep its limits, then fall back to their shares after the lease
kill -KILL "$PPID_"
t0=$(date +%s.%N)
sample $((LEASE + 4)) "$R/out/nopowerd" >/dev/null &
SAMPLER=$!
fb() { curl -s --max-time 2 --unix-socket "$R/$1/d.sock" http://x/v1/node | grep -q '"fallback":{[^}]*"active":true'; }
all_fb() { for h in $HOSTS; do fb "$h" || return 1; done; }
check "powerd killed: every node in fallback after the ${LEASE} s lease" until_true 100 all_fb
t1=$(date +%s.%N)
wait $SAMPLER
m=$(awk 'BEGIN { m = 0 } $1 > m { m = $1 } END { printf "%.1f", m }' "$R/out/nopowerd")
echo "fault: powerd killed: fallback on all hosts $(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }") s after (lease ${LEASE} s); largest cluster power $m W (budget $BUDGET W)"
check "powerd killed: the cluster under the budget (+3 %) throughout ($m W)" under "$m" "$BUDGET * 1.03"
# 4b. a host cut off while powerd is away: h3 keeps its share
ip -n "${NS}h3" link set eth0 down
m=$(sample 4 "$R/out/cut")
echo "fault: h3 cut off (ip link set down), powerd away: largest cluster power $m W"
check "h3 cut off too: the cluster still under the budget ($m W)" under "$m" "$BUDGET * 1.03"
# 4c. powerd restarted with h3 still cut off: it reads the nodes first, sets h3's share aside
start_powerd
m=$(sample 6 "$R/out/restart")
echo "fault: powerd restarted, h3 still cut off: largest cluster power $m W"
check "powerd restarted: the budget held at every sample ($m W)" under "$m" "$BUDGET * 1.03"
check "powerd restarted: the nodes it reaches out of fallback" until_true 100 sh -c "! curl -s --unix-socket '$R/h1/d.sock' http://x/v1/node | grep -q '\"fallback\":{[^}]*\"active\":true'"
ip -n "${NS}h3" link set eth0 up
# 4d. a node daemon killed and restarted: its caps kept
before="$(limit_mw h4 0) $(limit_mw h4 1)"
eval "kill -KILL \$DPID_h4"
sleep 1
ECOSCHED_FAKE_NVML_STATE="$R/fake/h4.state" ECOSCHED_FAKE_NVML_GPUS=2 \
    ECOSCHED_FAKE_NVML_LIB="$FAKE_LIB" spawn "${NS}h4" "$R/log/ecoschedd.h4.log" \
    "$ECOD" --config "$R/h4/ecoschedd.conf" --foreground --util-window 1 --log-level debug
until_true 50 test -S "$R/h4/d.sock"
sleep 1
after="$(limit_mw h4 0) $(limit_mw h4 1)"
check "h4's daemon restarted: its caps kept, not reset to the 250 W default (before $before mW, after $after mW)" \
    sh -c "[ '$after' != '250000 250000' ] && [ -n '$(limit_mw h4 0)' ]"
m=$(sample 4 "$R/out/dmn")
echo "fault: h4's node daemon killed and restarted: caps $before -> $after mW, largest cluster power $m W"
check "after the daemon restart: the budget held ($m W)" under "$m" "$BUDGET * 1.03"
# no job lost
touch "$R/go"
done_all() { [ "$(ctl squeue -h | wc -l)" -eq 0 ]; }
check "both jobs ended" until_true 600 done_all
check "job $ja completed through the faults" grep -q job-ok "$R/out/a.out"
check "job $jb completed through the faults" grep -q job-ok "$R/out/b.out"

echo "$(basename "$0" .sh): $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
