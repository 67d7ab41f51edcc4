/* SPDX-License-Identifier: MIT */
/* Internal to the consolidation simulator: the Acme quantile tables (consol_acme.c). */
#ifndef ECOSCHED_CONSOL_INTERNAL_H
#define ECOSCHED_CONSOL_INTERNAL_H

#define ECO_ACME_N 1000
extern const double eco_acme_cdf_pct[ECO_ACME_N];
extern const double eco_acme_util_pct[ECO_ACME_N];
extern const double eco_acme_mem_pct[ECO_ACME_N];
extern const double eco_acme_util_active_mean;
extern const double eco_acme_mem_active_mean;

#endif
