/* Type hints of skill inputs and outputs: parser, coercion of supplied
 * arguments, JSON schema and dataflow compatibility.  The contract is in
 * cn_types.h; choices it leaves open are noted where they are made. */
#include "cn_types.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Real hints are a few dozen bytes; the caps keep hostile ones cheap
 * (recursion depth, quadratic de-duplication of Literal values). */
#define TYPE_MAX_DEPTH 32
#define TYPE_MAX_HINT 16384
/* How much of a hint or a value an error message quotes. */
#define SHOW_HINT_MAX 80
#define SHOW_VALUE_MAX 80

/* ---- small helpers ------------------------------------------------------ */

static cn_type *type_new(cn_type_kind kind)
{
    cn_type *t = calloc(1, sizeof *t);
    if (t != NULL) t->kind = kind;
    return t;
}

static int oom(const char *what)
{
    return cn_error_set(CN_ENOMEM, "out of memory %s", what);
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* ASCII only: the C library's ctype answers depend on the locale. */
static bool is_ident_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_ident_char(char c)
{
    return is_ident_start(c) || (c >= '0' && c <= '9');
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool ascii_ieq(const char *a, size_t alen, const char *b)
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

/* Copies at most `max` bytes of s into out (which holds max + 4), without
 * splitting a UTF-8 sequence, replacing control bytes so that a message
 * stays on one line, and marking a cut with "...". */
static void show_text(const char *s, size_t len, size_t max, char *out)
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
static void put_quoted(cn_buf *b, const char *s)
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
    c = type_new(t->kind);
    if (c == NULL) goto fail;
    if (t->elem != NULL && (c->elem = cn_type_copy(t->elem)) == NULL) goto fail;
    if (t->key != NULL && (c->key = cn_type_copy(t->key)) == NULL) goto fail;
    if (t->name != NULL && (c->name = cn_strdup(t->name)) == NULL) goto fail;
    for (size_t i = 0; i < t->values.len; i++)
        if (cn_strv_push(&c->values, t->values.items[i]) < 0) goto fail;
    return c;
fail:
    cn_type_free(c);
    oom("copying a type");
    return NULL;
}

/* Adds each value once: a repeated Literal value says nothing new. */
static int enum_add(cn_type *t, const char *value)
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
    t = type_new(CN_T_ENUM);
    if (t == NULL) return oom("creating an enum type");
    for (size_t i = 0; i < values->len; i++) {
        if (values->items[i] == NULL) {
            cn_type_free(t);
            return cn_error_set(CN_EINVAL, "enum value %zu is NULL", i);
        }
        if (enum_add(t, values->items[i]) < 0) {
            cn_type_free(t);
            return CN_ENOMEM;
        }
    }
    *out = t;
    return 0;
}

/* A NULL type (only in hand-built trees) reads as Any, a NULL dict key
 * as str. */
static void type_write(cn_buf *b, const cn_type *t)
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
        type_write(b, t->elem);
        cn_buf_putc(b, ']');
        break;
    case CN_T_DICT:
        cn_buf_puts(b, "Dict[");
        if (t->key != NULL) type_write(b, t->key);
        else cn_buf_puts(b, "str");
        cn_buf_puts(b, ", ");
        type_write(b, t->elem);
        cn_buf_putc(b, ']');
        break;
    case CN_T_OPTIONAL:
        cn_buf_puts(b, "Optional[");
        type_write(b, t->elem);
        cn_buf_putc(b, ']');
        break;
    case CN_T_ENUM:
        cn_buf_puts(b, "Literal[");
        for (size_t i = 0; i < t->values.len; i++) {
            if (i) cn_buf_puts(b, ", ");
            put_quoted(b, t->values.items[i]);
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

    type_write(&b, t);
    s = cn_buf_steal(&b);
    if (s == NULL) oom("writing a type");
    return s;
}

static bool type_equal(const cn_type *a, const cn_type *b)
{
    if (a == b) return true;
    if (a == NULL || b == NULL || a->kind != b->kind) return false;
    switch (a->kind) {
    case CN_T_LIST:
    case CN_T_OPTIONAL:
        return type_equal(a->elem, b->elem);
    case CN_T_DICT:
        return type_equal(a->key, b->key) && type_equal(a->elem, b->elem);
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
    show_text(p->s, p->len, SHOW_HINT_MAX, shown);
    return cn_error_set(CN_EPARSE, "type hint '%s': %s at column %zu", shown, what, at + 1);
}

static void skip_ws(parser *p)
{
    while (p->pos < p->len && is_space(p->s[p->pos])) p->pos++;
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
            return oom("parsing a type hint");
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
    cn_type *t = type_new(kind);
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
        else if (!type_equal(first, m)) all_equal = false;
    }

    if (any) {
        r = type_new(CN_T_ANY);
    } else if (real == 0) {
        r = type_new(CN_T_NONE);
    } else if (all_equal) {
        r = cn_type_copy(first);
    } else if (all_enum) {
        r = type_new(CN_T_ENUM);
        for (size_t i = 0; r != NULL && i < n; i++) {
            const cn_type *m = members[i];
            if (m->kind == CN_T_OPTIONAL) m = m->elem;
            if (m->kind != CN_T_ENUM) continue;
            for (size_t j = 0; j < m->values.len; j++) {
                if (enum_add(r, m->values.items[j]) < 0) {
                    cn_type_free(r);
                    r = NULL;
                    break;
                }
            }
        }
    } else {
        r = type_new(CN_T_ANY);
    }
    if (r == NULL) return oom("parsing a type hint");
    if (has_none && r->kind != CN_T_ANY && r->kind != CN_T_NONE) {
        r = wrap(CN_T_OPTIONAL, r);
        if (r == NULL) return oom("parsing a type hint");
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
    while (i < p->len && is_digit(p->s[i])) i++, d++;
    if (d == 0) return false;
    if (i + 1 < p->len && p->s[i] == '.' && is_digit(p->s[i + 1])) {
        i++;
        while (i < p->len && is_digit(p->s[i])) i++;
    }
    if (i < p->len && (p->s[i] == 'e' || p->s[i] == 'E')) {
        size_t j = i + 1;
        if (j < p->len && (p->s[j] == '-' || p->s[j] == '+')) j++;
        if (j < p->len && is_digit(p->s[j])) {
            while (j < p->len && is_digit(p->s[j])) j++;
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
    cn_type *t = type_new(CN_T_ENUM);
    bool has_none = false;
    int rc;

    if (t == NULL) return oom("parsing a type hint");
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
        } else if (is_ident_start(c)) {
            while (p->pos < p->len && is_ident_char(p->s[p->pos])) p->pos++;
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
        if (rc == 0 && b.data != NULL) rc = enum_add(t, b.data);
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
        t = type_new(CN_T_NONE);
        if (t == NULL) return oom("parsing a type hint");
    } else if (has_none) {
        t = wrap(CN_T_OPTIONAL, t);
        if (t == NULL) return oom("parsing a type hint");
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
    if (p->pos >= p->len || !is_ident_start(p->s[p->pos])) return perr(p, start, "expected a type");

    /* A dotted name: "typing.List", "models.QueriedNode". */
    while (p->pos < p->len && is_ident_char(p->s[p->pos])) p->pos++;
    while (p->pos + 1 < p->len && p->s[p->pos] == '.' && is_ident_start(p->s[p->pos + 1])) {
        p->pos++;
        while (p->pos < p->len && is_ident_char(p->s[p->pos])) p->pos++;
    }
    name_at = start;
    name_len = p->pos - start;
    if (name_len > 7 && memcmp(p->s + start, "typing.", 7) == 0) {
        name_at += 7;
        name_len -= 7;
    } else if (name_len > 18 && memcmp(p->s + start, "typing_extensions.", 18) == 0) {
        name_at += 18;
        name_len -= 18;
    }
    k = lookup_name(p->s + name_at, name_len);
    skip_ws(p);
    has_args = at_char(p, '[');

    if (k == NULL) {
        if (has_args)
            return perr(p, start, "unknown generic type '%.*s'", (int)name_len, p->s + name_at);
        t = type_new(CN_T_NAMED);
        if (t == NULL || (t->name = cn_strndup(p->s + name_at, name_len)) == NULL) {
            cn_type_free(t);
            return oom("parsing a type hint");
        }
        *out = t;
        return 0;
    }

    switch (k->form) {
    case F_SCALAR:
        if (has_args) return perr(p, p->pos, "'%s' takes no type arguments", k->name);
        t = type_new(k->kind);
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
            t = wrap(CN_T_LIST, type_new(CN_T_ANY));
            break;
        }
        rc = parse_args(p, 1, k->form == F_LIST ? 1 : 0, k->form == F_TUPLE, &args, &ellipsis);
        if (rc == 0) {
            cn_type *elem = NULL;
            /* Tuple[A, B] becomes a list of the union of its members. */
            rc = fold_union(args.items, args.len, false, &elem);
            if (rc == 0 && (t = wrap(CN_T_LIST, elem)) == NULL) rc = oom("parsing a type hint");
        }
        tv_free(&args);
        if (rc < 0) return rc;
        *out = t;
        return 0;
    case F_DICT:
        if (!has_args) {
            /* JSON object keys are always strings. */
            t = wrap(CN_T_DICT, type_new(CN_T_ANY));
            if (t != NULL && (t->key = type_new(CN_T_STR)) == NULL) {
                cn_type_free(t);
                t = NULL;
            }
            break;
        }
        rc = parse_args(p, 2, 2, false, &args, &ellipsis);
        if (rc == 0) {
            t = type_new(CN_T_DICT);
            if (t == NULL) {
                rc = oom("parsing a type hint");
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
    if (t == NULL) return oom("parsing a type hint");
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
        show_text(hint, p.len, SHOW_HINT_MAX, shown);
        return cn_error_set(CN_EPARSE, "type hint '%s': %zu bytes long, over the limit of %d",
                            shown, p.len, TYPE_MAX_HINT);
    }
    skip_ws(&p);
    if (p.pos == p.len) {
        t = type_new(CN_T_ANY);
        if (t == NULL) return oom("parsing a type hint");
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

/* ---- coercion ----------------------------------------------------------- */

/* Python's str(float): shortest text that reads back, with ".0" on whole
 * numbers. */
static void format_double(double d, char *out, size_t n)
{
    if (isnan(d)) {
        snprintf(out, n, "nan");
        return;
    }
    if (isinf(d)) {
        snprintf(out, n, d > 0 ? "inf" : "-inf");
        return;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(out, n, "%.*g", prec, d);
        if (strtod(out, NULL) == d) break;
    }
    if (strpbrk(out, ".eE") == NULL && strlen(out) + 3 <= n) strcat(out, ".0");
}

/* Text of a scalar (as str coercion makes it), or NULL for objects/arrays.
 * Uses scratch (>= 64 bytes) for numbers. */
static const char *scalar_text(json_object *in, char *scratch, size_t n, size_t *len)
{
    const char *s = NULL;

    switch (json_object_get_type(in)) {
    case json_type_string:
        *len = (size_t)json_object_get_string_len(in);
        return json_object_get_string(in);
    case json_type_int: {
        int64_t v = json_object_get_int64(in);
        /* Values above INT64_MAX are stored unsigned and read clamped. */
        if (v == INT64_MAX) snprintf(scratch, n, "%llu", (unsigned long long)json_object_get_uint64(in));
        else snprintf(scratch, n, "%lld", (long long)v);
        s = scratch;
        break;
    }
    case json_type_double:
        format_double(json_object_get_double(in), scratch, n);
        s = scratch;
        break;
    case json_type_boolean:
        s = json_object_get_boolean(in) ? "true" : "false";
        break;
    default:
        return NULL;
    }
    *len = strlen(s);
    return s;
}

/* "int", or "one of 'a', 'b'" for an enum. */
static char *expected_text(const cn_type *t)
{
    cn_buf b = CN_BUF_INIT;

    if (t != NULL && t->kind == CN_T_ENUM) {
        cn_buf_puts(&b, "one of ");
        for (size_t i = 0; i < t->values.len; i++) {
            if (i) cn_buf_puts(&b, ", ");
            put_quoted(&b, t->values.items[i]);
        }
    } else {
        type_write(&b, t);
    }
    return cn_buf_steal(&b);
}

static void show_value(json_object *in, char *out)
{
    size_t len = 0;
    const char *s = json_object_to_json_string_length(
        in, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
    if (s == NULL) {
        s = "?";
        len = 1;
    }
    show_text(s, len, SHOW_VALUE_MAX, out);
}

static const char *path_text(const cn_buf *path)
{
    return path->data != NULL ? path->data : "argument";
}

static int type_error(const cn_type *t, const cn_buf *path, json_object *in)
{
    char shown[SHOW_VALUE_MAX + 4];
    char *want = expected_text(t);

    show_value(in, shown);
    cn_error_set(CN_ETYPE, "%s: expected %s, got %s", path_text(path), want ? want : "?", shown);
    free(want);
    return CN_ETYPE;
}

/* Trims s[0..len) into buf (NUL-terminated); false if it does not fit. */
static bool trim_into(const char *s, size_t len, char *buf, size_t n)
{
    while (len > 0 && is_space(*s)) s++, len--;
    while (len > 0 && is_space(s[len - 1])) len--;
    if (len >= n) return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    return true;
}

/* Decimal number text: [+-]? (digits [. digits?] | . digits) [e [+-]? digits].
 * strtod alone would also take hex, "inf" and "nan". */
static bool number_syntax(const char *s, bool *integral)
{
    size_t i = 0, before = 0, after = 0;
    bool frac = false, exp = false;

    if (s[i] == '+' || s[i] == '-') i++;
    while (is_digit(s[i])) i++, before++;
    if (s[i] == '.') {
        frac = true;
        i++;
        while (is_digit(s[i])) i++, after++;
    }
    if (before + after == 0) return false;
    if (s[i] == 'e' || s[i] == 'E') {
        size_t d = 0;
        exp = true;
        i++;
        if (s[i] == '+' || s[i] == '-') i++;
        while (is_digit(s[i])) i++, d++;
        if (d == 0) return false;
    }
    *integral = !frac && !exp;
    return s[i] == '\0';
}

/* Reads a number from a string value: as int64 when *is_int, else double. */
static bool string_number(json_object *in, bool want_int, int64_t *iv, double *dv)
{
    char buf[128];
    bool integral;
    const char *s = json_object_get_string(in);
    size_t len = (size_t)json_object_get_string_len(in);

    if (!trim_into(s, len, buf, sizeof buf) || !number_syntax(buf, &integral)) return false;
    if (want_int && integral) {
        char *end;
        long long v;
        errno = 0;
        v = strtoll(buf, &end, 10);
        if (errno == ERANGE) return false;
        *iv = (int64_t)v;
        return true;
    }
    *dv = strtod(buf, NULL);
    if (!isfinite(*dv)) return false;
    if (!want_int) return true;
    /* Only whole values in range: "5.0" and "1e3" are ints, "5.5" is not. */
    if (!(*dv >= -9223372036854775808.0 && *dv < 9223372036854775808.0)) return false;
    *iv = (int64_t)*dv;
    return (double)*iv == *dv;
}

static int made(json_object *v, json_object **out)
{
    if (v == NULL) return oom("coercing a value");
    *out = v;
    return 0;
}

static int coerce(const cn_type *t, cn_buf *path, json_object *in, json_object **out);

static int coerce_str(const cn_type *t, cn_buf *path, json_object *in, json_object **out)
{
    char scratch[64];
    size_t len;
    const char *s;

    if (json_object_is_type(in, json_type_string)) {
        *out = json_object_get(in);
        return 0;
    }
    s = scalar_text(in, scratch, sizeof scratch, &len);
    if (s == NULL) return type_error(t, path, in);
    return made(json_object_new_string_len(s, (int)len), out);
}

static int coerce_int(const cn_type *t, cn_buf *path, json_object *in, json_object **out)
{
    int64_t iv = 0;
    double dv = 0;

    switch (json_object_get_type(in)) {
    case json_type_int:
        *out = json_object_get(in);
        return 0;
    case json_type_double:
        dv = json_object_get_double(in);
        if (!(dv >= -9223372036854775808.0 && dv < 9223372036854775808.0)) break;
        iv = (int64_t)dv;
        if ((double)iv != dv) break;
        return made(json_object_new_int64(iv), out);
    case json_type_string:
        if (!string_number(in, true, &iv, &dv)) break;
        return made(json_object_new_int64(iv), out);
    default:
        break;
    }
    return type_error(t, path, in);
}

static int coerce_float(const cn_type *t, cn_buf *path, json_object *in, json_object **out)
{
    double dv = 0;
    int64_t iv;

    switch (json_object_get_type(in)) {
    case json_type_double:
        *out = json_object_get(in);
        return 0;
    case json_type_int:
        return made(json_object_new_double(json_object_get_double(in)), out);
    case json_type_string:
        if (!string_number(in, false, &iv, &dv)) break;
        return made(json_object_new_double(dv), out);
    default:
        break;
    }
    return type_error(t, path, in);
}

static int coerce_bool(const cn_type *t, cn_buf *path, json_object *in, json_object **out)
{
    switch (json_object_get_type(in)) {
    case json_type_boolean:
        *out = json_object_get(in);
        return 0;
    case json_type_int: {
        int64_t v = json_object_get_int64(in);
        if (v != 0 && v != 1) break;
        return made(json_object_new_boolean(v == 1), out);
    }
    case json_type_string: {
        const char *s = json_object_get_string(in);
        size_t len = (size_t)json_object_get_string_len(in);
        while (len > 0 && is_space(*s)) s++, len--;
        while (len > 0 && is_space(s[len - 1])) len--;
        if (ascii_ieq(s, len, "true") || ascii_ieq(s, len, "yes") || ascii_ieq(s, len, "1"))
            return made(json_object_new_boolean(1), out);
        if (ascii_ieq(s, len, "false") || ascii_ieq(s, len, "no") || ascii_ieq(s, len, "0"))
            return made(json_object_new_boolean(0), out);
        break;
    }
    default:
        break;
    }
    return type_error(t, path, in);
}

static int coerce_enum(const cn_type *t, cn_buf *path, json_object *in, json_object **out)
{
    char scratch[64];
    size_t len;
    const char *s = scalar_text(in, scratch, sizeof scratch, &len);

    if (s == NULL) return type_error(t, path, in);
    for (size_t i = 0; i < t->values.len; i++) {
        const char *v = t->values.items[i];
        if (strlen(v) == len && memcmp(v, s, len) == 0) {
            if (json_object_is_type(in, json_type_string)) {
                *out = json_object_get(in);
                return 0;
            }
            return made(json_object_new_string_len(s, (int)len), out);
        }
    }
    return type_error(t, path, in);
}

/* Parses a string holding a JSON array or object ('[' or '{' first).
 * Returns NULL when it is not one, or has anything but blanks after it. */
static json_object *parse_embedded(json_object *in, char open)
{
    const char *s = json_object_get_string(in);
    size_t len = (size_t)json_object_get_string_len(in);
    struct json_tokener *tok;
    json_object *v;
    size_t i = 0, end;

    while (i < len && is_space(s[i])) i++;
    if (i == len || s[i] != open || len - i > INT_MAX) return NULL;
    tok = json_tokener_new();
    if (tok == NULL) return NULL;
    v = json_tokener_parse_ex(tok, s + i, (int)(len - i));
    end = i + json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    if (v == NULL) return NULL;
    while (end < len && is_space(s[end])) end++;
    if (end != len) {
        json_object_put(v);
        return NULL;
    }
    return v;
}

static void path_restore(cn_buf *path, size_t mark)
{
    if (path->data != NULL && mark <= path->len) {
        path->len = mark;
        path->data[mark] = '\0';
    }
}

static int coerce_array(const cn_type *t, cn_buf *path, json_object *in, json_object **out)
{
    size_t n = json_object_array_length(in);
    json_object *arr = json_object_new_array_ext(n > INT_MAX ? INT_MAX : (int)n);
    bool changed = false;

    if (arr == NULL) return oom("coercing a list");
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(in, i), *v = NULL;
        size_t mark = path->len;
        int rc;

        cn_buf_printf(path, "[%zu]", i);
        rc = coerce(t->elem, path, e, &v);
        path_restore(path, mark);
        if (rc < 0) {
            json_object_put(arr);
            return rc;
        }
        if (v != e) changed = true;
        if (json_object_array_add(arr, v) < 0) {
            json_object_put(v);
            json_object_put(arr);
            return oom("coercing a list");
        }
    }
    /* Hand back the caller's array when nothing needed converting. */
    if (!changed) {
        json_object_put(arr);
        arr = json_object_get(in);
    }
    *out = arr;
    return 0;
}

static int coerce_list(const cn_type *t, cn_buf *path, json_object *in, json_object **out)
{
    json_object *v = NULL, *arr;
    int rc;

    switch (json_object_get_type(in)) {
    case json_type_array:
        return coerce_array(t, path, in, out);
    case json_type_string: {
        json_object *parsed = parse_embedded(in, '[');
        if (parsed != NULL) {
            rc = coerce_array(t, path, parsed, out);
            json_object_put(parsed);
            return rc;
        }
        break;
    }
    case json_type_int:
    case json_type_double:
    case json_type_boolean:
        break;
    default:
        return type_error(t, path, in);
    }
    /* A scalar stands for a one-element list; if the element type refuses
     * it, the message names the list type, not a made-up index. */
    rc = coerce(t->elem, path, in, &v);
    if (rc == CN_ETYPE) return type_error(t, path, in);
    if (rc < 0) return rc;
    arr = json_object_new_array_ext(1);
    if (arr == NULL || json_object_array_add(arr, v) < 0) {
        json_object_put(v);
        json_object_put(arr);
        return oom("coercing a list");
    }
    *out = arr;
    return 0;
}

/* Keys stay as given (JSON keys are strings); a non-string key type only
 * checks that each key converts. */
static int check_key(const cn_type *key, cn_buf *path, const char *name)
{
    json_object *k, *v = NULL;
    int rc;

    if (key == NULL || key->kind == CN_T_ANY || key->kind == CN_T_STR || key->kind == CN_T_NAMED)
        return 0;
    k = json_object_new_string(name);
    if (k == NULL) return oom("coercing a dict");
    rc = coerce(key, path, k, &v);
    json_object_put(v);
    if (rc == CN_ETYPE) {
        char shown[SHOW_VALUE_MAX + 4];
        char *want = expected_text(key);
        show_value(k, shown);
        cn_error_set(CN_ETYPE, "%s: key %s is not %s", path_text(path), shown,
                     want ? want : "?");
        free(want);
    }
    json_object_put(k);
    return rc;
}

static int coerce_object(const cn_type *t, cn_buf *path, json_object *in, json_object **out)
{
    struct json_object_iterator it = json_object_iter_begin(in);
    struct json_object_iterator end = json_object_iter_end(in);
    json_object *obj = json_object_new_object();
    bool changed = false;

    if (obj == NULL) return oom("coercing a dict");
    for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
        const char *name = json_object_iter_peek_name(&it);
        json_object *e = json_object_iter_peek_value(&it), *v = NULL;
        size_t mark = path->len;
        int rc = check_key(t->key, path, name);

        if (rc == 0) {
            cn_buf_putc(path, '[');
            put_quoted(path, name);
            cn_buf_putc(path, ']');
            rc = coerce(t->elem, path, e, &v);
            path_restore(path, mark);
        }
        if (rc < 0) {
            json_object_put(obj);
            return rc;
        }
        if (v != e) changed = true;
        if (json_object_object_add(obj, name, v) < 0) {
            json_object_put(v);
            json_object_put(obj);
            return oom("coercing a dict");
        }
    }
    if (!changed) {
        json_object_put(obj);
        obj = json_object_get(in);
    }
    *out = obj;
    return 0;
}

static int coerce_dict(const cn_type *t, cn_buf *path, json_object *in, json_object **out)
{
    if (json_object_is_type(in, json_type_object)) return coerce_object(t, path, in, out);
    if (json_object_is_type(in, json_type_string)) {
        json_object *parsed = parse_embedded(in, '{');
        if (parsed != NULL) {
            int rc = coerce_object(t, path, parsed, out);
            json_object_put(parsed);
            return rc;
        }
    }
    return type_error(t, path, in);
}

static int coerce(const cn_type *t, cn_buf *path, json_object *in, json_object **out)
{
    *out = NULL;
    if (t == NULL || t->kind == CN_T_ANY) {
        *out = json_object_get(in);
        return 0;
    }
    if (in == NULL) {
        if (t->kind == CN_T_OPTIONAL || t->kind == CN_T_NONE) return 0;
        return type_error(t, path, in);
    }
    switch (t->kind) {
    case CN_T_OPTIONAL: return coerce(t->elem, path, in, out);
    case CN_T_STR: return coerce_str(t, path, in, out);
    case CN_T_INT: return coerce_int(t, path, in, out);
    case CN_T_FLOAT: return coerce_float(t, path, in, out);
    case CN_T_BOOL: return coerce_bool(t, path, in, out);
    case CN_T_ENUM: return coerce_enum(t, path, in, out);
    case CN_T_LIST: return coerce_list(t, path, in, out);
    case CN_T_DICT: return coerce_dict(t, path, in, out);
    case CN_T_NAMED:
        /* The shape of a named type is not known here: any non-null value. */
        *out = json_object_get(in);
        return 0;
    case CN_T_NONE:
    default:
        return type_error(t, path, in);
    }
}

int cn_type_coerce(const cn_type *t, const char *arg_name, json_object *in, json_object **out)
{
    cn_buf path = CN_BUF_INIT;
    int rc;

    if (out == NULL) return cn_error_set(CN_EINVAL, "cn_type_coerce: out is NULL");
    *out = NULL;
    if (arg_name != NULL) {
        cn_buf_puts(&path, "argument ");
        put_quoted(&path, arg_name);
    } else {
        cn_buf_puts(&path, "value");
    }
    if (path.oom) {
        cn_buf_free(&path);
        return oom("coercing a value");
    }
    rc = coerce(t, &path, in, out);
    cn_buf_free(&path);
    return rc;
}

/* ---- JSON schema -------------------------------------------------------- */

static int schema_fill(json_object *o, const cn_type *t);

static int add_string(json_object *o, const char *key, const char *value)
{
    json_object *v = json_object_new_string(value);
    if (v == NULL || json_object_object_add(o, key, v) < 0) {
        json_object_put(v);
        return CN_ENOMEM;
    }
    return 0;
}

static int add_schema(json_object *o, const char *key, const cn_type *t)
{
    json_object *v = cn_type_json_schema(t);
    if (v == NULL || json_object_object_add(o, key, v) < 0) {
        json_object_put(v);
        return CN_ENOMEM;
    }
    return 0;
}

static int schema_fill(json_object *o, const cn_type *t)
{
    if (t == NULL) return 0;
    switch (t->kind) {
    case CN_T_STR: return add_string(o, "type", "string");
    case CN_T_INT: return add_string(o, "type", "integer");
    case CN_T_FLOAT: return add_string(o, "type", "number");
    case CN_T_BOOL: return add_string(o, "type", "boolean");
    case CN_T_NONE: return add_string(o, "type", "null");
    case CN_T_LIST:
        if (add_string(o, "type", "array") < 0) return CN_ENOMEM;
        return add_schema(o, "items", t->elem);
    case CN_T_DICT:
        if (add_string(o, "type", "object") < 0) return CN_ENOMEM;
        return add_schema(o, "additionalProperties", t->elem);
    case CN_T_OPTIONAL:
        return schema_fill(o, t->elem);
    case CN_T_ENUM: {
        json_object *arr;
        if (add_string(o, "type", "string") < 0) return CN_ENOMEM;
        arr = json_object_new_array_ext((int)(t->values.len > INT_MAX ? INT_MAX : t->values.len));
        if (arr == NULL || json_object_object_add(o, "enum", arr) < 0) {
            json_object_put(arr);
            return CN_ENOMEM;
        }
        for (size_t i = 0; i < t->values.len; i++) {
            json_object *s = json_object_new_string(t->values.items[i]);
            if (s == NULL || json_object_array_add(arr, s) < 0) {
                json_object_put(s);
                return CN_ENOMEM;
            }
        }
        return 0;
    }
    case CN_T_NAMED:
        return add_string(o, "description", t->name != NULL ? t->name : "");
    case CN_T_ANY:
    default:
        return 0;
    }
}

json_object *cn_type_json_schema(const cn_type *t)
{
    json_object *o = json_object_new_object();

    if (o == NULL) {
        oom("building a JSON schema");
        return NULL;
    }
    if (schema_fill(o, t) < 0) {
        json_object_put(o);
        oom("building a JSON schema");
        return NULL;
    }
    return o;
}

/* ---- compatibility ------------------------------------------------------ */

/* Writes "<role> <type>" (or "it" at the top level) as a sentence subject. */
static void put_subject(cn_buf *d, const char *role, const cn_type *t)
{
    if (role == NULL) {
        cn_buf_puts(d, "it");
        return;
    }
    cn_buf_printf(d, "%s ", role);
    type_write(d, t);
}

/* `role` names where we are ("element", "key", "value"; NULL at the top).
 * Only the innermost mismatch writes to d. */
static bool compat(const cn_type *f, const cn_type *t, const char *role, cn_buf *d)
{
    if (f == NULL || t == NULL || f->kind == CN_T_ANY || t->kind == CN_T_ANY) return true;
    if (t->kind == CN_T_OPTIONAL) {
        if (f->kind == CN_T_NONE) return true;
        if (f->kind == CN_T_OPTIONAL) return compat(f->elem, t->elem, role, d);
        return compat(f, t->elem, role, d);
    }
    if (f->kind == CN_T_OPTIONAL) {
        /* A value that may be None does not fit where None is refused. */
        if (d != NULL) {
            put_subject(d, role, f);
            cn_buf_puts(d, " may be None");
        }
        return false;
    }
    switch (t->kind) {
    case CN_T_STR:
        if (f->kind == CN_T_STR || f->kind == CN_T_ENUM) return true;
        break;
    case CN_T_INT:
    case CN_T_BOOL:
    case CN_T_NONE:
        if (f->kind == t->kind) return true;
        break;
    case CN_T_FLOAT:
        if (f->kind == CN_T_FLOAT || f->kind == CN_T_INT) return true;
        break;
    case CN_T_LIST:
        if (f->kind == CN_T_LIST) return compat(f->elem, t->elem, "element", d);
        break;
    case CN_T_DICT:
        if (f->kind == CN_T_DICT)
            return compat(f->key, t->key, "key", d) && compat(f->elem, t->elem, "value", d);
        break;
    case CN_T_ENUM:
        if (f->kind != CN_T_ENUM) break;
        for (size_t i = 0; i < f->values.len; i++) {
            if (!cn_strv_contains(&t->values, f->values.items[i])) {
                if (d != NULL) {
                    put_subject(d, role, f);
                    cn_buf_puts(d, " allows ");
                    put_quoted(d, f->values.items[i]);
                }
                return false;
            }
        }
        return true;
    case CN_T_NAMED:
        if (f->kind == CN_T_NAMED && f->name != NULL && t->name != NULL &&
            strcmp(f->name, t->name) == 0)
            return true;
        break;
    default:
        break;
    }
    if (d != NULL && role != NULL) {
        cn_buf_printf(d, "%s ", role);
        type_write(d, f);
        cn_buf_puts(d, " is not ");
        type_write(d, t);
    }
    return false;
}

bool cn_type_compatible(const cn_type *from, const cn_type *to, char **why)
{
    cn_buf detail = CN_BUF_INIT;
    cn_buf msg = CN_BUF_INIT;
    bool ok;

    if (why != NULL) *why = NULL;
    ok = compat(from, to, NULL, why != NULL ? &detail : NULL);
    if (!ok && why != NULL) {
        type_write(&msg, from);
        cn_buf_puts(&msg, " does not fit ");
        type_write(&msg, to);
        if (detail.len > 0) {
            cn_buf_puts(&msg, ": ");
            cn_buf_append(&msg, detail.data, detail.len);
        }
        *why = cn_buf_steal(&msg);
    }
    cn_buf_free(&detail);
    cn_buf_free(&msg);
    return ok;
}
