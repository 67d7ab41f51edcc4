/* SPDX-License-Identifier: MIT */
/* CSV helpers for the edges: an in-place line splitter (RFC 4180 quoting, one record per line)
 * and strict number parsers that reject empty fields, trailing garbage, NaN and infinity. */
#ifndef ECOSCHED_CSV_H
#define ECOSCHED_CSV_H

#include <stddef.h>
#include <stdint.h>
#include "ecosched/error.h"

/* Splits one CSV record in place. Trailing '\r' and '\n' are stripped first; fields are split
 * at commas; a field that starts with '"' is quoted: it runs to the next lone '"', may contain
 * commas, and "" inside it stands for one '"'. Each field is NUL-terminated inside `line` and
 * fields[i] points at it (borrowed: valid while `line` is). An empty line is one empty field.
 * At most `max` pointers are stored, but the return value is the total number of fields, so a
 * caller can tell a record with too many fields (return > max). Returns -EINVAL when a quoted
 * field is unterminated or is followed by something other than a comma. A quote inside an
 * unquoted field is kept as an ordinary character. Records spanning lines are not supported. */
int eco_csv_split(char *line, char **fields, int max);

/* Parses a whole string as a finite decimal number ("12", "-3.5", "1e6"). Rejects the empty
 * string, leading or trailing spaces or other characters, hexadecimal, NaN, infinity and
 * overflow. Returns 0 and sets *out, or -EINVAL (and leaves *out alone). */
int eco_parse_double(const char *s, double *out);

/* Parses a whole string as a decimal integer with an optional sign ("42", "-7"). Rejects the
 * empty string, spaces, a fraction or exponent, and values outside int64_t. Returns 0 and sets
 * *out, or -EINVAL (-ERANGE when out of range); *out is left alone on failure. */
int eco_parse_int64(const char *s, int64_t *out);

/* A line reader for CSV files, plain or gzip-compressed (read as they are), shared by every
 * CSV reader so that all of them treat odd bytes alike: a NUL byte inside a line is an error
 * naming file, line and column (fgets-style readers would silently cut the line there, merging
 * or splitting rows), and so is a line longer than the reader's limit. */
struct eco_csv_file;

/* The most text a reader reads by default, after decompression: 4 GiB, the traces' limit
 * (docs/formats/traces.md): a one-million-job trace is about 100 MB, and the largest public
 * GPU trace (Helios, 3.36 M jobs) fits many times over. A reader sets its own below it. */
#define ECO_CSV_MAX_BYTES (4ull << 30)

/* Opens `path` (borrowed: it must outlive the reader, it names the file in messages) with lines
 * of at most `max_line` bytes and at most ECO_CSV_MAX_BYTES of text. Only a regular file is
 * read: a FIFO, a device or a directory is refused at once (the open never waits for a
 * writer). Returns 0 and sets *out (free with eco_csv_close), -ENOENT (cannot open: err says
 * why), -EIO (not a regular file) or -ENOMEM. */
int eco_csv_open(const char *path, size_t max_line, struct eco_csv_file **out,
                 struct eco_error *err);
/* Sets the most text (bytes after decompression) f reads; `what` (static text, "a trace")
 * names what the limit is for in the error: eco_csv_next then fails with -EFBIG,
 * "PATH:LINE: more than 64 MiB of text (after decompression): the limit for WHAT". */
void eco_csv_set_max_bytes(struct eco_csv_file *f, uint64_t max_bytes, const char *what);
/* Writes n as "64 MiB", "4 GiB" (a whole number of the unit) or "N bytes" into buf. */
void eco_csv_format_bytes(uint64_t n, char *buf, size_t size);
/* Closes the file; NULL is accepted. */
void eco_csv_close(struct eco_csv_file *f);
/* Reads the next line without its line end (\n or \r\n). Returns 1 and sets *line (owned by
 * the reader, NUL-terminated, writable, valid until the next call) and *len; 0 at the end of
 * the file; -EINVAL (a NUL byte or an over-long line), -EIO (read error, e.g. a truncated gzip
 * stream), -EFBIG (more text than the reader's limit) or -ENOMEM, with err naming file and
 * line. A last line without a newline is a line. */
int eco_csv_next(struct eco_csv_file *f, char **line, size_t *len, struct eco_error *err);
/* The 1-based number of the line last returned (0 before the first). */
unsigned long eco_csv_lineno(const struct eco_csv_file *f);

/* Finds repeated names (job ids, node names) as a reader goes. The names stay in the caller's
 * storage: the set keeps the caller's index of each and reads the name back through `name`. */
struct eco_csv_names {
    struct eco_csv_name_slot *slot; /* open addressing; idx 0 is empty (indices are +1) */
    size_t cap, n;
    const char *(*name)(const void *ctx, uint32_t idx);
    const void *ctx;
};
struct eco_csv_name_slot {
    uint32_t hash, idx;
};
/* An empty set; nothing to free until the first add. */
void eco_csv_names_init(struct eco_csv_names *s, const char *(*name)(const void *, uint32_t),
                        const void *ctx);
void eco_csv_names_fini(struct eco_csv_names *s);
/* Adds `name` as index `idx` (below UINT32_MAX). Returns 0 (new), 1 (already there: *first is
 * the index it was added as; nothing is added) or -ENOMEM. */
int eco_csv_names_add(struct eco_csv_names *s, const char *name, uint32_t idx, uint32_t *first);

#endif
