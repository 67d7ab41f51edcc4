/* SPDX-License-Identifier: MIT */
/* Node and item lists for `ecosched place`: openb's node and pod CSVs as they are, and
 * ecosched's placement CSV (cores, GiB, GPUs as a count or a fraction). Columns are found by
 * name in the header; gzip files are read as they are. See docs/formats/placement.md. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/csv.h"
#include "place/place_io.h"
#include "ecosched/rng.h"

#define LINE_MAX_BYTES 4096
#define MAX_FIELDS 64

enum col {
    C_NAME,
    C_CPU_MILLI,
    C_CPU_CORES,
    C_MEM_MIB,
    C_MEM_GIB,
    C_GPUS,
    C_GPU_MILLI,
    C_MODEL,
    C_N
};

/* Column names accepted for each field; the first list is nodes', the second items'. */
static const char *const node_cols[C_N][3] = {
    [C_NAME] = {"sn", "name", NULL},
    [C_CPU_MILLI] = {"cpu_milli", NULL},
    [C_CPU_CORES] = {"cpu_cores", NULL},
    [C_MEM_MIB] = {"memory_mib", NULL},
    [C_MEM_GIB] = {"memory_gib", NULL},
    [C_GPUS] = {"gpu", "gpus", NULL},
    [C_GPU_MILLI] = {NULL},
    [C_MODEL] = {"model", "gpu_model", NULL},
};
static const char *const item_cols[C_N][3] = {
    [C_NAME] = {"name", NULL},           [C_CPU_MILLI] = {"cpu_milli", NULL},
    [C_CPU_CORES] = {"cpu_cores", NULL}, [C_MEM_MIB] = {"memory_mib", NULL},
    [C_MEM_GIB] = {"memory_gib", NULL},  [C_GPUS] = {"num_gpu", "gpus", NULL},
    [C_GPU_MILLI] = {"gpu_milli", NULL}, [C_MODEL] = {"gpu_spec", "gpu_model", NULL},
};

struct reader {
    const char *path;
    struct eco_csv_file *csv;
    unsigned long line;
    char *buf; /* the current line (the CSV reader's) */
    char *f[MAX_FIELDS];
    int nf;
    int col[C_N];
    const char *colname[C_N];
    struct eco_error *err;
};

static int next_line(struct reader *r)
{
    for (;;) {
        size_t len;
        int rc = eco_csv_next(r->csv, &r->buf, &len, r->err);
        r->line = eco_csv_lineno(r->csv);
        if (rc <= 0)
            return rc;
        if (len == 0)
            continue; /* blank lines (a final newline) are skipped */
        r->nf = eco_csv_split(r->buf, r->f, MAX_FIELDS);
        if (r->nf < 0)
            return eco_errorf(r->err, -EINVAL, "%s:%lu: malformed quoted field", r->path, r->line);
        if (r->nf > MAX_FIELDS)
            return eco_errorf(r->err, -EINVAL, "%s:%lu: more than %d fields", r->path, r->line,
                              MAX_FIELDS);
        return 1;
    }
}

static int open_reader(struct reader *r, const char *path, const char *const cols[C_N][3],
                       struct eco_error *err)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    r->err = err;
    int rc = eco_csv_open(path, LINE_MAX_BYTES, &r->csv, err);
    if (rc)
        return rc;
    rc = next_line(r);
    if (rc <= 0)
        return rc ? rc : eco_errorf(err, -EINVAL, "%s: empty file, expected a header line", path);
    for (int c = 0; c < C_N; c++)
        r->col[c] = -1;
    for (int k = 0; k < r->nf; k++)
        for (int c = 0; c < C_N; c++)
            for (int j = 0; cols[c][j]; j++)
                if (!strcmp(r->f[k], cols[c][j])) {
                    if (r->col[c] >= 0)
                        return eco_errorf(err, -EINVAL, "%s:1: column '%s' given twice", path,
                                          r->f[k]);
                    r->col[c] = k;
                    r->colname[c] = cols[c][j];
                }
    if (r->col[C_CPU_MILLI] < 0 && r->col[C_CPU_CORES] < 0)
        return eco_errorf(err, -EINVAL, "%s:1: missing column 'cpu_milli' or 'cpu_cores'", path);
    if (r->col[C_MEM_MIB] < 0 && r->col[C_MEM_GIB] < 0)
        return eco_errorf(err, -EINVAL, "%s:1: missing column 'memory_mib' or 'memory_gib'", path);
    if (r->col[C_GPUS] < 0)
        return eco_errorf(err, -EINVAL, "%s:1: missing column '%s' or '%s'", path, cols[C_GPUS][0],
                          cols[C_GPUS][1]);
    return 0;
}

static void close_reader(struct reader *r)
{
    eco_csv_close(r->csv);
    r->csv = NULL;
}

static const char *field(const struct reader *r, int c)
{
    return r->col[c] >= 0 && r->col[c] < r->nf ? r->f[r->col[c]] : "";
}

static int bad(const struct reader *r, int c, const char *why)
{
    return eco_errorf(r->err, -EINVAL, "%s:%lu: column '%s': '%.40s' %s", r->path, r->line,
                      r->colname[c], field(r, c), why);
}

/* A number >= 0 scaled by `scale` and rounded to an integer no larger than `max`. */
static int number(const struct reader *r, int c, double scale, double max, int64_t *out)
{
    double v;
    if (eco_parse_double(field(r, c), &v))
        return bad(r, c, "is not a number");
    if (v < 0)
        return bad(r, c, "must be >= 0");
    if (v * scale > max)
        return bad(r, c, "is too large");
    *out = (int64_t)llround(v * scale);
    return 0;
}

static int cpu_mem(const struct reader *r, int64_t *cpu, int64_t *mem)
{
    /* 2^40 milli-cores and MiB: far above any machine, and exact in a double */
    const double max = 1099511627776.0;
    int rc = r->col[C_CPU_MILLI] >= 0 ? number(r, C_CPU_MILLI, 1, max, cpu)
                                      : number(r, C_CPU_CORES, 1000, max, cpu);
    if (!rc)
        rc = r->col[C_MEM_MIB] >= 0 ? number(r, C_MEM_MIB, 1, max, mem)
                                    : number(r, C_MEM_GIB, 1024, max, mem);
    return rc;
}

static void copy_name(char *dst, const char *src, unsigned long line)
{
    if (*src)
        snprintf(dst, ECO_PL_NAME_MAX, "%s", src);
    else
        snprintf(dst, ECO_PL_NAME_MAX, "line%lu", line);
}

static int check_fields(const struct reader *r, int header_nf)
{
    if (r->nf != header_nf)
        return eco_errorf(r->err, -EINVAL, "%s:%lu: %d fields, but the header has %d columns",
                          r->path, r->line, r->nf, header_nf);
    return 0;
}

static int grow(void **p, uint32_t n, size_t *cap, size_t size)
{
    if (n < *cap)
        return 0;
    size_t nc = *cap ? 2 * *cap : 256;
    void *q = realloc(*p, nc * size);
    if (!q)
        return -ENOMEM;
    *p = q;
    *cap = nc;
    return 0;
}

static const char *node_name(const void *ctx, uint32_t i)
{
    return ((const struct eco_pl_instance *)ctx)->nodes[i].name;
}

int eco_pl_read_nodes(const char *path, struct eco_pl_instance *in, struct eco_error *err)
{
    struct reader r;
    struct eco_csv_names names;
    eco_csv_names_init(&names, node_name, in);
    int rc = open_reader(&r, path, node_cols, err);
    size_t cap = in->n_nodes;
    int header_nf = r.nf;
    while (!rc && (rc = next_line(&r)) == 1) {
        rc = check_fields(&r, header_nf);
        if (rc)
            break;
        struct eco_pl_node nd = {.model = -1};
        int64_t gpus;
        rc = cpu_mem(&r, &nd.cpu_milli, &nd.mem_mib);
        if (!rc)
            rc = number(&r, C_GPUS, 1, ECO_PL_MAX_GPUS, &gpus);
        if (!rc && fabs(strtod(field(&r, C_GPUS), NULL) - (double)gpus) > 0)
            rc = bad(&r, C_GPUS, "must be a whole number of GPUs");
        if (rc)
            break;
        nd.gpus = (uint16_t)gpus;
        const char *model = field(&r, C_MODEL);
        if (*model) {
            int m = eco_pl_model_index(in, model);
            if (m < 0) {
                rc = bad(&r, C_MODEL, "is one GPU model too many (at most 64)");
                break;
            }
            nd.model = (int16_t)m;
        } else if (nd.gpus > 0 && r.col[C_MODEL] >= 0) {
            rc = bad(&r, C_MODEL, "is empty, but the node has GPUs");
            break;
        }
        copy_name(nd.name, field(&r, C_NAME), r.line);
        if (grow((void **)&in->nodes, in->n_nodes, &cap, sizeof *in->nodes)) {
            rc = eco_errorf(err, -ENOMEM, "%s:%lu: out of memory", path, r.line);
            break;
        }
        in->nodes[in->n_nodes] = nd;
        uint32_t first;
        int dup = eco_csv_names_add(&names, nd.name, in->n_nodes, &first);
        if (dup) {
            rc = dup < 0 ? eco_errorf(err, -ENOMEM, "%s:%lu: out of memory", path, r.line)
                         : bad(&r, C_NAME,
                               "names a node a second time (node names must be "
                               "unique)");
            break;
        }
        in->n_nodes++;
        if (nd.gpus > in->max_gpus)
            in->max_gpus = nd.gpus;
    }
    close_reader(&r);
    eco_csv_names_fini(&names);
    return rc < 0 ? rc : 0;
}

/* "A|B|C": the bit mask of the models (unknown names are added: no node has them). */
static int models_mask(const struct reader *r, struct eco_pl_instance *in, uint64_t *mask)
{
    char buf[LINE_MAX_BYTES];
    snprintf(buf, sizeof buf, "%s", field(r, C_MODEL));
    *mask = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, "|", &save); t; t = strtok_r(NULL, "|", &save)) {
        int m = eco_pl_model_index(in, t);
        if (m < 0)
            return bad(r, C_MODEL, "names more than 64 GPU models in all");
        *mask |= 1ull << m;
    }
    return 0;
}

static int item_gpus(const struct reader *r, struct eco_pl_item *it)
{
    double v;
    if (eco_parse_double(field(r, C_GPUS), &v) || v < 0 || v > ECO_PL_MAX_GPUS)
        return bad(r, C_GPUS, "must be a GPU count from 0 to 64");
    if (r->col[C_GPU_MILLI] >= 0) { /* openb: num_gpu and gpu_milli per GPU */
        if (v != floor(v))
            return bad(r, C_GPUS, "must be a whole number of GPUs");
        int64_t milli;
        int rc = number(r, C_GPU_MILLI, 1, ECO_PL_GPU_MILLI, &milli);
        if (rc)
            return rc;
        it->gpus = (uint16_t)v;
        it->gpu_milli = it->gpus ? (uint16_t)milli : 0;
        if (it->gpus && milli == 0)
            return bad(r, C_GPU_MILLI, "must be 1..1000 when GPUs are requested");
        if (it->gpus > 1 && milli != ECO_PL_GPU_MILLI)
            return bad(r, C_GPU_MILLI, "must be 1000 when more than one GPU is requested");
        return 0;
    }
    if (v > 0 && v < 1) { /* a share of one GPU, in steps of 1/1000 */
        double milli = v * ECO_PL_GPU_MILLI;
        if (fabs(milli - round(milli)) > 1e-6 || round(milli) < 1)
            return bad(r, C_GPUS, "is a GPU share finer than 1/1000");
        it->gpus = 1;
        it->gpu_milli = (uint16_t)round(milli);
        return 0;
    }
    if (v != floor(v))
        return bad(r, C_GPUS, "must be a share below 1 or a whole number of GPUs");
    it->gpus = (uint16_t)v;
    it->gpu_milli = it->gpus ? ECO_PL_GPU_MILLI : 0;
    return 0;
}

int eco_pl_read_items(const char *path, struct eco_pl_instance *in, struct eco_error *err)
{
    struct reader r;
    int rc = open_reader(&r, path, item_cols, err);
    size_t cap = in->n_items;
    int header_nf = r.nf;
    while (!rc && (rc = next_line(&r)) == 1) {
        rc = check_fields(&r, header_nf);
        struct eco_pl_item it = {0};
        if (!rc)
            rc = cpu_mem(&r, &it.cpu_milli, &it.mem_mib);
        if (!rc)
            rc = item_gpus(&r, &it);
        if (!rc)
            rc = models_mask(&r, in, &it.models);
        if (rc)
            break;
        copy_name(it.name, field(&r, C_NAME), r.line);
        if (grow((void **)&in->items, in->n_items, &cap, sizeof *in->items)) {
            rc = eco_errorf(err, -ENOMEM, "%s:%lu: out of memory", path, r.line);
            break;
        }
        in->items[in->n_items++] = it;
    }
    close_reader(&r);
    return rc < 0 ? rc : 0;
}

/* Added to --seed so that the shuffle does not reuse the draws --inflate made with the same
 * seed (2^64 / golden ratio, the usual odd constant for splitting a seed into streams). */
#define SHUFFLE_STREAM 0x9e3779b97f4a7c15ull

void eco_pl_shuffle(struct eco_pl_instance *in, uint64_t seed)
{
    struct eco_rng rng;
    eco_rng_init(&rng, seed + SHUFFLE_STREAM);
    for (uint32_t i = in->n_items; i > 1; i--) {
        uint32_t j = (uint32_t)(eco_rng_uniform(&rng) * i);
        if (j >= i)
            j = i - 1;
        struct eco_pl_item t = in->items[i - 1];
        in->items[i - 1] = in->items[j];
        in->items[j] = t;
    }
}
