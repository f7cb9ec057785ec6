/* SPDX-License-Identifier: Apache-2.0 */
/* Glob matching in time polynomial in the sizes of the pattern and the
 * path, whatever the pattern: the patterns come from a model or a client,
 * and a backtracking matcher is exponential in the number of '*' or '**'
 * (`**` repeated 28 times took 101 s).
 *
 * The syntax is fnmatch's without flags, byte by byte (the C locale):
 * '*' any run of bytes, '?' one byte, '[...]' a class ('!' or '^'
 * negates, ranges, [:alpha:] and the other POSIX names), '\' quotes the
 * next byte; plus, for paths, '**' as a whole segment for any number of
 * directories and {a,b} alternatives. */
#ifndef CN_GLOB_H
#define CN_GLOB_H

#include <stdbool.h>
#include <stddef.h>

/* Longest pattern cn_glob_match accepts; a longer one matches nothing. */
#define CN_GLOB_PATTERN_MAX 1024

/* One name (no '/' in either) against a pattern of pl bytes:
 * O(pl * nl) time, no allocation. */
bool cn_glob_segment(const char *pat, size_t pl, const char *name, size_t nl);

/* A '/'-separated path against a path pattern.  '**' as a whole segment
 * spans zero or more directories (a last "**" segment at least one
 * path segment); every other segment of the pattern matches one segment
 * of the path with cn_glob_segment.  The first 256 {a,b} alternatives are
 * tried.  O(segments of pattern * segments of path * segment match). */
bool cn_glob_match(const char *pattern, const char *path);

#endif /* CN_GLOB_H */
