/* SPDX-License-Identifier: MIT */
/* File-system helpers of the edges: mkdir -p. */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include "fs.h"

int eco_mkdir(const char *path, mode_t mode)
{
    return mkdir(path, mode) < 0 && errno != EEXIST ? -errno : 0;
}

int eco_mkdir_p(const char *path, mode_t mode)
{
    char buf[PATH_MAX];
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof buf) {
        errno = len ? ENAMETOOLONG : ENOENT;
        return -errno;
    }
    memcpy(buf, path, len + 1);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        int rc = eco_mkdir(buf, mode);
        if (rc < 0)
            return rc;
        *p = '/';
    }
    return eco_mkdir(buf, mode);
}
