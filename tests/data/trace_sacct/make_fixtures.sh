#!/bin/sh
# SPDX-License-Identifier: MIT
# Makes this folder's Slurm fixtures with a real Slurm 22.05 on one host (the setup of
# tests/slurm/sacct.sh: a private MariaDB, munged, slurmdbd, slurmctld and three slurmd):
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
R=$(mktemp -d /tmp/ecosched-fixt.XXXXXX)
chmod 755 "$R"
PIDS=""
BASE=$((24000 + ($$ % 1000) * 10))
DB_PORT=$((BASE + 8)); DBD_PORT=$((BASE + 9))
export SLURM_CONF="$R/slurm.conf"
cleanup() {
    for p in $PIDS; do kill -TERM "$p" 2>/dev/null || true; done
    sleep 1
    for p in $PIDS; do kill -KILL "$p" 2>/dev/null || true; done
    [ -n "${KEEP_T:-}" ] || rm -rf "$R"
}
trap cleanup EXIT
until_true() {
    t="$1"; shift; i=0
    while [ $i -lt "$t" ]; do "$@" && return 0; sleep 0.1; i=$((i + 1)); done
    return 1
}
mkdir -p "$R/log" "$R/state" "$R/db"
mariadb-install-db --no-defaults --datadir="$R/db" --user=root \
    --auth-root-authentication-method=normal --skip-test-db >"$R/log/install-db.log" 2>&1
mariadbd --no-defaults --datadir="$R/db" --socket="$R/my.sock" --port=$DB_PORT \
    --bind-address=127.0.0.1 --user=root --pid-file="$R/my.pid" --log-error="$R/log/mariadb.log" \
    --innodb-buffer-pool-size=32M &
PIDS="$PIDS $!"
db_up() { mariadb --no-defaults -S "$R/my.sock" -u root -e 'select 1' >/dev/null 2>&1; }
until_true 300 db_up
mariadb --no-defaults -S "$R/my.sock" -u root -e "CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'ecotest'; GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';"
dd if=/dev/urandom of="$R/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$R/munge.key"
munged -F --force --socket="$R/munge.sock" --key-file="$R/munge.key" --pid-file="$R/munged.pid" \
    --log-file="$R/log/munged.log" --seed-file="$R/munge.seed" 2>>"$R/log/munged.log" &
PIDS="$PIDS $!"
until_true 50 test -S "$R/munge.sock"
cat >"$R/slurmdbd.conf" <<EOF
AuthType=auth/munge
AuthInfo=socket=$R/munge.sock
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
SlurmUser=root
PidFile=$R/slurmdbd.pid
LogFile=$R/log/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=slurm
StoragePass=ecotest
StorageLoc=slurm_acct_db
EOF
chmod 600 "$R/slurmdbd.conf"
HOST=$(hostname -s)
cat >"$R/slurm.conf" <<EOF
ClusterName=ecofix
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$BASE
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$R/munge.sock
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
MailProg=/bin/true
GresTypes=gpu
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$DBD_PORT
AccountingStoragePass=$R/munge.sock
AccountingStorageTRES=gres/gpu,gres/gpu:a100,gres/gpu:tesla
JobAcctGatherType=jobacct_gather/none
StateSaveLocation=$R/state
SlurmdSpoolDir=$R/spool/%n
SlurmctldPidFile=$R/slurmctld.pid
SlurmdPidFile=$R/slurmd.%n.pid
SlurmctldLogFile=$R/log/slurmctld.log
SlurmdLogFile=$R/log/slurmd.%n.log
SlurmdParameters=config_overrides
ReturnToService=2
SchedulerParameters=sched_interval=1
InactiveLimit=0
KillWait=2
EOF
echo "AutoDetect=off" >"$R/gres.conf"
i=1
for spec in n1:a100 n2:tesla n3:; do
    nd=${spec%%:*}; ty=${spec#*:}
    mkdir -p "$R/spool/$nd" "$R/dev/$nd"
    if [ -n "$ty" ]; then
        for g in 0 1; do mknod "$R/dev/$nd/nvidia$g" c 1 3; done
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
slurmdbd -D >>"$R/log/slurmdbd.out" 2>&1 &
PIDS="$PIDS $!"
dbd_up() { timeout 5 sacctmgr -n list cluster >/dev/null 2>&1; }
until_true 100 dbd_up
for a in "add cluster ecofix" "add account proj-a" "add account proj-b" \
    "add user root account=proj-a" "add user root account=proj-b"; do
    # shellcheck disable=SC2086
    timeout 10 sacctmgr -i $a >>"$R/log/sacctmgr.log" 2>&1
done
slurmctld -D -i >>"$R/log/slurmctld.out" 2>&1 &
PIDS="$PIDS $!"
for nd in n1 n2 n3; do
    slurmd -D -N "$nd" >>"$R/log/slurmd.$nd.out" 2>&1 &
    PIDS="$PIDS $!"
done
nodes_idle() { [ "$(sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)" -eq 3 ]; }
until_true 300 nodes_idle || { sinfo -N; tail "$R"/log/*; exit 1; }
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
