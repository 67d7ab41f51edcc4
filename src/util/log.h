/* SPDX-License-Identifier: MIT */
/* The edges' log (ecoschedd, ecosched powerd): one level-checked macro with a subsystem tag,
 * written to stderr as "PROG: LEVEL: TAG: message" or to syslog as "TAG: message". The core
 * never logs (it returns errors). */
#ifndef ECO_UTIL_LOG_H
#define ECO_UTIL_LOG_H

#include <stdbool.h>

/* Log levels, syslog's order (lower is more severe). */
enum eco_log_level { ECO_LOG_ERR = 3, ECO_LOG_WARN = 4, ECO_LOG_INFO = 6, ECO_LOG_DEBUG = 7 };

/* Messages above this level are dropped (before their arguments are formatted). */
extern int eco_log_level;

/* Names the program on stderr lines (a string literal or one that outlives the log; default
 * "ecosched") and sends the log to syslog instead (to_syslog, after openlog). */
void eco_log_setup(const char *prog, bool to_syslog);

/* Writes one message (use ECO_LOG). tag NULL: none. */
void eco_log_write(int level, const char *tag, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The one way the daemons log: level-checked, with a subsystem tag ("api", "sched", ...). */
#define ECO_LOG(level, tag, ...)                                                                   \
    do {                                                                                           \
        if ((level) <= eco_log_level)                                                              \
            eco_log_write((level), (tag), __VA_ARGS__);                                            \
    } while (0)

/* Log level from its name (error, warning, info, debug; err, warn); -EINVAL when unknown. */
int eco_log_level_parse(const char *name);

#endif
