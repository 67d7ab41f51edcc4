/* SPDX-License-Identifier: MIT */
/* Fuzz target: the time and duration parsers: ISO 8601 UTC times (eco_parse_utc: --trace-start,
 * --not-before, grid-signal rows), durations (eco_parse_duration: --max-delay, powerd's
 * ecosched:max-delay= comments) and `submit --deadline` (eco_cli__parse_deadline), the input
 * as one string. A time that parses is finite, and prints and parses back to its whole second. */
#include "fuzz_util.h"
#include <math.h>
#include <time.h>
#include "cli/cli.h"
#include "util/grid_signal.h"

/* The CLI's error printer (src/cli/main.c), silent here. */
void eco_cli__err(const char *fmt, ...)
{
    (void)fmt;
}

/* A fixed "now" (2026-12-03T00:00:00Z) and time zone: the same input, the same answer. */
#define NOW_S 1796256000.0

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int tz_set;
    if (!tz_set) {
        setenv("TZ", "UTC", 1);
        tzset();
        tz_set = 1;
    }
    char *s = fuzz_str(data, size);
    struct eco_error err = {{0}};
    double t = NAN, back = NAN;
    if (eco_parse_utc(s, &t, &err) == 0) {
        char buf[64];
        FUZZ_CHECK(isfinite(t));
        eco_format_utc(t, buf, sizeof buf);
        FUZZ_CHECK(eco_parse_utc(buf, &back, &err) == 0);
        FUZZ_CHECK(back == floor(t));
    } else {
        FUZZ_CHECK(err.msg[0]);
    }
    double d = NAN;
    if (eco_parse_duration(s, &d, &err) == 0)
        FUZZ_CHECK(isfinite(d) && d >= 0);
    double dl = NAN;
    if (eco_cli__parse_deadline(s, NOW_S, &dl) == 0)
        FUZZ_CHECK(isfinite(dl) && dl > NOW_S);
    free(s);
    return 0;
}
