/* SPDX-License-Identifier: MIT */
/* Registry of queue policies by name. */
#include <string.h>
#include <strings.h>
#include "ecosched/policy.h"

#define ECO_POLICY(name) extern const struct eco_policy_ops eco_policy_##name;
#include "policies.def"
#undef ECO_POLICY

static const struct eco_policy_ops *const policies[] = {
#define ECO_POLICY(name) &eco_policy_##name,
#include "policies.def"
#undef ECO_POLICY
    NULL,
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
