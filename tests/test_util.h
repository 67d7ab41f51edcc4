/* SPDX-License-Identifier: MIT */
/* Helpers shared by the unit tests: a double comparison that prints both values, and a job set
 * built from a table of jobs. Include after <cmocka.h> (and its stdarg/stddef/setjmp). */
#ifndef ECOSCHED_TEST_UTIL_H
#define ECOSCHED_TEST_UTIL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include "ecosched/job.h"
#include "test_jobs.h"

/* |a - b| <= eps in double precision; on failure names the expression, both values and the
 * tolerance (cmocka 1.1 has no double assertion; its float one rounds to float). A NaN fails. */
#define assert_near(a, b, eps) eco_test_near_at((a), (b), (eps), #a, __FILE__, __LINE__)
static inline void eco_test_near_at(double a, double b, double eps, const char *what,
                                    const char *file, int line)
{
    if (!(fabs(a - b) <= eps))
        fail_msg("%s:%d: %s = %.17g, want %.17g (+-%g)", file, line, what, a, b, eps);
}

/* One row of a test job table. */
struct eco_test_jspec {
    double submit_s, duration_s;
    uint32_t gpus;
};

/* A job set with one job per row of js (ids "j0", "j1", ... as eco_test_add_job); the caller
 * frees it with eco_jobset_destroy. Fails the test when memory runs out. */
static inline struct eco_jobset *eco_test_make_jobs(const struct eco_test_jspec *js, size_t n)
{
    struct eco_jobset *set = eco_jobset_create();
    assert_non_null(set);
    for (size_t i = 0; i < n; i++)
        assert_non_null(eco_test_add_job(set, js[i].submit_s, js[i].duration_s, js[i].gpus));
    return set;
}

#endif
