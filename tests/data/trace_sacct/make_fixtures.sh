#!/bin/sh
# SPDX-License-Identifier: MIT
# Makes this folder's Slurm fixtures with a real Slurm 22.05 on one host (the set-up of
# tests/slurm/sacct.sh, from tests/slurm/common.shlib: a private MariaDB, munged, slurmdbd,
# slurmctld and three slurmd):
# n1 with two A100 (gres type a100), n2 with two V100 (type tesla, a site name), n3 without
# GPUs. It runs a few jobs (a typed and an untyped GPU job, a job with steps, an array, a
# heterogeneous job, a CPU-only job, a failed job, a held (pending) job, one cancelled before it started and one still running) and writes
# sacct -P (with and without -X), sacct --json, scontrol show node --oneliner and sinfo --json.
# Usage (root): sh make_fixtures.sh OUTDIR
# With MORE=N, N more GPU jobs (1-2 GPUs, a100, tesla or any, 1-3 s, staggered submits) run
# first, and OUTDIR/jobs-many.sacct holds the -X export of all of them (docs/advise.md's
# example on real Slurm output).
set -eu
OUT="$1"
mkdir -p "$OUT"
# the real-Slurm tests' set-up: until_true, BASE, slurm_conf_*, fake_gpu_devs, start_munged,
# start_accounting, start_slurmd, wait_nodes_idle
skip() { echo "make_fixtures: $*" >&2; exit 1; }
. "$(dirname "$0")/../../slurm/common.shlib"
R=$(mktemp -d /tmp/ecosched-fixt.XXXXXX)
chmod 755 "$R"
PIDS=""
fail=0
DB_PORT=$((BASE + 8)); DBD_PORT=$((BASE + 9))
export SLURM_CONF="$R/slurm.conf"
cleanup() {
    for p in $PIDS; do kill -TERM "$p" 2>/dev/null || true; done
    sleep 1
    for p in $PIDS; do kill -KILL "$p" 2>/dev/null || true; done
    [ -n "${KEEP_T:-}" ] || rm -rf "$R"
}
trap cleanup EXIT
mkdir -p "$R/log" "$R/state"
: >"$R/plugstack.conf"
dd if=/dev/urandom of="$R/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$R/munge.key"
start_munged "$R" "$R/munge.key" ctl
HOST=$(hostname -s)
cat >"$R/slurm.conf" <<EOF
ClusterName=ecofix
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$BASE
$(slurm_conf_base "$R/munge.sock")
$(slurm_conf_acct "$R/munge.sock" localhost "$DBD_PORT" gres/gpu,gres/gpu:a100,gres/gpu:tesla)
EOF
echo "AutoDetect=off" >"$R/gres.conf"
i=1
for spec in n1:a100 n2:tesla n3:; do
    nd=${spec%%:*}; ty=${spec#*:}
    mkdir -p "$R/spool/$nd"
    if [ -n "$ty" ]; then
        fake_gpu_devs "$nd"
        gres="Gres=gpu:$ty:2"
        echo "NodeName=$nd Name=gpu Type=$ty File=$R/dev/$nd/nvidia[0-1]" >>"$R/gres.conf"
    else
        gres=""
    fi
    echo "NodeName=$nd NodeHostname=$HOST NodeAddr=127.0.0.1 Port=$((BASE + i)) CPUs=2 Sockets=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=1000 $gres State=UNKNOWN" >>"$R/slurm.conf"
    i=$((i + 1))
done
echo "PartitionName=gpu Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP" >>"$R/slurm.conf"
echo "PartitionName=cpu Nodes=n3 MaxTime=2:00:00 State=UP" >>"$R/slurm.conf"
echo "PartitionName=all Nodes=n1,n2,n3 MaxTime=INFINITE State=UP" >>"$R/slurm.conf"
ACCOUNTS="proj-a proj-b" start_accounting "$R/munge.sock" ecofix "$DB_PORT" "$DBD_PORT"
spawn "" "$R/log/slurmctld.out" slurmctld -D -i
for nd in n1 n2 n3; do start_slurmd "$nd"; done
wait_nodes_idle 3 n1 n2 n3 || exit 1
cd "$R"
printf '#!/bin/sh\nsleep 2\n' >het.sh
sbatch --parsable -A proj-a -p gpu --gres=gpu:a100:1 -t 5 -o /dev/null --wrap 'sleep 3'
sbatch --parsable -A proj-b -p gpu --gres=gpu:tesla:2 -t 1:00:00 -o /dev/null --wrap 'srun sleep 2; sleep 1'
sbatch --parsable -A proj-a -p gpu --gres=gpu:1 -o /dev/null --wrap 'sleep 2'
sbatch --parsable -A proj-a -p gpu --array=0-2 --gres=gpu:1 -t 0-00:10:00 -o /dev/null --wrap 'sleep 2'
sbatch --parsable -A proj-b -p gpu -t 10 -o /dev/null --gres=gpu:a100:1 : -p gpu --gres=gpu:tesla:1 het.sh
sbatch --parsable -A proj-a -p cpu -o /dev/null --wrap 'sleep 1'
sbatch --parsable -A proj-b -p gpu --gres=gpu:a100:2 -t 2 -o /dev/null --wrap 'sleep 1; false'
sbatch --parsable -A proj-a -p gpu --gres=gpu:1 -H -o /dev/null --wrap 'sleep 1'
c=$(sbatch --parsable -A proj-b -p gpu --gres=gpu:tesla:1 -H -o /dev/null --wrap 'sleep 1')
sleep 2
scancel "$c"
i=0
while [ "$i" -lt "${MORE:-0}" ]; do
    case $((i % 3)) in 0) g=gpu:a100:1 ;; 1) g=gpu:tesla:$((i % 2 + 1)) ;; *) g=gpu:1 ;; esac
    a=proj-a
    [ $((i % 2)) -eq 1 ] && a=proj-b
    sbatch --parsable -A "$a" -p gpu --gres=$g -t 5 -o /dev/null \
        --wrap "sleep $((i % 3 + 1))" >/dev/null
    i=$((i + 1))
    [ $((i % 5)) -eq 0 ] && sleep 1
done
# wait until only the held job is left, then start one that is still running at the export
left() { [ "$(squeue -h | wc -l)" -le 1 ]; }
until_true 600 left
sbatch --parsable -A proj-a -p gpu --gres=gpu:a100:1 -t 1-00:00:00 -o /dev/null --wrap 'sleep 300'
running() { [ "$(squeue -h -t running | wc -l)" -eq 1 ]; }
until_true 300 running
sleep 3
F=JobID,User,Account,Partition,State,Submit,Start,End,ElapsedRaw,Elapsed,Timelimit,AllocTRES,ReqTRES
S=$(date +%Y-%m-%d)
sacct -a -X -P -S "$S" -E now -o $F >"$OUT/jobs-X.sacct"
sacct -a -P -S "$S" -E now -o $F >"$OUT/jobs-steps.sacct"
sacct -a -X -P -S "$S" -E now -o JobID,Submit,Start,End,Elapsed,Timelimit,AllocTRES,ReqTRES,State >"$OUT/jobs-elapsed.sacct"
sacct -a --json -S "$S" -E now >"$OUT/jobs.json"
scontrol show node --oneliner >"$OUT/nodes.scontrol"
sinfo --json >"$OUT/sinfo.json"
if [ "${MORE:-0}" -gt 0 ]; then
    sacct -a -X -P -S "$S" -E now -o $F >"$OUT/jobs-many.sacct"
fi
