/* SPDX-License-Identifier: MIT */
/* The job's GPU energy in Slurm's accounting: the text ecosched keeps in a job's AdminComment,
 * one part per node merged into a sum (docs/slurm/accounting.md). Pure string work; the SPANK
 * plugin reads and writes the comment through sacct and sacctmgr. */
#ifndef ECOSCHED_ACCT_COMMENT_INTERNAL_H
#define ECOSCHED_ACCT_COMMENT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include "ecosched/error.h"

/* What starts ecosched's part of an AdminComment. The comment is shared with other tools
 * (Jobstats' "JS1:" blob, a site's notes): the text before ecosched's part and after its K
 * parts is theirs, kept byte for byte. */
#define ECO_ACCT_TAG "ecosched gpu_energy_j="

/* The comment `old` (NULL or "" for none) with NODE's part set to energy_j (>= 0) and
 * carbon_g (< 0: unknown), the sum over all parts recomputed:
 *   "[OTHER TEXT; ]ecosched gpu_energy_j=SUM [carbon_g=SUM] nodes=K NODE=EJ[,Cg] ...[OTHER]"
 * The other tools' text is kept as it was: before ecosched's part (with the "; " ecosched put
 * after it on its first write, nothing of it trimmed) and after the K parts.
 * carbon_g is summed only when every part has one. A part already there for NODE is replaced
 * (an epilog retried), the others are kept in their order. *out is the caller's to free();
 * 0, -EINVAL (bad node name or energy, or an unreadable part in old; err says which) or
 * -ENOMEM. */
int eco_slurm__comment_merge(const char *old, const char *node, double energy_j, double carbon_g,
                             char **out, struct eco_error *err);

/* Whether the comment holds a part for NODE, in any case (the check after a write that may
 * have raced another node's). */
bool eco_slurm__comment_has(const char *comment, const char *node);

/* Whether the text of other tools in comment (outside ecosched's part) has an upper-case
 * letter: sacctmgr, through which the epilog writes, stores the comment in lower case (Debian's
 * 22.05), which would spoil such text (Jobstats' base64 "JS1:" blob), so the plugin does not
 * write then. */
bool eco_slurm__comment_others_upper(const char *comment);

/* The job's AdminComment in slurmctld's copy, from `scontrol show job -o ID`'s line `show`
 * (scontrol prints it unquoted as "AdminComment=TEXT " and a blank before the next field; the
 * text is taken up to two blanks and a field name with '='), into out (cap bytes). 0, -ENOENT
 * (no AdminComment: slurmctld holds none) or -E2BIG. */
int eco_slurm__comment_from_scontrol(const char *show, char *out, size_t cap);

#endif
