/* SPDX-License-Identifier: MIT */
/* The daemon's job store: every job and every state change in one SQLite file (WAL), so that
 * after a crash no job is lost and none is started twice. See docs/daemon/store.md. */
#ifndef ECOSCHED_STORE_H
#define ECOSCHED_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "ecosched/error.h"

/* Schema version this code writes (PRAGMA user_version); older files are migrated at open. */
#define ECO_STORE_SCHEMA_VERSION 4

/* Job states as stored (the text in the `state` column is eco_store_state_name's). Allowed
 * transitions: queued -> running | cancelled; running -> done | failed | cancelled | lost. */
enum eco_store_state {
    ECO_STORE_QUEUED = 0,
    ECO_STORE_RUNNING,
    ECO_STORE_DONE,
    ECO_STORE_FAILED,
    ECO_STORE_CANCELLED,
    ECO_STORE_LOST,
    ECO_STORE_NSTATES,
};

/* eco_store_list's filter for "every state". */
#define ECO_STORE_ANY (-1)

/* Power cap values besides a limit in watts. */
#define ECO_STORE_CAP_NONE 0.0
#define ECO_STORE_CAP_AUTO (-1.0)

/* eco_store_open_ex flags. */
#define ECO_STORE_SYNC_FULL 0x1 /* fsync the WAL at every commit (survives power loss) */
/* Open a store that lost acknowledged jobs (its id file, path.ids, names ids the database no
 * longer has: a deleted or cut WAL, an older backup) instead of refusing it: the lost ids are
 * never given again, eco_store_lost says which they were. */
#define ECO_STORE_ACCEPT_LOSS 0x2

/* Ids the store reserves ahead at a time in its id file (path.ids), with one fsync: after an
 * OS crash or power loss (which can drop the last WAL commits, docs/daemon/store.md) new ids
 * start above the reservation, so no id a client was given is given again. 1,000 ids make
 * that fsync (about 2 ms on this VM's ext4) cost 2 us a submit, against the 5,000 submits a
 * second of bench/README.md; the price is a gap of at most 1,000 ids after such a crash. */
#define ECO_STORE_ID_BLOCK 1000

/* One job. For eco_store_insert the caller fills the submit fields and keeps the strings
 * (borrowed for the call only). Fetched jobs own their strings in one block released by
 * eco_store_job_fini; a field that was never set reads as NULL (strings), 0 (times, pid,
 * pgid) or -1 (exit_status). Times are seconds since the Unix epoch. */
struct eco_store_job {
    int64_t id; /* assigned by the store, increasing, never reused */
    enum eco_store_state state;
    uid_t uid;
    gid_t gid;
    const char *name;      /* may be NULL */
    const char *cwd;       /* required */
    const char *argv_json; /* JSON array of strings, at least one; required */
    const char *env_json;  /* JSON object; NULL stores "{}" */
    unsigned gpus;         /* GPUs requested */
    double gpu_mem_gb;     /* declared memory per GPU, 0: not given */
    bool share;            /* may share GPUs with other jobs */
    double power_cap_w;    /* watts, ECO_STORE_CAP_NONE or ECO_STORE_CAP_AUTO */
    double deadline_s;     /* absolute, 0: none */
    double submit_s;
    const char *stdout_path; /* may be NULL */
    const char *stderr_path; /* may be NULL */
    double max_delay_s;      /* slack: the daemon may hold it this long after submit_s; 0: none */
    double not_before_s;     /* absolute, 0: none: it starts no earlier */
    /* Run fields, written by the transitions. */
    double start_s;
    double end_s;
    const char *assigned_gpus; /* e.g. "0,2" */
    pid_t pid;
    pid_t pgid;
    int exit_status;    /* shell style: 0..255, 128+signal when killed; -1: none */
    const char *reason; /* why cancelled, lost or failed; may be NULL */
    double energy_j;
    /* What its GPU energy was split by on a shared GPU ("exclusive", "utilization", "memory",
     * "equal"; docs/models/energy.md), the latest split; "": none yet. Read only. */
    char energy_basis[16];
    /* Carbon (kg CO2eq) and cost (in currency, "AUD") of its energy under the daemon's grid
     * signals (docs/daemon/README.md, "Grid signals"); has_*: a signal was set while it ran;
     * *_partial: part of its run lay outside the signal's cover and is not counted. Read only
     * (eco_store_set_grid writes them). */
    bool has_carbon, carbon_partial, has_cost, cost_partial;
    double carbon_kg, cost;
    char currency[8];
    void *strings_; /* private: owner of the strings of a fetched job */
};

struct eco_store;

/* Name of a state ("queued", ...); "?" when out of range. Static storage. */
const char *eco_store_state_name(enum eco_store_state s);
/* State from its name; -EINVAL when unknown. */
int eco_store_state_parse(const char *name, enum eco_store_state *out);

/* Opens (creating when missing) the store at `path`: WAL mode, synchronous=NORMAL (a commit
 * survives SIGKILL of the process, not a power loss; see docs/daemon/store.md), busy
 * timeout, schema migrated to ECO_STORE_SCHEMA_VERSION, statements prepared. On success *out
 * is the caller's, freed with eco_store_close; on failure it is NULL and err names the file
 * and SQLite's message. Errors: -EBADMSG not an SQLite file or corrupt, -ENOTSUP schema newer
 * than this code, -EACCES/-EROFS/-ENOENT cannot open, -EBUSY locked, -EIO anything else. */
int eco_store_open(const char *path, struct eco_store **out, struct eco_error *err);
/* Same with ECO_STORE_* flags (ECO_STORE_SYNC_FULL: synchronous=FULL). */
int eco_store_open_ex(const char *path, unsigned flags, struct eco_store **out,
                      struct eco_error *err);
/* Both open calls refuse a damaged store with -EBADMSG and a message saying what is wrong and
 * how to fix it: a non-empty path-wal whose header is invalid or with a damaged frame inside
 * the log, a WAL beside a missing or empty database, or a file PRAGMA quick_check faults.
 * They also refuse (-EBADMSG, unless ECO_STORE_ACCEPT_LOSS) a store that lost jobs its id
 * file says were acknowledged: path.ids keeps the highest id eco_store_insert returned
 * (written after the commit, before the caller answers) and the ids reserved ahead, so the
 * loss of the WAL, or of its tail, or a restored older database is seen, and no acknowledged
 * id is given again. The writer is the only one to write path.ids (one writer per store). */
/* Opens the store at `path` read-only, for a second thread beside the writer (the daemon's
 * listing worker): no damage checks, pragmas or migration (the writer's open did them and
 * must come first); the schema must be ECO_STORE_SCHEMA_VERSION (-ENOTSUP otherwise). Only
 * the read calls (get, list, list_after, stats, recent_energy) are meant for it; a write
 * fails with -EROFS. Same ownership as eco_store_open; close it before the writer. */
int eco_store_open_reader(const char *path, struct eco_store **out, struct eco_error *err);
/* Finalizes the statements and closes the file (checkpointing the WAL). Accepts NULL. */
void eco_store_close(struct eco_store *s);
/* After an open with ECO_STORE_ACCEPT_LOSS that found lost jobs: true, and the ids they had
 * (*first..*last: ids the database no longer has up to the highest acknowledged one); false
 * when nothing was lost. */
bool eco_store_lost(const struct eco_store *s, int64_t *first, int64_t *last);

/* Makes every id given from now on greater than max_id (and than every id ever stored), so
 * ids found in files outside the store (a daemon's logs) are never given again. */
int eco_store_reserve_ids(struct eco_store *s, int64_t max_id, struct eco_error *err);

/* Schema version of the open file (ECO_STORE_SCHEMA_VERSION once open). */
int eco_store_schema_version(const struct eco_store *s);

/* Inserts a queued job from the submit fields of `job` (state, run fields and id ignored)
 * and sets *id. -EINVAL (message names the field) when a required field is missing or the
 * JSON is not what it should be; nothing is written then. */
int eco_store_insert(struct eco_store *s, const struct eco_store_job *job, int64_t *id,
                     struct eco_error *err);

/* Fetches job `id` into *out (to release with eco_store_job_fini). -ENOENT when missing. */
int eco_store_get(struct eco_store *s, int64_t id, struct eco_store_job *out,
                  struct eco_error *err);
/* Releases a fetched job's strings and zeroes it. Accepts NULL and zeroed jobs. */
void eco_store_job_fini(struct eco_store_job *job);

/* Jobs in `state` (or ECO_STORE_ANY) in id order, skipping `offset`, at most `limit`
 * (0: no limit). *jobs is the caller's, released with eco_store_jobs_free(*jobs, *n);
 * NULL when *n is 0. */
int eco_store_list(struct eco_store *s, int state, size_t limit, size_t offset,
                   struct eco_store_job **jobs, size_t *n, struct eco_error *err);
/* A page of jobs in `state` (or ECO_STORE_ANY) with ids above after_id (0: from the first),
 * in id order, at most `limit` (0: no limit): the cursor of the next page is the last id.
 * Served by the primary key, so a page costs the same however deep it is. Same ownership. */
int eco_store_list_after(struct eco_store *s, int state, int64_t after_id, size_t limit,
                         struct eco_store_job **jobs, size_t *n, struct eco_error *err);
/* Deletes at most `limit` of the oldest jobs in a final state (done, failed, cancelled, lost)
 * that ended before ended_before_s, in one transaction; their ids go to ids[] (at least
 * `limit` entries, the caller's) and *n. Their ids are never given again. In the same
 * transaction their count, energy, GPU time, carbon and cost are added to their users' pruned
 * totals (eco_store_pruned), so the all-jobs sums of eco_store_stats never go down. */
int eco_store_prune(struct eco_store *s, double ended_before_s, size_t limit, int64_t *ids,
                    size_t *n, struct eco_error *err);
/* Every running job: the ones to adopt or mark lost after a restart. Same ownership. */
int eco_store_running(struct eco_store *s, struct eco_store_job **jobs, size_t *n,
                      struct eco_error *err);
void eco_store_jobs_free(struct eco_store_job *jobs, size_t n); /* accepts NULL */

/* Guarded transitions: each changes the job only when it is in the expected state, in one
 * transaction, and otherwise fails with -ESTALE (job in another state; *err says which) or
 * -ENOENT (no such job). So a job is never started twice. */

/* queued -> running, recording the process, its GPUs ("0,2"; may be NULL) and start time. */
int eco_store_start(struct eco_store *s, int64_t id, pid_t pid, pid_t pgid,
                    const char *assigned_gpus, double start_s, struct eco_error *err);
/* running -> done or failed (`to`; else -EINVAL), with exit status, end time and energy. */
int eco_store_finish(struct eco_store *s, int64_t id, enum eco_store_state to, int exit_status,
                     double end_s, double energy_j, struct eco_error *err);
/* queued | running -> cancelled, with end time and reason (may be NULL). *prev (optional)
 * receives the state it had, so the caller knows whether a process is to be stopped. */
int eco_store_cancel(struct eco_store *s, int64_t id, double end_s, const char *reason,
                     enum eco_store_state *prev, struct eco_error *err);
/* running -> lost (its process did not survive a restart), with end time and reason. */
int eco_store_lose(struct eco_store *s, int64_t id, double end_s, const char *reason,
                   struct eco_error *err);
/* queued | running -> failed: the job could not start (the runner failed before or at exec,
 * also after the start gate recorded it running), with exit status, end time and reason
 * (may be NULL; shown by the API). */
int eco_store_fail_start(struct eco_store *s, int64_t id, int exit_status, double end_s,
                         const char *reason, struct eco_error *err);
/* Sets the job's energy so far, in any state. -ENOENT when missing. */
int eco_store_set_energy(struct eco_store *s, int64_t id, double energy_j, struct eco_error *err);
/* A job's carbon and cost so far (the fields of the same names in eco_store_job). */
struct eco_store_grid {
    bool has_carbon, carbon_partial, has_cost, cost_partial;
    double carbon_kg, cost;
    char currency[8];
};
/* Sets the job's carbon and cost so far, in any state. -ENOENT when missing. */
int eco_store_set_grid(struct eco_store *s, int64_t id, const struct eco_store_grid *g,
                       struct eco_error *err);
/* Sets what the job's energy is split by (a name the schema accepts: "exclusive",
 * "utilization", "memory", "equal"; -EINVAL otherwise), in any state. -ENOENT when missing. */
int eco_store_set_energy_basis(struct eco_store *s, int64_t id, const char *basis,
                               struct eco_error *err);
/* Sets the job's power cap (watts, ECO_STORE_CAP_NONE or ECO_STORE_CAP_AUTO), in any state:
 * the daemon records here the limit it chose for a job submitted with "auto". -ENOENT when
 * missing, -EINVAL for any other value. */
int eco_store_set_power_cap(struct eco_store *s, int64_t id, double cap_w, struct eco_error *err);

/* Counts of jobs per state and the energy of all jobs (for the daemon's /metrics). */
struct eco_store_stats {
    uint64_t jobs[ECO_STORE_NSTATES]; /* stored jobs (pruned ones not among them) */
    uint64_t pruned_jobs;             /* jobs deleted by eco_store_prune, ever */
    double energy_j;        /* every job ever: the stored jobs' energy_j and the pruned ones' */
    double carbon_kg, cost; /* the same for carbon and cost (0 without a signal) */
};
/* Fills *out from two aggregate queries (cost grows with the number of stored jobs, no
 * strings are copied). */
int eco_store_stats(struct eco_store *s, struct eco_store_stats *out, struct eco_error *err);
/* One user's pruned jobs, summed (eco_store_prune adds to them; never reset). */
struct eco_store_pruned {
    uid_t uid;
    uint64_t jobs;        /* pruned jobs */
    uint64_t started;     /* of which had started (a start time): measured */
    uint64_t with_carbon; /* of which had a carbon figure */
    double energy_j, carbon_kg, cost;
    double gpu_s;      /* GPUs x (end - start) of the started ones */
    double last_end_s; /* the latest end among them (Unix s) */
};
/* Every user's pruned totals, in uid order: *rows the caller's (free()), NULL when *n is 0. */
int eco_store_pruned(struct eco_store *s, struct eco_store_pruned **rows, size_t *n,
                     struct eco_error *err);
/* The `limit` newest jobs (highest ids first): ids[i] and energy_j[i], arrays of at least
 * `limit` entries owned by the caller; *n how many were filled. */
int eco_store_recent_energy(struct eco_store *s, size_t limit, int64_t *ids, double *energy_j,
                            size_t *n, struct eco_error *err);

#endif
