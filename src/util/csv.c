/* SPDX-License-Identifier: MIT */
/* CSV helpers: a line reader (plain or gzip files), an in-place record splitter and strict
 * decimal number parsers, used by the trace readers and anything else that reads CSV at the
 * edges. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "util/csv.h"

/* Bytes read from zlib at a time; 256 KiB is past the point where larger buffers stop paying
 * off (and zlib's own input buffer is set to the same). */
#define CHUNK_BYTES (256 * 1024)

struct eco_csv_file {
    const char *path;
    gzFile gz;
    size_t max_line;
    uint64_t max_bytes, total; /* text after decompression: the limit, and how much was read */
    const char *what;          /* what the limit is for ("a trace"), for its message */
    unsigned long line;
    char *chunk; /* bytes read but not yet returned: chunk[pos..end) */
    size_t pos, end;
    int eof;
    int failed; /* zlib reported an error with the bytes now in the chunk */
    char *buf;  /* the current line */
    size_t cap;
};

int eco_csv_open(const char *path, size_t max_line, struct eco_csv_file **out,
                 struct eco_error *err)
{
    *out = NULL;
    int rc, fd = -1;
    struct eco_csv_file *f = calloc(1, sizeof *f);
    if (!f || !(f->chunk = malloc(CHUNK_BYTES))) {
        free(f);
        return eco_errorf(err, -ENOMEM, "%s: out of memory", path);
    }
    f->path = path;
    f->max_line = max_line;
    f->max_bytes = ECO_CSV_MAX_BYTES;
    f->what = "a CSV file";
    /* O_NONBLOCK: opening a FIFO for reading blocks until a writer comes (a file replaced by
     * one would hang the caller, the daemon's loop among them); a regular file ignores it */
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        rc = eco_errorf(err, -ENOENT, "%s: cannot open: %s", path, strerror(errno));
        goto fail;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        rc = eco_errorf(err, -EIO, "%s: cannot read: %s", path, strerror(errno));
        goto fail;
    }
    if (!S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode))
            rc = eco_errorf(err, -EIO, "%s: cannot read: %s (expected a CSV file)", path,
                            strerror(EISDIR));
        else
            rc = eco_errorf(
                err, -EIO, "%s: cannot read: %s (give a file: gzip is read as it is)", path,
                S_ISFIFO(st.st_mode) ? "a FIFO, not a regular file" : "not a regular file");
        goto fail;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    f->gz = gzdopen(fd, "rb"); /* reads plain files as they are */
    if (!f->gz) {
        rc = eco_errorf(err, -ENOMEM, "%s: cannot open: out of memory", path);
        goto fail;
    }
    fd = -1; /* f->gz owns it now */
    gzbuffer(f->gz, CHUNK_BYTES);
    *out = f;
    return 0;
fail:
    if (fd >= 0)
        close(fd);
    eco_csv_close(f);
    return rc;
}

void eco_csv_close(struct eco_csv_file *f)
{
    if (!f)
        return;
    if (f->gz)
        gzclose(f->gz);
    free(f->chunk);
    free(f->buf);
    free(f);
}

unsigned long eco_csv_lineno(const struct eco_csv_file *f)
{
    return f->line;
}

void eco_csv_set_max_bytes(struct eco_csv_file *f, uint64_t max_bytes, const char *what)
{
    f->max_bytes = max_bytes;
    f->what = what;
}

void eco_csv_format_bytes(uint64_t n, char *buf, size_t size)
{
    if (n >= (1ull << 30) && n % (1ull << 30) == 0)
        snprintf(buf, size, "%" PRIu64 " GiB", n >> 30);
    else if (n >= (1ull << 20) && n % (1ull << 20) == 0)
        snprintf(buf, size, "%" PRIu64 " MiB", n >> 20);
    else if (n >= (1ull << 10) && n % (1ull << 10) == 0)
        snprintf(buf, size, "%" PRIu64 " KiB", n >> 10);
    else
        snprintf(buf, size, "%" PRIu64 " bytes", n);
}

/* The read error zlib reports, or NULL when there is none. zlib prefixes its message with the
 * name it knows the file by, "<fd:N>: " after gzdopen; the path is ours to give, so that
 * prefix goes. */
static const char *read_error(struct eco_csv_file *f)
{
    int zerr = Z_OK;
    const char *msg = gzerror(f->gz, &zerr);
    if (zerr == Z_OK || zerr == Z_STREAM_END)
        return NULL;
    const char *colon = strncmp(msg, "<fd:", 4) == 0 ? strstr(msg, ": ") : NULL;
    return colon ? colon + 2 : msg;
}

/* Refills the chunk: 1, 0 at the end of the file, or -EIO with err set. zlib hands over what it
 * could decompress of a damaged stream together with the error; those bytes are returned
 * first and the error at the next refill, so that it names the line where the damage is. */
static int refill(struct eco_csv_file *f, struct eco_error *err)
{
    if (f->eof && !f->failed)
        return 0;
    /* one byte past the limit at most: enough to tell a file over it, and a gzip bomb is
     * never inflated further than that */
    uint64_t room = f->max_bytes - f->total + 1;
    unsigned want = room < CHUNK_BYTES ? (unsigned)room : CHUNK_BYTES;
    int n = f->failed ? 0 : gzread(f->gz, f->chunk, want);
    const char *why = read_error(f);
    if (n > 0 && why) {
        f->failed = 1;
    } else if (n < 0 || why) {
        return eco_errorf(err, -EIO, "%s:%lu: read error: %s", f->path, f->line + 1,
                          why ? why : "unknown zlib error");
    }
    if (n > 0 && (f->total += (uint64_t)n) > f->max_bytes) {
        char lim[32];
        eco_csv_format_bytes(f->max_bytes, lim, sizeof lim);
        return eco_errorf(err, -EFBIG,
                          "%s:%lu: more than %s of text (after decompression): the limit for %s",
                          f->path, f->line + 1, lim, f->what);
    }
    f->pos = 0;
    f->end = n > 0 ? (size_t)n : 0;
    if (n == 0) {
        f->eof = 1;
        return 0;
    }
    return 1;
}

/* Appends chunk bytes to the line buffer, refusing a line over the limit. */
static int append(struct eco_csv_file *f, size_t *len, const char *p, size_t n,
                  struct eco_error *err)
{
    if (*len + n > f->max_line) {
        return eco_errorf(err, -EINVAL, "%s:%lu: line longer than %zu bytes", f->path, f->line + 1,
                          f->max_line);
    }
    if (*len + n + 1 > f->cap) {
        size_t cap = f->cap ? f->cap : 1024;
        while (cap < *len + n + 1)
            cap *= 2;
        char *b = realloc(f->buf, cap);
        if (!b)
            return eco_errorf(err, -ENOMEM, "%s:%lu: out of memory", f->path, f->line + 1);
        f->buf = b;
        f->cap = cap;
    }
    memcpy(f->buf + *len, p, n);
    *len += n;
    return 0;
}

int eco_csv_next(struct eco_csv_file *f, char **line, size_t *len_out, struct eco_error *err)
{
    size_t len = 0;
    int rc, got = 0;
    for (;;) {
        if (f->pos == f->end) {
            rc = refill(f, err);
            if (rc < 0)
                return rc;
            if (rc == 0)
                break;
        }
        const char *p = f->chunk + f->pos;
        size_t avail = f->end - f->pos;
        const char *nl = memchr(p, '\n', avail);
        size_t n = nl ? (size_t)(nl - p) : avail;
        if ((rc = append(f, &len, p, n, err)))
            return rc;
        got = 1;
        f->pos += n + (nl != NULL);
        if (nl)
            break;
    }
    if (!got)
        return 0;
    if ((rc = append(f, &len, "", 0, err))) /* room for the terminator */
        return rc;
    f->line++;
    if (len > 0 && f->buf[len - 1] == '\r')
        len--;
    f->buf[len] = '\0';
    const char *nul = memchr(f->buf, '\0', len);
    if (nul)
        return eco_errorf(err, -EINVAL,
                          "%s:%lu: NUL byte at column %zu (a text CSV file has none: is it "
                          "binary, or UTF-16?)",
                          f->path, f->line, (size_t)(nul - f->buf) + 1);
    *line = f->buf;
    *len_out = len;
    return 1;
}

/* Unquotes the quoted field at `p` (which points at its opening '"') in place. On success
 * returns a pointer to the separator after the closing quote (',' or '\0'); NULL when the
 * field is malformed. */
static char *unquote(char *p)
{
    char *w = p;
    p++;
    for (;;) {
        if (*p == '\0')
            return NULL; /* unterminated */
        if (*p == '"') {
            if (p[1] != '"') {
                p++;
                break;
            }
            p++; /* "" stands for one quote */
        }
        *w++ = *p++;
    }
    if (*p != ',' && *p != '\0')
        return NULL;
    /* w < p here: writing the terminator cannot clobber the separator. */
    *w = '\0';
    return p;
}

int eco_csv_split(char *line, char **fields, int max)
{
    size_t len = strlen(line);
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        line[--len] = '\0';

    char *p = line;
    int n = 0;
    for (;;) {
        char *start = p;
        char *sep;
        if (*p == '"') {
            sep = unquote(p);
            if (!sep)
                return -EINVAL;
        } else {
            sep = strchr(p, ',');
        }
        if (n < max)
            fields[n] = start;
        n++;
        if (!sep || *sep == '\0')
            return n;
        *sep = '\0';
        p = sep + 1;
    }
}

/* Characters a decimal number may contain; checked before strtod so that "nan", "inf",
 * hexadecimal ("0x1p3") and leading spaces, all of which strtod accepts, are refused. */
static bool is_number_char(char c)
{
    return (c >= '0' && c <= '9') || c == '.' || c == '+' || c == '-' || c == 'e' || c == 'E';
}

int eco_parse_double(const char *s, double *out)
{
    if (!s || *s == '\0')
        return -EINVAL;

    /* Fast path for plain decimals ("-12", "3.25") with at most 15 significant digits, which
     * is what trace columns hold: the digits form an integer below 2^53 and 10^k is exact, so
     * one IEEE division gives the correctly rounded result, the same double strtod would
     * (Clinger's fast path). Anything else goes through strtod. */
    static const double pow10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    const char *c = s;
    bool neg = (*c == '-');
    if (*c == '-' || *c == '+')
        c++;
    int digits = 0, frac = -1;
    int64_t m = 0;
    for (; digits <= 15; c++) {
        if (*c >= '0' && *c <= '9') {
            m = m * 10 + (*c - '0');
            digits++;
            frac += (frac >= 0);
        } else if (*c == '.' && frac < 0) {
            frac = 0;
        } else {
            break;
        }
    }
    if (*c == '\0' && digits > 0 && digits <= 15) {
        double v = frac > 0 ? (double)m / pow10[frac] : (double)m;
        *out = neg ? -v : v;
        return 0;
    }

    for (c = s; *c; c++)
        if (!is_number_char(*c))
            return -EINVAL;
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || !isfinite(v))
        return -EINVAL;
    /* ERANGE with a finite result is underflow towards 0: the value is still the nearest
     * double, so it is accepted. */
    *out = v;
    return 0;
}

int eco_parse_int64(const char *s, int64_t *out)
{
    if (!s || *s == '\0')
        return -EINVAL;
    const char *c = s;
    bool neg = (*c == '-');
    if (*c == '-' || *c == '+')
        c++;
    if (*c == '\0')
        return -EINVAL;
    /* Accumulate as a negative number: its range includes INT64_MIN. */
    int64_t v = 0;
    bool range = false;
    for (; *c; c++) {
        if (*c < '0' || *c > '9')
            return -EINVAL;
        int d = *c - '0';
        if (v < (INT64_MIN + d) / 10)
            range = true;
        else
            v = v * 10 - d;
    }
    if (range || (!neg && v == INT64_MIN))
        return -ERANGE;
    *out = neg ? v : -v;
    return 0;
}

/* ---- repeated names ------------------------------------------------------------------------ */

/* FNV-1a: short keys, no adversary to defend against (a reader's own input). The table costs
 * about 0.25 s and 17 MB per million names (measured: a 1e6-job trace loads in 0.5 s instead of
 * 0.25 s), mostly cache misses on its slots. */
static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

void eco_csv_names_init(struct eco_csv_names *s, const char *(*name)(const void *, uint32_t),
                        const void *ctx)
{
    *s = (struct eco_csv_names){.name = name, .ctx = ctx};
}

void eco_csv_names_fini(struct eco_csv_names *s)
{
    free(s->slot);
    s->slot = NULL;
    s->cap = s->n = 0;
}

static void names_put(struct eco_csv_name_slot *slot, size_t cap, struct eco_csv_name_slot v)
{
    size_t i = v.hash & (cap - 1);
    while (slot[i].idx)
        i = (i + 1) & (cap - 1);
    slot[i] = v;
}

/* Keeps the table at most half full (short probe runs), doubling from 1024 slots. */
static int names_grow(struct eco_csv_names *s)
{
    if (2 * (s->n + 1) <= s->cap)
        return 0;
    size_t cap = s->cap ? 2 * s->cap : 1024;
    struct eco_csv_name_slot *slot = calloc(cap, sizeof *slot);
    if (!slot)
        return -ENOMEM;
    for (size_t i = 0; i < s->cap; i++)
        if (s->slot[i].idx)
            names_put(slot, cap, s->slot[i]);
    free(s->slot);
    s->slot = slot;
    s->cap = cap;
    return 0;
}

int eco_csv_names_add(struct eco_csv_names *s, const char *name, uint32_t idx, uint32_t *first)
{
    if (names_grow(s))
        return -ENOMEM;
    uint32_t h = name_hash(name);
    size_t i = h & (s->cap - 1);
    for (; s->slot[i].idx; i = (i + 1) & (s->cap - 1))
        if (s->slot[i].hash == h && !strcmp(s->name(s->ctx, s->slot[i].idx - 1), name)) {
            *first = s->slot[i].idx - 1;
            return 1;
        }
    s->slot[i] = (struct eco_csv_name_slot){h, idx + 1};
    s->n++;
    return 0;
}
