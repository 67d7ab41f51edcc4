/* SPDX-License-Identifier: MIT */
/* Pieces of Slurm's text shared by the sacct trace reader and the Slurm node lists of
 * --cluster: GPU counts and types from TRES and GRES strings, the site's GPU type names mapped
 * to the catalog (--gpu-type-map), and Slurm's time strings. */
#ifndef ECOSCHED_SLURM_GRES_H
#define ECOSCHED_SLURM_GRES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ecosched/error.h"

/* Most entries of a --gpu-type-map, and the longest site name: a site has a few GPU types. */
#define ECO_GRES_MAP_MAX 64
#define ECO_GRES_NAME_MAX 64

/* Site GPU type names (gres types, e.g. "a100_80g") and the catalog type each stands for. */
struct eco_gres_map {
    size_t n;
    struct {
        char site[ECO_GRES_NAME_MAX];
        int type; /* catalog index */
    } e[ECO_GRES_MAP_MAX];
};

/* Parses "SITE=TYPE[,SITE=TYPE...]" (TYPE a catalog name; NULL or "" is an empty map). 0, or
 * -EINVAL with err naming the bad part. */
int eco_gres_map_parse(const char *spec, struct eco_gres_map *m, struct eco_error *err);

/* The catalog index of the gres type `name`: the map's entry first (names compared without
 * regard to case), then the catalog's name (eco_catalog_find, case-insensitive); -1 if none. */
int eco_gres_type(const struct eco_gres_map *m, const char *name);

/* The GPUs a TRES or GRES string gives and their type. */
struct eco_gres_gpus {
    uint64_t count;               /* GPUs; 0 when the string names none */
    char type[ECO_GRES_NAME_MAX]; /* the gres type ("a100"), "" when untyped */
    bool mixed;                   /* more than one type: type is the first */
    char bad[96];                 /* on -EINVAL: the malformed entry */
};

/* A TRES string, "billing=1,cpu=1,gres/gpu:a100=1,gres/gpu=1,node=1": the GPUs are gres/gpu=N
 * (or, without it, the sum of the gres/gpu:TYPE=N entries), their type that of the typed
 * entries. Other resources are ignored. 0, or -EINVAL with out->bad the malformed entry. */
int eco_gres_tres(const char *s, struct eco_gres_gpus *out);

/* A GRES string, "gpu:a100:4(S:0-1),gpu:2,mps:100": the gpu entries' counts (an entry without a
 * count is 1) and type; other gres names are ignored, as are "(null)" and "". 0 or -EINVAL with
 * out->bad the malformed entry. */
int eco_gres_gres(const char *s, struct eco_gres_gpus *out);

/* A Slurm time string as sacct and scontrol print it: [DD-]HH:MM:SS, MM:SS, DD-HH, DD-HH:MM, or
 * a whole number of minutes; *out in seconds. 0 or -EINVAL. */
int eco_slurm_duration(const char *s, double *out);

#endif
