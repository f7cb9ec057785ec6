/* cn_json services: json-c values behind an opaque type, so plugins never
 * see json-c. */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "../util/cn_util.h"
#include "cn_host.h"

#define J(v) ((json_object *)(v))
#define CJ(v) ((cn_json *)(v))

static cn_json *hj_parse(const char *text, cn_error *err)
{
    enum json_tokener_error jerr = json_tokener_success;
    json_tokener *tok;
    json_object *o;
    size_t len;

    if (text == NULL) {
        cn_error_fill(err, CN_EINVAL, "JSON parse: no text given");
        return NULL;
    }
    len = strlen(text);
    tok = json_tokener_new();
    if (tok == NULL) {
        cn_error_fill(err, CN_ENOMEM, "JSON parse: out of memory");
        return NULL;
    }
    o = json_tokener_parse_ex(tok, text, (int)(len > 0x7fffffff ? 0x7fffffff : len));
    jerr = json_tokener_get_error(tok);
    if (jerr == json_tokener_continue) jerr = json_tokener_error_parse_eof;
    if (jerr == json_tokener_success && json_tokener_get_parse_end(tok) < len) {
        /* trailing non-blank text */
        const char *rest = text + json_tokener_get_parse_end(tok);
        while (*rest == ' ' || *rest == '\n' || *rest == '\t' || *rest == '\r') rest++;
        if (*rest) {
            cn_error_fill(err, CN_EPARSE, "JSON parse: unexpected text after the value at offset %zu",
                          (size_t)(rest - text));
            json_object_put(o);
            json_tokener_free(tok);
            return NULL;
        }
    }
    if (jerr != json_tokener_success) {
        cn_error_fill(err, CN_EPARSE, "JSON parse: %s at offset %zu", json_tokener_error_desc(jerr),
                      json_tokener_get_parse_end(tok));
        json_tokener_free(tok);
        return NULL;
    }
    json_tokener_free(tok);
    return CJ(o);
}

static char *hj_serialize(const cn_json *v, int flags)
{
    int jf = JSON_C_TO_STRING_NOSLASHESCAPE |
             ((flags & CN_JSON_PRETTY) ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED
                                       : JSON_C_TO_STRING_PLAIN);
    return cn_strdup(json_object_to_json_string_ext(J(v), jf));
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
