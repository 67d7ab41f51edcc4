/* SPDX-License-Identifier: MIT */
/* `ecosched report`: one self-contained HTML file of the runs in `ecosched sim --out`
 * directories (docs/report.md). */
#include <errno.h>
#include <stddef.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "opts.h"
#include "report_acct.h"
#include "sim/report.h"

#ifndef ECO_VERSION
#define ECO_VERSION "dev"
#endif

struct report_args {
    const char *output, *title, *accounting;
};

static void report_usage(FILE *f);

/* `report`'s options, in --help order. */
static const struct eco_opt report_opts[] = {
    {.name = "output",
     .short_name = 'o',
     .kind = ECO_OPT_STR,
     .offset = offsetof(struct report_args, output),
     .arg = "FILE",
     .help = "the HTML file (default DIR/report.html with one DIR)"},
    {.name = "title",
     .kind = ECO_OPT_STR,
     .offset = offsetof(struct report_args, title),
     .arg = "TEXT",
     .help = "page title (default 'ecosched simulation report')"},
    {.name = "accounting",
     .kind = ECO_OPT_STR,
     .offset = offsetof(struct report_args, accounting),
     .arg = "FILE",
     .help = "instead of DIRs: GPU energy, carbon and GPU hours per user and per account from "
             "`sacct --json` output (FILE, or - for stdin); a table, or HTML with -o"},
    {.name = "help", .short_name = 'h', .kind = ECO_OPT_HELP, .help = "this help"},
    {0},
};

static const struct eco_opt_cmd report_cmd = {
    .prefix = "report",
    .opts = report_opts,
    .needs_value = "report: option '%s' needs a value (try 'ecosched report --help')",
    .unknown = "report: unknown option '%s' (try 'ecosched report --help')",
    .usage = report_usage,
};

static void report_usage(FILE *f)
{
    fprintf(f, "usage: ecosched report [-o FILE.html] [--title TEXT] DIR...\n"
               "       ecosched report --accounting FILE|-|daemon:[SOCKET|URL] [-o FILE.html] "
               "[--title TEXT]\n"
               "\n"
               "Writes one self-contained HTML file (no script, no network needed to view it) "
               "with\n"
               "SVG plots of simulator runs: energy versus average JCT per run, energy by part,\n"
               "JCT and waiting-time CDFs, cluster power with the budget, busy GPUs, nodes on "
               "and\n"
               "queued jobs over time, and a table of every summary figure.\n"
               "\n"
               "Each DIR is an output directory of `ecosched sim --out DIR`: one run (it holds\n"
               "summary.json, timeline.csv and jobs.csv) or a --compare run (one subdirectory "
               "per\n"
               "policy). Several DIRs go side by side, e.g. one per power-down policy.\n"
               "\n"
               "With --accounting, an operator's report of Slurm jobs instead: `sacct --json`\n"
               "output (e.g. `sacct --json -a -S 2026-11-01 | ecosched report --accounting -`)\n"
               "summed per user and per account, the GPU energy and carbon read from the jobs'\n"
               "AdminComment (the SPANK plugin's accounting=admincomment), printed as a table\n"
               "or, with -o, written as an HTML page. With daemon:[SOCKET|URL] (default\n"
               "$ECOSCHED_SOCKET or the daemon's socket) the jobs of a running ecoschedd\n"
               "instead (GET /v1/jobs, every page), per user.\n"
               "\n");
    eco_cli__opt_help(f, &report_cmd);
    fprintf(f, "\n"
               "Prints the path written. Exit status: 0 on success, 2 on bad options or bad "
               "input\n"
               "(the message names the file, line and field), 1 on other failures.\n");
}

/* Drops the directories every label starts with ("out/a/x", "out/b" -> "a/x", "b"). */
static void strip_common_prefix(struct eco_report_run *runs, size_t n)
{
    size_t cut = 0;
    for (size_t k = 0; runs[0].label[k]; k++) {
        size_t i = 1;
        while (i < n && runs[i].label[k] == runs[0].label[k])
            i++;
        if (i < n)
            break;
        if (runs[0].label[k] == '/')
            cut = k + 1;
    }
    for (size_t i = 0; cut && i < n; i++)
        if (!runs[i].label[cut]) /* a label would become empty: keep them all */
            return;
    for (size_t i = 0; cut && i < n; i++)
        memmove((char *)runs[i].label, runs[i].label + cut, strlen(runs[i].label + cut) + 1);
}

/* Runs of every DIR: a one-run DIR named by its policy (or by DIR when several DIRs are
 * given), a compare DIR's runs by subdirectory (prefixed with DIR when several); with several
 * DIRs the directories all names start with are dropped. */
static int gather(char **dirs, int ndirs, struct eco_report_run **all, size_t *n)
{
    struct eco_report_run *out = calloc(ECO_REPORT_MAX_RUNS, sizeof *out);
    int status = 0;
    *n = 0;
    if (!out)
        return ECO_EXIT_FAIL;
    for (int d = 0; d < ndirs && !status; d++) {
        struct eco_report_run *runs = NULL;
        struct eco_error err = {{0}};
        size_t k = 0;
        int rc = eco_report_find_runs(dirs[d], &runs, &k, &err);
        if (rc) {
            eco_cli__err("report: %s", rc == -ENOMEM ? strerror(ENOMEM) : err.msg);
            status = rc == -ENOMEM ? ECO_EXIT_FAIL : ECO_EXIT_USAGE;
            break;
        }
        for (size_t i = 0; i < k && !status; i++) {
            if (*n == ECO_REPORT_MAX_RUNS) {
                eco_cli__err("report: more than %d runs in all", ECO_REPORT_MAX_RUNS);
                status = ECO_EXIT_USAGE;
                break;
            }
            char *label = NULL;
            if (ndirs > 1) {
                size_t len = strlen(dirs[d]) + (runs[i].label ? strlen(runs[i].label) : 0) + 2;
                if ((label = malloc(len)))
                    snprintf(label, len, "%s%s%s", dirs[d], runs[i].label ? "/" : "",
                             runs[i].label ? runs[i].label : "");
            } else if (runs[i].label) {
                label = strdup(runs[i].label);
            }
            out[*n].dir = strdup(runs[i].dir);
            out[*n].label = label;
            if (!out[*n].dir || (!label && (ndirs > 1 || runs[i].label)))
                status = ECO_EXIT_FAIL;
            (*n)++;
        }
        eco_report_runs_free(runs, k);
    }
    if (!status && ndirs > 1)
        strip_common_prefix(out, *n);
    if (status) {
        eco_report_runs_free(out, *n);
        *n = 0;
        out = NULL;
    }
    *all = out;
    return status;
}

/* Writes the report of `runs` to `path` (through a temporary file renamed over it, so that a
 * failure leaves no half-written report). */
int eco_cli__report_to_file(const struct eco_report_run *runs, size_t n, const char *title,
                            const char *path)
{
    char tmp[4200];
    struct eco_error err = {{0}};
    struct eco_report_opts opts = {.title = title, .generator = "ecosched " ECO_VERSION};
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid()) >= sizeof tmp) {
        eco_cli__err("report: path too long: %s", path);
        return ECO_EXIT_USAGE;
    }
    FILE *f = fopen(tmp, "w");
    if (!f) {
        eco_cli__err("report: cannot write %s: %s", path, strerror(errno));
        return ECO_EXIT_FAIL;
    }
    int rc = eco_report_write(f, runs, n, &opts, &err);
    if (fclose(f) && !rc)
        rc = -EIO;
    if (!rc && rename(tmp, path))
        rc = -errno;
    if (rc) {
        unlink(tmp);
        if (rc == -EINVAL)
            eco_cli__err("report: %s", err.msg);
        else
            eco_cli__err("report: cannot write %s: %s", path, strerror(-rc));
        return rc == -EINVAL ? ECO_EXIT_USAGE : ECO_EXIT_FAIL;
    }
    return 0;
}

/* --accounting: the table of FILE on stdout, or the HTML page to output. */
static int report_accounting(const char *file, const char *output, const char *title)
{
    struct eco_acct_table *t = NULL;
    struct eco_error err = {{0}};
    char tmp[4200];
    int rc = eco_cli__acct_load(file, &t, &err), status = 0;
    if (rc) {
        eco_cli__err("report: %s", rc == -ENOMEM ? strerror(ENOMEM) : err.msg);
        return rc == -ENOMEM ? ECO_EXIT_FAIL : ECO_EXIT_USAGE;
    }
    if (!output) {
        eco_cli__acct_print(stdout, t);
        goto done;
    }
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp%ld", output, (long)getpid()) >= sizeof tmp) {
        eco_cli__err("report: path too long: %s", output);
        status = ECO_EXIT_USAGE;
        goto done;
    }
    FILE *f = fopen(tmp, "w");
    rc = f ? eco_cli__acct_html(f, t, title ? title : "ecosched accounting report",
                                !strcmp(file, "-") ? "sacct --json (stdin)" : file)
           : -errno;
    if (f && fclose(f) && !rc)
        rc = -EIO;
    if (!rc && rename(tmp, output))
        rc = -errno;
    if (rc) {
        unlink(tmp);
        eco_cli__err("report: cannot write %s: %s", output, strerror(-rc));
        status = ECO_EXIT_FAIL;
    } else {
        printf("report: %s\n", output);
    }
done:
    eco_cli__acct_free(t);
    return status;
}

int eco_cli__cmd_report(int argc, char **argv)
{
    struct report_args args = {0};
    int rc = eco_cli__opt_parse(&report_cmd, argc, argv, &args);
    if (rc)
        return rc < 0 ? 0 : rc;
    const char *output = args.output, *title = args.title;
    int ndirs = argc - optind;
    if (args.accounting && ndirs > 0) {
        eco_cli__err("report: --accounting reads one sacct --json file, not DIRs ('%s')",
                     argv[optind]);
        return ECO_EXIT_USAGE;
    }
    if (args.accounting)
        return report_accounting(args.accounting, output, title);
    if (ndirs < 1) {
        eco_cli__err("report: give an output directory of `ecosched sim --out DIR` (try "
                     "'ecosched report --help')");
        return ECO_EXIT_USAGE;
    }
    if (ndirs > 1 && !output) {
        eco_cli__err("report: with several directories, say where to write: -o FILE.html");
        return ECO_EXIT_USAGE;
    }
    char def[4200];
    if (!output) {
        if ((size_t)snprintf(def, sizeof def, "%s/report.html", argv[optind]) >= sizeof def) {
            eco_cli__err("report: path too long: %s", argv[optind]);
            return ECO_EXIT_USAGE;
        }
        output = def;
    }
    struct eco_report_run *runs = NULL;
    size_t n = 0;
    int status = gather(argv + optind, ndirs, &runs, &n);
    if (!status)
        status = eco_cli__report_to_file(runs, n, title, output);
    if (!status)
        printf("report: %s\n", output);
    eco_report_runs_free(runs, n);
    return status;
}
