/* SPDX-License-Identifier: MIT */
/* The JSON answers every API route gives (api.c), shared by api.c and api_node.c. */
#ifndef ECOD_API_REPLY_H
#define ECOD_API_REPLY_H

#include <jansson.h>
#include <microhttpd.h>

/* Queues `obj` (consumed) as the JSON response with HTTP `status`. */
enum MHD_Result ecod_reply(struct MHD_Connection *c, unsigned status, json_t *obj);
/* {"error": message, "field": field} with HTTP `status`; field NULL: not about a field. */
enum MHD_Result ecod_fail(struct MHD_Connection *c, unsigned status, const char *field,
                          const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
