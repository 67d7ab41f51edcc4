/* SPDX-License-Identifier: MIT */
/* `ecosched powerd`: the cluster power controller beside Slurm. Every period it reads the
 * jobs and nodes from Slurm (squeue/sinfo --json), each node's GPU power from its ecoschedd,
 * splits the cluster's GPU power budget among the running jobs with the power-capping
 * allocator (include/ecosched/powercap.h), sends the limits to the node daemons, keeps Slurm's
 * node Weight in step with warmth and efficiency, and runs the forecast power-down policy for
 * the SuspendProgram (`ecosched power suspend`). API on a unix socket. docs/slurm.md. This file:
 * the options and the loop; see powerd.h for the others. */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli/cli.h"
#include "cli/opts.h"
#include "ecosched/catalog.h"
#include "ecosched/cluster.h"
#include "ecosched/policy.h"
#include "ecosched/powercap.h"
#include "ecosched/rng.h"
#include "slurm_int.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/munge_auth.h"
#include "powerd.h"

static volatile sig_atomic_t stop_flag;
static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

/* The forecast power-down policy on the Slurm nodes: which idle nodes it would shut down now
 * (the SuspendProgram powers off only these) and which it would boot. */
static void powerdown(struct powerd *pd, double now, json_t *st)
{
    json_t *off = json_array(), *boot = json_array(), *idle = json_array();
    if (!pd->cluster || pd->cluster->n_nodes != pd->n_nodes) {
        struct eco_error err = {{0}};
        eco_cluster_destroy(pd->cluster);
        if (pd->pd_ops && pd->pd)
            pd->pd_ops->destroy(pd->pd);
        pd->pd = NULL;
        pd->cluster = eco_cluster_create();
        int type = eco_catalog_find("V100");
        for (size_t i = 0; pd->cluster && i < pd->n_nodes; i++)
            eco_cluster_add_nodes(pd->cluster, 1,
                                  pd->nodes[i].gres_gpus ? pd->nodes[i].gres_gpus : 1, type, &err);
        const char *params = NULL;
        pd->pd_ops = eco_powerdown_find(pd->forecast, &params);
        if (pd->cluster && pd->pd_ops)
            pd->pd = pd->pd_ops->create(pd->cluster, params, &err);
        if (!pd->pd)
            ECO_LOG(ECO_LOG_ERR, NULL, "power-down policy '%s': %s", pd->forecast, err.msg);
    }
    size_t n = pd->n_nodes;
    uint8_t *state = calloc(n ? n : 1, 1);
    double *since = calloc(n ? n : 1, sizeof *since), *times = calloc(n ? n : 1, sizeof *times);
    uint32_t *order = calloc(n ? n : 1, sizeof *order);
    struct eco_pd_decisions dec = {0};
    if (!pd->pd || !state || !since || !times || !order)
        goto out;
    struct eco_pd_view v = {.now_s = now, .cluster = pd->cluster};
    size_t ni = 0;
    for (size_t i = 0; i < n; i++) {
        const struct pnode *nd = &pd->nodes[i];
        state[i] = nd->powered_down ? ECO_NODE_OFF : ECO_NODE_ON;
        since[i] = nd->idle_since;
        if (!nd->powered_down) {
            v.free_on_gpus +=
                nd->gres_gpus - (nd->used_gpus < nd->gres_gpus ? nd->used_gpus : nd->gres_gpus);
            v.busy_gpus += nd->used_gpus;
        }
        if (nd->idle_since >= 0)
            order[ni++] = (uint32_t)i;
    }
    for (size_t a = 1; a < ni; a++) /* by idle_since (insertion sort: few idle nodes) */
        for (size_t b = a; b > 0 && since[order[b]] < since[order[b - 1]]; b--) {
            uint32_t t = order[b];
            order[b] = order[b - 1];
            order[b - 1] = t;
        }
    for (size_t a = 0; a < ni; a++) {
        times[a] = since[order[a]];
        json_array_append_new(idle, json_string(pd->nodes[order[a]].name));
    }
    v.node_state = state;
    v.idle_since = since;
    v.idle_nodes = order;
    v.n_idle_nodes = ni;
    v.idle_times = times;
    v.arrivals = pd->arrivals;
    v.arrived_gpus = pd->arrived_gpus;
    if (pd->pd_ops->decide(pd->pd, &v, &dec) == 0) {
        for (size_t k = 0; k < dec.n_shutdown; k++)
            json_array_append_new(off, json_string(pd->nodes[dec.shutdown[k]].name));
        for (size_t k = 0; k < dec.n_boot; k++)
            json_array_append_new(boot, json_string(pd->nodes[dec.boot[k]].name));
    }
out:
    json_object_set_new(st, "powerdown",
                        json_pack("{s:s,s:o,s:o,s:o}", "policy", pd->forecast, "idle", idle,
                                  "shutdown", off, "boot", boot));
    eco_pd_decisions_fini(&dec);
    free(state);
    free(since);
    free(times);
    free(order);
}

/* The answering nodes' measured GPU power (the silent ones are left out: unknown). */
static double cluster_power(const struct powerd *pd)
{
    double w = 0;
    for (size_t i = 0; i < pd->n_nodes; i++)
        w += pd->nodes[i].up ? pd->nodes[i].power_w : 0;
    return w;
}

static json_t *nodes_json(const struct powerd *pd)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < pd->n_nodes; i++) {
        const struct pnode *nd = &pd->nodes[i];
        json_array_append_new(a, json_pack("{s:s,s:b,s:f,s:f,s:i,s:f}", "name", nd->name,
                                           "responsive", nd->up, "power_w", nd->power_w,
                                           "max_power_w", nd->max_power_w, "gpus", (int)nd->n_gpus,
                                           "fallback_w", nd->held_w));
    }
    return a;
}

static json_t *jobs_json(const struct powerd *pd)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < pd->n_jobs; i++) {
        const struct pjob *j = &pd->jobs[i];
        json_t *o = json_pack("{s:I,s:i,s:b,s:o}", "job_id", (json_int_t)j->id, "gpus", (int)j->n,
                              "managed", j->managed, "limit_w",
                              j->managed ? json_real(j->limit_w) : json_null());
        if (o) {
            json_object_set_new(o, "deadline_s",
                                j->deadline_s >= 0 ? json_real(j->deadline_s) : json_null());
            json_object_set_new(o, "measured_speed",
                                isfinite(j->speed) ? json_real(j->speed) : json_null());
            json_object_set_new(o, "user", json_string(j->user));
            json_object_set_new(o, "power_w", json_real(j->power_w));
            json_object_set_new(o, "energy_j", json_real(j->energy_j));
        }
        json_array_append_new(a, o);
    }
    return a;
}

/* ---- capping metrics ---------------------------------------------------------------------- */

/* One metrics period ending now: the nodes' measured GPU power (a silent node counted at its
 * maximum draw, as the allocation sets it aside), the budget in force, the demand if every
 * running job's GPUs drew their maximum limit, and settling when the budget changed or a job
 * started since the last sample. The period's length is the time since the last sample (the
 * control period for the first). */
static void metrics_sample(struct powerd *pd, double now, double budget)
{
    double power = 0, demand = 0;
    for (size_t i = 0; i < pd->n_nodes; i++) {
        const struct pnode *nd = &pd->nodes[i];
        power += nd->up ? nd->power_w : nd->max_power_w;
    }
    demand = power;
    bool settling = pd->met_last_t >= 0 && budget != pd->met_budget_w;
    for (size_t k = 0; k < pd->n_jobs; k++) {
        struct pjob *j = &pd->jobs[k];
        if (!j->running)
            continue;
        settling |= !j->metered;
        j->metered = true;
        for (unsigned g = 0; g < j->n; g++) {
            const struct pnode *nd = &pd->nodes[j->node[g]];
            if (nd->up && j->gpu[g] < nd->n_gpus)
                demand += fmax(0, nd->gpu[j->gpu[g]].max_w - nd->gpu[j->gpu[g]].power_w);
        }
    }
    if (pd->met_last_t < 0)
        pd->met_logged_t = now; /* the first log line after METRICS_LOG_S */
    double dt = pd->met_last_t >= 0 ? now - pd->met_last_t : pd->period_s;
    pd->met_last_t = now;
    pd->met_budget_w = budget;
    if (eco_cap_metrics_add(&pd->met, dt, power, budget, demand, settling) < 0)
        ECO_LOG(ECO_LOG_WARN, NULL, "metrics: period skipped (power %g W, demand %g W, %g s)",
                power, demand, dt);
}

static json_t *metrics_json(const struct powerd *pd)
{
    struct eco_cap_metrics_report r;
    eco_cap_metrics_report(&pd->met, &r);
    return json_pack("{s:I,s:I,s:I,s:I,s:f,s:f,s:f,s:f,s:f,s:f,s:f}", "periods",
                     (json_int_t)r.periods, "binding_periods", (json_int_t)r.binding_periods,
                     "settling_periods", (json_int_t)r.settling_periods, "above_periods",
                     (json_int_t)r.above_periods, "mae_binding_pct", r.mae_binding_pct,
                     "mae_all_pct", r.mae_all_pct, "overshoot_pct", r.overshoot_pct,
                     "overshoot_raw_pct", r.overshoot_raw_pct, "above_s", r.above_s, "above_kwh",
                     r.above_kwh, "above_share", r.above_share);
}

static void metrics_log(const struct powerd *pd)
{
    struct eco_cap_metrics_report r;
    eco_cap_metrics_report(&pd->met, &r);
    ECO_LOG(ECO_LOG_INFO, NULL,
            "metrics: %" PRIu64 " periods (%" PRIu64 " binding, %" PRIu64 " settling): MAE %.3f%% "
            "binding, %.3f%% all; overshoot %.3f%% settled, %.3f%% raw; above budget %.0f s, "
            "%.4f kWh, %.3f of periods",
            r.periods, r.binding_periods, r.settling_periods, r.mae_binding_pct, r.mae_all_pct,
            r.overshoot_pct, r.overshoot_raw_pct, r.above_s, r.above_kwh, r.above_share);
}

static void period(struct powerd *pd)
{
    double now = eco_mono_s();
    pthread_mutex_lock(&pd->lock);
    double budget = pd->budget_w;
    pthread_mutex_unlock(&pd->lock);
    json_t *st = json_object();
    ecod__grid_refresh(&pd->grid, now); /* a signal file its operator's job rewrote */
    double wall = eco_wall_s(), set_w = budget;
    budget = eco_powerd__dr_budget(pd, budget, wall); /* demand response: lower when high */
    json_object_set_new(st, "grid", eco_powerd__grid_json(pd, set_w, wall));
    bool slurm_ok = eco_powerd__read_nodes(pd, now) == 0;
    eco_powerd__read_node_power(pd);
    slurm_ok = slurm_ok && eco_powerd__read_jobs(pd) == 0;
    if (slurm_ok) {
        eco_powerd__job_power(pd);
        metrics_sample(pd, now, budget);
        if (eco_powerd__allocate(pd, budget, (double)time(NULL), st) == 0) {
            /* the leases first: a node in fallback ends it before taking the limits */
            eco_powerd__shares(pd, budget);
            eco_powerd__send_nodes(pd); /* leases and limits, one request a node */
        }
        if (pd->weights)
            eco_powerd__update_weights(pd);
        powerdown(pd, now, st);
    } else {
        ECO_LOG(ECO_LOG_WARN, NULL,
                "Slurm did not answer (squeue/sinfo --json); limits left as they are");
    }
    json_object_set_new(st, "slurm", json_boolean(slurm_ok));
    json_object_set_new(st, "nodes", nodes_json(pd));
    json_object_set_new(st, "power_w", json_real(cluster_power(pd)));
    json_object_set_new(st, "jobs", jobs_json(pd));
    json_object_set_new(st, "arrivals", json_integer((json_int_t)pd->arrivals));
    json_object_set_new(st, "metrics", metrics_json(pd));
    if (pd->met_last_t >= 0 && now - pd->met_logged_t >= METRICS_LOG_S) {
        metrics_log(pd);
        pd->met_logged_t = now;
    }
    pthread_mutex_lock(&pd->lock);
    json_decref(pd->status);
    pd->status = st;
    pthread_mutex_unlock(&pd->lock);
}

/* The command line, parsed by the CLI's option table (src/cli/opts.c). */
struct powerd_args {
    double budget_w, period_s, node_timeout_s, node_lease_s, dr_above, dr_scale, dr_floor_w;
    const char *nodes, *socket, *socket_group, *power_down, *policy, *metrics_listen;
    const char *carbon, *price, *carbon_url, *price_url, *carbon_policy;
    const char *node_auth, *munge_socket, *node_ca;
    int no_weights;
};

#define A(f) offsetof(struct powerd_args, f)
static const struct eco_opt powerd_opts[] = {
    {.name = "budget",
     .kind = ECO_OPT_NUM,
     .lo = 0,
     .hi = 1e9,
     .flags = ECO_OPT_LO_OPEN,
     .offset = A(budget_w),
     .arg = "WATTS",
     .help = "GPU power budget of the cluster (change it at runtime with\n"
             "'ecosched power budget WATTS')"},
    {.name = "period",
     .kind = ECO_OPT_NUM,
     .lo = 0,
     .hi = 3600,
     .flags = ECO_OPT_LO_OPEN,
     .offset = A(period_s),
     .arg = "SECONDS",
     .noun = "a number of seconds",
     .help = "control period (default 5)"},
    {.name = "node-timeout",
     .kind = ECO_OPT_NUM,
     .lo = 0,
     .hi = 60,
     .flags = ECO_OPT_LO_OPEN,
     .offset = A(node_timeout_s),
     .arg = "SECONDS",
     .noun = "a number of seconds",
     .help = "bound of each request to a node daemon, all sent at once;\n"
             "shorter than --period (default 0.5, at most half the period):\n"
             "a node silent for it"
             " is down for the period"},
    {.name = "node-lease",
     .kind = ECO_OPT_NUM,
     .lo = 1,
     .hi = 86400,
     .offset = A(node_lease_s),
     .arg = "SECONDS",
     .noun = "a number of seconds",
     .help = "how long a node daemon waits for powerd before it caps its\n"
             "jobs under its share of the budget (default 3 periods; longer\n"
             "than --period + --node-timeout)"},
    {.name = "nodes",
     .kind = ECO_OPT_STR,
     .offset = A(nodes),
     .arg = "PATTERN",
     .help = "where each node's ecoschedd answers; %n is the node name: a\n"
             "unix socket path or an http:// URL (default\n/run/ecosched/%n.sock)"},
    {.name = "node-auth",
     .kind = ECO_OPT_STR,
     .offset = A(node_auth),
     .arg = "A",
     .help = "none (default: unix sockets, loopback) or munge: a fresh MUNGE\n"
             "credential on every node request, for the nodes' cluster_listen"},
    {.name = "munge-socket",
     .kind = ECO_OPT_STR,
     .offset = A(munge_socket),
     .arg = "PATH",
     .help = "munged's socket for --node-auth munge (default munge's own)"},
    {.name = "node-ca",
     .kind = ECO_OPT_STR,
     .offset = A(node_ca),
     .arg = "FILE",
     .help = "CA certificates (PEM) of https:// node URLs (default: the\nsystem's)"},
    {.name = "socket",
     .kind = ECO_OPT_STR,
     .offset = A(socket),
     .arg = "PATH",
     .help = "API socket, mode 0660 (default " ECO_POWERD_SOCKET ")"},
    {.name = "socket-group",
     .kind = ECO_OPT_STR,
     .offset = A(socket_group),
     .arg = "NAME",
     .help = "group owning the API socket: its members may read the status\n"
             "(every running job's user and energy); include Slurm's\n"
             "SlurmUser for 'ecosched power suspend' (default: powerd's group)"},
    {.name = "metrics-listen",
     .kind = ECO_OPT_STR,
     .offset = A(metrics_listen),
     .arg = "HOST:PORT",
     .help = "also serve GET /metrics (read-only, without the jobs' users)\n"
             "on this TCP address, for Prometheus (default: none)"},
    {.name = "power-down",
     .kind = ECO_OPT_STR,
     .offset = A(power_down),
     .arg = "P",
     .help = "power-down policy for 'ecosched power suspend' (default\n"
             "forecast; docs/policies/power-down.md)"},
    {.name = "policy",
     .kind = ECO_OPT_STR,
     .offset = A(policy),
     .arg = "P[:PARAMS]",
     .help = "power capper of the family `ecosched sim --power-policy`\n"
             "takes (default " DEFAULT_CAPPER "; ecosched sim --help lists them)"},
    {.name = "carbon",
     .kind = ECO_OPT_STR,
     .offset = A(carbon),
     .arg = "FILE",
     .help = "carbon signal (docs/formats/grid-signal.md), re-read when\nit changes"},
    {.name = "price",
     .kind = ECO_OPT_STR,
     .offset = A(price),
     .arg = "FILE",
     .help = "price signal, the same way"},
    {.name = "carbon-url",
     .kind = ECO_OPT_STR,
     .offset = A(carbon_url),
     .arg = "URL",
     .help = "the carbon signal from a loopback http:// source"},
    {.name = "price-url",
     .kind = ECO_OPT_STR,
     .offset = A(price_url),
     .arg = "URL",
     .help = "the price signal from one"},
    {.name = "carbon-policy",
     .kind = ECO_OPT_STR,
     .offset = A(carbon_policy),
     .arg = "P",
     .help = "none, shift, lwa or threshold: holds jobs submitted with\n"
             "--comment=ecosched:max-delay=D, D at most 31d; releases\n"
             "only its own holds, never JobHeldAdmin (default none)"},
    {.name = "dr-above",
     .kind = ECO_OPT_NUM,
     .lo = -1e9,
     .hi = 1e9,
     .offset = A(dr_above),
     .arg = "VALUE",
     .help = "demand response: while the signal (carbon, else price) is\n"
             "above VALUE the budget is cut to --dr-scale of itself"},
    {.name = "dr-scale",
     .kind = ECO_OPT_NUM,
     .lo = 0,
     .hi = 1,
     .offset = A(dr_scale),
     .arg = "F",
     .noun = "a fraction",
     .help = "the budget's fraction in high hours (default 0.5)"},
    {.name = "dr-floor",
     .kind = ECO_OPT_NUM,
     .lo = 0,
     .hi = 1e9,
     .offset = A(dr_floor_w),
     .arg = "WATTS",
     .help = "the guaranteed floor under the cut budget (required with\n--dr-above)"},
    {.name = "no-weights",
     .kind = ECO_OPT_FLAG,
     .lo = 1,
     .offset = A(no_weights),
     .help = "leave Slurm's node Weight alone"},
    {.name = "help", .short_name = 'h', .kind = ECO_OPT_HELP, .help = "this help"},
    {0},
};
#undef A

static void usage(FILE *f);

/* With the budget cut in high hours, half: the order of the flexible share demand-response
 * programmes ask of a data centre's load; the operator's --dr-scale overrides it. */
#define DR_DEFAULT_SCALE 0.5
/* A *_url source is fetched every 5 minutes (as ecoschedd's signal_fetch_s default). */
#define GRID_FETCH_S 300.0

/* The grid options into pd: 0, or an exit status (printed). */
static int setup_grid(struct powerd *pd, const struct powerd_args *a)
{
    struct eco_error err = {{0}};
    const char *urls[] = {a->carbon_url, a->price_url}, *why;
    for (size_t i = 0; i < 2; i++)
        if (urls[i] && (why = ecod__grid_check_url(urls[i]))) {
            eco_cli__err("powerd: --%s-url '%s' %s", i ? "price" : "carbon", urls[i], why);
            return ECO_EXIT_USAGE;
        }
    if (!isnan(a->dr_above) && isnan(a->dr_floor_w)) {
        eco_cli__err("powerd: --dr-above needs --dr-floor WATTS (the guaranteed floor)");
        return ECO_EXIT_USAGE;
    }
    if (!isnan(a->dr_above) && !a->carbon && !a->price && !a->carbon_url && !a->price_url) {
        eco_cli__err("powerd: --dr-above needs a signal (--carbon, --price or their -url)");
        return ECO_EXIT_USAGE;
    }
    pd->dr_above = isnan(a->dr_above) ? -INFINITY : a->dr_above;
    pd->dr_scale = a->dr_scale;
    pd->dr_floor_w = isnan(a->dr_floor_w) ? 0 : a->dr_floor_w;
    /* a URL's answers are cached beside the API socket (a directory powerd owns), not in a
     * shared /tmp */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", pd->socket);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, "%s", slash ? "/" : ".");
    if (ecod__grid_setup(&pd->grid, a->carbon, a->carbon_url, a->price, a->price_url,
                         a->carbon_policy, 3600, GRID_FETCH_S, dir, eco_mono_s(), &err) < 0) {
        eco_cli__err("powerd: %s", err.msg);
        return ECO_EXIT_USAGE;
    }
    return 0;
}

/* --node-auth, --munge-socket and --node-ca into pd: 0, or an exit status (printed). munged
 * must answer now when asked for: a powerd whose every node request fails is a start error. */
static int setup_node_auth(struct powerd *pd, const struct powerd_args *a)
{
    struct eco_error err = {{0}};
    char hdr[ECO_MUNGE_AUTH_CRED_MAX + 64];
    pd->node_ca = a->node_ca;
    if (a->node_ca && access(a->node_ca, R_OK) < 0) {
        eco_cli__err("powerd: --node-ca %s: %s", a->node_ca, strerror(errno));
        return ECO_EXIT_USAGE;
    }
    if (!a->node_auth || !strcmp(a->node_auth, "none")) {
        if (a->munge_socket) {
            eco_cli__err("powerd: --munge-socket needs --node-auth munge");
            return ECO_EXIT_USAGE;
        }
        return 0;
    }
    if (strcmp(a->node_auth, "munge")) {
        eco_cli__err("powerd: --node-auth: '%s' is not none or munge", a->node_auth);
        return ECO_EXIT_USAGE;
    }
    for (size_t k = 0; k < POWERD_MUNGE_CTX; k++)
        if (!(pd->munge[k] = eco_munge_create(a->munge_socket, &err)) ||
            eco_munge_header(pd->munge[k], "GET", "/v1/node", NULL, 0, hdr, sizeof hdr, &err) < 0) {
            eco_cli__err("powerd: --node-auth munge: %s", err.msg);
            return ECO_EXIT_FAIL;
        }
    return 0;
}

static const struct eco_opt_cmd powerd_cmd = {
    .prefix = "powerd",
    .opts = powerd_opts,
    .help_col = 21,
    .needs_value = "powerd: option '%s' needs a value (try 'ecosched powerd --help')",
    .unknown = "powerd: unknown option '%s' (try 'ecosched powerd --help')",
    .usage = usage,
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ecosched powerd --budget WATTS [OPTIONS]\n\n"
            "Cluster GPU power controller beside Slurm: every period it reads the running jobs\n"
            "(squeue --json) and nodes (sinfo --json), each node's GPU power from its ecoschedd,\n"
            "splits the budget among the jobs' GPUs with the power-capping allocator and sends\n"
            "the limits to the node daemons, all nodes at once. A node whose daemon does not\n"
            "answer within --node-timeout keeps its limits; its maximum draw is set aside from\n"
            "the budget. docs/slurm/powerd.md.\n\n"
            "options:\n");
    eco_cli__opt_help(f, &powerd_cmd);
}

int eco_cli__cmd_powerd(int argc, char **argv)
{
    eco_log_setup("powerd", false);
    struct powerd_args a = {.socket = ECO_POWERD_SOCKET,
                            .nodes = "/run/ecosched/%n.sock",
                            .power_down = "forecast",
                            .period_s = 5,
                            .node_timeout_s = NAN,
                            .node_lease_s = NAN,
                            .policy = DEFAULT_CAPPER,
                            .dr_above = NAN,
                            .dr_scale = DR_DEFAULT_SCALE,
                            .dr_floor_w = NAN};
    int rc = eco_cli__opt_parse(&powerd_cmd, argc, argv, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    struct powerd pd = {.socket = a.socket,
                        .node_pattern = a.nodes,
                        .forecast = a.power_down,
                        .period_s = a.period_s,
                        .node_timeout_s = a.node_timeout_s,
                        .node_lease_s =
                            isnan(a.node_lease_s) ? LEASE_PERIODS * a.period_s : a.node_lease_s,
                        .budget_w = a.budget_w,
                        .met_last_t = -1,
                        .policy = a.policy,
                        .socket_gid = (gid_t)-1,
                        .weights = !a.no_weights};
    rc = ECO_EXIT_FAIL;
    struct MHD_Daemon *mhd = NULL, *mhd_metrics = NULL;
    if (optind < argc) {
        eco_cli__err("powerd: unexpected argument '%s'", argv[optind]);
        return ECO_EXIT_USAGE;
    }
    if (a.socket_group) {
        struct group *g = getgrnam(a.socket_group);
        if (!g) {
            eco_cli__err("powerd: --socket-group '%s': no such group", a.socket_group);
            return ECO_EXIT_USAGE;
        }
        pd.socket_gid = g->gr_gid;
    }
    if (isnan(pd.node_timeout_s)) /* not given: the default, or half a shorter period */
        pd.node_timeout_s = fmin(NODE_TIMEOUT_S, pd.period_s / 2);
    if (pd.node_timeout_s >= pd.period_s) {
        eco_cli__err("powerd: --node-timeout %g must be shorter than --period %g (seconds)",
                     pd.node_timeout_s, pd.period_s);
        return ECO_EXIT_USAGE;
    }
    if (!(pd.node_lease_s > pd.period_s + pd.node_timeout_s && pd.node_lease_s <= 86400)) {
        eco_cli__err("powerd: --node-lease %g must be longer than --period + --node-timeout "
                     "(%g s) and at most 86400 (seconds)",
                     pd.node_lease_s, pd.period_s + pd.node_timeout_s);
        return ECO_EXIT_USAGE;
    }
    if (pd.budget_w <= 0) {
        eco_cli__err("powerd: --budget WATTS is required");
        return ECO_EXIT_USAGE;
    }
    const char *params;
    if (!eco_powerdown_find(pd.forecast, &params)) {
        eco_cli__err("powerd: --power-down: unknown policy '%s'", pd.forecast);
        return ECO_EXIT_USAGE;
    }
    struct eco_error perr = {{0}};
    if (!(pd.capper = eco_capper_create(pd.policy, &perr))) {
        eco_cli__err("powerd: --policy: %s", perr.msg);
        return ECO_EXIT_USAGE;
    }
    eco_rng_init(&pd.rng, (uint64_t)time(NULL));
    pd.last_budget_w = pd.budget_w;
    if (!strstr(pd.node_pattern, "%n")) {
        eco_capper_destroy(pd.capper);
        eco_cli__err("powerd: --nodes must contain %%n (the node name), got '%s'", pd.node_pattern);
        return ECO_EXIT_USAGE;
    }
    pthread_mutex_init(&pd.lock, NULL);
    pd.nodes = calloc(MAX_NODES, sizeof *pd.nodes);
    pd.jobs = calloc(MAX_JOBS, sizeof *pd.jobs);
    pd.defer = calloc(MAX_JOBS, sizeof *pd.defer);
    if (!pd.nodes || !pd.jobs || !pd.defer)
        goto out;
    if ((rc = setup_grid(&pd, &a)) != 0 || (rc = setup_node_auth(&pd, &a)) != 0)
        goto out;
    rc = ECO_EXIT_FAIL;
    if (!(mhd = eco_powerd__api_start(&pd)))
        goto out;
    bool bad_arg = false;
    if (a.metrics_listen &&
        !(mhd_metrics = eco_powerd__metrics_start(&pd, a.metrics_listen, &bad_arg))) {
        rc = bad_arg ? ECO_EXIT_USAGE : ECO_EXIT_FAIL;
        goto out;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    ECO_LOG(ECO_LOG_INFO, NULL,
            "budget %.0f W, period %g s, capper %s, nodes at %s (timeout %g s, lease %g s%s), "
            "API on %s%s%s",
            pd.budget_w, pd.period_s, pd.policy, pd.node_pattern, pd.node_timeout_s,
            pd.node_lease_s, pd.munge[0] ? ", MUNGE credentials" : "", pd.socket,
            a.metrics_listen ? ", metrics on " : "", a.metrics_listen ? a.metrics_listen : "");
    while (!stop_flag) {
        double t0 = eco_mono_s();
        period(&pd);
        double left = pd.period_s - (eco_mono_s() - t0);
        while (left > 0 && !stop_flag) {
            struct timespec ts = {.tv_sec = 0, .tv_nsec = 100000000};
            nanosleep(&ts, NULL);
            left -= 0.1;
        }
    }
    metrics_log(&pd);
    ECO_LOG(ECO_LOG_INFO, NULL, "stopping");
    rc = 0;
out:
    if (mhd_metrics)
        MHD_stop_daemon(mhd_metrics);
    if (mhd)
        MHD_stop_daemon(mhd);
    if (pd.socket)
        unlink(pd.socket);
    if (pd.pd)
        pd.pd_ops->destroy(pd.pd);
    eco_cluster_destroy(pd.cluster);
    eco_capper_destroy(pd.capper);
    json_decref(pd.status);
    free(pd.nodes);
    free(pd.jobs);
    free(pd.defer);
    ecod__grid_fini(&pd.grid);
    eco_powerd__nodes_fini(&pd);
    for (size_t k = 0; k < POWERD_MUNGE_CTX; k++)
        eco_munge_destroy(pd.munge[k]);
    pthread_mutex_destroy(&pd.lock);
    return rc;
}
