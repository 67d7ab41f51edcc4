/* SPDX-License-Identifier: MIT */
/* GET /: ecoschedd's live page (src/daemon/page.html, compiled in by cmake/embed.cmake). It
 * holds no data: its script reads the JSON API, so it is served like any static file. */
#include <microhttpd.h>
#include "page.h"

extern const unsigned char ecod__page_html[];
extern const size_t ecod__page_html_len;

/* The page's script and style are inline; it may only talk to this server (the API) and load
 * nothing from anywhere else. */
#define PAGE_CSP                                                                                   \
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "                  \
    "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; "              \
    "frame-ancestors 'none'"

int ecod__page(struct MHD_Connection *c)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(
        ecod__page_html_len, (void *)ecod__page_html, MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", "text/html; charset=utf-8");
    MHD_add_response_header(r, "Content-Security-Policy", PAGE_CSP);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Cache-Control", "no-cache");
    int ret = (int)MHD_queue_response(c, 200, r);
    MHD_destroy_response(r);
    return ret;
}
