/* SPDX-License-Identifier: MIT */
/* The server side of the edges' HTTP APIs (libmicrohttpd), shared by ecoschedd and ecosched
 * powerd: request bodies read in chunks with a size limit, and the JSON answers. */
#ifndef ECO_UTIL_HTTP_SERVER_H
#define ECO_UTIL_HTTP_SERVER_H

#include <jansson.h>
#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>

/* A request body as libmicrohttpd hands it over, chunk by chunk. Zero-initialise it and set
 * max (the most bytes kept); past max the body is dropped and too_big set, and the rest is
 * read and dropped too, so that the handler can answer 413 (or 400) once it is all read. */
struct eco_http_body {
    char *data; /* malloc'd, len bytes (not NUL-terminated); NULL when empty or too big */
    size_t len;
    size_t max;
    bool too_big;
};

/* Adds one chunk of n bytes. 0, or -ENOMEM (the connection should be dropped). */
int eco_http_body_add(struct eco_http_body *b, const char *data, size_t n);
/* Frees the body's data (b itself is the caller's). */
void eco_http_body_fini(struct eco_http_body *b);

/* Queues `obj` (consumed) as the JSON response with HTTP `status`. */
enum MHD_Result eco_http_reply(struct MHD_Connection *c, unsigned status, json_t *obj);
/* {"error": message, "field": field} with HTTP `status`; field NULL: not about a field. */
enum MHD_Result eco_http_fail(struct MHD_Connection *c, unsigned status, const char *field,
                              const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
