/* SPDX-License-Identifier: Apache-2.0 */
/* Joining function headers split by preprocessor branches (cn_pp_split.h).
 * One pass over the bytes, no recursion: nested conditionals are a stack
 * of groups; what a group would blank is kept as spans until its #endif
 * says whether it is a split. */
#include "cn_pp_split.h"
#include "cn_c_skip.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { SPAN_DIRECTIVE, SPAN_TAIL };

typedef struct span {
    size_t start, end;
} span;

typedef struct group {
    long d0;            /* brace depth at the #if */
    long first_end;     /* depth at the end of the first branch */
    bool same;          /* every branch ended at first_end */
    unsigned branches;
    size_t tail;        /* current branch: where its unfinished part starts */
    size_t spans;       /* its first span */
} group;

typedef struct pp {
    const char *src;
    size_t len;
    char **copy;
    group *g;
    size_t ng, capg;
    span *s;
    size_t ns, caps;
    long depth;
} pp;

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return true;
    size_t n = *cap ? *cap : 16;
    while (n < need) {
        if (n > SIZE_MAX / 2 / elem) return false;
        n *= 2;
    }
    void *q = realloc(*p, n * elem);
    if (q == NULL) return false;
    *p = q;
    *cap = n;
    return true;
}

static bool add_span(pp *x, size_t start, size_t end)
{
    if (end <= start) return true;
    if (!grow((void **)&x->s, &x->caps, x->ns + 1, sizeof *x->s)) return false;
    x->s[x->ns++] = (span){start, end};
    return true;
}

static bool blank(pp *x, size_t start, size_t end)
{
    if (*x->copy == NULL) {
        char *c = malloc(x->len + 1);
        if (c == NULL) return false;
        memcpy(c, x->src, x->len);
        c[x->len] = '\0';
        *x->copy = c;
    }
    for (size_t i = start; i < end && i < x->len; i++)
        if ((*x->copy)[i] != '\n') (*x->copy)[i] = ' ';
    return true;
}

/* End of the directive line starting at i (its backslash continuations
 * and the comments it opens included), at its newline or the end. */
static size_t directive_end(const char *s, size_t len, size_t i)
{
    while (i < len && s[i] != '\n') {
        if (s[i] == '\\' && i + 1 < len && (s[i + 1] == '\n' || s[i + 1] == '\r')) {
            i += s[i + 1] == '\r' && i + 2 < len && s[i + 2] == '\n' ? 3 : 2;
        } else if (s[i] == '/' && i + 1 < len && s[i + 1] == '*') {
            const char *e = NULL;
            for (size_t k = i + 2; k + 1 < len; k++)
                if (s[k] == '*' && s[k + 1] == '/') {
                    e = s + k;
                    break;
                }
            i = e ? (size_t)(e - s) + 2 : len;
        } else {
            i++;
        }
    }
    return i;
}

static bool word_is(const char *w, size_t n, const char *lit)
{
    return strlen(lit) == n && memcmp(w, lit, n) == 0;
}

/* The directive from `start` (the line's first byte) to `end`. */
static bool directive(pp *x, size_t start, size_t end)
{
    const char *s = x->src;
    size_t i = start, w;
    while (i < end && (s[i] == ' ' || s[i] == '\t')) i++;
    i++; /* '#' */
    while (i < end && (s[i] == ' ' || s[i] == '\t')) i++;
    w = i;
    while (i < end && ((s[i] >= 'a' && s[i] <= 'z') || s[i] == '_')) i++;
    const char *word = s + w;
    size_t n = i - w;
    if (word_is(word, n, "if") || word_is(word, n, "ifdef") || word_is(word, n, "ifndef")) {
        if (!grow((void **)&x->g, &x->capg, x->ng + 1, sizeof *x->g)) return false;
        x->g[x->ng++] = (group){x->depth, 0, true, 0, end, x->ns};
        return add_span(x, start, end);
    }
    if (x->ng == 0) return true; /* an #else or #endif without its #if */
    group *g = &x->g[x->ng - 1];
    bool is_else = word_is(word, n, "else") || word_is(word, n, "elif") || word_is(word, n, "elifdef") ||
                   word_is(word, n, "elifndef");
    if (!is_else && !word_is(word, n, "endif")) {
        /* #define and the like: a complete item */
        if (x->depth == g->d0) g->tail = end;
        return true;
    }
    if (g->branches == 0) g->first_end = x->depth;
    else if (x->depth != g->first_end) g->same = false;
    g->branches++;
    if (is_else) {
        if (!add_span(x, g->tail, start) || !add_span(x, start, end)) return false;
        g->tail = end;
        x->depth = g->d0; /* each branch starts where the #if did */
        return true;
    }
    if (!add_span(x, start, end)) return false;
    if (g->branches >= 2 && g->same && g->first_end > g->d0)
        for (size_t k = g->spans; k < x->ns; k++)
            if (!blank(x, x->s[k].start, x->s[k].end)) return false;
    x->ns = g->spans;
    x->ng--;
    /* after the #endif, the depth of the last branch (the one kept) */
    if (x->ng > 0 && x->depth == x->g[x->ng - 1].d0) x->g[x->ng - 1].tail = end;
    return true;
}

bool cn_pp_join_split_headers(const char *src, size_t len, char **copy)
{
    pp x;
    bool ok = true, line_start = true;
    memset(&x, 0, sizeof x);
    x.src = src;
    x.len = len;
    x.copy = copy;
    /* nothing to do without a conditional: the common case costs a memchr */
    if (len == 0 || memchr(src, '#', len) == NULL) return true;
    for (size_t i = 0; i < len && ok;) {
        char c = src[i];
        size_t skip;
        if (line_start) {
            size_t k = i;
            while (k < len && (src[k] == ' ' || src[k] == '\t')) k++;
            if (k < len && src[k] == '#') {
                size_t e = directive_end(src, len, k);
                ok = directive(&x, i, e);
                i = e;
                continue;
            }
            line_start = false;
        }
        if (c == '\n') {
            line_start = true;
            i++;
        } else if ((skip = cn_c_skip_comment_or_string(src, len, i)) != i) {
            i = skip;
        } else {
            if (c == '{') {
                x.depth++;
            } else if (c == '}' || c == ';') {
                if (c == '}') x.depth--;
                if (x.ng > 0 && x.depth == x.g[x.ng - 1].d0) x.g[x.ng - 1].tail = i + 1;
            }
            i++;
        }
    }
    free(x.g);
    free(x.s);
    return ok;
}
