/* SPDX-License-Identifier: Apache-2.0 */
/* Type hints: coercion of arguments supplied by a model or a caller. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cn_types_impl.h"

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
            cn_type__put_quoted(&b, t->values.items[i]);
        }
    } else {
        cn_type__write(&b, t);
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
    cn_type__show_text(s, len, SHOW_VALUE_MAX, out);
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
    while (len > 0 && cn_type__is_space(*s)) s++, len--;
    while (len > 0 && cn_type__is_space(s[len - 1])) len--;
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
    while (cn_type__is_digit(s[i])) i++, before++;
    if (s[i] == '.') {
        frac = true;
        i++;
        while (cn_type__is_digit(s[i])) i++, after++;
    }
    if (before + after == 0) return false;
    if (s[i] == 'e' || s[i] == 'E') {
        size_t d = 0;
        exp = true;
        i++;
        if (s[i] == '+' || s[i] == '-') i++;
        while (cn_type__is_digit(s[i])) i++, d++;
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
    if (v == NULL) return cn_type__oom("coercing a value");
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
        while (len > 0 && cn_type__is_space(*s)) s++, len--;
        while (len > 0 && cn_type__is_space(s[len - 1])) len--;
        if (cn_type__ascii_ieq(s, len, "true") || cn_type__ascii_ieq(s, len, "yes") || cn_type__ascii_ieq(s, len, "1"))
            return made(json_object_new_boolean(1), out);
        if (cn_type__ascii_ieq(s, len, "false") || cn_type__ascii_ieq(s, len, "no") || cn_type__ascii_ieq(s, len, "0"))
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

    while (i < len && cn_type__is_space(s[i])) i++;
    if (i == len || s[i] != open || len - i > INT_MAX) return NULL;
    tok = json_tokener_new();
    if (tok == NULL) return NULL;
    v = json_tokener_parse_ex(tok, s + i, (int)(len - i));
    end = i + json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    if (v == NULL) return NULL;
    while (end < len && cn_type__is_space(s[end])) end++;
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

    if (arr == NULL) return cn_type__oom("coercing a list");
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
            return cn_type__oom("coercing a list");
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
        return cn_type__oom("coercing a list");
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
    if (k == NULL) return cn_type__oom("coercing a dict");
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

    if (obj == NULL) return cn_type__oom("coercing a dict");
    for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
        const char *name = json_object_iter_peek_name(&it);
        json_object *e = json_object_iter_peek_value(&it), *v = NULL;
        size_t mark = path->len;
        int rc = check_key(t->key, path, name);

        if (rc == 0) {
            cn_buf_putc(path, '[');
            cn_type__put_quoted(path, name);
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
            return cn_type__oom("coercing a dict");
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
        cn_type__put_quoted(&path, arg_name);
    } else {
        cn_buf_puts(&path, "value");
    }
    if (path.oom) {
        cn_buf_free(&path);
        return cn_type__oom("coercing a value");
    }
    rc = coerce(t, &path, in, out);
    cn_buf_free(&path);
    return rc;
}

