/* SPDX-License-Identifier: MIT */
/* Command-line options as tables: one entry per option gives getopt's long option, the --help
 * line and the range check, so that the subcommands share one parser and one message style
 * (opts.c). */
#ifndef ECOSCHED_CLI_OPTS_H
#define ECOSCHED_CLI_OPTS_H

#include <stddef.h>
#include <stdio.h>

enum eco_opt_kind {
    ECO_OPT_END = 0, /* the table's last entry: {0} */
    ECO_OPT_HEADING, /* no option: a heading line of --help (help) */
    ECO_OPT_FLAG,    /* no value: int field = lo */
    ECO_OPT_STR,     /* const char * field = the value (borrowed from argv) */
    ECO_OPT_NUM,     /* double field, a number in the range lo..hi */
    ECO_OPT_WHOLE,   /* unsigned long long field, a whole number in lo..hi */
    ECO_OPT_WHOLE32, /* uint32_t field, a whole number in lo..hi (hi <= UINT32_MAX) */
    ECO_OPT_CUSTOM,  /* check alone parses the value (no field) */
    ECO_OPT_HELP,    /* prints the command's usage and stops */
    ECO_OPT_MODE,    /* a subcommand (`sim --server`): run gets the command line */
};

/* enum eco_opt_flags: how the range reads. */
#define ECO_OPT_LO_OPEN 1u /* the value must be > lo (else >= lo) */
#define ECO_OPT_NO_MAX 2u  /* hi is a sanity bound, not named in the message */

struct eco_opt {
    const char *name; /* long name without "--"; NULL for a heading */
    char short_name;  /* 0: none */
    enum eco_opt_kind kind;
    double lo, hi;
    unsigned flags;
    size_t offset;    /* of the field in the command's argument struct */
    const char *arg;  /* the value in --help ("FILE"); NULL: no value */
    const char *help; /* --help text; each '\n' starts a continuation line */
    /* Optional: after the kind's parse and store, checks the value or (ECO_OPT_CUSTOM) parses
     * it; 0, or an exit status with the message printed. */
    int (*check)(const struct eco_opt *o, const char *value, void *args);
    /* What a bad value is in messages, with its article ("a number of seconds", "an
     * integer"); NULL: "a number" or, for whole kinds, "a whole number". */
    const char *noun;
    /* ECO_OPT_MODE: runs the subcommand on the whole command line; `at` is the index of the
     * mode's option in argv. Returns the exit status. */
    int (*run)(int argc, char **argv, int at);
};

struct eco_opt_cmd {
    const char *prefix; /* messages start "PREFIX: --NAME: " ("sim", "place"); NULL: "--NAME: " */
    const struct eco_opt *opts;
    int help_col; /* the column where --help's text starts */
    /* Messages (one %s: the option as given) for a missing value and an unknown option. */
    const char *needs_value, *unknown;
    void (*usage)(FILE *f); /* --help */
};

/* Parses argv[1..] into args by cmd's table (getopt_long; optind is left at the first operand).
 * 0: parsed; -1: --help printed; else an exit status with the message printed. */
int eco_cli__opt_parse(const struct eco_opt_cmd *cmd, int argc, char **argv, void *args);
/* Parses value by o's kind and range and stores it in o's field of args, then runs o->check,
 * as eco_cli__opt_parse does for each option (for commands that walk their own argv, as the daemon
 * client's do). 0, or an exit status with the message printed. */
int eco_cli__opt_value(const struct eco_opt_cmd *cmd, const struct eco_opt *o, const char *value,
                       void *args);
/* The subcommand (ECO_OPT_MODE entry) named anywhere on the command line, read with the same
 * getopt table as eco_cli__opt_parse (so that an option's value is never taken for a mode, and
 * options of the subcommand alone are passed over); NULL when none. *at: its index in argv. */
const struct eco_opt *eco_cli__opt_find_mode(const struct eco_opt_cmd *cmd, int argc, char **argv,
                                             int *at);
/* The --help lines of cmd's table. */
void eco_cli__opt_help(FILE *f, const struct eco_opt_cmd *cmd);

#endif
