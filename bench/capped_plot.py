#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Draws bench/capped_scaling.svg from the growth table of bench/capped_section.sh (Markdown
rows "| jobs | power policy | events | user CPU s | ... | us per period | ..." on stdin): user CPU
against jobs, and the cost of one control period against the mean running jobs, one line per
capper, both axes logarithmic. Standard library only."""
import math
import sys

rows = []
for line in sys.stdin:
    f = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(f) == 8 and f[0].isdigit():
        rows.append((int(f[0]), f[1], float(f[3]), float(f[6] or "nan"), float(f[7])))
if not rows:
    sys.exit("capped_plot.py: no growth rows on stdin (bench/capped_section.sh's last table)")
pols = sorted({r[1] for r in rows}, key=[r[1] for r in rows].index)
colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
W, H, M = 420, 300, 50


def panel(x0, pts, xlab, ylab, title):
    xs = [p[0] for s in pts.values() for p in s]
    ys = [p[1] for s in pts.values() for p in s if p[1] > 0]
    lx0, lx1 = math.floor(math.log10(min(xs))), math.ceil(math.log10(max(xs)))
    ly0, ly1 = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))
    lx1, ly1 = max(lx1, lx0 + 1), max(ly1, ly0 + 1)

    def px(x):
        return x0 + M + (math.log10(x) - lx0) / (lx1 - lx0) * (W - 2 * M)

    def py(y):
        return H - M - (math.log10(y) - ly0) / (ly1 - ly0) * (H - 2 * M)

    out = [f'<text x="{x0 + W / 2}" y="20" text-anchor="middle">{title}</text>',
           f'<rect x="{x0 + M}" y="{M}" width="{W - 2 * M}" height="{H - 2 * M}" '
           'fill="none" stroke="#888"/>']
    for e in range(lx0, lx1 + 1):
        out.append(f'<text x="{px(10 ** e)}" y="{H - M + 15}" text-anchor="middle">1e{e}</text>')
    for e in range(ly0, ly1 + 1):
        out.append(f'<text x="{x0 + M - 5}" y="{py(10 ** e) + 4}" text-anchor="end">1e{e}</text>')
    out.append(f'<text x="{x0 + W / 2}" y="{H - 10}" text-anchor="middle">{xlab}</text>')
    out.append(f'<text x="{x0 + 12}" y="{H / 2}" transform="rotate(-90 {x0 + 12} {H / 2})" '
               f'text-anchor="middle">{ylab}</text>')
    for i, (pol, s) in enumerate(pts.items()):
        s = [p for p in s if p[1] > 0]
        c = colours[i % len(colours)]
        d = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in s)
        out.append(f'<polyline points="{d}" fill="none" stroke="{c}" stroke-width="2"/>')
        for x, y in s:
            out.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{c}"/>')
        out.append(f'<text x="{x0 + M + 8}" y="{M + 14 + 14 * i}" fill="{c}">{pol}</text>')
    return out


cpu = {p: [(r[0], r[2]) for r in rows if r[1] == p] for p in pols}
per = {p: [(r[4], r[3]) for r in rows if r[1] == p and not math.isnan(r[3])] for p in pols}
svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * W}" height="{H}" '
       'font-family="sans-serif" font-size="11">']
svg += panel(0, cpu, "jobs", "user CPU s", "capped run, 300 x 8 V100, every lever")
svg += panel(W, per, "mean running jobs", "us per control period", "one control period")
svg.append("</svg>")
print("\n".join(svg))
