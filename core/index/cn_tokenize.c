/* SPDX-License-Identifier: Apache-2.0 */
/* Code-aware tokenizer (rules in cn_tokenize.h). */
#include "cn_tokenize.h"

#include <stdbool.h>

/* Byte classes.  SEP is '_' inside a word; OTHER is any byte >= 0x80.
 * A table rather than <ctype.h>: the result must not depend on the locale,
 * or two machines would index the same text differently. */
enum { C_NONE, C_SEP, C_UPPER, C_LOWER, C_DIGIT, C_OTHER };

#define N C_NONE
#define S C_SEP
#define U C_UPPER
#define L C_LOWER
#define D C_DIGIT
#define O C_OTHER
static const unsigned char byte_classes[256] = {
    N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
    N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
    N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
    D, D, D, D, D, D, D, D, D, D, N, N, N, N, N, N,
    N, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U,
    U, U, U, U, U, U, U, U, U, U, U, N, N, N, N, S,
    N, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L,
    L, L, L, L, L, L, L, L, L, L, L, N, N, N, N, N,
    O, O, O, O, O, O, O, O, O, O, O, O, O, O, O, O,
    O, O, O, O, O, O, O, O, O, O, O, O, O, O, O, O,
    O, O, O, O, O, O, O, O, O, O, O, O, O, O, O, O,
    O, O, O, O, O, O, O, O, O, O, O, O, O, O, O, O,
    O, O, O, O, O, O, O, O, O, O, O, O, O, O, O, O,
    O, O, O, O, O, O, O, O, O, O, O, O, O, O, O, O,
    O, O, O, O, O, O, O, O, O, O, O, O, O, O, O, O,
    O, O, O, O, O, O, O, O, O, O, O, O, O, O, O, O,
};
#undef N
#undef S
#undef U
#undef L
#undef D
#undef O

static inline int byte_class(unsigned char c) { return byte_classes[c]; }

/* ASCII-lowercases p[0, n) into out. */
static inline void lower_into(char *out, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = p[i];
        out[i] = (char)(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
    }
}

/* Lowercases p[0, n) into a stack buffer (truncated to CN_TOKEN_MAX) and
 * calls fn. */
static int emit(const unsigned char *p, size_t n, cn_token_fn fn, void *data)
{
    char buf[CN_TOKEN_MAX];

    if (n == 0) return 0;
    if (n > CN_TOKEN_MAX) {
        /* p[n] is the first byte cut off: if it continues a UTF-8 sequence,
         * cutting there would leave half a character; back off to the start
         * of that sequence (at most 3 bytes for valid UTF-8; for garbage we
         * keep the hard cut rather than shrink arbitrarily). */
        size_t cut = CN_TOKEN_MAX, back = 0;
        while (back < 3 && cut > 0 && (p[cut] & 0xC0) == 0x80) {
            cut--;
            back++;
        }
        if ((p[cut] & 0xC0) == 0x80) cut = CN_TOKEN_MAX;
        n = cut;
    }
    lower_into(buf, p, n);
    return fn(buf, n, data);
}

/* True when a new part starts at w[i] (w[i-1] and w[i] both non-SEP). */
static inline bool part_boundary(const unsigned char *w, size_t n, size_t i)
{
    int prev = byte_class(w[i - 1]), cur = byte_class(w[i]);

    if ((prev == C_DIGIT) != (cur == C_DIGIT)) return true;          /* v|2, utf|8 */
    if (cur != C_UPPER) return false;
    if (prev == C_LOWER || prev == C_OTHER) return true;              /* foo|Bar */
    /* Inside a capital run, the last capital before a lowercase letter
     * starts the next word: HTTP|Server. */
    return prev == C_UPPER && i + 1 < n && byte_class(w[i + 1]) == C_LOWER;
}

/* Walks the parts of word w[0, n).  With fn == NULL only counts them and
 * reports the first one's extent; otherwise emits each: as slices of
 * `low`, w already lowercased, when given (then n <= CN_TOKEN_MAX). */
static int walk_parts(const unsigned char *w, size_t n, const char *low, cn_token_fn fn, void *data,
                      size_t *count, size_t *first_start, size_t *first_len)
{
    size_t start = 0, i = 0;
    bool open = false;

    *count = 0;
    for (i = 0; i <= n; i++) {
        bool end_here = i == n || byte_class(w[i]) == C_SEP ||
                        (open && part_boundary(w, n, i));
        if (open && end_here) {
            if (*count == 0) {
                *first_start = start;
                *first_len = i - start;
            }
            (*count)++;
            if (fn != NULL) {
                int rc = low ? fn(low + start, i - start, data) : emit(w + start, i - start, fn, data);
                if (rc != 0) return rc;
            }
            open = false;
        }
        if (i < n && byte_class(w[i]) != C_SEP && !open) {
            open = true;
            start = i;
        }
    }
    return 0;
}

/* A word, then its parts.  A word of at most CN_TOKEN_MAX bytes is
 * lowercased once, its parts being slices of that. */
static int word(const unsigned char *w, size_t n, cn_token_fn fn, void *data)
{
    char low[CN_TOKEN_MAX];
    const char *lw = NULL;
    size_t count, fs = 0, fl = 0;
    int rc;

    if (n <= CN_TOKEN_MAX) {
        /* lowercase letters after a first letter of either case (most words
         * of code: keywords, names, Exception): no boundary, one part, the
         * word itself */
        bool one_part = byte_class(w[0]) == C_LOWER || byte_class(w[0]) == C_UPPER;
        for (size_t i = 1; i < n && one_part; i++) one_part = byte_class(w[i]) == C_LOWER;
        lower_into(low, w, n);
        lw = low;
        rc = fn(low, n, data);
        if (rc != 0 || one_part) return rc;
    } else {
        rc = emit(w, n, fn, data);
    }
    if (rc != 0) return rc;
    walk_parts(w, n, NULL, NULL, NULL, &count, &fs, &fl);
    /* One part spanning the whole word would only repeat it. */
    if (count == 0 || (count == 1 && fs == 0 && fl == n)) return 0;
    return walk_parts(w, n, lw, fn, data, &count, &fs, &fl);
}

int cn_tokenize(const char *text, size_t len, cn_token_fn fn, void *data)
{
    const unsigned char *t = (const unsigned char *)text;
    size_t i = 0;

    if (text == NULL) return 0;
    while (i < len) {
        size_t start;
        int rc;

        while (i < len && byte_class(t[i]) == C_NONE) i++;
        if (i == len) break;
        start = i;
        while (i < len && byte_class(t[i]) != C_NONE) i++;
        rc = word(t + start, i - start, fn, data);
        if (rc != 0) return rc;
    }
    return 0;
}
