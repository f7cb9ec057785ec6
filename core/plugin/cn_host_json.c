/* SPDX-License-Identifier: Apache-2.0 */
/* cn_json services: json-c values behind an opaque type, so plugins never
 * see json-c. */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "../util/cn_util.h"
#include "cn_host.h"

#define J(v) ((json_object *)(v))
#define CJ(v) ((cn_json *)(v))

int cn_json_parse(const char *text, const char *what, json_object **out)
{
    enum json_tokener_error jerr;
    json_tokener *tok;
    json_object *o;
    size_t len, end;

    *out = NULL;
    if (text == NULL) return cn_error_set(CN_EINVAL, "%s: no JSON text given", what);
    len = strlen(text);
    if (len >= 0x7fffffff) return cn_error_set(CN_EINVAL, "%s: JSON text too large", what);
    tok = json_tokener_new();
    if (tok == NULL) return cn_error_set(CN_ENOMEM, "%s: out of memory", what);
    /* The length includes the NUL so that a number or literal at the very
     * end ("42", "true") is known to be complete. */
    o = json_tokener_parse_ex(tok, text, (int)len + 1);
    jerr = json_tokener_get_error(tok);
    end = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    if (jerr == json_tokener_continue) jerr = json_tokener_error_parse_eof;
    if (jerr != json_tokener_success) {
        json_object_put(o);
        return cn_error_set(CN_EPARSE, "%s is not valid JSON: %s at offset %zu", what,
                            json_tokener_error_desc(jerr), end > len ? len : end);
    }
    /* json-c stops after the first value: anything but blanks after it is
     * an error, not something to drop silently. */
    for (const char *rest = text + (end > len ? len : end); *rest; rest++) {
        if (*rest != ' ' && *rest != '\n' && *rest != '\t' && *rest != '\r') {
            json_object_put(o);
            return cn_error_set(CN_EPARSE, "%s is not valid JSON: unexpected text after the "
                                           "value at offset %zu", what, (size_t)(rest - text));
        }
    }
    *out = o;
    return 0;
}

const char *cn_json_str_member(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v)
               : NULL;
}

long long cn_json_int_member(json_object *o, const char *key, long long dflt)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_int)
               ? (long long)json_object_get_int64(v)
               : dflt;
}

static cn_json *hj_parse(const char *text, cn_error *err)
{
    json_object *o = NULL;
    if (cn_json_parse(text, "the text", &o) < 0) cn_error_export(err);
    return CJ(o);
}

static char *hj_serialize(const cn_json *v, int flags)
{
    int jf = JSON_C_TO_STRING_NOSLASHESCAPE |
             ((flags & CN_JSON_PRETTY) ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED
                                       : JSON_C_TO_STRING_PLAIN);
    return cn_json_text(J(v), jf);
}

static cn_json *hj_get(cn_json *v)
{
    return CJ(json_object_get(J(v)));
}

static void hj_put(cn_json *v)
{
    json_object_put(J(v));
}

static cn_json_type hj_type(const cn_json *v)
{
    switch (json_object_get_type(J(v))) {
    case json_type_null: return CN_JSON_NULL;
    case json_type_boolean: return CN_JSON_BOOL;
    case json_type_int: return CN_JSON_INT;
    case json_type_double: return CN_JSON_DOUBLE;
    case json_type_string: return CN_JSON_STRING;
    case json_type_array: return CN_JSON_ARRAY;
    case json_type_object: return CN_JSON_OBJECT;
    }
    return CN_JSON_NULL;
}

static cn_json *hj_object_get(const cn_json *o, const char *key)
{
    json_object *v = NULL;
    if (!json_object_is_type(J(o), json_type_object)) return NULL;
    json_object_object_get_ex(J(o), key, &v);
    return CJ(v);
}

static size_t hj_object_length(const cn_json *o)
{
    return json_object_is_type(J(o), json_type_object) ? (size_t)json_object_object_length(J(o)) : 0;
}

static int hj_object_foreach(const cn_json *o, cn_json_foreach_fn fn, void *data)
{
    if (!json_object_is_type(J(o), json_type_object)) return 0;
    json_object_object_foreach(J(o), key, val) {
        int rc = fn(key, CJ(val), data);
        if (rc != 0) return rc;
    }
    return 0;
}

static size_t hj_array_length(const cn_json *a)
{
    return json_object_is_type(J(a), json_type_array) ? json_object_array_length(J(a)) : 0;
}

static cn_json *hj_array_get(const cn_json *a, size_t i)
{
    if (!json_object_is_type(J(a), json_type_array) || i >= json_object_array_length(J(a)))
        return NULL;
    return CJ(json_object_array_get_idx(J(a), i));
}

static const char *hj_get_string(const cn_json *v)
{
    return json_object_is_type(J(v), json_type_string) ? json_object_get_string(J(v)) : NULL;
}

static int64_t hj_get_int(const cn_json *v)
{
    if (json_object_is_type(J(v), json_type_int) || json_object_is_type(J(v), json_type_double))
        return json_object_get_int64(J(v));
    return 0;
}

static double hj_get_double(const cn_json *v)
{
    if (json_object_is_type(J(v), json_type_int) || json_object_is_type(J(v), json_type_double))
        return json_object_get_double(J(v));
    return 0.0;
}

static int hj_get_bool(const cn_json *v)
{
    return json_object_get_boolean(J(v)) ? 1 : 0;
}

static cn_json *hj_new_object(void) { return CJ(json_object_new_object()); }
static cn_json *hj_new_array(void) { return CJ(json_object_new_array()); }
static cn_json *hj_new_string(const char *s) { return s ? CJ(json_object_new_string(s)) : NULL; }
static cn_json *hj_new_string_len(const char *s, size_t n)
{
    if (s == NULL || n > 0x7fffffff) return NULL;
    return CJ(json_object_new_string_len(s, (int)n));
}
static cn_json *hj_new_int(int64_t v) { return CJ(json_object_new_int64(v)); }
static cn_json *hj_new_double(double v) { return CJ(json_object_new_double(v)); }
static cn_json *hj_new_bool(int v) { return CJ(json_object_new_boolean(v != 0)); }
static cn_json *hj_new_null(void) { return NULL; }

static int hj_object_set(cn_json *o, const char *key, cn_json *v)
{
    if (!json_object_is_type(J(o), json_type_object) || key == NULL) {
        json_object_put(J(v));
        return CN_EINVAL;
    }
    if (json_object_object_add(J(o), key, J(v)) != 0) {
        json_object_put(J(v));
        return CN_ENOMEM;
    }
    return 0;
}

static int hj_array_append(cn_json *a, cn_json *v)
{
    if (!json_object_is_type(J(a), json_type_array)) {
        json_object_put(J(v));
        return CN_EINVAL;
    }
    if (json_object_array_add(J(a), J(v)) != 0) {
        json_object_put(J(v));
        return CN_ENOMEM;
    }
    return 0;
}

static const cn_json_services json_services = {
    (uint32_t)sizeof(cn_json_services),
    hj_parse, hj_serialize, hj_get, hj_put,
    hj_type, hj_object_get, hj_object_length, hj_object_foreach,
    hj_array_length, hj_array_get, hj_get_string, hj_get_int, hj_get_double, hj_get_bool,
    hj_new_object, hj_new_array, hj_new_string, hj_new_string_len, hj_new_int, hj_new_double,
    hj_new_bool, hj_new_null, hj_object_set, hj_array_append,
};

const cn_json_services *cn_host_json_services(void)
{
    return &json_services;
}

json_object *cn_json_strv(const cn_strv *v)
{
    json_object *a = json_object_new_array();
    for (size_t i = 0; a != NULL && v != NULL && i < v->len; i++) {
        json_object *s = json_object_new_string(v->items[i]);
        if (s == NULL || json_object_array_add(a, s) != 0) {
            json_object_put(s);
            json_object_put(a);
            return NULL;
        }
    }
    return a;
}
