/* SPDX-License-Identifier: MIT */
/* ecoschedd's POST /v1/node/limits body (src/daemon/api_node.c, ecod__api_node_check_limits)
 * alone, on a daemon of 4 GPUs of a stand-in platform (GPU g: 100..300 W, default 250 W): the
 * limits and lease each body gives, or the field a bad one is refused naming; the checks never
 * set a limit (the platform's set_power_limit fails the test). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <string.h>
#include "daemon/api.h"
#include "daemon/ecod.h"
#include "platform/platform.h"

static int range(void *state, unsigned gpu, struct eco_power_range *out, struct eco_error *err)
{
    (void)state;
    if (gpu >= 4)
        return eco_errorf(err, -ENODEV, "stand-in: no GPU %u", gpu);
    *out = (struct eco_power_range){.min_w = 100, .max_w = 300, .default_w = 250};
    return 0;
}

static int set_limit(void *state, unsigned gpu, double w, struct eco_error *err)
{
    (void)state, (void)gpu, (void)w, (void)err;
    fail_msg("the checks set a limit (GPU %u, %g W)", gpu, w);
    return -EIO;
}

static const struct eco_platform_ops ops = {
    .name = "stand-in", .power_range = range, .set_power_limit = set_limit};

static void test_bodies(void **state)
{
    (void)state;
    struct eco_platform p = {.ops = &ops};
    struct ecod d = {.n_gpus = 4, .platform = &p};
    static const struct {
        const char *body;
        const char *field; /* NULL: accepted */
        double w[4];       /* accepted: each GPU's new limit, 0 none */
    } rows[] = {
        {"{\"limits_w\": {\"0\": 150, \"3\": 200}}", NULL, {150, 0, 0, 200}},
        {"{\"limits_w\": {}}", NULL, {0}},
        {"{\"limits_w\": {\"2\": \"default\"}, \"fallback_w\": 500, \"lease_s\": 15}",
         NULL,
         {0, 0, 250, 0}},
        {"{\"limits_w\": {\"1\": 100, \"2\": 300}, \"fallback_w\": 0, \"lease_s\": 0}",
         NULL,
         {0, 100, 300, 0}},
        {"{}", "limits_w", {0}},
        {"{\"limits_w\": [150]}", "limits_w", {0}},
        {"{\"limits_w\": {\"0\": 150}, \"power_limit_w\": 1}", "power_limit_w", {0}},
        {"{\"\": 17, \"limits_w\": {\"0\": 150}}", "body", {0}},
        {"{\"limits_w\": {\"0\": 150, \"3\": 301}}", "limits_w.3", {0}},
        {"{\"limits_w\": {\"0\": 99}}", "limits_w.0", {0}},
        {"{\"limits_w\": {\"1\": \"max\"}}", "limits_w.1", {0}},
        {"{\"limits_w\": {\"1\": null}}", "limits_w.1", {0}},
        {"{\"limits_w\": {\"4\": 150}}", "limits_w.4", {0}},
        {"{\"limits_w\": {\"-1\": 150}}", "limits_w.-1", {0}},
        {"{\"limits_w\": {\"03\": 150}}", "limits_w.03", {0}},
        {"{\"limits_w\": {\"+3\": 150}}", "limits_w.+3", {0}},
        {"{\"limits_w\": {\"\": 150}}", "limits_w.", {0}},
        {"{\"limits_w\": {\"x\": 150}}", "limits_w.x", {0}},
        {"{\"limits_w\": {\"99999999999999999999\": 150}}", "limits_w.99999999999999999999", {0}},
        {"{\"limits_w\": {\"0\": 150}, \"fallback_w\": 500}", "lease_s", {0}},
        {"{\"limits_w\": {\"0\": 150}, \"lease_s\": 15}", "fallback_w", {0}},
        {"{\"limits_w\": {\"0\": 150}, \"fallback_w\": -1, \"lease_s\": 15}", "fallback_w", {0}},
        {"{\"limits_w\": {\"0\": 150}, \"fallback_w\": 500, \"lease_s\": 0.5}", "lease_s", {0}},
        {"{\"limits_w\": {\"0\": 150}, \"fallback_w\": \"x\", \"lease_s\": 15}", "fallback_w", {0}},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct eco_error err = {{0}};
        char field[48];
        double w[4];
        json_t *b = ecod__api_node_body(rows[i].body, strlen(rows[i].body), &err);
        assert_non_null(b);
        int rc = ecod__api_node_check_limits(&d, b, w, field, sizeof field, &err);
        json_decref(b);
        if (!rows[i].field) {
            if (rc != 0)
                fail_msg("%s: refused (%s: %s)", rows[i].body, field, err.msg);
            for (unsigned g = 0; g < 4; g++)
                if (rows[i].w[g] > 0 ? w[g] != rows[i].w[g] : !isnan(w[g]))
                    fail_msg("%s: GPU %u: %g W", rows[i].body, g, w[g]);
            continue;
        }
        if (rc != -EINVAL || strcmp(field, rows[i].field))
            fail_msg("%s: rc %d, field '%s' (want %s): %s", rows[i].body, rc, field, rows[i].field,
                     err.msg);
        /* the message names the field too, for a reader of the 400 */
        if (!strstr(err.msg, rows[i].field))
            fail_msg("%s: message '%s' does not name %s", rows[i].body, err.msg, rows[i].field);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bodies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
