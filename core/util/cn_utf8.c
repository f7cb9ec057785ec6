/* SPDX-License-Identifier: Apache-2.0 */
/* UTF-8 checks and scrubbing (see cn_utf8.h). */
#include "cn_utf8.h"

#include <stdlib.h>
#include <string.h>

size_t cn_utf8_decode(const char *s, size_t n, uint32_t *cp, size_t *bad)
{
    const unsigned char *u = (const unsigned char *)s;
    unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range (Unicode table 3-7) */
    size_t len;
    uint32_t c;

    *bad = 1;
    if (u[0] < 0x80) {
        *cp = u[0];
        return 1;
    }
    if (u[0] >= 0xc2 && u[0] <= 0xdf) {
        len = 2;
        c = u[0] & 0x1f;
    } else if (u[0] >= 0xe0 && u[0] <= 0xef) {
        len = 3;
        c = u[0] & 0x0f;
        if (u[0] == 0xe0) lo = 0xa0;      /* no overlong forms */
        else if (u[0] == 0xed) hi = 0x9f; /* no surrogates */
    } else if (u[0] >= 0xf0 && u[0] <= 0xf4) {
        len = 4;
        c = u[0] & 0x07;
        if (u[0] == 0xf0) lo = 0x90;
        else if (u[0] == 0xf4) hi = 0x8f; /* nothing past U+10FFFF */
    } else {
        return 0;                         /* a stray continuation, C0, C1, F5-FF */
    }
    for (size_t i = 1; i < len; i++) {
        if (i >= n || u[i] < lo || u[i] > hi) {
            *bad = i;
            return 0;
        }
        c = (c << 6) | (u[i] & 0x3f);
        lo = 0x80;
        hi = 0xbf;
    }
    *cp = c;
    return len;
}

bool cn_utf8_is_plain_name(const char *s)
{
    size_t n = strlen(s), bad;
    uint32_t cp;
    for (size_t i = 0; i < n;) {
        size_t k = cn_utf8_decode(s + i, n - i, &cp, &bad);
        if (k == 0 || cn_utf8_is_control(cp)) return false;
        i += k;
    }
    return true;
}

static bool kept(uint32_t cp, unsigned keep)
{
    if (!cn_utf8_is_control(cp)) return true;
    if (cp >= 0x80) return false;
    if (keep & CN_UTF8_KEEP_C0) return true;
    return (keep & CN_UTF8_KEEP_LINES) && (cp == '\n' || cp == '\t');
}

int cn_utf8_scrub(cn_buf *b, const char *s, size_t n, unsigned keep)
{
    size_t run = 0, i = 0, bad;
    uint32_t cp;
    /* runs of characters kept are copied at once: the usual text is all
     * valid and costs one pass and one copy */
    while (i < n) {
        size_t k = cn_utf8_decode(s + i, n - i, &cp, &bad);
        if (k > 0 && kept(cp, keep)) {
            i += k;
            continue;
        }
        if (cn_buf_append(b, s + run, i - run) < 0 || cn_buf_puts(b, CN_UTF8_REPLACEMENT) < 0)
            return CN_ENOMEM;
        i += k > 0 ? k : bad;
        run = i;
    }
    if (cn_buf_append(b, s + run, n - run) < 0) return CN_ENOMEM;
    return 0;
}

char *cn_utf8_scrub_dup(const char *s, size_t n, unsigned keep)
{
    cn_buf b = CN_BUF_INIT;
    if (cn_utf8_scrub(&b, s, n, keep) < 0) {
        cn_buf_free(&b);
        return NULL;
    }
    return cn_buf_steal(&b);
}
