/* SPDX-License-Identifier: MIT */
/* ecoschedd's settings (src/daemon/config.c) alone: the defaults, one key set from an option
 * (ecod__config_set: every ecoschedd option goes through it) as a table of values and the
 * message each bad one gets, and whole files read all-or-nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "daemon/cluster.h"
#include "daemon/config.h"
#include "daemon/nodecap.h"

static void test_defaults(void **state)
{
    (void)state;
    struct ecod_config c;
    ecod__config_defaults(&c);
    assert_string_equal(c.socket, ECOD_DEFAULT_SOCKET);
    assert_string_equal(c.state_dir, ECOD_DEFAULT_STATE);
    assert_string_equal(c.platform, "auto");
    assert_string_equal(c.queue_policy, "fifo");
    assert_string_equal(c.gpu_strategy, "live");
    assert_string_equal(c.power_knob, "limit");
    assert_string_equal(c.power_policy, "mpc");
    assert_true(c.tick_s == 1 && c.grace_s == 30 && c.util_window_s == 10);
    assert_true(c.auto_cap_max_slowdown == 0.10);
    assert_true(c.share_util == 0.7 && c.share_max_jobs == 0 && c.share_settle_s == 0);
    assert_true(c.keep_finished_s == 604800 && c.power_budget_w == 0);
    assert_int_equal(c.socket_group[0], '\0');
    assert_int_equal(c.tcp_listen[0], '\0');
}

static void test_set_table(void **state)
{
    (void)state;
    static const struct {
        const char *key, *value;
        int rc;
        const char *msg; /* the message (a part of it) for a refused value */
    } cases[] = {
        {"grace_s", "5", 0, NULL},
        {"grace_s", "-1", -EINVAL, "'-1' is not a number of seconds 0..86400"},
        {"grace_s", "abc", -EINVAL, "'abc' is not a number of seconds 0..86400"},
        {"tick_s", "0.05", -EINVAL, "is not a number of seconds 0.1..60"},
        {"tick_s", "0.5", 0, NULL},
        {"auto_cap_max_slowdown", "1.5", -EINVAL, "is not a fraction 0..1"},
        {"share_util", "0.9", 0, NULL},
        {"share_util", "1.2", -EINVAL, "is not a fraction 0..1"},
        {"share_max_jobs", "2", 0, NULL},
        {"share_max_jobs", "2.5", -EINVAL, "'2.5' is not a whole number 0..16"},
        {"share_max_jobs", "17", -EINVAL, "is not a whole number 0..16"},
        {"share_settle_s", "40", 0, NULL},
        {"share_settle_s", "-1", -EINVAL, "is not a number of seconds 0..86400"},
        {"power_budget_w", "200000", -EINVAL, "is not a power in watts 0..100000"},
        {"power_budget_w", "1500", 0, NULL},
        {"queue_policy", "edf", 0, NULL},
        {"queue_policy", "sjf", -EINVAL, "must be fifo, greedy or edf"},
        {"gpu_strategy", "random", -EINVAL,
         "must be exclusive, memory-threshold, live or share-fit"},
        {"platform", "cuda", -EINVAL, "must be nvml, fake, none or auto"},
        {"platform", "FAKE", 0, NULL},
        {"log_level", "loud", -EINVAL, "must be error, warning, info or debug"},
        {"log_level", "warn", 0, NULL},
        {"power_knob", "clock", 0, NULL},
        {"power_knob", "fan", -EINVAL, "must be limit or clock"},
        {"tcp_listen", "10.0.0.1:80", -EINVAL, "only loopback addresses"},
        {"tcp_listen", "127.0.0.1:0", -EINVAL, "port must be 1..65535"},
        {"tcp_listen", "[::1]:8080", 0, NULL},
        {"power_policy", "nope", -EINVAL, "unknown policy 'nope'"},
        {"power_policy", "uniform", 0, NULL},
        {"socket", "", -EINVAL, "needs a value"},
        {"cluster_listen", "10.0.0.1:7071", 0, NULL},
        {"cluster_listen", "0.0.0.0:0", -EINVAL, "port must be 1..65535"},
        {"cluster_listen", "nohost", -EINVAL, "must be HOST:PORT"},
        {"cluster_listen", ":7071", -EINVAL, "must be HOST:PORT"},
        {"cluster_admin_user", "root", 0, NULL},
        {"cluster_admin_user", "4242", 0, NULL},
        {"cluster_admin_user", "no-such-user-x", -EINVAL, "no such user 'no-such-user-x'"},
        {"cluster_read_users", "*", 0, NULL},
        {"cluster_read_users", "root,0,4242", 0, NULL},
        {"cluster_read_users", "root,,0", -EINVAL, "is not * or a comma list"},
        {"cluster_read_users", "root,", -EINVAL, "is not * or a comma list"},
        {"cluster_read_users", "root,nobody-x", -EINVAL, "no such user 'nobody-x'"},
        {"no_such_key", "1", -ENOENT, "unknown setting 'no_such_key'"},
    };
    struct ecod_config c;
    ecod__config_defaults(&c);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct eco_error err = {{0}};
        int rc = ecod__config_set(&c, cases[i].key, cases[i].value, &err);
        if (rc != cases[i].rc)
            fail_msg("%s '%s': %d, want %d (%s)", cases[i].key, cases[i].value, rc, cases[i].rc,
                     err.msg);
        if (cases[i].msg && !strstr(err.msg, cases[i].msg))
            fail_msg("%s '%s': '%s' does not say '%s'", cases[i].key, cases[i].value, err.msg,
                     cases[i].msg);
    }
    assert_true(c.grace_s == 5 && c.tick_s == 0.5 && c.power_budget_w == 1500);
    assert_string_equal(c.queue_policy, "edf");
    assert_string_equal(c.platform, "FAKE");
    assert_string_equal(c.power_knob, "clock");
    assert_string_equal(c.tcp_listen, "[::1]:8080");
    assert_string_equal(c.cluster_listen, "10.0.0.1:7071");
    assert_string_equal(c.cluster_admin_user, "4242");
    assert_string_equal(c.cluster_read_users, "root,0,4242");
    assert_string_equal(c.power_policy, "uniform");
    assert_int_equal(c.log_level, 4);
    /* a value longer than its field is refused, not cut */
    char longv[200];
    memset(longv, 'a', sizeof longv - 1);
    longv[sizeof longv - 1] = '\0';
    struct eco_error err = {{0}};
    assert_int_equal(ecod__config_set(&c, "socket", longv, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "longer than 107 bytes"));
    assert_string_equal(c.socket, ECOD_DEFAULT_SOCKET);
}

static char *write_file(const char *text)
{
    char *path = strdup("/tmp/ecosched-config-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static void test_load(void **state)
{
    (void)state;
    struct ecod_config c;
    ecod__config_defaults(&c);
    char *p = write_file("# comment\n\ngrace_s = 7\n  queue_policy=greedy  \n");
    assert_int_equal(ecod__config_load(p, &c), 0);
    assert_true(c.grace_s == 7);
    assert_string_equal(c.queue_policy, "greedy");
    unlink(p);
    free(p);
    /* one bad line: nothing of the file is applied, the good lines included */
    struct ecod_config before = c;
    p = write_file("grace_s = 9\nbogus = 1\n");
    assert_int_equal(ecod__config_load(p, &c), -EINVAL);
    assert_memory_equal(&c, &before, sizeof c);
    unlink(p);
    free(p);
    p = write_file("grace_s = 1\ngrace_s = 2\n"); /* repeated key */
    assert_int_equal(ecod__config_load(p, &c), -EINVAL);
    unlink(p);
    free(p);
    p = write_file("tcp_listen = 127.0.0.1:8080\n"); /* needs tcp_token_file */
    assert_int_equal(ecod__config_load(p, &c), -EINVAL);
    unlink(p);
    free(p);
    assert_int_equal(ecod__config_load("/nonexistent/ecoschedd.conf", &c), -ENOENT);
    assert_memory_equal(&c, &before, sizeof c);
}

/* One error style: the capper check fills a struct eco_error and returns its code (it wrote
 * into a char buffer before), and a bad value's message stays cut at 159 bytes as it always
 * was, however long the value. */
static void test_error_style(void **state)
{
    (void)state;
    struct eco_error err = {{0}};
    assert_int_equal(ecod__nodecap_check("uniform", &err), 0);
    assert_string_equal(err.msg, "");
    assert_int_equal(ecod__nodecap_check("nope", &err), -EINVAL);
    assert_non_null(strstr(err.msg, "unknown policy 'nope'"));
    assert_int_equal(ecod__nodecap_check("nope", NULL), -EINVAL); /* err is optional */
    struct ecod_config c;
    ecod__config_defaults(&c);
    char longv[300];
    memset(longv, '9', sizeof longv - 1);
    longv[sizeof longv - 1] = '\0';
    longv[0] = 'x';
    assert_int_equal(ecod__config_set(&c, "grace_s", longv, &err), -EINVAL);
    assert_int_equal(strlen(err.msg), 159);
    assert_int_equal(strncmp(err.msg, "'x999", 5), 0);
}

/* Who may use the cluster listener (cluster.c's policy), without munged. */
static void test_cluster_policy(void **state)
{
    (void)state;
    static const struct {
        const char *admin, *readers, *method;
        unsigned uid;
        int rc;
        bool admin_out;
        const char *msg;
    } cases[] = {
        {"", "", "GET", 0, 0, true, NULL},
        {"", "", "POST", 0, 0, true, NULL},
        {"", "", "GET", 1000, -EPERM, false, "uid 1000 may not read"},
        {"", "", "POST", 1000, -EPERM, false, "uid 1000 may not POST"},
        {"1000", "", "POST", 1000, 0, true, NULL},
        {"1000", "", "GET", 1000, 0, true, NULL},
        {"1000", "", "POST", 1001, -EPERM, false, "uid 1001 may not POST"},
        {"", "1001,1002", "GET", 1002, 0, false, NULL},
        {"", "1001,1002", "HEAD", 1001, 0, false, NULL},
        {"", "1001,1002", "POST", 1002, -EPERM, false, "only root and cluster_admin_user"},
        {"", "1001,1002", "GET", 1003, -EPERM, false, "cluster_read_users may"},
        {"", "*", "GET", 4242, 0, false, NULL},
        {"", "*", "DELETE", 4242, -EPERM, false, "may not DELETE"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct ecod_cluster_policy p;
        struct eco_error err = {{0}};
        bool admin = !cases[i].admin_out;
        assert_int_equal(ecod__cluster_policy_init(&p, cases[i].admin, cases[i].readers, &err), 0);
        int rc = ecod__cluster_policy_check(&p, (uid_t)cases[i].uid, cases[i].method, &admin, &err);
        if (rc != cases[i].rc || admin != cases[i].admin_out ||
            (cases[i].msg && !strstr(err.msg, cases[i].msg)))
            fail_msg("case %zu: rc %d admin %d '%s'", i, rc, admin, err.msg);
    }
    struct ecod_cluster_policy p;
    struct eco_error err = {{0}};
    assert_int_equal(ecod__cluster_policy_init(&p, "no-such-user-x", "", &err), -EINVAL);
    assert_non_null(strstr(err.msg, "cluster_admin_user: no such user 'no-such-user-x'"));
    assert_int_equal(ecod__cluster_policy_init(&p, "", "0,,1", &err), -EINVAL);
    assert_non_null(strstr(err.msg, "cluster_read_users"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),       cmocka_unit_test(test_set_table),
        cmocka_unit_test(test_load),           cmocka_unit_test(test_error_style),
        cmocka_unit_test(test_cluster_policy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
