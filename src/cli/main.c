/* SPDX-License-Identifier: MIT */
/* Entry point of `ecosched`: dispatches to subcommands. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"

#ifndef ECO_VERSION
#define ECO_VERSION "dev"
#endif

struct subcommand {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
};

static const struct subcommand subcommands[] = {
    {"sim", "replay a job trace on a modelled GPU cluster under a scheduling policy",
     eco_cli__cmd_sim},
    {"advise", "what power-down, a power budget or carbon shifting would save on a cluster",
     eco_cli__cmd_advise},
    {"place", "place VMs, containers or pods on nodes (ffd, bfd, fgd, pso, ilp, ...)",
     eco_cli__cmd_place},
    {"report", "write an HTML report (SVG plots) of `sim --out` directories", eco_cli__cmd_report},
    {"catalog", "list the built-in GPU types and their power figures", eco_cli__cmd_catalog},
    {"submit", "queue a command on the ecoschedd GPU server daemon", eco_cli__cmd_submit},
    {"ls", "list the daemon's jobs", eco_cli__cmd_ls},
    {"show", "show one job of the daemon", eco_cli__cmd_show},
    {"cancel", "cancel a queued or running job", eco_cli__cmd_cancel},
    {"wait", "wait for a job to end; exit with its exit status", eco_cli__cmd_wait},
    {"logs", "print a job's stdout or stderr (-f: follow it)", eco_cli__cmd_logs},
    {"gpus", "show the daemon's GPUs: utilisation, memory, power, limit, jobs", eco_cli__cmd_gpus},
    {"powerd", "cluster GPU power controller beside Slurm (budget, limits, weights)",
     eco_cli__cmd_powerd},
    {"power", "client of powerd: budget, status; Slurm suspend/resume programs",
     eco_cli__cmd_power},
};

void eco_cli__err(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("ecosched: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: ecosched COMMAND [OPTIONS]\n\n"
               "ecosched is an energy-aware scheduler for deep-learning GPU clusters.\n\n"
               "commands:\n");
    for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++)
        fprintf(f, "  %-9s %s\n", subcommands[i].name, subcommands[i].summary);
    fprintf(f, "\n'ecosched COMMAND --help' describes a command. Docs: docs/README.md\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return ECO_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("ecosched %s\n", ECO_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++)
        if (!strcmp(cmd, subcommands[i].name))
            return subcommands[i].run(argc - 1, argv + 1);
    eco_cli__err("unknown command '%s' (try 'ecosched --help')", cmd);
    return ECO_EXIT_USAGE;
}
