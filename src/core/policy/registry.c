/* SPDX-License-Identifier: MIT */
/* Registry of queue policies by name. */
#include <string.h>
#include <strings.h>
#include "ecosched/policy.h"

extern const struct eco_policy_ops eco_policy_fifo;
extern const struct eco_policy_ops eco_policy_greedy;
extern const struct eco_policy_ops eco_policy_easy;
extern const struct eco_policy_ops eco_policy_sjf;
extern const struct eco_policy_ops eco_policy_las;
extern const struct eco_policy_ops eco_policy_edf;
extern const struct eco_policy_ops eco_policy_lsf;

static const struct eco_policy_ops *const policies[] = {
    &eco_policy_fifo, &eco_policy_greedy, &eco_policy_easy, &eco_policy_sjf, &eco_policy_las,
    &eco_policy_edf,  &eco_policy_lsf,  NULL,
};

const struct eco_policy_ops *const *eco_policy_all(void)
{
    return policies;
}

const struct eco_policy_ops *eco_policy_find(const char *name)
{
    for (size_t i = 0; policies[i]; i++)
        if (!strcasecmp(policies[i]->name, name))
            return policies[i];
    return NULL;
}

const struct eco_policy_ops *eco_policy_find_spec(const char *value, const char **params)
{
    const char *colon = strchr(value, ':');
    size_t len = colon ? (size_t)(colon - value) : strlen(value);
    *params = colon ? colon + 1 : NULL;
    for (size_t i = 0; policies[i]; i++)
        if (strlen(policies[i]->name) == len && !strncasecmp(policies[i]->name, value, len))
            return policies[i];
    return NULL;
}
