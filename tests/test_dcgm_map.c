/* SPDX-License-Identifier: MIT */
/* dcgm-exporter's job mapping files the SPANK plugin keeps (src/slurm/dcgm_map.c): a job's id
 * added to the file of each of its GPUs and removed at its end, another job's ids on the same
 * GPU kept byte for byte, a retried prolog or epilog changing nothing, no temporary file left,
 * and a directory that cannot be written named in the error (issue 31). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "slurm/dcgm_map_internal.h"

static char dir[] = "/tmp/eco-dcgm.XXXXXX";

static void put(const char *name, const char *text)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void want(const char *name, const char *text)
{
    char p[256], got[1024] = "";
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "r");
    if (!f)
        fail_msg("%s: %s", p, strerror(errno));
    size_t n = fread(got, 1, sizeof got - 1, f);
    got[n] = '\0';
    fclose(f);
    if (strcmp(got, text))
        fail_msg("%s holds '%s', want '%s'", name, got, text);
}

/* Files of dir other than the GPUs' and the lock: temporary files left behind. */
static int strays(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d)))
        n += e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
             strcmp(e->d_name, ".lock");
    closedir(d);
    return n;
}

static void keeps_files(void **state)
{
    (void)state;
    struct eco_error err = {{0}};
    const unsigned g01[] = {0, 1}, g1[] = {1}, g3[] = {3};
    assert_non_null(mkdtemp(dir));
    /* GPU 0 already holds another job (and a line without its newline on GPU 3) */
    put("0", "77\n");
    put("3", "12\n 13 ");
    assert_int_equal(eco_slurm__dcgm_map_update(dir, g01, 2, 100, true, &err), 0);
    want("0", "77\n100\n");
    want("1", "100\n");
    char p[256];
    struct stat st;
    snprintf(p, sizeof p, "%s/1", dir);
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644); /* dcgm-exporter reads it */
    /* a retried prolog: nothing twice */
    assert_int_equal(eco_slurm__dcgm_map_update(dir, g01, 2, 100, true, &err), 0);
    want("0", "77\n100\n");
    /* a second job on GPU 1 */
    assert_int_equal(eco_slurm__dcgm_map_update(dir, g1, 1, 1001, true, &err), 0);
    want("1", "100\n1001\n");
    /* the first job ends: only its lines go, 1001 is not 100 */
    assert_int_equal(eco_slurm__dcgm_map_update(dir, g01, 2, 100, false, &err), 0);
    want("0", "77\n");
    want("1", "1001\n");
    assert_int_equal(eco_slurm__dcgm_map_update(dir, g01, 2, 100, false, &err), 0);
    want("0", "77\n");
    /* another tool's lines as they were, ours a line of its own */
    assert_int_equal(eco_slurm__dcgm_map_update(dir, g3, 1, 13, false, &err), 0);
    want("3", "12\n");
    put("3", "12\n 13 ");
    assert_int_equal(eco_slurm__dcgm_map_update(dir, g3, 1, 5, true, &err), 0);
    want("3", "12\n 13 \n5\n");
    assert_int_equal(eco_slurm__dcgm_map_update(dir, g3, 1, 5, false, &err), 0);
    want("3", "12\n 13 \n");
    assert_int_equal(strays(), 0);
    /* a directory that is not there: an error naming it */
    assert_true(eco_slurm__dcgm_map_update("/nonexistent/eco-dcgm", g1, 1, 1, true, &err) < 0);
    assert_non_null(strstr(err.msg, "/nonexistent/eco-dcgm"));
    const char *names[] = {"0", "1", "3", ".lock"};
    for (size_t i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(keeps_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
