#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Reproduces docs/results/carbon.md: carbon- and price-aware temporal shifting on the ITP and
Philly traces placed on real 2022 grid signals, every policy's knob tuned on tuning traces and
months and reported on held-out ones, with a 5 % forecast error (no oracle except as the bound).

Usage: python3 scripts/results_carbon.py [BUILD_DIR] > docs/results/carbon.md
"""
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
ECO = os.path.join(BUILD, "ecosched")
SIG = "data/grid_signals"
CARBON = {
    "CISO": f"{SIG}/us_eia930_2022/eia930_CISO_2022_carbon.csv.gz",
    "ERCO": f"{SIG}/us_eia930_2022/eia930_ERCO_2022_carbon.csv.gz",
    "PJM": f"{SIG}/us_eia930_2022/eia930_PJM_2022_carbon.csv.gz",
    "MISO": f"{SIG}/us_eia930_2022/eia930_MISO_2022_carbon.csv.gz",
}
PRICE = {"NSW1": f"{SIG}/aemo_nem_2020_2024/aemo_NSW1_2020_2024_hourly.csv.gz"}
# Tuning: three ITP clusters, June 2022, CISO and ERCO (and NSW1 for the price policies).
# Held out: the other seven ITP clusters and Philly, February and August 2022, every region
# (the August runs end by late December: the 2022 signals must cover the longest, Philly with
# deadlines and threshold, 148 days).
TUNE_TRACES = ["itp04", "itp07", "itp02"]
TEST_TRACES = ["itp01", "itp03", "itp05", "itp06", "itp08", "itp09", "itp10", "philly"]
TUNE_STARTS = ["2022-06-01T00:00:00Z"]
TEST_STARTS = ["2022-02-01T00:00:00Z", "2022-08-01T00:00:00Z"]
TUNE_REGIONS = ["CISO", "ERCO"]
# Workload constraint: every job may wait up to 24 h (Let's Wait Awhile's next-workday
# deadline is 9-24 h), and a second case with half the jobs deferrable up to 6 h.
SCENARIOS = [("24h", "1"), ("6h", "0.5"), ("deadline", "1")]
# The deadline case: every job has a deadline submit + U(1.5, 3) x duration (seeded), its slack
# deadline - duration, and deadline misses are counted.
DEADLINES = "factor:1.5-3"
JCT_BUDGET = 0.03  # the goal: at most 3 % higher mean JCT than carbon-agnostic
KNOBS = {
    "lwa": ["lwa:0.25", "lwa:0.5", "lwa:1", "lwa:2", "lwa:4", "lwa:8", "lwa"],
    "threshold": ["threshold:1", "threshold:5", "threshold:10", "threshold:20",
                  "threshold:30", "threshold:50", "threshold:70", "threshold:80", "threshold:90",
                  "threshold:95"],
    "shift": ["shift:lambda=0.02", "shift:lambda=0.05", "shift:lambda=0.1", "shift:lambda=0.2",
              "shift:lambda=0.5", "shift:lambda=1", "shift:lambda=2"],
}
# The price policies weigh AUD, not kg: shift's lambda is then AUD per hour of delay.
PRICE_KNOBS = {
    "threshold": KNOBS["threshold"],
    "shift": ["shift:lambda=0.005", "shift:lambda=0.01", "shift:lambda=0.02",
              "shift:lambda=0.05", "shift:lambda=0.1", "shift:lambda=0.2", "shift:lambda=0.5"],
    "lwa": KNOBS["lwa"],
}


def trace_path(t):
    if t == "philly":
        return "data/philly/philly_multigpu_pass_jobs.csv.gz"
    return f"data/itp/cluster{t[3:]}.csv.gz"


CACHE = {}
OVER = set()  # (price, policy) whose every setting is over the JCT budget on the tuning set


def run(trace, start, signal, policy, delay, frac, forecast="noisy:0.05", price=False):
    key = (trace, start, signal, policy, delay, frac, forecast, price)
    if key in CACHE:
        return CACHE[key]
    cmd = [ECO, "sim", "--trace", trace_path(trace), "--cluster", "auto", "--policy", "easy",
           "--power-down", "forecast", "--trace-start", start, "--seed", "1", "-q", "--json",
           "--forecast", forecast]
    cmd += ["--price" if price else "--carbon", (PRICE if price else CARBON)[signal]]
    if delay == "deadline":
        cmd += ["--deadlines", DEADLINES]
        if policy != "none":
            cmd += ["--carbon-policy", policy]
    elif policy != "none":
        cmd += ["--carbon-policy", policy, "--max-delay", delay, "--deferrable", frac]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    d = json.loads(out)
    r = {"carbon": d.get("carbon_kg", 0.0), "cost": d.get("cost", 0.0),
         "jct": d["avg_jct_s"], "energy": d["energy_kwh"], "deferred": d.get("deferred", 0),
         "miss": d.get("deadline_miss_ratio", 0.0),
         "wall": d["sim_wall_s"]}
    CACHE[key] = r
    return r


def many(jobs):
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
        return list(ex.map(lambda a: run(*a[0], **a[1]), jobs))


def saved(r, base, what):
    return 100.0 * (base[what] - r[what]) / base[what] if base[what] else 0.0


def dj(r, base):
    return 100.0 * (r["jct"] / base["jct"] - 1.0)


def tune(knobs, price):
    """Each policy's knob with the most saving within the JCT budget over the tuning set, for
    each scenario apart (an operator knows the slack its users give): {scenario: {policy:
    setting}}, and the table of every setting."""
    what = "cost" if price else "carbon"
    regions = ["NSW1"] if price else TUNE_REGIONS
    chosen, table = {}, []
    for scen in SCENARIOS:
        d, f = scen
        chosen[scen] = {}
        for name, values in knobs.items():
            best, rows = None, []
            for v in values:
                jobs = [((t, st, rg, v, d, f), {"price": price}) for t in TUNE_TRACES
                        for st in TUNE_STARTS for rg in regions]
                bases = [((t, st, rg, "none", d, f), {"price": price}) for t in TUNE_TRACES
                         for st in TUNE_STARTS for rg in regions]
                rs, bs = many(jobs), many(bases)
                sv = sum(saved(r, b, what) for r, b in zip(rs, bs)) / len(rs)
                jj = sum(dj(r, b) for r, b in zip(rs, bs)) / len(rs)
                rows.append((v, sv, jj))
                table.append((scen, name, v, sv, jj))
                if jj <= 100 * JCT_BUDGET and (best is None or sv > best[1]):
                    best = (v, sv, jj)
            if best is None:  # no setting keeps the budget: the lowest JCT, said on the page
                best = min(rows, key=lambda x: x[2])
                OVER.add((price, scen, name))
            chosen[scen][name] = best[0]
    return chosen, table


def scen_label(scen):
    if scen[0] == "deadline":
        return f"deadlines {DEADLINES}: slack deadline - duration"
    return f"max delay {scen[0]}, deferrable share {scen[1]}"


def fmt(x, d=2):
    return f"{x:.{d}f}"


def main():
    t0 = time.time()
    load = open("/proc/loadavg").read().split()[0]
    ver = subprocess.run([ECO, "--version"], capture_output=True, text=True).stdout.split()[1]
    carbon_knobs, carbon_tune = tune(KNOBS, price=False)
    price_knobs, price_tune = tune(PRICE_KNOBS, price=True)

    # Held-out runs.
    rows = []
    jobs = []
    for t in TEST_TRACES:
        for st in TEST_STARTS:
            for (d, f) in SCENARIOS:
                for rg in CARBON:
                    for name in ["none", "lwa-full", "lwa", "threshold", "shift", "shift-oracle",
                                 "lwa-oracle", "lwa-int", "shift-int"]:
                        ck = carbon_knobs[(d, f)]
                        pol = {"none": "none", "lwa-full": "lwa", "shift-oracle":
                               ck["shift"], "lwa-oracle": "lwa", "lwa-int": "lwa-int",
                               "shift-int": ck["shift"] + ",interrupt=1"}.get(name, ck.get(name))
                        fc = "oracle" if name.endswith("oracle") else "noisy:0.05"
                        jobs.append(((t, st, rg, pol, d, f), {"forecast": fc}))
                        rows.append((t, st, d, f, rg, name))
                for name in ["none", "threshold", "shift", "lwa"]:
                    pol = "none" if name == "none" else price_knobs[(d, f)][name]
                    jobs.append(((t, st, "NSW1", pol, d, f), {"price": True}))
                    rows.append((t, st, d, f, "NSW1", name))
    results = dict(zip(rows, many(jobs)))

    def agg(region, name, scen, what):
        """Mean saving and JCT change over held-out traces and starts."""
        s = j = 0.0
        n = 0
        for t in TEST_TRACES:
            for st in TEST_STARTS:
                b = results[(t, st, scen[0], scen[1], region, "none")]
                r = results[(t, st, scen[0], scen[1], region, name)]
                s += saved(r, b, what)
                j += dj(r, b)
                n += 1
        return s / n, j / n

    p = print
    p("# Carbon- and price-aware scheduling: results")
    p()
    p(f"Produced by `python3 scripts/results_carbon.py > docs/results/carbon.md` (ecosched {ver})"
      f" on {os.cpu_count()} cores, load average {load} at the start, in "
      f"{{ELAPSED}} s. Policies: [../policies/carbon.md](../policies/carbon.md); signals and "
      "integrals: [../formats/grid-signal.md](../formats/grid-signal.md).")
    p()
    p("**Set-up.** Each trace replayed on `--cluster auto` (sized for 70 % mean GPU utilisation),"
      " `--policy easy`, `--power-down forecast`, `--seed 1`, its time 0 placed at the start of a"
      " month of 2022 (`--trace-start`), judged with the real hourly signal (carbon of the whole"
      " cluster's energy: hosts, idle GPUs and jobs). Every policy decides from the same forecast:"
      " the signal with a 5 % relative error per hour (`--forecast noisy:0.05`, Let's Wait"
      " Awhile's error model); the oracle rows (the signal itself) are the bound only."
      " Workload constraint, the same for every policy: each job may wait up to 24 h"
      " (`--max-delay 24h`), or half the jobs up to 6 h (`--max-delay 6h --deferrable 0.5`)."
      " Every policy knows each job's run time from the trace.")
    p()
    p(f"**Tuning and held out.** Each policy's own knob (lwa's flexibility window, threshold's "
      f"percentile, shift's price on delay lambda) is tuned on the traces "
      f"{', '.join(TUNE_TRACES)}, June 2022, regions {', '.join(TUNE_REGIONS)} (NSW1 for the"
      f" price runs): the setting with the most saving at most {int(JCT_BUDGET*100)} % above"
      f" carbon-agnostic mean JCT, averaged over that set. Reported on the held-out traces "
      f"{', '.join(TEST_TRACES)}, in February and August 2022, on {', '.join(CARBON)}"
      " (carbon) and NSW1 (price). `lwa, full window` is Let's Wait Awhile as published: the"
      " whole slack searched, JCT unconstrained.")
    p()
    p("## Tuned settings")
    p()
    p("Per scenario (the slack users give), each policy's setting with the most saving at most"
      f" {int(JCT_BUDGET*100)} % above carbon-agnostic mean JCT on the tuning set:")
    p()
    p("| scenario | policy | carbon runs | price runs (NSW1) |")
    p("|---|---|---|---|")
    for scen in SCENARIOS:
        for name in ["lwa", "threshold", "shift"]:
            mark = lambda pr: (" (no setting within the budget: the lowest JCT)"
                               if (pr, scen, name) in OVER else "")
            p(f"| {scen_label(scen)} | {name} | `{carbon_knobs[scen][name]}`{mark(False)} |"
              f" `{price_knobs[scen][name]}`{mark(True)} |")
    p()
    p("Tuning set, every setting: mean carbon saved and mean JCT change against carbon-agnostic"
      " (both tuning regions):")
    p()
    p("| scenario | policy | setting | carbon saved % | JCT change % |")
    p("|---|---|---|---:|---:|")
    for (scen, name, v, sv, jj) in carbon_tune:
        p(f"| {scen_label(scen)} | {name} | `{v}` | {fmt(sv)} | {fmt(jj, 1)} |")
    p()
    p("Price runs (NSW1, June 2022, tuning traces): mean cost saved and JCT change:")
    p()
    p("| scenario | policy | setting | cost saved % | JCT change % |")
    p("|---|---|---|---:|---:|")
    for (scen, name, v, sv, jj) in price_tune:
        p(f"| {scen_label(scen)} | {name} | `{v}` | {fmt(sv)} | {fmt(jj, 1)} |")
    p()
    for scen in SCENARIOS:
        label = scen_label(scen)
        p(f"## Held out: carbon saved ({label})")
        p()
        p("Mean over the held-out traces and months of the carbon saved against carbon-agnostic,"
          " % (mean JCT change, %, in brackets). The bound is Let's Wait Awhile with its whole"
          " window and the signal itself as its forecast: about the most that non-interrupting"
          " shifting within the slack saves, at whatever JCT it costs.")
        p()
        names = ["lwa-full", "lwa", "threshold", "shift", "lwa-int", "shift-int", "lwa-oracle",
                 "shift-oracle"]
        head = {"lwa-full": "lwa, full window", "lwa": "lwa, tuned", "threshold":
                "threshold, tuned", "shift": "shift (ecosched), tuned", "lwa-int": "lwa-int (interrupting), full window",
                "shift-int": "shift tuned, interrupting", "lwa-oracle":
                "lwa full window, oracle (bound)", "shift-oracle": "shift tuned, oracle forecast"}
        p("| region | " + " | ".join(head[n] for n in names) + " | shift / lwa tuned |")
        p("|---|" + "---:|" * (len(names) + 1))
        for rg in CARBON:
            cells = []
            for n in names:
                s, j = agg(rg, n, scen, "carbon")
                cells.append(f"{fmt(s)} ({fmt(j, 1)})")
            s_sh, _ = agg(rg, "shift", scen, "carbon")
            s_lw, _ = agg(rg, "lwa", scen, "carbon")
            ratio = f"{s_sh / s_lw:.2f}x" if s_lw > 0 else "n/a (lwa saves nothing)"
            p(f"| {rg} | " + " | ".join(cells) + f" | {ratio} |")
        p()
        p(f"Cost saved on NSW1 prices ({label}), policies following the price:")
        p()
        p("| policy | cost saved % | JCT change % |")
        p("|---|---:|---:|")
        for n in ["lwa", "threshold", "shift"]:
            s, j = agg("NSW1", n, scen, "cost")
            p(f"| {n} (`{price_knobs[scen][n]}`) | {fmt(s)} | {fmt(j, 1)} |")
        p()
        if scen[0] == "deadline":
            p("Deadline misses (share of completed jobs that ended after their deadline), mean"
              " over the held-out traces and months:")
            p()
            p("| region | carbon-agnostic | " + " | ".join(head[n] for n in names) + " |")
            p("|---|" + "---:|" * (len(names) + 1))
            for rg in CARBON:
                row = []
                for n in ["none"] + names:
                    m = sum(results[(t, st, scen[0], scen[1], rg, n)]["miss"] for t in TEST_TRACES
                            for st in TEST_STARTS) / (len(TEST_TRACES) * len(TEST_STARTS))
                    row.append(f"{m:.4f}")
                p(f"| {rg} | " + " | ".join(row) + " |")
            p()
    # Per trace, the first scenario, CISO.
    scen = SCENARIOS[0]
    p(f"## Held out per trace (CISO, max delay {scen[0]}, all jobs deferrable)")
    p()
    p("Carbon saved % (JCT change %), mean of February and August.")
    p()
    p("| trace | lwa, full window | lwa, tuned | threshold, tuned | shift, tuned |")
    p("|---|---:|---:|---:|---:|")
    for t in TEST_TRACES:
        cells = []
        for n in ["lwa-full", "lwa", "threshold", "shift"]:
            s = j = 0.0
            for st in TEST_STARTS:
                b = results[(t, st, scen[0], scen[1], "CISO", "none")]
                r = results[(t, st, scen[0], scen[1], "CISO", n)]
                s += saved(r, b, "carbon") / len(TEST_STARTS)
                j += dj(r, b) / len(TEST_STARTS)
            cells.append(f"{fmt(s)} ({fmt(j, 1)})")
        p(f"| {t} | " + " | ".join(cells) + " |")
    p()
    # Goals.
    p("## Goals")
    p()
    wins = 0
    lines = []
    for rg in CARBON:
        s_sh, j_sh = agg(rg, "shift", SCENARIOS[0], "carbon")
        s_lw, _ = agg(rg, "lwa", SCENARIOS[0], "carbon")
        s_full, _ = agg(rg, "lwa-full", SCENARIOS[0], "carbon")
        ok = s_lw > 0 and s_sh >= 1.5 * s_lw and j_sh <= 100 * JCT_BUDGET
        wins += ok
        lines.append(f"{rg}: shift {fmt(s_sh)} % at {fmt(j_sh, 1)} % JCT, lwa tuned {fmt(s_lw)} %,"
                     f" lwa full window {fmt(s_full)} %")
    p(f"- **Carbon saved >= 1.5x Let's Wait Awhile's at <= 3 % higher mean JCT, in at least three"
      f" regions** (24 h scenario, tuned lwa, which also keeps within the JCT budget on the"
      f" tuning set): {'met' if wins >= 3 else 'not met'} in {wins} of {len(CARBON)} regions. "
      + "; ".join(lines) + ". Against lwa with its full window (no JCT limit) shift saves less"
      " carbon; that lwa costs the JCT shown above.")
    better = []
    for rg in CARBON:
        s_th, j_th = agg(rg, "threshold", SCENARIOS[0], "carbon")
        s_sh, _ = agg(rg, "shift", SCENARIOS[0], "carbon")
        if s_th > s_sh:
            better.append(f"{rg} ({fmt(s_th)} % at {fmt(j_th, 1)} % JCT against shift's {fmt(s_sh)} %)")
    if better:
        p("- **Threshold, tuned, saves more than shift** within the same budget in the 24 h"
          " scenario in " + ", ".join(better) + ": ecosched's own policy is not the best of the"
          " three there; in the 6 h, half-deferrable scenario compare the table above.")
    s_sh, j_sh = agg("NSW1", "shift", SCENARIOS[0], "cost")
    s_th, j_th = agg("NSW1", "threshold", SCENARIOS[0], "cost")
    okc = s_th > 0 and s_sh >= 1.5 * s_th
    p(f"- **Cost saved on NSW1 >= 1.5x the threshold baseline's** (24 h scenario): "
      f"{'met' if okc else 'not met'} as a ratio: shift {fmt(s_sh)} % at {fmt(j_sh, 1)} % JCT,"
      f" threshold {fmt(s_th)} % at {fmt(j_th, 1)} % JCT."
      + (" Neither keeps within the 3 % JCT budget on the held-out traces." if j_sh > 100 *
         JCT_BUDGET and j_th > 100 * JCT_BUDGET else ""))
    s_b, _ = agg("CISO", "lwa-oracle", SCENARIOS[0], "carbon")
    s_c, j_c = agg("CISO", "shift", SCENARIOS[0], "carbon")
    p(f"- **How much is left**: within a 3 % JCT budget every policy saves under 1 % of the"
      f" cluster's carbon here (CISO: shift {fmt(s_c)} %), while shifting within the whole 24 h"
      f" slack with a perfect forecast saves {fmt(s_b)} % at about +80 % mean JCT. The saving"
      " available without hurting JCT is small on these clusters, because most of their energy"
      " is the hosts and GPUs of busy nodes over weeks, not the few hours a job can be moved.")
    dl = ("deadline", "1")
    worse = []
    for rg in CARBON:
        base_m = sum(results[(t, st, "deadline", "1", rg, "none")]["miss"] for t in TEST_TRACES
                     for st in TEST_STARTS)
        sh_m = sum(results[(t, st, "deadline", "1", rg, "shift")]["miss"] for t in TEST_TRACES
                   for st in TEST_STARTS)
        if sh_m > base_m + 1e-12:
            worse.append(rg)
    s_d, j_d = agg("CISO", "shift", dl, "carbon")
    p(f"- **No more deadline misses than carbon-agnostic** (deadline case, shift tuned): "
      f"{'met' if not worse else 'not met in ' + ', '.join(worse)} (table above); shift saves"
      f" {fmt(s_d)} % on CISO there at {fmt(j_d, 1)} % JCT.")
    p("- **Combined shifting + capping + power-down**: every run here has power-down; capping by"
      " the grid (mpc with a demand-response budget and the grid floor) is measured on one trace"
      " only, with untuned settings, in docs/policies/carbon.md (\"All together\": ITP cluster04,"
      " CISO: 25.6 % combined against 17.4 % for the best single lever, at +87 % mean JCT): the"
      " goal is met there but not judged on held-out traces, since a capped run takes about"
      " 75 s and this page's 1,400 runs would take hours.")
    p("- **Interrupting shifting** (checkpoint cost 120 s of work per suspension): the"
      " `lwa-int` and `shift, interrupting` columns above.")
    p()
    p("## Published figures beside")
    p()
    p("Let's Wait Awhile (Wiesner et al., Middleware '21) reports, for ML-training jobs with a"
      " next-workday deadline, 5 % forecast error, 2020 data, carbon saved without interruption:"
      " 5.9 % (Germany), 6.6 % (Great Britain), 4.8 % (France), 2.5 % (California); with"
      " interruption 7.9 / 9.0 / 5.9 / 5.7 %. Its jobs run alone (no cluster capacity, no queue)"
      " and only their own energy counts; the `lwa, full window` column above is that policy"
      " on a capacity-limited cluster whose whole energy counts, on 2022 US data.")
    p()
    p(f"Simulator speed with signals: see bench/README.md; here the {len(CACHE)} runs took "
      f"{{ELAPSED}} s.")
    return time.time() - t0


if __name__ == "__main__":
    import io
    buf = io.StringIO()
    real = sys.stdout
    sys.stdout = buf
    el = main()
    sys.stdout = real
    sys.stdout.write(buf.getvalue().replace("{ELAPSED}", f"{el:.0f}"))
