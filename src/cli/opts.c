/* SPDX-License-Identifier: MIT */
/* The option tables' parser (opts.h): getopt_long's table, the range checks with one message
 * style, and the --help lines, all from one table per command. */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "util/csv.h"
#include "opts.h"

/* Most options of one command: sim has about thirty. */
#define MAX_OPTS 64
/* getopt_long's val of long-only options: entry index + this (above every char). */
#define LONG_BASE 256
/* Help text lines start here when the option's own column does not say otherwise. */
#define DEFAULT_HELP_COL 22

static size_t count(const struct eco_opt *opts)
{
    size_t n = 0;
    while (opts[n].kind != ECO_OPT_END)
        n++;
    return n;
}

/* One bound: whole kinds as integers, numbers as %g (as the old messages wrote them). */
static void bound(char *buf, size_t size, double v, int whole)
{
    snprintf(buf, size, whole ? "%.0f" : "%g", v);
}

static int bad_number(const struct eco_opt_cmd *cmd, const struct eco_opt *o, const char *value,
                      int whole)
{
    char lo[32], hi[32], range[80], opt[96];
    bound(lo, sizeof lo, o->lo, whole);
    bound(hi, sizeof hi, o->hi, whole);
    const char *noun = o->noun ? o->noun : whole ? "a whole number" : "a number";
    if (o->flags & ECO_OPT_NO_MAX)
        snprintf(range, sizeof range, "%s %s", o->flags & ECO_OPT_LO_OPEN ? ">" : ">=", lo);
    else if (o->flags & ECO_OPT_LO_OPEN)
        snprintf(range, sizeof range, "> %s and <= %s", lo, hi);
    else
        snprintf(range, sizeof range, "in %s..%s", lo, hi);
    if (cmd->prefix)
        snprintf(opt, sizeof opt, "%s: --%s", cmd->prefix, o->name);
    else
        snprintf(opt, sizeof opt, "--%s", o->name);
    eco_cli__err("%s: '%s' is not %s %s", opt, value, noun, range);
    return -1;
}

static int in_range(const struct eco_opt *o, double v)
{
    return (o->flags & ECO_OPT_LO_OPEN ? v > o->lo : v >= o->lo) && v <= o->hi;
}

/* ECO_OPT_NUM into *num, ECO_OPT_WHOLE* into *whole; 0 or -1 (message printed). */
static int number(const struct eco_opt_cmd *cmd, const struct eco_opt *o, const char *value,
                  double *num, unsigned long long *whole)
{
    if (o->kind == ECO_OPT_NUM) {
        if (eco_parse_double(value, num) || !in_range(o, *num))
            return bad_number(cmd, o, value, 0);
        return 0;
    }
    char *end;
    errno = 0;
    if (!*value || *value == '-' || *value == '+')
        return bad_number(cmd, o, value, 1);
    *whole = strtoull(value, &end, 10);
    if (errno || *end || !in_range(o, (double)*whole))
        return bad_number(cmd, o, value, 1);
    return 0;
}

int eco_cli__opt_value(const struct eco_opt_cmd *cmd, const struct eco_opt *o, const char *value,
                       void *args)
{
    char *field = (char *)args + o->offset;
    double num;
    unsigned long long whole;
    switch (o->kind) {
    case ECO_OPT_FLAG:
        *(int *)(void *)field = (int)o->lo;
        break;
    case ECO_OPT_STR:
        *(const char **)(void *)field = value;
        break;
    case ECO_OPT_NUM:
        if (number(cmd, o, value, &num, NULL))
            return ECO_EXIT_USAGE;
        *(double *)(void *)field = num;
        break;
    case ECO_OPT_WHOLE:
    case ECO_OPT_WHOLE32:
        if (number(cmd, o, value, NULL, &whole))
            return ECO_EXIT_USAGE;
        if (o->kind == ECO_OPT_WHOLE)
            *(unsigned long long *)(void *)field = whole;
        else
            *(uint32_t *)(void *)field = (uint32_t)whole;
        break;
    default:
        break;
    }
    return o->check ? o->check(o, value, args) : 0;
}

/* getopt_long's tables of cmd: 0, or an exit status (message printed). */
static int build(const struct eco_opt_cmd *cmd, struct option *longopts, char *shortopts)
{
    size_t n = count(cmd->opts), k = 0, s = 1;
    if (n > MAX_OPTS) {
        eco_cli__err("%s: %zu options, more than the parser's %d", cmd->prefix, n, MAX_OPTS);
        return ECO_EXIT_FAIL;
    }
    shortopts[0] = ':';
    for (size_t i = 0; i < n; i++) {
        const struct eco_opt *o = &cmd->opts[i];
        if (!o->name)
            continue;
        int has_arg = o->arg ? required_argument : no_argument;
        longopts[k++] = (struct option){o->name, has_arg, NULL,
                                        o->short_name ? o->short_name : LONG_BASE + (int)i};
        if (o->short_name) {
            shortopts[s++] = o->short_name;
            if (o->arg)
                shortopts[s++] = ':';
        }
    }
    longopts[k] = (struct option){NULL, 0, NULL, 0};
    shortopts[s] = '\0';
    return 0;
}

/* The entry of getopt_long's return value c, or NULL (':', '?', unknown). */
static const struct eco_opt *entry_of(const struct eco_opt_cmd *cmd, int c)
{
    size_t n = count(cmd->opts);
    if (c >= LONG_BASE && c < LONG_BASE + (int)n)
        return &cmd->opts[c - LONG_BASE];
    for (size_t i = 0; c != ':' && c != '?' && i < n; i++)
        if (cmd->opts[i].name && cmd->opts[i].short_name == c)
            return &cmd->opts[i];
    return NULL;
}

const struct eco_opt *eco_cli__opt_find_mode(const struct eco_opt_cmd *cmd, int argc, char **argv,
                                             int *at)
{
    struct option longopts[MAX_OPTS + 1];
    char shortopts[2 * MAX_OPTS + 2];
    const struct eco_opt *found = NULL;
    char **copy = NULL;
    if (build(cmd, longopts, shortopts) || !(copy = malloc(((size_t)argc + 1) * sizeof *copy)))
        goto done;
    memcpy(copy, argv, ((size_t)argc + 1) * sizeof *copy); /* getopt permutes its argv */
    opterr = 0;
    optind = 0; /* 0, not 1: glibc then forgets the state of an earlier scan */
    int c;
    while (!found && (c = getopt_long(argc, copy, shortopts, longopts, NULL)) != -1) {
        const struct eco_opt *o = entry_of(cmd, c == ':' ? optopt : c);
        if (!o || o->kind != ECO_OPT_MODE)
            continue;
        if (c == ':') { /* the mode's value is missing: the subcommand says so */
            *at = optind - 1;
            found = o;
            break;
        }
        /* the option's own element: before its value when the value came separately */
        const char *opt = copy[optind - 1];
        if (optarg && optarg == copy[optind - 1] && optind >= 2)
            opt = copy[optind - 2];
        for (int i = 1; i < argc; i++)
            if (argv[i] == opt)
                *at = i;
        found = o;
    }
done:
    free(copy);
    optind = 0; /* 0, not 1: glibc then forgets the state of an earlier scan */
    return found;
}

int eco_cli__opt_parse(const struct eco_opt_cmd *cmd, int argc, char **argv, void *args)
{
    struct option longopts[MAX_OPTS + 1];
    char shortopts[2 * MAX_OPTS + 2];
    int brc = build(cmd, longopts, shortopts);
    if (brc)
        return brc;
    opterr = 0;
    optind = 0; /* 0, not 1: glibc then forgets the state of an earlier scan */
    int c;
    while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        const struct eco_opt *o = entry_of(cmd, c);
        if (c == ':') {
            eco_cli__err(cmd->needs_value, argv[optind - 1]);
            return ECO_EXIT_USAGE;
        }
        if (!o) {
            eco_cli__err(cmd->unknown, argv[optind - 1]);
            return ECO_EXIT_USAGE;
        }
        if (o->kind == ECO_OPT_HELP) {
            cmd->usage(stdout);
            return -1;
        }
        if (o->kind == ECO_OPT_MODE) { /* eco_cli__opt_find_mode hands these over first */
            char name[80];
            snprintf(name, sizeof name, "--%s", o->name);
            eco_cli__err(cmd->unknown, name);
            return ECO_EXIT_USAGE;
        }
        int rc = eco_cli__opt_value(cmd, o, optarg, args);
        if (rc)
            return rc;
    }
    return 0;
}

void eco_cli__opt_help(FILE *f, const struct eco_opt_cmd *cmd)
{
    int col = cmd->help_col ? cmd->help_col : DEFAULT_HELP_COL;
    for (const struct eco_opt *o = cmd->opts; o->kind != ECO_OPT_END; o++) {
        if (!o->help)
            continue;
        if (!o->name) { /* a heading */
            fprintf(f, "%s\n", o->help);
            continue;
        }
        char left[128];
        const char *sp = o->arg ? " " : "", *arg = o->arg ? o->arg : "";
        int len = o->short_name ? snprintf(left, sizeof left, "  -%c, --%s%s%s", o->short_name,
                                           o->name, sp, arg)
                                : snprintf(left, sizeof left, "  --%s%s%s", o->name, sp, arg);
        fputs(left, f);
        fprintf(f, "%*s", len + 2 <= col ? col - len : 2, "");
        for (const char *t = o->help; *t;) {
            size_t line = strcspn(t, "\n");
            fprintf(f, "%.*s\n", (int)line, t);
            t += line;
            if (*t == '\n' && *++t)
                fprintf(f, "%*s", col, "");
        }
    }
}
