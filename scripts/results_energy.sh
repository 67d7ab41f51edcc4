#!/bin/sh
# SPDX-License-Identifier: MIT
# Reproduces docs/results/energy.md: every bundled ITP cluster under four power-down policies
# and two placements. Usage: scripts/results_energy.sh [BUILD_DIR] > docs/results/energy.md
set -eu
BUILD="${1:-build}"
ECO="$BUILD/ecosched"
POLICY=easy
field() { # field NAME < summary.json: the number after "NAME":
    sed -n "s/^ *\"$1\": \\([-0-9.e+]*\\),\\{0,1\\}$/\\1/p" | head -1
}
cat <<HEAD
# Energy results on the bundled ITP traces

Produced by \`scripts/results_energy.sh > docs/results/energy.md\` (ecosched $("$ECO" --version | cut -d' ' -f2)).
Each of the ten Microsoft ITP clusters (data/itp) replays on a cluster of 8-GPU V100 nodes
sized for its peak demand (\`--cluster peak\`: as few nodes as hold the peak concurrent GPU
demand if every job started on arrival), with the \`$POLICY\` queue policy (EASY backfilling, as
Slurm's backfill scheduler), the default node power figures (docs/models/energy.md) and the
\`generic\` workload for every job (the traces name none). Energy is that of the whole
cluster (GPUs, hosts, nodes off and in transition) from the first submission to the last
completion.

Columns: energy in MWh; average job completion time (JCT) in hours; 95th percentile of the
time jobs waited in the queue, in minutes; node boots.

HEAD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
summary="$tmp/summary"
echo "| cluster | GPUs | power-down | placement | energy MWh | avg JCT h | p95 wait min | boots |"
echo "|---|---:|---|---|---:|---:|---:|---:|"
for k in 01 02 03 04 05 06 07 08 09 10; do
    trace=data/itp/cluster$k.csv.gz
    for pd in none idle:600 idle:1800 forecast; do
        for pl in pack energy; do
            "$ECO" sim --trace "$trace" --cluster peak --policy $POLICY --placement $pl \
                --power-down $pd --quiet --out "$tmp/$k-$pd-$pl" >/dev/null
            f="$tmp/$k-$pd-$pl/summary.json"
            gpus=$(field cluster_gpus < "$f")
            e=$(field energy_kwh < "$f")
            jct=$(field avg_jct_s < "$f")
            w=$(field p95_wait_s < "$f")
            b=$(field node_boots < "$f")
            echo "$k $pd $pl $e $jct" >> "$summary"
            awk -v k="$k" -v g="$gpus" -v pd="$pd" -v pl="$pl" -v e="$e" -v j="$jct" -v w="$w" -v b="$b" \
                'BEGIN { printf "| %s | %d | %s | %s | %.2f | %.3f | %.1f | %d |\n", k, g, pd, pl, e/1000, j/3600, w/60, b }'
        done
    done
done
cat <<MID

## Targets

\`forecast\` + \`energy\` against \`none\` + \`pack\` (target: at least 30% less energy, average JCT
at most 3% higher) and against \`idle:600\` + \`pack\` (target: less energy at no higher
average JCT). Negative changes are reductions.

| cluster | energy vs none+pack | JCT vs none+pack | energy vs idle:600+pack | JCT vs idle:600+pack | targets met |
|---|---:|---:|---:|---:|---|
MID
awk '
{ e[$1" "$2" "$3] = $4; j[$1" "$2" "$3] = $5; ks[$1] = 1 }
END {
    n = 0; ok_all = 1
    for (k in ks) keys[n++] = k
    for (a = 0; a < n; a++) for (b = a + 1; b < n; b++) if (keys[b] < keys[a]) { t = keys[a]; keys[a] = keys[b]; keys[b] = t }
    for (i = 0; i < n; i++) {
        k = keys[i]
        fe = e[k" forecast energy"]; fj = j[k" forecast energy"]
        ne = e[k" none pack"]; nj = j[k" none pack"]
        ie = e[k" idle:600 pack"]; ij = j[k" idle:600 pack"]
        de = (fe / ne - 1) * 100; dj = (fj / nj - 1) * 100
        die = (fe / ie - 1) * 100; dij = (fj / ij - 1) * 100
        ok = (de <= -30 && dj <= 3 && fe < ie && fj <= ij) ? "yes" : "no"
        if (ok == "no") ok_all = 0
        printf "| %s | %+.1f%% | %+.2f%% | %+.1f%% | %+.2f%% | %s |\n", k, de, dj, die, dij, ok
    }
    printf "\nAll targets met on every cluster: %s.\n", ok_all ? "yes" : "no"
}' "$summary"

# The trade-off behind forecast's defaults: every cluster under forecast variants + energy
# placement, compared with idle:600 + pack.
cat <<SWEEP

## The forecast trade-off

Keeping nodes warm costs energy and saves boot waits. The sweep below runs \`forecast\` with
the \`energy\` placement for several reserve margins and dwell times on all ten clusters and
compares each with \`idle:600\` + \`pack\`: on how many clusters it used less energy, on how
many its average JCT was no higher, and the largest JCT increase. The defaults are
\`margin=0.5,dwell=900\`.

| forecast parameters | clusters with less energy | clusters with no higher JCT | worst JCT change | worst energy change |
|---|---:|---:|---:|---:|
SWEEP
for params in margin=0,dwell=0 margin=0,dwell=900 margin=0.1,dwell=600 margin=0.1,dwell=900 \
    margin=0.25,dwell=900 margin=0.5,dwell=600 margin=0.5,dwell=900 margin=1,dwell=900 margin=2,dwell=0; do
    for k in 01 02 03 04 05 06 07 08 09 10; do
        "$ECO" sim --trace data/itp/cluster$k.csv.gz --cluster peak --policy $POLICY \
            --placement energy --power-down "forecast:$params" --quiet --out "$tmp/sweep" >/dev/null
        e=$(field energy_kwh < "$tmp/sweep/summary.json")
        j=$(field avg_jct_s < "$tmp/sweep/summary.json")
        echo "$k $params $e $j"
    done
done > "$tmp/sweep.txt"
awk -v summary="$summary" '
BEGIN { while ((getline line < summary) > 0) { split(line, f, " "); if (f[2] == "idle:600" && f[3] == "pack") { ie[f[1]] = f[4]; ij[f[1]] = f[5] } } }
{
    p = $2; order[p] = order[p] ? order[p] : ++np; names[order[p]] = p
    de = ($3 / ie[$1] - 1) * 100; dj = ($4 / ij[$1] - 1) * 100
    if (de < 0) le[p]++
    if (dj <= 0) lj[p]++
    if (!(p in wj) || dj > wj[p]) wj[p] = dj
    if (!(p in we) || de > we[p]) we[p] = de
}
END { for (i = 1; i <= np; i++) { p = names[i]; printf "| %s | %d | %d | %+.3f%% | %+.2f%% |\n", p, le[p], lj[p], wj[p], we[p] } }' "$tmp/sweep.txt"
