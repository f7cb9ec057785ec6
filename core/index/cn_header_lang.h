/* SPDX-License-Identifier: Apache-2.0 */
/* Whether a `.h` header is C or C++.  The extension says C, but C++
 * projects name their headers `.h` too (fmt's core.h, format.h), and the C
 * grammar makes little of a namespace or a template.  The walk
 * (cn_walk.c) settles each `.h` when the C++ backend is there:
 *
 *   - a repository with C++ sources and no C source: C++;
 *   - one with C sources and no C++ source: C;
 *   - otherwise (both, or headers only): C++ when the header itself is
 *     written in C++ (cn_header_looks_cpp), else C.
 *
 * Only the whole listing and the header's own text decide, so a full and
 * an incremental compile (and `status`) choose alike. */
#ifndef CN_HEADER_LANG_H
#define CN_HEADER_LANG_H

#include <stdbool.h>
#include <stddef.h>

/* How much of a header is read to decide: C++ shows early (includes,
 * the namespace). */
#define CN_HEADER_SNIFF_BYTES (64u * 1024u)

/* Whether src[0, len) has C++ that no C header has, outside comments,
 * strings and the branches of `#ifdef __cplusplus` / `#if
 * defined(__cplusplus)` (where C headers keep their `extern "C"` guards
 * and C++ conveniences): a namespace, `template <`, `class X {` or
 * `class X :`, an access specifier (`public:`), a `::` between names,
 * `typename`, or an #include of a standard header without an extension
 * (<string>, <cstdio>). */
bool cn_header_looks_cpp(const char *src, size_t len);

#endif /* CN_HEADER_LANG_H */
