#!/bin/sh
# SPDX-License-Identifier: MIT
# Reproduces docs/results/consolidation.md: every consolidation policy on the same containers
# (five seeds), a mixed V100/A100 cluster, a threshold sweep and an activity-correlation
# sweep. Usage: scripts/results_consolidation.sh [BUILD_DIR] > docs/results/consolidation.md
set -eu
BUILD="${1:-build}"
ECO="$BUILD/ecosched"
PODS=data/alibaba_gpu_v2023_openb/openb_pod_list_default.csv.gz
CLUSTER=150x8:V100
N=1000
ALL=none,thr-mmt,mad-mmt,iqr-mmt,lr-mmt,dual-pabfd,dgddep
POLS="none thr-mmt mad-mmt iqr-mmt lr-mmt dual-pabfd dgddep"
SEEDS="1 2 3 4 5"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# field FILE NAME: the number after "NAME": (first occurrence) in a summary.json.
field() { tr ',{}' '\n\n\n' < "$1" | sed -n "s/^ *\"$2\": *//p" | head -1; }
# lost FILE NAME: the lost-work share NAME (inside "lost_work").
lost() { sed -n "s/.*\"lost_work\": {[^}]*\"$2\": \([-0-9.e+]*\).*/\1/p" "$1"; }
row() { # row FILE LABEL: one markdown row
    f="$1"
    awk -v l="$2" -v e="$(field "$f" energy_kwh)" -v ch="$(field "$f" energy_charged_kwh)" \
        -v lw="$(field "$f" lost_work_share)" -v h="$(field "$f" avg_hosts_on)" \
        -v m="$(field "$f" migrations)" -v b="$(field "$f" boots)" -v s="$(field "$f" sla_violation)" \
        -v o="$(field "$f" over_threshold)" -v lm="$(lost "$f" migration)" \
        -v lc="$(lost "$f" colocation)" -v lt="$(lost "$f" contention)" -v p="$(field "$f" slowdown_p95)" \
        'BEGIN { printf "| %s | %.1f | %.1f | %.2f | %d | %d | %.3f | %.2f | %.3f | %.3f | %.3f | %.3f | %.4f |\n",
                 l, e, ch, h, m, b, 100*s, 100*o, 100*lm, 100*lt, 100*lc, 100*lw, p }'
}
HDR="| policy | energy kWh | charged kWh | avg hosts on | migrations | boots | SLA viol. % | over thr. % | lost: migration % | lost: contention % | lost: co-location % | lost work % | slowdown p95 |
|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for s in $SEEDS; do
    "$ECO" sim --consolidation $ALL --trace $PODS --cluster $CLUSTER --containers $N --seed $s \
        --out "$tmp/s$s" >/dev/null
done
cat <<HEAD
# Container consolidation results

Produced by \`scripts/results_consolidation.sh > docs/results/consolidation.md\` (ecosched
$("$ECO" --version | cut -d' ' -f2)). Every policy runs on the same containers: $N containers
sampled from the openb pods (\`$PODS\`) with Lucid workloads and Acme-shaped activity
(docs/models/container-workloads.md), on $CLUSTER hosts (default power figures,
docs/models/energy.md), 24 hours in 300 s periods, default thresholds 0.3,0.8,0.3,0.8 and
migration bandwidth (596 MiB/s). The containers start placed first fit by request (111 hosts
on); from the second period on each policy migrates and powers hosts down
(docs/policies/consolidation.md, docs/policies/dgddep.md).

Columns: energy of all hosts over the day (on, off, boots, migrations); charged: that energy x
demanded / useful work, the lost work paid for at the run's own energy per useful GPU-hour
(docs/policies/consolidation.md, "Lost work charged"); average hosts on;
migrations; host boots; SLA violation: share of host-time on with GPU-utilisation or GPU-memory
demand above 100% of the host (CloudSim's SLATAH); over thr.: share of host-time on above an
upper threshold (0.8 utilisation or memory); lost work as shares of the containers' active time:
paused by migrations, slowed by an overcommitted host (contention), slowed by a co-tenant on the
same GPU (measured Gavel/Lucid pairs, docs/models/colocation.md); lost work: share of the
demanded GPU-hours not done (all three causes, weighted by utilisation); slowdown p95: 95th
percentile over containers of active time / useful time. Migrations are checkpoint/restore
(docs/models/energy.md, "Migration").

## Seed 1

$HDR
HEAD
for p in $POLS; do row "$tmp/s1/$p/summary.json" "$p"; done
echo
echo "## Mean of seeds $(echo $SEEDS | tr ' ' ',')"
echo
echo "$HDR"
for p in $POLS; do
    for s in $SEEDS; do
        f="$tmp/s$s/$p/summary.json"
        echo "$(field "$f" energy_kwh) $(field "$f" energy_charged_kwh) $(field "$f" avg_hosts_on) $(field "$f" migrations) $(field "$f" boots) $(field "$f" sla_violation) $(field "$f" over_threshold) $(lost "$f" migration) $(lost "$f" contention) $(lost "$f" colocation) $(field "$f" lost_work_share) $(field "$f" slowdown_p95)"
    done | awk -v l="$p" '{ for (i = 1; i <= NF; i++) a[i] += $i; n++ }
        END { printf "| %s | %.1f | %.1f | %.2f | %.0f | %.0f | %.3f | %.2f | %.3f | %.3f | %.3f | %.3f | %.4f |\n",
              l, a[1]/n, a[2]/n, a[3]/n, a[4]/n, a[5]/n, 100*a[6]/n, 100*a[7]/n, 100*a[8]/n, 100*a[9]/n, 100*a[10]/n, 100*a[11]/n, a[12]/n }'
done
cat <<MID

## Targets

Target: \`dgddep\` uses at least 15% less energy than the best GPU-utilisation-only CloudSim
policy (the one of \`thr-mmt\`, \`mad-mmt\`, \`iqr-mmt\`, \`lr-mmt\` with the least energy on that
seed), at no more SLA violation time and with fewer migrations. Energy here is the charged
energy (lost work paid for), so that losing work cannot look cheap. Negative changes are
reductions.

| seed | best CloudSim | its charged kWh | dgddep charged kWh | energy change | SLA % CloudSim / dgddep | migrations CloudSim / dgddep | energy met | SLA met | migrations met |
|---|---|---:|---:|---:|---:|---:|---|---|---|
MID
for s in $SEEDS; do
    best=""; be=""
    for p in thr-mmt mad-mmt iqr-mmt lr-mmt; do
        e=$(field "$tmp/s$s/$p/summary.json" energy_charged_kwh)
        if [ -z "$be" ] || awk -v a="$e" -v b="$be" 'BEGIN { exit !(a < b) }'; then best=$p; be=$e; fi
    done
    fb="$tmp/s$s/$best/summary.json"; fd="$tmp/s$s/dgddep/summary.json"
    awk -v s="$s" -v p="$best" -v eb="$be" -v ed="$(field "$fd" energy_charged_kwh)" \
        -v sb="$(field "$fb" sla_violation)" -v sd="$(field "$fd" sla_violation)" \
        -v mb="$(field "$fb" migrations)" -v md="$(field "$fd" migrations)" \
        'BEGIN { c = 100 * (ed - eb) / eb;
                 printf "| %s | %s | %.1f | %.1f | %+.1f%% | %.3f / %.3f | %d / %d | %s | %s | %s |\n",
                 s, p, eb, ed, c, 100*sb, 100*sd, mb, md, c <= -15 ? "yes" : "no",
                 sd <= sb ? "yes" : "no", md < mb ? "yes" : "no" }'
done
cat <<HET

## Mixed cluster: 75 V100 hosts and 75 A100-SXM hosts (seed 1)

With two host types the power a container adds differs between hosts (A100-SXM: higher idle
and busy power, more GPU memory), so minimum-energy and minimum-power placement have something
to choose between.

$HDR
HET
"$ECO" sim --consolidation $ALL --trace $PODS --cluster 75x8:V100,75x8:A100-SXM --containers $N \
    --seed 1 --out "$tmp/het" >/dev/null
for p in $POLS; do row "$tmp/het/$p/summary.json" "$p"; done
cat <<SWEEP

## Threshold sweep of dgddep (seed 1)

\`--thresholds LO_UTIL,HI_UTIL,LO_MEM,HI_MEM\`; the first row is the default.

| thresholds | energy kWh | charged kWh | avg hosts on | migrations | boots | SLA viol. % | over thr. % | lost: migration % | lost: contention % | lost: co-location % | lost work % | slowdown p95 |
|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|
SWEEP
for t in 0.3,0.8,0.3,0.8 0.4,0.8,0.4,0.8 0.5,0.8,0.5,0.8 0.3,0.9,0.3,0.9 0.5,0.9,0.5,0.9 0.7,0.9,0.7,0.9; do
    "$ECO" sim --consolidation dgddep --thresholds $t --trace $PODS --cluster $CLUSTER \
        --containers $N --seed 1 --out "$tmp/t$t" >/dev/null
    row "$tmp/t$t/summary.json" "$t"
done
cat <<CORR

## Activity correlation time (seed 1)

The time over which a container's activity stays correlated is not measured in the data
(docs/models/container-workloads.md); the default is 3600 s. Shorter times mean faster
changes between periods.

| corr-s | policy | energy kWh | charged kWh | avg hosts on | migrations | boots | SLA viol. % | over thr. % | lost: migration % | lost: contention % | lost: co-location % | lost work % | slowdown p95 |
|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|
CORR
for c in 900 14400; do
    "$ECO" sim --consolidation mad-mmt,lr-mmt,dgddep --corr-s $c --trace $PODS --cluster $CLUSTER \
        --containers $N --seed 1 --out "$tmp/c$c" >/dev/null
    for p in mad-mmt lr-mmt dgddep; do row "$tmp/c$c/$p/summary.json" "$p" | sed "s/^| /| $c | /"; done
done
cat <<'READ'

## Reading

- **Energy target not met.** Over five seeds `dgddep` uses 7-9% *more* energy than the best
  GPU-utilisation-only CloudSim policy (`mad-mmt` on every seed), not 15% less. CloudSim's
  underload rule tries to empty every host, least utilised first, in every period, so its
  policies run 48-51 hosts on average against 55 for `dgddep`, which only empties hosts under
  both lower thresholds (0.3). With one host type and a linear power model, minimum-energy and
  minimum-power placement differ only by the co-location term, so the destination rule cannot
  close that gap; the mixed V100/A100 cluster does not change the picture.
- **SLA and migration targets met.** `dgddep` has less SLA violation time than the best CloudSim
  policy on every seed (2.1% against 10.4% on average; 2.1% also beats `thr-mmt`'s 3.0%, the
  lowest of the four) and 14-19 times fewer migrations (about 4,500 a day against 65,000-84,000),
  losing less than a tenth as much work to migration pauses. It also loses the least work to co-location
  of all consolidating policies, the one thing its energy estimate sees that PABFD does not.
- **The trade-off is in the thresholds.** Raising the lower thresholds lets `dgddep` empty more
  hosts: at `0.5,0.9,0.5,0.9` it uses 1.3% less energy than `mad-mmt` (seed 1) with 7.7% SLA
  violation against 10.3% and 5,380 migrations against 74,285. No setting of the sweep reaches
  15% less energy than `mad-mmt`.
- **Activity correlation** (not measured in the data) moves the figures by a few percent but
  not `dgddep`'s place against the CloudSim policies: faster-changing containers (900 s) raise every policy's SLA violation and
  `dgddep`'s migrations; slower ones (4 h) favour `dgddep` on SLA (0.4%).
READ
