/* SPDX-License-Identifier: MIT */
/* The daemon's job store on SQLite: schema migrations, statements prepared once at open, and
 * guarded state transitions, each write in its own transaction. See docs/daemon/store.md. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sqlite3.h>
#include "daemon/store.h"

/* How long a statement waits for another connection's lock before failing with -EBUSY. The
 * daemon is the only writer; other handles (tests, an operator's sqlite3 shell, a checkpoint
 * of a large WAL) hold locks for milliseconds. 5 s rides over those and still reports a stuck
 * lock instead of hanging the daemon. */
#define BUSY_TIMEOUT_MS 5000

/* ---- SQL: everything the store runs, by name. ------------------------------------------- */

static const char SQL_JOURNAL_WAL[] = "PRAGMA journal_mode = WAL";
static const char SQL_SYNC_NORMAL[] = "PRAGMA synchronous = NORMAL";
static const char SQL_SYNC_FULL[] = "PRAGMA synchronous = FULL";
static const char SQL_GET_VERSION[] = "PRAGMA user_version";
/* quick_check: the b-trees' structure and the records' formats, without the index-content
 * cross-check of integrity_check (docs/daemon/store.md gives both costs on 50,000 jobs).
 * The first row is "ok" when the file is sound, else the first problem. */
static const char SQL_QUICK_CHECK[] = "PRAGMA quick_check(1)";
/* AUTOINCREMENT's high-water mark: the next id is above both the largest id ever stored and
 * ?1 (ids the daemon found in its state directory's files), so no id is reused. */
static const char SQL_RESERVE_IDS[] =
    "INSERT OR REPLACE INTO sqlite_sequence (rowid, name, seq)"
    " SELECT (SELECT rowid FROM sqlite_sequence WHERE name = 'jobs'), 'jobs',"
    " MAX(?1, COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'jobs'), 0),"
    " COALESCE((SELECT MAX(id) FROM jobs), 0))";
/* PRAGMA takes no bound parameters: the version is formatted in (an int, never user text). */
static const char SQL_SET_VERSION_FMT[] = "PRAGMA user_version = %d";
static const char SQL_BEGIN[] = "BEGIN IMMEDIATE";
static const char SQL_COMMIT[] = "COMMIT";
static const char SQL_ROLLBACK[] = "ROLLBACK";

/* Migration 1: the jobs table. CASE keeps json_type from seeing malformed JSON (it would raise
 * an error instead of failing the check). AUTOINCREMENT: ids are never reused, even after the
 * newest job is deleted, so an id once printed names one job forever. */
static const char SQL_MIGRATION_1[] =
    "CREATE TABLE jobs ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " state TEXT NOT NULL DEFAULT 'queued'"
    "  CHECK (state IN ('queued','running','done','failed','cancelled','lost')),"
    " uid INTEGER NOT NULL CHECK (uid >= 0),"
    " gid INTEGER NOT NULL CHECK (gid >= 0),"
    " name TEXT,"
    " cwd TEXT NOT NULL CHECK (length(cwd) > 0),"
    " argv TEXT NOT NULL CHECK (CASE WHEN json_valid(argv)"
    "  THEN json_type(argv) = 'array' AND json_array_length(argv) > 0 ELSE 0 END),"
    " env TEXT NOT NULL DEFAULT '{}' CHECK (CASE WHEN json_valid(env)"
    "  THEN json_type(env) = 'object' ELSE 0 END),"
    " gpus INTEGER NOT NULL DEFAULT 0 CHECK (gpus >= 0),"
    " gpu_mem_gb REAL NOT NULL DEFAULT 0 CHECK (gpu_mem_gb >= 0),"
    " share INTEGER NOT NULL DEFAULT 0 CHECK (share IN (0, 1)),"
    " power_cap_w REAL NOT NULL DEFAULT 0 CHECK (power_cap_w >= 0 OR power_cap_w = -1),"
    " deadline_s REAL NOT NULL DEFAULT 0,"
    " submit_s REAL NOT NULL,"
    " start_s REAL,"
    " end_s REAL,"
    " assigned_gpus TEXT,"
    " pid INTEGER,"
    " pgid INTEGER,"
    " exit_status INTEGER,"
    " reason TEXT,"
    " energy_j REAL NOT NULL DEFAULT 0,"
    " stdout_path TEXT,"
    " stderr_path TEXT"
    ");"
    "CREATE INDEX jobs_state ON jobs (state, id);";

/* Migration 2: what each job's GPU energy was split by on a shared GPU (docs/models/energy.md),
 * in a table of its own, deleted with its job by the trigger. IF NOT EXISTS: the migration
 * may meet a file that has it already (a version number set back by hand) and still passes. */
static const char SQL_MIGRATION_2[] =
    "CREATE TABLE IF NOT EXISTS job_energy_basis ("
    " job INTEGER PRIMARY KEY,"
    " basis TEXT NOT NULL CHECK (basis IN ('exclusive','utilization','memory','equal'))"
    ");"
    "CREATE TRIGGER IF NOT EXISTS job_energy_basis_gone AFTER DELETE ON jobs"
    " BEGIN DELETE FROM job_energy_basis WHERE job = old.id; END;";

/* Migration 3: grid signals (docs/daemon/README.md, "Grid signals"), in a table of its own as
 * migration 2's (IF NOT EXISTS for the same reason), deleted with its job by the trigger: a
 * job's slack (max_delay_s, 0: not deferrable; not_before_s, 0: none) and its carbon (kg CO2eq)
 * and cost so far, NULL while no signal was set; *_partial: part of its run lay outside the
 * signal's cover, so the figure counts only the covered part. A job without a row has none. */
static const char SQL_MIGRATION_3[] =
    "CREATE TABLE IF NOT EXISTS job_grid ("
    " job INTEGER PRIMARY KEY,"
    " max_delay_s REAL NOT NULL DEFAULT 0 CHECK (max_delay_s >= 0),"
    " not_before_s REAL NOT NULL DEFAULT 0 CHECK (not_before_s >= 0),"
    " carbon_kg REAL,"
    " carbon_partial INTEGER NOT NULL DEFAULT 0 CHECK (carbon_partial IN (0, 1)),"
    " cost REAL,"
    " cost_partial INTEGER NOT NULL DEFAULT 0 CHECK (cost_partial IN (0, 1)),"
    " currency TEXT"
    ");"
    "CREATE TRIGGER IF NOT EXISTS job_grid_gone AFTER DELETE ON jobs"
    " BEGIN DELETE FROM job_grid WHERE job = old.id; END;";

/* Migration 4: the pruned jobs' totals per user (eco_store_prune moves a job's figures here in
 * the transaction that deletes it), so the all-jobs sums (the daemon's /metrics counters, the
 * accounting report) do not go down when old jobs are pruned. Kept as totals of the pruned
 * jobs only, the live rows summed beside them: a running job's energy grows while it runs and
 * a figure may still be set after the end, and every such value counts once, from its row
 * while the row exists, from here after, with nothing to update at finish. A store from before
 * starts with no row here: its totals are the sums of the jobs it holds. IF NOT EXISTS as
 * migration 2's. */
static const char SQL_MIGRATION_4[] =
    "CREATE TABLE IF NOT EXISTS pruned ("
    " uid INTEGER PRIMARY KEY CHECK (uid >= 0),"
    " jobs INTEGER NOT NULL DEFAULT 0 CHECK (jobs >= 0),"
    " started INTEGER NOT NULL DEFAULT 0 CHECK (started >= 0),"
    " with_carbon INTEGER NOT NULL DEFAULT 0 CHECK (with_carbon >= 0),"
    " energy_j REAL NOT NULL DEFAULT 0,"
    " gpu_s REAL NOT NULL DEFAULT 0,"
    " carbon_kg REAL NOT NULL DEFAULT 0,"
    " cost REAL NOT NULL DEFAULT 0,"
    " last_end_s REAL NOT NULL DEFAULT 0"
    ");";

/* MIGRATIONS[v] brings a file from version v-1 to v. Append only; never edit a shipped one. */
static const char *const MIGRATIONS[] = {
    [1] = SQL_MIGRATION_1,
    [2] = SQL_MIGRATION_2,
    [3] = SQL_MIGRATION_3,
    [4] = SQL_MIGRATION_4,
};
_Static_assert(sizeof MIGRATIONS / sizeof MIGRATIONS[0] == ECO_STORE_SCHEMA_VERSION + 1,
               "one migration per schema version");

/* Column order read by row_to_job. */
#define JOB_COLUMNS                                                                                \
    "id, state, uid, gid, name, cwd, argv, env, gpus, gpu_mem_gb, share, power_cap_w,"             \
    " deadline_s, submit_s, start_s, end_s, assigned_gpus, pid, pgid, exit_status, reason,"        \
    " energy_j, stdout_path, stderr_path,"                                                         \
    " (SELECT basis FROM job_energy_basis WHERE job_energy_basis.job = jobs.id),"                  \
    " max_delay_s, not_before_s, carbon_kg, carbon_partial, cost, cost_partial, currency"

static const char SQL_INSERT[] =
    "INSERT INTO jobs (uid, gid, name, cwd, argv, env, gpus, gpu_mem_gb, share, power_cap_w,"
    " deadline_s, submit_s, stdout_path, stderr_path)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)";
static const char SQL_INSERT_SLACK[] =
    "INSERT INTO job_grid (job, max_delay_s, not_before_s) VALUES (?1, ?2, ?3)";
/* The jobs with their grid row, for every read of whole jobs. */
#define JOBS_FROM " FROM jobs LEFT JOIN job_grid ON job_grid.job = jobs.id"
static const char SQL_GET[] = "SELECT " JOB_COLUMNS JOBS_FROM " WHERE id = ?1";
static const char SQL_LIST_ALL[] =
    "SELECT " JOB_COLUMNS JOBS_FROM " ORDER BY id LIMIT ?1 OFFSET ?2";
static const char SQL_LIST_STATE[] =
    "SELECT " JOB_COLUMNS JOBS_FROM " WHERE state = ?3 ORDER BY id LIMIT ?1 OFFSET ?2";
/* A page after a cursor: ids above ?2 in id order (the primary key: no OFFSET scan). */
static const char SQL_PAGE_ALL[] =
    "SELECT " JOB_COLUMNS JOBS_FROM " WHERE id > ?2 ORDER BY id LIMIT ?1";
static const char SQL_PAGE_STATE[] =
    "SELECT " JOB_COLUMNS JOBS_FROM " WHERE state = ?3 AND id > ?2 ORDER BY id LIMIT ?1";
/* Pruning: the oldest ?2 jobs in a final state that ended before ?1 (one set for both
 * statements, which run in one transaction: the same rows), summed per user into `pruned`
 * (WHERE present: it keeps the upsert's ON CONFLICT apart from the join), then deleted; their
 * ids come back for the daemon to delete their logs. AUTOINCREMENT keeps their ids from reuse. */
#define PRUNE_SET                                                                                  \
    "SELECT id FROM jobs WHERE state IN ('done', 'failed', 'cancelled', 'lost') AND end_s < ?1"    \
    " ORDER BY id LIMIT ?2"
static const char SQL_PRUNE_TOTALS[] =
    "INSERT INTO pruned (uid, jobs, started, with_carbon, energy_j, gpu_s, carbon_kg, cost,"
    " last_end_s) SELECT uid, COUNT(*), COUNT(start_s), COUNT(carbon_kg), TOTAL(energy_j),"
    " TOTAL(CASE WHEN start_s IS NULL THEN 0 ELSE gpus * MAX(0, end_s - start_s) END),"
    " TOTAL(carbon_kg), TOTAL(cost), MAX(end_s)" JOBS_FROM " WHERE id IN (" PRUNE_SET ")"
    " GROUP BY uid ON CONFLICT (uid) DO UPDATE SET jobs = jobs + excluded.jobs,"
    " started = started + excluded.started, with_carbon = with_carbon + excluded.with_carbon,"
    " energy_j = energy_j + excluded.energy_j, gpu_s = gpu_s + excluded.gpu_s,"
    " carbon_kg = carbon_kg + excluded.carbon_kg, cost = cost + excluded.cost,"
    " last_end_s = MAX(last_end_s, excluded.last_end_s)";
static const char SQL_PRUNE[] = "DELETE FROM jobs WHERE id IN (" PRUNE_SET ") RETURNING id";
static const char SQL_PRUNED[] = "SELECT uid, jobs, started, with_carbon, energy_j, gpu_s,"
                                 " carbon_kg, cost, last_end_s FROM pruned ORDER BY uid";
static const char SQL_PRUNED_SUM[] =
    "SELECT TOTAL(jobs), TOTAL(energy_j), TOTAL(carbon_kg), TOTAL(cost) FROM pruned";
/* The highest id the store knows it gave: AUTOINCREMENT's mark or the largest stored id. */
static const char SQL_HIGH_ID[] =
    "SELECT MAX(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'jobs'), 0),"
    " COALESCE((SELECT MAX(id) FROM jobs), 0))";
static const char SQL_STATE[] = "SELECT state FROM jobs WHERE id = ?1";
static const char SQL_START[] =
    "UPDATE jobs SET state = 'running', pid = ?2, pgid = ?3, assigned_gpus = ?4, start_s = ?5"
    " WHERE id = ?1 AND state = 'queued'";
static const char SQL_FINISH[] =
    "UPDATE jobs SET state = ?2, exit_status = ?3, end_s = ?4, energy_j = ?5"
    " WHERE id = ?1 AND state = 'running'";
static const char SQL_CANCEL[] = "UPDATE jobs SET state = 'cancelled', end_s = ?2, reason = ?3"
                                 " WHERE id = ?1 AND state IN ('queued', 'running')";
static const char SQL_LOSE[] = "UPDATE jobs SET state = 'lost', end_s = ?2, reason = ?3"
                               " WHERE id = ?1 AND state = 'running'";
static const char SQL_ENERGY[] = "UPDATE jobs SET energy_j = ?2 WHERE id = ?1";
/* Only for a job that exists (as SQL_BASIS). */
static const char SQL_GRID[] =
    "INSERT INTO job_grid (job, carbon_kg, carbon_partial, cost, cost_partial, currency)"
    " SELECT id, ?2, ?3, ?4, ?5, ?6 FROM jobs WHERE id = ?1 ON CONFLICT (job) DO UPDATE SET"
    " carbon_kg = excluded.carbon_kg, carbon_partial = excluded.carbon_partial,"
    " cost = excluded.cost, cost_partial = excluded.cost_partial, currency = excluded.currency";
/* Only for a job that exists (the SELECT finds none otherwise: no row, -ENOENT below). */
static const char SQL_BASIS[] = "INSERT OR REPLACE INTO job_energy_basis (job, basis)"
                                " SELECT id, ?2 FROM jobs WHERE id = ?1";
/* A job that could not start: failed with the runner's reason; a start time (the attempt)
 * only when it had none (a failure after the start gate keeps the start's). */
static const char SQL_FAIL_START[] =
    "UPDATE jobs SET state = 'failed', exit_status = ?2, end_s = ?3, reason = ?4,"
    " start_s = COALESCE(start_s, ?3) WHERE id = ?1 AND state IN ('queued', 'running')";
static const char SQL_CAP[] = "UPDATE jobs SET power_cap_w = ?2 WHERE id = ?1";
/* For metrics: jobs and their energy per state; the newest jobs' energy. */
static const char SQL_STATS[] = "SELECT state, COUNT(*), TOTAL(energy_j), TOTAL(carbon_kg),"
                                " TOTAL(cost)" JOBS_FROM " GROUP BY state";
static const char SQL_RECENT_ENERGY[] = "SELECT id, energy_j FROM jobs ORDER BY id DESC LIMIT ?1";
/* Field checks before insert, so the error names the field: argv a non-empty array of
 * strings, env an object of strings. */
static const char SQL_CHECK_ARGV[] =
    "SELECT CASE WHEN json_valid(?1) THEN json_type(?1) = 'array' AND json_array_length(?1) > 0"
    " AND NOT EXISTS (SELECT 1 FROM json_each(?1) WHERE type <> 'text') ELSE 0 END";
static const char SQL_CHECK_ENV[] =
    "SELECT CASE WHEN json_valid(?1) THEN json_type(?1) = 'object'"
    " AND NOT EXISTS (SELECT 1 FROM json_each(?1) WHERE type <> 'text') ELSE 0 END";

enum stmt {
    ST_BEGIN,
    ST_COMMIT,
    ST_ROLLBACK,
    ST_INSERT,
    ST_INSERT_SLACK,
    ST_GET,
    ST_LIST_ALL,
    ST_LIST_STATE,
    ST_STATE,
    ST_START,
    ST_FINISH,
    ST_CANCEL,
    ST_LOSE,
    ST_ENERGY,
    ST_GRID,
    ST_BASIS,
    ST_CAP,
    ST_CHECK_ARGV,
    ST_CHECK_ENV,
    ST_STATS,
    ST_RECENT_ENERGY,
    ST_FAIL_START,
    ST_RESERVE_IDS,
    ST_PAGE_ALL,
    ST_PAGE_STATE,
    ST_PRUNE,
    ST_PRUNE_TOTALS,
    ST_PRUNED,
    ST_PRUNED_SUM,
    ST_HIGH_ID,
    ST_COUNT,
};

static const char *const STMT_SQL[ST_COUNT] = {
    [ST_BEGIN] = SQL_BEGIN,
    [ST_COMMIT] = SQL_COMMIT,
    [ST_ROLLBACK] = SQL_ROLLBACK,
    [ST_INSERT] = SQL_INSERT,
    [ST_INSERT_SLACK] = SQL_INSERT_SLACK,
    [ST_GET] = SQL_GET,
    [ST_LIST_ALL] = SQL_LIST_ALL,
    [ST_LIST_STATE] = SQL_LIST_STATE,
    [ST_STATE] = SQL_STATE,
    [ST_START] = SQL_START,
    [ST_FINISH] = SQL_FINISH,
    [ST_CANCEL] = SQL_CANCEL,
    [ST_LOSE] = SQL_LOSE,
    [ST_ENERGY] = SQL_ENERGY,
    [ST_GRID] = SQL_GRID,
    [ST_BASIS] = SQL_BASIS,
    [ST_CAP] = SQL_CAP,
    [ST_CHECK_ARGV] = SQL_CHECK_ARGV,
    [ST_CHECK_ENV] = SQL_CHECK_ENV,
    [ST_STATS] = SQL_STATS,
    [ST_RECENT_ENERGY] = SQL_RECENT_ENERGY,
    [ST_FAIL_START] = SQL_FAIL_START,
    [ST_RESERVE_IDS] = SQL_RESERVE_IDS,
    [ST_PAGE_ALL] = SQL_PAGE_ALL,
    [ST_PAGE_STATE] = SQL_PAGE_STATE,
    [ST_PRUNE] = SQL_PRUNE,
    [ST_PRUNE_TOTALS] = SQL_PRUNE_TOTALS,
    [ST_PRUNED] = SQL_PRUNED,
    [ST_PRUNED_SUM] = SQL_PRUNED_SUM,
    [ST_HIGH_ID] = SQL_HIGH_ID,
};

static const char *const STATE_NAMES[ECO_STORE_NSTATES] = {
    [ECO_STORE_QUEUED] = "queued", [ECO_STORE_RUNNING] = "running",     [ECO_STORE_DONE] = "done",
    [ECO_STORE_FAILED] = "failed", [ECO_STORE_CANCELLED] = "cancelled", [ECO_STORE_LOST] = "lost",
};

/* The id file, path.ids (see "id file" below). */
struct id_file {
    int fd;           /* open for writing (the writer only), else -1 */
    int64_t acked;    /* highest id eco_store_insert returned (or found at open) */
    int64_t reserved; /* ids up to this may have been given (fsynced before they are) */
    char boot[40];    /* the kernel's boot id when written ("" unknown) */
};

struct eco_store {
    sqlite3 *db;
    char *path;
    int version;
    unsigned flags;
    struct id_file ids;
    int64_t lost_first, lost_last; /* ids an accepted loss took (0, 0: none) */
    sqlite3_stmt *st[ST_COUNT];
};

/* ---- errors ----------------------------------------------------------------------------- */

/* errno code for an SQLite result code. */
static int sqlite_errno(sqlite3 *db, int rc)
{
    switch (rc & 0xff) {
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
        return -EBADMSG;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return -EBUSY;
    case SQLITE_NOMEM:
        return -ENOMEM;
    case SQLITE_FULL:
        return -ENOSPC;
    case SQLITE_PERM:
    case SQLITE_AUTH:
        return -EACCES;
    case SQLITE_READONLY:
        return -EROFS;
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_RANGE:
        return -EINVAL;
    case SQLITE_CANTOPEN: {
        int e = db ? sqlite3_system_errno(db) : 0;
        return e > 0 ? -e : -ENOENT;
    }
    default:
        return -EIO;
    }
}

/* Fails with the file, what was being done and SQLite's message. */
static int fail_sql(const struct eco_store *s, struct eco_error *err, int rc, const char *what)
{
    return eco_errorf(err, sqlite_errno(s->db, rc), "%s: %s: %s", s->path, what,
                      s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
}

/* ---- statements and transactions -------------------------------------------------------- */

/* Resets a statement after use and drops its bindings (borrowed strings are bound STATIC). */
static void done(sqlite3_stmt *st)
{
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
}

/* Runs a statement that returns no rows. */
static int exec_stmt(struct eco_store *s, enum stmt which, const char *what, struct eco_error *err)
{
    sqlite3_stmt *st = s->st[which];
    int rc = sqlite3_step(st);
    int ret = rc == SQLITE_DONE ? 0 : fail_sql(s, err, rc, what);
    done(st);
    return ret;
}

static int tx_begin(struct eco_store *s, struct eco_error *err)
{
    return exec_stmt(s, ST_BEGIN, "begin transaction", err);
}

/* Commits when ret is 0, else rolls back (keeping the first error's message). */
static int tx_end(struct eco_store *s, int ret, struct eco_error *err)
{
    if (ret == 0)
        ret = exec_stmt(s, ST_COMMIT, "commit", err);
    if (ret != 0 && !sqlite3_get_autocommit(s->db)) {
        sqlite3_step(s->st[ST_ROLLBACK]);
        done(s->st[ST_ROLLBACK]);
    }
    return ret;
}

static int bind_text(sqlite3_stmt *st, int i, const char *v)
{
    return v ? sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC) : sqlite3_bind_null(st, i);
}

/* ---- open, migrate, close --------------------------------------------------------------- */

const char *eco_store_state_name(enum eco_store_state s)
{
    return (unsigned)s < ECO_STORE_NSTATES ? STATE_NAMES[s] : "?";
}

int eco_store_state_parse(const char *name, enum eco_store_state *out)
{
    for (int i = 0; name && i < ECO_STORE_NSTATES; i++) {
        if (strcmp(name, STATE_NAMES[i]) == 0) {
            *out = (enum eco_store_state)i;
            return 0;
        }
    }
    return -EINVAL;
}

/* Runs a one-off statement at open (pragmas, migrations). */
static int exec_once(struct eco_store *s, const char *sql, const char *what, struct eco_error *err)
{
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : fail_sql(s, err, rc, what);
}

/* Reads one integer or text result of a one-off query into *iv or txt (either may be NULL). */
static int query_once(struct eco_store *s, const char *sql, const char *what, int *iv, char *txt,
                      size_t cap, struct eco_error *err)
{
    sqlite3_stmt *st = NULL;
    int ret = 0;
    int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        ret = fail_sql(s, err, rc, what);
        goto out;
    }
    if (iv)
        *iv = sqlite3_column_int(st, 0);
    if (txt)
        snprintf(txt, cap, "%s", (const char *)sqlite3_column_text(st, 0));
out:
    sqlite3_finalize(st);
    return ret;
}

static int set_pragmas(struct eco_store *s, unsigned flags, struct eco_error *err)
{
    char mode[16] = "";
    int ret = query_once(s, SQL_JOURNAL_WAL, "set WAL mode", NULL, mode, sizeof mode, err);
    if (ret != 0)
        return ret;
    if (strcmp(mode, "wal") != 0)
        return eco_errorf(err, -EIO, "%s: set WAL mode: refused, journal mode stays '%s'", s->path,
                          mode);
    return exec_once(s, (flags & ECO_STORE_SYNC_FULL) ? SQL_SYNC_FULL : SQL_SYNC_NORMAL,
                     "set synchronous", err);
}

/* Brings the schema to ECO_STORE_SCHEMA_VERSION in one transaction. The version is read
 * inside it, so two processes opening a new file at once migrate it once. */
static int migrate(struct eco_store *s, struct eco_error *err)
{
    char sql[64];
    int v = 0;
    int ret = exec_once(s, SQL_BEGIN, "begin migration", err);
    if (ret != 0)
        return ret;
    ret = query_once(s, SQL_GET_VERSION, "read schema version", &v, NULL, 0, err);
    if (ret != 0)
        goto out;
    if (v < 0 || v > ECO_STORE_SCHEMA_VERSION) {
        ret = eco_errorf(err, -ENOTSUP,
                         "%s: schema version %d is not one this ecoschedd knows (1..%d)", s->path,
                         v, ECO_STORE_SCHEMA_VERSION);
        goto out;
    }
    for (int i = v + 1; i <= ECO_STORE_SCHEMA_VERSION; i++) {
        snprintf(sql, sizeof sql, "migration %d", i);
        ret = exec_once(s, MIGRATIONS[i], sql, err);
        if (ret != 0)
            goto out;
    }
    snprintf(sql, sizeof sql, SQL_SET_VERSION_FMT, ECO_STORE_SCHEMA_VERSION);
    if (v < ECO_STORE_SCHEMA_VERSION)
        ret = exec_once(s, sql, "set schema version", err);
    if (ret == 0)
        ret = exec_once(s, SQL_COMMIT, "commit migration", err);
    if (ret == 0)
        s->version = ECO_STORE_SCHEMA_VERSION;
out:
    if (ret != 0)
        sqlite3_exec(s->db, SQL_ROLLBACK, NULL, NULL, NULL);
    return ret;
}

/* ---- damage checks at open ------------------------------------------------------------- */

/* SQLite's WAL format (https://www.sqlite.org/fileformat2.html#walformat): a 32-byte header
 * (magic, format version, page size, checkpoint sequence, two salts, a checksum of the first
 * 24 bytes), then frames of a 24-byte header (page number, database size after a commit or
 * 0, the two salts, a running checksum) and one page. */
#define WAL_HDR 32
#define WAL_FRAME_HDR 24
#define WAL_MAGIC_LE 0x377f0682u /* checksums over little-endian words */
#define WAL_MAGIC_BE 0x377f0683u /* ... big-endian words */
#define WAL_VERSION 3007000u

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* SQLite's WAL checksum over n bytes (a multiple of 8), continuing from c[0], c[1]. */
static void wal_cksum(bool big, const unsigned char *p, size_t n, uint32_t c[2])
{
    for (size_t i = 0; i + 8 <= n; i += 8) {
        uint32_t x0 = big ? be32(p + i)
                          : (uint32_t)p[i + 3] << 24 | (uint32_t)p[i + 2] << 16 |
                                (uint32_t)p[i + 1] << 8 | p[i];
        uint32_t x1 = big ? be32(p + i + 4)
                          : (uint32_t)p[i + 7] << 24 | (uint32_t)p[i + 6] << 16 |
                                (uint32_t)p[i + 5] << 8 | p[i + 4];
        c[0] += x0 + c[1];
        c[1] += x1 + c[0];
    }
}

/* Checks path-wal before SQLite reads it: SQLite silently ignores a WAL whose header is not
 * valid, and every frame from the first one whose checksum fails, which would drop committed
 * jobs without a word. Refused (-EBADMSG): a non-empty WAL with an invalid header; a frame of
 * the current WAL (its salts) that fails its checksum while a later frame of the same WAL
 * follows (damage inside the log, not the torn tail a power loss can leave); a WAL beside a
 * missing or empty database. The message says what to do. */
static int check_wal(const char *path, struct eco_error *err)
{
    char wal[4200];
    unsigned char hdr[WAL_HDR], fh[WAL_FRAME_HDR], *page = NULL;
    struct stat st, db;
    FILE *f = NULL;
    int ret = 0;
    snprintf(wal, sizeof wal, "%s-wal", path);
    if (stat(wal, &st) < 0 || st.st_size == 0)
        return 0;
    const char *fix = "restore the state directory from a backup, or, to keep what the database "
                      "file alone holds, move the -wal file aside and start ecoschedd once with "
                      "--accept-lost-jobs (jobs since the last checkpoint are then lost)";
    if (stat(path, &db) < 0 || db.st_size == 0)
        return eco_errorf(err, -EBADMSG,
                          "%s: the database is %s but its write-ahead log %s holds "
                          "%lld bytes: the store is damaged; restore it from a backup, or move the "
                          "state directory aside to start empty",
                          path, stat(path, &db) < 0 ? "missing" : "empty", wal,
                          (long long)st.st_size);
    if (!(f = fopen(wal, "rbe")))
        return eco_errorf(err, -errno, "%s: cannot read: %s", wal, strerror(errno));
    uint32_t magic = 0, psz = 0, c[2] = {0, 0};
    bool ok = fread(hdr, 1, WAL_HDR, f) == WAL_HDR;
    if (ok) {
        magic = be32(hdr);
        psz = be32(hdr + 8);
        ok = (magic == WAL_MAGIC_LE || magic == WAL_MAGIC_BE) && be32(hdr + 4) == WAL_VERSION &&
             psz >= 512 && psz <= 65536 && (psz & (psz - 1)) == 0;
    }
    if (ok) {
        wal_cksum(magic == WAL_MAGIC_BE, hdr, 24, c);
        ok = c[0] == be32(hdr + 24) && c[1] == be32(hdr + 28);
    }
    if (!ok) {
        ret =
            eco_errorf(err, -EBADMSG,
                       "%s: damaged write-ahead log (its header is not a valid SQLite "
                       "WAL header; SQLite would ignore the whole log and lose the jobs in it): %s",
                       wal, fix);
        goto out;
    }
    if (!(page = malloc(psz))) {
        ret = eco_errorf(err, -ENOMEM, "%s: out of memory", wal);
        goto out;
    }
    long long frame = 0, bad = -1;
    while (fread(fh, 1, WAL_FRAME_HDR, f) == WAL_FRAME_HDR && fread(page, 1, psz, f) == psz) {
        frame++;
        if (memcmp(fh + 8, hdr + 16, 8) != 0)
            break; /* a frame of an earlier log generation: the current log ends here */
        if (bad >= 0) {
            ret = eco_errorf(err, -EBADMSG,
                             "%s: damaged write-ahead log (frame %lld fails its "
                             "checksum, frame %lld of the same log follows; SQLite would drop both "
                             "and every commit after them): %s",
                             wal, bad, frame, fix);
            goto out;
        }
        wal_cksum(magic == WAL_MAGIC_BE, fh, 8, c);
        wal_cksum(magic == WAL_MAGIC_BE, page, psz, c);
        if (c[0] != be32(fh + 16) || c[1] != be32(fh + 20))
            bad = frame; /* the torn tail of a power loss, unless a later frame follows */
    }
out:
    free(page);
    if (f)
        fclose(f);
    return ret;
}

/* PRAGMA quick_check: -EBADMSG with SQLite's first finding when the file is damaged. */
static int check_integrity(struct eco_store *s, struct eco_error *err)
{
    char res[200] = "";
    int ret = query_once(s, SQL_QUICK_CHECK, "integrity check", NULL, res, sizeof res, err);
    if (ret == -EBADMSG || (ret == 0 && strcmp(res, "ok") != 0))
        return eco_errorf(err, -EBADMSG,
                          "%s: the database is damaged (quick_check: %s): restore it "
                          "from a backup, or move the state directory aside to start empty",
                          s->path, ret == 0 ? res : (s->db ? sqlite3_errmsg(s->db) : "corrupt"));
    return ret;
}

/* ---- id file ------------------------------------------------------------------------ */

/* path.ids: one line, rewritten in place (the same length every time, so one write of a few
 * bytes in one disk sector) with the highest id handed to a client ("acked", written after the
 * commit, before the daemon answers), the ids reserved ahead ("reserved", fsynced before any
 * id above the old reservation is committed), the kernel's boot id and a checksum of the line.
 * It lives beside the database, not in it: a lost or cut WAL takes the database's own
 * high-water mark (sqlite_sequence) with it, and PRAGMA user_version or application_id in the
 * header page are written through the WAL too. At open:
 * - acked above the database's highest id: acknowledged jobs are gone (refused, or with
 *   ECO_STORE_ACCEPT_LOSS their ids are skipped);
 * - written in this boot: the kernel still held every write, so acked is exact and new ids
 *   start above it; written in an earlier boot (an OS crash or power loss may have dropped the
 *   last unsynced writes of both files): above the reservation. A clean close sets the
 *   reservation back to acked, so a clean reboot leaves no gap. */
#define IDS_SUFFIX ".ids"
#define IDS_FMT "ecosched-ids 1 acked=%020" PRId64 " reserved=%020" PRId64 " boot=%-36s"
#define IDS_CHECK " check="
#define BOOT_ID_FILE "/proc/sys/kernel/random/boot_id"

/* FNV-1a, 32 bits: a damaged line's check fails (the line is not a secret). */
static uint32_t fnv1a(const char *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 16777619u;
    return h;
}

/* The kernel's boot id into buf (cap >= 37), "" when unreadable (then a file is never taken
 * for this boot's). */
static void boot_id(char *buf, size_t cap)
{
    FILE *f = fopen(BOOT_ID_FILE, "re");
    buf[0] = '\0';
    if (f && fgets(buf, (int)cap, f))
        buf[strcspn(buf, " \n")] = '\0';
    if (f)
        fclose(f);
}

static void ids_path(const char *db, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s" IDS_SUFFIX, db);
}

/* Reads db's id file into *out: 0 (*found false when there is none), or -EBADMSG naming it
 * when its line is damaged, -errno when it cannot be read. */
static int ids_read(const char *db, struct id_file *out, bool *found, struct eco_error *err)
{
    char path[4200], line[256] = "", boot[40] = "";
    long long acked = 0, reserved = 0;
    unsigned check = 0;
    memset(out, 0, sizeof *out);
    out->fd = -1;
    *found = false;
    ids_path(db, path, sizeof path);
    FILE *f = fopen(path, "re");
    if (!f)
        return errno == ENOENT
                   ? 0
                   : eco_errorf(err, -errno, "%s: cannot read: %s", path, strerror(errno));
    bool ok = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    const char *c = ok ? strstr(line, IDS_CHECK) : NULL;
    if (!c ||
        sscanf(line, "ecosched-ids 1 acked=%20lld reserved=%20lld boot=%36s check=%8x", &acked,
               &reserved, boot, &check) != 4 ||
        check != fnv1a(line, (size_t)(c - line)) || acked < 0 || reserved < 0)
        return eco_errorf(err, -EBADMSG,
                          "%s: damaged (not the line ecoschedd writes): it keeps the highest job "
                          "id given to clients; restore the state directory from a backup, or "
                          "delete the file to trust the database alone (ids may then be given "
                          "again if the database lost jobs)",
                          path);
    out->acked = acked;
    out->reserved = reserved;
    snprintf(out->boot, sizeof out->boot, "%s", strcmp(boot, "-") ? boot : "");
    *found = true;
    return 0;
}

/* Writes s's id record over the file's (fdatasync'd when sync). */
static int ids_write(struct eco_store *s, bool sync, struct eco_error *err)
{
    char line[256];
    int n = snprintf(line, sizeof line, IDS_FMT, s->ids.acked, s->ids.reserved,
                     s->ids.boot[0] ? s->ids.boot : "-");
    n += snprintf(line + n, sizeof line - (size_t)n, IDS_CHECK "%08x\n", fnv1a(line, (size_t)n));
    if (pwrite(s->ids.fd, line, (size_t)n, 0) != n || (sync && fdatasync(s->ids.fd) < 0))
        return eco_errorf(err, errno ? -errno : -EIO, "%s" IDS_SUFFIX ": cannot write: %s", s->path,
                          strerror(errno ? errno : EIO));
    return 0;
}

/* The highest id the database knows it gave. */
static int high_id(struct eco_store *s, int64_t *out, struct eco_error *err)
{
    sqlite3_stmt *st = s->st[ST_HIGH_ID];
    int rc = sqlite3_step(st), ret = 0;
    if (rc == SQLITE_ROW)
        *out = sqlite3_column_int64(st, 0);
    else
        ret = fail_sql(s, err, rc, "highest job id");
    done(st);
    return ret;
}

static int reserve_ids(struct eco_store *s, int64_t max_id, struct eco_error *err);

/* What to say when acknowledged jobs first..last are gone (ids file says acked, the
 * database's highest id is high). */
static int lost_jobs(struct eco_store *s, int64_t first, int64_t last, struct eco_error *err)
{
    return eco_errorf(err, -EBADMSG,
                      "%s: jobs %" PRId64 "..%" PRId64 " are missing: %s" IDS_SUFFIX
                      " says ids up to %" PRId64 " were given to clients, but the database "
                      "holds ids up to %" PRId64 " only (its write-ahead log %s-wal was deleted, "
                      "moved aside or cut short, or an older copy of the database was "
                      "restored). Put the -wal file back or restore the whole state directory "
                      "from a backup; or, to go on without those jobs, start ecoschedd once "
                      "with --accept-lost-jobs (their ids are not given again)",
                      s->path, first, last, s->path, last, first - 1, s->path);
}

/* At open, after the migration: checks the id file `file` (found: it exists) against the
 * database, raises the id mark above every id that may have been given, and opens the file
 * for the inserts, writing the current record. */
static int ids_open(struct eco_store *s, const struct id_file *file, bool found,
                    struct eco_error *err)
{
    char path[4200];
    int64_t high = 0;
    int ret = high_id(s, &high, err);
    if (ret != 0)
        return ret;
    boot_id(s->ids.boot, sizeof s->ids.boot);
    if (found && file->acked > high) {
        if (!(s->flags & ECO_STORE_ACCEPT_LOSS))
            return lost_jobs(s, high + 1, file->acked, err);
        s->lost_first = high + 1;
        s->lost_last = file->acked;
    }
    bool same_boot = found && file->boot[0] && !strcmp(file->boot, s->ids.boot);
    int64_t floor = found && file->acked > high ? file->acked : high;
    if (found && !same_boot && file->reserved > floor)
        floor = file->reserved;
    if (floor > high && (ret = reserve_ids(s, floor, err)) != 0)
        return ret;
    s->ids.acked = found && file->acked > high ? file->acked : high;
    s->ids.reserved = floor;
    ids_path(s->path, path, sizeof path);
    s->ids.fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (s->ids.fd < 0)
        return eco_errorf(err, -errno, "%s: cannot open: %s", path, strerror(errno));
    ret = ids_write(s, true, err);
    if (ret == 0 && !found) { /* a new file: its directory entry synced too */
        char dir[4200];
        snprintf(dir, sizeof dir, "%s", s->path);
        char *slash = strrchr(dir, '/');
        if (slash)
            *(slash == dir ? slash + 1 : slash) = '\0';
        int dfd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
            fsync(dfd);
            close(dfd);
        }
    }
    return ret;
}

/* Before the open: a missing or empty database beside an id file that names acknowledged
 * jobs is refused (unless ECO_STORE_ACCEPT_LOSS), before SQLite creates an empty one. */
static int ids_precheck(const char *path, unsigned flags, const struct id_file *file, bool found,
                        struct eco_error *err)
{
    struct stat db;
    bool missing = stat(path, &db) < 0;
    if (!found || file->acked == 0 || (flags & ECO_STORE_ACCEPT_LOSS) || (!missing && db.st_size))
        return 0;
    return eco_errorf(err, -EBADMSG,
                      "%s: jobs 1..%" PRId64 " are missing: the database is %s but %s" IDS_SUFFIX
                      " says ids up to %" PRId64 " were given to clients. Restore the "
                      "database (or the whole state directory) from a backup; or, to go on "
                      "without those jobs, start ecoschedd once with --accept-lost-jobs (their "
                      "ids are not given again)",
                      path, file->acked, missing ? "missing" : "empty (0 bytes)", path,
                      file->acked);
}

static int prepare_all(struct eco_store *s, struct eco_error *err)
{
    for (int i = 0; i < ST_COUNT; i++) {
        int rc =
            sqlite3_prepare_v3(s->db, STMT_SQL[i], -1, SQLITE_PREPARE_PERSISTENT, &s->st[i], NULL);
        if (rc != SQLITE_OK)
            return fail_sql(s, err, rc, "prepare statement");
    }
    return 0;
}

/* Connects a new store object to the database at path with SQLite's open flags sqlite_flags
 * (NOMUTEX added: a store is used by one thread at a time); `what` names the open in errors.
 * *s is the caller's even on failure (eco_store_close frees it). */
static int store_connect(const char *path, int sqlite_flags, const char *what, struct eco_store **s,
                         struct eco_error *err)
{
    if (!path || !*path)
        return eco_errorf(err, -EINVAL, "store: no database path given");
    *s = calloc(1, sizeof **s);
    if (*s)
        (*s)->ids.fd = -1;
    if (!*s || !((*s)->path = strdup(path)))
        return eco_errorf(err, -ENOMEM, "%s: out of memory", path);
    int rc = sqlite3_open_v2(path, &(*s)->db, sqlite_flags | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK)
        return fail_sql(*s, err, rc, what);
    sqlite3_extended_result_codes((*s)->db, 1);
    sqlite3_busy_timeout((*s)->db, BUSY_TIMEOUT_MS);
    return 0;
}

/* The end of an open: s handed to *out when ret is 0, else closed; returns ret. */
static int open_done(struct eco_store *s, int ret, struct eco_store **out)
{
    if (ret != 0)
        eco_store_close(s);
    else
        *out = s;
    return ret;
}

int eco_store_open_ex(const char *path, unsigned flags, struct eco_store **out,
                      struct eco_error *err)
{
    struct eco_store *s = NULL;
    struct id_file file;
    bool found = false;
    *out = NULL;
    if (!path || !*path)
        return eco_errorf(err, -EINVAL, "store: no database path given");
    /* before SQLite opens it: opening replays (or silently drops) the log */
    int ret = check_wal(path, err);
    if (ret == 0)
        ret = ids_read(path, &file, &found, err);
    if (ret == 0)
        ret = ids_precheck(path, flags, &file, found, err);
    if (ret == 0)
        ret = store_connect(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, "open", &s, err);
    if (ret == 0)
        s->flags = flags;
    if (ret == 0)
        ret = set_pragmas(s, flags, err);
    if (ret == 0)
        ret = check_integrity(s, err);
    if (ret == 0)
        ret = migrate(s, err);
    if (ret == 0)
        ret = prepare_all(s, err);
    if (ret == 0)
        ret = ids_open(s, &file, found, err);
    return open_done(s, ret, out);
}

int eco_store_open(const char *path, struct eco_store **out, struct eco_error *err)
{
    return eco_store_open_ex(path, 0, out, err);
}

int eco_store_open_reader(const char *path, struct eco_store **out, struct eco_error *err)
{
    struct eco_store *s = NULL;
    *out = NULL;
    /* READONLY: this connection never writes, so it never takes the write lock and, in WAL
     * mode, reads beside the writer's transactions */
    int ret = store_connect(path, SQLITE_OPEN_READONLY, "open read-only", &s, err);
    if (ret == 0)
        ret = query_once(s, SQL_GET_VERSION, "read schema version", &s->version, NULL, 0, err);
    if (ret == 0 && s->version != ECO_STORE_SCHEMA_VERSION)
        ret = eco_errorf(err, -ENOTSUP, "%s: schema version %d, not %d (open the writer first)",
                         path, s->version, ECO_STORE_SCHEMA_VERSION);
    if (ret == 0)
        ret = prepare_all(s, err);
    return open_done(s, ret, out);
}

void eco_store_close(struct eco_store *s)
{
    if (!s)
        return;
    if (s->ids.fd >= 0) {
        /* a clean close: no id above acked was given, so the reservation goes back to it
         * (a reboot after it leaves no gap); best effort, a failed write keeps the old one */
        s->ids.reserved = s->ids.acked;
        ids_write(s, true, NULL);
        close(s->ids.fd);
    }
    for (int i = 0; i < ST_COUNT; i++)
        sqlite3_finalize(s->st[i]);
    sqlite3_close(s->db);
    free(s->path);
    free(s);
}

bool eco_store_lost(const struct eco_store *s, int64_t *first, int64_t *last)
{
    *first = s->lost_first;
    *last = s->lost_last;
    return s->lost_last > 0;
}

int eco_store_reserve_ids(struct eco_store *s, int64_t max_id, struct eco_error *err)
{
    return reserve_ids(s, max_id, err);
}

static int reserve_ids(struct eco_store *s, int64_t max_id, struct eco_error *err)
{
    sqlite3_stmt *st = s->st[ST_RESERVE_IDS];
    int ret = tx_begin(s, err);
    if (ret != 0)
        return ret;
    sqlite3_bind_int64(st, 1, max_id > 0 ? max_id : 0);
    ret = exec_stmt(s, ST_RESERVE_IDS, "reserve job ids", err);
    return tx_end(s, ret, err);
}

int eco_store_schema_version(const struct eco_store *s)
{
    return s->version;
}

/* ---- insert ----------------------------------------------------------------------------- */

/* Runs a field check statement on `json`: 0 when it passes, -EINVAL naming the field. */
static int check_json(struct eco_store *s, enum stmt which, const char *field, const char *json,
                      const char *want, struct eco_error *err)
{
    sqlite3_stmt *st = s->st[which];
    int ret = 0;
    int rc = sqlite3_bind_text(st, 1, json, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc != SQLITE_ROW)
        ret = fail_sql(s, err, rc, field);
    else if (!sqlite3_column_int(st, 0))
        ret = eco_errorf(err, -EINVAL, "%s: job field '%s': not %s", s->path, field, want);
    done(st);
    return ret;
}

static int check_job(struct eco_store *s, const struct eco_store_job *j, struct eco_error *err)
{
    if (!j->cwd || !*j->cwd)
        return eco_errorf(err, -EINVAL, "%s: job field 'cwd': missing", s->path);
    if (!j->argv_json)
        return eco_errorf(err, -EINVAL, "%s: job field 'argv': missing", s->path);
    if (!(j->gpu_mem_gb >= 0))
        return eco_errorf(err, -EINVAL, "%s: job field 'gpu_mem_gb': negative", s->path);
    if (!(j->power_cap_w >= 0 || j->power_cap_w == ECO_STORE_CAP_AUTO))
        return eco_errorf(err, -EINVAL,
                          "%s: job field 'power_cap_w': neither watts, 0 nor -1 (auto)", s->path);
    int ret = check_json(s, ST_CHECK_ARGV, "argv", j->argv_json,
                         "a non-empty JSON array of strings", err);
    if (ret == 0 && j->env_json)
        ret = check_json(s, ST_CHECK_ENV, "env", j->env_json, "a JSON object of strings", err);
    return ret;
}

int eco_store_insert(struct eco_store *s, const struct eco_store_job *j, int64_t *id,
                     struct eco_error *err)
{
    sqlite3_stmt *st = s->st[ST_INSERT];
    int ret = check_job(s, j, err);
    if (ret != 0)
        return ret;
    ret = tx_begin(s, err);
    if (ret != 0)
        return ret;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)j->uid);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)j->gid);
    bind_text(st, 3, j->name);
    bind_text(st, 4, j->cwd);
    bind_text(st, 5, j->argv_json);
    bind_text(st, 6, j->env_json ? j->env_json : "{}");
    sqlite3_bind_int64(st, 7, j->gpus);
    sqlite3_bind_double(st, 8, j->gpu_mem_gb);
    sqlite3_bind_int(st, 9, j->share ? 1 : 0);
    sqlite3_bind_double(st, 10, j->power_cap_w);
    sqlite3_bind_double(st, 11, j->deadline_s);
    sqlite3_bind_double(st, 12, j->submit_s);
    bind_text(st, 13, j->stdout_path);
    bind_text(st, 14, j->stderr_path);
    ret = exec_stmt(s, ST_INSERT, "insert job", err);
    if (ret == 0)
        *id = sqlite3_last_insert_rowid(s->db);
    if (ret == 0 && s->ids.fd >= 0 && *id > s->ids.reserved) {
        /* the next block of ids, on disk before this one is committed: a failed write fails
         * the insert (rolled back: nothing was given) */
        int64_t old = s->ids.reserved;
        s->ids.reserved = *id + ECO_STORE_ID_BLOCK - 1;
        if ((ret = ids_write(s, true, err)) != 0)
            s->ids.reserved = old;
    }
    if (ret == 0 && (j->max_delay_s > 0 || j->not_before_s > 0)) {
        st = s->st[ST_INSERT_SLACK];
        sqlite3_bind_int64(st, 1, *id);
        sqlite3_bind_double(st, 2, j->max_delay_s);
        sqlite3_bind_double(st, 3, j->not_before_s);
        ret = exec_stmt(s, ST_INSERT_SLACK, "insert job slack", err);
    }
    ret = tx_end(s, ret, err);
    if (ret == 0 && s->ids.fd >= 0 && *id > s->ids.acked) {
        /* committed: recorded as given before the caller answers. A failed write is not the
         * insert's failure (the job is stored): the reservation above still keeps its id from
         * reuse, only a later loss of exactly these last jobs would go unseen */
        s->ids.acked = *id;
        ids_write(s, (s->flags & ECO_STORE_SYNC_FULL) != 0, NULL);
    }
    return ret;
}

/* ---- reading jobs ----------------------------------------------------------------------- */

void eco_store_job_fini(struct eco_store_job *job)
{
    if (!job)
        return;
    free(job->strings_);
    memset(job, 0, sizeof *job);
}

void eco_store_jobs_free(struct eco_store_job *jobs, size_t n)
{
    for (size_t i = 0; jobs && i < n; i++)
        eco_store_job_fini(&jobs[i]);
    free(jobs);
}

/* Text columns of JOB_COLUMNS and where they go. */
enum {
    COL_ID,
    COL_STATE,
    COL_UID,
    COL_GID,
    COL_NAME,
    COL_CWD,
    COL_ARGV,
    COL_ENV,
    COL_GPUS,
    COL_MEM,
    COL_SHARE,
    COL_CAP,
    COL_DEADLINE,
    COL_SUBMIT,
    COL_START,
    COL_END,
    COL_GPUSET,
    COL_PID,
    COL_PGID,
    COL_EXIT,
    COL_REASON,
    COL_ENERGY,
    COL_STDOUT,
    COL_STDERR,
    COL_BASIS,
    COL_MAX_DELAY,
    COL_NOT_BEFORE,
    COL_CARBON,
    COL_CARBON_PARTIAL,
    COL_COST,
    COL_COST_PARTIAL,
    COL_CURRENCY
};

static const char **text_field(struct eco_store_job *j, int col)
{
    switch (col) {
    case COL_NAME:
        return &j->name;
    case COL_CWD:
        return &j->cwd;
    case COL_ARGV:
        return &j->argv_json;
    case COL_ENV:
        return &j->env_json;
    case COL_GPUSET:
        return &j->assigned_gpus;
    case COL_REASON:
        return &j->reason;
    case COL_STDOUT:
        return &j->stdout_path;
    case COL_STDERR:
        return &j->stderr_path;
    default:
        return NULL;
    }
}

/* Copies the text columns of the current row into one block owned by the job. */
static int copy_strings(sqlite3_stmt *st, struct eco_store_job *j)
{
    size_t total = 0;
    char *p = NULL;
    int ncol = sqlite3_column_count(st);
    for (int c = 0; c < ncol; c++) {
        if (text_field(j, c) && sqlite3_column_type(st, c) != SQLITE_NULL) {
            sqlite3_column_text(st, c); /* convert first, then ask the size */
            total += (size_t)sqlite3_column_bytes(st, c) + 1;
        }
    }
    if (total == 0)
        return 0;
    p = j->strings_ = malloc(total);
    if (!p)
        return -ENOMEM;
    for (int c = 0; c < ncol; c++) {
        const char **f = text_field(j, c);
        if (!f || sqlite3_column_type(st, c) == SQLITE_NULL)
            continue;
        size_t len = (size_t)sqlite3_column_bytes(st, c);
        memcpy(p, sqlite3_column_text(st, c), len);
        p[len] = '\0';
        *f = p;
        p += len + 1;
    }
    return 0;
}

static int row_to_job(struct eco_store *s, sqlite3_stmt *st, struct eco_store_job *j,
                      struct eco_error *err)
{
    memset(j, 0, sizeof *j);
    const char *state = (const char *)sqlite3_column_text(st, COL_STATE);
    j->id = sqlite3_column_int64(st, COL_ID);
    if (eco_store_state_parse(state, &j->state) != 0)
        return eco_errorf(err, -EBADMSG, "%s: job %lld: unknown state '%s'", s->path,
                          (long long)j->id, state ? state : "(null)");
    j->uid = (uid_t)sqlite3_column_int64(st, COL_UID);
    j->gid = (gid_t)sqlite3_column_int64(st, COL_GID);
    j->gpus = (unsigned)sqlite3_column_int64(st, COL_GPUS);
    j->gpu_mem_gb = sqlite3_column_double(st, COL_MEM);
    j->share = sqlite3_column_int(st, COL_SHARE) != 0;
    j->power_cap_w = sqlite3_column_double(st, COL_CAP);
    j->deadline_s = sqlite3_column_double(st, COL_DEADLINE);
    j->submit_s = sqlite3_column_double(st, COL_SUBMIT);
    j->start_s = sqlite3_column_double(st, COL_START);
    j->end_s = sqlite3_column_double(st, COL_END);
    j->pid = (pid_t)sqlite3_column_int64(st, COL_PID);
    j->pgid = (pid_t)sqlite3_column_int64(st, COL_PGID);
    j->exit_status =
        sqlite3_column_type(st, COL_EXIT) == SQLITE_NULL ? -1 : sqlite3_column_int(st, COL_EXIT);
    j->energy_j = sqlite3_column_double(st, COL_ENERGY);
    const unsigned char *basis = sqlite3_column_text(st, COL_BASIS);
    snprintf(j->energy_basis, sizeof j->energy_basis, "%s", basis ? (const char *)basis : "");
    j->max_delay_s = sqlite3_column_double(st, COL_MAX_DELAY);
    j->not_before_s = sqlite3_column_double(st, COL_NOT_BEFORE);
    j->has_carbon = sqlite3_column_type(st, COL_CARBON) != SQLITE_NULL;
    j->carbon_kg = sqlite3_column_double(st, COL_CARBON);
    j->carbon_partial = sqlite3_column_int(st, COL_CARBON_PARTIAL) != 0;
    j->has_cost = sqlite3_column_type(st, COL_COST) != SQLITE_NULL;
    j->cost = sqlite3_column_double(st, COL_COST);
    j->cost_partial = sqlite3_column_int(st, COL_COST_PARTIAL) != 0;
    const unsigned char *cur = sqlite3_column_text(st, COL_CURRENCY);
    snprintf(j->currency, sizeof j->currency, "%s", cur ? (const char *)cur : "");
    if (copy_strings(st, j) != 0)
        return eco_errorf(err, -ENOMEM, "%s: job %lld: out of memory", s->path, (long long)j->id);
    return 0;
}

int eco_store_get(struct eco_store *s, int64_t id, struct eco_store_job *out, struct eco_error *err)
{
    sqlite3_stmt *st = s->st[ST_GET];
    int ret = 0;
    memset(out, 0, sizeof *out);
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        ret = row_to_job(s, st, out, err);
    else if (rc == SQLITE_DONE)
        ret = eco_errorf(err, -ENOENT, "%s: no job %lld", s->path, (long long)id);
    else
        ret = fail_sql(s, err, rc, "fetch job");
    done(st);
    return ret;
}

/* Binds a listing's limit (?1), offset or cursor (?2) and state (?3, unless ECO_STORE_ANY)
 * on statement all or by_state and collects its rows. */
static int collect(struct eco_store *s, enum stmt all, enum stmt by_state, int state, size_t limit,
                   int64_t from, struct eco_store_job **jobs, size_t *n, struct eco_error *err)
{
    struct eco_store_job *v = NULL;
    size_t len = 0, cap = 0;
    sqlite3_stmt *st = NULL;
    int ret = 0, rc;
    *jobs = NULL;
    *n = 0;
    if (state != ECO_STORE_ANY && (state < 0 || state >= ECO_STORE_NSTATES))
        return eco_errorf(err, -EINVAL, "%s: list: unknown state %d", s->path, state);
    st = s->st[state == ECO_STORE_ANY ? all : by_state];
    sqlite3_bind_int64(st, 1, limit ? (sqlite3_int64)limit : -1);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)from);
    if (state != ECO_STORE_ANY)
        sqlite3_bind_text(st, 3, STATE_NAMES[state], -1, SQLITE_STATIC);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (len == cap) {
            size_t ncap = cap ? 2 * cap : 16;
            struct eco_store_job *nv = realloc(v, ncap * sizeof *nv);
            if (!nv) {
                ret = eco_errorf(err, -ENOMEM, "%s: list: out of memory", s->path);
                goto out;
            }
            v = nv;
            cap = ncap;
        }
        ret = row_to_job(s, st, &v[len], err);
        if (ret != 0)
            goto out;
        len++;
    }
    if (rc != SQLITE_DONE)
        ret = fail_sql(s, err, rc, "list jobs");
out:
    done(st);
    if (ret != 0) {
        eco_store_jobs_free(v, len);
        return ret;
    }
    *jobs = v;
    *n = len;
    return 0;
}

int eco_store_list(struct eco_store *s, int state, size_t limit, size_t offset,
                   struct eco_store_job **jobs, size_t *n, struct eco_error *err)
{
    return collect(s, ST_LIST_ALL, ST_LIST_STATE, state, limit, (int64_t)offset, jobs, n, err);
}

int eco_store_list_after(struct eco_store *s, int state, int64_t after_id, size_t limit,
                         struct eco_store_job **jobs, size_t *n, struct eco_error *err)
{
    return collect(s, ST_PAGE_ALL, ST_PAGE_STATE, state, limit, after_id, jobs, n, err);
}

int eco_store_prune(struct eco_store *s, double ended_before_s, size_t limit, int64_t *ids,
                    size_t *n, struct eco_error *err)
{
    sqlite3_stmt *st = s->st[ST_PRUNE];
    int rc, ret;
    *n = 0;
    if (limit == 0)
        return 0;
    if ((ret = tx_begin(s, err)) != 0)
        return ret;
    /* first the totals of the rows about to go, then the rows: one transaction, same set */
    sqlite3_stmt *tot = s->st[ST_PRUNE_TOTALS];
    sqlite3_bind_double(tot, 1, ended_before_s);
    sqlite3_bind_int64(tot, 2, (sqlite3_int64)limit);
    if ((ret = exec_stmt(s, ST_PRUNE_TOTALS, "add pruned jobs to their users' totals", err)) != 0)
        return tx_end(s, ret, err);
    sqlite3_bind_double(st, 1, ended_before_s);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)limit);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (*n < limit)
            ids[(*n)++] = sqlite3_column_int64(st, 0);
    if (rc != SQLITE_DONE)
        ret = fail_sql(s, err, rc, "prune finished jobs");
    done(st);
    ret = tx_end(s, ret, err);
    if (ret != 0)
        *n = 0; /* rolled back: nothing was deleted */
    return ret;
}

int eco_store_running(struct eco_store *s, struct eco_store_job **jobs, size_t *n,
                      struct eco_error *err)
{
    return eco_store_list(s, ECO_STORE_RUNNING, 0, 0, jobs, n, err);
}

/* ---- transitions ------------------------------------------------------------------------ */

#define BIT(st) (1u << (st))

/* Inside a transaction: reads the job's state into *cur; -ENOENT when missing, -ESTALE when
 * not in `from` (a mask of BIT(state)). */
static int check_state(struct eco_store *s, int64_t id, unsigned from, const char *what,
                       enum eco_store_state *cur, struct eco_error *err)
{
    sqlite3_stmt *st = s->st[ST_STATE];
    int ret = 0;
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_DONE)
        ret = eco_errorf(err, -ENOENT, "%s: %s: no job %lld", s->path, what, (long long)id);
    else if (rc != SQLITE_ROW)
        ret = fail_sql(s, err, rc, what);
    else if (eco_store_state_parse((const char *)sqlite3_column_text(st, 0), cur) != 0)
        ret = eco_errorf(err, -EBADMSG, "%s: %s: job %lld has an unknown state", s->path, what,
                         (long long)id);
    else if (!(from & BIT(*cur)))
        ret = eco_errorf(err, -ESTALE, "%s: %s: job %lld is %s", s->path, what, (long long)id,
                         eco_store_state_name(*cur));
    done(st);
    return ret;
}

/* Runs the bound update `which` on job `id` in a transaction, if the job is in `from`. */
static int transition(struct eco_store *s, int64_t id, enum stmt which, unsigned from,
                      const char *what, enum eco_store_state *prev, struct eco_error *err)
{
    enum eco_store_state cur = ECO_STORE_QUEUED;
    int ret = tx_begin(s, err);
    if (ret != 0)
        goto out;
    ret = check_state(s, id, from, what, &cur, err);
    if (ret == 0)
        ret = exec_stmt(s, which, what, err);
    if (ret == 0 && sqlite3_changes(s->db) != 1)
        ret = eco_errorf(err, -ESTALE, "%s: %s: job %lld changed under us", s->path, what,
                         (long long)id);
    ret = tx_end(s, ret, err);
    if (ret == 0 && prev)
        *prev = cur;
out:
    done(s->st[which]); /* drops the bindings even when nothing ran */
    return ret;
}

int eco_store_start(struct eco_store *s, int64_t id, pid_t pid, pid_t pgid,
                    const char *assigned_gpus, double start_s, struct eco_error *err)
{
    sqlite3_stmt *st = s->st[ST_START];
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, pid);
    sqlite3_bind_int64(st, 3, pgid);
    bind_text(st, 4, assigned_gpus);
    sqlite3_bind_double(st, 5, start_s);
    return transition(s, id, ST_START, BIT(ECO_STORE_QUEUED), "start job", NULL, err);
}

int eco_store_finish(struct eco_store *s, int64_t id, enum eco_store_state to, int exit_status,
                     double end_s, double energy_j, struct eco_error *err)
{
    sqlite3_stmt *st = s->st[ST_FINISH];
    if (to != ECO_STORE_DONE && to != ECO_STORE_FAILED)
        return eco_errorf(err, -EINVAL,
                          "%s: finish job %lld: target state %s is not done or failed", s->path,
                          (long long)id, eco_store_state_name(to));
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_text(st, 2, STATE_NAMES[to], -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, exit_status);
    sqlite3_bind_double(st, 4, end_s);
    sqlite3_bind_double(st, 5, energy_j);
    return transition(s, id, ST_FINISH, BIT(ECO_STORE_RUNNING), "finish job", NULL, err);
}

int eco_store_cancel(struct eco_store *s, int64_t id, double end_s, const char *reason,
                     enum eco_store_state *prev, struct eco_error *err)
{
    sqlite3_stmt *st = s->st[ST_CANCEL];
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_double(st, 2, end_s);
    bind_text(st, 3, reason);
    return transition(s, id, ST_CANCEL, BIT(ECO_STORE_QUEUED) | BIT(ECO_STORE_RUNNING),
                      "cancel job", prev, err);
}

int eco_store_lose(struct eco_store *s, int64_t id, double end_s, const char *reason,
                   struct eco_error *err)
{
    sqlite3_stmt *st = s->st[ST_LOSE];
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_double(st, 2, end_s);
    bind_text(st, 3, reason);
    return transition(s, id, ST_LOSE, BIT(ECO_STORE_RUNNING), "mark job lost", NULL, err);
}

int eco_store_fail_start(struct eco_store *s, int64_t id, int exit_status, double end_s,
                         const char *reason, struct eco_error *err)
{
    sqlite3_stmt *st = s->st[ST_FAIL_START];
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int(st, 2, exit_status);
    sqlite3_bind_double(st, 3, end_s);
    bind_text(st, 4, reason);
    return transition(s, id, ST_FAIL_START, BIT(ECO_STORE_QUEUED) | BIT(ECO_STORE_RUNNING),
                      "fail job start", NULL, err);
}

int eco_store_set_energy(struct eco_store *s, int64_t id, double energy_j, struct eco_error *err)
{
    sqlite3_stmt *st = s->st[ST_ENERGY];
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_double(st, 2, energy_j);
    return transition(s, id, ST_ENERGY, ~0u, "set job energy", NULL, err);
}

int eco_store_set_grid(struct eco_store *s, int64_t id, const struct eco_store_grid *g,
                       struct eco_error *err)
{
    sqlite3_stmt *st = s->st[ST_GRID];
    sqlite3_bind_int64(st, 1, id);
    if (g->has_carbon)
        sqlite3_bind_double(st, 2, g->carbon_kg);
    else
        sqlite3_bind_null(st, 2);
    sqlite3_bind_int(st, 3, g->carbon_partial ? 1 : 0);
    if (g->has_cost)
        sqlite3_bind_double(st, 4, g->cost);
    else
        sqlite3_bind_null(st, 4);
    sqlite3_bind_int(st, 5, g->cost_partial ? 1 : 0);
    bind_text(st, 6, g->has_cost && g->currency[0] ? g->currency : NULL);
    return transition(s, id, ST_GRID, ~0u, "set job carbon and cost", NULL, err);
}

int eco_store_set_energy_basis(struct eco_store *s, int64_t id, const char *basis,
                               struct eco_error *err)
{
    static const char *const names[] = {"exclusive", "utilization", "memory", "equal"};
    sqlite3_stmt *st = s->st[ST_BASIS];
    size_t k = 0;
    while (k < sizeof names / sizeof names[0] && (!basis || strcmp(basis, names[k])))
        k++;
    if (k == sizeof names / sizeof names[0])
        return eco_errorf(err, -EINVAL,
                          "%s: job %lld: energy basis '%s' is not one of "
                          "exclusive, utilization, memory, equal",
                          s->path, (long long)id, basis ? basis : "(null)");
    sqlite3_bind_int64(st, 1, id);
    bind_text(st, 2, basis);
    return transition(s, id, ST_BASIS, ~0u, "set job energy basis", NULL, err);
}

/* ---- summaries -------------------------------------------------------------------------- */

int eco_store_stats(struct eco_store *s, struct eco_store_stats *out, struct eco_error *err)
{
    sqlite3_stmt *st = s->st[ST_STATS];
    int ret = 0, rc;
    memset(out, 0, sizeof *out);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        enum eco_store_state state;
        const char *name = (const char *)sqlite3_column_text(st, 0);
        if (!name || eco_store_state_parse(name, &state) < 0)
            continue; /* the schema's CHECK keeps other states out */
        out->jobs[state] = (uint64_t)sqlite3_column_int64(st, 1);
        out->energy_j += sqlite3_column_double(st, 2);
        out->carbon_kg += sqlite3_column_double(st, 3);
        out->cost += sqlite3_column_double(st, 4);
    }
    if (rc != SQLITE_DONE)
        ret = fail_sql(s, err, rc, "job statistics");
    done(st);
    if (ret != 0)
        return ret;
    st = s->st[ST_PRUNED_SUM];
    if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        out->pruned_jobs = (uint64_t)sqlite3_column_int64(st, 0);
        out->energy_j += sqlite3_column_double(st, 1);
        out->carbon_kg += sqlite3_column_double(st, 2);
        out->cost += sqlite3_column_double(st, 3);
    } else {
        ret = fail_sql(s, err, rc, "pruned jobs' totals");
    }
    done(st);
    return ret;
}

int eco_store_pruned(struct eco_store *s, struct eco_store_pruned **rows, size_t *n,
                     struct eco_error *err)
{
    sqlite3_stmt *st = s->st[ST_PRUNED];
    struct eco_store_pruned *v = NULL;
    size_t len = 0, cap = 0;
    int ret = 0, rc;
    *rows = NULL;
    *n = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (len == cap) {
            size_t ncap = cap ? 2 * cap : 8;
            struct eco_store_pruned *nv = realloc(v, ncap * sizeof *nv);
            if (!nv) {
                ret = eco_errorf(err, -ENOMEM, "%s: pruned totals: out of memory", s->path);
                goto out;
            }
            v = nv;
            cap = ncap;
        }
        v[len++] = (struct eco_store_pruned){
            .uid = (uid_t)sqlite3_column_int64(st, 0),
            .jobs = (uint64_t)sqlite3_column_int64(st, 1),
            .started = (uint64_t)sqlite3_column_int64(st, 2),
            .with_carbon = (uint64_t)sqlite3_column_int64(st, 3),
            .energy_j = sqlite3_column_double(st, 4),
            .gpu_s = sqlite3_column_double(st, 5),
            .carbon_kg = sqlite3_column_double(st, 6),
            .cost = sqlite3_column_double(st, 7),
            .last_end_s = sqlite3_column_double(st, 8),
        };
    }
    if (rc != SQLITE_DONE)
        ret = fail_sql(s, err, rc, "pruned totals");
out:
    done(st);
    if (ret != 0) {
        free(v);
        return ret;
    }
    *rows = v;
    *n = len;
    return 0;
}

int eco_store_recent_energy(struct eco_store *s, size_t limit, int64_t *ids, double *energy_j,
                            size_t *n, struct eco_error *err)
{
    sqlite3_stmt *st = s->st[ST_RECENT_ENERGY];
    int ret = 0, rc = SQLITE_DONE;
    *n = 0;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)limit);
    while (*n < limit && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        ids[*n] = sqlite3_column_int64(st, 0);
        energy_j[*n] = sqlite3_column_double(st, 1);
        ++*n;
    }
    if (*n < limit && rc != SQLITE_DONE)
        ret = fail_sql(s, err, rc, "recent jobs' energy");
    done(st);
    return ret;
}

int eco_store_set_power_cap(struct eco_store *s, int64_t id, double cap_w, struct eco_error *err)
{
    sqlite3_stmt *st = s->st[ST_CAP];
    if (!(cap_w >= 0 || cap_w == ECO_STORE_CAP_AUTO))
        return eco_errorf(err, -EINVAL, "%s: set job power cap: %g W is neither watts, 0 nor -1",
                          s->path, cap_w);
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_double(st, 2, cap_w);
    return transition(s, id, ST_CAP, ~0u, "set job power cap", NULL, err);
}
