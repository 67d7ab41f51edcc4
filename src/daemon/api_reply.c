/* SPDX-License-Identifier: MIT */
/* JSON answers of the HTTP APIs (ecoschedd's and ecosched powerd's). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "api_reply.h"
#include "ecosched/error.h"

/* Queues `obj` (consumed) as the JSON response with HTTP `status`. */
enum MHD_Result ecod_reply(struct MHD_Connection *c, unsigned status, json_t *obj)
{
    enum MHD_Result ret = MHD_NO;
    char *text = obj ? json_dumps(obj, JSON_COMPACT) : NULL;
    json_decref(obj);
    if (!text)
        goto out;
    size_t len = strlen(text);
    text[len] = '\n'; /* replaces the NUL: the body is len + 1 bytes of text */
    struct MHD_Response *r = MHD_create_response_from_buffer(len + 1, text, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(text);
        goto out;
    }
    MHD_add_response_header(r, "Content-Type", "application/json");
    ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
out:
    return ret;
}

/* {"error": message, "field": field} with HTTP `status`; field NULL: not about a field. */
enum MHD_Result ecod_fail(struct MHD_Connection *c, unsigned status, const char *field,
                          const char *fmt, ...)
{
    char msg[ECO_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_t *o = json_pack("{s:s}", "error", msg);
    if (o && field)
        json_object_set_new(o, "field", json_string(field));
    return ecod_reply(c, status, o);
}

