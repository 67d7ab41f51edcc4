/* SPDX-License-Identifier: MIT */
/* The operator's accounting report of `ecosched report --accounting` (report_acct.c). */
#ifndef ECOSCHED_CLI_REPORT_ACCT_H
#define ECOSCHED_CLI_REPORT_ACCT_H

#include <stdio.h>
#include "ecosched/error.h"

struct eco_acct_table; /* rows per user and per account */

/* Reads `sacct --json` output from path ("-": stdin) into *out (the caller's, freed with
 * eco_cli__acct_free). 0, -EINVAL (err names the file and the field: "F: jobs[3].time.elapsed:
 * ...") or -ENOMEM. */
int eco_cli__acct_load(const char *path, struct eco_acct_table **out, struct eco_error *err);
void eco_cli__acct_free(struct eco_acct_table *t);
/* The table as text, one row per user then per account, each in name order. */
void eco_cli__acct_print(FILE *f, const struct eco_acct_table *t);
/* The same as one self-contained HTML page; 0 or -EIO. */
int eco_cli__acct_html(FILE *f, const struct eco_acct_table *t, const char *title,
                       const char *source);

#endif
