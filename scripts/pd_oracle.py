#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Oracle bound on node power-down for a node-activity series (time, nodes in use, nodes in all):
# what a policy that knows the future saves by powering idle nodes down (docs/results/energy.md).
"""Oracle power-down bound on a node-activity time series.

Reads CSV rows (optionally gzip) with a time column and either a count of nodes in use or of
GPUs in use (then nodes in use = ceil(gpus / gpus-per-node): perfect packing, a lower bound on
the nodes a real placement keeps on). Idle nodes are interchangeable, so the idle count i(t) is
cut into horizontal layers (layer k is idle while i(t) >= k), which gives the longest idle
intervals; each interval of length d is powered down when that saves energy:

    saving(d) = P_idle x d - (trans_w x (shutdown_s + boot_s) + off_w x (d - shutdown_s - boot_s)
                + cycle_j)                     (only when d >= shutdown_s + boot_s)

the node being shut down as it falls idle and booted boot_s before it is needed. Every
interval is taken at its best (max(0, saving)); savings are convex in d, so the layering is
the best pairing of idle starts and ends. Output: one line of key=value figures, energies in
kWh.

With --jobs the input is a simulator jobs.csv (start_s, end_s, nodes: the nodes a job ran
on, ';'-separated) instead: each node's own idle intervals between its jobs over the run's
window (first submit to last end, every node on at the start) are powered down the same way.
That is the bound on the placement the run made (jobs stay on their nodes), not on perfect
packing: the gap between the two is the energy the placement leaves on partly used nodes. Defaults: the 8-GPU V100 node of docs/models/energy.md (base 313.7 W + 8 x 23 W idle,
off 15 W, boot 300 s, shutdown 30 s, cycle 180 kJ).
"""
import argparse
import csv
import datetime
import gzip
import math
import sys


def open_text(path):
    return gzip.open(path, "rt") if path.endswith(".gz") else open(path, newline="")


def parse_time(s):
    try:
        return float(s)
    except ValueError:
        return datetime.datetime.strptime(s, "%Y-%m-%d %H:%M:%S").timestamp()


def read_series(args):
    """[(t_s, idle nodes, total nodes)] in time order; errors name file, line and column."""
    rows = []
    with open_text(args.file) as f:
        r = csv.DictReader(f)
        need = [args.time_col, args.used_col] + ([args.total_col] if args.total_col else [])
        for c in need:
            if c not in (r.fieldnames or []):
                sys.exit(f"pd_oracle: {args.file}: missing column '{c}'")
        for line, row in enumerate(r, start=2):
            try:
                t = parse_time(row[args.time_col])
                used = float(row[args.used_col])
                total = float(row[args.total_col]) if args.total_col else args.total_nodes
            except (ValueError, TypeError):
                sys.exit(f"pd_oracle: {args.file}:{line}: bad number in '{args.time_col}', "
                         f"'{args.used_col}' or '{args.total_col}'")
            if args.gpus_per_node:
                used = math.ceil(used / args.gpus_per_node - 1e-9)
                total = math.floor(total / args.gpus_per_node + 1e-9) if args.total_col else total
            rows.append((t, max(0, int(total) - int(used)), int(total)))
    rows.sort(key=lambda x: x[0])
    return rows


def read_jobs(args):
    """Per node, its busy intervals [(start, end)], and the window (first submit, last end)."""
    busy = {}
    t0, t1 = math.inf, -math.inf
    with open_text(args.file) as f:
        r = csv.DictReader(f)
        for c in ("submit_s", "start_s", "end_s", "nodes"):
            if c not in (r.fieldnames or []):
                sys.exit(f"pd_oracle: {args.file}: missing column '{c}'")
        for line, row in enumerate(r, start=2):
            try:
                sub = float(row["submit_s"])
                t0 = min(t0, sub)
                if not row["end_s"]:
                    continue  # never completed: not in the window
                a, b = float(row["start_s"]), float(row["end_s"])
                nodes = [int(x) for x in row["nodes"].split(";") if x != ""]
            except (ValueError, TypeError):
                sys.exit(f"pd_oracle: {args.file}:{line}: bad number in 'submit_s', 'start_s', "
                         f"'end_s' or 'nodes'")
            t1 = max(t1, b)
            for n in nodes:
                if n >= args.total_nodes:
                    sys.exit(f"pd_oracle: {args.file}:{line}: node {n} not below --total-nodes "
                             f"{args.total_nodes:g}")
                busy.setdefault(n, []).append((a, b))
    if t0 == math.inf or t1 == -math.inf:
        sys.exit(f"pd_oracle: {args.file}: no completed job")
    return busy, t0, t1


def oracle_jobs(busy, t0, t1, a):
    """The oracle on each node's own idle intervals; same figures as oracle()."""
    p_idle = a.base_w + a.gpus * a.gpu_idle_w
    trans = p_idle if a.trans_w < 0 else a.trans_w
    fixed = trans * (a.shutdown_s + a.boot_s) - a.off_w * (a.shutdown_s + a.boot_s) + a.cycle_j

    def mid(d):  # idle between two busy spells: shut down, boot before the next
        return max(0.0, (p_idle - a.off_w) * d - fixed) if d >= a.shutdown_s + a.boot_s else 0.0

    def tail(d):  # idle to the end of the window: no boot
        return max(0.0, (p_idle - a.off_w) * (d - a.shutdown_s) + (p_idle - trans) * a.shutdown_s
                   - a.cycle_j) if d > a.shutdown_s else 0.0

    saved = idle_j = 0.0
    cycles = 0
    for n in range(int(a.total_nodes)):
        spells = sorted(busy.get(n, []))
        gaps, t = [], t0
        for s, e in spells:
            if s > t:
                gaps.append((t, s))
            t = max(t, e)
        for s, e in gaps:
            idle_j += p_idle * (e - s)
            g = mid(e - s)
            saved += g
            cycles += g > 0
        if t1 > t:
            idle_j += p_idle * (t1 - t)
            g = tail(t1 - t)
            saved += g
            cycles += g > 0
    return saved, idle_j, cycles


def oracle(rows, a, end_pad_s):
    p_idle = a.base_w + a.gpus * a.gpu_idle_w
    trans = p_idle if a.trans_w < 0 else a.trans_w
    fixed = trans * (a.shutdown_s + a.boot_s) - a.off_w * (a.shutdown_s + a.boot_s) + a.cycle_j

    def saving(d):
        if d < a.shutdown_s + a.boot_s:
            return 0.0
        return max(0.0, (p_idle - a.off_w) * d - fixed)

    starts = []  # starts[k]: start of layer k+1's current idle run
    saved = idle_j = on_j = 0.0
    cycles = 0
    for i, (t, idle, total) in enumerate(rows):
        nxt = rows[i + 1][0] if i + 1 < len(rows) else t + end_pad_s
        dt = nxt - t
        idle_j += p_idle * idle * dt
        on_j += (p_idle * idle + a.active_w * (total - idle)) * dt
        while len(starts) > idle:
            s = saving(t - starts.pop())
            saved += s
            cycles += s > 0
        while len(starts) < idle:
            starts.append(t)
    t_end = rows[-1][0] + end_pad_s if rows else 0
    while starts:  # runs still idle at the end: off until the end, no boot needed
        d = t_end - starts.pop()
        s = max(0.0, (p_idle - a.off_w) * (d - a.shutdown_s) + (p_idle - trans) * a.shutdown_s
                - a.cycle_j) if d > a.shutdown_s else 0.0
        saved += s
        cycles += s > 0
    return saved, idle_j, on_j, cycles


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file")
    ap.add_argument("--time-col", default="time")
    ap.add_argument("--used-col", default="active", help="nodes (or with --gpus-per-node GPUs) in use")
    ap.add_argument("--total-col", default="", help="nodes (or GPUs) in all; else --total-nodes")
    ap.add_argument("--total-nodes", type=float, default=0)
    ap.add_argument("--gpus-per-node", type=float, default=0, help="the counts are GPUs: pack them")
    ap.add_argument("--step-s", type=float, default=60, help="length of the last row")
    ap.add_argument("--gpus", type=float, default=8, help="GPUs per node for its idle power")
    ap.add_argument("--base-w", type=float, default=313.7)  # DGX-1 class host, energy.md
    ap.add_argument("--gpu-idle-w", type=float, default=23)  # V100 idle, energy.md
    ap.add_argument("--active-w", type=float, default=1749.65)  # 8 V100 busy (generic) + host
    ap.add_argument("--off-w", type=float, default=15)  # BMC only, energy.md
    ap.add_argument("--trans-w", type=float, default=-1)  # -1: as an idle node
    ap.add_argument("--boot-s", type=float, default=300)
    ap.add_argument("--shutdown-s", type=float, default=30)  # Slurm SuspendTimeout
    ap.add_argument("--cycle-j", type=float, default=180e3)  # wear of a cycle, energy.md
    ap.add_argument("--jobs", action="store_true", help="FILE is a simulator jobs.csv: per-node bound")
    a = ap.parse_args()
    if not a.total_col and a.total_nodes <= 0:
        sys.exit("pd_oracle: give --total-col or --total-nodes > 0")
    kwh = 3.6e6
    if a.jobs:
        if a.total_nodes <= 0:
            sys.exit("pd_oracle: --jobs needs --total-nodes > 0")
        busy, t0, t1 = read_jobs(a)
        saved, idle_j, cycles = oracle_jobs(busy, t0, t1, a)
        print(f"saved_kwh={saved / kwh:.3f} idle_kwh={idle_j / kwh:.3f} "
              f"saved_of_idle={saved / idle_j if idle_j else 0:.4f} cycles={cycles} "
              f"span_h={(t1 - t0) / 3600:.1f}")
        return
    rows = read_series(a)
    if not rows:
        sys.exit(f"pd_oracle: {a.file}: no rows")
    saved, idle_j, on_j, cycles = oracle(rows, a, a.step_s)
    print(f"saved_kwh={saved / kwh:.3f} idle_kwh={idle_j / kwh:.3f} always_on_kwh={on_j / kwh:.3f} "
          f"saved_of_idle={saved / idle_j if idle_j else 0:.4f} "
          f"saved_of_always_on={saved / on_j if on_j else 0:.4f} cycles={cycles} "
          f"span_h={(rows[-1][0] - rows[0][0] + a.step_s) / 3600:.1f}")


if __name__ == "__main__":
    main()
