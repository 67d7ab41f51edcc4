/* SPDX-License-Identifier: MIT */
/* CSV helpers for the edges: an in-place line splitter (RFC 4180 quoting, one record per line)
 * and strict number parsers that reject empty fields, trailing garbage, NaN and infinity. */
#ifndef ECOSCHED_CSV_H
#define ECOSCHED_CSV_H

#include <stddef.h>
#include <stdint.h>

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

#endif
