#!/bin/sh
# SPDX-License-Identifier: MIT
# Reproduces docs/results/consolidation.md: every consolidation policy's own knob swept on tuning
# seeds, its Pareto-efficient settings reported on held-out seeds (energy against SLA violation,
# lost work and ESV, with migrations), judged with held-out co-location pairs, a fluid lower
# bound beside, the goal checked, and a sensitivity table of the node power figures.
# Usage: scripts/results_consolidation.sh [BUILD_DIR] > docs/results/consolidation.md
# Environment: JOBS (parallel runs, default 2), TUNE and HELD (seed lists), QUICK=1 (a subset:
# fewer knob values and seeds, to measure the runtime first), WORK=DIR (keep the runs there and
# skip those whose summary.json exists: an interrupted run resumes).
set -eu
BUILD="${1:-build}"
ECO="$BUILD/ecosched"
PODS=data/alibaba_gpu_v2023_openb/openb_pod_list_default.csv.gz
N=1000
JOBS="${JOBS:-2}"
TUNE="${TUNE:-1 2 3}"
HELD="${HELD:-4 5 6}"
# The V100 host's default figures (docs/models/energy.md, "Default figures"): base 174 + 17.458 x
# 8 W, GPU idle without / with a context 23 / 26.78 W, 37 W at low utilisation (0.15), the
# generic workload at 250 W 179.5 W, 15 W off, boot 300 s, a power cycle's wear 180 kJ. The
# sensitivity variants below change one of them; the fluid bound is computed with the same.
BASE_W=313.664 IDLE_W=23 CTX_W=26.78 LOW_W=37 BUSY_W=179.5 OFF_W=15
HOSTS=150 GPUS=8 GPU_MIB=32768
# Held-out judging: dgddep decides with one set of measured co-location pairs and the run is
# judged (slowdowns applied) with the other; lucid:lucid is the same model, not held out.
# Tuned in the first; the others are reported with its chosen settings (the CloudSim policies
# do not read the decider's pairs; dgddep's settings then meet a second held-out judge).
CONFIGS="lucid:gavel"
SAME="gavel:lucid lucid:lucid"
LO="0.2 0.3 0.4 0.5 0.6"
HI="0.8 0.9 1.0"
THR="0.6 0.7 0.8 0.9 1.0"
MAD="1.5 2.0 2.5 3.0 3.5"
IQR="0.5 1.0 1.5 2.0 2.5"
LRS="1.0 1.1 1.2 1.3 1.4"
if [ "${QUICK:-0}" = 1 ]; then
    LO="0.3 0.5" HI="0.8 0.9" THR="0.8 0.9" MAD="2.5" IQR="1.5" LRS="1.2"
    TUNE="1" HELD="4" CONFIGS="lucid:gavel" SAME=""
fi
if [ -n "${WORK:-}" ]; then
    tmp="$WORK"
    mkdir -p "$tmp"
else
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
fi
start=$(date +%s)

# ---- the settings: "policy label options" --------------------------------------------------
{
    for t in $THR; do echo "thr-mmt $t --thr $t"; done
    for s in $MAD; do echo "mad-mmt $s --mad-safety $s"; done
    for s in $IQR; do echo "iqr-mmt $s --iqr-safety $s"; done
    for s in $LRS; do echo "lr-mmt $s --lr-safety $s"; done
    for p in dual-pabfd dgddep; do
        for l in $LO; do
            for h in $HI; do
                echo "$p $l,$h,$l,$h --thresholds $l,$h,$l,$h"
                [ "$l,$h" = 0.3,0.9 ] || echo "$p $l,$h,0.3,0.9 --thresholds $l,$h,0.3,0.9"
            done
        done
    done
} > "$tmp/settings"

# jobs CFGS SEEDS SETTINGS DIR [CLUSTER]: one line per run, for xargs.
jobs() {
    for cfg in $1; do
        for s in $2; do
            while read -r pol lab opts; do
                out="$4/$cfg/$s/$pol/$lab"
                [ -s "$out/summary.json" ] && continue
                echo "nice -n 10 $ECO sim --consolidation $pol $opts --trace $PODS --cluster ${5:-${HOSTS}x$GPUS:V100} --containers $N --seed $s --decide ${cfg%%:*} --judge ${cfg#*:} --out $out -q >/dev/null"
            done < "$3"
        done
    done
}
runall() { xargs -P "$JOBS" -I CMD sh -c CMD; }
# means DIR CFG SEEDS SETTINGS: "cfg policy label charged per_work energy sla lost pdm mig hosts
# boots", the means over the seeds of the summary.json fields (one awk per setting; PDM is the
# "migration" member of "lost_work", not the one of "energy_j").
means() {
    while read -r pol lab opts; do
        files=""
        for s in $3; do files="$files $1/$2/$s/$pol/$lab/summary.json"; done
        # shellcheck disable=SC2086
        awk -v c="$2" -v p="$pol" -v l="$lab" '
            BEGIN { split("energy_charged_kwh energy_per_work_kwh_per_gpu_h energy_kwh sla_violation lost_work_share PDM migrations avg_hosts_on boots", K, " ") }
            FNR == 1 { nf++; prev = "" }
            { n = split($0, part, /[,{}]/)
              for (i = 1; i <= n; i++) { x = part[i]; sub(/^ +/, "", x)
                  if (x ~ /^"[a-z_0-9]+": *$/) { prev = x; gsub(/[": ]/, "", prev); continue }
                  if (match(x, /^"[a-z_0-9]+": *[-0-9.e+]+$/)) { k = x; sub(/".*/, "", k); k = substr(x, 2); sub(/".*/, "", k)
                      val = x; sub(/^[^:]*: */, "", val)
                      if (k == "migration" && prev == "lost_work") k = "PDM"
                      if (!((nf, k) in seen)) { seen[nf, k] = 1; sum[k] += val } }
                  prev = "" } }
            END { printf "%s %s %s", c, p, l; for (i = 1; i <= 9; i++) printf " %.10g", sum[K[i]] / nf; print "" }' $files
    done < "$4"
}
# pareto: the lines of stdin (means format) not dominated within their (cfg, policy) on charged
# energy ($4), SLA violation ($7) and lost work ($8), all lower-is-better.
pareto() {
    awk '{ L[NR] = $0; k[NR] = $1 " " $2; e[NR] = $4; s[NR] = $7; w[NR] = $8 }
        END { for (i = 1; i <= NR; i++) { d = 0
                for (j = 1; j <= NR && !d; j++)
                    if (j != i && k[j] == k[i] && e[j] <= e[i] && s[j] <= s[i] && w[j] <= w[i] &&
                        (e[j] < e[i] || s[j] < s[i] || w[j] < w[i])) d = 1
                if (!d) print L[i] } }'
}

# ---- 1. tuning seeds: every setting ---------------------------------------------------------
jobs "$CONFIGS" "$TUNE" "$tmp/settings" "$tmp/tune" | runall
for cfg in $CONFIGS; do means "$tmp/tune" "$cfg" "$TUNE" "$tmp/settings"; done > "$tmp/tune.txt"
# cap: at most CAP_MMT (CloudSim) or CAP_DUAL (dual thresholds) of each policy's efficient
# settings go on to the held-out seeds, spread evenly along SLA violation (the least and the
# most violating always), to keep the runtime in bounds.
CAP_MMT="${CAP_MMT:-3}" CAP_DUAL="${CAP_DUAL:-6}"
cap() {
    sort -k1,1 -k2,2 -k7,7g | awk -v cm="$CAP_MMT" -v cd="$CAP_DUAL" '
        { k = $1 " " $2; if (k != last) { g++; last = k; cnt[g] = 0; pol[g] = $2 } L[g, ++cnt[g]] = $0 }
        END { for (i = 1; i <= g; i++) { n = cnt[i]; m = pol[i] ~ /-mmt$/ ? cm : cd; if (m > n) m = n
                for (j = 0; j < m; j++) { x = m > 1 ? int(j * (n - 1) / (m - 1) + 0.5) + 1 : 1; if (!((i, x) in done)) { done[i, x] = 1; print L[i, x] } } } }'
}
pareto < "$tmp/tune.txt" | cap > "$tmp/chosen.txt"
H1=$(echo $CONFIGS | cut -d' ' -f1)
for c in $SAME; do awk -v c="$c" -v h="$H1" '$1 == h { $1 = c; print }' "$tmp/chosen.txt"; done > "$tmp/same"
cat "$tmp/same" >> "$tmp/chosen.txt"
# ---- 2. held-out seeds: each policy's chosen settings, and none for the demand ---------------
: > "$tmp/held.txt"
for cfg in $CONFIGS $SAME; do
    awk -v c="$cfg" '$1 == c { print $2, $3 }' "$tmp/chosen.txt" | while read -r pol lab; do
        awk -v p="$pol" -v l="$lab" '$1 == p && $2 == l' "$tmp/settings"
    done > "$tmp/sel.$cfg"
    echo "none - " >> "$tmp/sel.$cfg"
    jobs "$cfg" "$HELD" "$tmp/sel.$cfg" "$tmp/held" | runall
    means "$tmp/held" "$cfg" "$HELD" "$tmp/sel.$cfg" >> "$tmp/held.txt"
done

# bound TIMELINE: the fluid lower bound of one run's demand, kWh: every period the fewest hosts
# that hold the GPU-utilisation and GPU-memory demand, the demand spread over the number of held
# GPUs that draws least (at least the GPUs its load and memory need), every other host off,
# no boots or migrations, all work served. V100 figures (overridable for the sensitivity rows).
bound() {
    awk -F, -v H="$HOSTS" -v G="$GPUS" -v gm="$GPU_MIB" -v b="$BASE_W" -v gi="$IDLE_W" \
        -v gc="$CTX_W" -v gl="$LOW_W" -v gb="$BUSY_W" -v off="$OFF_W" '
        function gw(u) { return u <= 0.15 ? gc + (gl - gc) * u / 0.15 : gl + (gb - gl) * (u - 0.15) / 0.85 }
        function up(x) { return x == int(x) ? x : int(x) + 1 }
        NR == 1 { next }
        { if (NR > 2) e += p * ($1 - t0); t0 = $1
          U = $6 * $3 * G; M = $7 * $3 * G * gm
          n = up(U / G - 1e-9); m = up(M / (G * gm) - 1e-9); if (m > n) n = m
          k0 = up(U - 1e-9); m = up(M / gm - 1e-9); if (m > k0) k0 = m; if (k0 < 1) k0 = 1
          best = -1
          for (k = k0; k <= n * G; k++) { q = (n * G - k) * gi + k * gw(U / k); if (best < 0 || q < best) best = q }
          p = n * b + best + (H - n) * off; dt = $1 }
        END { if (NR > 2) { dt = dt / (NR - 2) } e += p * dt; printf "%.10g\n", e / 3.6e6 }' "$1"
}
boundmean() { # boundmean DIR CFG: mean bound over the held-out seeds
    for s in $HELD; do bound "$1/$2/$s/none/-/timeline.csv"; done | awk '{ a += $1; n++ } END { printf "%.1f", a / n }'
}

# ---- report ---------------------------------------------------------------------------------
cat <<HEAD
# Container consolidation results: Pareto fronts on held-out seeds

Produced by \`scripts/results_consolidation.sh > docs/results/consolidation.md\` (ecosched
$("$ECO" --version | cut -d' ' -f2)). $N containers sampled from the openb pods (\`$PODS\`) with
Lucid workloads and Acme-shaped activity (docs/models/container-workloads.md) on ${HOSTS}x$GPUS:V100
hosts with the default power figures (GPU power states, host base power of the V100 server
class, docs/models/energy.md), 24 hours in 300 s periods, checkpoint/restore migrations
(CRIU + cuda-checkpoint, host and GPU memory). The containers start placed first fit by request;
from the second period on each policy migrates and powers hosts down
(docs/policies/consolidation.md, docs/policies/dgddep.md).

## Protocol

1. **Knobs swept on tuning seeds** ($(echo $TUNE | tr ' ' ',')): each policy's own knob —
   \`thr-mmt\` \`--thr\` $(echo $THR | tr ' ' ','); \`mad-mmt\` \`--mad-safety\` $(echo $MAD | tr ' ' ',');
   \`iqr-mmt\` \`--iqr-safety\` $(echo $IQR | tr ' ' ','); \`lr-mmt\` \`--lr-safety\` $(echo $LRS | tr ' ' ',');
   \`dual-pabfd\` and \`dgddep\` their four thresholds \`LO_UTIL,HI_UTIL,LO_MEM,HI_MEM\` with
   LO_UTIL in {$(echo $LO | tr ' ' ',')} and HI_UTIL in {$(echo $HI | tr ' ' ',')}, the memory pair
   equal to the utilisation pair or fixed at 0.3,0.9 ($(wc -l < "$tmp/settings") settings in all;
   dgddep's underload energy rule at its default 3600 s horizon).
2. **Chosen there**: each policy's Pareto-efficient settings on the tuning seeds' means of
   charged energy, SLA violation and lost work (no setting of the same policy is at least as
   good on all three and better on one); of those, at most $CAP_MMT per CloudSim policy and
   $CAP_DUAL per dual-threshold policy go on, spread evenly along SLA violation (the least and
   the most violating always; runtime), chosen with decide ${H1%%:*} / judge ${H1#*:}; the
   other configurations are reported with the same settings (not tuned again).
3. **Reported on held-out seeds** ($(echo $HELD | tr ' ' ',')), means over them; nothing is
   tuned there.
4. **Held-out interference model**: \`decide:judge\` — dgddep's co-location estimate uses the
   first set of measured pairs (\`--decide\`), the run's slowdowns the second (\`--judge\`)
   (docs/models/colocation.md). \`lucid:gavel\` and \`gavel:lucid\` are held out;
   \`lucid:lucid\` is the same model for both and is **not held out** (shown for reference).

Columns: charged: energy of all hosts x demanded / useful work (lost work paid for at the
run's own energy per useful GPU-hour); kWh/GPU-h: energy per useful GPU-hour; energy: metered
energy; SLATAH: share of host-time on with GPU-utilisation or GPU-memory demand above 100%
(CloudSim's SLA violation time per active host); lost: share of the demanded GPU-hours not done
(migration pauses, contention on overcommitted hosts, co-location slowdown); PDM: the share lost
to migration pauses (CloudSim's performance degradation due to migration); ESV: CloudSim's
energy x SLAV = energy (kWh) x SLATAH x PDM; front: on the policy's held-out front of charged
energy against SLATAH (S) and against lost work (L). The fluid lower bound serves all the work
with perfect packing: every period the fewest hosts that hold the demanded GPU utilisation and
memory, the load spread over the number of GPUs that draws least, the rest off, no boots and no
migrations (computed from the \`none\` run's demand on the same seeds).
HEAD

# front marks: S if no other row of the same (cfg, policy) has <= charged and <= SLA with one <;
# L likewise with lost work.
marks() {
    awk '{ L[NR] = $0; k[NR] = $1 " " $2; e[NR] = $4; s[NR] = $7; w[NR] = $8 }
        END { for (i = 1; i <= NR; i++) { ds = dl = 0
                for (j = 1; j <= NR; j++) { if (j == i || k[j] != k[i]) continue
                    if (e[j] <= e[i] && s[j] <= s[i] && (e[j] < e[i] || s[j] < s[i])) ds = 1
                    if (e[j] <= e[i] && w[j] <= w[i] && (e[j] < e[i] || w[j] < w[i])) dl = 1 }
                m = (ds ? "" : "S") (dl ? "" : "L"); if (m == "") m = "-"
                print L[i], m } }'
}
for cfg in $CONFIGS $SAME; do
    lb=$(boundmean "$tmp/held" "$cfg")
    case $cfg in
    lucid:lucid) note="same model: not held out; the settings chosen for $H1" ;;
    "$H1") note="held out; settings chosen here" ;;
    *) note="held out; the settings chosen for $H1" ;;
    esac
    cat <<T

## decide ${cfg%%:*}, judge ${cfg#*:} ($note)

Fluid lower bound: **$lb kWh** (mean of the held-out seeds). Rows: each policy's settings chosen on
the tuning seeds, sorted by SLATAH; \`none\` (no migrations) for scale.

| policy | setting | charged kWh | vs bound | kWh/GPU-h | energy kWh | SLATAH % | lost % | PDM % | ESV | migrations | avg hosts on | boots | front |
|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|
T
    awk -v c="$cfg" '$1 == c' "$tmp/held.txt" | marks | sort -k2,2 -k7,7g |
        awk -v lb="$lb" '{ printf "| %s | %s | %.1f | %+.1f%% | %.4f | %.1f | %.3f | %.3f | %.3f | %.4f | %.0f | %.2f | %.0f | %s |\n",
            $2, $3, $4, 100 * ($4 - lb) / lb, $5, $6, 100 * $7, 100 * $8, 100 * $9, $6 * $7 * $9, $10, $11, $12, $13 }'
    cat <<T

Goal check: for each CloudSim point, the dgddep point with the least charged energy among those
with no more SLATAH **and** no more lost work; met when that energy is >= 5% lower and the
migrations >= 5x fewer.

| CloudSim point | its charged kWh | SLATAH % | lost % | migrations | best dgddep at equal quality | its charged kWh | energy change | migrations ratio | met |
|---|---|---:|---:|---:|---|---:|---:|---:|---|
T
    awk -v c="$cfg" '$1 == c' "$tmp/held.txt" | awk '
        $2 == "dgddep" { n++; dl[n] = $3; de[n] = $4; ds[n] = $7; dw[n] = $8; dm[n] = $10; next }
        $2 ~ /^(thr|mad|iqr|lr)-mmt$/ { m++; P[m] = $2 " " $3; e[m] = $4; s[m] = $7; w[m] = $8; g[m] = $10 }
        END { for (i = 1; i <= m; i++) { b = 0
                for (j = 1; j <= n; j++) if (ds[j] <= s[i] + 1e-12 && dw[j] <= w[i] + 1e-12 && (!b || de[j] < de[b])) b = j
                if (!b) { printf "| %s | %.1f | %.3f | %.3f | %.0f | none at equal quality | - | - | - | no |\n", P[i], e[i], 100 * s[i], 100 * w[i], g[i]; nm++; continue }
                ch = 100 * (de[b] - e[i]) / e[i]; r = dm[b] > 0 ? g[i] / dm[b] : 1e9
                ok = ch <= -5 && r >= 5; if (ok) nok++; else nm++
                printf "| %s | %.1f | %.3f | %.3f | %.0f | %s | %.1f | %+.1f%% | %.1fx | %s |\n", P[i], e[i], 100 * s[i], 100 * w[i], g[i], dl[b], de[b], ch, r, ok ? "yes" : "no" }
              printf "\nGoal met on %d of %d CloudSim points (%s).\n", nok, m, nm ? "**goal not met**" : "**goal met**" }'
done
cat <<T

## Best ESV per policy (held-out seeds)

| decide:judge | policy | setting | ESV | energy kWh | SLATAH % | PDM % | migrations |
|---|---|---|---:|---:|---:|---:|---:|
T
awk '$2 != "none" { v = $6 * $7 * $9; k = $1 " " $2; if (!(k in b) || v < b[k]) { b[k] = v; L[k] = $0 } }
    END { for (k in L) print L[k] }' "$tmp/held.txt" | sort -k1,1 -k2,2 |
    awk '{ printf "| %s | %s | %s | %.4f | %.1f | %.3f | %.3f | %.0f |\n", $1, $2, $3, $6 * $7 * $9, $6, 100 * $7, 100 * $9, $10 }'

# ---- sensitivity -----------------------------------------------------------------------------
# The headline rows, in the first configuration: each policy's chosen setting with the least
# held-out charged energy among those of SLATAH <= 3% (else its least-SLATAH one).
awk -v c="$H1" '$1 == c && $2 != "none"' "$tmp/held.txt" | awk '
    { k = $2; if ($7 <= 0.03) { if (!(k in b) || $4 < be[k]) { b[k] = $3; be[k] = $4 } }
      if (!(k in ls) || $7 < ls[k]) { ls[k] = $7; lsl[k] = $3 } }
    END { for (k in ls) print k, (k in b) ? b[k] : lsl[k] }' | sort > "$tmp/headline"
while read -r pol lab; do awk -v p="$pol" -v l="$lab" '$1 == p && $2 == l' "$tmp/settings"; done \
    < "$tmp/headline" > "$tmp/hsets"
SENS_SEEDS=$(echo $HELD | cut -d' ' -f1)
# variant NAME JSON-FIELDS: a cluster file with those figures changed
variants="default:
base_w=157:\"base_w\": 156.832
base_w=471:\"base_w\": 470.496
gpu_idle=11.5/13.4:\"gpu_idle_w\": 11.5, \"gpu_idle_ctx_w\": 13.39
gpu_idle=46/53.6:\"gpu_idle_w\": 46, \"gpu_idle_ctx_w\": 53.56
boot_s=60:\"boot_s\": 60
boot_s=900:\"boot_s\": 900"
: > "$tmp/sens.txt"
echo "$variants" | while IFS=: read -r name flds; do
    d="$tmp/sens/$(echo "$name" | tr '=/' '__')"
    mkdir -p "$d"
    printf '{"nodes": [{"count": %s, "gpus": %s, "gpu_type": "V100"%s}]}\n' "$HOSTS" "$GPUS" \
        "${flds:+, $flds}" > "$d/cluster.json"
    jobs "$H1" "$SENS_SEEDS" "$tmp/hsets" "$d/run" "$d/cluster.json" | runall
    means "$d/run" "$H1" "$SENS_SEEDS" "$tmp/hsets" | sed "s|^|$name |" >> "$tmp/sens.txt"
done
cat <<T

## Sensitivity (decide ${H1%%:*}, judge ${H1#*:}; seeds $(echo $SENS_SEEDS | tr ' ' ','))

Headline rows: each policy's setting chosen on the tuning seeds with the least held-out charged
energy among those at SLATAH <= 3% (else its least-SLATAH one), rerun with one node figure
changed (V100 defaults: host base 313.7 W, GPU idle 23 W without / 26.78 W with a context, boot
300 s). The cost of a power cycle (\`cycle_j\`, wear as an energy equivalent) is read by neither
the consolidation simulator nor its policies, so changing it changes no run: the charged column is
at cycle_j 0; the next two add boots x cycle_j at 180 kJ (the default, docs/models/energy.md)
and at 1.8 MJ; dgddep vs: dgddep's charged energy with 180 kJ wear against the policy's in the
same variant.

| variant | policy | setting | charged kWh | SLATAH % | lost % | migrations | boots | + wear 180 kJ | + wear 1.8 MJ | dgddep vs |
|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|
T
awk '{ L[NR] = $0; w = $13 * 180000 / 3.6e6; e[NR] = $5 + w; if ($3 == "dgddep") de[$1] = $5 + w }
    END { for (i = 1; i <= NR; i++) { split(L[i], f, " ")
            printf "| %s | %s | %s | %.1f | %.3f | %.3f | %.0f | %.0f | %.1f | %.1f | %+.1f%% |\n", f[1], f[3], f[4], f[5],
                100 * f[8], 100 * f[9], f[11], f[13], e[i], f[5] + f[13] * 1.8e6 / 3.6e6, 100 * (de[f[1]] - e[i]) / e[i] } }' \
    "$tmp/sens.txt"
end=$(date +%s)
cat <<T

Runtime of this script: $((end - start)) s with $JOBS parallel runs (\`JOBS\`), $(($(wc -l < "$tmp/settings") * $(echo $CONFIGS | wc -w) * $(echo $TUNE | wc -w))) tuning runs.
T
cat <<'READ'

## Reading

- **Goal not met.** The goal: dgddep's front dominates every CloudSim policy's tuned front on
  held-out seeds by >= 5% charged energy at equal (no more) SLATAH and equal lost work, with
  >= 5x fewer migrations. It holds on **0 of 12** CloudSim points in every configuration. At
  equal quality dgddep uses 0.2-4.0% less charged energy (decide Lucid / judge Gavel; best:
  -4.0% against `iqr-mmt` 1.5) and -3.7% to +1.0% (decide Gavel / judge Lucid; +1.0% against
  `thr-mmt` 0.8, where dgddep is not cheaper), always with 7.8-49.5x fewer migrations (the
  migration part is met everywhere). `thr-mmt` 0.6 (SLATAH 1.9%) has no dgddep point at equal
  quality: dgddep's least violating setting (0.2,0.8,0.2,0.8) is at 2.3-2.5%. The gap is the
  energy: 1-6 points short of -5% on every point.
- **Where the gap is.** All fronts are far from the fluid lower bound (1664.8 kWh): the
  CloudSim points are 16.6-27.2% above it judged with Gavel's pairs, dgddep's 13.0-20.8%. The
  CloudSim policies run fewer hosts at like SLATAH (`thr-mmt` 0.8: 49.4 hosts on at 3.2%,
  `lr-mmt` 1.4: 55.2 at 2.8%, against dgddep's 60.6 at 2.6%) but lose more work (PDM 1.0-1.9% against 0.04-0.36%; lost work 10-17% against 7-11% with
  Gavel as judge), and charged energy pays that back; what is left between the fronts is a few
  percent. With 314 W of V100 host base power per 8 GPUs, host count is most of the energy and
  the GPU power states (the context's 3.8 W over idle) move little.
- **Held-out judging.** dgddep deciding with Gavel's pairs and judged with Lucid's lands within
  0.5% of the same-model run (decide and judge Lucid) on every setting, so its co-location
  advantage is not by construction; judged with Gavel's pairs every policy loses 1.5-2x as
  much work. The CloudSim rows do not depend on `--decide`.
- **ESV** (energy x SLATAH x PDM): dgddep's best 0.020-0.023 against the best CloudSim's 0.67
  (`thr-mmt` 0.6), 30x lower, through PDM (migrations), not energy.
- **Sensitivity** (one held-out seed; the headline rows sit at different SLATAH, so "dgddep vs"
  is not at equal quality): against `mad-mmt` 3.5, which runs fewer hosts at 7.5% SLATAH,
  dgddep moves from +0.4% (default) to -1.6% at 157 W host base and +2.9% at 471 W: higher base
  power favours running fewer hosts; idle GPU power halved or doubled moves every comparison
  by 1.2 points at most; boot time 60 / 900 s changes the CloudSim policies' boots (`thr-mmt`
  917 / 404) and lost work, dgddep's 30 boots hardly. A power cycle's wear is not counted in
  these runs: at 180 kJ it adds 0.1% to dgddep and 0.6-1.3% to the CloudSim rows, at 1.8 MJ
  0.7% against 6-13%, which would widen dgddep's lead against the policies that cycle hosts
  (`thr-mmt`, `lr-mmt`) but is not part of the goal's metric.
- **Protocol limits.** Tuned on seeds 1-3 with decide Lucid / judge Gavel only; held-out seeds
  4-6 (3, not 5, for runtime); at most 3 settings per CloudSim policy and 6 per
  dual-threshold policy went on to the held-out seeds; the sensitivity table is one seed. The
  234 tuning runs took about 12 minutes on the shared 2-core machine (run interrupted and
  resumed with `WORK`); the held-out, bound and sensitivity part took the time printed above.
READ
