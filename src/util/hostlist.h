/* SPDX-License-Identifier: MIT */
/* Slurm hostlists at the edges (the power controller, its CLI, the SPANK plugin). */
#ifndef ECOSCHED_UTIL_HOSTLIST_H
#define ECOSCHED_UTIL_HOSTLIST_H

#include <stddef.h>

/* Expands a Slurm hostlist ("n[1-3,7],gpu01", zero padding kept: "a[08-10]") into names.
 * On success *names (each string and the array: free with eco_hostlist_free) holds *n names;
 * -EINVAL for a malformed list, -ENOMEM. At most 100,000 names. */
int eco_hostlist_expand(const char *list, char ***names, size_t *n);
void eco_hostlist_free(char **names, size_t n);

#endif
