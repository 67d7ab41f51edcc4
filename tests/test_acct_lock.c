/* SPDX-License-Identifier: MIT */
/* The lock around a job's AdminComment write (src/slurm/acct_lock.c): lock_dir created 0700
 * and refused when others may write it, it is a symbolic link or another user's; a held lock
 * waited for a bounded time, never forever; the lock file removed by its holder; and a waiter
 * that got a removed file's lock taking the new file's, so two never hold it at once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "slurm/acct_lock_internal.h"

static char root[64];

static int make_root(void **state)
{
    (void)state;
    strcpy(root, "/tmp/eco_test_acct_lock.XXXXXX");
    return mkdtemp(root) ? 0 : -1;
}

static int remove_root(void **state)
{
    char cmd[128];
    (void)state;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

/* root/NAME, made with mode (0: not made). */
static const char *sub(const char *name, mode_t mode)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", root, name);
    if (mode) {
        assert_int_equal(mkdir(path, 0700), 0);
        assert_int_equal(chmod(path, mode), 0);
    }
    return path;
}

static size_t entries(int dir_fd)
{
    DIR *d = fdopendir(dup(dir_fd));
    struct dirent *e;
    size_t n = 0;
    assert_non_null(d);
    while ((e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

static void dir_created_root_only(void **state)
{
    struct eco_error err = {{0}};
    struct stat st;
    int dir;
    (void)state;
    const char *p = sub("new", 0);
    assert_int_equal(eco_slurm__lock_dir_open(p, geteuid(), &dir, &err), 0);
    assert_int_equal(lstat(p, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(st.st_mode & 077, 0);
    close(dir);
    p = sub("plain", 0755); /* readable by others, written by its owner only: kept */
    assert_int_equal(eco_slurm__lock_dir_open(p, geteuid(), &dir, &err), 0);
    close(dir);
}

static void dir_refused(void **state)
{
    static const struct {
        const char *name;
        mode_t mode;
        const char *msg;
    } bad[] = {
        {"world", 0777, "mode 0777"},
        {"group", 0770, "mode 0770"},
        {"sticky", 01777, "mode 1777"},
        {"other", 0703, "mode 0703"},
    };
    struct eco_error err = {{0}};
    int dir = 7;
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *p = sub(bad[i].name, bad[i].mode);
        assert_int_equal(eco_slurm__lock_dir_open(p, geteuid(), &dir, &err), -EPERM);
        assert_int_equal(dir, -1);
        if (!strstr(err.msg, bad[i].msg) || !strstr(err.msg, p))
            fail_msg("%s: '%s' does not say '%s'", bad[i].name, err.msg, bad[i].msg);
    }
    char link[128];
    snprintf(link, sizeof link, "%s/link", root);
    assert_int_equal(symlink(sub("target", 0700), link), 0);
    int rc = eco_slurm__lock_dir_open(link, geteuid(), &dir, &err); /* Linux: ENOTDIR */
    assert_true(rc == -ELOOP || rc == -ENOTDIR);
    assert_non_null(strstr(err.msg, "symbolic link"));
    const char *f = sub("file", 0);
    close(open(f, O_CREAT | O_WRONLY, 0600));
    assert_int_equal(eco_slurm__lock_dir_open(f, geteuid(), &dir, &err), -ENOTDIR);
    /* another user's directory */
    const char *p = sub("theirs", 0700);
    if (geteuid() == 0) {
        assert_int_equal(chown(p, 65534, 65534), 0);
        assert_int_equal(eco_slurm__lock_dir_open(p, 0, &dir, &err), -EPERM);
        assert_non_null(strstr(err.msg, "owner uid 65534"));
    } else {
        assert_int_equal(eco_slurm__lock_dir_open(p, geteuid() + 1, &dir, &err), -EPERM);
    }
}

static void file_removed_after_use(void **state)
{
    struct eco_error err = {{0}};
    struct stat st;
    int dir, fd;
    (void)state;
    assert_int_equal(eco_slurm__lock_dir_open(sub("rm", 0700), geteuid(), &dir, &err), 0);
    for (int round = 0; round < 3; round++) {
        assert_int_equal(eco_slurm__lock_take(dir, 42, 1000, &fd, &err), 0);
        assert_int_equal(fstatat(dir, "ecosched-acct.42.lock", &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_true(S_ISREG(st.st_mode));
        assert_int_equal(st.st_mode & 077, 0);
        eco_slurm__lock_release(dir, 42, fd);
        assert_int_equal(entries(dir), 0);
    }
    /* a symbolic link planted under the lock's name is not followed */
    assert_int_equal(symlinkat("/etc/passwd", dir, "ecosched-acct.43.lock"), 0);
    assert_int_equal(eco_slurm__lock_take(dir, 43, 100, &fd, &err), -ELOOP);
    close(dir);
}

static void wait_bounded(void **state)
{
    struct eco_error err = {{0}};
    int dir, a, b;
    (void)state;
    assert_int_equal(eco_slurm__lock_dir_open(sub("wait", 0700), geteuid(), &dir, &err), 0);
    assert_int_equal(eco_slurm__lock_take(dir, 7, 1000, &a, &err), 0);
    /* a second open file of the same process is a second locker for flock */
    assert_int_equal(eco_slurm__lock_take(dir, 7, 200, &b, &err), -ETIMEDOUT);
    assert_int_equal(b, -1);
    assert_non_null(strstr(err.msg, "ecosched-acct.7.lock: still held after 200 ms"));
    assert_int_equal(eco_slurm__lock_take(dir, 8, 0, &b, &err), 0); /* another job's: free */
    eco_slurm__lock_release(dir, 8, b);
    eco_slurm__lock_release(dir, 7, a);
    assert_int_equal(eco_slurm__lock_take(dir, 7, 0, &b, &err), 0);
    eco_slurm__lock_release(dir, 7, b);
    assert_int_equal(entries(dir), 0);
    close(dir);
}

/* A child holds the lock; the parent waits on that file; the child removes it and lets go.
 * The parent must then hold the file named now, so that a third locker is kept out. */
static void waiter_after_removal(void **state)
{
    struct eco_error err = {{0}};
    struct stat a, b;
    int dir, fd, other, p[2];
    char c;
    (void)state;
    assert_int_equal(eco_slurm__lock_dir_open(sub("race", 0700), geteuid(), &dir, &err), 0);
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        const struct timespec hold = {0, 300 * 1000000L};
        if (eco_slurm__lock_take(dir, 9, 1000, &fd, &err) || write(p[1], "x", 1) != 1)
            _exit(1);
        nanosleep(&hold, NULL); /* the parent opens the file meanwhile and waits on it */
        eco_slurm__lock_release(dir, 9, fd);
        _exit(0);
    }
    assert_int_equal(read(p[0], &c, 1), 1);
    assert_int_equal(eco_slurm__lock_take(dir, 9, 30000, &fd, &err), 0);
    assert_int_equal(fstat(fd, &a), 0);
    assert_int_equal(fstatat(dir, "ecosched-acct.9.lock", &b, AT_SYMLINK_NOFOLLOW), 0);
    assert_true(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
    assert_int_equal(eco_slurm__lock_take(dir, 9, 0, &other, &err), -ETIMEDOUT);
    eco_slurm__lock_release(dir, 9, fd);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(entries(dir), 0);
    close(p[0]), close(p[1]), close(dir);
}

int main(void)
{
    alarm(120); /* a wait without its bound fails the test instead of holding it */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dir_created_root_only),  cmocka_unit_test(dir_refused),
        cmocka_unit_test(file_removed_after_use), cmocka_unit_test(wait_bounded),
        cmocka_unit_test(waiter_after_removal),
    };
    return cmocka_run_group_tests(tests, make_root, remove_root);
}
