/* SPDX-License-Identifier: MIT */
/* Fuzz target: ecoschedd's request bodies (src/daemon/api.c, api_node.c; docs/http-api.md),
 * each input read as every POST body: a submit (POST /v1/jobs), a node power budget
 * (POST /v1/node/budget, applied to a node budget of its own), a GPU limit
 * (POST /v1/gpus/N/limit), a node's limits (POST /v1/node/limits, checked) and a Slurm job (POST
 * /v1/slurm/jobs), by the functions the routes call, on a daemon of 4 GPUs without store, sockets
 * or platform calls that act. */
#include "fuzz_util.h"
#include <errno.h>
#include <math.h>
#include "daemon/api.h"
#include "daemon/nodecap.h"

static struct ecod d;

static void setup(void)
{
    struct eco_error err = {{0}};
    d.n_gpus = 4;
    d.power_policy = "mpc";
    d.fake_run_fd = -1;
    FUZZ_CHECK(eco_platform_open("none", NULL, &d.platform, &err) == 0);
    FUZZ_CHECK(ecod__nodecap_init(&d, &err) == 0);
}

static void submit(const uint8_t *data, size_t size)
{
    struct ecod_submit s;
    struct eco_error err = {{0}};
    const char *bad =
        ecod__api_submit_parse(&d, (const char *)data, size, getuid(), getgid(), &s, &err);
    if (!bad) {
        FUZZ_CHECK(s.job.cwd && s.job.cwd[0] == '/');
        FUZZ_CHECK(s.job.gpus <= d.n_gpus);
        FUZZ_CHECK(s.job.max_delay_s >= 0 && s.job.max_delay_s <= 31 * 86400.0);
        json_t *argv = json_loads(s.job.argv_json, 0, NULL);
        FUZZ_CHECK(json_is_array(argv) && json_array_size(argv) > 0);
        json_decref(argv);
    } else {
        FUZZ_CHECK(err.msg[0]);
    }
    ecod__api_submit_fini(&s);
}

static void node_bodies(const uint8_t *data, size_t size)
{
    struct eco_error err = {{0}};
    json_t *b = ecod__api_node_body((const char *)data, size, &err);
    if (!b) {
        FUZZ_CHECK(err.msg[0]);
        return;
    }
    if (ecod__api_node_budget(&d, b, &err))
        FUZZ_CHECK(err.msg[0]);
    FUZZ_CHECK(ecod__nodecap_set(&d, 0, "mpc", &err) == 0); /* as it was, for the next input */

    const struct eco_power_range pr = {.min_w = 100, .max_w = 300, .default_w = 250};
    double w = 0;
    if (!ecod__api_node_check_limit(b, &pr, &w, &err))
        FUZZ_CHECK(w >= pr.min_w - 1e-9 && w <= pr.max_w + 1e-9);

    double lw[4];
    char field[48];
    if (ecod__api_node_check_limits(&d, b, lw, field, sizeof field, &err) == -EINVAL)
        FUZZ_CHECK(err.msg[0] && field[0]);

    json_int_t job = 0;
    uid_t uid;
    gid_t gid;
    uint32_t gpus[ECO_GPUSEL_MAX_GPUS], n = 0;
    const json_t *cap = NULL;
    if (!ecod__api_node_check_register(&d, b, &job, &uid, &gid, gpus, &n, &cap, &err)) {
        FUZZ_CHECK(job > 0 && n <= ECO_GPUSEL_MAX_GPUS);
        for (uint32_t i = 0; i < n; i++)
            FUZZ_CHECK(gpus[i] < d.n_gpus);
    }
    json_decref(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!d.platform)
        setup();
    if (size > ECOD_MAX_BODY) /* the server answers 413 before reading it */
        return 0;
    submit(data, size);
    node_bodies(data, size);
    return 0;
}
