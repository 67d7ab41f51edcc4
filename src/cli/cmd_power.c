/* SPDX-License-Identifier: MIT */
/* `ecosched power budget WATTS | status | suspend HOSTLIST | resume HOSTLIST`: the client of
 * `ecosched powerd`, and Slurm's SuspendProgram/ResumeProgram applying the forecast reserve
 * (docs/slurm.md). */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "util/hostlist.h"
#include "util/http_client.h"
#include "cli.h"

/* powerd answers from memory; 5 s covers a loaded controller host. */
#define POWERD_TIMEOUT_MS 5000

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ecosched power COMMAND [OPTIONS]\n\n"
            "Client of the cluster power controller 'ecosched powerd' (docs/slurm.md).\n\n"
            "commands:\n"
            "  budget WATTS       set the cluster's GPU power budget now\n"
            "  status [--json]    budget, measured power, nodes, jobs and their limits\n"
            "  suspend HOSTLIST   Slurm SuspendProgram: powers off (--command) the nodes the\n"
            "                     forecast policy would shut down, keeps its warm reserve on\n"
            "  resume HOSTLIST    Slurm ResumeProgram: powers on (--command) every node listed\n\n"
            "options:\n"
            "  --socket PATH      powerd's API socket (default $ECOSCHED_POWERD_SOCKET, else %s)\n"
            "  --command CMD      suspend/resume: shell command run per node, %%n the node name\n"
            "                     (default: $ECOSCHED_POWER_OFF_CMD / $ECOSCHED_POWER_ON_CMD)\n"
            "  --json             status: the JSON answer as it is\n",
            ECO_POWERD_SOCKET);
}

static json_t *call(const char *sock, const char *path, const char *body, long *st)
{
    struct eco_error e = {{0}};
    json_t *o = eco_http_json(sock, path, body, POWERD_TIMEOUT_MS, st, &e);
    if (!o)
        eco_cli__err("powerd: %s", e.msg);
    else if (*st >= 300)
        eco_cli__err("powerd: %s", json_string_value(json_object_get(o, "error")));
    return o;
}

static int budget(const char *sock, const char *arg)
{
    char *end, body[64];
    long st;
    double w = strtod(arg, &end);
    if (!*arg || *end || !isfinite(w) || w <= 0 || w > 1e9) {
        eco_cli__err("power budget: WATTS must be a number > 0 and <= 1e9, got '%s'", arg);
        return ECO_EXIT_USAGE;
    }
    snprintf(body, sizeof body, "{\"budget_w\":%.17g}", w);
    json_t *o = call(sock, "/v1/budget", body, &st);
    int rc = o && st == 200 ? 0 : st == 400 ? ECO_EXIT_USAGE : ECO_EXIT_FAIL;
    if (rc == 0)
        printf("budget %.0f W (was %.0f W)\n", json_number_value(json_object_get(o, "budget_w")),
               json_number_value(json_object_get(o, "previous_w")));
    json_decref(o);
    return rc;
}

static int status(const char *sock, bool as_json)
{
    long st;
    json_t *o = call(sock, "/v1/status", NULL, &st), *v;
    size_t i;
    if (!o || st != 200) {
        json_decref(o);
        return ECO_EXIT_FAIL;
    }
    if (as_json) {
        json_dumpf(o, stdout, JSON_INDENT(2));
        putchar('\n');
        json_decref(o);
        return 0;
    }
    printf("budget %.0f W, measured %.0f W, set aside %.0f W (silent nodes), for jobs %.0f W\n",
           json_number_value(json_object_get(o, "budget_w")),
           json_number_value(json_object_get(o, "measured_w")),
           json_number_value(json_object_get(o, "set_aside_w")),
           json_number_value(json_object_get(o, "for_jobs_w")));
    json_t *m = json_object_get(o, "metrics");
    if (json_is_object(m))
        printf("metrics over %lld periods: MAE %.3f%% binding, %.3f%% all; overshoot %.3f%% "
               "settled, %.3f%% raw; above budget %.0f s, %.4f kWh\n",
               (long long)json_integer_value(json_object_get(m, "periods")),
               json_number_value(json_object_get(m, "mae_binding_pct")),
               json_number_value(json_object_get(m, "mae_all_pct")),
               json_number_value(json_object_get(m, "overshoot_pct")),
               json_number_value(json_object_get(m, "overshoot_raw_pct")),
               json_number_value(json_object_get(m, "above_s")),
               json_number_value(json_object_get(m, "above_kwh")));
    printf("%-16s %-10s %9s %9s\n", "NODE", "DAEMON", "POWER_W", "MAX_W");
    json_array_foreach(json_object_get(o, "nodes"), i, v)
        printf("%-16s %-10s %9.0f %9.0f\n", json_string_value(json_object_get(v, "name")),
               json_is_true(json_object_get(v, "responsive")) ? "answers" : "silent",
               json_number_value(json_object_get(v, "power_w")),
               json_number_value(json_object_get(v, "max_power_w")));
    printf("%-10s %5s %9s\n", "JOB", "GPUS", "LIMIT_W");
    json_array_foreach(json_object_get(o, "jobs"), i, v)
    {
        json_t *l = json_object_get(v, "limit_w");
        char lim[32] = "-";
        if (json_is_number(l))
            snprintf(lim, sizeof lim, "%.0f", json_number_value(l));
        printf("%-10lld %5d %9s\n", (long long)json_integer_value(json_object_get(v, "job_id")),
               (int)json_integer_value(json_object_get(v, "gpus")), lim);
    }
    json_decref(o);
    return 0;
}

/* Runs `cmd` with %n replaced by node; its exit status. */
static int run_for(const char *cmd, const char *node)
{
    char line[4096];
    size_t n = 0;
    for (const char *p = cmd; *p && n + 1 < sizeof line; p++) {
        if (p[0] == '%' && p[1] == 'n') {
            n += (size_t)snprintf(line + n, sizeof line - n, "%s", node);
            if (n >= sizeof line)
                n = sizeof line - 1;
            p++;
        } else {
            line[n++] = *p;
        }
    }
    line[n] = '\0';
    int st = system(line);
    return st == -1 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static bool listed(json_t *a, const char *name)
{
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v)
    {
        if (json_is_string(v) && !strcmp(json_string_value(v), name))
            return true;
    }
    return false;
}

/* SuspendProgram / ResumeProgram. */
static int power_nodes(const char *sock, const char *list, const char *cmd, bool off)
{
    char **names = NULL;
    size_t n = 0;
    long st = 0;
    json_t *pdown = NULL, *o = NULL;
    int rc = 0;
    if (eco_hostlist_expand(list, &names, &n) < 0) {
        eco_cli__err("power %s: bad hostlist '%s'", off ? "suspend" : "resume", list);
        return ECO_EXIT_USAGE;
    }
    if (off) {
        o = call(sock, "/v1/status", NULL, &st);
        pdown = st == 200 ? json_object_get(o, "powerdown") : NULL;
        if (!pdown)
            eco_cli__err("power suspend: no forecast from powerd; powering off every node listed");
    }
    for (size_t i = 0; i < n; i++) {
        if (off && pdown && listed(json_object_get(pdown, "idle"), names[i]) &&
            !listed(json_object_get(pdown, "shutdown"), names[i])) {
            printf("%s: kept on (forecast reserve)\n", names[i]);
            continue;
        }
        int r = cmd && *cmd ? run_for(cmd, names[i]) : 0;
        printf("%s: %s%s\n", names[i], off ? "powering off" : "powering on",
               cmd && *cmd ? (r == 0 ? "" : " FAILED") : " (no command configured)");
        if (r != 0)
            rc = ECO_EXIT_FAIL;
    }
    json_decref(o);
    eco_hostlist_free(names, n);
    return rc;
}

int eco_cli__cmd_power(int argc, char **argv)
{
    static const struct option longopts[] = {{"socket", required_argument, NULL, 's'},
                                             {"command", required_argument, NULL, 'c'},
                                             {"json", no_argument, NULL, 'j'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *sock = getenv("ECOSCHED_POWERD_SOCKET"), *cmd = NULL;
    bool as_json = false;
    int c;
    if (!sock || !*sock)
        sock = ECO_POWERD_SOCKET;
    for (int i = 1; i + 1 < argc; i++) /* "budget -5": a value, not an option */
        if (!strcmp(argv[i], "budget") && argv[i + 1][0] == '-' &&
            (argv[i + 1][1] == '.' || (argv[i + 1][1] >= '0' && argv[i + 1][1] <= '9')))
            return budget(sock, argv[i + 1]);
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 's':
            sock = optarg;
            break;
        case 'c':
            cmd = optarg;
            break;
        case 'j':
            as_json = true;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return ECO_EXIT_USAGE;
        }
    }
    const char *sub = optind < argc ? argv[optind] : NULL;
    const char *arg = optind + 1 < argc ? argv[optind + 1] : NULL;
    int want = sub && !strcmp(sub, "status") ? 0 : 1;
    if (!sub || argc - optind - 1 != want) {
        usage(stderr);
        return ECO_EXIT_USAGE;
    }
    if (!strcmp(sub, "budget"))
        return budget(sock, arg);
    if (!strcmp(sub, "status"))
        return status(sock, as_json);
    if (!strcmp(sub, "suspend"))
        return power_nodes(sock, arg, cmd ? cmd : getenv("ECOSCHED_POWER_OFF_CMD"), true);
    if (!strcmp(sub, "resume"))
        return power_nodes(sock, arg, cmd ? cmd : getenv("ECOSCHED_POWER_ON_CMD"), false);
    eco_cli__err("power: unknown command '%s' (budget, status, suspend, resume)", sub);
    return ECO_EXIT_USAGE;
}
