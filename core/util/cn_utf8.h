/* SPDX-License-Identifier: Apache-2.0 */
/* UTF-8 checks and scrubbing for what codenib prints.  Repository bytes
 * (file names, file contents) are anything; what leaves codenib is valid
 * UTF-8 JSON, or text in which no control character reaches a terminal
 * raw.  Invalid sequences are replaced by U+FFFD, one per maximal
 * ill-formed subpart (as Unicode recommends), so a replacement never eats
 * a valid character that follows. */
#ifndef CN_UTF8_H
#define CN_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cn_util.h"

#define CN_UTF8_REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */

/* The well-formed sequence at s (n > 0 bytes available): its length (1-4)
 * with its code point in *cp, or 0 when it is ill-formed; then *bad is
 * the length of the maximal ill-formed subpart to replace (at least 1). */
size_t cn_utf8_decode(const char *s, size_t n, uint32_t *cp, size_t *bad);

/* Whether the code point is a control character: C0, DEL or C1. */
static inline bool cn_utf8_is_control(uint32_t cp)
{
    return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f);
}

/* Whether s is valid UTF-8 without a control character: the names codenib
 * indexes and prints (a newline could forge lines of the contract, an
 * ESC drive the reader's terminal). */
bool cn_utf8_is_plain_name(const char *s);

/* What cn_utf8_scrub() lets through besides printable characters. */
#define CN_UTF8_KEEP_LINES 1u  /* '\n' and '\t' (text meant for a terminal) */
#define CN_UTF8_KEEP_C0    2u  /* every C0 control and DEL (text a parser reads) */

/* Appends s[0..n) to b with ill-formed sequences and the control
 * characters not kept by `keep` replaced by U+FFFD (C1 controls are always
 * replaced: some terminals act on them).  0 or CN_ENOMEM. */
int cn_utf8_scrub(cn_buf *b, const char *s, size_t n, unsigned keep);

/* The same into a new string; NULL when out of memory. */
char *cn_utf8_scrub_dup(const char *s, size_t n, unsigned keep);

#endif /* CN_UTF8_H */
