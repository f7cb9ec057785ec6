/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by codenib's fuzz targets (tests/fuzz/fuzz_*.c).  Each target
 * defines LLVMFuzzerTestOneInput; it is linked either with libFuzzer
 * (`make fuzz-smoke`, clang) or with fuzz_replay.c, a main() that feeds it
 * the files of its seed corpus, which `make check` runs in every pass.
 * A target aborts (through FUZZ_CHECK) only when codenib broke a property
 * it promises: any other input is fine, however malformed. */
#ifndef CN_FUZZ_H
#define CN_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                                                     \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            fprintf(stderr, "%s:%d: property broken: %s: ", __FILE__, __LINE__, #cond);          \
            fprintf(stderr, __VA_ARGS__);                                                         \
            fputc('\n', stderr);                                                                  \
            abort();                                                                              \
        }                                                                                         \
    } while (0)

/* The input as a NUL-terminated string (malloc'd; inner NULs kept). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (s == NULL) return NULL;
    if (size) memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* Splits the input at its first NUL byte (or newline when `nl`): the head
 * and the rest as separate strings, for targets that take two inputs. */
static inline void fuzz_split(const uint8_t *data, size_t size, int sep, char **head, char **rest,
                              size_t *rest_len)
{
    const uint8_t *cut = memchr(data, sep, size);
    size_t h = cut ? (size_t)(cut - data) : size;
    *head = fuzz_cstr(data, h);
    *rest = cut ? fuzz_cstr(cut + 1, size - h - 1) : fuzz_cstr(data, 0);
    *rest_len = cut ? size - h - 1 : 0;
}

#endif /* CN_FUZZ_H */
