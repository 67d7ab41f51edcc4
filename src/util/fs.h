/* SPDX-License-Identifier: MIT */
/* File-system helpers of the edges (CLI output folders, the daemon's state directory). */
#ifndef ECO_UTIL_FS_H
#define ECO_UTIL_FS_H

#include <sys/types.h>

/* Creates directory `path` with `mode` unless it exists (as mkdir, EEXIST not an error).
 * 0, or -errno (errno set too). */
int eco_mkdir(const char *path, mode_t mode);

/* Creates directory `path` and its missing parents with `mode` (as mkdir -p; existing ones are
 * kept as they are). 0, or -errno of the first mkdir that failed (errno set too). */
int eco_mkdir_p(const char *path, mode_t mode);

#endif
