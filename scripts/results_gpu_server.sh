#!/bin/sh
# SPDX-License-Identifier: MIT
# Reproduces docs/results/gpu-server.md: GPU-choice strategies on one multi-GPU server, in the
# simulator (ecosched sim --server, several seeds, 8 x V100 and 4 x RTX6000) and through the
# real daemon (ecoschedd on 4 fake-NVML V100s, ecosched-fake-train jobs of seconds).
# Usage: scripts/results_gpu_server.sh [BUILD_DIR] > docs/results/gpu-server.md
# (about 5 minutes; the daemon part runs in real time). SEEDS, DSEEDS, STRATS and KEEP_TMP
# in the environment narrow a run or keep its files.
set -eu
BUILD="${1:-build}"
ECO="$BUILD/ecosched"
ECOD="$BUILD/ecoschedd"
TRAIN="$BUILD/ecosched-fake-train"
SEEDS="${SEEDS:-1 2 3 4 5 6 7 8 9 10}"
DSEEDS="${DSEEDS:-1 2}"
STRATS="${STRATS:-static exclusive memory-threshold live}"
tmp=$(mktemp -d /tmp/ecosched-results.XXXXXX)
chmod 711 "$tmp"
DPID=""
cleanup() {
    [ -n "${KEEP_TMP:-}" ] && { echo "kept $tmp" >&2; return; }
    if [ -n "$DPID" ] && kill -0 "$DPID" 2>/dev/null; then kill -TERM "$DPID"; wait "$DPID" || true; fi
    rm -rf "$tmp"
}
trap cleanup EXIT

# jget FILE STRATEGY KEY: a number from `sim --server --json`.
jget() { sed -n "s/.*\"strategy\": \"$2\".*\"$3\": \([0-9.e+-]*\).*/\1/p" "$1"; }

# busy_frac N_GPUS MAKESPAN < "gpu_ids start end" lines: time with >= 1 job on a GPU / (N x makespan)
busy_frac() {
    awk -v n="$1" -v ms="$2" '
    { split($1, g, " "); for (k in g) { i = ++cnt[g[k]]; s[g[k], i] = $2; e[g[k], i] = $3 } }
    END {
        tot = 0
        for (gpu in cnt) {
            m = cnt[gpu]
            for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
                if (s[gpu, j] < s[gpu, i]) { t = s[gpu, i]; s[gpu, i] = s[gpu, j]; s[gpu, j] = t;
                                             t = e[gpu, i]; e[gpu, i] = e[gpu, j]; e[gpu, j] = t }
            cs = s[gpu, 1]; ce = e[gpu, 1]
            for (i = 2; i <= m; i++) {
                if (s[gpu, i] > ce) { tot += ce - cs; cs = s[gpu, i]; ce = e[gpu, i] }
                else if (e[gpu, i] > ce) ce = e[gpu, i]
            }
            tot += ce - cs
        }
        printf "%.3f", tot / (n * ms)
    }' FS=,
}

cat <<HEAD
# GPU choice on one multi-GPU server: static, exclusive, memory-threshold, live

Produced by \`scripts/results_gpu_server.sh > docs/results/gpu-server.md\` (ecosched $("$ECO" --version | cut -d' ' -f2)).
Strategies (docs/policies/gpu-selection.md): \`static\`, a fixed GPU set per job assigned by
hand in advance (round robin in submission order, each GPU runs its list in order);
\`exclusive\`, the first free GPUs, one job per GPU; \`memory-threshold\`, task-spooler's rule
(a GPU is free when at least 90% of its memory is free; 30 s between starts, as many running
jobs as GPUs); \`live\`, ecosched's (averaged utilisation and memory with hysteresis,
in-flight claims, and sharing a GPU when memory fits and the measured co-location slowdown
pays off). Every strategy takes the jobs in submission order and waits at the first that
does not fit (fifo), as ecoschedd does.

## Simulator

\`ecosched sim --server\` (docs/simulator-server.md): each series has 40 jobs (8 x V100,
32 GiB) or 20 jobs (4 x RTX6000, 24 GiB), all submitted at t = 0, with workloads drawn
uniformly from Lucid's 66 measured ones that fit the GPU (memory and utilisation as
measured), 20% of them on 2 GPUs, run times alone log-uniform in 10..60 min, 20 s start-up
before a job allocates its memory. Jobs sharing a GPU run at the measured speed factors
(docs/models/colocation.md). Defaults otherwise: 1 s sampling, 10 s utilisation window, 30 s
claims, \`share_min_gain\` 1.1, 5% sampling noise. Energy: the whole server (host base and
GPUs; GPU power linear in utilisation between idle and busy, docs/simulator-server.md) from
t = 0 to the end of the series.

Columns: makespan of the series and average job completion time (JCT), in minutes; GPU
utilisation averaged over GPUs and the makespan; energy in kWh.

HEAD

# sim_table LABEL N_GPUS TYPE N_JOBS
sim_table() {
    label="$1"; g="$2"; type="$3"; nj="$4"
    echo "### $label"
    echo
    echo "| seed | strategy | makespan min | avg JCT min | GPU util | energy kWh | shared GPU-h |"
    echo "|---:|---|---:|---:|---:|---:|---:|"
    for seed in $SEEDS; do
        f="$tmp/sim-$g-$seed.json"
        "$ECO" sim --server --gpus "$g" --gpu-type "$type" --jobs "$nj" --seed "$seed" --json > "$f"
        "$ECO" sim --server --gpus "$g" --gpu-type "$type" --jobs "$nj" --seed "$seed" --json \
            --strategy live --no-share > "$f.noshare"
        "$ECO" sim --server --gpus "$g" --gpu-type "$type" --jobs "$nj" --seed "$seed" --json \
            --strategy live --unknown-workloads > "$f.unknown"
        for s in $STRATS; do
            awk -v seed="$seed" -v s="$s" -v m="$(jget "$f" "$s" makespan_s)" -v j="$(jget "$f" "$s" avg_jct_s)" \
                -v u="$(jget "$f" "$s" gpu_util)" -v e="$(jget "$f" "$s" energy_j)" -v sh="$(jget "$f" "$s" shared_gpu_s)" \
                'BEGIN { printf "| %s | %s | %.1f | %.1f | %.3f | %.2f | %.2f |\n", seed, s, m/60, j/60, u, e/3.6e6, sh/3600 }'
            echo "$seed $s $(jget "$f" "$s" makespan_s) $(jget "$f" "$s" avg_jct_s) $(jget "$f" "$s" gpu_util) $(jget "$f" "$s" energy_j)" >> "$tmp/sum-$g"
        done
        for v in noshare unknown; do
            echo "$seed live-$v $(jget "$f.$v" live makespan_s) $(jget "$f.$v" live avg_jct_s) $(jget "$f.$v" live gpu_util) $(jget "$f.$v" live energy_j)" >> "$tmp/sum-$g"
        done
    done
    echo
    echo "Means over the $(echo $SEEDS | wc -w) seeds, and how \`live\` compares (makespan and energy: reduction; utilisation: gain in points):"
    echo
    echo "| strategy | makespan min | avg JCT min | GPU util | energy kWh | live makespan vs it | live util vs it | live energy vs it | seeds live is sooner and busier |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    for s in $STRATS live-noshare live-unknown; do
        awk -v s="$s" '
        $2 == s { m[$1] = $3; j += $4; u[$1] = $5; e[$1] = $6; n++ }
        $2 == "live" { lm[$1] = $3; lu[$1] = $5; le[$1] = $6 }
        END {
            for (k in m) { sm += m[k]; su += u[k]; se += e[k]; slm += lm[k]; slu += lu[k]; sle += le[k];
                           if (lm[k] < m[k] && lu[k] > u[k]) win++ }
            name = s == "live-noshare" ? "live, --no-share" : (s == "live-unknown" ? "live, --unknown-workloads" : s)
            if (s == "live") printf "| %s | %.1f | %.1f | %.3f | %.2f | - | - | - | - |\n", name, sm/n/60, j/n/60, su/n, se/n/3.6e6
            else printf "| %s | %.1f | %.1f | %.3f | %.2f | %.0f%% | %+.1f | %.0f%% | %d of %d |\n", name, sm/n/60, j/n/60, su/n, se/n/3.6e6,
                100 * (1 - slm/sm), 100 * (slu - su)/n, 100 * (1 - sle/se), win, n
        }' "$tmp/sum-$g"
    done
    echo
}
sim_table "8 x V100, 40 jobs per series" 8 V100 40
sim_table "4 x RTX6000, 20 jobs per series" 4 RTX6000 20

# ---------------------------------------------------------------------------------------------
cat <<MID
## Through the daemon

The same comparison on a short series run for real: \`ecoschedd\` on 4 fake-NVML Tesla
V100-PCIE-32GB GPUs (the fake library, docs/platform.md) with \`--gpu-strategy\`, a 1 s
utilisation window, 3 s claims, 1 s \`--memthr-wait\` and a 1 s tick; 12 jobs per series
submitted at once with \`ecosched submit --gpu-mem\` (the workload's measured memory;
\`--share\` under \`live\`), each an \`ecosched-fake-train\` process that computes its run
time alone (3..12 s) at the measured speed factors of the fake-train jobs sharing its GPUs.
\`static\` runs without the daemon: each job waits for the previous jobs of its fixed GPUs,
then runs under \`ecosched-fake-gpu-run\`. The simulator runs the same series
(\`--series\`, no start-up, 0.05 s steps, the same windows).

Differences that matter: the daemon does not know the jobs' workloads, so its \`live\` shares
by the utilisation rule (a GPU whose averaged utilisation is under 70% and whose memory fits),
and the fake NVML reports 95% for any GPU with a process. A GPU therefore qualifies only
while its window has not yet filled with a new job's load (the 1 s window here), and
several jobs submitted together pile onto such a GPU; the simulator's \`live\` uses the
measured pairs instead, and its \`live, unknown workloads\` row the utilisation rule on
Lucid's measured utilisations (not the fake's 95%), so neither reproduces the daemon's
sharing exactly. The busy column is the share of GPU time with at least one job on the GPU
(from the jobs' start and end times), computed the same way for both; energy is the fake's
power model (23 W idle, 200 W busy per GPU, no host) over that busy time. The daemon rows run in real
time and change a little from run to run (process starts, sampling instants); the simulator
rows do not.

MID

SOCK="$tmp/d.sock"
export ECOSCHED_SOCKET="$SOCK" ECOSCHED_FAKE_NVML_GPUS=4
export ECOSCHED_FAKE_NVML_LIB="$BUILD/libecosched-fake-nvml.so" ECOSCHED_FAKE_GPU_RUN="$BUILD/ecosched-fake-gpu-run"
now() { date +%s.%N; }

# run_daemon STRATEGY SERIES OUT: jobs through ecoschedd; OUT gets "gpu_ids,start,end,submit" rows.
run_daemon() {
    st="$tmp/st-$1-$(basename "$2")"
    export ECOSCHED_FAKE_NVML_STATE="$st.fake" ECOSCHED_FAKE_TRAIN_DIR="$st.train"
    mkdir -p "$ECOSCHED_FAKE_TRAIN_DIR"
    "$ECOD" --foreground --socket "$SOCK" --state-dir "$st" --platform fake --log-level error \
        --gpu-strategy "$1" --util-window 1 --grace 3 --memthr-wait 1 2>>"$tmp/daemon.log" &
    DPID=$!
    i=0; while ! "$ECO" gpus >/dev/null 2>&1; do sleep 0.1; i=$((i + 1)); [ $i -lt 100 ] || exit 1; done
    share=""; [ "$1" = live ] && share="--share"
    ids=""
    t0=$(now)
    tail -n +2 "$2" | while IFS=, read -r id wl g work sub mem; do
        gb=$(awk -v m="$mem" 'BEGIN { printf "%.3f", m / 1024 }')
        "$ECO" submit --gpus "$g" --gpu-mem "$gb" $share -- "$TRAIN" "$wl" "$work" >> "$st.ids"
    done
    for j in $(cat "$st.ids"); do "$ECO" wait "$j" >/dev/null; done
    : > "$3"
    for j in $(cat "$st.ids"); do
        "$ECO" show "$j" | awk -v t0="$t0" '
            $1 == "assigned_gpus" { g = $2; gsub(/[][]/, "", g); gsub(/,/, " ", g) }
            $1 == "start_s" { s = $2 } $1 == "end_s" { e = $2 } $1 == "submit_s" { b = $2 }
            END { printf "%s,%.3f,%.3f,%.3f\n", g, s - t0, e - t0, b - t0 }' >> "$3"
    done
    kill -TERM "$DPID"; wait "$DPID" || true; DPID=""
}

# run_static SERIES STATIC_JOBS_CSV OUT: each job waits for its GPUs' previous jobs.
run_static() {
    st="$tmp/static-$(basename "$1")"
    export ECOSCHED_FAKE_NVML_STATE="$st.fake" ECOSCHED_FAKE_TRAIN_DIR="$st.train"
    mkdir -p "$ECOSCHED_FAKE_TRAIN_DIR" "$st.done"
    t0=$(now)
    # the fixed sets come from the simulator's static assignment (its gpu_ids column)
    tail -n +2 "$2" > "$st.list"
    while IFS=, read -r id wl g work sub start end jct gids rest; do
        mem=$(awk -F, -v id="$id" '$1 == id { print $6 }' "$1")
        pred=""
        for x in $gids; do
            p=$(cat "$st.last$x" 2>/dev/null || true); [ -n "$p" ] && pred="$pred $p"
            echo "$id" > "$st.last$x"
        done
        (
            for p in $pred; do while [ ! -e "$st.done/$p" ]; do sleep 0.05; done; done
            s=$(now)
            ECOSCHED_FAKE_NVML_PROC_MEM_MB="$mem" "$ECOSCHED_FAKE_GPU_RUN" "$(echo $gids | tr ' ' ,)" \
                "$TRAIN" "$wl" "$work" >/dev/null
            e=$(now)
            awk -v g="$gids" -v s="$s" -v e="$e" -v t0="$t0" 'BEGIN { printf "%s,%.3f,%.3f,0\n", g, s - t0, e - t0 }' > "$st.row$id"
            touch "$st.done/$id"
        ) &
    done < "$st.list"
    wait
    cat "$st".row* > "$3"
}

echo "| seed | run | strategy | makespan s | avg JCT s | busy | energy kJ |"
echo "|---:|---|---|---:|---:|---:|---:|"
for seed in $DSEEDS; do
    ser="$tmp/series-$seed.csv"
    SIMOPT="--gpus 4 --startup 0 --dt 0.05 --util-window 1 --grace 3 --ts-wait 1"
    "$ECO" sim --server $SIMOPT --jobs 12 --work 3:12 --seed "$seed" --write-series "$ser" \
        --out "$tmp/simd-$seed" --json > "$tmp/simd-$seed.json"
    "$ECO" sim --server $SIMOPT --series "$ser" --seed "$seed" --strategy live --unknown-workloads \
        --json > "$tmp/simd-$seed-unknown.json"
    for s in $STRATS live-unknown; do
        if [ "$s" = live-unknown ]; then f="$tmp/simd-$seed-unknown.json"; s2=live; jobs="$tmp/simd-$seed-unknown"
            "$ECO" sim --server $SIMOPT --series "$ser" --seed "$seed" --strategy live --unknown-workloads --out "$jobs" >/dev/null
            jobs="$jobs/jobs-live.csv"
        else f="$tmp/simd-$seed.json"; s2="$s"; jobs="$tmp/simd-$seed/jobs-$s.csv"; fi
        ms=$(jget "$f" "$s2" makespan_s)
        busy=$(tail -n +2 "$jobs" | awk -F, '{ print $9 "," $6 "," $7 }' | busy_frac 4 "$ms")
        awk -v seed="$seed" -v s="$s" -v m="$ms" -v j="$(jget "$f" "$s2" avg_jct_s)" -v b="$busy" \
            'BEGIN { name = s == "live-unknown" ? "live, unknown workloads" : s
                     printf "| %s | sim | %s | %.1f | %.1f | %.3f | %.1f |\n", seed, name, m, j, b, (4 * 23 + (200 - 23) * 4 * b) * m / 1000 }'
    done
    for s in $STRATS; do
        out="$tmp/real-$s-$seed.csv"
        if [ "$s" = static ]; then run_static "$ser" "$tmp/simd-$seed/jobs-static.csv" "$out"
        else run_daemon "$s" "$ser" "$out"; fi
        ms=$(awk -F, 'BEGIN { m = 0 } { if ($3 > m) m = $3 } END { printf "%.3f", m }' "$out")
        jct=$(awk -F, '{ s += $3 - $4; n++ } END { printf "%.3f", s / n }' "$out")
        busy=$(busy_frac 4 "$ms" < "$out")
        awk -v seed="$seed" -v s="$s" -v m="$ms" -v j="$jct" -v b="$busy" \
            'BEGIN { printf "| %s | daemon | %s | %.1f | %.1f | %.3f | %.1f |\n", seed, s, m, j, b, (4 * 23 + (200 - 23) * 4 * b) * m / 1000 }'
        echo "$seed $s $ms $busy" >> "$tmp/dsum"
    done
done
echo

# ---------------------------------------------------------------------------------------------
echo "## Against the targets"
echo
echo "Target: \`live\` finishes the series sooner than \`static\` and \`memory-threshold\`, with"
echo "higher GPU utilisation, on every seed."
echo
for g in 8 4; do
    awk -v g="$g" '
    { m[$2, $1] = $3; u[$2, $1] = $5; seeds[$1] = 1 }
    END {
        n = 0; win = 0; lo = 1e9; hi = -1e9; ulo = 1e9
        for (k in seeds) {
            n++
            for (b = 0; b < 2; b++) {
                s = b ? "memory-threshold" : "static"
                r = 100 * (1 - m["live", k] / m[s, k]); du = 100 * (u["live", k] - u[s, k])
                if (r < lo) lo = r; if (r > hi) hi = r; if (du < ulo) ulo = du
            }
            if (m["live", k] < m["static", k] && m["live", k] < m["memory-threshold", k] &&
                u["live", k] > u["static", k] && u["live", k] > u["memory-threshold", k]) win++
        }
        printf "- Simulator, %s: met on %d of %d seeds; the makespan is %.0f%% to %.0f%% shorter than under either, GPU utilisation at least %.1f points higher.\n",
            g == 8 ? "8 x V100" : "4 x RTX6000", win, n, lo, hi, ulo
    }' "$tmp/sum-$g"
done
awk '
{ m[$2, $1] = $3; b[$2, $1] = $4; seeds[$1] = 1 }
END {
    for (k in seeds) {
        printf "- Daemon, seed %s: `live` %.1f s against `static` %.1f s and `memory-threshold` %.1f s (%s); busy share %.3f against %.3f and %.3f (%s).\n",
            k, m["live", k], m["static", k], m["memory-threshold", k],
            (m["live", k] < m["static", k] && m["live", k] < m["memory-threshold", k]) ? "sooner" : "NOT sooner",
            b["live", k], b["static", k], b["memory-threshold", k],
            (b["live", k] > b["static", k] && b["live", k] > b["memory-threshold", k]) ? "higher" : "NOT higher"
    }
}' "$tmp/dsum" | sort
cat <<TAIL

Reading these figures:

- Most of \`live\`'s gain in the simulator is sharing: \`live, --no-share\` is no better than
  \`exclusive\`; \`static\` loses more again to its fixed per-GPU lists (compare its makespan
  with \`exclusive\`'s, seed by seed: a long job holds up its GPU's list). Lucid's
  workloads are small (CIFAR-scale, 2-20 GiB, many under 50% utilisation) and share well:
  every measured pair runs faster together than one after the other. On larger models the
  gain would be smaller; Gavel's V100 pairs (median combined factor 1.37, 40 of 676 pairs
  unable to share) are measured but not drawn in these series, as Gavel has no memory or
  utilisation figures.
- The simulator applies the same co-location model that \`live\` decides with (measured
  pairs, products of pair factors for three or more jobs on a GPU, which no data set
  measures), so its \`live\` figures are what the model promises, not an independent check.
  The daemon run is the check on the mechanics (claims, sampling, real processes), not on
  the slowdown figures, which its fake jobs take from the same tables.
- \`memory-threshold\` shares by accident: jobs under 10% of the GPU memory leave the GPU
  "free" to task-spooler's rule, so it stacks them regardless of their slowdown, and its 30 s
  wait between starts delays a series submitted at once.
- Utilisation through the daemon is the busy share: the fake NVML reports 95% for any GPU
  with a process, shared or not, so sharing shows as fewer busy GPUs, not as busier ones;
  where the daemon's \`live\` shares, its busy share can fall below the others' although it
  finishes sooner.
TAIL

