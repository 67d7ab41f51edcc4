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

/* Ranges given in the reference table (e.g. idle 15-30 W) enter as their midpoint. */
static const struct eco_gpu_type catalog[] = {
    {.name = "V100",
     .model = "Tesla V100-PCIE-32GB",
     .mem_gb = 32,
     .idle_w = 23,
     .min_limit_w = 100,
     .max_limit_w = 250,
     .default_limit_w = 250,
     .max_train_power_w = 228.4,
     .source = "limits: Zeus V100 NVML sweep 100-250 W; idle 23 W and 250 W default: nvidia-smi of "
               "V100-PCIE-32GB (gpu_power_reference.csv); 32 GB: model name"},
    {.name = "P100",
     .model = "Tesla P100",
     .mem_gb = 16,
     .idle_w = 25,
     .min_limit_w = 125,
     .max_limit_w = 250,
     .default_limit_w = 250,
     .max_train_power_w = 180.1,
     .source = "limits: Zeus P100 NVML sweep 125-250 W (gpu_power_reference.csv); default = max "
               "limit; 16 GB: datasheet (PCIe 16GB); idle 25 W: assumption (no measured idle in "
               "data), between V100 (23 W) and A40 (15-30 W)"},
    {.name = "A40",
     .model = "NVIDIA A40",
     .mem_gb = 48,
     .idle_w = 22.5,
     .min_limit_w = 100,
     .max_limit_w = 300,
     .default_limit_w = 300,
     .max_train_power_w = 276.9,
     .source = "nvidia-smi -q of 10 idle A40s: limits 100-300 W, default 300 W, idle 15-30 W "
               "(midpoint); Zeus A40 sweep (gpu_power_reference.csv); 48 GB: datasheet"},
    {.name = "RTX6000",
     .model = "Quadro RTX 6000",
     .mem_gb = 24,
     .idle_w = 20,
     .min_limit_w = 100,
     .max_limit_w = 260,
     .default_limit_w = 260,
     .max_train_power_w = 252.5,
     .source = "limits: Zeus RTX 6000 NVML sweep 100-260 W (gpu_power_reference.csv); default = "
               "max limit; 24 GB: datasheet; idle 20 W: assumption (no measured idle in data)"},
    {.name = "A100-PCIE",
     .model = "NVIDIA A100-PCIE-40GB",
     .mem_gb = 40,
     .idle_w = 32,
     .min_limit_w = 150,
     .max_limit_w = 250,
     .default_limit_w = 250,
     .max_train_power_w = 0,
     .source = "idle 32 W, 250 W default: nvidia-smi of A100-PCIE-40GB (gpu_power_reference.csv); "
               "max = default; min 150 W: datasheet (NVML minimum of the PCIe card)"},
    {.name = "A100-SXM",
     .model = "NVIDIA A100-SXM4-40GB",
     .mem_gb = 40,
     .idle_w = 45,
     .min_limit_w = 100,
     .max_limit_w = 400,
     .default_limit_w = 400,
     .max_train_power_w = 0,
     .source = "idle 45 W, 400 W default: nvidia-smi of A100-SXM4-40GB; Acme fleet 400 W TDP, "
               "idle 55-63 W (gpu_power_reference.csv); max = default; min 100 W: datasheet"},
    {.name = "H100-SXM",
     .model = "NVIDIA H100 80GB HBM3",
     .mem_gb = 80,
     .idle_w = 86.5,
     .min_limit_w = 200,
     .max_limit_w = 700,
     .default_limit_w = 700,
     .max_train_power_w = 0,
     .source = "nvidia-smi -q dumps of idle HGX H100: limits 200-700 W, default 700 W, idle "
               "72-101 W (midpoint) (gpu_power_reference.csv, indicative); 80 GB: model name"},
    {.name = "H100-NVL",
     .model = "NVIDIA H100 NVL",
     .mem_gb = 94,
     .idle_w = 61.5,
     .min_limit_w = 200,
     .max_limit_w = 400,
     .default_limit_w = 400,
     .max_train_power_w = 0,
     .source = "idle 61-62 W (midpoint), 400 W default: nvidia-smi of 2 H100 NVL "
               "(gpu_power_reference.csv); max = default; min 200 W and 94 GB: datasheet"},
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
