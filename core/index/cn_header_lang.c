/* SPDX-License-Identifier: Apache-2.0 */
/* C or C++ for a `.h` header: the content test (see cn_header_lang.h). */
#include "cn_header_lang.h"
#include "../../plugins/common/cn_c_skip.h"

#include <string.h>

static bool ident_char(char c)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static size_t skip_blanks(const char *s, size_t len, size_t i)
{
    while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++;
    return i;
}

static bool has_word(const char *s, size_t len, const char *w)
{
    size_t wl = strlen(w);
    for (size_t i = 0; i + wl <= len; i++)
        if (memcmp(s + i, w, wl) == 0 && (i == 0 || !ident_char(s[i - 1])) &&
            (i + wl == len || !ident_char(s[i + wl])))
            return true;
    return false;
}

/* One level of #if nesting: whether its current branch is only for C++. */
enum { PLAIN = 0, CPP_FIRST, CPP_ELSE };

#define MAX_LEVELS 64

typedef struct sniff {
    unsigned char kind[MAX_LEVELS];
    bool cpp_branch[MAX_LEVELS];
    size_t depth; /* levels; deeper ones than MAX_LEVELS count, unrecorded */
} sniff;

static bool skipping(const sniff *x)
{
    size_t n = x->depth < MAX_LEVELS ? x->depth : MAX_LEVELS;
    for (size_t i = 0; i < n; i++)
        if (x->cpp_branch[i]) return true;
    return false;
}

/* The directive s[0, len) (from after the '#'); true when it is C++ (an
 * extensionless standard include outside the C++-only branches). */
static bool directive(sniff *x, const char *s, size_t len)
{
    size_t i = skip_blanks(s, len, 0), w = i;
    while (i < len && ident_char(s[i])) i++;
    size_t wl = i - w;
    const char *word = s + w, *rest = s + i;
    size_t rl = len - i;
#define IS(lit) (wl == sizeof lit - 1 && memcmp(word, lit, wl) == 0)
    if (IS("if") || IS("ifdef") || IS("ifndef")) {
        unsigned char k = PLAIN;
        if (has_word(rest, rl, "__cplusplus")) {
            bool negated = IS("ifndef") || (IS("if") && memchr(rest, '!', rl) != NULL);
            k = negated ? CPP_ELSE : CPP_FIRST;
        }
        if (x->depth < MAX_LEVELS) {
            x->kind[x->depth] = k;
            x->cpp_branch[x->depth] = k == CPP_FIRST;
        }
        x->depth++;
    } else if (IS("else") || IS("elif") || IS("elifdef") || IS("elifndef")) {
        if (x->depth > 0 && x->depth <= MAX_LEVELS) {
            size_t d = x->depth - 1;
            x->cpp_branch[d] = x->kind[d] == CPP_ELSE;
        }
    } else if (IS("endif")) {
        if (x->depth > 0) x->depth--;
    } else if (IS("include") && !skipping(x)) {
        size_t a = skip_blanks(rest, rl, 0);
        if (a < rl && rest[a] == '<') {
            size_t b = a + 1;
            while (b < rl && rest[b] != '>' && rest[b] != '\n') b++;
            /* C's standard headers all end in .h; C++'s have no extension */
            if (b < rl && rest[b] == '>' && b > a + 1 && memchr(rest + a + 1, '.', b - a - 1) == NULL &&
                memchr(rest + a + 1, '/', b - a - 1) == NULL)
                return true;
        }
    }
#undef IS
    return false;
}

/* The C++ word at s[i, e) followed by what comes after it. */
static bool cpp_word(const char *s, size_t len, size_t i, size_t e)
{
    size_t wl = e - i, k = skip_blanks(s, len, e);
    const char *w = s + i;
    char next = k < len ? s[k] : '\0';
#define IS(lit) (wl == sizeof lit - 1 && memcmp(w, lit, wl) == 0)
    if (IS("namespace")) return next == '{' || ident_char(next);
    if (IS("template")) return next == '<';
    if (IS("typename")) return ident_char(next);
    if (IS("public") || IS("private") || IS("protected"))
        return next == ':' && !(k + 1 < len && s[k + 1] == ':');
    if (IS("class") && ident_char(next)) {
        size_t m = k;
        while (m < len && ident_char(s[m])) m++;
        m = skip_blanks(s, len, m);
        if (m < len && (s[m] == '{' || s[m] == ':')) return true;
        return m + 5 <= len && memcmp(s + m, "final", 5) == 0;
    }
#undef IS
    /* name::name */
    return k == e && e + 2 < len && s[e] == ':' && s[e + 1] == ':' && (ident_char(s[e + 2]) || s[e + 2] == '~');
}

bool cn_header_looks_cpp(const char *src, size_t len)
{
    sniff x;
    bool line_start = true;
    memset(&x, 0, sizeof x);
    for (size_t i = 0; i < len;) {
        char c = src[i];
        size_t skip;
        if (line_start) {
            size_t k = i;
            while (k < len && (src[k] == ' ' || src[k] == '\t')) k++;
            if (k < len && src[k] == '#') {
                /* to the end of the line, through backslash continuations */
                size_t e = k + 1;
                while (e < len && src[e] != '\n') e += src[e] == '\\' && e + 1 < len ? 2 : 1;
                if (directive(&x, src + k + 1, (e < len ? e : len) - k - 1)) return true;
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
        } else if (ident_char(c) && !(c >= '0' && c <= '9')) {
            size_t e = i;
            while (e < len && ident_char(src[e])) e++;
            if (!skipping(&x) && cpp_word(src, len, i, e)) return true;
            i = e;
        } else {
            i++;
        }
    }
    return false;
}
