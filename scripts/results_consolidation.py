#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Reproduces docs/results/consolidation.md: every consolidation policy, with the co-location
gate open to all of them, compared at a service level (lost work and SLATAH at most a set
share) on two openb pod lists. Each policy's knob and gate are tuned on tuning seeds by one
rule (the least charged energy among the settings that meet the level); the chosen settings
are reported on held-out seeds beside the co-location bound (`ecosched sim --bound`); the
share DGDDEP's re-allocation adds over its thresholds alone is measured at the same settings.

Usage: scripts/results_consolidation.py [BUILD_DIR] > docs/results/consolidation.md
Environment: JOBS (parallel runs, default 2), WORK=DIR (keep the runs there and skip those
whose summary.json exists: an interrupted run resumes), QUICK=1 (one trace, one
configuration, fewer settings and seeds: to measure the runtime first). Standard library only.
"""
import concurrent.futures as cf
import json
import os
import subprocess
import sys
import tempfile
import time

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
ECO = os.path.join(BUILD, "ecosched")
JOBS = int(os.environ.get("JOBS", "2"))
QUICK = os.environ.get("QUICK") == "1"
DATA = "data/alibaba_gpu_v2023_openb"
# Two pod lists of the openb trace: the default mix, and the one whose every pod shares a GPU
# (fractional GPU requests), where co-location is the rule rather than the exception.
TRACES = [("default", f"{DATA}/openb_pod_list_default.csv.gz"),
          ("gpushare100", f"{DATA}/openb_pod_list_gpushare100.csv.gz")]
N, CLUSTER = 1000, "150x8:V100"
TUNE = [1]
HELD = [3, 4, 5, 6, 7]
# decide:judge: the gate and DGDDEP decide with the first set of measured pairs, the run is
# judged (slowdowns applied) with the other; both held out.
CONFIGS = ["lucid:gavel", "gavel:lucid"]
# The service level: lost work and SLATAH at most these shares (held-out means).
LOST_MAX, SLA_MAX = 0.01, 0.02
TARGET = -5.0  # dgddep's charged energy at least 5 % below the best CloudSim point's
GATES = [0, 0.02, 0.05, 0.1, 0.2]
LO, HI = [0.2, 0.3], [0.6, 0.8, 1.0]
KNOBS = {"thr-mmt": ("--thr", [0.6, 0.8, 1.0]),
         "mad-mmt": ("--mad-safety", [1.5, 2.5, 3.5]),
         "iqr-mmt": ("--iqr-safety", [0.5, 1.5, 2.5]),
         "lr-mmt": ("--lr-safety", [1.0, 1.2, 1.4])}
DUAL = ["dgddep", "dual-pabfd", "dual-ff"]
CLOUDSIM = list(KNOBS)
if QUICK:
    TRACES, CONFIGS, TUNE, HELD = TRACES[:1], CONFIGS[:1], [1], [3]
    GATES, LO, HI = [0, 0.1], [0.3], [0.8]
    KNOBS = {k: (f, v[1:2]) for k, (f, v) in KNOBS.items()}


def settings():
    """(policy, label, options) of every knob setting; the gate is added per run."""
    out = []
    for pol, (flag, vals) in KNOBS.items():
        out += [(pol, f"{v:g}", [flag, f"{v:g}"]) for v in vals]
    for pol in DUAL:
        for lo in LO:
            for hi in HI:
                for lm, hm in [(lo, hi)]:  # the memory pair equal to the utilisation pair
                    lab = f"{lo:g},{hi:g},{lm:g},{hm:g}"
                    out.append((pol, lab, ["--thresholds", lab]))
    return out


WORK = os.environ.get("WORK") or tempfile.mkdtemp(prefix="consol.")
START = time.time()


def rundir(trace, cfg, seed, pol, lab, gate):
    return os.path.join(WORK, "runs", trace, cfg.replace(":", "_"), str(seed), pol,
                        lab.replace(",", "_"), f"g{gate:g}")


def run_cmd(trace_path, cfg, seed, pol, opts, gate, out):
    d, j = cfg.split(":")
    return ["nice", "-n", "10", ECO, "sim", "--consolidation", pol, *opts, "--coloc-gate",
            f"{gate:g}", "--trace", trace_path, "--cluster", CLUSTER, "--containers", str(N),
            "--seed", str(seed), "--decide", d, "--judge", j, "--out", out, "-q"]


def run_all(jobs):
    """jobs: list of (cmd, out_dir, file); runs those whose file is missing."""
    todo = [(c, o, f) for c, o, f in jobs if not os.path.exists(os.path.join(o, f))]

    def one(job):
        c, o, f = job
        os.makedirs(o, exist_ok=True)
        r = subprocess.run(c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if r.returncode:
            sys.exit(f"failed ({r.returncode}): {' '.join(c)}\n{r.stderr}")

    t0 = time.time()
    with cf.ThreadPoolExecutor(JOBS) as ex:
        list(ex.map(one, todo))
    # the runs' wall time, summed over the resumes of one WORK
    path = os.path.join(WORK, "elapsed_s")
    spent = float(open(path).read()) if os.path.exists(path) else 0.0
    with open(path, "w") as f:
        f.write(f"{spent + time.time() - t0:.0f}\n")
    return len(todo)


def load(out):
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    return {"charged": s["energy_charged_kwh"], "energy": s["energy_kwh"],
            "sla": s["sla_violation"], "lost": s["lost_work_share"],
            "coloc": s["lost_work"]["colocation"], "mig": s["migrations"],
            "hosts": s["avg_hosts_on"], "boots": s["boots"]}


def mean(rows):
    return {k: sum(r[k] for r in rows) / len(rows) for k in rows[0]}


def meets(m):
    return m["lost"] <= LOST_MAX + 1e-12 and m["sla"] <= SLA_MAX + 1e-12


SET = settings()
OPTS = {(p, l): o for p, l, o in SET}
n_runs = 0
# ---- 1. tuning seeds: every setting and gate ---------------------------------------------
jobs = []
for tname, tpath in TRACES:
    for cfg in CONFIGS:
        for seed in TUNE:
            for pol, lab, opts in SET:
                for g in GATES:
                    out = rundir(tname, cfg, seed, pol, lab, g)
                    jobs.append((run_cmd(tpath, cfg, seed, pol, opts, g, out), out,
                                 "summary.json"))
n_tune = len(jobs)
n_runs += run_all(jobs)
# chosen[(trace, cfg, pol)] = (label, gate, tuning mean, met on tuning)
chosen = {}
for tname, _ in TRACES:
    for cfg in CONFIGS:
        for pol in CLOUDSIM + DUAL:
            cands = []
            for p, lab, _ in SET:
                if p != pol:
                    continue
                for g in GATES:
                    m = mean([load(rundir(tname, cfg, s, pol, lab, g)) for s in TUNE])
                    cands.append((lab, g, m))
            ok = [c for c in cands if meets(c[2])]
            if ok:
                best = min(ok, key=lambda c: c[2]["charged"])
                chosen[(tname, cfg, pol)] = (*best[:3], True)
            else:  # the closest to the level: least lost work among SLATAH <= level, else all
                pool = [c for c in cands if c[2]["sla"] <= SLA_MAX] or cands
                best = min(pool, key=lambda c: c[2]["lost"])
                chosen[(tname, cfg, pol)] = (*best[:3], False)
# ---- 2. held-out seeds: the chosen settings, none, and the thresholds alone at dgddep's ----
jobs = []
held_sets = {}
for tname, tpath in TRACES:
    for cfg in CONFIGS:
        rows = [(pol, *chosen[(tname, cfg, pol)][:2]) for pol in CLOUDSIM + DUAL]
        rows.append(("none", "-", 0))
        dl, dg = chosen[(tname, cfg, "dgddep")][:2]
        rows += [("dual-pabfd", dl, dg), ("dual-ff", dl, dg)]
        held_sets[(tname, cfg)] = rows
        for pol, lab, g in rows:
            opts = OPTS.get((pol, lab), [])
            for seed in HELD:
                out = rundir(tname, cfg, seed, pol, lab, g)
                jobs.append((run_cmd(tpath, cfg, seed, pol, opts, g, out), out, "summary.json"))
# the bound at the level, per trace, judge and held-out seed
for tname, tpath in TRACES:
    for judge in sorted({c.split(":")[1] for c in CONFIGS}):
        for seed in HELD:
            out = os.path.join(WORK, "bound", tname, judge, str(seed))
            cmd = ["nice", "-n", "10", ECO, "sim", "--consolidation", "none", "--bound",
                   f"{LOST_MAX:g}", "--trace", tpath, "--cluster", CLUSTER, "--containers",
                   str(N), "--seed", str(seed), "--judge", judge, "--out", out, "-q"]
            jobs.append((cmd, out, "bound.json"))
n_held = len(jobs)
n_runs += run_all(jobs)


def held(tname, cfg, pol, lab, g):
    return mean([load(rundir(tname, cfg, s, pol, lab, g)) for s in HELD])


def bound(tname, judge):
    bs = []
    for s in HELD:
        with open(os.path.join(WORK, "bound", tname, judge, str(s), "bound.json")) as f:
            bs.append(json.load(f))
    return {k: sum(b[k] for b in bs) / len(bs) for k in ("bound_kwh", "hosts_only_kwh")}, \
        sorted({b["theta"] for b in bs})


def pct(a, b):
    return 100 * (a - b) / b


version = subprocess.run([ECO, "--version"], capture_output=True, text=True).stdout.split()[1]
P = print
# ---- the measurements the page states ---------------------------------------------------------
res = {}
for tname, _ in TRACES:
    for cfg in CONFIGS:
        rows = {}
        for pol, lab, g in held_sets[(tname, cfg)]:
            rows[(pol, lab, g)] = held(tname, cfg, pol, lab, g)
        res[(tname, cfg)] = rows


def target(tname, cfg):
    """(dgddep row, best CloudSim row at the level or None, change %)"""
    rows = res[(tname, cfg)]
    dl, dg = chosen[(tname, cfg, "dgddep")][:2]
    d = rows[("dgddep", dl, dg)]
    best = None
    for pol in CLOUDSIM:
        lab, g = chosen[(tname, cfg, pol)][:2]
        m = rows[(pol, lab, g)]
        if meets(m) and (best is None or m["charged"] < best[1]["charged"]):
            best = (f"{pol} {lab} gate {g:g}", m)
    return d, best, (pct(d["charged"], best[1]["charged"]) if best else None)


summary = []
n_met = n_cases = 0
for tname, _ in TRACES:
    for cfg in CONFIGS:
        d, best, ch = target(tname, cfg)
        n_cases += 1
        dm = meets(d)
        if best and dm and ch <= TARGET:
            n_met += 1
        summary.append((tname, cfg, d, best, ch, dm))

P(f"""# Container consolidation results: energy at a service level, held-out seeds

Produced by `scripts/results_consolidation.sh > docs/results/consolidation.md` (ecosched
{version}; the shell script runs `scripts/results_consolidation.py`). {N} containers sampled from
each of two openb pod lists (`{TRACES[0][1]}`{', `' + TRACES[1][1] + '`' if len(TRACES) > 1 else ''})
with Lucid workloads and Acme-shaped activity (docs/models/container-workloads.md) on {CLUSTER}
hosts with the default power figures (docs/models/energy.md), 24 hours in 300 s periods,
checkpoint/restore migrations. Containers start placed first fit by request; from the second
period on each policy migrates and powers hosts down (docs/policies/consolidation.md,
docs/policies/dgddep.md).

## Summary

- **Service level**: lost work <= {100 * LOST_MAX:g} % of the demanded GPU work and SLATAH <= {100 * SLA_MAX:g} %
  (held-out means). Each policy's setting (its own knob and the co-location gate) is the one
  with the least charged energy among those that meet the level on the tuning seeds.""")
for tname, cfg, d, best, ch, dm in summary:
    b, _ = bound(tname, cfg.split(":")[1])
    none = res[(tname, cfg)][("none", "-", 0)]
    if best is None:
        verdict = "no CloudSim policy meets the level on the held-out seeds"
    else:
        verdict = (f"dgddep {d['charged']:.1f} kWh against the best CloudSim point "
                   f"({best[0]}) {best[1]['charged']:.1f} kWh: **{ch:+.1f} %**")
    ok = "met" if (best and dm and ch <= TARGET) else "NOT met"
    P(f"- `{tname}`, decide {cfg.split(':')[0]} / judge {cfg.split(':')[1]}: {verdict}; dgddep "
      f"{'meets' if dm else 'does NOT meet'} the level (lost {100 * d['lost']:.2f} %, SLATAH "
      f"{100 * d['sla']:.2f} %); target (>= 5 % below) **{ok}**. Bound {b['bound_kwh']:.1f} kWh, "
      f"no migrations ({'none'}) {none['charged']:.1f} kWh.")
P(f"- Target met in **{n_met} of {n_cases}** trace/configuration cases.")
for tname, cfg, d, best, ch, dm in summary:
    rows = res[(tname, cfg)]
    dl, dg = chosen[(tname, cfg, "dgddep")][:2]
    pb, ff = rows[("dual-pabfd", dl, dg)], rows[("dual-ff", dl, dg)]
    cannot = [p for p in CLOUDSIM + DUAL
              if not meets(rows[(p, *chosen[(tname, cfg, p)][:2])])]
    P(f"- `{tname}`, {cfg}: DGDDEP's re-allocation over the thresholds alone at its setting: "
      f"{pct(d['charged'], pb['charged']):+.1f} % against `dual-pabfd`, "
      f"{pct(d['charged'], ff['charged']):+.1f} % against `dual-ff` (first fit); hosts on "
      f"{d['hosts']:.1f} / {pb['hosts']:.1f} / {ff['hosts']:.1f}. Policies that miss the level "
      f"held out: {', '.join(f'`{p}`' for p in cannot) if cannot else 'none'}.")
P()
P(f"""## Protocol

1. **Settings**: `thr-mmt` `--thr`, `mad-mmt` `--mad-safety`, `iqr-mmt` `--iqr-safety`,
   `lr-mmt` `--lr-safety` each at {', '.join(f'{k} {"/".join(f"{x:g}" for x in v[1])}' for k, v in KNOBS.items())};
   `dgddep`, `dual-pabfd` and `dual-ff` (the same dual thresholds with plain first fit) their
   thresholds `LO_UTIL,HI_UTIL,LO_MEM,HI_MEM` with LO_UTIL in {{{', '.join(f'{x:g}' for x in LO)}}},
   HI_UTIL in {{{', '.join(f'{x:g}' for x in HI)}}} and the memory pair equal to them; each of
   them with the co-location gate `--coloc-gate` at
   {', '.join(f'{g:g}' for g in GATES)} (0: off): a destination is refused when the decide pairs
   predict a slowdown above the gate for the container or one already there
   (docs/policies/consolidation.md, "Co-location gate"). {len(SET) * len(GATES)} settings per seed.
2. **Tuned on seeds {', '.join(map(str, TUNE))}**, per trace and configuration, by one rule for every
   policy: the least charged energy among the settings whose tuning-seed means meet the level;
   a policy with none reports its setting of least lost work (among SLATAH <= {100 * SLA_MAX:g} %)
   and is marked as not reaching the level.
3. **Reported on held-out seeds {', '.join(map(str, HELD))}** (means); nothing is tuned there.
4. **Held-out co-location model**: `decide:judge` — the gate and DGDDEP's estimate read the first
   set of measured pairs, the run's slowdowns come from the other (docs/models/colocation.md).
5. **Bound**: `ecosched sim --bound {LOST_MAX:g}` on the same containers and seed
   (docs/policies/consolidation.md, "A bound at a service level"): the least energy of any
   placement that holds every period's demand within the hosts' GPU and memory capacity,
   migrates for free and knows the future, with GPUs shared by heavy containers paying the
   judge's slowdown out of the lost-work budget.

Columns: charged: metered energy x demanded / useful work (lost work paid for at the run's own
energy per useful GPU-hour); energy: metered; SLATAH: share of host-time on with GPU-utilisation
or GPU-memory demand above 100 %; lost: share of the demanded GPU work not done (of which coloc:
co-location slowdown, share of active time); level: meets the service level on the held-out
seeds.
""")

for tname, _ in TRACES:
    for cfg in CONFIGS:
        b, thetas = bound(tname, cfg.split(":")[1])
        rows = res[(tname, cfg)]
        P(f"## `{tname}`, decide {cfg.split(':')[0]}, judge {cfg.split(':')[1]}\n")
        P(f"Bound at the level: **{b['bound_kwh']:.1f} kWh** (capacity alone: "
          f"{b['hosts_only_kwh']:.1f} kWh; mean of the held-out seeds).\n")
        P("| policy | setting | gate | tuned at level | charged kWh | vs bound | energy kWh | "
          "SLATAH % | lost % | coloc % | migrations | avg hosts on | level |")
        P("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        order = [(p, *chosen[(tname, cfg, p)][:2]) for p in DUAL + CLOUDSIM] + [("none", "-", 0)]
        for pol, lab, g in order:
            m = rows[(pol, lab, g)]
            tl = "-" if pol == "none" else ("yes" if chosen[(tname, cfg, pol)][3] else "**cannot**")
            P(f"| {pol} | {lab} | {g:g} | {tl} | {m['charged']:.1f} | "
              f"{pct(m['charged'], b['bound_kwh']):+.1f} % | {m['energy']:.1f} | "
              f"{100 * m['sla']:.3f} | {100 * m['lost']:.3f} | {100 * m['coloc']:.3f} | "
              f"{m['mig']:.0f} | {m['hosts']:.2f} | {'yes' if meets(m) else '**no**'} |")
        d, best, ch = target(tname, cfg)
        P()
        if best is None:
            P("Target: no CloudSim policy meets the level on the held-out seeds; the target "
              "cannot be checked (**NOT met**).\n")
        else:
            ok = meets(d) and ch <= TARGET
            P(f"Target (dgddep >= 5 % below the best CloudSim point at the level, {best[0]}, "
              f"{best[1]['charged']:.1f} kWh): dgddep {d['charged']:.1f} kWh, **{ch:+.1f} %**"
              f"{'' if meets(d) else ', and dgddep misses the level'} — "
              f"**{'met' if ok else 'NOT met'}**.\n")
        dl, dg = chosen[(tname, cfg, "dgddep")][:2]
        dd = rows[("dgddep", dl, dg)]
        pb = rows[("dual-pabfd", dl, dg)]
        ff = rows[("dual-ff", dl, dg)]
        P(f"Re-allocation at dgddep's setting ({dl}, gate {dg:g}): dual-pabfd "
          f"{pb['charged']:.1f} kWh (dgddep {pct(dd['charged'], pb['charged']):+.1f} %, lost "
          f"{100 * pb['lost']:.2f} %, SLATAH {100 * pb['sla']:.2f} %), dual-ff "
          f"{ff['charged']:.1f} kWh (dgddep {pct(dd['charged'], ff['charged']):+.1f} %, lost "
          f"{100 * ff['lost']:.2f} %, SLATAH {100 * ff['sla']:.2f} %); dgddep "
          f"{dd['charged']:.1f} kWh, lost {100 * dd['lost']:.2f} %, SLATAH "
          f"{100 * dd['sla']:.2f} %.\n")

# ---- reading: what the numbers say, per case ----------------------------------------------
P("## Reading\n")
for tname, _ in TRACES:
    for cfg in CONFIGS:
        rows = res[(tname, cfg)]
        b, thetas = bound(tname, cfg.split(":")[1])
        at = []  # (charged, policy, row) of the chosen settings that meet the level held out
        cannot = []
        for pol in DUAL + CLOUDSIM:
            lab, g, _, tuned = chosen[(tname, cfg, pol)]
            m = rows[(pol, lab, g)]
            if meets(m):
                at.append((m["charged"], pol, m))
            else:
                cannot.append(f"`{pol}` (lost {100 * m['lost']:.2f} %, SLATAH "
                              f"{100 * m['sla']:.2f} %)")
        at.sort(key=lambda x: x[0])
        d, best, ch = target(tname, cfg)
        none = rows[("none", "-", 0)]
        head = f"- **`{tname}`, decide {cfg.split(':')[0]} / judge {cfg.split(':')[1]}.** "
        if at:
            head += ("At the level, least charged energy first: " +
                     ", ".join(f"`{p}` {c:.1f} kWh ({m['hosts']:.1f} hosts on, "
                               f"{m['mig']:.0f} migrations)" for c, p, m in at) +
                     f"; without migrations (`none`) {none['charged']:.1f} kWh. ")
        if cannot:
            head += "Not at the level on the held-out seeds: " + ", ".join(cannot) + ". "
        if at:
            head += (f"The best point is {pct(at[0][0], b['bound_kwh']):+.1f} % above the bound "
                     f"({b['bound_kwh']:.1f} kWh); the bound's co-location term "
                     + ("raised it above the capacity alone"
                        if b["bound_kwh"] > b["hosts_only_kwh"] + 0.05 else
                        "did not bind (the heavy containers fit on the GPUs the demand's "
                        "hosts hold)") + ". ")
        if best is not None and meets(d):
            head += (f"dgddep against the best CloudSim point at the level: {ch:+.1f} % "
                     f"({d['hosts']:.1f} against {best[1]['hosts']:.1f} hosts on, lost work "
                     f"{100 * d['lost']:.2f} % against {100 * best[1]['lost']:.2f} %, "
                     f"{d['mig']:.0f} against {best[1]['mig']:.0f} migrations).")
        P(head)
P("""- **What DGDDEP's re-allocation adds**: the three dual-threshold policies differ only in the
  destination rule; the lines under each table give them at dgddep's setting. Before the idle
  share (docs/policies/dgddep.md, "Re-allocation cost: the idle share", which gives the
  measurement), dgddep's least-energy rule spread containers onto emptier hosts and lost to
  plain first fit; the tables are with the idle share.
- **The bound** holds for placements within the hosts' capacity every period; the runs at the
  level violate SLATAH on at most 2 % of host-time (the table below gives each held-out run's
  energy over its seed's bound). Co-location enters it through heavy containers only: in the
  simulator's model three or more light containers whose utilisations sum to at most one share
  a GPU without slowdown, so no valid bound can charge light containers for sharing.
- **Limits**: one tuning seed per trace and configuration; {len(SET)} settings x {len(GATES)}
  gates; the gate's knob is tuned per configuration with the same rule as every other knob.
""".replace("{len(SET)}", str(len(SET))).replace("{len(GATES)}", str(len(GATES))))
P()

# ---- the bound against every held-out run -------------------------------------------------
P("## The bound against every run\n")
P("Every held-out run of the tables above (each seed, not the means) against its own seed's "
  f"bound at {100 * LOST_MAX:g} % lost work: the least ratio of the run's metered energy to the "
  "bound among the runs that meet the level (the bound holds for placements within capacity; "
  "a run above 100 % SLATAH-free capacity could in principle go below it).\n")
P("| trace | decide:judge | runs at the level | least energy / bound | its policy |")
P("|---|---|---:|---:|---|")
for tname, _ in TRACES:
    for cfg in CONFIGS:
        judge = cfg.split(":")[1]
        n, least = 0, None
        for pol, lab, g in held_sets[(tname, cfg)]:
            for s in HELD:
                m = load(rundir(tname, cfg, s, pol, lab, g))
                if not meets(m):
                    continue
                with open(os.path.join(WORK, "bound", tname, judge, str(s), "bound.json")) as f:
                    bk = json.load(f)["bound_kwh"]
                n += 1
                r = m["energy"] / bk
                if least is None or r < least[0]:
                    least = (r, f"{pol} {lab} gate {g:g} seed {s}")
        P(f"| {tname} | {cfg} | {n} | {least[0]:.3f} | {least[1]} |" if least else
          f"| {tname} | {cfg} | 0 | - | - |")
P()
with open(os.path.join(WORK, "elapsed_s")) as f:
    elapsed = float(f.read())
P(f"Runtime: the runs took {elapsed:.0f} s with {JOBS} parallel runs (`JOBS`) on the shared "
  f"2-core machine, summed over the resumes of one `WORK`; {n_tune} tuning runs, {n_held} "
  f"held-out runs and bounds; this pass ran {n_runs} of them and wrote the page in "
  f"{time.time() - START:.0f} s.")
