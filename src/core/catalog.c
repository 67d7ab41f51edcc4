/* SPDX-License-Identifier: MIT */
/* Built-in GPU catalog. Figures from data/gpu_power_specs/gpu_power_reference.csv (measured
 * NVML ranges and idle snapshots) unless the source field says "datasheet" or "assumption";
 * docs/models/catalog.md gives the reasoning for every figure. */
#include <ctype.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>
#include "ecosched/catalog.h"

/* Ranges given in the reference table (e.g. idle 15-30 W) enter as their midpoint.
 *
 * GPU power states (docs/models/energy.md, "GPU power states"):
 * - idle_w, no CUDA context: the catalog's idle snapshot (gpu_power_reference.csv);
 * - low_util_w: the median average power of the Zeus traces' lightest workload
 *   (movielens-1m/ncf, "barely loads the GPU") at the default limit, where Zeus measured the
 *   type; else idle_w plus the A100 fleet's step (below) scaled by TDP / 400 W;
 * - idle_ctx_w, a resident context but no kernel: idle_w + 0.27 x (low_util_w - idle_w). The
 *   0.27 is the A100 fleet's (Acme Seren, utilization_power_cdfs.csv): GPUs with no memory in
 *   use (p0-p24 of samples) draw a median 63.4 W, those with memory in use but 0 % utilisation
 *   (p24-p31) 67.3 W, those just above 0 % (p31-p40) 77.7 W: (67.3 - 63.4) / (77.7 - 63.4). */
#define CTX_SHARE 0.27
/* The A100 fleet's step from no context to low utilisation: 77.7 - 63.4 W (as above). */
#define A100_LOW_STEP_W 14.3
#define CTX(idle, low) ((idle) + CTX_SHARE * ((low) - (idle)))

/* Host classes (docs/models/energy.md, "Host base power"). A100: measured, the Acme Seren
 * fleet's 8-GPU servers idle at 1,421 W (p1 of IPMI power) of which 8 idle GPUs draw ~8 x 60 W,
 * leaving ~941 W; its CPU-only servers idle at 522 W: 522 W + (941 - 522) / 8 W per GPU slot.
 * Other classes scale that host by the host's share of the vendor's maximum system power
 * (maximum minus 8 x GPU TDP): DGX A100 6,500 W - 8 x 400 W = 3,300 W; DGX-1 (V100) 3,500 W -
 * 8 x 300 W = 1,100 W (x 1/3); DGX H100 10,200 W - 8 x 700 W = 4,600 W (x 1.394). */
#define A100_HOST .host_base_w = 522.0, .host_per_gpu_w = 52.375
#define DGX1_HOST .host_base_w = 522.0 / 3.0, .host_per_gpu_w = 52.375 / 3.0
#define DGXH100_HOST                                                                               \
    .host_base_w = 522.0 * 4600.0 / 3300.0, .host_per_gpu_w = 52.375 * 4600.0 / 3300.0
#define A100_SRC "A100 server class: Acme Seren IPMI idle (utilization_power_cdfs.csv)"
#define DGX1_SRC                                                                                   \
    "DGX-1 class: Acme A100 host x (3,500 - 8 x 300) / (6,500 - 8 x 400) W, NVIDIA DGX-1 and "     \
    "DGX A100 datasheet maximum power"
/* Power-on to ready (firmware POST of a multi-GPU server plus OS boot and node daemons):
 * assumption of 300 s, range 120-600 s; Slurm's ResumeTimeout must exceed it on such
 * clusters. Shutdown to off: Slurm's default SuspendTimeout (30 s). */
#define NODE_TIMES .boot_s = 300.0, .shutdown_s = 30.0
/* Wear of one power cycle (thermal cycling of solder joints, fans, PSU inrush), as an energy
 * equivalent the power-down policies weigh against the idle energy they save: assumption of
 * 0.05 kWh (180 kJ, about the energy an 8-GPU V100 node draws idle in 6 minutes); no bundled
 * source measures it; docs/models/energy.md gives the range swept (0-1 kWh). */
#define CYCLE .cycle_j = 180e3

static const struct eco_gpu_type catalog[] = {
    {.name = "V100",
     .model = "Tesla V100-PCIE-32GB",
     .mem_gb = 32,
     .idle_w = 23,
     .low_util_w = 37,
     .idle_ctx_w = CTX(23, 37),
     .min_limit_w = 100,
     .max_limit_w = 250,
     .default_limit_w = 250,
     .max_train_power_w = 228.4,
     .source = "limits: Zeus V100 NVML sweep 100-250 W; idle 23 W and 250 W default: nvidia-smi of "
               "V100-PCIE-32GB (gpu_power_reference.csv); 32 GB: model name",
     DGX1_HOST,
     NODE_TIMES,
     CYCLE,
     .host_source = DGX1_SRC},
    {.name = "P100",
     .model = "Tesla P100",
     .mem_gb = 16,
     .idle_w = 25,
     .low_util_w = 34,
     .idle_ctx_w = CTX(25, 34),
     .min_limit_w = 125,
     .max_limit_w = 250,
     .default_limit_w = 250,
     .max_train_power_w = 180.1,
     .source = "limits: Zeus P100 NVML sweep 125-250 W (gpu_power_reference.csv); default = max "
               "limit; 16 GB: datasheet (PCIe 16GB); idle 25 W: assumption (no measured idle in "
               "data), between V100 (23 W) and A40 (15-30 W)",
     DGX1_HOST,
     NODE_TIMES,
     CYCLE,
     .host_source = DGX1_SRC},
    {.name = "A40",
     .model = "NVIDIA A40",
     .mem_gb = 48,
     .idle_w = 22.5,
     .low_util_w = 87,
     .idle_ctx_w = CTX(22.5, 87),
     .min_limit_w = 100,
     .max_limit_w = 300,
     .default_limit_w = 300,
     .max_train_power_w = 276.9,
     .source = "nvidia-smi -q of 10 idle A40s: limits 100-300 W, default 300 W, idle 15-30 W "
               "(midpoint); Zeus A40 sweep (gpu_power_reference.csv); 48 GB: datasheet",
     A100_HOST,
     NODE_TIMES,
     CYCLE,
     .host_source = "assumption: A100 server class (same era host) as Acme Seren's"},
    {.name = "RTX6000",
     .model = "Quadro RTX 6000",
     .mem_gb = 24,
     .idle_w = 20,
     .low_util_w = 66,
     .idle_ctx_w = CTX(20, 66),
     .min_limit_w = 100,
     .max_limit_w = 260,
     .default_limit_w = 260,
     .max_train_power_w = 252.5,
     .source = "limits: Zeus RTX 6000 NVML sweep 100-260 W (gpu_power_reference.csv); default = "
               "max limit; 24 GB: datasheet; idle 20 W: assumption (no measured idle in data)",
     DGX1_HOST,
     NODE_TIMES,
     CYCLE,
     .host_source = DGX1_SRC},
    {.name = "A100-PCIE",
     .model = "NVIDIA A100-PCIE-40GB",
     .mem_gb = 40,
     .idle_w = 32,
     .low_util_w = 32 + A100_LOW_STEP_W * 250.0 / 400.0,
     .idle_ctx_w = CTX(32, (32 + A100_LOW_STEP_W * 250.0 / 400.0)),
     .min_limit_w = 150,
     .max_limit_w = 250,
     .default_limit_w = 250,
     .max_train_power_w = 0,
     .source = "idle 32 W, 250 W default: nvidia-smi of A100-PCIE-40GB (gpu_power_reference.csv); "
               "max = default; min 150 W: datasheet (NVML minimum of the PCIe card)",
     A100_HOST,
     NODE_TIMES,
     CYCLE,
     .host_source = "assumption: A100 server class (same era host) as Acme Seren's"},
    {.name = "A100-SXM",
     .model = "NVIDIA A100-SXM4-40GB",
     .mem_gb = 40,
     .idle_w = 45,
     .low_util_w = 45 + A100_LOW_STEP_W,
     .idle_ctx_w = CTX(45, (45 + A100_LOW_STEP_W)),
     .min_limit_w = 100,
     .max_limit_w = 400,
     .default_limit_w = 400,
     .max_train_power_w = 0,
     .source = "idle 45 W, 400 W default: nvidia-smi of A100-SXM4-40GB; Acme fleet 400 W TDP, "
               "idle 55-63 W (gpu_power_reference.csv); max = default; min 100 W: datasheet",
     A100_HOST,
     NODE_TIMES,
     CYCLE,
     .host_source = A100_SRC},
    {.name = "H100-SXM",
     .model = "NVIDIA H100 80GB HBM3",
     .mem_gb = 80,
     .idle_w = 86.5,
     .low_util_w = 86.5 + A100_LOW_STEP_W * 700.0 / 400.0,
     .idle_ctx_w = CTX(86.5, (86.5 + A100_LOW_STEP_W * 700.0 / 400.0)),
     .min_limit_w = 200,
     .max_limit_w = 700,
     .default_limit_w = 700,
     .max_train_power_w = 0,
     .source = "nvidia-smi -q dumps of idle HGX H100: limits 200-700 W, default 700 W, idle "
               "72-101 W (midpoint) (gpu_power_reference.csv, indicative); 80 GB: model name",
     DGXH100_HOST,
     NODE_TIMES,
     CYCLE,
     .host_source = "DGX H100 class: Acme A100 host x (10,200 - 8 x 700) / 3,300 W, NVIDIA DGX "
                    "H100 datasheet maximum power"},
    {.name = "H100-NVL",
     .model = "NVIDIA H100 NVL",
     .mem_gb = 94,
     .idle_w = 61.5,
     .low_util_w = 61.5 + A100_LOW_STEP_W,
     .idle_ctx_w = CTX(61.5, (61.5 + A100_LOW_STEP_W)),
     .min_limit_w = 200,
     .max_limit_w = 400,
     .default_limit_w = 400,
     .max_train_power_w = 0,
     .source = "idle 61-62 W (midpoint), 400 W default: nvidia-smi of 2 H100 NVL "
               "(gpu_power_reference.csv); max = default; min 200 W and 94 GB: datasheet",
     A100_HOST,
     NODE_TIMES,
     CYCLE,
     .host_source = "assumption: A100 server class (same era host) as Acme Seren's"},
};

size_t eco_catalog_count(void)
{
    return sizeof catalog / sizeof catalog[0];
}

const struct eco_gpu_type *eco_catalog_get(size_t i)
{
    return i < eco_catalog_count() ? &catalog[i] : NULL;
}

/* Case-insensitive compare that treats '-' and '_' alike and ignores nothing else. */
static int name_eq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = (char)tolower((unsigned char)*a), y = (char)tolower((unsigned char)*b);
        if (x == '_')
            x = '-';
        if (y == '_')
            y = '-';
        if (x != y)
            return 0;
    }
    return *a == *b;
}

int eco_catalog_find(const char *name)
{
    if (!name)
        return -1;
    for (size_t i = 0; i < eco_catalog_count(); i++)
        if (name_eq(name, catalog[i].name))
            return (int)i;
    return -1;
}

/* First case-insensitive occurrence of token in s, or NULL (strcasestr is a GNU extension). */
static const char *find_nocase(const char *s, const char *token)
{
    size_t n = strlen(token);
    for (; *s; s++)
        if (!strncasecmp(s, token, n))
            return s;
    return NULL;
}

/* Whether `token` occurs in s (case-insensitive) not followed by a letter or digit ("A40" is
 * not in "RTX A4000"). */
static bool has_word(const char *s, const char *token)
{
    size_t n = strlen(token);
    for (const char *p = find_nocase(s, token); p; p = find_nocase(p + 1, token))
        if (!isalnum((unsigned char)p[n]))
            return true;
    return false;
}

int eco_catalog_match(const char *model)
{
    const char *type = NULL;
    if (!model)
        return -1;
    if (has_word(model, "V100"))
        type = "V100";
    else if (has_word(model, "P100"))
        type = "P100";
    else if (has_word(model, "A40"))
        type = "A40";
    else if ((has_word(model, "RTX 6000") || has_word(model, "RTX6000")) &&
             !find_nocase(model, "Ada"))
        type = "RTX6000";
    else if (has_word(model, "A100") && find_nocase(model, "SXM"))
        type = "A100-SXM";
    else if (has_word(model, "A100") && find_nocase(model, "PCIE"))
        type = "A100-PCIE";
    else if (has_word(model, "H100") && find_nocase(model, "NVL"))
        type = "H100-NVL";
    else if (has_word(model, "H100") && (find_nocase(model, "SXM") || find_nocase(model, "HBM3")))
        type = "H100-SXM";
    return type ? eco_catalog_find(type) : -1;
}
