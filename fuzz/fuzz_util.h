/* SPDX-License-Identifier: MIT */
/* What the fuzz targets share: the input as a file for the parsers that read a path (an
 * in-memory file, /proc/self/fd/N of a memfd: nothing is written to disk), as a C string, and
 * a check that aborts, so that libFuzzer keeps the input that broke an invariant. */
#ifndef ECO_FUZZ_UTIL_H
#define ECO_FUZZ_UTIL_H

/* memfd_create (Linux); this header is included first, before any system header. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FUZZ_CHECK(cond)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* A path that reads as data[0..size): one memfd per process, rewritten for every input (the
 * parsers open it by name, plain or gzip, as they open a file). Borrowed; valid until the next
 * call. */
static inline const char *fuzz_file(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("eco_fuzz", MFD_CLOEXEC);
        FUZZ_CHECK(fd >= 0);
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    FUZZ_CHECK(ftruncate(fd, 0) == 0);
    for (size_t off = 0; off < size;) {
        ssize_t w = pwrite(fd, data + off, size - off, (off_t)off);
        FUZZ_CHECK(w > 0);
        off += (size_t)w;
    }
    return path;
}

/* data[0..size) as a NUL-terminated string (cut at the first NUL, as a C caller would see
 * it); the caller frees it. */
static inline char *fuzz_str(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    FUZZ_CHECK(s);
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* Splits the string s in place at its first n - 1 newlines into parts[0..n) (the last part
 * keeps any later newline; parts past the end are ""). */
static inline void fuzz_split(char *s, const char **parts, unsigned n)
{
    for (unsigned k = 0; k < n; k++) {
        parts[k] = s;
        if (k + 1 == n)
            break;
        char *nl = strchr(s, '\n');
        if (nl) {
            *nl = '\0';
            s = nl + 1;
        } else {
            s += strlen(s);
        }
    }
}

#endif
