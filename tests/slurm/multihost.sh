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
CGROUP_DIR="${ECO_TEST_CGROUP_DIR:-/sys/fs/cgroup}"
mountpoint -q "$CGROUP_DIR" 2>/dev/null ||
    skip "no cgroup filesystem mounted on $CGROUP_DIR (slurmd refuses to start without one)"
need=""
for p in munge slurmctld slurmd slurm-client slurmdbd mariadb-server; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need="$need $p"
done
if [ -n "$need" ]; then
    echo "installing:$need"
    export DEBIAN_FRONTEND=noninteractive
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends $need; } >/dev/null 2>&1 ||
        skip "could not install$need with apt-get"
fi

R=$(mktemp -d /tmp/ecosched-mhost.XXXXXX)
chmod 755 "$R"
HOSTS="h1 h2 h3 h4"
PIDS=""
fail=0; n=0
NS="eco$$" # namespaces eco<PID>c (controller) and eco<PID>h1..h4: unique per run
NET=10.213.0 # the cluster network, inside the namespaces only
CTL_ADDR=$NET.1
addr_of() { echo "$NET.1${1#h}"; } # h1 -> 10.213.0.11
NODE_PORT=7070                      # ecoschedd's cluster listener on each host
mkdir -p "$R/log" "$R/out" "$R/fake" "$R/lock" "$R/ctl"
chmod 0700 "$R/lock"
export SLURM_CONF="$R/ctl/slurm.conf"
CTL_NS="${NS}c" # where Slurm's clients run (common.shlib)
# until_true, spawn, at, start_munged, start_slurmd, wait_nodes_idle, start_accounting
. "$(dirname "$0")/common.shlib"

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
ip -n "${NS}c" link set lo up
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
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$1
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
MailProg=/bin/true
GresTypes=gpu
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=$CTL_ADDR
AccountingStoragePass=$1
AccountingStorageTRES=gres/gpu
JobAcctGatherType=jobacct_gather/none
StateSaveLocation=$R/state
SlurmdSpoolDir=$R/spool/%n
SlurmctldPidFile=$R/slurmctld.pid
SlurmdPidFile=$R/slurmd.%n.pid
SlurmctldLogFile=$R/log/slurmctld.log
SlurmdLogFile=$R/log/slurmd.%n.log
SlurmdParameters=config_overrides
PlugStackConfig=$R/plugstack.conf
ReturnToService=2
SchedulerParameters=sched_interval=1
InactiveLimit=0
KillWait=2
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
    mkdir -p "$R/spool/$h" "$R/dev/$h"
    for g in 0 1; do
        mknod "$R/dev/$h/nvidia$g" c 1 3 2>/dev/null ||
            skip "cannot create character devices for the fake GPUs (mknod not permitted here)"
    done
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
EOF
    "$ECOD" --help | grep -q cluster-listen && cat >>"$R/$h/ecoschedd.conf" <<EOF
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

echo "$(basename "$0" .sh): $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
