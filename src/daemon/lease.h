/* SPDX-License-Identifier: MIT */
/* lease.c: the node's fallback lease from the cluster power controller (powerd): its share of
 * the cluster budget, taken as the node budget when powerd is silent for the lease time, and
 * the limits powerd last set, kept across a restart (docs/daemon/README.md, "Fallback"). */
#ifndef ECOD_LEASE_H
#define ECOD_LEASE_H

#include <stdbool.h>
#include "ecosched/error.h"
#include "ecosched/gpusel.h"

/* Bounds of a lease from powerd (POST /v1/node/budget "lease_s"): at least 1 s, the daemon's
 * tick, below which expiry could not be seen in time; at most a day, past which a silent
 * controller is a fault an operator must see rather than a hiccup to ride out. */
#define ECOD_LEASE_MIN_S 1.0
#define ECOD_LEASE_MAX_S 86400.0
/* Largest fallback share: the node budget's own bound (nodecap.c, budget_w). */
#define ECOD_LEASE_MAX_W 100000.0

/* The lease state: plain data, no I/O, filled by the functions below with the time passed in. */
struct ecod_lease {
    double fallback_w;     /* the share powerd gave this node (0: no lease ever given) */
    double lease_s;        /* how long powerd may be silent before the fallback */
    double heard_wall;     /* wall s of the last renewal (persisted) */
    double heard_mono;     /* monotonic s of it in this process */
    bool active;           /* the fallback is the node budget now */
    double saved_budget_w; /* the node budget the fallback replaced (back when it ends) */
    double limit_w[ECO_GPUSEL_MAX_GPUS]; /* the last limit powerd set per GPU, 0: none */
};

/* 0 when fallback_w (W) and lease_s (s) are a lease, or both 0 (the release: no lease from
 * then on), else -EINVAL with err naming the field ("fallback_w ..." or "lease_s ..."). */
int ecod_lease_check(double fallback_w, double lease_s, struct eco_error *err);
/* Records a renewal heard at wall/mono. Returns true when it ends an active fallback (the
 * caller gives the node budget back); active is false afterwards. */
bool ecod_lease_renew(struct ecod_lease *l, double fallback_w, double lease_s, double wall,
                      double mono);
/* Seconds of the lease left at mono (< 0: expired; +inf: no lease). */
double ecod_lease_left_s(const struct ecod_lease *l, double mono);
/* True when a lease exists, has expired at mono and its fallback is not active yet. */
bool ecod_lease_due(const struct ecod_lease *l, double mono);
/* After a load: heard_mono from heard_wall, as if this process had heard it (wall, mono: now);
 * a fallback active before the restart is taken again by the first tick (active false). */
void ecod_lease_resume(struct ecod_lease *l, double wall, double mono);
/* The lease as a file (JSON, "version": 1, encoded field by field). load: 0, -ENOENT when
 * there is none (l zeroed), -EBADMSG naming the field when it is not a lease file (l zeroed);
 * save: 0 or -errno, written to path.tmp and renamed, so a reader sees one or the other. */
int ecod_lease_load(const char *path, struct ecod_lease *l, struct eco_error *err);
int ecod_lease_save(const char *path, const struct ecod_lease *l, struct eco_error *err);

struct ecod;
/* The daemon's side (d->lease, the file STATE_DIR/lease.json). init: loads it and puts back
 * the limits powerd last set (before ecod__startup_reconcile_limits, which leaves those GPUs
 * alone; after ecod__startup_recover, whose adopted jobs' caps bound them), at wall/mono now. tick:
 * takes the fallback when the lease expired (before the node budget's tick). heard: a renewal
 * from POST /v1/node/budget (validated). limit: a limit powerd set on GPU g. budget: the node
 * budget asked by POST /v1/node/budget's budget_w while a fallback holds (kept for its end;
 * returns the budget to apply now). */
void ecod__lease_init(struct ecod *d, double wall, double mono);
void ecod__lease_tick(struct ecod *d, double mono);
/* After the node budget's tick, under a fallback: the limits it set, kept for a restart. */
void ecod__lease_keep_limits(struct ecod *d);
/* heard with fallback_w 0 (and lease_s 0): the release; an active fallback ends. */
void ecod__lease_heard(struct ecod *d, double fallback_w, double lease_s, double wall, double mono);
void ecod__lease_limit(struct ecod *d, unsigned g, double w);
double ecod__lease_budget(struct ecod *d, double budget_w);

#endif
