/* SPDX-License-Identifier: MIT */
/* The CLI's option tables (src/cli/opts.c): values in and out of range, the one message style,
 * flags, checks, getopt's errors, subcommand entries found anywhere, and the --help lines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "opts.h"

/* The CLI's message printer (main.c), here keeping the last message. */
static char last_msg[512];
void eco_cli__err(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_msg, sizeof last_msg, fmt, ap);
    va_end(ap);
}

struct targs {
    const char *name;
    double ratio, budget;
    unsigned long long count;
    uint32_t slots;
    int flag, level, checked, mode_ran;
};

static int check_even(const struct eco_opt *o, const char *v, void *args)
{
    (void)o;
    struct targs *a = args;
    if (a->count % 2) {
        eco_cli__err("t: --count: '%s' is odd", v);
        return 2;
    }
    a->checked = 1;
    return 0;
}

static int run_mode(int argc, char **argv, int at)
{
    (void)argc;
    return 40 + at + (argv[at][2] == 'm');
}

static void t_usage(FILE *f)
{
    fputs("usage\n", f);
}

#define A(field) offsetof(struct targs, field)
static const struct eco_opt t_opts[] = {
    {.kind = ECO_OPT_HEADING, .help = "Heading:"},
    {.name = "name", .kind = ECO_OPT_STR, .offset = A(name), .arg = "N", .help = "a name"},
    {.name = "ratio",
     .kind = ECO_OPT_NUM,
     .lo = 0,
     .hi = 1,
     .offset = A(ratio),
     .arg = "R",
     .help = "a ratio\nin 0..1"},
    {.name = "budget",
     .kind = ECO_OPT_NUM,
     .lo = 0,
     .hi = 1e15,
     .flags = ECO_OPT_LO_OPEN | ECO_OPT_NO_MAX,
     .offset = A(budget),
     .arg = "W",
     .help = "watts",
     .noun = "a number of watts"},
    {.name = "count",
     .kind = ECO_OPT_WHOLE,
     .lo = 1,
     .hi = 10000000,
     .offset = A(count),
     .arg = "N",
     .help = "a count",
     .check = check_even},
    {.name = "slots", .kind = ECO_OPT_WHOLE32, .lo = 0, .hi = 64, .offset = A(slots), .arg = "N"},
    {.name = "flag",
     .short_name = 'f',
     .kind = ECO_OPT_FLAG,
     .lo = 1,
     .offset = A(flag),
     .help = "a flag"},
    {.name = "low", .kind = ECO_OPT_FLAG, .lo = 2, .offset = A(level)},
    {.name = "mode", .kind = ECO_OPT_MODE, .arg = "M", .help = "a mode", .run = run_mode},
    {.name = "help", .short_name = 'h', .kind = ECO_OPT_HELP, .help = "this help"},
    {0},
};
#undef A

static const struct eco_opt_cmd t_cmd = {
    .prefix = "t",
    .opts = t_opts,
    .needs_value = "t: %s needs a value",
    .unknown = "t: unknown option '%s'",
    .usage = t_usage,
};

static void test_values(void **state)
{
    (void)state;
    static const struct {
        const char *args; /* space-separated, after argv[0] */
        int rc;
        const char *msg; /* the message (rc != 0), or NULL */
    } cases[] = {
        {"--ratio 0.5 --count 4 --slots 64 -f --low --name x", 0, NULL},
        {"--ratio=1", 0, NULL},
        {"--ratio 1.5", 2, "t: --ratio: '1.5' is not a number in 0..1"},
        {"--ratio x", 2, "t: --ratio: 'x' is not a number in 0..1"},
        {"--ratio nan", 2, "t: --ratio: 'nan' is not a number in 0..1"},
        {"--budget 0", 2, "t: --budget: '0' is not a number of watts > 0"},
        {"--budget 1e16", 2, "t: --budget: '1e16' is not a number of watts > 0"},
        {"--budget 5kW", 2, "t: --budget: '5kW' is not a number of watts > 0"},
        {"--count 0", 2, "t: --count: '0' is not a whole number in 1..10000000"},
        {"--count 2.5", 2, "t: --count: '2.5' is not a whole number in 1..10000000"},
        {"--count -2", 2, "t: --count: '-2' is not a whole number in 1..10000000"},
        {"--count 99999999999999999999999", 2,
         "t: --count: '99999999999999999999999' is not a whole number in 1..10000000"},
        {"--count 3", 2, "t: --count: '3' is odd"},
        {"--slots 65", 2, "t: --slots: '65' is not a whole number in 0..64"},
        {"--ratio", 2, "t: --ratio needs a value"},
        {"--bogus", 2, "t: unknown option '--bogus'"},
        {"-x", 2, "t: unknown option '-x'"},
        {"--mode m", 2, "t: unknown option '--mode'"}, /* parse never runs a mode */
        {"-h", -1, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[256], *argv[16] = {"t"};
        int argc = 1;
        snprintf(buf, sizeof buf, "%s", cases[i].args);
        for (char *save = NULL, *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save))
            argv[argc++] = t;
        argv[argc] = NULL;
        struct targs a = {0};
        last_msg[0] = '\0';
        FILE *devnull = fopen("/dev/null", "w");
        FILE *saved = stdout;
        stdout = devnull; /* -h prints the usage */
        int rc = eco_cli__opt_parse(&t_cmd, argc, argv, &a);
        stdout = saved;
        fclose(devnull);
        if (rc != cases[i].rc)
            fail_msg("'%s': rc %d, want %d (%s)", cases[i].args, rc, cases[i].rc, last_msg);
        if (cases[i].msg && strcmp(last_msg, cases[i].msg))
            fail_msg("'%s': message '%s', want '%s'", cases[i].args, last_msg, cases[i].msg);
        if (i == 0) {
            assert_true(a.ratio == 0.5);
            assert_int_equal(a.count, 4);
            assert_int_equal(a.slots, 64);
            assert_int_equal(a.flag, 1);
            assert_int_equal(a.level, 2);
            assert_int_equal(a.checked, 1);
            assert_string_equal(a.name, "x");
        }
    }
}

/* A mode entry is found wherever it stands, never in an option's value, and its index in the
 * caller's argv (which stays in order) is given. */
static void test_mode(void **state)
{
    (void)state;
    static const struct {
        const char *args;
        int found, at;
    } cases[] = {
        {"--mode m", 1, 1},
        {"--name x --other 5 --mode m", 1, 5}, /* --other: an option of the mode alone */
        {"--name --mode", 0, 0},               /* the value of --name */
        {"--ratio 0.5 --mode=m", 1, 3},
        {"x -- --mode m", 0, 0},
        {"--ratio 0.5", 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[256], *argv[16] = {"t"}, *orig[16];
        int argc = 1, at = 0;
        snprintf(buf, sizeof buf, "%s", cases[i].args);
        for (char *save = NULL, *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save))
            argv[argc++] = t;
        argv[argc] = NULL;
        memcpy(orig, argv, sizeof orig);
        const struct eco_opt *m = eco_cli__opt_find_mode(&t_cmd, argc, argv, &at);
        if (!!m != cases[i].found || (m && at != cases[i].at))
            fail_msg("'%s': found %d at %d, want %d at %d", cases[i].args, !!m, at, cases[i].found,
                     cases[i].at);
        assert_memory_equal(orig, argv, sizeof orig);
        if (m)
            assert_int_equal(m->run(argc, argv, at), 40 + at + 1);
    }
}

static void test_help(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    eco_cli__opt_help(f, &t_cmd);
    fclose(f);
    assert_string_equal(text, "Heading:\n"
                              "  --name N            a name\n"
                              "  --ratio R           a ratio\n"
                              "                      in 0..1\n"
                              "  --budget W          watts\n"
                              "  --count N           a count\n"
                              "  -f, --flag          a flag\n"
                              "  --mode M            a mode\n"
                              "  -h, --help          this help\n");
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_mode),
        cmocka_unit_test(test_help),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
