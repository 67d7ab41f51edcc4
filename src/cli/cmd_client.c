/* SPDX-License-Identifier: MIT */
/* `ecosched submit | ls | show | cancel | wait | logs | gpus`: the client of ecoschedd, HTTP/JSON
 * over its unix socket with the edges' HTTP client (src/util/http_client.c; API in
 * docs/http-api.md). */
#define _XOPEN_SOURCE 700 /* strptime */
#include <ctype.h>
#include <stddef.h>
#include <errno.h>
#include <float.h>
#include <stdbool.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "opts.h"
#include "util/http_client.h"
#include "util/grid_signal.h"

extern char **environ;

#define DEFAULT_SOCKET "/run/ecosched/ecoschedd.sock"
/* `wait` polls the job this often: a job's end shows within a scheduling tick (1 s) anyway,
 * and 4 requests per second cost the daemon nothing. */
#define WAIT_POLL_S 0.25
/* `logs -f` polls for new output this often: prompt enough to watch a training log, and
 * two small requests per second cost the daemon nothing. */
#define LOGS_POLL_S 0.5

/* Options every client command takes. */
struct copts {
    const char *socket;
    const char *url;        /* http://127.0.0.1:PORT of a TCP listener, or NULL: the socket */
    const char *token_file; /* its bearer token */
    char auth[300];         /* "Authorization: Bearer TOKEN" once read */
    bool json;
};

/* Where the requests go: the unix socket, or with --url the TCP listener and its token. Sets
 * r's endpoint and, for the TCP listener, its Authorization header. 0, or -1 (printed). */
static int target(struct copts *o, struct eco_http_req *r)
{
    if (!o->url) {
        r->endpoint = o->socket;
        return 0;
    }
    if (!o->auth[0]) {
        char tok[260];
        size_t n = 0;
        FILE *f = o->token_file ? fopen(o->token_file, "re") : NULL;
        if (!f) {
            eco_cli__err("--url needs the daemon's bearer token: --token-file PATH or "
                         "ECOSCHED_TOKEN_FILE%s%s%s",
                         o->token_file ? " (" : "", o->token_file ? strerror(errno) : "",
                         o->token_file ? ")" : "");
            return -1;
        }
        n = fread(tok, 1, sizeof tok - 1, f);
        fclose(f);
        tok[n] = '\0';
        tok[strcspn(tok, "\r\n")] = '\0';
        snprintf(o->auth, sizeof o->auth, "Authorization: Bearer %s", tok);
    }
    r->endpoint = o->url;
    r->auth = o->auth;
    return 0;
}

/* The request failed (rc from eco_http_request, why its reason): says where the daemon was
 * looked for when it could not be reached. */
static void unreachable(const struct copts *o, int rc, const char *why)
{
    if (rc != -EIO)
        eco_cli__err("%s", why);
    else if (o->url)
        eco_cli__err("cannot reach ecoschedd at %s: %s (is it running with tcp_listen there? "
                     "--url or ECOSCHED_URL name another)",
                     o->url, why);
    else
        eco_cli__err("cannot reach ecoschedd at %s: %s (is it running? --socket or "
                     "ECOSCHED_SOCKET name another socket)",
                     o->socket, why);
}

/* One request. *out: the parsed JSON answer (caller's), or NULL when there was no JSON body.
 * Returns the HTTP status, or -1 when the daemon could not be reached (message printed). */
static long request(struct copts *o, const char *method, const char *path, const char *body,
                    json_t **out)
{
    struct eco_http_req r = {.path = path, .method = method, .body = body};
    struct eco_http_resp a = {0};
    struct eco_error why = {{0}};
    long status = -1;
    *out = NULL;
    if (target(o, &r) < 0)
        goto out;
    int rc = eco_http_request(&r, &a, &why);
    if (rc < 0) {
        unreachable(o, rc, why.msg);
        goto out;
    }
    status = a.status;
    if (a.body)
        *out = json_loadb(a.body, a.len, 0, NULL);
out:
    eco_http_resp_fini(&a);
    return status;
}

/* Prints the daemon's error message; returns the exit status for it. */
static int daemon_error(long status, const json_t *ans)
{
    const char *msg = json_string_value(json_object_get(ans, "error"));
    const char *field = json_string_value(json_object_get(ans, "field"));
    if (field && *field)
        eco_cli__err("%s (field '%s')", msg ? msg : "request refused", field);
    else
        eco_cli__err("%s (HTTP %ld)", msg ? msg : "request refused", status);
    return status == 400 || status == 413 ? ECO_EXIT_USAGE : ECO_EXIT_FAIL;
}

/* Sends a request and expects 2xx; on success *ans is the answer (caller's). Returns 0 or an
 * exit status. */
/* A GET the daemon answers 503 (more listings waiting than it queues; it says Retry-After: 1)
 * is tried again after a second, as `curl --retry` does, at most BUSY_TRIES times in all:
 * a listing is read-only, so trying it again changes nothing. */
#define BUSY_TRIES 10

static int call(struct copts *o, const char *method, const char *path, const char *body,
                json_t **ans)
{
    long st = request(o, method, path, body, ans);
    for (int k = 1; st == 503 && !strcmp(method, "GET") && k < BUSY_TRIES; k++) {
        json_decref(*ans);
        *ans = NULL;
        sleep(1);
        st = request(o, method, path, body, ans);
    }
    if (st < 0)
        return ECO_EXIT_FAIL;
    if (st >= 200 && st < 300 && *ans)
        return 0;
    int rc = daemon_error(st, *ans);
    json_decref(*ans);
    *ans = NULL;
    return rc;
}

/* Parses --socket PATH, --url URL, --token-file PATH (each also as NAME=VALUE) and --json at
 * argv[*i]; 1 consumed, 0 not ours, -1 bad. */
static int common_opt(int argc, char **argv, int *i, struct copts *o, bool json_ok)
{
    const char *a = argv[*i];
    static const struct {
        const char *name;
        size_t off;
    } vals[] = {{"--url", offsetof(struct copts, url)},
                {"--token-file", offsetof(struct copts, token_file)}};
    for (size_t k = 0; k < sizeof vals / sizeof vals[0]; k++) {
        size_t n = strlen(vals[k].name);
        const char **field = (const char **)(void *)((char *)o + vals[k].off);
        if (!strncmp(a, vals[k].name, n) && a[n] == '=') {
            *field = a + n + 1;
            return 1;
        }
        if (!strcmp(a, vals[k].name)) {
            if (*i + 1 >= argc) {
                eco_cli__err("%s needs a value", vals[k].name);
                return -1;
            }
            *field = argv[++*i];
            return 1;
        }
    }
    if (!strncmp(a, "--socket=", 9)) {
        o->socket = a + 9;
        return 1;
    }
    if (!strcmp(a, "--socket")) {
        if (*i + 1 >= argc) {
            eco_cli__err("--socket needs a value");
            return -1;
        }
        o->socket = argv[++*i];
        return 1;
    }
    if (json_ok && !strcmp(a, "--json")) {
        o->json = true;
        return 1;
    }
    return 0;
}

static void copts_init(struct copts *o)
{
    const char *env = getenv("ECOSCHED_SOCKET");
    memset(o, 0, sizeof *o);
    o->socket = env && *env ? env : DEFAULT_SOCKET;
    env = getenv("ECOSCHED_URL");
    o->url = env && *env ? env : NULL;
    env = getenv("ECOSCHED_TOKEN_FILE");
    o->token_file = env && *env ? env : NULL;
}

static void print_json(const json_t *v)
{
    char *s = json_dumps(v, JSON_INDENT(2));
    if (s)
        puts(s);
    free(s);
}

/* Parses a job id argument; 0 when it is not one (message printed). */
static long long job_id(const char *s)
{
    char *end;
    errno = 0;
    long long id = strtoll(s, &end, 10);
    if (!*s || *end || errno || id <= 0) {
        eco_cli__err("'%s' is not a job id", s);
        return 0;
    }
    return id;
}

/* ---- submit ------------------------------------------------------------------------------ */

static void submit_usage(FILE *f)
{
    fprintf(f, "usage: ecosched submit [--gpus N] [--gpu-mem GB] [--share] [--power-cap W|auto]\n"
               "                       [--deadline TIME] [--max-delay DURATION]\n"
               "                       [--not-before ISO-TIME] [--name NAME] [--socket PATH]\n"
               "                       -- CMD [ARGS...]\n\n"
               "Queues CMD on ecoschedd, to run as you in this directory with this environment,\n"
               "and prints the job id. --gpus defaults to 1 (0 on a server without GPUs).\n\n"
               "  --gpu-mem GB     memory the job needs on each GPU (GPU choice and sharing)\n"
               "  --share          the job may share its GPUs with other sharing jobs\n"
               "  --power-cap W    power limit of its GPUs while it runs; auto: least energy\n"
               "                   within the daemon's slowdown bound\n"
               "  --deadline TIME  when the job should be done: +DURATION from now (90s, 30m,\n"
               "                   2h, 1d), YYYY-MM-DD[THH:MM[:SS]] local time, or @UNIX_TIME;\n"
               "                   the edf queue policy runs earliest deadlines first\n"
               "  --max-delay D    slack: the daemon's carbon policy may hold the job up to D\n"
               "                   (6h, 90m, 1.5d, seconds) for a cleaner or cheaper hour\n"
               "  --not-before T   start no earlier than T, ISO 8601 UTC (2026-12-01T22:00Z)\n"
               "  --url URL        reach the daemon's loopback TCP listener (http://127.0.0.1:P)\n"
               "                   with the bearer token of --token-file (or ECOSCHED_URL,\n"
               "                   ECOSCHED_TOKEN_FILE) instead of the unix socket\n");
}

/* Value of option argv[*i] (NAME VALUE or NAME=VALUE) when it is `name`, else NULL. */
static const char *opt_value(int argc, char **argv, int *i, const char *name, bool *bad)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n))
        return NULL;
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (argv[*i][n])
        return NULL;
    if (*i + 1 >= argc) {
        eco_cli__err("%s needs a value", name);
        *bad = true;
        return NULL;
    }
    return argv[++*i];
}

/* The number options of submit and ls, checked by the option tables' parser (opts.c): one
 * field per kind, so that one struct takes any of them. */
struct num_value {
    unsigned long long whole;
    double real;
};
enum { NUM_GPUS, NUM_GPU_MEM, NUM_POWER_CAP, NUM_LIMIT };
/* --gpus: a sanity bound of a million (the daemon refuses more GPUs than it has); --limit: the
 * API's page size bound (docs/http-api.md). */
static const struct eco_opt client_numbers[] = {
    [NUM_GPUS] = {.name = "gpus",
                  .kind = ECO_OPT_WHOLE,
                  .lo = 0,
                  .hi = 1e6,
                  .flags = ECO_OPT_NO_MAX,
                  .offset = offsetof(struct num_value, whole),
                  .noun = "an integer"},
    [NUM_GPU_MEM] = {.name = "gpu-mem",
                     .kind = ECO_OPT_NUM,
                     .lo = 0,
                     .hi = DBL_MAX,
                     .flags = ECO_OPT_NO_MAX,
                     .offset = offsetof(struct num_value, real)},
    [NUM_POWER_CAP] = {.name = "power-cap",
                       .kind = ECO_OPT_NUM,
                       .lo = 0,
                       .hi = DBL_MAX,
                       .flags = ECO_OPT_NO_MAX,
                       .offset = offsetof(struct num_value, real)},
    [NUM_LIMIT] = {.name = "limit",
                   .kind = ECO_OPT_WHOLE,
                   .lo = 1,
                   .hi = 1000,
                   .offset = offsetof(struct num_value, whole),
                   .noun = "an integer"},
};
static const struct eco_opt_cmd client_cmd = {.prefix = NULL}; /* messages: "--NAME: ..." */

/* One number option's value as JSON into *out (NULL: checked only); 0 or -1 (printed). */
static int number_opt(int which, const char *v, json_t **out)
{
    const struct eco_opt *o = &client_numbers[which];
    struct num_value n = {0};
    if (eco_cli__opt_value(&client_cmd, o, v, &n))
        return -1;
    if (out)
        *out = o->kind == ECO_OPT_NUM ? json_real(n.real) : json_integer((json_int_t)n.whole);
    return 0;
}

int eco_cli__parse_deadline(const char *v, double now, double *out)
{
    char *end;
    if (v[0] == '@') {
        double t = strtod(v + 1, &end);
        if (end != v + 1 && !*end && isfinite(t) && t > now) {
            *out = t;
            return 0;
        }
    } else if (strchr(v, '-') && v[0] != '+') {
        struct tm tm = {0};
        const char *p = strptime(v, "%Y-%m-%d", &tm);
        if (p && *p == 'T')
            p = strptime(p + 1, "%H:%M", &tm);
        if (p && *p == ':')
            p = strptime(p + 1, "%S", &tm);
        tm.tm_isdst = -1;
        time_t t = p && !*p ? mktime(&tm) : (time_t)-1;
        if (t != (time_t)-1 && (double)t > now) {
            *out = (double)t;
            return 0;
        }
    } else {
        double x = strtod(v[0] == '+' ? v + 1 : v, &end);
        static const struct {
            char unit;
            double s;
        } units[] = {{'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}};
        for (size_t k = 0; k < 4 && end != v && isfinite(x) && x > 0; k++)
            /* finite, and later than now once added (a tiny x rounds back to now) */
            if (end[0] == units[k].unit && !end[1] && isfinite(now + x * units[k].s) &&
                now + x * units[k].s > now) {
                *out = now + x * units[k].s;
                return 0;
            }
    }
    eco_cli__err("--deadline: '%s' is not a future time (+30m, 2h, 2026-12-01T08:00, "
                 "@UNIX_TIME)",
                 v);
    return -1;
}

/* Fills `req` from the options before the command; returns the index of CMD, or -1. */
static int submit_opts(int argc, char **argv, struct copts *o, json_t *req)
{
    int i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        bool bad = false;
        json_t *num = NULL;
        int c = common_opt(argc, argv, &i, o, false);
        if (c < 0)
            return -1;
        if (c)
            continue;
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        if (!strcmp(a, "--share")) {
            json_object_set_new(req, "share", json_true());
        } else if ((v = opt_value(argc, argv, &i, "--gpus", &bad))) {
            if (number_opt(NUM_GPUS, v, &num) < 0)
                return -1;
            json_object_set_new(req, "gpus", num);
        } else if ((v = opt_value(argc, argv, &i, "--gpu-mem", &bad))) {
            if (number_opt(NUM_GPU_MEM, v, &num) < 0)
                return -1;
            json_object_set_new(req, "gpu_mem_gb", num);
        } else if ((v = opt_value(argc, argv, &i, "--power-cap", &bad))) {
            if (strcmp(v, "auto") && number_opt(NUM_POWER_CAP, v, &num) < 0)
                return -1;
            json_object_set_new(req, "power_cap", num ? num : json_string("auto"));
        } else if ((v = opt_value(argc, argv, &i, "--name", &bad))) {
            json_object_set_new(req, "name", json_string(v));
        } else if ((v = opt_value(argc, argv, &i, "--deadline", &bad))) {
            double t;
            if (eco_cli__parse_deadline(v, (double)time(NULL), &t) < 0)
                return -1;
            json_object_set_new(req, "deadline", json_real(t));
        } else if ((v = opt_value(argc, argv, &i, "--max-delay", &bad))) {
            struct eco_error e = {{0}};
            double s;
            if (eco_parse_duration(v, &s, &e) < 0) {
                eco_cli__err("--max-delay: '%s': %s", v, e.msg);
                return -1;
            }
            json_object_set_new(req, "max_delay", json_real(s));
        } else if ((v = opt_value(argc, argv, &i, "--not-before", &bad))) {
            struct eco_error e = {{0}};
            double t;
            if (eco_parse_utc(v, &t, &e) < 0) {
                eco_cli__err("--not-before: '%s': %s (e.g. 2026-12-01T22:00Z)", v, e.msg);
                return -1;
            }
            json_object_set_new(req, "not_before", json_real(t));
        } else if (bad) {
            return -1;
        } else if (a[0] == '-') {
            eco_cli__err("unknown option '%s' (try 'ecosched submit --help')", a);
            return -1;
        } else {
            break; /* the command, without "--" */
        }
        if (bad)
            return -1;
    }
    if (i >= argc) {
        eco_cli__err("no command to run (ecosched submit [OPTIONS] -- CMD [ARGS...])");
        return -1;
    }
    return i;
}

int eco_cli__cmd_submit(int argc, char **argv)
{
    struct copts o;
    json_t *req = json_object(), *ans = NULL, *args = json_array(), *env = json_object();
    char cwd[PATH_MAX], *body = NULL;
    int rc = ECO_EXIT_USAGE;
    copts_init(&o);
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        submit_usage(stdout);
        rc = 0;
        goto out;
    }
    int first = submit_opts(argc, argv, &o, req);
    if (first < 0)
        goto out;
    rc = ECO_EXIT_FAIL;
    if (!getcwd(cwd, sizeof cwd)) {
        eco_cli__err("cannot read the working directory: %s", strerror(errno));
        goto out;
    }
    for (int i = first; i < argc; i++)
        json_array_append_new(args, json_string(argv[i]));
    for (char **e = environ; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        if (eq && eq != *e)
            json_object_setn_new(env, *e, (size_t)(eq - *e), json_string(eq + 1));
    }
    json_object_set(req, "argv", args);
    json_object_set(req, "env", env);
    json_object_set_new(req, "cwd", json_string(cwd));
    if (!(body = json_dumps(req, JSON_COMPACT)))
        goto out;
    if ((rc = call(&o, "POST", "/v1/jobs", body, &ans)) != 0)
        goto out;
    printf("%lld\n", (long long)json_integer_value(json_object_get(ans, "id")));
out:
    free(body);
    json_decref(req);
    json_decref(args);
    json_decref(env);
    json_decref(ans);
    return rc;
}

/* ---- ls, show ---------------------------------------------------------------------------- */

static const char *user_name(json_int_t uid, char *buf, size_t cap)
{
    struct passwd *pw = getpwuid((uid_t)uid);
    if (pw)
        snprintf(buf, cap, "%s", pw->pw_name);
    else
        snprintf(buf, cap, "%lld", (long long)uid);
    return buf;
}

static void gpu_list(const json_t *a, char *buf, size_t cap)
{
    size_t off = 0, i;
    json_t *v;
    buf[0] = '\0';
    json_array_foreach(a, i, v)
    {
        if (off < cap)
            off += (size_t)snprintf(buf + off, cap - off, "%s%lld", i ? "," : "",
                                    (long long)json_integer_value(v));
    }
    if (!i)
        snprintf(buf, cap, "-");
}

/* The command as one line, shortened to `cap`. */
static void command_line(const json_t *argv, char *buf, size_t cap)
{
    size_t off = 0, i;
    json_t *v;
    buf[0] = '\0';
    json_array_foreach(argv, i, v)
    {
        if (off < cap)
            off +=
                (size_t)snprintf(buf + off, cap - off, "%s%s", i ? " " : "", json_string_value(v));
    }
}

/* Parses the options of a command taking at most one positional; 0 ok, else exit status. */
static int simple_opts(int argc, char **argv, struct copts *o, bool json_ok, const char **pos,
                       const char *usage)
{
    copts_init(o);
    *pos = NULL;
    for (int i = 1; i < argc; i++) {
        int c = common_opt(argc, argv, &i, o, json_ok);
        if (c < 0)
            return ECO_EXIT_USAGE;
        if (c)
            continue;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: ecosched %s\n", usage);
            return -1;
        }
        if (argv[i][0] == '-' || *pos) {
            eco_cli__err("%s '%s' (usage: ecosched %s)",
                         argv[i][0] == '-' ? "unknown option" : "unexpected argument", argv[i],
                         usage);
            return ECO_EXIT_USAGE;
        }
        *pos = argv[i];
    }
    return 0;
}

static void ls_row(const json_t *j)
{
    char user[64], gpus[64], cmd[48], exit_s[8] = "-";
    const json_t *ex = json_object_get(j, "exit_status");
    const char *name = json_string_value(json_object_get(j, "name"));
    if (json_is_integer(ex))
        snprintf(exit_s, sizeof exit_s, "%lld", (long long)json_integer_value(ex));
    gpu_list(json_object_get(j, "assigned_gpus"), gpus, sizeof gpus);
    command_line(json_object_get(j, "argv"), cmd, sizeof cmd);
    const char *owner = json_string_value(json_object_get(j, "user"));
    printf("%6lld  %-9s  %-10s  %-7s  %10.1f  %4s  %s\n",
           (long long)json_integer_value(json_object_get(j, "id")),
           json_string_value(json_object_get(j, "state")),
           owner ? owner
                 : user_name(json_integer_value(json_object_get(j, "uid")), user, sizeof user),
           gpus, json_number_value(json_object_get(j, "energy_j")), exit_s, name ? name : cmd);
}

/* `ls [--all] [--limit N] [STATE]`: one page of the daemon's listing (its default size, or N
 * jobs), or with --all every page in turn (--json: all of them in one "jobs" array). */
int eco_cli__cmd_ls(int argc, char **argv)
{
    static const char usage[] = "ls [--json] [--socket PATH] [--all] [--limit N] [STATE]";
    struct copts o;
    const char *pos = NULL, *limit = NULL;
    json_t *ans = NULL, *all = NULL, *j;
    bool every = false;
    long long after = 0;
    size_t i;
    int rc = 0;
    char path[160];
    copts_init(&o);
    for (int k = 1; k < argc; k++) {
        bool bad = false;
        const char *v;
        int c = common_opt(argc, argv, &k, &o, true);
        if (c < 0)
            return ECO_EXIT_USAGE;
        if (c)
            continue;
        if (!strcmp(argv[k], "-h") || !strcmp(argv[k], "--help")) {
            printf("usage: ecosched %s\n", usage);
            return 0;
        }
        if (!strcmp(argv[k], "--all")) {
            every = true;
        } else if ((v = opt_value(argc, argv, &k, "--limit", &bad))) {
            if (number_opt(NUM_LIMIT, v, NULL) < 0)
                return ECO_EXIT_USAGE;
            limit = v;
        } else if (bad) {
            return ECO_EXIT_USAGE;
        } else if (argv[k][0] == '-' || pos) {
            eco_cli__err("%s '%s' (usage: ecosched %s)",
                         argv[k][0] == '-' ? "unknown option" : "unexpected argument", argv[k],
                         usage);
            return ECO_EXIT_USAGE;
        } else {
            pos = argv[k];
        }
    }
    if (o.json && every && !(all = json_array()))
        return 1;
    for (bool header = !o.json;;) {
        snprintf(path, sizeof path, "/v1/jobs?after=%lld%s%s%s%.32s", after, limit ? "&limit=" : "",
                 limit ? limit : "", pos ? "&state=" : "", pos ? pos : "");
        if ((rc = call(&o, "GET", path, NULL, &ans)) != 0)
            goto out;
        /* once the daemon answered: after an error, only the error */
        if (header)
            printf("%6s  %-9s  %-10s  %-7s  %10s  %4s  %s\n", "ID", "STATE", "USER", "GPU_IDS",
                   "ENERGY_J", "EXIT", "NAME/COMMAND");
        header = false;
        const json_t *next = json_object_get(ans, "next");
        if (o.json && !every) {
            print_json(ans);
            goto out;
        }
        json_array_foreach(json_object_get(ans, "jobs"), i, j)
        {
            if (all)
                json_array_append(all, j);
            else
                ls_row(j);
        }
        if (!json_is_integer(next))
            break;
        if (!every) {
            fprintf(stderr, "ecosched: more jobs after %lld: ecosched ls --all lists them all\n",
                    (long long)json_integer_value(next));
            break;
        }
        after = (long long)json_integer_value(next);
        json_decref(ans);
        ans = NULL;
    }
    if (all) {
        json_t *o2 = json_pack("{s:O}", "jobs", all);
        print_json(o2);
        json_decref(o2);
    }
out:
    json_decref(ans);
    json_decref(all);
    return rc;
}

static void show_line(const char *key, const json_t *v)
{
    if (json_is_string(v)) {
        printf("%-14s %s\n", key, json_string_value(v));
    } else if (json_is_null(v) || !v) {
        printf("%-14s -\n", key);
    } else if (json_is_real(v)) {
        /* 10 significant digits: joules to the mJ up to MJ, never the binary noise of
         * %.17g (0.79399999999999993); --json keeps the full number */
        printf("%-14s %.10g\n", key, json_real_value(v));
    } else {
        char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        printf("%-14s %s\n", key, s ? s : "?");
        free(s);
    }
}

/* A Unix time as local ISO 8601 with the offset, 2026-12-01T19:50:02+0000; "-" when null. */
static void show_time(const char *key, const json_t *v)
{
    char buf[40];
    struct tm tm;
    time_t t = (time_t)json_number_value(v);
    if (!json_is_number(v) || !localtime_r(&t, &tm) ||
        !strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S%z", &tm)) {
        show_line(key, v);
        return;
    }
    printf("%-14s %s\n", key, buf);
}

int eco_cli__cmd_show(int argc, char **argv)
{
    struct copts o;
    const char *pos;
    json_t *ans = NULL;
    char path[64];
    int rc = simple_opts(argc, argv, &o, true, &pos, "show [--json] [--socket PATH] ID");
    long long id;
    if (rc)
        return rc < 0 ? 0 : rc;
    if (!pos || !(id = job_id(pos))) {
        if (!pos)
            eco_cli__err("show needs a job id");
        return ECO_EXIT_USAGE;
    }
    snprintf(path, sizeof path, "/v1/jobs/%lld", id);
    if ((rc = call(&o, "GET", path, NULL, &ans)) != 0)
        return rc;
    if (o.json) {
        print_json(ans);
    } else {
        /* The API's Unix seconds (FIELD_s) print as local times under their own names; --json
         * keeps the raw seconds. */
        static const struct {
            const char *key, *label;
            bool time;
        } rows[] = {
            {"id", "id", false},
            {"name", "name", false},
            {"state", "state", false},
            {"user", "user", false},
            {"uid", "uid", false},
            {"cwd", "cwd", false},
            {"argv", "argv", false},
            {"gpus", "gpus", false},
            {"gpu_mem_gb", "gpu_mem_gb", false},
            {"share", "share", false},
            {"power_cap", "power_cap", false},
            {"assigned_gpus", "assigned_gpus", false},
            {"pid", "pid", false},
            {"submit_s", "submitted", true},
            {"start_s", "started", true},
            {"end_s", "ended", true},
            {"exit_status", "exit_status", false},
            {"reason", "reason", false},
            {"energy_j", "energy_j", false},
            {"energy_basis", "energy_basis", false},
            {"deadline_s", "deadline", true},
            {"deadline_missed", "deadline_missed", false},
            {"max_delay_s", "max_delay_s", false},
            {"not_before_s", "not_before", true},
            {"held_until_s", "held_until", true},
            {"forecast", "forecast", false},
            {"carbon_kg", "carbon_kg", false},
            {"carbon_partial", "carbon_partial", false},
            {"cost", "cost", false},
            {"currency", "currency", false},
            {"cost_partial", "cost_partial", false},
            {"stdout", "stdout", false},
            {"stderr", "stderr", false},
        };
        for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++)
            (rows[k].time ? show_time : show_line)(rows[k].label,
                                                   json_object_get(ans, rows[k].key));
    }
    json_decref(ans);
    return 0;
}

/* ---- cancel, wait ------------------------------------------------------------------------ */

int eco_cli__cmd_cancel(int argc, char **argv)
{
    struct copts o;
    const char *pos;
    json_t *ans = NULL;
    char path[64];
    long long id;
    int rc = simple_opts(argc, argv, &o, false, &pos, "cancel [--socket PATH] ID");
    if (rc)
        return rc < 0 ? 0 : rc;
    if (!pos || !(id = job_id(pos))) {
        if (!pos)
            eco_cli__err("cancel needs a job id");
        return ECO_EXIT_USAGE;
    }
    snprintf(path, sizeof path, "/v1/jobs/%lld/cancel", id);
    if ((rc = call(&o, "POST", path, NULL, &ans)) != 0)
        return rc;
    printf("job %lld cancelled (was %s)\n", id,
           json_string_value(json_object_get(ans, "previous")));
    json_decref(ans);
    return 0;
}

int eco_cli__cmd_wait(int argc, char **argv)
{
    struct copts o;
    const char *pos;
    json_t *ans = NULL;
    char path[64];
    long long id;
    int rc = simple_opts(argc, argv, &o, false, &pos, "wait [--socket PATH] ID");
    struct timespec ts = {0, (long)(WAIT_POLL_S * 1e9)};
    if (rc)
        return rc < 0 ? 0 : rc;
    if (!pos || !(id = job_id(pos))) {
        if (!pos)
            eco_cli__err("wait needs a job id");
        return ECO_EXIT_USAGE;
    }
    snprintf(path, sizeof path, "/v1/jobs/%lld", id);
    for (;;) {
        if ((rc = call(&o, "GET", path, NULL, &ans)) != 0)
            return rc;
        const char *st = json_string_value(json_object_get(ans, "state"));
        const json_t *ex = json_object_get(ans, "exit_status");
        const char *why = json_string_value(json_object_get(ans, "reason"));
        if (st && (!strcmp(st, "done") || !strcmp(st, "failed"))) {
            rc = json_is_integer(ex) ? (int)json_integer_value(ex) : 0;
            if (!json_is_integer(ex))
                eco_cli__err("job %lld %s: %s", id, st, why ? why : "exit status unknown");
            break;
        }
        if (st && (!strcmp(st, "cancelled") || !strcmp(st, "lost"))) {
            eco_cli__err("job %lld %s%s%s", id, st, why ? ": " : "", why ? why : "");
            rc = ECO_EXIT_FAIL;
            break;
        }
        json_decref(ans);
        ans = NULL;
        nanosleep(&ts, NULL);
    }
    json_decref(ans);
    return rc;
}

/* ---- logs -------------------------------------------------------------------------------- */

/* Headers of a logs answer. */
struct log_hdr {
    char state[16];
};

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    struct log_hdr *h = ud;
    size_t len = size * n;
    static const char key[] = "x-ecosched-job-state:";
    if (len > sizeof key - 1 && !strncasecmp(p, key, sizeof key - 1)) {
        const char *v = p + sizeof key - 1;
        size_t vl = len - (sizeof key - 1);
        while (vl && (*v == ' ' || *v == '\t'))
            v++, vl--;
        while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' '))
            vl--;
        snprintf(h->state, sizeof h->state, "%.*s", (int)vl, v);
    }
    return len;
}

/* The last bytes of an output, kept while its chunks go by (the tail of a failed job's
 * stderr). */
#define TAIL_KEEP 4096
struct tail {
    char buf[TAIL_KEEP];
    size_t len;
};

static void tail_add(struct tail *t, const char *p, size_t n)
{
    if (n >= TAIL_KEEP) {
        memcpy(t->buf, p + n - TAIL_KEEP, TAIL_KEEP);
        t->len = TAIL_KEEP;
        return;
    }
    if (t->len + n > TAIL_KEEP) {
        size_t drop = t->len + n - TAIL_KEEP;
        memmove(t->buf, t->buf + drop, t->len - drop);
        t->len -= drop;
    }
    memcpy(t->buf + t->len, p, n);
    t->len += n;
}

/* One chunk of a job's output from *offset, written to stdout (or kept in *keep when not
 * NULL); *offset advanced, *got the bytes, *ended whether the job had ended when the daemon
 * read, state[16] its state then. 0 or an exit status. */
static int log_chunk(struct copts *o, long long id, const char *stream, long long *offset,
                     size_t *got, bool *ended, char state[16], struct tail *keep)
{
    struct log_hdr h = {""};
    char url[256];
    struct eco_error why = {{0}};
    int rc = ECO_EXIT_FAIL;
    json_t *ans = NULL;
    snprintf(url, sizeof url, "/v1/jobs/%lld/logs?stream=%s&offset=%lld", id, stream, *offset);
    struct eco_http_req r = {.path = url, .on_header = on_header, .header_ud = &h};
    struct eco_http_resp b = {0};
    if (target(o, &r) < 0)
        goto out;
    int hr = eco_http_request(&r, &b, &why);
    if (hr < 0) {
        unreachable(o, hr, why.msg);
        goto out;
    }
    if (b.status != 200) {
        ans = b.body ? json_loadb(b.body, b.len, 0, NULL) : NULL;
        rc = daemon_error(b.status, ans);
        goto out;
    }
    if (keep && b.len)
        tail_add(keep, b.body, b.len);
    else if (b.len && (fwrite(b.body, 1, b.len, stdout) != b.len || fflush(stdout) != 0)) {
        eco_cli__err("cannot write the output: %s", strerror(errno));
        goto out;
    }
    *offset += (long long)b.len;
    *got = b.len;
    *ended = h.state[0] && strcmp(h.state, "queued") && strcmp(h.state, "running");
    memcpy(state, h.state, sizeof h.state);
    rc = 0;
out:
    json_decref(ans);
    eco_http_resp_fini(&b);
    return rc;
}

/* Prints on stderr why job id ended `state` (failed, cancelled or lost): its exit status, the
 * signal an exit status above 128 stands for, and the store's reason (for a job that could not
 * start, the runner's message: the daemon stores it as the reason). */
static void explain_end(struct copts *o, long long id, const char *state)
{
    char path[64], how[160] = "";
    json_t *ans = NULL;
    snprintf(path, sizeof path, "/v1/jobs/%lld", id);
    if (call(o, "GET", path, NULL, &ans) != 0)
        return; /* the daemon said why */
    const json_t *ex = json_object_get(ans, "exit_status");
    const char *why = json_string_value(json_object_get(ans, "reason"));
    int code = json_is_integer(ex) ? (int)json_integer_value(ex) : -1;
    /* the daemon records a job killed by signal N as 128 + N, as a shell does */
    if (code > 128 && code < 128 + 65)
        snprintf(how, sizeof how, "exit status %d (128 + signal %d, %s)", code, code - 128,
                 strsignal(code - 128));
    else if (code >= 0)
        snprintf(how, sizeof how, "exit status %d", code);
    eco_cli__err("job %lld %s%s%s%s%s", id, state, *how ? ": " : "", how,
                 why ? (*how ? "; " : ": ") : "", why ? why : "");
    json_decref(ans);
}

/* After the stdout of a job that failed: the last lines of its stderr (where a failure is
 * usually told) on stderr, or that it is empty. */
#define TAIL_LINES 10
static void stderr_tail(struct copts *o, long long id)
{
    struct tail t = {.len = 0};
    long long offset = 0;
    bool ended = false;
    char state[16];
    for (;;) {
        size_t got = 0;
        if (log_chunk(o, id, "stderr", &offset, &got, &ended, state, &t) != 0)
            return; /* the daemon said why */
        if (!got)
            break;
    }
    if (!offset) {
        eco_cli__err("job %lld: its stderr is empty", id);
        return;
    }
    size_t start = t.len, lines = 0;
    if (start && t.buf[start - 1] == '\n')
        start--;
    while (start > 0 && !(t.buf[start - 1] == '\n' && ++lines == TAIL_LINES))
        start--;
    bool whole = start == 0 && (long long)t.len == offset;
    eco_cli__err("job %lld: %s of its stderr (ecosched logs --stderr %lld prints it all):", id,
                 whole ? "the whole" : "the last lines", id);
    fwrite(t.buf + start, 1, t.len - start, stderr);
    if (t.len && t.buf[t.len - 1] != '\n')
        fputc('\n', stderr);
}

int eco_cli__cmd_logs(int argc, char **argv)
{
    static const char usage[] = "logs [-f|--follow] [--stderr] [--socket PATH] ID";
    struct copts o;
    const char *pos = NULL, *stream = "stdout";
    bool follow = false, ended = false;
    long long id, offset = 0;
    char state[16] = "";
    struct timespec ts = {0, (long)(LOGS_POLL_S * 1e9)};
    copts_init(&o);
    for (int i = 1; i < argc; i++) {
        int c = common_opt(argc, argv, &i, &o, false);
        if (c < 0)
            return ECO_EXIT_USAGE;
        if (c)
            continue;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: ecosched %s\n\nPrints the job's stdout (or stderr); with -f, keeps "
                   "printing new output until the job has ended. For a job that failed, was\n"
                   "cancelled or was lost, says why on stderr (exit status, signal, and\n"
                   "the stored reason, which for a job that could not start is the failure);\n"
                   "after a failed job's stdout, the last %d lines of its stderr.\n",
                   usage, TAIL_LINES);
            return 0;
        }
        if (!strcmp(argv[i], "-f") || !strcmp(argv[i], "--follow")) {
            follow = true;
        } else if (!strcmp(argv[i], "--stderr")) {
            stream = "stderr";
        } else if (argv[i][0] == '-' || pos) {
            eco_cli__err("%s '%s' (usage: ecosched %s)",
                         argv[i][0] == '-' ? "unknown option" : "unexpected argument", argv[i],
                         usage);
            return ECO_EXIT_USAGE;
        } else {
            pos = argv[i];
        }
    }
    if (!pos || !(id = job_id(pos))) {
        if (!pos)
            eco_cli__err("logs needs a job id");
        return ECO_EXIT_USAGE;
    }
    /* Without -f: until a chunk comes back empty. With -f: until the daemon, having seen the
     * job ended before it read, found nothing more to send. */
    for (;;) {
        size_t got = 0;
        int rc = log_chunk(&o, id, stream, &offset, &got, &ended, state, NULL);
        if (rc)
            return rc;
        if (got > 0)
            continue;
        if (ended &&
            (!strcmp(state, "failed") || !strcmp(state, "cancelled") || !strcmp(state, "lost"))) {
            explain_end(&o, id, state);
            if (!strcmp(state, "failed") && !strcmp(stream, "stdout"))
                stderr_tail(&o, id);
        }
        if (!follow || ended)
            return 0;
        nanosleep(&ts, NULL);
    }
}

/* ---- gpus -------------------------------------------------------------------------------- */

int eco_cli__cmd_gpus(int argc, char **argv)
{
    struct copts o;
    const char *pos;
    json_t *ans = NULL, *g;
    size_t i;
    char jobs[64];
    int rc = simple_opts(argc, argv, &o, true, &pos, "gpus [--json] [--socket PATH]");
    if (rc)
        return rc < 0 ? 0 : rc;
    if (pos) {
        eco_cli__err("unexpected argument '%s' (usage: ecosched gpus [--json])", pos);
        return ECO_EXIT_USAGE;
    }
    if ((rc = call(&o, "GET", "/v1/gpus", NULL, &ans)) != 0)
        return rc;
    if (o.json) {
        print_json(ans);
        goto out;
    }
    printf("platform %s\n", json_string_value(json_object_get(ans, "platform")));
    printf("%3s  %-24s  %5s  %15s  %8s  %8s  %-9s  %s\n", "GPU", "NAME", "UTIL", "MEMORY_GIB",
           "POWER_W", "LIMIT_W", "STATE", "JOBS");
    json_array_foreach(json_object_get(ans, "gpus"), i, g)
    {
        gpu_list(json_object_get(g, "jobs"), jobs, sizeof jobs);
        /* processes of no job on it: their share of its energy is charged to no job */
        json_int_t stray =
            json_integer_value(json_object_get(json_object_get(g, "unattributed"), "processes"));
        if (stray > 0)
            snprintf(jobs + strlen(jobs), sizeof jobs - strlen(jobs), "%s+%lld unattributed",
                     jobs[0] ? " " : "", (long long)stray);
        printf("%3lld  %-24.24s  %4.0f%%  %6.1f / %6.1f  %8.1f  %8.1f  %-9s  %s\n",
               (long long)json_integer_value(json_object_get(g, "index")),
               json_string_value(json_object_get(g, "name")),
               100 * json_number_value(json_object_get(g, "util")),
               (double)json_integer_value(json_object_get(g, "memory_used_b")) / (1 << 30),
               (double)json_integer_value(json_object_get(g, "memory_total_b")) / (1 << 30),
               json_number_value(json_object_get(g, "power_w")),
               json_number_value(json_object_get(g, "power_limit_w")),
               json_string_value(json_object_get(g, "state")), jobs);
    }
out:
    json_decref(ans);
    return 0;
}
