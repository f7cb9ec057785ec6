/* SPDX-License-Identifier: Apache-2.0 */
/* Type hints: construction, copy, canonical text and equality, and the
 * helpers the parser, coercion and schema files share.  The contract is in
 * cn_types.h. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cn_types_impl.h"

/* ---- small helpers ------------------------------------------------------ */

cn_type *cn_type__new(cn_type_kind kind)
{
    cn_type *t = calloc(1, sizeof *t);
    if (t != NULL) t->kind = kind;
    return t;
}

int cn_type__oom(const char *what)
{
    return cn_error_set(CN_ENOMEM, "out of memory %s", what);
}


/* ASCII only: the C library's ctype answers depend on the locale. */




/* Copies at most `max` bytes of s into out (which holds max + 4), without
 * splitting a UTF-8 sequence, replacing control bytes so that a message
 * stays on one line, and marking a cut with "...". */
void cn_type__show_text(const char *s, size_t len, size_t max, char *out)
{
    size_t n = len, o = 0;
    bool cut = false;

    if (n > max) {
        n = max - 3;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
        cut = true;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        out[o++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
    }
    if (cut) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
}

/* Writes s as a Python single-quoted literal, escaped so that the parser
 * reads it back unchanged. */
void cn_type__put_quoted(cn_buf *b, const char *s)
{
    cn_buf_putc(b, '\'');
    for (; *s; s++) {
        switch (*s) {
        case '\\': cn_buf_puts(b, "\\\\"); break;
        case '\'': cn_buf_puts(b, "\\'"); break;
        case '\n': cn_buf_puts(b, "\\n"); break;
        case '\t': cn_buf_puts(b, "\\t"); break;
        case '\r': cn_buf_puts(b, "\\r"); break;
        default: cn_buf_putc(b, *s); break;
        }
    }
    cn_buf_putc(b, '\'');
}

/* ---- construction, copy, free, text -------------------------------------- */

void cn_type_free(cn_type *t)
{
    if (t == NULL) return;
    cn_type_free(t->elem);
    cn_type_free(t->key);
    free(t->name);
    cn_strv_free(&t->values);
    free(t);
}

cn_type *cn_type_copy(const cn_type *t)
{
    cn_type *c;

    if (t == NULL) return NULL;
    c = cn_type__new(t->kind);
    if (c == NULL) goto fail;
    if (t->elem != NULL && (c->elem = cn_type_copy(t->elem)) == NULL) goto fail;
    if (t->key != NULL && (c->key = cn_type_copy(t->key)) == NULL) goto fail;
    if (t->name != NULL && (c->name = cn_strdup(t->name)) == NULL) goto fail;
    for (size_t i = 0; i < t->values.len; i++)
        if (cn_strv_push(&c->values, t->values.items[i]) < 0) goto fail;
    return c;
fail:
    cn_type_free(c);
    cn_type__oom("copying a type");
    return NULL;
}

/* Adds each value once: a repeated Literal value says nothing new. */
int cn_type__enum_add(cn_type *t, const char *value)
{
    if (cn_strv_contains(&t->values, value)) return 0;
    return cn_strv_push(&t->values, value);
}

int cn_type_new_enum(const cn_strv *values, cn_type **out)
{
    cn_type *t;

    if (out == NULL) return cn_error_set(CN_EINVAL, "cn_type_new_enum: out is NULL");
    *out = NULL;
    if (values == NULL || values->len == 0)
        return cn_error_set(CN_EINVAL, "an enum needs at least one value");
    t = cn_type__new(CN_T_ENUM);
    if (t == NULL) return cn_type__oom("creating an enum type");
    for (size_t i = 0; i < values->len; i++) {
        if (values->items[i] == NULL) {
            cn_type_free(t);
            return cn_error_set(CN_EINVAL, "enum value %zu is NULL", i);
        }
        if (cn_type__enum_add(t, values->items[i]) < 0) {
            cn_type_free(t);
            return CN_ENOMEM;
        }
    }
    *out = t;
    return 0;
}

/* A NULL type (only in hand-built trees) reads as Any, a NULL dict key
 * as str. */
void cn_type__write(cn_buf *b, const cn_type *t)
{
    if (t == NULL) {
        cn_buf_puts(b, "Any");
        return;
    }
    switch (t->kind) {
    case CN_T_ANY: cn_buf_puts(b, "Any"); break;
    case CN_T_STR: cn_buf_puts(b, "str"); break;
    case CN_T_INT: cn_buf_puts(b, "int"); break;
    case CN_T_FLOAT: cn_buf_puts(b, "float"); break;
    case CN_T_BOOL: cn_buf_puts(b, "bool"); break;
    case CN_T_NONE: cn_buf_puts(b, "None"); break;
    case CN_T_LIST:
        cn_buf_puts(b, "List[");
        cn_type__write(b, t->elem);
        cn_buf_putc(b, ']');
        break;
    case CN_T_DICT:
        cn_buf_puts(b, "Dict[");
        if (t->key != NULL) cn_type__write(b, t->key);
        else cn_buf_puts(b, "str");
        cn_buf_puts(b, ", ");
        cn_type__write(b, t->elem);
        cn_buf_putc(b, ']');
        break;
    case CN_T_OPTIONAL:
        cn_buf_puts(b, "Optional[");
        cn_type__write(b, t->elem);
        cn_buf_putc(b, ']');
        break;
    case CN_T_ENUM:
        cn_buf_puts(b, "Literal[");
        for (size_t i = 0; i < t->values.len; i++) {
            if (i) cn_buf_puts(b, ", ");
            cn_type__put_quoted(b, t->values.items[i]);
        }
        cn_buf_putc(b, ']');
        break;
    case CN_T_NAMED:
        cn_buf_puts(b, t->name != NULL ? t->name : "?");
        break;
    default:
        cn_buf_puts(b, "?");
        break;
    }
}

char *cn_type_to_string(const cn_type *t)
{
    cn_buf b = CN_BUF_INIT;
    char *s;

    cn_type__write(&b, t);
    s = cn_buf_steal(&b);
    if (s == NULL) cn_type__oom("writing a type");
    return s;
}

bool cn_type__equal(const cn_type *a, const cn_type *b)
{
    if (a == b) return true;
    if (a == NULL || b == NULL || a->kind != b->kind) return false;
    switch (a->kind) {
    case CN_T_LIST:
    case CN_T_OPTIONAL:
        return cn_type__equal(a->elem, b->elem);
    case CN_T_DICT:
        return cn_type__equal(a->key, b->key) && cn_type__equal(a->elem, b->elem);
    case CN_T_NAMED:
        return a->name != NULL && b->name != NULL && strcmp(a->name, b->name) == 0;
    case CN_T_ENUM:
        if (a->values.len != b->values.len) return false;
        for (size_t i = 0; i < a->values.len; i++)
            if (strcmp(a->values.items[i], b->values.items[i]) != 0) return false;
        return true;
    default:
        return true;
    }
}

