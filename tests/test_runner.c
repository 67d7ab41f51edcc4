/* SPDX-License-Identifier: MIT */
/* Job runner: output files, CUDA_VISIBLE_DEVICES, exact environment, errors before exec
 * (without zombies), process-group signals, adoption by start ticks, the user switch, the
 * start gate, the wrapper run from a descriptor, and no inherited descriptors. */
/* _DEFAULT_SOURCE for realpath and symlink helpers in the test only. */
#define _DEFAULT_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "daemon/runner.h"

/* Generous bound for a shell to start and end on a loaded CI machine. */
#define WAIT_MS 10000

static const char *const BASE_ENV[] = {"PATH=/usr/bin:/bin", "HOME=/", NULL};

struct fixture {
    char dir[PATH_MAX];
    char out[PATH_MAX + 16];
    char err[PATH_MAX + 16];
};

static void rm_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        char sub[PATH_MAX * 2];
        while (d && (e = readdir(d))) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            rm_tree(sub);
        }
        if (d)
            closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    char tmpl[] = "/tmp/eco-runner-XXXXXX";
    if (!f || !mkdtemp(tmpl) || !realpath(tmpl, f->dir)) {
        free(f);
        return -1;
    }
    snprintf(f->out, sizeof f->out, "%s/out", f->dir);
    snprintf(f->err, sizeof f->err, "%s/err", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    rm_tree(f->dir);
    free(f);
    return 0;
}

static struct eco_run_spec spec_for(const struct fixture *f, const char *const *argv)
{
    return (struct eco_run_spec){
        .argv = argv,
        .env = BASE_ENV,
        .cwd = f->dir,
        .uid = getuid(),
        .gid = getgid(),
        .stdout_path = f->out,
        .stderr_path = f->err,
    };
}

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Polls until the child ends; returns its wait status. */
static int wait_exit(pid_t pid)
{
    int status = 0;
    for (int ms = 0; ms < WAIT_MS; ms += 5) {
        int rc = eco_run_poll(pid, &status);
        assert_true(rc >= 0);
        if (rc == 1)
            return status;
        sleep_ms(5);
    }
    fail_msg("pid %ld did not end within %d ms", (long)pid, WAIT_MS);
    return -1;
}

static void read_file(const char *path, char *buf, size_t cap)
{
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    size_t n = fread(buf, 1, cap - 1, fp);
    buf[n] = '\0';
    fclose(fp);
}

static pid_t start_ok(const struct eco_run_spec *s)
{
    struct eco_error err = {{0}};
    pid_t pid = -1;
    int rc = eco_run_start(s, &pid, &err);
    if (rc != 0)
        fail_msg("eco_run_start: %d: %s", rc, err.msg);
    assert_true(pid > 1);
    return pid;
}

/* No child left behind: every child of the test has been reaped. */
static void assert_no_children(void)
{
    errno = 0;
    assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
    assert_int_equal(errno, ECHILD);
}

static void test_output_gpus_cwd_status(void **state)
{
    struct fixture *f = *state;
    static const char *const argv[] = {
        "sh", "-c", "echo out; echo err >&2; echo $CUDA_VISIBLE_DEVICES; pwd; exit 3", NULL};
    static const uint32_t gpus[] = {1, 3};
    struct eco_run_spec s = spec_for(f, argv);
    s.gpus = gpus;
    s.n_gpus = 2;
    pid_t pid = start_ok(&s);
    int status = wait_exit(pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 3);
    char buf[PATH_MAX + 64], want[PATH_MAX + 64];
    read_file(f->out, buf, sizeof buf);
    snprintf(want, sizeof want, "out\n1,3\n%s\n", f->dir);
    assert_string_equal(buf, want);
    read_file(f->err, buf, sizeof buf);
    assert_string_equal(buf, "err\n");
    struct stat st;
    assert_int_equal(stat(f->out, &st), 0);
    assert_int_equal(st.st_mode & 0177, 0);             /* at most 0600: the user's only */
    assert_int_equal(eco_run_poll(pid, NULL), -ECHILD); /* reaped once */
}

static void test_env_exact(void **state)
{
    struct fixture *f = *state;
    static const char *const argv[] = {"env", NULL};
    static const char *const env[] = {"PATH=/usr/bin:/bin", "FOO=bar baz", "CUDA_VISIBLE_DEVICES=7",
                                      "EMPTY=", NULL};
    setenv("ECO_RUNNER_TEST_LEAK", "1", 1);
    struct eco_run_spec s = spec_for(f, argv);
    s.env = env;
    s.n_gpus = 0; /* no GPU visible: an empty CUDA_VISIBLE_DEVICES, the given one replaced */
    pid_t pid = start_ok(&s);
    int status = wait_exit(pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    char buf[1024];
    read_file(f->out, buf, sizeof buf);
    assert_string_equal(buf, "PATH=/usr/bin:/bin\nFOO=bar baz\nEMPTY=\nCUDA_VISIBLE_DEVICES=\n");
    unsetenv("ECO_RUNNER_TEST_LEAK");
}

/* argv[0] is looked up in the job's PATH, not the daemon's; stdout and stderr may share a file. */
static void test_job_path_and_shared_output(void **state)
{
    struct fixture *f = *state;
    char bin[PATH_MAX + 8], tool[PATH_MAX + 32], path[PATH_MAX + 64];
    snprintf(bin, sizeof bin, "%s/bin", f->dir);
    snprintf(tool, sizeof tool, "%s/eco-runner-tool", bin);
    snprintf(path, sizeof path, "PATH=/nonexistent:%s:/usr/bin:/bin", bin);
    assert_int_equal(mkdir(bin, 0755), 0);
    FILE *fp = fopen(tool, "w");
    assert_non_null(fp);
    fputs("#!/bin/sh\necho found \"$1\"\necho oops >&2\n", fp);
    fclose(fp);
    assert_int_equal(chmod(tool, 0755), 0);
    static const char *const argv[] = {"eco-runner-tool", "x y", NULL};
    const char *env[] = {path, NULL};
    struct eco_run_spec s = spec_for(f, argv);
    s.env = env;
    s.stderr_path = f->out;
    pid_t pid = start_ok(&s);
    int status = wait_exit(pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    char buf[256];
    read_file(f->out, buf, sizeof buf);
    assert_string_equal(buf, "found x y\noops\n");
}

static void expect_error(const struct eco_run_spec *s, int code, const char *msg)
{
    struct eco_error err = {{0}};
    pid_t pid = 12345;
    int rc = eco_run_start(s, &pid, &err);
    assert_int_equal(rc, code);
    assert_string_equal(err.msg, msg);
    assert_int_equal(pid, -1);
    assert_no_children();
}

static void test_errors_before_exec(void **state)
{
    struct fixture *f = *state;
    static const char *const sh[] = {"sh", "-c", "exit 0", NULL};
    struct eco_run_spec s = spec_for(f, sh);
    s.cwd = "/nonexistent-eco-runner/x";
    expect_error(&s, -ENOENT, "chdir /nonexistent-eco-runner/x: No such file or directory");

    static const char *const nosuch[] = {"eco-no-such-cmd", NULL};
    s = spec_for(f, nosuch);
    expect_error(&s, -ENOENT, "exec 'eco-no-such-cmd': No such file or directory");

    static const char *const rel[] = {"./plain", NULL}; /* a file without execute bits */
    char plain[PATH_MAX + 16];
    snprintf(plain, sizeof plain, "%s/plain", f->dir);
    FILE *fp = fopen(plain, "w");
    assert_non_null(fp);
    fputs("echo no\n", fp);
    fclose(fp);
    s = spec_for(f, rel);
    expect_error(&s, -EACCES, "exec './plain': Permission denied");

    s = spec_for(f, sh);
    s.stdout_path = "/nonexistent-eco-runner/out";
    expect_error(&s, -ENOENT, "open stdout /nonexistent-eco-runner/out: No such file or directory");

    static const char *const empty[] = {NULL};
    s = spec_for(f, empty);
    expect_error(&s, -EINVAL, "run: argv: empty command");
}

static void test_signal_group(void **state)
{
    struct fixture *f = *state;
    static const char *const argv[] = {"sh", "-c", "sleep 30 & echo $! > child.pid; wait", NULL};
    struct eco_run_spec s = spec_for(f, argv);
    pid_t pid = start_ok(&s);
    assert_int_equal(getpgid(pid), pid);
    assert_int_equal(getsid(pid), pid);

    char path[PATH_MAX + 16], buf[64] = "";
    snprintf(path, sizeof path, "%s/child.pid", f->dir);
    for (int ms = 0; ms < WAIT_MS && !strchr(buf, '\n'); ms += 5) {
        FILE *fp = fopen(path, "r");
        if (fp) {
            size_t n = fread(buf, 1, sizeof buf - 1, fp);
            buf[n] = '\0';
            fclose(fp);
        }
        if (!strchr(buf, '\n'))
            sleep_ms(5);
    }
    pid_t sleeper = (pid_t)atol(buf);
    assert_true(sleeper > 1);
    assert_int_equal(getpgid(sleeper), pid);
    uint64_t ticks = eco_run_start_ticks(sleeper);
    assert_true(ticks > 0);
    assert_true(eco_run_alive(sleeper, ticks));

    assert_int_equal(eco_run_signal(pid, SIGTERM), 0);
    int status = wait_exit(pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGTERM);
    /* the grandchild is not ours: it ends (maybe as a zombie of init) */
    int alive = 1;
    for (int ms = 0; ms < WAIT_MS && alive; ms += 5) {
        alive = eco_run_alive(sleeper, ticks);
        if (alive)
            sleep_ms(5);
    }
    assert_false(alive);
    /* the group may still hold the zombie sleeper (when init is slow to reap): 0 or ESRCH */
    int rc = eco_run_signal(pid, 0);
    assert_true(rc == 0 || rc == -ESRCH);
    assert_int_equal(eco_run_signal(0, SIGTERM), -EINVAL);
    assert_int_equal(eco_run_signal(1, SIGTERM), -EINVAL);
    assert_int_equal(eco_run_signal(-5, SIGTERM), -EINVAL);
}

static void test_alive_by_start_ticks(void **state)
{
    struct fixture *f = *state;
    /* a command name with spaces and parentheses, as /proc/PID/stat shows it */
    char link[PATH_MAX + 32];
    snprintf(link, sizeof link, "%s/a) b (c", f->dir);
    assert_int_equal(symlink("/bin/sleep", link), 0);
    static const char *const argv[] = {"./a) b (c", "30", NULL};
    struct eco_run_spec s = spec_for(f, argv);
    pid_t pid = start_ok(&s);
    uint64_t mine = eco_run_start_ticks(getpid());
    uint64_t ticks = eco_run_start_ticks(pid);
    assert_true(mine > 0);
    assert_true(ticks >= mine);
    assert_int_equal(eco_run_alive(pid, ticks), 1);
    assert_int_equal(eco_run_alive(pid, ticks + 1), 0);
    assert_int_equal(eco_run_poll(pid, NULL), 0); /* still running */

    assert_int_equal(eco_run_signal(pid, SIGKILL), 0);
    int alive = 1;
    for (int ms = 0; ms < WAIT_MS && alive; ms += 5) {
        alive = eco_run_alive(pid, ticks); /* a zombie is not alive */
        if (alive)
            sleep_ms(5);
    }
    assert_false(alive);
    int status = wait_exit(pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGKILL);
    assert_int_equal(eco_run_alive(pid, ticks), 0);
    assert_int_equal(eco_run_start_ticks(pid), 0);
    assert_int_equal(eco_run_alive(0, 0), 0);
    assert_int_equal(eco_run_poll(1, NULL), -ECHILD); /* not our child */
}

static void run_id(struct fixture *f, uid_t uid, gid_t gid, char *buf, size_t cap)
{
    static const char *const argv[] = {"sh", "-c", "id -u; id -g; id -G", NULL};
    struct eco_run_spec s = spec_for(f, argv);
    s.uid = uid;
    s.gid = gid;
    pid_t pid = start_ok(&s);
    int status = wait_exit(pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    read_file(f->out, buf, cap);
}

static void test_user_switch_as_root(void **state)
{
    struct fixture *f = *state;
    if (geteuid() != 0) {
        printf("SKIP: switching to user nobody needs root (euid %u)\n", (unsigned)geteuid());
        skip();
    }
    assert_int_equal(chmod(f->dir, 0777), 0); /* nobody runs in it */
    char buf[128];
    run_id(f, 65534, 65534, buf, sizeof buf);
    assert_string_equal(buf, "65534\n65534\n65534\n");
    struct stat st;
    assert_int_equal(stat(f->out, &st), 0);
    assert_int_equal(st.st_uid, 65534);
    assert_int_equal(st.st_gid, 65534);
    assert_int_equal(stat(f->err, &st), 0);
    assert_int_equal(st.st_uid, 65534);
    assert_int_equal(st.st_gid, 65534);
}

static void test_user_switch_skipped_as_user(void **state)
{
    struct fixture *f = *state;
    if (geteuid() == 0) {
        printf("SKIP: checks that a non-root daemon keeps its own user; running as root\n");
        skip();
    }
    char buf[128], want[32];
    run_id(f, 65534, 65534, buf, sizeof buf);
    snprintf(want, sizeof want, "%u\n", (unsigned)geteuid());
    assert_memory_equal(buf, want, strlen(want));
}

/* The gate: called with the child's pid once it is ready; the command has not run then. */
struct gate_probe {
    const char *marker; /* a file the command creates */
    int calls;
    pid_t pid;
    int marker_seen; /* the marker existed when the gate was called */
    int ret;
};

static int probe_gate(void *arg, pid_t pid, struct eco_error *err)
{
    struct gate_probe *g = arg;
    g->calls++;
    g->pid = pid;
    g->marker_seen = access(g->marker, F_OK) == 0;
    if (g->ret)
        return eco_errorf(err, g->ret, "gate refused");
    return 0;
}

static void test_gate(void **state)
{
    struct fixture *f = *state;
    char marker[PATH_MAX + 16];
    snprintf(marker, sizeof marker, "%s/ran", f->dir);
    static const char *const argv[] = {"sh", "-c", "echo x > ran", NULL};
    struct gate_probe g = {.marker = marker};
    struct eco_run_spec s = spec_for(f, argv);
    s.gate = probe_gate;
    s.gate_arg = &g;
    pid_t pid = start_ok(&s);
    assert_int_equal(g.calls, 1);
    assert_int_equal(g.pid, pid);
    assert_false(g.marker_seen);
    int status = wait_exit(pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(access(marker, F_OK), 0);

    /* refused: nothing runs, the child is reaped, the gate's error comes back */
    assert_int_equal(unlink(marker), 0);
    g = (struct gate_probe){.marker = marker, .ret = -ECANCELED};
    expect_error(&s, -ECANCELED, "gate refused");
    assert_int_equal(g.calls, 1);
    assert_int_not_equal(access(marker, F_OK), 0);

    /* a missing command is reported before the gate, which is never called */
    static const char *const nosuch[] = {"eco-no-such-cmd", NULL};
    s.argv = nosuch;
    g = (struct gate_probe){.marker = marker};
    expect_error(&s, -ENOENT, "exec 'eco-no-such-cmd': No such file or directory");
    assert_int_equal(g.calls, 0);

    /* an exec that fails after the gate (an executable without #! or ELF header) is
     * reported too */
    char plain[PATH_MAX + 16];
    snprintf(plain, sizeof plain, "%s/plain", f->dir);
    FILE *fp = fopen(plain, "w");
    assert_non_null(fp);
    fputs("not a program\n", fp);
    fclose(fp);
    assert_int_equal(chmod(plain, 0755), 0);
    static const char *const rel[] = {"./plain", NULL};
    s.argv = rel;
    expect_error(&s, -ENOEXEC, "exec './plain': Exec format error");
    assert_int_equal(g.calls, 1);
}

/* A descriptor the caller left open without close-on-exec is not the job's. */
static void test_no_inherited_fds(void **state)
{
    struct fixture *f = *state;
    int fd = open("/dev/null", O_RDONLY);
    assert_true(fd > 2);
    int high = dup2(fd, 77);
    assert_int_equal(high, 77);
    /* ls lists the shell's descriptors (no pipeline: the shell would hold its pipe then) */
    static const char *const argv[] = {"sh", "-c", "ls /proc/$$/fd", NULL};
    struct eco_run_spec s = spec_for(f, argv);
    pid_t pid = start_ok(&s);
    int status = wait_exit(pid);
    close(fd);
    close(high);
    assert_true(WIFEXITED(status));
    char buf[256];
    read_file(f->out, buf, sizeof buf);
    assert_string_equal(buf, "0\n1\n2\n");
}

/* The wrapper runs from a descriptor with the command's resolved path and arguments. */
static void test_wrapper_fd(void **state)
{
    struct fixture *f = *state;
    int fd = open("/bin/echo", O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    static const char *const wrap[] = {"wrapper", "0,1", NULL};
    static const char *const argv[] = {"sh", "a b", NULL};
    struct eco_run_spec s = spec_for(f, argv);
    s.wrap_argv = wrap;
    s.wrap_fd = fd;
    pid_t pid = start_ok(&s);
    int status = wait_exit(pid);
    close(fd);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    char buf[256];
    read_file(f->out, buf, sizeof buf);
    assert_string_equal(buf, "0,1 /usr/bin/sh a b\n"); /* sh found in the job's PATH */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_output_gpus_cwd_status, setup, teardown),
        cmocka_unit_test_setup_teardown(test_env_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_path_and_shared_output, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors_before_exec, setup, teardown),
        cmocka_unit_test_setup_teardown(test_signal_group, setup, teardown),
        cmocka_unit_test_setup_teardown(test_alive_by_start_ticks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_user_switch_as_root, setup, teardown),
        cmocka_unit_test_setup_teardown(test_user_switch_skipped_as_user, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_inherited_fds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wrapper_fd, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
