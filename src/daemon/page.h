/* SPDX-License-Identifier: MIT */
/* page.c: ecoschedd's live page (GET /). */
#ifndef ECOD_PAGE_H
#define ECOD_PAGE_H

/* page.c: queues the live page (GET /) on connection c; an enum MHD_Result. */
struct MHD_Connection;
int ecod__page(struct MHD_Connection *c);

#endif
