/* SPDX-License-Identifier: Apache-2.0 */
/* YAML -> json-c reader with source positions.
 *
 * Built on libyaml's event parser: events are turned into json-c nodes as
 * they arrive, with an explicit stack of open collections so that hostile
 * nesting cannot exhaust the C stack.  Every non-null node carries a small
 * mark record (json-c userdata) with its 1-based line and column.
 *
 * Choices the header leaves open:
 *  - mapping keys are the scalar's text as written ("0x10", "null", "~"):
 *    JSON keys are strings, and resolving them would make `1` and `"1"`
 *    collide silently; a key containing a NUL character is an error;
 *  - integers that do not fit int64 become doubles (nearest value);
 *  - besides the YAML 1.1 forms PyYAML knows (0x.., 0b.., legacy 0755
 *    octal) the YAML 1.2 `0o17` octal is accepted; floats may omit the dot
 *    when they have an exponent (`1e3`) and may carry a sign before a
 *    leading dot (`-.5`); sexagesimal (`1:30`), timestamps, merge keys
 *    (`<<`) and `=` are not special: they stay strings / ordinary keys;
 *  - the non-specific tag `!` always means string (PyYAML would resolve
 *    `! 12` to an int, the YAML spec says string);
 *  - tags other than !!str !!int !!float !!bool !!null (scalars), !!seq and
 *    !!map (collections) are errors rather than silently ignored;
 *  - an alias copy keeps the marks of the anchored original, which is where
 *    the value is actually written;
 *  - a document that is only `---` (an untagged empty root) gives an empty
 *    object like an empty file; an explicit `~` root gives JSON null (NULL);
 *  - limits: 256 nested collections (counting what aliases expand to),
 *    1,000,000 values in the tree (counting alias copies), 4 MiB per file.
 */
#ifndef _GNU_SOURCE
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* newlocale/uselocale */
#endif
#endif

#include "plugin/cn_yaml.h"
#include "util/cn_util.h"

#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#define MAX_DEPTH 256
#define MAX_NODES 1000000u
#define MAX_FILE_BYTES ((size_t)4 << 20)
#define SHOW_MAX 60 /* bytes of a scalar quoted in an error message */

#define YAML_TAG_PREFIX "tag:yaml.org,2002:"

/* Userdata attached to each node.  The magic lets cn_yaml_mark() tell our
 * record from other userdata (json-c's tokener stores a number's text
 * there); it has no NUL byte so comparing byte by byte never reads past
 * the end of such a string. */
typedef struct mark_data {
    char magic[8];
    int line;
    int col;
} mark_data;

static const char mark_magic[8] = {'c', 'n', 'y', 'm', 'a', 'r', 'k', '1'};

typedef struct anchor {
    char *name;
    json_object *node;  /* one reference held (the tree holds its own) */
    bool pending;       /* collection still open: an alias to it is recursive */
    size_t nodes;       /* values in the subtree: the cost of one copy */
    int height;         /* collection levels in the subtree */
    char *text;         /* scalar's raw text so that `*a` can be a key */
    size_t text_len;
} anchor;

typedef struct frame {
    json_object *node;  /* borrowed: already attached to its parent/root */
    bool is_map;
    char *key;          /* mapping key waiting for its value */
    int key_line;
    int *key_lines;     /* line of each attached key, in insertion order */
    size_t nkeys, cap;
    size_t first_node;  /* node counter when the collection opened */
    int height;         /* tallest child collection */
    long anchor;        /* index in anchors, or -1 */
} frame;

typedef struct load_ctx {
    const char *origin;
    const unsigned char *input;
    size_t input_len;
    frame stack[MAX_DEPTH];
    int depth;
    json_object *root;
    bool have_root;
    anchor *anchors;
    size_t nanchors, anchors_cap;
    json_object *anchor_index; /* name -> index in anchors; latest wins */
    size_t nodes;
    locale_t c_locale;
    bool locale_tried;
} load_ctx;

/* ---- marks ------------------------------------------------------------- */

static void free_mark(json_object *obj, void *data)
{
    (void)obj;
    free(data);
}

static int clamp_int(size_t v)
{
    return v >= (size_t)INT_MAX ? INT_MAX : (int)v;
}

static int put_mark(json_object *obj, int line, int col)
{
    mark_data *md;

    if (obj == NULL) return 0; /* JSON null is a NULL pointer: nowhere to put it */
    md = malloc(sizeof *md);
    if (md == NULL) return -1;
    memcpy(md->magic, mark_magic, sizeof md->magic);
    md->line = line;
    md->col = col;
    json_object_set_userdata(obj, md, free_mark);
    return 0;
}

static const mark_data *get_mark(json_object *obj)
{
    const unsigned char *p;
    size_t i;

    if (obj == NULL) return NULL;
    p = json_object_get_userdata(obj);
    if (p == NULL) return NULL;
    for (i = 0; i < sizeof mark_magic; i++)
        if (p[i] != (unsigned char)mark_magic[i]) return NULL;
    return (const mark_data *)(const void *)p;
}

int cn_yaml_mark(json_object *value, int *line, int *col)
{
    const mark_data *md = get_mark(value);

    if (md == NULL) return -1;
    if (line) *line = md->line;
    if (col) *col = md->col;
    return 0;
}

/* ---- errors -------------------------------------------------------------- */

static int fail_at(load_ctx *c, int line, int col, int code, const char *fmt, ...)
    CN_PRINTF(5, 6);

static int fail_at(load_ctx *c, int line, int col, int code, const char *fmt, ...)
{
    cn_buf b = CN_BUF_INIT;
    va_list ap;

    cn_buf_printf(&b, "%s:%d:%d: ", c->origin, line, col);
    va_start(ap, fmt);
    cn_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    if (b.oom || b.data == NULL) {
        cn_buf_free(&b);
        return cn_error_set(CN_ENOMEM, "%s: out of memory", c->origin);
    }
    cn_error_set(code, "%s", b.data);
    cn_buf_free(&b);
    return code;
}

static int fail_mark(load_ctx *c, const yaml_mark_t *m, const char *fmt, ...)
    CN_PRINTF(3, 4);

static int fail_mark(load_ctx *c, const yaml_mark_t *m, const char *fmt, ...)
{
    char msg[CN_ERROR_MESSAGE_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return fail_at(c, clamp_int(m->line + 1), clamp_int(m->column + 1), CN_EPARSE, "%s", msg);
}

static int fail_oom(load_ctx *c)
{
    return cn_error_set(CN_ENOMEM, "%s: out of memory while loading YAML", c->origin);
}

/* Appends a scalar for a message: bounded, control bytes escaped, never
 * cutting a UTF-8 sequence in half. */
static void show_text(cn_buf *b, const char *s, size_t n)
{
    size_t i, end = n;

    if (end > SHOW_MAX) {
        end = SHOW_MAX;
        while (end > 0 && ((unsigned char)s[end] & 0xC0) == 0x80) end--;
    }
    for (i = 0; i < end; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch < 0x20 || ch == 0x7F)
            cn_buf_printf(b, "\\x%02X", ch);
        else
            cn_buf_putc(b, (char)ch);
    }
    if (end < n) cn_buf_puts(b, "...");
}

/* "tag:yaml.org,2002:int" -> "!!int", for messages. */
static void show_tag(cn_buf *b, const char *tag)
{
    size_t lp = strlen(YAML_TAG_PREFIX);

    if (strncmp(tag, YAML_TAG_PREFIX, lp) == 0) {
        cn_buf_puts(b, "!!");
        tag += lp;
    }
    show_text(b, tag, strlen(tag));
}

/* libyaml's reader errors carry a byte offset, not a mark: work out the
 * line and column (in characters) from the input itself. */
static void offset_to_linecol(const load_ctx *c, size_t offset, yaml_encoding_t enc,
                              int *line, int *col)
{
    size_t i, l = 1, k = 1, step = 1;

    if (offset > c->input_len) offset = c->input_len;
    if (enc == YAML_UTF16LE_ENCODING || enc == YAML_UTF16BE_ENCODING) step = 2;
    for (i = 0; i + step <= offset; i += step) {
        unsigned u;
        if (step == 1) {
            u = c->input[i];
        } else if (enc == YAML_UTF16LE_ENCODING) {
            u = c->input[i] | (unsigned)c->input[i + 1] << 8;
        } else {
            u = (unsigned)c->input[i] << 8 | c->input[i + 1];
        }
        if (u == '\n') {
            l++;
            k = 1;
        } else if (u == '\r') {
            /* "\r\n" counts once, on the '\n' */
            bool crlf = i + 2 * step <= offset &&
                        (step == 1 ? c->input[i + 1] == '\n'
                                   : (enc == YAML_UTF16LE_ENCODING
                                          ? c->input[i + 2] == '\n' && c->input[i + 3] == 0
                                          : c->input[i + 2] == 0 && c->input[i + 3] == '\n'));
            if (!crlf) {
                l++;
                k = 1;
            }
        } else if (step == 1 ? (u & 0xC0) != 0x80 : (u < 0xDC00 || u > 0xDFFF)) {
            k++; /* continuation bytes and low surrogates are not characters */
        }
    }
    /* a leading BOM is not a column */
    if (l == 1 && k > 1 && c->input_len >= 2 &&
        ((c->input[0] == 0xEF && c->input_len >= 3 && c->input[1] == 0xBB &&
          c->input[2] == 0xBF) ||
         (c->input[0] == 0xFF && c->input[1] == 0xFE) ||
         (c->input[0] == 0xFE && c->input[1] == 0xFF)))
        k--;
    *line = clamp_int(l);
    *col = clamp_int(k);
}

static int syntax_error(load_ctx *c, const yaml_parser_t *p)
{
    const char *problem = p->problem ? p->problem : "unknown error";

    if (p->error == YAML_MEMORY_ERROR) return fail_oom(c);
    if (p->error == YAML_READER_ERROR) {
        int line, col;
        offset_to_linecol(c, p->problem_offset, p->encoding, &line, &col);
        if (p->problem_value != -1)
            return fail_at(c, line, col, CN_EPARSE, "YAML syntax error: %s (#x%X)", problem,
                           (unsigned)p->problem_value);
        return fail_at(c, line, col, CN_EPARSE, "YAML syntax error: %s", problem);
    }
    if (p->context != NULL)
        return fail_at(c, clamp_int(p->problem_mark.line + 1),
                       clamp_int(p->problem_mark.column + 1), CN_EPARSE,
                       "YAML syntax error: %s (%s at line %d, column %d)", problem, p->context,
                       clamp_int(p->context_mark.line + 1),
                       clamp_int(p->context_mark.column + 1));
    return fail_at(c, clamp_int(p->problem_mark.line + 1), clamp_int(p->problem_mark.column + 1),
                   CN_EPARSE, "YAML syntax error: %s", problem);
}

/* ---- scalar resolution ---------------------------------------------------- */

typedef enum { K_AUTO, K_STR, K_INT, K_FLOAT, K_BOOL, K_NULL } scalar_kind;

static bool word_in(const char *s, size_t n, const char *const *words)
{
    for (; *words != NULL; words++)
        if (strlen(*words) == n && memcmp(s, *words, n) == 0) return true;
    return false;
}

static bool is_null_word(const char *s, size_t n)
{
    static const char *const words[] = {"~", "null", "Null", "NULL", NULL};
    return n == 0 || word_in(s, n, words);
}

/* 1 true, 0 false, -1 not a YAML 1.1 boolean */
static int bool_word(const char *s, size_t n)
{
    static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes", "YES",
                                      "on", "On", "ON", NULL};
    static const char *const no[] = {"false", "False", "FALSE", "no", "No", "NO",
                                     "off", "Off", "OFF", NULL};
    if (word_in(s, n, yes)) return 1;
    if (word_in(s, n, no)) return 0;
    return -1;
}

static int digit_value(char ch)
{
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return 99;
}

/* strtod in the "C" locale whatever the process's locale says, on the text
 * with '_' separators removed. */
static double c_strtod(load_ctx *c, const char *s, size_t n, bool *oom)
{
    char small[64];
    char *buf = n < sizeof small ? small : malloc(n + 1);
    size_t i, j = 0;
    double v;

    if (buf == NULL) {
        *oom = true;
        return 0.0;
    }
    for (i = 0; i < n; i++)
        if (s[i] != '_') buf[j++] = s[i];
    buf[j] = '\0';
    if (!c->locale_tried) {
        c->locale_tried = true;
        c->c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    }
    if (c->c_locale != (locale_t)0) {
        locale_t old = uselocale(c->c_locale);
        v = strtod(buf, NULL);
        uselocale(old);
    } else {
        v = strtod(buf, NULL);
    }
    if (buf != small) free(buf);
    return v;
}

/* YAML 1.1 integer forms.  Returns 1 with *iv set, 2 with *dv set (out of
 * int64 range), 0 when the text is not an integer. */
static int parse_int(load_ctx *c, const char *s, size_t n, int64_t *iv, double *dv, bool *oom)
{
    size_t i = 0, start, ndigits = 0;
    unsigned base = 10;
    bool neg = false, over = false;
    uint64_t mag = 0;
    double approx = 0.0;

    if (i < n && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    if (i >= n) return 0;
    if (s[i] == '0' && i + 1 < n) {
        if (s[i + 1] == 'x') {
            base = 16;
            i += 2;
        } else if (s[i + 1] == 'o') {
            base = 8;
            i += 2;
        } else if (s[i + 1] == 'b') {
            base = 2;
            i += 2;
        } else {
            base = 8; /* YAML 1.1 "0755"; the leading 0 is a digit */
        }
    } else if (s[i] < '0' || s[i] > '9') {
        return 0; /* decimal must start with a digit, not '_' */
    }
    start = i;
    for (; i < n; i++) {
        unsigned d;
        if (s[i] == '_') continue;
        d = (unsigned)digit_value(s[i]);
        if (d >= base) return 0;
        ndigits++;
        if (mag > (UINT64_MAX - d) / base) over = true;
        mag = mag * base + d;
        approx = approx * base + d;
    }
    if (ndigits == 0) return 0;
    if (!over && (neg ? mag <= (uint64_t)INT64_MAX + 1 : mag <= (uint64_t)INT64_MAX)) {
        if (neg)
            *iv = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
        else
            *iv = (int64_t)mag;
        return 1;
    }
    /* Out of range: decimal goes through strtod for a correctly rounded
     * value; other bases are rare enough that the running sum will do. */
    if (base == 10) approx = c_strtod(c, s + start, n - start, oom);
    *dv = neg ? -approx : approx;
    return 2;
}

static size_t scan_digits(const char *s, size_t n, size_t i, bool underscores)
{
    while (i < n && ((s[i] >= '0' && s[i] <= '9') || (underscores && s[i] == '_'))) i++;
    return i;
}

/* Floats: [-+]? (D ('.' [0-9_]*)? | '.' D) ([eE] [-+]? [0-9]+)? with a dot
 * or an exponent (D = [0-9][0-9_]*), plus .inf/.nan spellings.  With
 * allow_int (for !!float) a bare D is accepted too.  Returns true and *dv. */
static bool parse_float(load_ctx *c, const char *s, size_t n, bool allow_int, double *dv,
                        bool *oom)
{
    static const char *const infs[] = {".inf", ".Inf", ".INF", NULL};
    static const char *const nans[] = {".nan", ".NaN", ".NAN", NULL};
    size_t i = 0, j;
    bool neg = false, dot = false, expo = false;

    if (word_in(s, n, nans)) {
        *dv = NAN;
        return true;
    }
    if (i < n && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    if (word_in(s + i, n - i, infs)) {
        *dv = neg ? -INFINITY : INFINITY;
        return true;
    }
    if (i < n && s[i] >= '0' && s[i] <= '9') {
        i = scan_digits(s, n, i + 1, true);
        if (i < n && s[i] == '.') {
            dot = true;
            i = scan_digits(s, n, i + 1, true);
        }
    } else if (i + 1 < n && s[i] == '.' && s[i + 1] >= '0' && s[i + 1] <= '9') {
        dot = true;
        i = scan_digits(s, n, i + 2, true);
    } else {
        return false;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        expo = true;
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) i++;
        j = scan_digits(s, n, i, false);
        if (j == i) return false;
        i = j;
    }
    if (i != n || (!dot && !expo && !allow_int)) return false;
    *dv = c_strtod(c, s, n, oom);
    return true;
}

/* Maps an event's tag to what it asks for; NULL tag means "resolve". */
static int scalar_kind_of(load_ctx *c, const yaml_event_t *ev, scalar_kind *kind)
{
    const char *tag = (const char *)ev->data.scalar.tag;
    static const struct {
        const char *name;
        scalar_kind kind;
    } tags[] = {{YAML_TAG_PREFIX "str", K_STR},     {YAML_TAG_PREFIX "int", K_INT},
                {YAML_TAG_PREFIX "float", K_FLOAT}, {YAML_TAG_PREFIX "bool", K_BOOL},
                {YAML_TAG_PREFIX "null", K_NULL}};
    size_t i;

    if (tag == NULL) {
        *kind = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE ? K_AUTO : K_STR;
        return 0;
    }
    if (strcmp(tag, "!") == 0) {
        *kind = K_STR;
        return 0;
    }
    for (i = 0; i < sizeof tags / sizeof tags[0]; i++) {
        if (strcmp(tag, tags[i].name) == 0) {
            *kind = tags[i].kind;
            return 0;
        }
    }
    {
        cn_buf b = CN_BUF_INIT;
        int rc;
        show_tag(&b, tag);
        rc = fail_mark(c, &ev->start_mark, "unsupported tag '%s' on a scalar",
                       b.data ? b.data : "");
        cn_buf_free(&b);
        return rc;
    }
}

static int tag_mismatch(load_ctx *c, const yaml_event_t *ev)
{
    cn_buf v = CN_BUF_INIT, t = CN_BUF_INIT;
    int rc;

    show_text(&v, (const char *)ev->data.scalar.value, ev->data.scalar.length);
    show_tag(&t, (const char *)ev->data.scalar.tag);
    rc = fail_mark(c, &ev->start_mark, "value '%s' does not match its tag %s",
                   v.data ? v.data : "", t.data ? t.data : "");
    cn_buf_free(&v);
    cn_buf_free(&t);
    return rc;
}

/* Builds the value of a scalar event; *out may be NULL (JSON null). */
static int resolve_scalar(load_ctx *c, const yaml_event_t *ev, json_object **out)
{
    const char *s = (const char *)ev->data.scalar.value;
    size_t n = ev->data.scalar.length;
    scalar_kind kind = K_STR; /* set by scalar_kind_of; quiets -O2 */
    int64_t iv;
    double dv;
    bool oom = false;
    int rc, r;

    *out = NULL;
    rc = scalar_kind_of(c, ev, &kind);
    if (rc) return rc;
    switch (kind) {
    case K_AUTO:
        if (is_null_word(s, n)) return 0;
        if ((r = bool_word(s, n)) >= 0) {
            *out = json_object_new_boolean(r);
            break;
        }
        if ((r = parse_int(c, s, n, &iv, &dv, &oom)) != 0) {
            *out = r == 1 ? json_object_new_int64(iv) : json_object_new_double(dv);
            break;
        }
        if (parse_float(c, s, n, false, &dv, &oom)) {
            *out = json_object_new_double(dv);
            break;
        }
        /* anything else is a string */
        /* fall through */
    case K_STR:
        if (n > (size_t)INT_MAX) return fail_mark(c, &ev->start_mark, "scalar too long");
        *out = json_object_new_string_len(s, (int)n);
        break;
    case K_INT:
        r = parse_int(c, s, n, &iv, &dv, &oom);
        if (r == 0) return tag_mismatch(c, ev);
        *out = r == 1 ? json_object_new_int64(iv) : json_object_new_double(dv);
        break;
    case K_FLOAT:
        if (!parse_float(c, s, n, true, &dv, &oom)) return tag_mismatch(c, ev);
        *out = json_object_new_double(dv);
        break;
    case K_BOOL:
        if ((r = bool_word(s, n)) < 0) return tag_mismatch(c, ev);
        *out = json_object_new_boolean(r);
        break;
    case K_NULL:
        if (!is_null_word(s, n)) return tag_mismatch(c, ev);
        return 0;
    }
    if (oom || *out == NULL) {
        json_object_put(*out);
        *out = NULL;
        return fail_oom(c);
    }
    if (put_mark(*out, clamp_int(ev->start_mark.line + 1),
                 clamp_int(ev->start_mark.column + 1)) != 0) {
        json_object_put(*out);
        *out = NULL;
        return fail_oom(c);
    }
    return 0;
}

/* ---- tree building ---------------------------------------------------------- */

static frame *top(load_ctx *c)
{
    return c->depth > 0 ? &c->stack[c->depth - 1] : NULL;
}

static bool wants_key(load_ctx *c)
{
    frame *f = top(c);
    return f != NULL && f->is_map && f->key == NULL;
}

static int count_nodes(load_ctx *c, size_t n, const yaml_mark_t *m)
{
    if (n > MAX_NODES || c->nodes > MAX_NODES - n)
        return fail_mark(c, m, "document too large: more than %u values (alias expansion?)",
                         MAX_NODES);
    c->nodes += n;
    return 0;
}

/* Gives v (owned) to the open collection, or makes it the root. */
static int attach(load_ctx *c, json_object *v)
{
    frame *f = top(c);

    if (f == NULL) {
        c->root = v;
        c->have_root = true;
        return 0;
    }
    if (!f->is_map) {
        if (json_object_array_add(f->node, v) != 0) {
            json_object_put(v);
            return fail_oom(c);
        }
        return 0;
    }
    if (f->nkeys == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 8;
        int *lines = realloc(f->key_lines, cap * sizeof *lines);
        if (lines == NULL) {
            json_object_put(v);
            return fail_oom(c);
        }
        f->key_lines = lines;
        f->cap = cap;
    }
    if (json_object_object_add(f->node, f->key, v) != 0) {
        json_object_put(v);
        return fail_oom(c);
    }
    f->key_lines[f->nkeys++] = f->key_line;
    free(f->key);
    f->key = NULL;
    return 0;
}

static int take_key(load_ctx *c, const char *s, size_t n, const yaml_mark_t *m)
{
    frame *f = top(c);
    json_object *dummy;

    if (memchr(s, '\0', n) != NULL) {
        cn_buf b = CN_BUF_INIT;
        int rc;
        show_text(&b, s, n);
        rc = fail_mark(c, m, "mapping key '%s' contains a NUL character", b.data ? b.data : "");
        cn_buf_free(&b);
        return rc;
    }
    if (json_object_object_get_ex(f->node, s, &dummy)) {
        cn_buf b = CN_BUF_INIT;
        size_t i = 0;
        int first = 0, rc;
        json_object_object_foreach(f->node, k, val) {
            (void)val;
            if (strcmp(k, s) == 0) {
                first = i < f->nkeys ? f->key_lines[i] : 0;
                break;
            }
            i++;
        }
        show_text(&b, s, n);
        rc = fail_mark(c, m, "duplicate key '%s' (first at line %d)", b.data ? b.data : "",
                       first);
        cn_buf_free(&b);
        return rc;
    }
    f->key = cn_strndup(s, n);
    if (f->key == NULL) return fail_oom(c);
    f->key_line = clamp_int(m->line + 1);
    return 0;
}

static int add_anchor(load_ctx *c, const char *name, json_object *node, bool pending,
                      const char *text, size_t text_len, long *index)
{
    anchor *a;
    json_object *idx;

    if (c->anchor_index == NULL) {
        c->anchor_index = json_object_new_object();
        if (c->anchor_index == NULL) return fail_oom(c);
    }
    if (c->nanchors == c->anchors_cap) {
        size_t cap = c->anchors_cap ? c->anchors_cap * 2 : 8;
        anchor *grown = realloc(c->anchors, cap * sizeof *grown);
        if (grown == NULL) return fail_oom(c);
        c->anchors = grown;
        c->anchors_cap = cap;
    }
    a = &c->anchors[c->nanchors];
    memset(a, 0, sizeof *a);
    a->name = cn_strdup(name);
    if (text != NULL) {
        a->text = cn_strndup(text, text_len);
        a->text_len = text_len;
    }
    idx = json_object_new_int64((int64_t)c->nanchors);
    if (a->name == NULL || (text != NULL && a->text == NULL) || idx == NULL ||
        json_object_object_add(c->anchor_index, name, idx) != 0) {
        free(a->name);
        free(a->text);
        json_object_put(idx);
        return fail_oom(c);
    }
    a->node = json_object_get(node);
    a->pending = pending;
    a->nodes = 1;
    if (index) *index = (long)c->nanchors;
    c->nanchors++;
    return 0;
}

static anchor *find_anchor(load_ctx *c, const char *name)
{
    json_object *idx;

    if (c->anchor_index == NULL || !json_object_object_get_ex(c->anchor_index, name, &idx))
        return NULL;
    return &c->anchors[json_object_get_int64(idx)];
}

/* Copies a finished subtree, marks included.  Depth is bounded by
 * MAX_DEPTH, so recursion is safe. */
static int copy_tree(json_object *src, json_object **dst)
{
    json_object *d = NULL;
    const mark_data *md;

    *dst = NULL;
    switch (json_object_get_type(src)) {
    case json_type_null:
        return 0;
    case json_type_boolean:
        d = json_object_new_boolean(json_object_get_boolean(src));
        break;
    case json_type_double:
        d = json_object_new_double(json_object_get_double(src));
        break;
    case json_type_int:
        d = json_object_new_int64(json_object_get_int64(src));
        break;
    case json_type_string:
        d = json_object_new_string_len(json_object_get_string(src),
                                       json_object_get_string_len(src));
        break;
    case json_type_array: {
        size_t i, n = json_object_array_length(src);
        d = json_object_new_array_ext(n > 0 && n < INT_MAX ? (int)n : 1);
        for (i = 0; d != NULL && i < n; i++) {
            json_object *item;
            if (copy_tree(json_object_array_get_idx(src, i), &item) != 0 ||
                json_object_array_add(d, item) != 0) {
                json_object_put(item);
                json_object_put(d);
                d = NULL;
            }
        }
        break;
    }
    case json_type_object:
        d = json_object_new_object();
        if (d == NULL) break;
        {
            json_object_object_foreach(src, key, val) {
                json_object *item;
                if (copy_tree(val, &item) != 0 || json_object_object_add(d, key, item) != 0) {
                    json_object_put(item);
                    json_object_put(d);
                    d = NULL;
                    break;
                }
            }
        }
        break;
    }
    if (d == NULL) return -1;
    md = get_mark(src);
    if (md != NULL && put_mark(d, md->line, md->col) != 0) {
        json_object_put(d);
        return -1;
    }
    *dst = d;
    return 0;
}

static void raise_height(load_ctx *c, int h)
{
    frame *f = top(c);
    if (f != NULL && h > f->height) f->height = h;
}

static int on_scalar(load_ctx *c, const yaml_event_t *ev)
{
    json_object *v;
    const char *anchor_name = (const char *)ev->data.scalar.anchor;
    int rc;

    /* A document holding nothing but "---" reads like an empty file. */
    if (c->depth == 0 && ev->data.scalar.length == 0 && ev->data.scalar.tag == NULL &&
        anchor_name == NULL && ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
        return 0;
    rc = count_nodes(c, 1, &ev->start_mark);
    if (rc) return rc;
    rc = resolve_scalar(c, ev, &v);
    if (rc) return rc;
    if (anchor_name != NULL) {
        rc = add_anchor(c, anchor_name, v, false, (const char *)ev->data.scalar.value,
                        ev->data.scalar.length, NULL);
        if (rc) {
            json_object_put(v);
            return rc;
        }
    }
    if (wants_key(c)) {
        json_object_put(v); /* keys keep their text; the value only served the tag check */
        return take_key(c, (const char *)ev->data.scalar.value, ev->data.scalar.length,
                        &ev->start_mark);
    }
    return attach(c, v);
}

static int on_alias(load_ctx *c, const yaml_event_t *ev)
{
    const char *name = (const char *)ev->data.alias.anchor;
    anchor *a = find_anchor(c, name);
    json_object *copy;
    int rc;

    if (a == NULL) return fail_mark(c, &ev->start_mark, "alias '*%s' to an unknown anchor", name);
    if (a->pending)
        return fail_mark(c, &ev->start_mark,
                         "alias '*%s' refers to a node that contains it (recursive alias)", name);
    if (wants_key(c)) {
        if (a->text == NULL)
            return fail_mark(c, &ev->start_mark,
                             "mapping key must be a scalar, but alias '*%s' is a collection",
                             name);
        rc = count_nodes(c, 1, &ev->start_mark);
        return rc ? rc : take_key(c, a->text, a->text_len, &ev->start_mark);
    }
    if (c->depth + a->height > MAX_DEPTH)
        return fail_mark(c, &ev->start_mark,
                         "alias '*%s' expands to nesting deeper than %d levels", name, MAX_DEPTH);
    rc = count_nodes(c, a->nodes, &ev->start_mark);
    if (rc) return rc;
    if (copy_tree(a->node, &copy) != 0) return fail_oom(c);
    raise_height(c, a->height);
    return attach(c, copy);
}

static int on_collection_start(load_ctx *c, const yaml_event_t *ev, bool is_map)
{
    const char *tag = (const char *)(is_map ? ev->data.mapping_start.tag
                                            : ev->data.sequence_start.tag);
    const char *anchor_name = (const char *)(is_map ? ev->data.mapping_start.anchor
                                                    : ev->data.sequence_start.anchor);
    const char *what = is_map ? "mapping" : "sequence";
    json_object *node;
    frame *f;
    size_t first;
    int rc;

    if (wants_key(c))
        return fail_mark(c, &ev->start_mark, "mapping key must be a scalar, not a %s", what);
    if (c->depth >= MAX_DEPTH)
        return fail_mark(c, &ev->start_mark, "nesting deeper than %d levels", MAX_DEPTH);
    if (tag != NULL && strcmp(tag, "!") != 0 &&
        strcmp(tag, is_map ? YAML_TAG_PREFIX "map" : YAML_TAG_PREFIX "seq") != 0) {
        cn_buf b = CN_BUF_INIT;
        show_tag(&b, tag);
        rc = fail_mark(c, &ev->start_mark, "unsupported tag '%s' on a %s", b.data ? b.data : "",
                       what);
        cn_buf_free(&b);
        return rc;
    }
    first = c->nodes;
    rc = count_nodes(c, 1, &ev->start_mark);
    if (rc) return rc;
    node = is_map ? json_object_new_object() : json_object_new_array();
    if (node == NULL) return fail_oom(c);
    if (put_mark(node, clamp_int(ev->start_mark.line + 1),
                 clamp_int(ev->start_mark.column + 1)) != 0) {
        json_object_put(node);
        return fail_oom(c);
    }
    /* Attach now so that the tree owns it whatever happens next. */
    rc = attach(c, node);
    if (rc) return rc;
    f = &c->stack[c->depth++];
    memset(f, 0, sizeof *f);
    f->node = node;
    f->is_map = is_map;
    f->first_node = first;
    f->anchor = -1;
    if (anchor_name != NULL) return add_anchor(c, anchor_name, node, true, NULL, 0, &f->anchor);
    return 0;
}

static void drop_frame(frame *f)
{
    free(f->key);
    free(f->key_lines);
    f->key = NULL;
    f->key_lines = NULL;
}

static void on_collection_end(load_ctx *c)
{
    frame *f = &c->stack[--c->depth];
    int h = f->height + 1;

    if (f->anchor >= 0) {
        anchor *a = &c->anchors[f->anchor];
        a->pending = false;
        a->nodes = c->nodes - f->first_node;
        a->height = h;
    }
    drop_frame(f);
    raise_height(c, h);
}

static void free_ctx(load_ctx *c)
{
    size_t i;

    while (c->depth > 0) drop_frame(&c->stack[--c->depth]);
    for (i = 0; i < c->nanchors; i++) {
        free(c->anchors[i].name);
        free(c->anchors[i].text);
        json_object_put(c->anchors[i].node);
    }
    free(c->anchors);
    json_object_put(c->anchor_index);
    if (c->c_locale != (locale_t)0) freelocale(c->c_locale);
}

static int run_parser(load_ctx *c)
{
    yaml_parser_t parser;
    yaml_event_t ev;
    bool done = false;
    int docs = 0, rc = 0;

    if (!yaml_parser_initialize(&parser)) return fail_oom(c);
    yaml_parser_set_input_string(&parser, c->input, c->input_len);
    while (!done && rc == 0) {
        if (!yaml_parser_parse(&parser, &ev)) {
            rc = syntax_error(c, &parser);
            break;
        }
        switch (ev.type) {
        case YAML_DOCUMENT_START_EVENT:
            if (++docs > 1)
                rc = fail_mark(c, &ev.start_mark,
                               "a second YAML document starts here; only one is allowed");
            break;
        case YAML_SCALAR_EVENT:
            rc = on_scalar(c, &ev);
            break;
        case YAML_ALIAS_EVENT:
            rc = on_alias(c, &ev);
            break;
        case YAML_SEQUENCE_START_EVENT:
            rc = on_collection_start(c, &ev, false);
            break;
        case YAML_MAPPING_START_EVENT:
            rc = on_collection_start(c, &ev, true);
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            on_collection_end(c);
            break;
        case YAML_STREAM_END_EVENT:
        case YAML_NO_EVENT:
            done = true;
            break;
        default:
            break;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&parser);
    return rc;
}

int cn_yaml_load_string(const char *text, size_t len, const char *origin, json_object **out)
{
    load_ctx *c;
    int rc;

    if (out == NULL) return cn_error_set(CN_EINVAL, "cn_yaml_load_string: out is NULL");
    *out = NULL;
    if (origin == NULL) origin = "<string>";
    if (text == NULL && len > 0)
        return cn_error_set(CN_EINVAL, "%s: no text given for %zu bytes", origin, len);
    c = calloc(1, sizeof *c);
    if (c == NULL) return cn_error_set(CN_ENOMEM, "%s: out of memory", origin);
    c->origin = origin;
    c->input = (const unsigned char *)(text ? text : ""); /* libyaml wants non-NULL */
    c->input_len = len;
    rc = run_parser(c);
    free_ctx(c);
    if (rc == 0 && !c->have_root) {
        c->root = json_object_new_object();
        if (c->root == NULL) rc = cn_error_set(CN_ENOMEM, "%s: out of memory", origin);
    }
    if (rc != 0) {
        json_object_put(c->root);
        free(c);
        return rc;
    }
    *out = c->root;
    free(c);
    return 0;
}

int cn_yaml_load_file(const char *path, json_object **out)
{
    char *data;
    size_t len;
    int rc;

    if (out == NULL) return cn_error_set(CN_EINVAL, "cn_yaml_load_file: out is NULL");
    *out = NULL;
    if (path == NULL) return cn_error_set(CN_EINVAL, "cn_yaml_load_file: path is NULL");
    rc = cn_file_read(path, MAX_FILE_BYTES, &data, &len);
    if (rc != 0) return rc; /* cn_file_read named the path */
    rc = cn_yaml_load_string(data, len, path, out);
    free(data);
    return rc;
}
