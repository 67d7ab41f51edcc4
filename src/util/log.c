/* SPDX-License-Identifier: MIT */
/* The edges' log: level names, stderr or syslog. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <strings.h>
#include <syslog.h>
#include "log.h"

int eco_log_level = ECO_LOG_INFO;
static const char *log_prog = "ecosched";
static bool log_syslog;

static const char *const LEVEL_NAMES[8] = {[ECO_LOG_ERR] = "error",
                                           [ECO_LOG_WARN] = "warning",
                                           [ECO_LOG_INFO] = "info",
                                           [ECO_LOG_DEBUG] = "debug"};

void eco_log_setup(const char *prog, bool to_syslog)
{
    if (prog)
        log_prog = prog;
    log_syslog = to_syslog;
}

void eco_log_write(int level, const char *tag, const char *fmt, ...)
{
    /* One message is a line of the log: 1 KiB holds the longest (a path and an error). */
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *name = LEVEL_NAMES[level & 7] ? LEVEL_NAMES[level & 7] : "log";
    if (log_syslog)
        syslog(level, "%s%s%s", tag ? tag : "", tag ? ": " : "", msg);
    else
        fprintf(stderr, "%s: %s: %s%s%s\n", log_prog, name, tag ? tag : "", tag ? ": " : "", msg);
}

int eco_log_level_parse(const char *name)
{
    static const struct {
        const char *name;
        int level;
    } names[] = {{"error", ECO_LOG_ERR}, {"err", ECO_LOG_ERR},   {"warning", ECO_LOG_WARN},
                 {"warn", ECO_LOG_WARN}, {"info", ECO_LOG_INFO}, {"debug", ECO_LOG_DEBUG}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcasecmp(name, names[i].name))
            return names[i].level;
    return -EINVAL;
}
