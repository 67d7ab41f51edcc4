/* SPDX-License-Identifier: MIT */
/* dcgm-exporter's job mapping files (dcgm_map_internal.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "dcgm_map_internal.h"

/* A GPU's file is a few job ids (a shared GPU holds a few jobs): 64 KiB is thousands of them;
 * a longer file is refused rather than cut. */
#define MAP_MAX 65536

/* DIR/GPU with job's line added or removed (add), through DIR/.GPU.PID.tmp. */
static int update_one(const char *dir, unsigned gpu, uint32_t job, bool add, struct eco_error *err)
{
    char path[4096], tmp[4096], id[16], *buf = NULL;
    int rc = 0, fd = -1;
    FILE *f;
    snprintf(path, sizeof path, "%s/%u", dir, gpu);
    snprintf(tmp, sizeof tmp, "%s/.%u.%ld.tmp", dir, gpu, (long)getpid());
    snprintf(id, sizeof id, "%" PRIu32, job);
    if (!(buf = malloc(MAP_MAX + 1)))
        return eco_errorf(err, -ENOMEM, "%s: out of memory", path);
    size_t len = 0;
    if ((f = fopen(path, "r"))) {
        len = fread(buf, 1, MAP_MAX + 1, f);
        fclose(f);
        if (len > MAP_MAX) {
            rc = eco_errorf(err, -EFBIG, "%s: longer than %d bytes: left as it is", path, MAP_MAX);
            goto out;
        }
    } else if (errno != ENOENT) {
        rc = eco_errorf(err, -errno, "%s: %s", path, strerror(errno));
        goto out;
    }
    buf[len] = '\0';
    /* the other lines byte for byte; ours (blanks around it allowed) kept once when adding,
     * dropped when removing */
    size_t keep = 0;
    bool had = false, changed = false;
    for (size_t at = 0; at < len;) {
        size_t end = at + strcspn(buf + at, "\n");
        size_t next = end < len ? end + 1 : end;
        size_t a = at + strspn(buf + at, " \t\r"), b = end;
        while (b > a && strchr(" \t\r", buf[b - 1]))
            b--;
        bool ours = b - a == strlen(id) && !memcmp(buf + a, id, b - a);
        bool copy = !ours || (add && !had);
        if (ours)
            had = true;
        if (copy) {
            memmove(buf + keep, buf + at, next - at);
            keep += next - at;
        } else {
            changed = true;
        }
        at = next;
    }
    len = keep;
    bool append = add && !had;
    if (!changed && !append)
        goto out; /* already as asked */
    if (append && len && buf[len - 1] != '\n')
        buf[len++] = '\n'; /* the last line ended, so that ours is a line of its own */
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        rc = eco_errorf(err, -errno, "%s: %s", tmp, strerror(errno));
        goto out;
    }
    fchmod(fd, 0644); /* dcgm-exporter reads it, whatever the umask */
    size_t idl = strlen(id);
    if (write(fd, buf, len) != (ssize_t)len ||
        (append && (write(fd, id, idl) != (ssize_t)idl || write(fd, "\n", 1) != 1)) ||
        fsync(fd) < 0) {
        rc = eco_errorf(err, -errno, "%s: %s", tmp, strerror(errno));
        goto out;
    }
    close(fd);
    fd = -1;
    if (rename(tmp, path) < 0) {
        rc = eco_errorf(err, -errno, "%s: %s", path, strerror(errno));
        goto out;
    }
out:
    if (fd >= 0)
        close(fd);
    if (rc < 0)
        unlink(tmp);
    free(buf);
    return rc;
}

int eco_slurm__dcgm_map_update(const char *dir, const unsigned *gpus, unsigned n, uint32_t job,
                               bool add, struct eco_error *err)
{
    char lock[4096];
    int rc = 0;
    snprintf(lock, sizeof lock, "%s/.lock", dir);
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return eco_errorf(err, -errno, "dcgm_job_map %s: %s", lock, strerror(errno));
    if (flock(fd, LOCK_EX) < 0) {
        rc = eco_errorf(err, -errno, "dcgm_job_map %s: %s", lock, strerror(errno));
        goto out;
    }
    for (unsigned i = 0; i < n && rc == 0; i++)
        rc = update_one(dir, gpus[i], job, add, err);
out:
    close(fd); /* the lock with it */
    return rc;
}
