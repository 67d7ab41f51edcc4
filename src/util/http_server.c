/* SPDX-License-Identifier: MIT */
/* The server side of the HTTP APIs (ecoschedd's and ecosched powerd's): request bodies and
 * JSON answers. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "http_server.h"
#include "ecosched/error.h"

int eco_http_body_add(struct eco_http_body *b, const char *data, size_t n)
{
    if (!b->too_big && b->len + n > b->max) {
        b->too_big = true;
        free(b->data);
        b->data = NULL;
        b->len = 0;
    }
    if (b->too_big || n == 0)
        return 0;
    char *d = realloc(b->data, b->len + n);
    if (!d)
        return -ENOMEM;
    memcpy(d + b->len, data, n);
    b->data = d;
    b->len += n;
    return 0;
}

void eco_http_body_fini(struct eco_http_body *b)
{
    free(b->data);
    b->data = NULL;
    b->len = 0;
}

/* Queues `obj` (consumed) as the JSON response with HTTP `status`. */
enum MHD_Result eco_http_reply(struct MHD_Connection *c, unsigned status, json_t *obj)
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
enum MHD_Result eco_http_fail(struct MHD_Connection *c, unsigned status, const char *field,
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
    return eco_http_reply(c, status, o);
}
