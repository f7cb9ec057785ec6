/* SPDX-License-Identifier: Apache-2.0 */
/* Type hints: JSON schema for tool parameters, and dataflow compatibility
 * between one skill's output and another's input. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cn_types_impl.h"

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
    case CN_T_OPTIONAL: {
        /* None is accepted (it stands for "not given"), so the schema
         * says so: the inner type's "type" gains "null", and so does its
         * enum */
        json_object *ty = NULL, *both, *en = NULL;
        int rc = schema_fill(o, t->elem);
        if (rc < 0) return rc;
        if (!json_object_object_get_ex(o, "type", &ty) || !json_object_is_type(ty, json_type_string)) return 0;
        if ((both = json_object_new_array()) == NULL) return CN_ENOMEM;
        json_object_array_add(both, json_object_get(ty));
        json_object_array_add(both, json_object_new_string("null"));
        json_object_object_add(o, "type", both);
        if (json_object_object_get_ex(o, "enum", &en) && en != NULL) json_object_array_add(en, NULL);
        return 0;
    }
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
        cn_type__oom("building a JSON schema");
        return NULL;
    }
    if (schema_fill(o, t) < 0) {
        json_object_put(o);
        cn_type__oom("building a JSON schema");
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
    cn_type__write(d, t);
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
                    cn_type__put_quoted(d, f->values.items[i]);
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
        cn_type__write(d, f);
        cn_buf_puts(d, " is not ");
        cn_type__write(d, t);
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
        cn_type__write(&msg, from);
        cn_buf_puts(&msg, " does not fit ");
        cn_type__write(&msg, to);
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

