#!/bin/sh
# SPDX-License-Identifier: MIT
# Energy on a shared fake GPU cannot be pushed onto another job (docs/daemon/README.md,
# "Energy"): job B at 1 % SM starts a double-forked `setsid` child at 49 % beside job A at 50 %;
# B is charged its child's share (about half), with the job's cgroup and, with job_cgroup = off,
# through its leader being a child subreaper. A GPU process started outside any job is reported
# (GET /v1/gpus, /metrics, the log) and its share is charged to no job.
. "$(dirname "$0")/common.shlib"
PATH="$PATH:$SRC/.tools/bin"
for tool in curl jq setsid; do
    command -v $tool >/dev/null || { echo "SKIP: $tool not found (scripts/setup.sh installs it)"; exit 77; }
done
export ECOSCHED_FAKE_NVML_GPUS=1
RUN_S=4 # the jobs run together this long: the start and end skew (0.1 s polls) stays < 4 %

# B's command: a child that leaves B's session and parent chain (setsid, then its parent
# exits), registered on the fake GPU at 49 % SM; it writes its pid and runs until go-ab.
cat >"$T/escape.sh" <<EOF
#!/bin/sh
setsid sh -c 'ECOSCHED_FAKE_NVML_PROC_SM_PCT=49 "$FAKE_RUN" 0 sh -c "echo \\\$\\\$ >$T/child.pid; \
while [ ! -e $T/go-ab ]; do sleep 0.05; done" </dev/null >/dev/null 2>&1 &'
while [ ! -e $T/go-ab ]; do sleep 0.05; done
EOF
chmod 755 "$T/escape.sh"
WAIT_AB="while [ ! -e $T/go-ab ]; do sleep 0.05; done"

gpus() { curl -s --unix-socket "$SOCK" http://localhost/v1/gpus; }
# near X WANT TOL: |X - WANT| <= TOL
near() { awk "BEGIN { d = $1 - $2; if (d < 0) d = -d; exit !(d <= $3) }"; }
between() { awk "BEGIN { exit !($1 >= $2 && $1 <= $3) }"; }

# escape MODE [restart]: A (50 %) and B (1 %, with the escaping child at 49 %) started in one
# pass; with "restart", the daemon is restarted (SIGTERM, then the same options) halfway, so
# that the adopted jobs are told apart the same way.
escape() {
    rm -f "$T/go-hold" "$T/go-ab" "$T/child.pid"
    hold=$("$ECO" submit -- sh -c "while [ ! -e $T/go-hold ]; do sleep 0.05; done")
    until_state "$hold" running || echo "FAIL: holder did not start"
    A=$(ECOSCHED_FAKE_NVML_PROC_SM_PCT=50 "$ECO" submit --share -- sh -c "$WAIT_AB")
    B=$(ECOSCHED_FAKE_NVML_PROC_SM_PCT=1 "$ECO" submit --share -- "$T/escape.sh")
    touch "$T/go-hold"
    "$ECO" wait "$hold"
    until_state "$A" running 100 && until_state "$B" running 50 || echo "FAIL: pair did not start"
    i=0
    while [ ! -s "$T/child.pid" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    child=$(cat "$T/child.pid" 2>/dev/null)
    bpid=$(jfield "$B" pid)
    if [ "${2:-}" = restart ]; then
        sleep $((RUN_S / 2))
        stop_daemon
        start_daemon $OPTS
        check "$1: A and B adopted" grep -q "job $B adopted" "$T/daemon.log"
        sleep $((RUN_S / 2 + 1))
    else
        sleep "$RUN_S"
    fi
    csid=$(ps -o sid= -p "$child" | tr -d ' ')
    cgrp=$(grep '^0::' "/proc/$child/cgroup" 2>/dev/null)
    check "$1: the child left B's session (child $child sid $csid, B's leader $bpid)" \
        [ -n "$csid" ] && [ "$csid" != "$bpid" ]
    if grep -q "processes told apart by cgroup" "$T/daemon.log"; then
        check "$1: the child is in B's cgroup ($cgrp)" sh -c "echo '$cgrp' | grep -q '/job-$B\$'"
    fi
    touch "$T/go-ab"
    "$ECO" wait "$A"; "$ECO" wait "$B"
    EA=$(field "$A" energy_j); EB=$(field "$B" energy_j)
    SB=$(awk "BEGIN { print $EB / ($EA + $EB) }")
    echo "$1: A $EA J, B $EB J, B's share $SB"
    check "$1: B is charged its escaped child's share, ~50 % (got $SB)" near "$SB" 0.50 0.05
}

OPTS=""
start_daemon
grep -E "processes told apart by" "$T/daemon.log"
escape "auto"
escape "auto, restarted" restart

# a stray GPU process outside any job, at 40 % SM, beside A and B at 30 % each
# (started after them: the live GPU strategy starts no job on a GPU busy with a stranger; A and
# B queued behind a holder, so they start in the same pass)
rm -f "$T/go-ab" "$T/go-hold"
hold=$("$ECO" submit -- sh -c "while [ ! -e $T/go-hold ]; do sleep 0.05; done")
until_state "$hold" running || echo "FAIL: holder did not start"
A=$(ECOSCHED_FAKE_NVML_PROC_SM_PCT=30 "$ECO" submit --share -- sh -c "$WAIT_AB")
B=$(ECOSCHED_FAKE_NVML_PROC_SM_PCT=30 "$ECO" submit --share -- sh -c "$WAIT_AB")
touch "$T/go-hold"
"$ECO" wait "$hold"
until_state "$A" running 100 && until_state "$B" running 50 || echo "FAIL: pair did not start"
ECOSCHED_FAKE_NVML_PROC_SM_PCT=40 "$FAKE_RUN" 0 sh -c "$WAIT_AB" &
STRAY=$!
sleep "$RUN_S"
gpus >"$T/gpus.json"
"$ECO" gpus >"$T/gpus.txt"
curl -s --unix-socket "$SOCK" -o "$T/metrics" http://localhost/metrics
touch "$T/go-ab"
"$ECO" wait "$A"; "$ECO" wait "$B"
wait "$STRAY"
sleep 1.5 # one more accounting: the stray's last samples
U=$(gpus | jq '.gpus[0].unattributed.energy_j')
EA=$(field "$A" energy_j); EB=$(field "$B" energy_j)
n_stray=$(jq '.gpus[0].unattributed.processes' "$T/gpus.json")
share=$(jq '.gpus[0].unattributed.share' "$T/gpus.json")
echo "stray: A $EA J, B $EB J, unattributed $U J; $n_stray process(es), share $share"
check "GET /v1/gpus reports 1 unattributed process (got $n_stray)" [ "$n_stray" = 1 ]
check "its share of the GPU is ~40 % (got $share)" near "$share" 0.40 0.03
check "its pid is listed" sh -c "jq -e '.gpus[0].unattributed.pids | length == 1' '$T/gpus.json' >/dev/null"
check "/metrics has the unattributed process count" \
    grep -q '^ecosched_gpu_unattributed_processes{gpu="0",model="[^"]*"} 1$' "$T/metrics"
check "/metrics has the unattributed energy" \
    grep -q '^ecosched_gpu_unattributed_energy_joules_total{gpu="0",model="[^"]*"} [1-9]' "$T/metrics"
check "the log names the stray process" grep -q "belongs to no job" "$T/daemon.log"
check "ecosched gpus shows it" grep -q "+1 unattributed" "$T/gpus.txt"
check "A and B are charged alike ($EA J, $EB J)" \
    near "$(awk "BEGIN { print $EA / ($EA + $EB) }")" 0.50 0.04
# 40 % while the three ran, less the moments before the stray registered and after it ended,
# when A and B ran alone: on a loaded machine (two suites at once) those took up to a quarter
# of the run (30.7 % measured), so the bound is 25 %; a stray charged to B leaves 0 %
check "the stray's share is charged to no job: 25..45 % unattributed ($U J)" \
    between "$(awk "BEGIN { print $U / ($EA + $EB + $U) }")" 0.25 0.45
stop_daemon

# a bad job_cgroup is refused before anything starts, naming the key
for v in relative/dir "$T/not-a-cgroup"; do
    "$ECOD" --foreground --socket "$T/bad.sock" --state-dir "$T/bad-state" --platform fake \
        --job-cgroup "$v" 2>"$T/bad.err"
    rc=$?
    check "--job-cgroup $v refused (exit $rc: $(cat "$T/bad.err"))" \
        sh -c "[ $rc -ne 0 ] && grep -q 'job_cgroup' '$T/bad.err'"
done

# without cgroups: the job's leader is a child subreaper, the escaped child stays below it
rm -f "$T/daemon.log"
OPTS="--job-cgroup off"
start_daemon $OPTS
check "job_cgroup = off: told apart by the process tree" \
    grep -q "processes told apart by the process tree" "$T/daemon.log"
escape "off"
escape "off, restarted" restart
stop_daemon
finish
