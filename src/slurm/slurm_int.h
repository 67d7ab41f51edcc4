/* SPDX-License-Identifier: MIT */
/* Internals of the Slurm side of ecosched (the power controller and the SPANK plugin): JSON
 * over HTTP to a unix socket or a URL, and Slurm hostlists (both in src/util). */
#ifndef ECOSCHED_SLURM_INT_H
#define ECOSCHED_SLURM_INT_H

#include <jansson.h>
#include <stddef.h>

/* JSON over HTTP to a unix socket or a URL: eco_http_json, the edges' one client. */
#include "util/http_client.h"

#include "util/hostlist.h"

#endif
