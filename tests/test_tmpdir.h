/* SPDX-License-Identifier: MIT */
/* A temporary folder for one test program (cmocka group setup and teardown), plain files
 * written into it, and a warning callback that counts what a reader warns and keeps the last
 * message. Define TEST_TMPDIR_NAME ("eco_test_NAME") before including. */
#ifndef ECOSCHED_TEST_TMPDIR_H
#define ECOSCHED_TEST_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char tmpdir[64];

static inline int make_tmpdir(void **state)
{
    (void)state;
    strcpy(tmpdir, "/tmp/" TEST_TMPDIR_NAME ".XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static inline int remove_tmpdir(void **state)
{
    char cmd[128];
    (void)state;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Writes `text` to tmpdir/name; returns the path (a static buffer). */
static inline const char *write_text(const char *name, const char *text)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    assert_int_equal(fclose(f), 0);
    return path;
}

struct warnings {
    int count;
    char last[1024];
};

static inline void record_warning(void *ctx, const char *msg)
{
    struct warnings *w = ctx;
    w->count++;
    snprintf(w->last, sizeof w->last, "%s", msg);
}

#endif
