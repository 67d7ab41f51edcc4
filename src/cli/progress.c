/* SPDX-License-Identifier: MIT */
/* The progress line of long CLI runs (sim, place pso/ilp) on stderr: redrawn in place with
 * "\r" on a terminal, a plain line now and then when forced on elsewhere, nothing otherwise. */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "util/clock.h"

/* A terminal line is redrawn at most 4 times a second: the figures stay readable and the
 * redraws cost nothing; a forced line into a file or pipe comes once a second, so that a log
 * of a 20-minute run stays about 1,200 lines. */
#define TTY_PERIOD_S 0.25
#define FILE_PERIOD_S 1.0

int eco_cli__progress_wanted(int flag)
{
    return flag >= 0 ? flag : isatty(STDERR_FILENO);
}

void eco_cli__progress_start(struct eco_cli_progress *p, int on)
{
    *p = (struct eco_cli_progress){.on = on, .tty = on && isatty(STDERR_FILENO)};
    p->t0_s = p->last_s = eco_mono_s();
}

double eco_cli__progress_elapsed(const struct eco_cli_progress *p)
{
    return eco_mono_s() - p->t0_s;
}

int eco_cli__progress_due(struct eco_cli_progress *p)
{
    if (!p->on)
        return 0;
    double now = eco_mono_s();
    if (now - p->last_s < (p->tty ? TTY_PERIOD_S : FILE_PERIOD_S))
        return 0;
    p->last_s = now;
    return 1;
}

void eco_cli__progress_show(struct eco_cli_progress *p, const char *fmt, ...)
{
    va_list ap;
    if (!p->on)
        return;
    fputs(p->tty ? "\r" : "", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    /* on a terminal: clear what a longer line before left; elsewhere one line per update */
    fputs(p->tty ? "\033[K" : "\n", stderr);
    fflush(stderr);
    p->shown = 1;
}

void eco_cli__progress_end(struct eco_cli_progress *p)
{
    if (p->on && p->tty && p->shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    p->shown = 0;
}
