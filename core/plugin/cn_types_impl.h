/* SPDX-License-Identifier: Apache-2.0 */
/* Semi-private helpers shared by the cn_type*.c files (parser, coercion,
 * schema and compatibility); not for use elsewhere. */
#ifndef CN_TYPES_IMPL_H
#define CN_TYPES_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "cn_types.h"

/* Real hints are a few dozen bytes; the caps keep hostile ones cheap
 * (recursion depth, quadratic de-duplication of Literal values). */
#define TYPE_MAX_DEPTH 32
#define TYPE_MAX_HINT 16384
/* How much of a hint or a value an error message quotes. */
#define SHOW_HINT_MAX 80
#define SHOW_VALUE_MAX 80

static inline bool cn_type__is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static inline bool cn_type__is_ident_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static inline bool cn_type__is_ident_char(char c)
{
    return cn_type__is_ident_start(c) || (c >= '0' && c <= '9');
}

static inline bool cn_type__is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static inline bool cn_type__ascii_ieq(const char *a, size_t alen, const char *b)
{
    size_t blen = strlen(b);
    if (alen != blen) return false;
    for (size_t i = 0; i < alen; i++) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z') x = (char)(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = (char)(y - 'A' + 'a');
        if (x != y) return false;
    }
    return true;
}

cn_type *cn_type__new(cn_type_kind kind);
int cn_type__oom(const char *what);
void cn_type__show_text(const char *s, size_t len, size_t max, char *out);
void cn_type__put_quoted(cn_buf *b, const char *s);
void cn_type__write(cn_buf *b, const cn_type *t);
bool cn_type__equal(const cn_type *a, const cn_type *b);
int cn_type__enum_add(cn_type *t, const char *value);

#endif /* CN_TYPES_IMPL_H */
