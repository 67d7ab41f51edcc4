/* SPDX-License-Identifier: MIT */
/* Lists of names for --help and "known: ..." messages, built from the registries (never typed
 * by hand, so that a new policy, placement or format shows up in both at once). */
#include <string.h>
#include "cli.h"
#include "ecosched/carbon.h"
#include "ecosched/consol.h"
#include "place/place_io.h"
#include "ecosched/policy.h"
#include "ecosched/powercap.h"
#include "sim/trace.h"

void eco_cli__list_add(struct eco_cli_list *l, const char *name)
{
    size_t len = strlen(l->buf);
    if (len + 1 < sizeof l->buf)
        snprintf(l->buf + len, sizeof l->buf - len, "%s%s", len ? ", " : "", name);
}

const char *eco_cli__names(enum eco_cli_registry r, struct eco_cli_list *l)
{
    l->buf[0] = '\0';
    switch (r) {
    case ECO_CLI_POLICIES:
        for (const struct eco_policy_ops *const *p = eco_policy_all(); *p; p++)
            eco_cli__list_add(l, (*p)->name);
        break;
    case ECO_CLI_PLACEMENTS:
        for (size_t i = 0; eco_placement_any_at(i); i++)
            eco_cli__list_add(l, eco_placement_any_at(i)->name);
        break;
    case ECO_CLI_POWER_DOWN:
        for (const struct eco_powerdown_ops *const *p = eco_powerdown_all(); *p; p++)
            eco_cli__list_add(l, (*p)->usage ? (*p)->usage : (*p)->name);
        break;
    case ECO_CLI_CAPPERS:
        for (const struct eco_capper_ops *const *p = eco_capper_all(); *p; p++)
            eco_cli__list_add(l, (*p)->name);
        break;
    case ECO_CLI_FORMATS:
        /* eco_trace_format_name says "unknown" past the last format */
        for (int f = 0; strcmp(eco_trace_format_name((enum eco_trace_format)f), "unknown"); f++)
            eco_cli__list_add(l, eco_trace_format_name((enum eco_trace_format)f));
        break;
    case ECO_CLI_PLACE_ALGOS:
        for (size_t i = 0; eco_pl_algo_any_at(i); i++)
            eco_cli__list_add(l, eco_pl_algo_any_at(i)->name);
        break;
    case ECO_CLI_OBJECTIVES:
        /* eco_pl_objective_name says "?" past the last objective */
        for (int o = 0; strcmp(eco_pl_objective_name(o), "?"); o++)
            eco_cli__list_add(l, eco_pl_objective_name(o));
        break;
    case ECO_CLI_CONSOLIDATION:
        for (const struct eco_consol_ops *const *p = eco_consol_all(); *p; p++)
            eco_cli__list_add(l, (*p)->name);
        break;
    case ECO_CLI_CARBON:
        eco_cli__list_add(l, "none");
        for (const struct eco_carbon_ops *const *p = eco_carbon_all(); *p; p++)
            eco_cli__list_add(l, (*p)->name);
        break;
    }
    return l->buf;
}

/* --help's width: the 80 columns of a terminal, less the margin most help texts keep. */
#define HELP_WIDTH 78
/* Where the text of a "  NAME          text" entry starts. */
#define ENTRY_INDENT 16

void eco_cli__help_entry(FILE *f, const char *name, const char *text)
{
    int col = fprintf(f, "  %-13s", name);
    while (*text) {
        size_t word = strcspn(text, " ");
        if (col > ENTRY_INDENT && col + 1 + (int)word > HELP_WIDTH)
            col = fprintf(f, "\n%*s", ENTRY_INDENT - 1, "") - 1;
        col += fprintf(f, " %.*s", (int)word, text);
        text += word;
        text += strspn(text, " ");
    }
    fputc('\n', f);
}
