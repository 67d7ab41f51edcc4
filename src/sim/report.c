/* SPDX-License-Identifier: MIT */
/* The HTML report of simulator runs (docs/report.md): one file with inline CSS and SVG plots,
 * no script and no external asset, readable on a laptop screen and in print. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report_internal.h"

/* Run colours: the Okabe-Ito palette (Okabe and Ito, "Color Universal Design", 2008), told
 * apart with every common colour-vision deficiency; past seven runs the dash pattern
 * changes too. Yellow is left out: too pale on white paper. */
static const char *const run_colour[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                         "#E69F00", "#56B4E9", "#000000"};
static const char *const run_dash[] = {"", "7 3", "2 2"};
#define N_COLOURS (sizeof run_colour / sizeof run_colour[0])
/* Energy parts, in eco_report__part_key order. */
static const char *const part_colour[RPT_PARTS] = {"#0072B2", "#56B4E9", "#E69F00", "#999999",
                                                   "#D55E00"};

/* SVG geometry (user units; the SVG scales to the page width). Plots are 900 wide; a time
 * plot's data area is RPT_COLS wide, so each M4 bin is one unit. */
#define SVG_W 900.0
#define LEFT 74.0
#define CDF_W 580.0 /* the CDFs sit two abreast: narrower, so that their text stays legible */
#define CHAR_W 6.8  /* width of one 12-unit character of the UI font, for legends */

static const char CSS[] =
    ":root{--fg:#1a1a1a;--muted:#555;--grid:#e4e4e4}\n"
    "body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;"
    "color:var(--fg);background:#fff;max-width:1100px;margin:0 auto;padding:1rem 1.5rem}\n"
    "h1{font-size:1.6rem;margin:.2em 0}\n"
    "h2{font-size:1.25rem;border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}\n"
    ".meta{color:var(--muted);margin:.2em 0}\n"
    "nav a{margin-right:1em}\n"
    "figure{margin:1.2em 0}\n"
    "figcaption{color:var(--muted);font-size:.9rem;margin-top:.3em}\n"
    "svg{width:100%;height:auto;display:block}\n"
    "svg text{font-family:inherit;font-size:12px;fill:var(--fg)}\n"
    "svg .tick{fill:var(--muted)}\n"
    "svg .ttl{font-weight:600;font-size:13px}\n"
    "table{border-collapse:collapse;font-size:.88rem;min-width:50%}\n"
    "th,td{padding:.25em .6em;border-bottom:1px solid #e5e5e5;text-align:right;"
    "vertical-align:top}\n"
    "th:first-child,td:first-child{text-align:left}\n"
    "thead th{border-bottom:2px solid #999}\n"
    "td.best{font-weight:700}\n"
    "td.u{color:var(--muted);text-align:left}\n"
    "tbody th{font-weight:normal}\n"
    ".d{color:var(--muted);font-size:.9em}\n"
    ".two{display:grid;grid-template-columns:1fr 1fr;gap:1.5rem}\n"
    "@media (max-width:900px){.two{grid-template-columns:1fr}}\n"
    "@media print{body{max-width:none;font-size:10pt;padding:0}nav{display:none}"
    "figure,tr{break-inside:avoid}h2{break-after:avoid}a{color:inherit;text-decoration:none}"
    "@page{margin:1.5cm}}\n";

const char *eco_report_css(void)
{
    return CSS;
}

/* ---- small output helpers --------------------------------------------------------------- */

static void esc(FILE *o, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&':
            fputs("&amp;", o);
            break;
        case '<':
            fputs("&lt;", o);
            break;
        case '>':
            fputs("&gt;", o);
            break;
        case '"':
            fputs("&quot;", o);
            break;
        case '\'':
            fputs("&#39;", o);
            break;
        default:
            fputc(*s, o);
        }
    }
}

/* Escapes at most the last `max` characters of s, with "..." in front when it is cut (long
 * run names are directory paths: their end tells them apart). */
static void esc_tail(FILE *o, const char *s, size_t max)
{
    size_t len = strlen(s);
    if (len > max) {
        fputs("...", o);
        s += len - max;
    }
    esc(o, s);
}

static size_t tail_len(const char *s, size_t max)
{
    size_t len = strlen(s);
    return len > max ? max + 3 : len;
}

static const char *colour_of(size_t i)
{
    return run_colour[i % N_COLOURS];
}
static const char *dash_of(size_t i)
{
    return run_dash[(i / N_COLOURS) % 3];
}

static void stroke_attrs(FILE *o, size_t i)
{
    fprintf(o, " stroke=\"%s\"", colour_of(i));
    if (*dash_of(i))
        fprintf(o, " stroke-dasharray=\"%s\"", dash_of(i));
}

/* ---- axes ------------------------------------------------------------------------------- */

/* A plot's data area and ranges. */
struct frame {
    double x, y, w, h;     /* data area, SVG units */
    double x0, x1, y0, y1; /* data ranges */
    int xlog;
};

static double fx(const struct frame *f, double v)
{
    if (f->xlog)
        return f->x + f->w * (log10(v) - log10(f->x0)) / (log10(f->x1) - log10(f->x0));
    return f->x + f->w * (v - f->x0) / (f->x1 - f->x0);
}

static double fy(const struct frame *f, double v)
{
    return f->y + f->h - f->h * (v - f->y0) / (f->y1 - f->y0);
}

/* "Nice numbers" for graph labels (Heckbert, Graphics Gems, 1990): 1, 2 or 5 times a power
 * of ten, rounded to the nearest or taken as the next one up. */
static double nice(double x, int round_it)
{
    double e = floor(log10(x)), f = x / pow(10, e), nf;
    if (round_it)
        nf = f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10;
    else
        nf = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
    return nf * pow(10, e);
}

/* Tick step for about `n` ticks over [lo, hi]; lo and hi are widened to multiples of it. */
static double ticks(double *lo, double *hi, int n)
{
    if (!(*hi > *lo))
        *hi = *lo + (*lo > 0 ? *lo : 1);
    double step = nice(nice(*hi - *lo, 0) / (n - 1), 1);
    *lo = floor(*lo / step + 1e-9) * step;
    *hi = ceil(*hi / step - 1e-9) * step;
    return step;
}

/* Prints v with as many decimals as the tick step needs. */
static void tick_label(char *buf, size_t cap, double v, double step)
{
    int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    snprintf(buf, cap, "%.*f", dec, fabs(v) < step * 1e-6 ? 0.0 : v);
}

/* A unit to show values in: divide by `div`, write `name`. */
struct unit {
    double div;
    const char *name;
};

static struct unit power_unit(double max_w)
{
    return max_w >= 2e6   ? (struct unit){1e6, "MW"}
           : max_w >= 2e3 ? (struct unit){1e3, "kW"}
                          : (struct unit){1, "W"};
}

static struct unit energy_unit(double max_j)
{
    return max_j >= 3.6e12  ? (struct unit){3.6e12, "GWh"}
           : max_j >= 3.6e9 ? (struct unit){3.6e9, "MWh"}
           : max_j >= 3.6e6 ? (struct unit){3.6e6, "kWh"}
                            : (struct unit){3.6e3, "Wh"};
}

static struct unit time_unit(double span_s)
{
    return span_s >= 3 * 86400.0  ? (struct unit){86400, "days"}
           : span_s >= 3 * 3600.0 ? (struct unit){3600, "hours"}
           : span_s >= 180        ? (struct unit){60, "minutes"}
                                  : (struct unit){1, "seconds"};
}

/* Horizontal grid lines and labels of the y axis (every `step` from y0 to y1, in shown units),
 * and the axis title rotated along the left edge. */
static void axis_y(FILE *o, const struct frame *f, double step, double div, const char *label)
{
    char buf[64];
    fprintf(o, "<g class=\"yaxis\" data-div=\"%g\">", div);
    for (double v = f->y0; v <= f->y1 + step * 1e-6; v += step) {
        double y = fy(f, v);
        tick_label(buf, sizeof buf, v, step);
        fprintf(o,
                "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e4e4\" "
                "data-v=\"%s\"/>",
                f->x, f->x + f->w, y, y, buf);
        fprintf(o,
                "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" "
                "data-v=\"%s\">%s</text>",
                f->x - 6, y + 4, buf, buf);
    }
    fprintf(o,
            "<text class=\"axl\" transform=\"translate(16 %.1f) rotate(-90)\" "
            "text-anchor=\"middle\">",
            f->y + f->h / 2);
    esc(o, label);
    fputs("</text></g>\n", o);
}

/* Ticks, labels and title of a linear x axis; `label` NULL: ticks only (stacked panels). */
static void axis_x(FILE *o, const struct frame *f, double step, double div, const char *label,
                   int labels)
{
    char buf[64];
    double base = f->y + f->h;
    fprintf(o, "<g class=\"xaxis\" data-div=\"%g\">", div);
    fprintf(o, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>", f->x,
            f->x + f->w, base, base);
    for (double v = f->x0; v <= f->x1 + step * 1e-6; v += step) {
        double x = fx(f, v);
        tick_label(buf, sizeof buf, v, step);
        fprintf(o,
                "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#888\" "
                "data-v=\"%s\"/>",
                x, x, base, base + 4, buf);
        if (labels) {
            fprintf(o,
                    "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                    "data-v=\"%s\">%s</text>",
                    x, base + 17, buf, buf);
        }
    }
    if (label) {
        fprintf(o, "<text class=\"axl\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
                f->x + f->w / 2, base + 34);
        esc(o, label);
        fputs("</text>", o);
    }
    fputs("</g>\n", o);
}

/* Ticks of a logarithmic time axis in seconds, labelled in human units. */
static const struct {
    double s;
    const char *label;
} log_ticks[] = {{1, "1 s"},         {10, "10 s"},        {60, "1 min"},  {600, "10 min"},
                 {3600, "1 h"},      {36000, "10 h"},     {86400, "1 d"}, {864000, "10 d"},
                 {8640000, "100 d"}, {86400000, "1000 d"}};
#define N_LOG_TICKS (sizeof log_ticks / sizeof log_ticks[0])

static void axis_x_log(FILE *o, const struct frame *f, const char *label)
{
    double base = f->y + f->h;
    fputs("<g class=\"xaxis log\" data-div=\"1\">", o);
    fprintf(o, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>", f->x,
            f->x + f->w, base, base);
    for (size_t i = 0; i < N_LOG_TICKS; i++) {
        if (log_ticks[i].s < f->x0 * 0.999 || log_ticks[i].s > f->x1 * 1.001)
            continue;
        double x = fx(f, log_ticks[i].s);
        fprintf(o,
                "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e4e4\" "
                "data-v=\"%g\"/>",
                x, x, f->y, base + 4, log_ticks[i].s);
        fprintf(o,
                "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                "data-v=\"%g\">%s</text>",
                x, base + 17, log_ticks[i].s, log_ticks[i].label);
    }
    fprintf(o, "<text class=\"axl\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", f->x + f->w / 2,
            base + 34);
    esc(o, label);
    fputs("</text></g>\n", o);
}

/* Longest run name drawn in a plot; longer ones keep their end. */
#define LABEL_MAX 28

static double legend_width(const char *label)
{
    return 25 + CHAR_W * (double)tail_len(label, LABEL_MAX) + 16;
}

/* Rows a legend of the runs' names takes from x0 to x1 (they wrap). */
static int legend_rows(const struct eco_report_data *r, size_t n, double x0, double x1)
{
    int rows = 1;
    double x = x0;
    for (size_t i = 0; i < n; i++) {
        double w = legend_width(r[i].label);
        if (x > x0 && x + w > x1)
            rows++, x = x0;
        x += w;
    }
    return rows;
}

/* One legend entry at (*x, y): a line sample (dash may be "") or, with `box`, a filled square. */
static void legend_item(FILE *o, double *x, double y, const char *colour, const char *dash, int box,
                        const char *label)
{
    if (box)
        fprintf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>", *x,
                y - 10, colour);
    else
        fprintf(o,
                "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                "stroke-width=\"2.5\"%s%s%s/>",
                *x, *x + 20, y - 4, y - 4, colour, *dash ? " stroke-dasharray=\"" : "", dash,
                *dash ? "\"" : "");
    fprintf(o, "<text class=\"legend\" x=\"%.1f\" y=\"%.1f\">", *x + 25, y);
    esc_tail(o, label, LABEL_MAX);
    fputs("</text>", o);
    *x += legend_width(label);
}

/* ---- paths ------------------------------------------------------------------------------ */

/* Writes a polyline as path data, dropping the middle points of horizontal runs (points are
 * rounded to 0.1 unit first, so equal means drawn at the same height). */
struct pen {
    FILE *o;
    int have_a, have_p;
    long ax, ay, px, py; /* last written and pending point, in tenths */
};

static void pen_flush(struct pen *p)
{
    if (p->have_p)
        fprintf(p->o, "%s%.1f %.1f", p->have_a ? "L" : "M", p->px / 10.0, p->py / 10.0);
    p->have_a = p->have_a || p->have_p;
    p->ax = p->px, p->ay = p->py;
    p->have_p = 0;
}

static void pen_to(struct pen *p, double x, double y)
{
    long qx = lround(x * 10), qy = lround(y * 10);
    if (p->have_p && p->have_a && p->py == p->ay && qy == p->py) {
        p->px = qx; /* still horizontal: move the pending point */
        return;
    }
    pen_flush(p);
    p->px = qx, p->py = qy, p->have_p = 1;
}

static void pen_break(struct pen *p)
{
    pen_flush(p);
    p->have_a = 0;
}

/* The step series of M4 bins as a path: per bin its first value at the left edge, its
 * extremes in time order, its last value at the right edge. */
static void bins_path(FILE *o, const struct eco_report_bin *b, const struct frame *f, double div,
                      const char *attrs)
{
    struct pen p = {.o = o};
    fprintf(o, "<path fill=\"none\" stroke-width=\"1.4\" %s d=\"", attrs);
    for (int i = 0; i < RPT_COLS; i++) {
        if (!b[i].used) {
            pen_break(&p);
            continue;
        }
        double x0 = f->x + i, lo = b[i].lo / div, hi = b[i].hi / div;
        int lo_first = b[i].x_lo <= b[i].x_hi;
        pen_to(&p, x0, fy(f, b[i].first / div));
        pen_to(&p, x0 + 0.33, fy(f, lo_first ? lo : hi));
        pen_to(&p, x0 + 0.67, fy(f, lo_first ? hi : lo));
        pen_to(&p, x0 + 1, fy(f, b[i].last / div));
    }
    pen_break(&p);
    fputs("\"/>\n", o);
}

/* The empirical CDF of sorted values v as a step path, at most two points per 0.5-unit
 * column; values below the axis start are drawn at it. */
static void cdf_path(FILE *o, const double *v, size_t n, const struct frame *f, size_t run)
{
    struct pen p = {.o = o};
    double prev = 0;
    fputs("<path fill=\"none\" stroke-width=\"2\"", o);
    stroke_attrs(o, run);
    fputs(" d=\"", o);
    for (size_t i = 0; i < n; i++) {
        double x = round(fx(f, fmin(fmax(v[i], f->x0), f->x1)) * 2) / 2;
        if (i + 1 < n && round(fx(f, fmin(fmax(v[i + 1], f->x0), f->x1)) * 2) / 2 == x)
            continue; /* the same column: only its last step counts */
        double cdf = 100.0 * (double)(i + 1) / (double)n;
        pen_to(&p, x, fy(f, prev));
        pen_to(&p, x, fy(f, cdf));
        prev = cdf;
    }
    pen_break(&p);
    fputs("\"/>\n", o);
}

/* ---- figures ---------------------------------------------------------------------------- */

static void svg_open(FILE *o, const char *id, double w, double h, const char *title)
{
    fprintf(o,
            "<svg id=\"%s\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
            "xmlns=\"http://www.w3.org/2000/svg\"><title>",
            id, w, h);
    esc(o, title);
    fputs("</title>\n", o);
}

/* Time range shared by every run's timeline plots, so that they line up. */
struct span {
    double t0, t1;
    struct unit u;
};

/* The measures drawn over time: one figure each, one line per run. */
static const struct {
    const char *id, *title, *axis;
    int series;
    double h; /* data area height */
} measures[] = {
    {"power", "cluster power", "power", TS_POWER, 200},
    {"busy", "busy GPUs", "GPUs", TS_BUSY, 130},
    {"nodes", "nodes on", "nodes", TS_NODES, 130},
    {"queued", "queued jobs", "jobs", TS_QUEUED, 130},
};
#define N_MEASURES (sizeof measures / sizeof measures[0])

/* What a measure is drawn against: all GPUs or all nodes of run r, 0 for none. */
static double capacity(const struct eco_report_data *r, int series)
{
    return series == TS_BUSY ? r->gpus : series == TS_NODES ? r->nodes : 0;
}

/* Legend of a time figure: the runs, then the budget and capacity entries when drawn. With
 * o NULL only measures; returns the rows it takes from x0 to x1 (entries wrap). */
static int time_legend(FILE *o, const struct eco_report_data *r, size_t n, double y,
                       const char *budget, const char *cap, const char *cap_colour)
{
    double x = LEFT, x1 = SVG_W - 10;
    int rows = 1;
    for (size_t i = 0; i < n + 2; i++) {
        const char *label = i < n ? r[i].label : i == n ? budget : cap;
        if (!label)
            continue;
        if (x > LEFT && x + legend_width(label) > x1)
            rows++, x = LEFT;
        double yy = y + 16.0 * (rows - 1);
        if (!o)
            x += legend_width(label);
        else if (i < n)
            legend_item(o, &x, yy, colour_of(i), dash_of(i), 0, label);
        else
            legend_item(o, &x, yy, i == n ? "#555" : cap_colour, i == n ? "7 3" : "2 3", 0, label);
    }
    return rows;
}

/* One measure over time for every run on one time axis: a line per run (its colour and dash),
 * the power budget of each run that has one (dashed, thinner), the capacity (dotted: grey when
 * every run has the same, else in each run's colour). */
static void timeline_figure(FILE *o, const struct eco_report_data *r, size_t n, size_t m,
                            const struct span *sp, const double *ymax)
{
    int s = measures[m].series;
    struct unit u = s == TS_POWER ? power_unit(ymax[s]) : (struct unit){1, measures[m].axis};
    char yl[64], xl[96], id[32], title[160], cap[64];
    const char *budget = NULL, *cap_name = NULL, *cap_colour = "#777";
    int same_cap = 1;
    size_t rows_all = 0, drawn = 0;
    for (size_t i = 0; i < n; i++) {
        if (s == TS_POWER && r[i].ts_max[TS_BUDGET] > 0)
            budget = "power budget";
        if (capacity(&r[i], s) != capacity(&r[0], s))
            same_cap = 0;
        rows_all += r[i].timeline_rows;
    }
    if (capacity(&r[0], s) > 0) {
        if (same_cap)
            snprintf(cap, sizeof cap, "all %.0f %s", capacity(&r[0], s), measures[m].axis);
        else
            snprintf(cap, sizeof cap, "all %s of each run", measures[m].axis);
        cap_name = cap;
        cap_colour = same_cap ? "#777" : "#999";
    }
    int rows = time_legend(NULL, r, n, 0, budget, cap_name, cap_colour);
    double top = 24 + 16.0 * rows;
    struct frame f = {
        LEFT, top, RPT_COLS, measures[m].h, 0, (sp->t1 - sp->t0) / sp->u.div, 0, ymax[s] / u.div,
        0};
    double ystep = ticks(&f.y0, &f.y1, 4), xstep = ticks(&f.x0, &f.x1, 8);
    f.x1 = (sp->t1 - sp->t0) / sp->u.div; /* the data area spans the window exactly */
    snprintf(id, sizeof id, "timeline-%s", measures[m].id);
    snprintf(title, sizeof title, "%c%s over time, one line per run", measures[m].title[0] - 32,
             measures[m].title + 1);
    fprintf(o, "<figure class=\"timeline\" data-series=\"%s\">", measures[m].id);
    svg_open(o, id, SVG_W, top + f.h + 44, title);
    fprintf(o, "<text class=\"ttl\" x=\"%.1f\" y=\"14\">", LEFT);
    esc(o, title);
    fputs("</text>", o);
    snprintf(yl, sizeof yl, s == TS_POWER ? "%s (%s)" : "%s", measures[m].axis, u.name);
    axis_y(o, &f, ystep, u.div, yl);
    snprintf(xl, sizeof xl, "time since first submit (%s)", sp->u.name);
    axis_x(o, &f, xstep, sp->u.div, xl, 1);
    time_legend(o, r, n, 34, budget, cap_name, cap_colour);
    for (size_t i = 0; i < n && cap_name; i++) {
        int seen = 0;
        for (size_t j = 0; j < i; j++)
            seen |= capacity(&r[j], s) == capacity(&r[i], s);
        if (seen)
            continue;
        double y = fy(&f, capacity(&r[i], s) / u.div);
        fprintf(o,
                "<line class=\"cap\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                "stroke=\"%s\" stroke-dasharray=\"2 3\"/>",
                f.x, f.x + f.w, y, y, same_cap ? cap_colour : colour_of(i));
    }
    for (size_t i = 0; i < n; i++) {
        char attrs[128];
        if (r[i].timeline_rows < 2)
            continue;
        fputs("<g class=\"run\" data-run=\"", o);
        esc(o, r[i].label);
        fputs("\">", o);
        if (s == TS_POWER && r[i].ts_max[TS_BUDGET] > 0) {
            snprintf(attrs, sizeof attrs,
                     "class=\"budget\" stroke=\"%s\" "
                     "stroke-dasharray=\"7 3\" stroke-opacity=\"0.8\"",
                     colour_of(i));
            bins_path(o, r[i].ts[TS_BUDGET], &f, u.div, attrs);
        }
        const char *dash = dash_of(i);
        snprintf(attrs, sizeof attrs, "class=\"ts\" stroke-opacity=\"0.85\" stroke=\"%s\"%s%s%s",
                 colour_of(i), *dash ? " stroke-dasharray=\"" : "", dash, *dash ? "\"" : "");
        bins_path(o, r[i].ts[s], &f, u.div, attrs);
        fputs("</g>\n", o);
        drawn++;
    }
    if (!drawn)
        fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">no timeline rows</text>",
                f.x + f.w / 2, f.y + f.h / 2);
    fprintf(o,
            "</svg><figcaption>The %s of each run over time (%zu timeline rows in all), "
            "drawn exactly at this width by M4 aggregation (first, lowest, highest and last "
            "value per column).</figcaption></figure>\n",
            measures[m].title, rows_all);
}

/* CDF of JCT (which = 0) or wait (1) over every run, log time axis. */
static void cdf_figure(FILE *o, const struct eco_report_data *r, size_t n, int which)
{
    double lo = INFINITY, hi = 0;
    for (size_t i = 0; i < n; i++) {
        const double *v = which ? r[i].wait_s : r[i].jct_s;
        if (r[i].n_done) {
            lo = fmin(lo, v[0]);
            hi = fmax(hi, v[r[i].n_done - 1]);
        }
    }
    if (!(lo < INFINITY)) /* no job completed: an empty plot on a default axis */
        lo = 1, hi = 10;
    lo = fmax(lo, 1);
    hi = fmax(hi, lo);
    int rows = legend_rows(r, n, LEFT, CDF_W - 10);
    struct frame f = {LEFT, 18 + 16.0 * rows, CDF_W - LEFT - 24, 250, 1, 1, 0, 100, 1};
    for (size_t k = 0; k < N_LOG_TICKS; k++) {
        if (log_ticks[k].s <= lo)
            f.x0 = log_ticks[k].s;
        if (f.x1 <= f.x0 || f.x1 < hi)
            f.x1 = log_ticks[k].s;
    }
    if (f.x1 <= f.x0)
        f.x1 = f.x0 * 10;
    const char *what = which ? "waiting time" : "job completion time";
    char title[128], xl[160];
    snprintf(title, sizeof title, "CDF of %s", what);
    snprintf(xl, sizeof xl, "%s (log scale)%s", what,
             which ? "; waits under 1 s drawn at 1 s" : "");
    fputs("<figure>", o);
    svg_open(o, which ? "wait-cdf" : "jct-cdf", CDF_W, f.y + 250 + 44, title);
    axis_y(o, &f, 20, 1, "jobs at or below (%)");
    axis_x_log(o, &f, xl);
    double lx = LEFT, ly = 16;
    for (size_t i = 0; i < n; i++) {
        cdf_path(o, which ? r[i].wait_s : r[i].jct_s, r[i].n_done, &f, i);
        if (lx > LEFT && lx + legend_width(r[i].label) > CDF_W - 10)
            lx = LEFT, ly += 16;
        legend_item(o, &lx, ly, colour_of(i), dash_of(i), 0, r[i].label);
    }
    fputs("</svg><figcaption>Share of completed jobs whose ", o);
    fputs(which ? "total time queued" : "completion time (end minus submit)", o);
    fputs(" is at most the value on the x axis.</figcaption></figure>\n", o);
}

/* A label's box in SVG units, for placing labels that do not overlap. */
struct box {
    double x0, y0, x1, y1;
};

static int boxes_meet(const struct box *a, const struct box *b)
{
    return a->x0 < b->x1 && b->x0 < a->x1 && a->y0 < b->y1 && b->y0 < a->y1;
}

/* Where a point's label goes, and whether a leader line joins them. */
struct spot {
    struct box b;
    int leader;
};

/* Greedy label placement: the first spot around the point at (x, y), then farther right or
 * left in steps of a line (with a leader line), whose w-wide box stays inside `area` and meets
 * none of the `n` boxes already taken (points and earlier labels). With no free spot, the last
 * one tried. */
static struct spot label_spot(double x, double y, double w, const struct box *taken, size_t n,
                              const struct box *area)
{
    const double h = 14; /* a 12-unit line of text with its leading */
    /* beside, above and below the point: offsets of the box's left/top corner */
    const double near[][2] = {{9, -h / 2},      {-9 - w, -h / 2}, {9, -h - 4},      {9, 4},
                              {-9 - w, -h - 4}, {-9 - w, 4},      {-w / 2, -h - 8}, {-w / 2, 8}};
    struct spot s = {{0, 0, 0, 0}, 0};
    size_t n_near = sizeof near / sizeof near[0];
    for (size_t k = 0; k < n_near + 4 * 12; k++) {
        if (k < n_near) {
            s.b.x0 = x + near[k][0], s.b.y0 = y + near[k][1];
        } else { /* lines 1..12 below and above, on the right then on the left, with a leader */
            size_t j = k - n_near, line = j / 4 + 1;
            double dy = (j % 2 ? -1.0 : 1.0) * h * (double)line;
            s.b.x0 = j % 4 < 2 ? x + 24 : x - 24 - w, s.b.y0 = y - h / 2 + dy;
            s.leader = 1;
        }
        s.b.x1 = s.b.x0 + w, s.b.y1 = s.b.y0 + h;
        int ok =
            s.b.x0 >= area->x0 && s.b.x1 <= area->x1 && s.b.y0 >= area->y0 && s.b.y1 <= area->y1;
        for (size_t i = 0; i < n && ok; i++)
            ok = !boxes_meet(&s.b, &taken[i]);
        if (ok)
            break;
    }
    return s;
}

/* Energy versus average JCT, one point per run, with the Pareto front. */
static void scatter_figure(FILE *o, const struct eco_report_data *r, size_t n)
{
    double xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = 0;
    for (size_t i = 0; i < n; i++) {
        xmin = fmin(xmin, r[i].avg_jct_s), xmax = fmax(xmax, r[i].avg_jct_s);
        ymin = fmin(ymin, r[i].energy_j), ymax = fmax(ymax, r[i].energy_j);
    }
    struct unit tu = time_unit(xmax), eu = energy_unit(ymax);
    double px = fmax((xmax - xmin) * 0.12, xmax * 0.02),
           py = fmax((ymax - ymin) * 0.12, ymax * 0.02);
    struct frame f = {LEFT,
                      20,
                      SVG_W - LEFT - 20 - CHAR_W * (LABEL_MAX + 3),
                      300,
                      (xmin - px) / tu.div,
                      (xmax + px) / tu.div,
                      (ymin - py) / eu.div,
                      (ymax + py) / eu.div,
                      0};
    if (f.x0 < 0)
        f.x0 = 0;
    if (f.y0 < 0)
        f.y0 = 0;
    double xs = ticks(&f.x0, &f.x1, 6), ys = ticks(&f.y0, &f.y1, 5);
    char xl[64], yl[64];
    snprintf(xl, sizeof xl, "average job completion time (%s)", tu.name);
    snprintf(yl, sizeof yl, "energy (%s)", eu.name);
    fputs("<figure>", o);
    svg_open(o, "energy-jct", SVG_W, 20 + 300 + 44, "Energy versus average job completion time");
    axis_y(o, &f, ys, eu.div, yl);
    axis_x(o, &f, xs, tu.div, xl, 1);
    /* Pareto front: runs that no other run beats on both energy and average JCT */
    int front[ECO_REPORT_MAX_RUNS] = {0};
    size_t order[ECO_REPORT_MAX_RUNS], nf = 0;
    for (size_t i = 0; i < n; i++) {
        front[i] = 1;
        for (size_t j = 0; j < n; j++)
            if (j != i && r[j].avg_jct_s <= r[i].avg_jct_s && r[j].energy_j <= r[i].energy_j &&
                (r[j].avg_jct_s < r[i].avg_jct_s || r[j].energy_j < r[i].energy_j))
                front[i] = 0;
        if (front[i])
            order[nf++] = i;
    }
    for (size_t a = 1; a < nf; a++) /* by JCT; few runs: insertion sort */
        for (size_t b = a; b > 0 && r[order[b]].avg_jct_s < r[order[b - 1]].avg_jct_s; b--) {
            size_t t = order[b];
            order[b] = order[b - 1], order[b - 1] = t;
        }
    if (nf > 1) {
        fputs("<polyline class=\"pareto\" fill=\"none\" stroke=\"#999\" "
              "stroke-dasharray=\"4 3\" points=\"",
              o);
        for (size_t k = 0; k < nf; k++)
            fprintf(o, "%s%.1f,%.1f", k ? " " : "", fx(&f, r[order[k]].avg_jct_s / tu.div),
                    fy(&f, r[order[k]].energy_j / eu.div));
        fputs("\"/>\n", o);
    }
    struct box placed[2 * ECO_REPORT_MAX_RUNS];
    size_t np = 0;
    for (size_t i = 0; i < n; i++) { /* every point is an obstacle for every label */
        double x = fx(&f, r[i].avg_jct_s / tu.div), y = fy(&f, r[i].energy_j / eu.div);
        placed[np++] = (struct box){x - 7, y - 7, x + 7, y + 7};
    }
    struct box area = {f.x, 2, SVG_W - 4, f.y + f.h - 2};
    for (size_t i = 0; i < n; i++) {
        double x = fx(&f, r[i].avg_jct_s / tu.div), y = fy(&f, r[i].energy_j / eu.div);
        struct spot sp =
            label_spot(x, y, CHAR_W * (double)tail_len(r[i].label, LABEL_MAX), placed, np, &area);
        placed[np++] = sp.b;
        fprintf(o, "<g class=\"point\" data-run=\"");
        esc(o, r[i].label);
        fprintf(o,
                "\" data-jct-s=\"%.15g\" data-energy-j=\"%.15g\"><circle cx=\"%.1f\" "
                "cy=\"%.1f\" r=\"6\" fill=\"%s\"%s/>",
                r[i].avg_jct_s, r[i].energy_j, x, y, colour_of(i),
                front[i] ? " stroke=\"#000\"" : "");
        if (sp.leader)
            fprintf(o,
                    "<line class=\"leader\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                    "y2=\"%.1f\" stroke=\"#888\" stroke-width=\"0.8\"/>",
                    x, y, sp.b.x0 < x ? sp.b.x1 : sp.b.x0, (sp.b.y0 + sp.b.y1) / 2);
        fprintf(o, "<text class=\"plabel\" x=\"%.1f\" y=\"%.1f\">", sp.b.x0, sp.b.y1 - 3);
        esc_tail(o, r[i].label, LABEL_MAX);
        fputs("</text></g>\n", o);
    }
    fputs("</svg><figcaption>One point per run; lower left is better. Outlined points are on "
          "the Pareto front (dashed): no other run has both lower energy and lower average "
          "completion time.</figcaption></figure>\n",
          o);
}

/* Stacked horizontal bars of each run's energy by part. */
static void energy_figure(FILE *o, const struct eco_report_data *r, size_t n)
{
    double max = 0;
    size_t lw = 4;
    for (size_t i = 0; i < n; i++) {
        max = fmax(max, r[i].energy_j);
        lw = tail_len(r[i].label, LABEL_MAX) > lw ? tail_len(r[i].label, LABEL_MAX) : lw;
    }
    struct unit eu = energy_unit(max);
    double left = 20 + CHAR_W * (double)lw, row = 30;
    struct frame f = {left, 40, SVG_W - left - 110, row * (double)n, 0, max / eu.div, 0, 1, 0};
    double step = ticks(&f.x0, &f.x1, 6);
    char xl[64], buf[64];
    snprintf(xl, sizeof xl, "energy (%s) over the run's window", eu.name);
    fputs("<figure>", o);
    svg_open(o, "energy-split", SVG_W, 40 + f.h + 44, "Energy by part");
    for (double v = f.x0; v <= f.x1 + step * 1e-6; v += step)
        fprintf(o, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>",
                fx(&f, v), fx(&f, v), f.y, f.y + f.h);
    axis_x(o, &f, step, eu.div, xl, 1);
    double lx = left;
    for (int p = 0; p < RPT_PARTS; p++)
        legend_item(o, &lx, 18, part_colour[p], "", 1, eco_report__part_label[p]);
    for (size_t i = 0; i < n; i++) {
        double y = f.y + row * (double)i + 5, x = f.x;
        fprintf(o, "<g class=\"bar\" data-run=\"");
        esc(o, r[i].label);
        fprintf(o, "\"><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", left - 8, y + 14);
        esc_tail(o, r[i].label, LABEL_MAX);
        fputs("</text>", o);
        for (int p = 0; p < RPT_PARTS; p++) {
            double w = f.w * (r[i].part_j[p] / eu.div) / (f.x1 - f.x0);
            if (w <= 0)
                continue;
            fprintf(o,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"20\" fill=\"%s\" "
                    "data-part=\"%s\"><title>%s: %.4g %s</title></rect>",
                    x, y, w, part_colour[p], eco_report__part_key[p], eco_report__part_label[p],
                    r[i].part_j[p] / eu.div, eu.name);
            x += w;
        }
        snprintf(buf, sizeof buf, "%.4g %s", r[i].energy_j / eu.div, eu.name);
        fprintf(o, "<text x=\"%.1f\" y=\"%.1f\">%s</text></g>\n", x + 6, y + 14, buf);
    }
    fputs("</svg><figcaption>Energy over each run's window (first submit to last completion): "
          "GPUs running jobs, idle GPUs of powered nodes, the rest of powered nodes (hosts), "
          "nodes switched off, and boots and shutdowns (docs/models/energy.md).</figcaption>"
          "</figure>\n",
          o);
}

/* ---- the table of every summary figure -------------------------------------------------- */

#define MAX_KEYS 256
#define KEY_LEN 96

/* Collects the scalar keys of every run's summary, nested ones as "parent.child", in order of
 * first appearance. */
static size_t collect_keys(const struct eco_report_data *r, size_t n, char (*keys)[KEY_LEN])
{
    size_t nk = 0;
    for (size_t i = 0; i < n; i++) {
        const char *k, *k2;
        json_t *v, *v2;
        json_object_foreach(r[i].summary, k, v)
        {
            char name[KEY_LEN];
            json_t *inner = json_is_object(v) ? v : NULL;
            void *it = inner ? json_object_iter(inner) : NULL;
            do {
                if (inner && !it)
                    break;
                k2 = it ? json_object_iter_key(it) : NULL;
                v2 = it ? json_object_iter_value(it) : v;
                if (k2)
                    snprintf(name, sizeof name, "%s.%s", k, k2);
                else
                    snprintf(name, sizeof name, "%s", k);
                size_t j = 0;
                while (j < nk && strcmp(keys[j], name))
                    j++;
                if (j == nk && nk < MAX_KEYS && !json_is_object(v2) && !json_is_array(v2))
                    snprintf(keys[nk++], KEY_LEN, "%s", name);
                it = it ? json_object_iter_next(inner, it) : NULL;
            } while (it);
        }
    }
    return nk;
}

static const json_t *lookup(const json_t *o, const char *key)
{
    const char *dot = strchr(key, '.');
    if (!dot)
        return json_object_get(o, key);
    char head[KEY_LEN];
    snprintf(head, sizeof head, "%.*s", (int)(dot - key), key);
    return json_object_get(json_object_get(o, head), dot + 1);
}

static int ends(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

/* How the values of one summary figure are shown: divided by `div`, with `dec` decimals
 * (-1: %.15g, exact), in `unit` ("" for counts and names). One per figure, chosen from its
 * largest value, so that the runs' values of a figure read in the same unit; the decimals give
 * the largest about four significant digits and the smallest non-zero one two (at most 3). */
struct shown {
    double div;
    const char *unit;
    int dec;
};

/* Decimals for about four significant digits of the largest shown value m, and at least two
 * of the smallest non-zero one lo (0: none), at most 3. */
static int decimals(double m, double lo)
{
    int d = m >= 1000 ? 0 : m >= 100 ? 1 : m >= 1 ? 2 : 3;
    while (lo > 0 && d < 3 && lo * pow(10, d) < 10)
        d++;
    return d;
}

/* max: the largest magnitude of the figure over the runs, lo: the smallest non-zero one. */
static struct shown shown_for(const char *key, double max, double lo)
{
    struct shown sh = {1, "", -1};
    if (!strncmp(key, "energy_j", 8) || ends(key, "_j")) {
        struct unit u = energy_unit(max);
        sh = (struct shown){u.div, u.name, 0};
    } else if (ends(key, "_gpu_s")) {
        sh = (struct shown){3600, "GPU-h", 0};
    } else if (!strcmp(key, "window_start_s") || !strcmp(key, "window_end_s") ||
               ends(key, "_t_s")) {
        sh = (struct shown){1, "s", -1}; /* instants of the trace's clock: exact */
    } else if (ends(key, "_s")) {
        sh = max >= 2 * 86400 ? (struct shown){86400, "d", 0}
             : max >= 7200    ? (struct shown){3600, "h", 0}
             : max >= 120     ? (struct shown){60, "min", 0}
                              : (struct shown){1, "s", 0};
    } else if (ends(key, "_w")) {
        struct unit u = power_unit(max);
        sh = (struct shown){u.div, u.name, 0};
    } else if (ends(key, "_kwh")) {
        sh = (struct shown){1, "kWh", 0};
    } else if (!strcmp(key, "carbon_kg")) {
        sh = max >= 10000 ? (struct shown){1000, "t CO2e", 0} : (struct shown){1, "kg CO2e", 0};
    } else if (ends(key, "_pct")) {
        sh = (struct shown){1, "%", 0};
    } else if (!strcmp(key, "gpu_util") || ends(key, "_ratio")) {
        sh = (struct shown){0.01, "%", 0};
    }
    if (sh.dec == 0)
        sh.dec = decimals(max / sh.div, lo / sh.div);
    return sh;
}

/* Writes value v of figure `key` shown as sh into buf (integers without a unit as they are). */
static void shown_value(char *buf, size_t cap, const json_t *v, struct shown sh)
{
    if (json_is_integer(v) && !*sh.unit)
        snprintf(buf, cap, "%lld", (long long)json_integer_value(v));
    else if (sh.dec < 0)
        snprintf(buf, cap, "%.15g", json_number_value(v) / sh.div);
    else
        snprintf(buf, cap, "%.*f", sh.dec, json_number_value(v) / sh.div);
}

/* Short meanings of the summary keys (docs/simulator.md has the full definitions). */
static const struct {
    const char *key, *text;
} meaning[] = {
    {"policy", "queue policy"},
    {"placement", "GPU placement"},
    {"power_down", "node power-down policy"},
    {"cluster_gpus", "GPUs of the cluster"},
    {"jobs", "jobs in the trace"},
    {"completed", "jobs that finished"},
    {"rejected", "jobs too large for the cluster"},
    {"avg_jct_s", "mean job completion time"},
    {"p50_jct_s", "median job completion time"},
    {"p95_jct_s", "95th percentile of completion time"},
    {"p99_jct_s", "99th percentile of completion time"},
    {"avg_wait_s", "mean time queued"},
    {"p95_wait_s", "95th percentile of time queued"},
    {"makespan_s", "last completion minus first submit"},
    {"gpu_util", "busy GPU time over GPUs x makespan"},
    {"energy_j.total", "cluster energy over the window"},
    {"energy_j.gpu_busy", "GPUs running jobs"},
    {"energy_j.gpu_idle", "idle GPUs of powered nodes"},
    {"energy_j.node_base", "hosts of powered nodes"},
    {"energy_j.off", "nodes switched off"},
    {"energy_j.transitions", "boots and shutdowns"},
    {"avg_power_w", "mean cluster power"},
    {"peak_power_w", "highest cluster power"},
    {"node_boots", "node boots"},
    {"node_shutdowns", "node shutdowns"},
    {"boot_delayed_starts", "starts that waited for a node to boot"},
    {"power_cycles", "power cycles (a shutdown starts one)"},
    {"cycle_cost_kwh", "wear of the power cycles as energy (cycle_j each), not in energy"},
    {"deadline_miss_ratio", "jobs ending after their deadline"},
    {"power_cap_mae_pct", "mean error of power against the budget, periods where it binds"},
    {"power_cap_mae_all_pct", "mean error of power against the budget, every period"},
    {"power_cap_max_overshoot_pct", "largest excess over the budget after settling"},
    {"power_cap_raw_overshoot_pct", "largest excess over the budget, settling included"},
    {"power_cap_over_s", "time of the control periods above the budget"},
    {"power_cap_over_kwh", "energy above the budget"},
    {"power_cap_over_share", "share of control periods above the budget"},
    {"trace_start", "calendar time of the trace's time 0 (UTC)"},
    {"carbon_kg", "carbon of the cluster's energy under the grid signal"},
    {"cost", "electricity cost of the cluster's energy"},
    {"cost_currency", "currency of the cost"},
    {"events", "events the engine processed"},
};

/* Lower is better (+1), higher is better (-1), neither (0): for the best value's bold face. */
static int better(const char *key)
{
    static const char *const lower[] = {"avg_jct_s",
                                        "p50_jct_s",
                                        "p95_jct_s",
                                        "p99_jct_s",
                                        "avg_wait_s",
                                        "p95_wait_s",
                                        "makespan_s",
                                        "energy_j.total",
                                        "energy_kwh",
                                        "deadline_miss_ratio",
                                        "power_cap_mae_pct",
                                        "power_cap_max_overshoot_pct",
                                        "overshoot_s",
                                        "unfinished",
                                        "power_cap_mae_all_pct",
                                        "power_cap_raw_overshoot_pct",
                                        "power_cap_over_s",
                                        "power_cap_over_kwh",
                                        "power_cap_over_share",
                                        "carbon_kg",
                                        "cost",
                                        "power_cycles",
                                        "cycle_cost_kwh"};
    for (size_t i = 0; i < sizeof lower / sizeof lower[0]; i++)
        if (!strcmp(key, lower[i]))
            return 1;
    return !strcmp(key, "gpu_util") ? -1 : 0;
}

/* The figures a reader looks at first, in this order: the columns of the headline table and
 * the first rows of the table of every figure. */
static const struct {
    const char *key, *name;
} headline[] = {
    {"avg_jct_s", "mean JCT"},     {"p95_jct_s", "p95 JCT"},
    {"avg_wait_s", "mean wait"},   {"p95_wait_s", "p95 wait"},
    {"energy_j.total", "energy"},  {"gpu_util", "GPU utilisation"},
    {"avg_power_w", "mean power"}, {"peak_power_w", "peak power"},
    {"makespan_s", "makespan"},    {"deadline_miss_ratio", "deadline misses"},
    {"carbon_kg", "carbon"},       {"cost", "cost"},
};
#define N_HEADLINE (sizeof headline / sizeof headline[0])

/* The largest magnitude of figure `key` over the runs (0 when none is a number); *lo the
 * smallest non-zero one (0 when none). */
static double key_max(const struct eco_report_data *r, size_t n, const char *key, double *lo)
{
    double m = 0, l = INFINITY;
    for (size_t i = 0; i < n; i++) {
        const json_t *v = lookup(r[i].summary, key);
        double a = json_is_number(v) ? fabs(json_number_value(v)) : 0;
        m = fmax(m, a);
        if (a > 0)
            l = fmin(l, a);
    }
    if (lo)
        *lo = l < INFINITY ? l : 0;
    return m;
}

static struct shown shown_of(const struct eco_report_data *r, size_t n, const char *key)
{
    double lo, max = key_max(r, n, key, &lo);
    return shown_for(key, max, lo);
}

/* The best value of figure `key` over the runs, and whether they differ (for the bold face). */
static int best_of(const struct eco_report_data *r, size_t n, const char *key, double *best)
{
    int dir = n > 1 ? better(key) : 0, varied = 0;
    *best = NAN;
    for (size_t i = 0; i < n && dir; i++) {
        const json_t *v = lookup(r[i].summary, key);
        double d = json_is_number(v) ? json_number_value(v) : NAN;
        if (i && d != *best)
            varied = 1;
        if (!i || d * dir < *best * dir)
            *best = d;
    }
    return varied;
}

/* One number cell: the shown value, the exact one in data-v and the tooltip. */
static void number_cell(FILE *o, const json_t *v, struct shown sh, int bold)
{
    char buf[128];
    double d = json_number_value(v);
    shown_value(buf, sizeof buf, v, sh);
    fprintf(o, "<td data-v=\"%.15g\" title=\"%.15g\"%s>%s</td>", d, d,
            bold ? " class=\"best\"" : "", buf);
}

/* The headline figures: one row per run (in the order given), one column per figure, one unit
 * per column (in its header). */
static void headline_table(FILE *o, const struct eco_report_data *r, size_t n)
{
    int show[N_HEADLINE] = {0};
    struct shown sh[N_HEADLINE];
    double best[N_HEADLINE];
    int varied[N_HEADLINE];
    double deadline_jobs = key_max(r, n, "deadline_jobs", NULL);
    fputs("<table id=\"headline-table\"><thead><tr><th>run</th>", o);
    for (size_t k = 0; k < N_HEADLINE; k++) {
        for (size_t i = 0; i < n; i++)
            show[k] |= json_is_number(lookup(r[i].summary, headline[k].key));
        if (!strcmp(headline[k].key, "deadline_miss_ratio") && !(deadline_jobs > 0))
            show[k] = 0; /* no job had a deadline */
        if (!show[k])
            continue;
        sh[k] = shown_of(r, n, headline[k].key);
        varied[k] = best_of(r, n, headline[k].key, &best[k]);
        fprintf(o, "<th scope=\"col\" data-key=\"%s\">%s", headline[k].key, headline[k].name);
        if (*sh[k].unit)
            fprintf(o, " <span class=\"d\">(%s)</span>", sh[k].unit);
        fputs("</th>", o);
    }
    fputs("</tr></thead><tbody>\n", o);
    for (size_t i = 0; i < n; i++) {
        fputs("<tr data-run=\"", o);
        esc(o, r[i].label);
        fputs("\"><th scope=\"row\">", o);
        esc(o, r[i].label);
        fputs("</th>", o);
        for (size_t k = 0; k < N_HEADLINE; k++) {
            const json_t *v = lookup(r[i].summary, headline[k].key);
            if (!show[k])
                continue;
            if (json_is_number(v))
                number_cell(o, v, sh[k], varied[k] && json_number_value(v) == best[k]);
            else
                fputs("<td></td>", o);
        }
        fputs("</tr>\n", o);
    }
    fputs("</tbody></table>\n", o);
}

/* The headline figures first, in headline order, then the others in their order. */
static void headline_first(char (*keys)[KEY_LEN], size_t nk)
{
    size_t at = 0;
    for (size_t h = 0; h < N_HEADLINE; h++)
        for (size_t k = at; k < nk; k++)
            if (!strcmp(keys[k], headline[h].key)) {
                char tmp[KEY_LEN];
                memcpy(tmp, keys[k], KEY_LEN);
                memmove(keys[at + 1], keys[at], (k - at) * KEY_LEN);
                memcpy(keys[at++], tmp, KEY_LEN);
                break;
            }
}

/* keys: MAX_KEYS slots of scratch space. */
static void summary_table(FILE *o, const struct eco_report_data *r, size_t n, char (*keys)[KEY_LEN])
{
    size_t nk = collect_keys(r, n, keys);
    headline_first(keys, nk);
    fputs("<table id=\"summary-table\"><thead><tr><th>figure</th><th>unit</th>", o);
    for (size_t i = 0; i < n; i++) {
        fputs("<th scope=\"col\">", o);
        esc(o, r[i].label);
        fputs("</th>", o);
    }
    fputs("</tr></thead><tbody>\n", o);
    for (size_t k = 0; k < nk; k++) {
        double best;
        int varied = best_of(r, n, keys[k], &best);
        struct shown sh = shown_of(r, n, keys[k]);
        fputs("<tr data-key=\"", o);
        esc(o, keys[k]);
        fputs("\"><th scope=\"row\"><code>", o);
        esc(o, keys[k]);
        fputs("</code>", o);
        for (size_t m = 0; m < sizeof meaning / sizeof meaning[0]; m++)
            if (!strcmp(meaning[m].key, keys[k]))
                fprintf(o, " <span class=\"d\">%s</span>", meaning[m].text);
        fprintf(o, "</th><td class=\"u\">%s</td>", sh.unit);
        for (size_t i = 0; i < n; i++) {
            const json_t *v = lookup(r[i].summary, keys[k]);
            if (json_is_number(v)) {
                number_cell(o, v, sh, varied && json_number_value(v) == best);
                continue;
            }
            fputs("<td>", o);
            if (json_is_string(v))
                esc(o, json_string_value(v));
            else
                fputs(json_is_true(v) ? "true" : json_is_false(v) ? "false" : "", o);
            fputs("</td>", o);
        }
        fputs("</tr>\n", o);
    }
    fputs("</tbody></table>\n", o);
}

/* ---- the page --------------------------------------------------------------------------- */

/* "placement pack" when every run has the same value of `key`, else "". */
static void common_value(FILE *o, const struct eco_report_data *r, size_t n, const char *key,
                         const char *name)
{
    const json_t *v0 = json_object_get(r[0].summary, key);
    for (size_t i = 1; i < n; i++)
        if (!json_equal((json_t *)v0, json_object_get(r[i].summary, key)))
            return;
    if (json_is_string(v0)) {
        fprintf(o, " &middot; %s ", name);
        esc(o, json_string_value(v0));
    } else if (json_is_integer(v0)) {
        fprintf(o, !strcmp(key, "seed") ? " &middot; %2$s %1$lld" : " &middot; %lld %s",
                (long long)json_integer_value(v0), name);
    }
}

static void header(FILE *o, const struct eco_report_data *r, size_t n,
                   const struct eco_report_opts *op)
{
    const char *title = op && op->title ? op->title : "ecosched simulation report";
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
          o);
    if (op && op->generator) {
        fputs("<meta name=\"generator\" content=\"", o);
        esc(o, op->generator);
        fputs("\">\n", o);
    }
    fputs("<title>", o);
    esc(o, title);
    fprintf(o, "</title>\n<style>\n%s</style></head>\n<body>\n<header><h1>", CSS);
    esc(o, title);
    fprintf(o, "</h1>\n<p class=\"meta\">%zu run%s: ", n, n == 1 ? "" : "s");
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ", " : "", o);
        esc(o, r[i].label);
    }
    if (n > 1)
        common_value(o, r, n, "policy", "policy");
    common_value(o, r, n, "placement", "placement");
    common_value(o, r, n, "power_down", "power-down");
    common_value(o, r, n, "power_policy", "power capping");
    common_value(o, r, n, "cluster_nodes", "nodes");
    common_value(o, r, n, "cluster_gpus", "GPUs");
    common_value(o, r, n, "jobs", "jobs");
    common_value(o, r, n, "seed", "seed");
    fputs("</p>\n<nav><a href=\"#headline\">Headline figures</a><a href=\"#energy\">Energy</a>"
          "<a href=\"#times\">Completion and waiting "
          "times</a><a href=\"#timelines\">Over time</a><a href=\"#summary\">Every figure</a>"
          "</nav></header>\n",
          o);
}

static void body(FILE *o, const struct eco_report_data *r, size_t n, const struct span *sp,
                 const double *ymax, char (*keys)[KEY_LEN])
{
    fputs("<section id=\"headline\"><h2>Headline figures</h2>\n", o);
    headline_table(o, r, n);
    fputs("</section>\n<section id=\"energy\"><h2>Energy</h2>\n", o);
    if (n > 1)
        scatter_figure(o, r, n);
    energy_figure(o, r, n);
    fputs("</section>\n<section id=\"times\"><h2>Completion and waiting times</h2>\n"
          "<div class=\"two\">",
          o);
    cdf_figure(o, r, n, 0);
    cdf_figure(o, r, n, 1);
    fputs("</div></section>\n<section id=\"timelines\"><h2>Over time</h2>\n", o);
    for (size_t m = 0; m < N_MEASURES; m++)
        timeline_figure(o, r, n, m, sp, ymax);
    fputs("</section>\n<section id=\"summary\"><h2>Every summary figure</h2>\n"
          "<p class=\"meta\">From each run's summary.json (definitions: docs/simulator.md); each "
          "figure is shown in one unit for every run, the one its largest value reads best in; "
          "the exact value is in each cell's tooltip."
          "</p>\n",
          o);
    summary_table(o, r, n, keys);
    fputs("</section>\n", o);
}

int eco_report_write(FILE *out, const struct eco_report_run *runs, size_t n,
                     const struct eco_report_opts *opts, struct eco_error *err)
{
    struct eco_report_data *r = NULL;
    char(*keys)[KEY_LEN] = NULL;
    int rc = 0;
    if (n == 0 || n > ECO_REPORT_MAX_RUNS)
        return eco_errorf(err, -EINVAL, "a report holds 1 to %d runs (got %zu)",
                          ECO_REPORT_MAX_RUNS, n);
    if (!(r = calloc(n, sizeof *r)) || !(keys = calloc(MAX_KEYS, KEY_LEN))) {
        free(r);
        return -ENOMEM;
    }
    struct span sp = {INFINITY, -INFINITY, {1, ""}};
    for (size_t i = 0; i < n && !rc; i++)
        if (!(rc = eco_report__load(&r[i], &runs[i], err))) {
            sp.t0 = fmin(sp.t0, r[i].win0_s);
            sp.t1 = fmax(sp.t1, r[i].win1_s);
        }
    if (!rc && !(sp.t1 > sp.t0))
        sp.t1 = sp.t0 + 1;
    sp.u = time_unit(sp.t1 - sp.t0);
    double ymax[TS_N] = {0};
    for (size_t i = 0; i < n && !rc; i++) {
        rc = eco_report__load_timeline(&r[i], runs[i].dir, sp.t0, sp.t1, err);
        for (int s = 0; s < TS_N; s++)
            ymax[s] = fmax(ymax[s], r[i].ts_max[s]);
        ymax[TS_POWER] = fmax(ymax[TS_POWER], r[i].ts_max[TS_BUDGET]);
        ymax[TS_BUSY] = fmax(ymax[TS_BUSY], r[i].gpus);
        ymax[TS_NODES] = fmax(ymax[TS_NODES], r[i].nodes);
    }
    if (rc)
        goto out;
    for (int s = 0; s < TS_N; s++)
        if (!(ymax[s] > 0))
            ymax[s] = 1;
    header(out, r, n, opts);
    body(out, r, n, &sp, ymax, keys);
    fputs("<footer><p class=\"meta\">", out);
    if (opts && opts->generator) {
        fputs("Written by ", out);
        esc(out, opts->generator);
        fputs(" from ", out);
    } else {
        fputs("From ", out);
    }
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ", " : "", out);
        esc(out, runs[i].dir);
    }
    fputs(".</p></footer>\n</body></html>\n", out);
    if (ferror(out))
        rc = -EIO;
out:
    for (size_t i = 0; i < n; i++)
        eco_report__fini(&r[i]);
    free(r);
    free(keys);
    return rc;
}
