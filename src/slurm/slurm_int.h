/* SPDX-License-Identifier: MIT */
/* Internals of the Slurm side of ecosched shared by the power controller (powerd.c) and its
 * CLI (src/cli/cmd_power.c): JSON over HTTP to a unix socket or a URL, and Slurm hostlists. */
#ifndef ECOSCHED_SLURM_INT_H
#define ECOSCHED_SLURM_INT_H

#include <jansson.h>
#include <stddef.h>

/* Default API socket of `ecosched powerd`. */
#define ECO_POWERD_SOCKET "/run/ecosched/powerd.sock"

/* JSON over HTTP to a unix socket or a URL: eco_http_json, the edges' one client. */
#include "util/http_client.h"

/* Expands a Slurm hostlist ("n[1-3,7],gpu01", zero padding kept: "a[08-10]") into names.
 * On success *names (each string and the array: free with eco_hostlist_free) holds *n names;
 * -EINVAL for a malformed list, -ENOMEM. At most 100,000 names. */
int eco_hostlist_expand(const char *list, char ***names, size_t *n);
void eco_hostlist_free(char **names, size_t n);

#endif
