/* SPDX-License-Identifier: Apache-2.0 */
/* Polynomial glob matching (see cn_glob.h). */
#include "cn_glob.h"

#include <ctype.h>
#include <stdint.h>
#include <string.h>

/* Bound on the {a,b} alternatives tried for one match. */
#define MAX_EXPANSIONS 256
/* A pattern of CN_GLOB_PATTERN_MAX bytes has at most this many segments. */
#define MAX_SEGMENTS (CN_GLOB_PATTERN_MAX / 2 + 2)

/* ---- one segment ----------------------------------------------------------- */

static bool named_class(const char *name, size_t n, unsigned char c)
{
    static const struct { const char *name; int (*is)(int); } classes[] = {
        {"alnum", isalnum}, {"alpha", isalpha}, {"blank", isblank}, {"cntrl", iscntrl},
        {"digit", isdigit}, {"graph", isgraph}, {"lower", islower}, {"print", isprint},
        {"punct", ispunct}, {"space", isspace}, {"upper", isupper}, {"xdigit", isxdigit},
    };
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
        if (strlen(classes[i].name) == n && memcmp(classes[i].name, name, n) == 0)
            return classes[i].is(c) != 0;
    return false;   /* an unknown class holds nothing */
}

/* The bracket expression at p[0] == '[' (pl bytes left) against byte c.
 * Returns its length, with *hit; 0 when it is not closed ('[' is then an
 * ordinary byte, as fnmatch has it). */
static size_t bracket(const char *p, size_t pl, unsigned char c, bool *hit)
{
    size_t i = 1;
    bool neg = false, in = false;

    if (i < pl && (p[i] == '!' || p[i] == '^')) {
        neg = true;
        i++;
    }
    for (bool first = true;; first = false) {
        unsigned char lo;
        if (i >= pl) return 0;
        if (p[i] == ']' && !first) break;
        if (p[i] == '[' && i + 1 < pl && p[i + 1] == ':') {
            /* [:name:] */
            size_t j = i + 2;
            while (j + 1 < pl && !(p[j] == ':' && p[j + 1] == ']')) j++;
            if (j + 1 >= pl) return 0;
            if (named_class(p + i + 2, j - (i + 2), c)) in = true;
            i = j + 2;
            continue;
        }
        if (p[i] == '\\') {
            if (++i >= pl) return 0;
        }
        lo = (unsigned char)p[i++];
        if (i + 1 < pl && p[i] == '-' && p[i + 1] != ']') {
            unsigned char hi;
            i++;
            if (p[i] == '\\' && ++i >= pl) return 0;
            hi = (unsigned char)p[i++];
            if (lo <= c && c <= hi) in = true;
        } else if (lo == c) {
            in = true;
        }
    }
    *hit = in != neg;
    return i + 1;
}

/* Whether the pattern item at p[0] (not '*') matches byte c; *adv: its
 * length.  A trailing '\' matches nothing (as fnmatch has it). */
static bool one_byte(const char *p, size_t pl, unsigned char c, size_t *adv)
{
    bool hit = false;
    size_t n;
    *adv = 1;
    switch (p[0]) {
    case '?':
        return true;
    case '\\':
        if (pl < 2) return false;
        *adv = 2;
        return (unsigned char)p[1] == c;
    case '[':
        if ((n = bracket(p, pl, c, &hit)) > 0) {
            *adv = n;
            return hit;
        }
        return c == '[';
    default:
        return (unsigned char)p[0] == c;
    }
}

/* With only '*' spanning more than one byte, backtracking to the last '*'
 * seen is enough: a later '*' can absorb whatever an earlier one would
 * have.  So each byte of the name is tried against at most every item of
 * the pattern once per restart: O(pl * nl). */
bool cn_glob_segment(const char *pat, size_t pl, const char *name, size_t nl)
{
    size_t pi = 0, si = 0, star_p = SIZE_MAX, star_s = 0;

    while (si < nl) {
        size_t adv;
        if (pi < pl && pat[pi] == '*') {
            while (pi < pl && pat[pi] == '*') pi++;
            star_p = pi;
            star_s = si;
            continue;
        }
        if (pi < pl && one_byte(pat + pi, pl - pi, (unsigned char)name[si], &adv)) {
            pi += adv;
            si++;
            continue;
        }
        if (star_p == SIZE_MAX) return false;
        pi = star_p;
        si = ++star_s;
    }
    while (pi < pl && pat[pi] == '*') pi++;
    return pi == pl;
}

/* ---- paths ----------------------------------------------------------------- */

typedef struct segment {
    const char *s;
    size_t n;
    bool any_dirs;    /* "**" */
} segment;

/* Adds the states reachable without consuming a path segment: a '**'
 * that is not the last segment may span no directory at all. */
static void closure(bool *st, const segment *ps, size_t k)
{
    for (size_t i = 0; i + 1 < k; i++)
        if (st[i] && ps[i].any_dirs) st[i + 1] = true;
}

/* A pattern without braces against a path: a set of positions in the
 * pattern is carried along the path's segments (an NFA), so each pair of
 * a pattern segment and a path segment is matched at most once. */
static bool match_plain(const char *pat, const char *path)
{
    segment ps[MAX_SEGMENTS];
    bool cur[MAX_SEGMENTS + 1], nxt[MAX_SEGMENTS + 1];
    size_t k = 0;

    if (*path == '\0') return false;
    for (const char *p = pat;;) {
        size_t n = strcspn(p, "/");
        if (k == MAX_SEGMENTS) return false;
        ps[k].s = p;
        ps[k].n = n;
        ps[k].any_dirs = n == 2 && p[0] == '*' && p[1] == '*';
        k++;
        if (p[n] == '\0') break;
        p += n + 1;
    }
    /* a last "**" followed by a lone '/' reads as a last "**" */
    if (k > 1 && ps[k - 1].n == 0 && ps[k - 2].any_dirs) k--;
    memset(cur, 0, (k + 1) * sizeof *cur);
    cur[0] = true;
    closure(cur, ps, k);
    for (const char *s = path;;) {
        size_t n = strcspn(s, "/");
        bool any = false;
        memset(nxt, 0, (k + 1) * sizeof *nxt);
        for (size_t i = 0; i < k; i++) {
            if (!cur[i]) continue;
            if (ps[i].any_dirs) {
                /* stays, and a last '**' is done once it took a segment */
                nxt[i] = true;
                if (i + 1 == k) nxt[k] = true;
            } else if (n > 0 && cn_glob_segment(ps[i].s, ps[i].n, s, n)) {
                nxt[i + 1] = true;
            }
        }
        closure(nxt, ps, k);
        for (size_t i = 0; i <= k; i++) {
            cur[i] = nxt[i];
            any = any || nxt[i];
        }
        if (!any) return false;
        if (s[n] == '\0') break;
        s += n + 1;
    }
    return cur[k];
}

/* Expands the first {a,b,...} group and matches each alternative. */
static bool match_braces(const char *pat, const char *path, int *budget)
{
    const char *open = NULL, *close = NULL;
    int depth = 0;

    if (--*budget < 0) return false;
    for (const char *s = pat; *s; s++) {
        if (*s == '\\' && s[1]) {
            s++;
        } else if (*s == '{') {
            if (depth++ == 0) open = s;
        } else if (*s == '}' && depth > 0) {
            if (--depth == 0) {
                close = s;
                break;
            }
        }
    }
    if (open == NULL || close == NULL) return match_plain(pat, path);
    {
        size_t pre = (size_t)(open - pat), post = strlen(close + 1);
        const char *alt = open + 1;
        depth = 0;
        for (const char *s = open + 1; s <= close; s++) {
            if (*s == '\\' && s[1]) {
                s++;
                continue;
            }
            if (*s == '{') depth++;
            if (*s == '}' && depth > 0 && s != close) depth--;
            if ((*s == ',' && depth == 0) || s == close) {
                size_t al = (size_t)(s - alt);
                char buf[CN_GLOB_PATTERN_MAX + 1];
                if (pre + al + post > CN_GLOB_PATTERN_MAX) return false;
                memcpy(buf, pat, pre);
                memcpy(buf + pre, alt, al);
                memcpy(buf + pre + al, close + 1, post + 1);
                if (match_braces(buf, path, budget)) return true;
                alt = s + 1;
            }
        }
    }
    return false;
}

bool cn_glob_match(const char *pattern, const char *path)
{
    int budget = MAX_EXPANSIONS;
    if (strlen(pattern) > CN_GLOB_PATTERN_MAX) return false;
    return match_braces(pattern, path, &budget);
}
