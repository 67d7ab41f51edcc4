#!/bin/sh
# SPDX-License-Identifier: MIT
# The jobs' GPU energy in Slurm's accounting, as a site runs it: a private MariaDB, slurmdbd,
# slurmctld and two slurmd (n1, n2, two fake GPUs each) with one ecoschedd per node and the SPANK
# plugin with accounting=admincomment. `sacct -j ID -o AdminComment` must show the GPU energy
# each node's daemon measured, summed over the nodes, for a one-node interactive srun, a
# two-node batch job of two steps and a job on a GPU shared with a daemon job (its measured
# share); `ecosched report --accounting` reads the same jobs from `sacct --json`.
# Arguments: ECOSCHED ECOSCHEDD FAKE_NVML_LIB FAKE_GPU_RUN SPANK_SO FAKE_NVML_PLAIN SOURCE_DIR.
# Needs root, a mounted /sys/fs/cgroup, MariaDB and slurmdbd (installed when missing; skipped,
# exit 77, with the reason where they cannot be installed or started); stops what it starts.
set -u
ECO="$1"; ECOD="$2"; FAKE_LIB="$3"; FAKE_RUN="$4"; SPANK="$5"; FAKE_PLAIN="$6"
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (starts MariaDB, munged, slurmdbd, slurmctld and slurmd)"
[ -f "$SPANK" ] || skip "SPANK plugin not built (slurm/spank.h was missing at configure)"
# need_cgroup, need_packages, until_true, BASE, slurm_conf_*, start_munged, start_accounting,
# start_slurmd, wait_nodes_idle
. "$(dirname "$0")/common.shlib"
need_cgroup
need_packages munge slurmctld slurmd slurm-client slurmdbd mariadb-server
command -v mariadbd >/dev/null && command -v mariadb-install-db >/dev/null ||
    skip "mariadbd or mariadb-install-db missing (package mariadb-server)"

R=$(mktemp -d /tmp/ecosched-sacct.XXXXXX)
chmod 755 "$R"
NODES="n1 n2"
PIDS=""
fail=0; n=0
export SLURM_CONF="$R/slurm.conf"
DB_PORT=$((BASE + 8)); DBD_PORT=$((BASE + 9))

cleanup() {
    for p in $PIDS; do kill -TERM "$p" 2>/dev/null; done
    sleep 1
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
mkdir -p "$R/log" "$R/state" "$R/fake" "$R/out" "$R/lock"
chmod 0700 "$R/lock" # lock_dir: the plugin refuses one that others may write

dd if=/dev/urandom of="$R/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$R/munge.key"
start_munged "$R" "$R/munge.key" ctl || skip "munged did not start"
HOST=$(hostname -s)
# AccountingStoragePass names the munge socket for slurmdbd connections (slurm.conf(5))
cat >"$R/slurm.conf" <<EOF
ClusterName=ecoacct
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$BASE
$(slurm_conf_base "$R/munge.sock")
$(slurm_conf_acct "$R/munge.sock" localhost "$DBD_PORT")
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
echo "required $SPANK socket=$R/%n/d.sock platform=fake library=$FAKE_PLAIN fake_state=$R/fake/%n.state accounting=admincomment lock_dir=$R/lock" >"$R/plugstack.conf"

start_accounting "$R/munge.sock" ecoacct "$DB_PORT" "$DBD_PORT"

for nd in $NODES; do
    ECOSCHED_FAKE_NVML_STATE="$R/fake/$nd.state" ECOSCHED_FAKE_NVML_GPUS=2 \
        ECOSCHED_FAKE_NVML_LIB="$FAKE_LIB" "$ECOD" --foreground --socket "$R/$nd/d.sock" \
        --state-dir "$R/$nd/state" --platform fake --util-window 1 --log-level debug \
        2>>"$R/log/ecoschedd.$nd.log" &
    PIDS="$PIDS $!"
done
slurmctld -D -i >>"$R/log/slurmctld.out" 2>&1 &
PIDS="$PIDS $!"
for nd in $NODES; do
    start_slurmd "$nd"
done
wait_nodes_idle 2 $NODES || { fail=1; exit 1; }
for nd in $NODES; do
    until_true 50 test -S "$R/$nd/d.sock" || { echo "FAIL: ecoschedd on $nd"; fail=1; exit 1; }
done
echo "slurm with slurmdbd up: $(sinfo -h -N -o '%N %t' | tr '\n' ' ')"

gpu_job() { echo "ECOSCHED_FAKE_NVML_STATE=$R/fake/\$SLURMD_NODENAME.state $FAKE_RUN \$CUDA_VISIBLE_DEVICES sleep $1"; }
# comment ID: the job's AdminComment in slurmdbd
comment() { sacct -n -X -P -j "$1" -o AdminComment 2>/dev/null | tail -1; }
# has_nodes ID K: the comment holds K nodes' parts
has_nodes() { comment "$1" | grep -q "ecosched gpu_energy_j=[0-9.]* nodes=$2 "; }
# daemon_e NODE ID: the energy NODE's ecoschedd recorded for Slurm job ID (slurm-ID)
daemon_e() {
    ECOSCHED_SOCKET="$R/$1/d.sock" "$ECO" ls --all --json |
        jq -r --arg n "slurm-$2" '.jobs[] | select(.name == $n) | .energy_j' | awk '{ printf "%.1f", $1 }'
}
# part ID NODE: that node's part in the comment; total ID: the sum
part() { comment "$1" | tr ' ' '\n' | sed -n "s/^$2=\([0-9.]*\)[Jj].*/\1/p"; }
total() { comment "$1" | sed -n 's/.*ecosched gpu_energy_j=\([0-9.]*\) .*/\1/p'; }
near() { awk "BEGIN { d = ($1) - ($2); exit !(\"$1\" != \"\" && \"$2\" != \"\" && d < 0.15 && d > -0.15) }"; }

# 1. a one-node interactive srun
srun -A proj-a -w n1 --gres=gpu:1 --gpu-energy sh -c "echo \$SLURM_JOB_ID; $(gpu_job 2)" >"$R/out/srun1" 2>&1; rc=$?
j1=$(head -1 "$R/out/srun1")
check "interactive srun exits 0 (got $rc: $(cat "$R/out/srun1"))" [ "$rc" -eq 0 ]
check "srun job $j1: one node's part in AdminComment" until_true 100 has_nodes "$j1" 1
echo "sacct -j $j1: $(sacct -n -X -j "$j1" -o JobID,User,Account,NNodes,AdminComment%80)"
e1=$(daemon_e n1 "$j1")
check "srun --gpu-energy: srun's stderr has the job's GPU energy ($(grep 'ecosched: job' "$R/out/srun1"))" \
    grep -q "ecosched: job $j1: GPU energy $e1 J ([0-9.]* kWh) on 1 node: ecosched gpu_energy_j=" "$R/out/srun1"
check "srun job: sacct's GPU energy ($(total "$j1") J) is n1's measure ($e1 J)" near "$(total "$j1")" "$e1"
check "srun job: energy above zero ($e1 J)" awk "BEGIN { exit !(\"${e1:-0}\" + 0 > 0) }"

# 2. a two-node batch job with two steps: each node's part, summed
j2=$(sbatch --parsable -A proj-a -N 2 --gres=gpu:1 -o "$R/out/b2-%j.out" \
    --wrap "srun -N 2 sh -c '$(gpu_job 1)'; srun -N 2 sh -c '$(gpu_job 1)'")
check "two-node sbatch accepted ($j2)" [ -n "$j2" ]
check "two-node job $j2: both nodes' parts in AdminComment" until_true 600 has_nodes "$j2" 2
echo "sacct -j $j2: $(sacct -n -X -j "$j2" -o JobID,User,Account,NNodes,AdminComment%100)"
a=$(daemon_e n1 "$j2"); b=$(daemon_e n2 "$j2")
check "two-node job: n1's part ($(part "$j2" n1)) is n1's measure ($a)" near "$(part "$j2" n1)" "$a"
check "two-node job: n2's part ($(part "$j2" n2)) is n2's measure ($b)" near "$(part "$j2" n2)" "$b"
check "two-node job: the total ($(total "$j2")) is the sum ($a + $b)" \
    near "$(total "$j2")" "${a:-0} + ${b:-0}"
check "lock_dir: each epilog removed its lock file ($(ls -A "$R/lock" | tr '\n' ' '))" \
    until_true 50 sh -c "[ -z \"\$(ls -A '$R/lock')\" ]"
check "lock_dir: every part written under the lock" \
    sh -c "! grep -h 'without the lock' '$R'/log/slurmd.*.log"

# 3. a job on a GPU shared with a daemon job: its part is the daemon's measured share
dj=$(ECOSCHED_SOCKET="$R/n2/d.sock" "$ECO" submit --gpus 1 --share -- \
    sh -c "ECOSCHED_FAKE_NVML_STATE=$R/fake/n2.state $FAKE_RUN \$CUDA_VISIBLE_DEVICES sh -c 'while [ ! -e $R/go ]; do sleep 0.2; done'")
dj_running() { ECOSCHED_SOCKET="$R/n2/d.sock" "$ECO" show "$dj" | grep -q "^state *running"; }
check "daemon job $dj runs on n2" until_true 100 dj_running
srun -A proj-a -w n2 --gres=gpu:2 sh -c "echo \$SLURM_JOB_ID; $(gpu_job 2)" >"$R/out/srun3" 2>&1; rc=$?
touch "$R/go"
j3=$(head -1 "$R/out/srun3")
check "shared-GPU srun exits 0 (got $rc: $(cat "$R/out/srun3"))" [ "$rc" -eq 0 ]
check "shared-GPU job $j3: n2's part in AdminComment" until_true 100 has_nodes "$j3" 1
echo "sacct -j $j3: $(sacct -n -X -j "$j3" -o JobID,User,Account,NNodes,AdminComment%80)"
e3=$(daemon_e n2 "$j3")
check "shared-GPU job: sacct's energy ($(total "$j3") J) is n2's split share ($e3 J)" \
    near "$(total "$j3")" "$e3"
basis=$(ECOSCHED_SOCKET="$R/n2/d.sock" "$ECO" ls --all --json |
    jq -r --arg n "slurm-$j3" '.jobs[] | select(.name == $n) | .energy_basis')
echo "shared-GPU job: the daemon's basis for its energy: $basis"

# 4. the operator's report from sacct --json: proj-a's energy is the three jobs' sum
sacct --json -j "$j1,$j2,$j3" >"$R/out/sacct.json" 2>"$R/out/sacct.err"
"$ECO" report --accounting "$R/out/sacct.json" >"$R/out/report.txt" 2>&1; rc=$?
cat "$R/out/report.txt"
want=$(awk "BEGIN { printf \"%.1f\", $(total "$j1") + $(total "$j2") + $(total "$j3") }")
check "report --accounting exits 0 (got $rc)" [ "$rc" -eq 0 ]
check "report: account proj-a's energy is the jobs' sum ($want J)" \
    sh -c "awk '\$1 == \"account\" && \$2 == \"proj-a\" { print \$4 }' '$R/out/report.txt' | grep -qx '$want'"
check "report: proj-a's GPU hours from sacct's gres/gpu TRES above zero" \
    sh -c "awk '\$1 == \"account\" && \$2 == \"proj-a\" && \$6 > 0 { ok = 1 } END { exit !ok }' '$R/out/report.txt'"

# 5. AdminComment shared with other tools (issue 31): text another tool set while the job ran
# (scontrol, as slurmctld still holds the job) is kept as it was, ecosched's part after it; a
# comment with upper case in it (a Jobstats JS1: blob) is left alone, since sacctmgr would
# store it in lower case
shared_job() { # TEXT: a one-GPU job on n1 with that AdminComment set while it runs; its id
    rm -f "$R/go5"
    jid=$(sbatch --parsable -A proj-a -w n1 --gres=gpu:1 -o /dev/null \
        --wrap "while [ ! -e $R/go5 ]; do sleep 0.2; done")
    until_true 100 sh -c "squeue -h -j '$jid' -o %T | grep -q RUNNING"
    scontrol update jobid="$jid" AdminComment="$1" >>"$R/log/scontrol.log" 2>&1
    # in slurmctld's copy: Slurm 22.05 sends a running job's AdminComment to slurmdbd only with
    # the job's end record (sacct shows nothing until then), for which the epilog waits
    until_true 50 sh -c "scontrol show job -o '$jid' | grep -qF 'AdminComment=$1 '"
    touch "$R/go5"
    echo "$jid"
}
j5=$(shared_job "site note 7; cap=300w")
check "shared comment: job $j5's part added" until_true 100 has_nodes "$j5" 1
check "shared comment: the site's text kept in front ($(comment "$j5"))" \
    sh -c "sacct -n -X -P -j '$j5' -o AdminComment | tail -1 | grep -q '^site note 7; cap=300w; ecosched gpu_energy_j='"
j6=$(shared_job "JS1:H4sIAAAA+1Xy2/w==")
refused() { grep -q "job $j6: GPU energy not in Slurm's accounting: AdminComment holds another tool's text in upper case" "$R"/log/slurmd.n1.log; }
check "JS1: blob: job $j6's epilog left the comment alone (slurmd's log says why)" until_true 300 refused
check "JS1: blob: the comment as the other tool wrote it ($(comment "$j6"))" \
    [ "$(comment "$j6")" = "JS1:H4sIAAAA+1Xy2/w==" ]

# the epilogs that found slurmctld's end record not yet in slurmdbd and waited for it
echo "epilogs that waited for slurmctld's end record: $(grep -h "ms for slurmctld's end record" "$R"/log/slurmd.*.log | wc -l); not in time: $(grep -h "end record not in slurmdbd" "$R"/log/slurmd.*.log | wc -l)"
echo "$(basename "$0" .sh): $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
