/* SPDX-License-Identifier: Apache-2.0 */
/* Type hints: the parser ("List[Dict[str, int]]" -> cn_type). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cn_types_impl.h"

/* ---- parser ------------------------------------------------------------- */

typedef struct parser {
    const char *s;   /* the whole hint */
    size_t len;
    size_t pos;
    int depth;       /* open '[' */
} parser;

static int perr(parser *p, size_t at, const char *fmt, ...) CN_PRINTF(3, 4);

static int perr(parser *p, size_t at, const char *fmt, ...)
{
    char what[256];
    char shown[SHOW_HINT_MAX + 4];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    cn_type__show_text(p->s, p->len, SHOW_HINT_MAX, shown);
    return cn_error_set(CN_EPARSE, "type hint '%s': %s at column %zu", shown, what, at + 1);
}

static void skip_ws(parser *p)
{
    while (p->pos < p->len && cn_type__is_space(p->s[p->pos])) p->pos++;
}

static bool at_char(parser *p, char c)
{
    return p->pos < p->len && p->s[p->pos] == c;
}

static bool at_ellipsis(parser *p)
{
    return p->len - p->pos >= 3 && memcmp(p->s + p->pos, "...", 3) == 0;
}

/* How a known name is read. */
typedef enum form {
    F_SCALAR,    /* no arguments: kind below */
    F_LIST,      /* [T] or bare (List[Any]) */
    F_TUPLE,     /* [T, ...], [A, B, ...] or bare */
    F_DICT,      /* [K, V] or bare (Dict[str, Any]) */
    F_OPTIONAL,  /* [T] */
    F_UNION,     /* [A, B, ...] */
    F_LITERAL    /* ['a', "b", 3, True, None] */
} form;

static const struct known_name {
    const char *name;
    form form;
    cn_type_kind kind;
} known_names[] = {
    {"str", F_SCALAR, CN_T_STR},
    {"int", F_SCALAR, CN_T_INT},
    {"float", F_SCALAR, CN_T_FLOAT},
    {"bool", F_SCALAR, CN_T_BOOL},
    {"None", F_SCALAR, CN_T_NONE},
    {"NoneType", F_SCALAR, CN_T_NONE},
    {"Any", F_SCALAR, CN_T_ANY},
    {"object", F_SCALAR, CN_T_ANY},
    {"List", F_LIST, CN_T_LIST},
    {"list", F_LIST, CN_T_LIST},
    {"Sequence", F_LIST, CN_T_LIST},
    {"Iterable", F_LIST, CN_T_LIST},
    {"Set", F_LIST, CN_T_LIST},
    {"set", F_LIST, CN_T_LIST},
    {"FrozenSet", F_LIST, CN_T_LIST},
    {"frozenset", F_LIST, CN_T_LIST},
    {"Tuple", F_TUPLE, CN_T_LIST},
    {"tuple", F_TUPLE, CN_T_LIST},
    {"Dict", F_DICT, CN_T_DICT},
    {"dict", F_DICT, CN_T_DICT},
    {"Mapping", F_DICT, CN_T_DICT},
    {"Optional", F_OPTIONAL, CN_T_OPTIONAL},
    {"Union", F_UNION, CN_T_ANY},
    {"Literal", F_LITERAL, CN_T_ENUM},
};

static const struct known_name *lookup_name(const char *name, size_t n)
{
    for (size_t i = 0; i < sizeof known_names / sizeof known_names[0]; i++)
        if (strlen(known_names[i].name) == n && memcmp(known_names[i].name, name, n) == 0)
            return &known_names[i];
    return NULL;
}

/* A growable array of parsed arguments, freed as a whole on error. */
typedef struct type_vec {
    cn_type **items;
    size_t len;
    size_t cap;
} type_vec;

static int tv_push(type_vec *v, cn_type *t)
{
    if (v->len == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 4;
        cn_type **n = realloc(v->items, cap * sizeof *n);
        if (n == NULL) {
            cn_type_free(t);
            return cn_type__oom("parsing a type hint");
        }
        v->items = n;
        v->cap = cap;
    }
    v->items[v->len++] = t;
    return 0;
}

static void tv_free(type_vec *v)
{
    for (size_t i = 0; i < v->len; i++) cn_type_free(v->items[i]);
    free(v->items);
    v->items = NULL;
    v->len = v->cap = 0;
}

static cn_type *wrap(cn_type_kind kind, cn_type *elem)
{
    cn_type *t = cn_type__new(kind);
    if (t == NULL) {
        cn_type_free(elem);
        return NULL;
    }
    t->elem = elem;
    return t;
}

/* Folds the members of a union (Union[...], A | B, Optional[T], the
 * elements of a fixed Tuple) into one type.  None members and Optional
 * members make the result Optional; Any absorbs everything; Literals merge;
 * equal members collapse; two or more different members give Any, because
 * the model of a parameter has no sum type.  Reads, does not take, members. */
static int fold_union(cn_type *const *members, size_t n, bool with_none, cn_type **out)
{
    bool has_none = with_none, any = false, all_enum = true;
    const cn_type *first = NULL;
    bool all_equal = true;
    size_t real = 0;
    cn_type *r = NULL;

    *out = NULL;
    for (size_t i = 0; i < n; i++) {
        const cn_type *m = members[i];
        if (m->kind == CN_T_NONE) {
            has_none = true;
            continue;
        }
        if (m->kind == CN_T_OPTIONAL) {
            has_none = true;
            m = m->elem;
        }
        if (m == NULL || m->kind == CN_T_ANY) {
            any = true;
            continue;
        }
        real++;
        if (m->kind != CN_T_ENUM) all_enum = false;
        if (first == NULL) first = m;
        else if (!cn_type__equal(first, m)) all_equal = false;
    }

    if (any) {
        r = cn_type__new(CN_T_ANY);
    } else if (real == 0) {
        r = cn_type__new(CN_T_NONE);
    } else if (all_equal) {
        r = cn_type_copy(first);
    } else if (all_enum) {
        r = cn_type__new(CN_T_ENUM);
        for (size_t i = 0; r != NULL && i < n; i++) {
            const cn_type *m = members[i];
            if (m->kind == CN_T_OPTIONAL) m = m->elem;
            if (m->kind != CN_T_ENUM) continue;
            for (size_t j = 0; j < m->values.len; j++) {
                if (cn_type__enum_add(r, m->values.items[j]) < 0) {
                    cn_type_free(r);
                    r = NULL;
                    break;
                }
            }
        }
    } else {
        r = cn_type__new(CN_T_ANY);
    }
    if (r == NULL) return cn_type__oom("parsing a type hint");
    if (has_none && r->kind != CN_T_ANY && r->kind != CN_T_NONE) {
        r = wrap(CN_T_OPTIONAL, r);
        if (r == NULL) return cn_type__oom("parsing a type hint");
    }
    *out = r;
    return 0;
}

static int parse_union(parser *p, cn_type **out);

/* Enters a '[' at p->pos, enforcing the depth cap. */
static int open_bracket(parser *p)
{
    if (p->depth >= TYPE_MAX_DEPTH)
        return perr(p, p->pos, "nested deeper than %d levels", TYPE_MAX_DEPTH);
    p->depth++;
    p->pos++;
    return 0;
}

/* Reads "[T, ...]" after a generic.  `max` 0 means any number;
 * `ellipsis` accepts "..." as the second argument (Tuple[T, ...]). */
static int parse_args(parser *p, size_t min, size_t max, bool ellipsis_ok, type_vec *args,
                      bool *ellipsis)
{
    int rc = open_bracket(p);
    if (rc < 0) return rc;
    *ellipsis = false;
    for (;;) {
        skip_ws(p);
        if (ellipsis_ok && args->len == 1 && at_ellipsis(p)) {
            p->pos += 3;
            *ellipsis = true;
        } else {
            cn_type *t;
            rc = parse_union(p, &t);
            if (rc < 0) return rc;
            rc = tv_push(args, t);
            if (rc < 0) return rc;
        }
        skip_ws(p);
        if (at_char(p, ']') && args->len >= min) {
            p->pos++;
            p->depth--;
            return 0;
        }
        if (at_char(p, ',') && !*ellipsis && (max == 0 || args->len < max)) {
            p->pos++;
            continue;
        }
        if (*ellipsis || (max != 0 && args->len >= max)) return perr(p, p->pos, "expected ']'");
        if (args->len < min) return perr(p, p->pos, "expected ','");
        return perr(p, p->pos, "expected ',' or ']'");
    }
}

/* Reads one quoted Literal value at p->pos into b. */
static int parse_quoted(parser *p, cn_buf *b)
{
    char q = p->s[p->pos];
    size_t start = p->pos++;

    while (p->pos < p->len && p->s[p->pos] != q) {
        char c = p->s[p->pos++];
        if (c == '\\' && p->pos < p->len) {
            char e = p->s[p->pos++];
            switch (e) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case '\\': case '\'': case '"': c = e; break;
            default:
                /* Python keeps unknown escapes as written. */
                cn_buf_putc(b, '\\');
                c = e;
                break;
            }
        }
        cn_buf_putc(b, c);
    }
    if (p->pos >= p->len) return perr(p, start, "unterminated string");
    p->pos++;
    if (b->oom) return CN_ENOMEM;
    return 0;
}

/* Reads a number as written: [+-]digits[.digits][e[+-]digits]. */
static bool scan_literal_number(parser *p)
{
    size_t i = p->pos, d = 0;
    if (i < p->len && (p->s[i] == '-' || p->s[i] == '+')) i++;
    while (i < p->len && cn_type__is_digit(p->s[i])) i++, d++;
    if (d == 0) return false;
    if (i + 1 < p->len && p->s[i] == '.' && cn_type__is_digit(p->s[i + 1])) {
        i++;
        while (i < p->len && cn_type__is_digit(p->s[i])) i++;
    }
    if (i < p->len && (p->s[i] == 'e' || p->s[i] == 'E')) {
        size_t j = i + 1;
        if (j < p->len && (p->s[j] == '-' || p->s[j] == '+')) j++;
        if (j < p->len && cn_type__is_digit(p->s[j])) {
            while (j < p->len && cn_type__is_digit(p->s[j])) j++;
            i = j;
        }
    }
    p->pos = i;
    return true;
}

/* Literal['a', "b", 3, True, None]: values kept as strings (True/False as
 * "true"/"false", the text JSON booleans coerce to); None makes the result
 * Optional. */
static int parse_literal(parser *p, cn_type **out)
{
    cn_type *t = cn_type__new(CN_T_ENUM);
    bool has_none = false;
    int rc;

    if (t == NULL) return cn_type__oom("parsing a type hint");
    rc = open_bracket(p);
    if (rc < 0) goto fail;
    for (;;) {
        cn_buf b = CN_BUF_INIT;
        size_t start;
        char c;

        skip_ws(p);
        start = p->pos;
        c = p->pos < p->len ? p->s[p->pos] : '\0';
        if (c == '\'' || c == '"') {
            rc = parse_quoted(p, &b);
            if (rc == 0 && b.data == NULL) cn_buf_puts(&b, "");
        } else if (scan_literal_number(p)) {
            rc = cn_buf_append(&b, p->s + start, p->pos - start);
        } else if (cn_type__is_ident_start(c)) {
            while (p->pos < p->len && cn_type__is_ident_char(p->s[p->pos])) p->pos++;
            if (p->pos - start == 4 && memcmp(p->s + start, "True", 4) == 0) {
                rc = cn_buf_puts(&b, "true");
            } else if (p->pos - start == 5 && memcmp(p->s + start, "False", 5) == 0) {
                rc = cn_buf_puts(&b, "false");
            } else if (p->pos - start == 4 && memcmp(p->s + start, "None", 4) == 0) {
                has_none = true;
            } else {
                rc = perr(p, start, "expected a literal value");
            }
        } else {
            rc = perr(p, start, "expected a literal value");
        }
        if (rc == 0 && b.oom) rc = CN_ENOMEM;
        if (rc == 0 && b.data != NULL) rc = cn_type__enum_add(t, b.data);
        cn_buf_free(&b);
        if (rc < 0) goto fail;

        skip_ws(p);
        if (at_char(p, ',')) {
            p->pos++;
            continue;
        }
        if (at_char(p, ']')) {
            p->pos++;
            p->depth--;
            break;
        }
        rc = perr(p, p->pos, "expected ',' or ']'");
        goto fail;
    }
    if (t->values.len == 0) {
        /* Literal[None] is just None. */
        cn_type_free(t);
        t = cn_type__new(CN_T_NONE);
        if (t == NULL) return cn_type__oom("parsing a type hint");
    } else if (has_none) {
        t = wrap(CN_T_OPTIONAL, t);
        if (t == NULL) return cn_type__oom("parsing a type hint");
    }
    *out = t;
    return 0;
fail:
    cn_type_free(t);
    return rc;
}

static int parse_primary(parser *p, cn_type **out)
{
    const struct known_name *k;
    size_t start, name_at, name_len;
    bool has_args;
    cn_type *t = NULL;
    type_vec args = {NULL, 0, 0};
    bool ellipsis = false;
    int rc = 0;

    *out = NULL;
    skip_ws(p);
    start = p->pos;
    if (at_ellipsis(p)) return perr(p, start, "'...' is only allowed in Tuple[T, ...]");
    if (p->pos >= p->len || !cn_type__is_ident_start(p->s[p->pos])) return perr(p, start, "expected a type");

    /* A dotted name: "typing.List", "models.QueriedNode". */
    while (p->pos < p->len && cn_type__is_ident_char(p->s[p->pos])) p->pos++;
    while (p->pos + 1 < p->len && p->s[p->pos] == '.' && cn_type__is_ident_start(p->s[p->pos + 1])) {
        p->pos++;
        while (p->pos < p->len && cn_type__is_ident_char(p->s[p->pos])) p->pos++;
    }
    name_at = start;
    name_len = p->pos - start;
    /* every such prefix goes ("typing.typing.X" too): a name kept with
     * one would lose it when its canonical text is parsed again */
    for (;;) {
        if (name_len > 7 && memcmp(p->s + name_at, "typing.", 7) == 0) {
            name_at += 7;
            name_len -= 7;
        } else if (name_len > 18 && memcmp(p->s + name_at, "typing_extensions.", 18) == 0) {
            name_at += 18;
            name_len -= 18;
        } else {
            break;
        }
    }
    k = lookup_name(p->s + name_at, name_len);
    skip_ws(p);
    has_args = at_char(p, '[');

    if (k == NULL) {
        if (has_args)
            return perr(p, start, "unknown generic type '%.*s'", (int)name_len, p->s + name_at);
        t = cn_type__new(CN_T_NAMED);
        if (t == NULL || (t->name = cn_strndup(p->s + name_at, name_len)) == NULL) {
            cn_type_free(t);
            return cn_type__oom("parsing a type hint");
        }
        *out = t;
        return 0;
    }

    switch (k->form) {
    case F_SCALAR:
        if (has_args) return perr(p, p->pos, "'%s' takes no type arguments", k->name);
        t = cn_type__new(k->kind);
        break;
    case F_LITERAL:
        if (!has_args) return perr(p, p->pos, "expected '[' after Literal");
        return parse_literal(p, out);
    case F_OPTIONAL:
    case F_UNION:
        if (!has_args) return perr(p, p->pos, "expected '[' after %s", k->name);
        rc = parse_args(p, 1, k->form == F_OPTIONAL ? 1 : 0, false, &args, &ellipsis);
        if (rc == 0) rc = fold_union(args.items, args.len, k->form == F_OPTIONAL, &t);
        tv_free(&args);
        if (rc < 0) return rc;
        *out = t;
        return 0;
    case F_LIST:
    case F_TUPLE:
        if (!has_args) {
            t = wrap(CN_T_LIST, cn_type__new(CN_T_ANY));
            break;
        }
        rc = parse_args(p, 1, k->form == F_LIST ? 1 : 0, k->form == F_TUPLE, &args, &ellipsis);
        if (rc == 0) {
            cn_type *elem = NULL;
            /* Tuple[A, B] becomes a list of the union of its members. */
            rc = fold_union(args.items, args.len, false, &elem);
            if (rc == 0 && (t = wrap(CN_T_LIST, elem)) == NULL) rc = cn_type__oom("parsing a type hint");
        }
        tv_free(&args);
        if (rc < 0) return rc;
        *out = t;
        return 0;
    case F_DICT:
        if (!has_args) {
            /* JSON object keys are always strings. */
            t = wrap(CN_T_DICT, cn_type__new(CN_T_ANY));
            if (t != NULL && (t->key = cn_type__new(CN_T_STR)) == NULL) {
                cn_type_free(t);
                t = NULL;
            }
            break;
        }
        rc = parse_args(p, 2, 2, false, &args, &ellipsis);
        if (rc == 0) {
            t = cn_type__new(CN_T_DICT);
            if (t == NULL) {
                rc = cn_type__oom("parsing a type hint");
            } else {
                t->key = args.items[0];
                t->elem = args.items[1];
                args.len = 0;
            }
        }
        tv_free(&args);
        if (rc < 0) return rc;
        *out = t;
        return 0;
    }
    if (t == NULL) return cn_type__oom("parsing a type hint");
    *out = t;
    return 0;
}

/* A | B | None */
static int parse_union(parser *p, cn_type **out)
{
    type_vec members = {NULL, 0, 0};
    cn_type *t;
    int rc;

    *out = NULL;
    rc = parse_primary(p, &t);
    if (rc < 0) return rc;
    skip_ws(p);
    if (!at_char(p, '|')) {
        *out = t;
        return 0;
    }
    rc = tv_push(&members, t);
    while (rc == 0) {
        skip_ws(p);
        if (!at_char(p, '|')) break;
        p->pos++;
        rc = parse_primary(p, &t);
        if (rc == 0) rc = tv_push(&members, t);
    }
    if (rc == 0) rc = fold_union(members.items, members.len, false, out);
    tv_free(&members);
    return rc;
}

int cn_type_parse(const char *hint, cn_type **out)
{
    parser p;
    cn_type *t = NULL;
    int rc;

    if (out == NULL) return cn_error_set(CN_EINVAL, "cn_type_parse: out is NULL");
    *out = NULL;
    if (hint == NULL) hint = "";
    p.s = hint;
    p.len = strlen(hint);
    p.pos = 0;
    p.depth = 0;
    if (p.len > TYPE_MAX_HINT) {
        char shown[SHOW_HINT_MAX + 4];
        cn_type__show_text(hint, p.len, SHOW_HINT_MAX, shown);
        return cn_error_set(CN_EPARSE, "type hint '%s': %zu bytes long, over the limit of %d",
                            shown, p.len, TYPE_MAX_HINT);
    }
    skip_ws(&p);
    if (p.pos == p.len) {
        t = cn_type__new(CN_T_ANY);
        if (t == NULL) return cn_type__oom("parsing a type hint");
        *out = t;
        return 0;
    }
    rc = parse_union(&p, &t);
    if (rc < 0) return rc;
    skip_ws(&p);
    if (p.pos < p.len) {
        unsigned char c = (unsigned char)p.s[p.pos];
        cn_type_free(t);
        if (c >= 0x20 && c < 0x7f) return perr(&p, p.pos, "unexpected '%c'", c);
        return perr(&p, p.pos, "unexpected byte 0x%02x", c);
    }
    *out = t;
    return 0;
}

