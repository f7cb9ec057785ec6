/* SPDX-License-Identifier: Apache-2.0 */
/* Skill metadata: validation of a config tree (from config.yaml or from
 * JSON given in process) into cn_skill_meta, and back to JSON. */
#include "cn_meta.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cn_yaml.h"
#include "cn_host.h"

#define SKILL_DOC_MAX (1024 * 1024)

/* Validation context: where the tree came from, for messages. */
typedef struct vctx {
    const char *origin;
    cn_skill_meta *meta;
} vctx;

/* "origin:L:C: field: message" using the mark of `at` when it has one. */
static int verr(const vctx *v, json_object *at, const char *field, const char *fmt, ...)
    CN_PRINTF(4, 5);
static int verr(const vctx *v, json_object *at, const char *field, const char *fmt, ...)
{
    cn_buf b = CN_BUF_INIT;
    int line, col, rc;
    va_list ap;

    if (cn_yaml_mark(at, &line, &col) == 0)
        cn_buf_printf(&b, "%s:%d:%d: ", v->origin, line, col);
    else
        cn_buf_printf(&b, "%s: ", v->origin);
    if (field) cn_buf_printf(&b, "%s: ", field);
    va_start(ap, fmt);
    cn_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    rc = cn_error_set(CN_EPARSE, "%s", b.data ? b.data : "invalid skill metadata");
    cn_buf_free(&b);
    return rc;
}

static const char *jtype_name(json_object *o)
{
    switch (json_object_get_type(o)) {
    case json_type_null: return "null";
    case json_type_boolean: return "a boolean";
    case json_type_int: return "an integer";
    case json_type_double: return "a number";
    case json_type_string: return "a string";
    case json_type_array: return "a list";
    case json_type_object: return "a mapping";
    }
    return "a value";
}

static int get_string(const vctx *v, json_object *parent, json_object *o, const char *field,
                      bool allow_null, char **out)
{
    *out = NULL;
    if (o == NULL) {
        if (allow_null) return 0;
        return verr(v, parent, field, "expected a string, got null");
    }
    /* Numbers are accepted where a string is wanted (version: 1.2). */
    if (json_object_is_type(o, json_type_string) || json_object_is_type(o, json_type_int) ||
        json_object_is_type(o, json_type_double)) {
        *out = cn_strdup(json_object_get_string(o));
        return *out ? 0 : cn_error_set(CN_ENOMEM, "out of memory");
    }
    return verr(v, o, field, "expected a string, got %s", jtype_name(o));
}

static int get_bool(const vctx *v, json_object *o, const char *field, bool *out)
{
    if (!json_object_is_type(o, json_type_boolean))
        return verr(v, o, field, "expected true or false, got %s '%s'", jtype_name(o),
                    json_object_get_string(o));
    *out = json_object_get_boolean(o);
    return 0;
}

static int get_number(const vctx *v, json_object *o, const char *field, double *out)
{
    if (!json_object_is_type(o, json_type_int) && !json_object_is_type(o, json_type_double))
        return verr(v, o, field, "expected a number, got %s", jtype_name(o));
    *out = json_object_get_double(o);
    return 0;
}

/* A relative path of the example repository: no '..' component, not
 * absolute, no empty component. */
static bool example_path_ok(const char *p)
{
    const char *s = p;
    if (*p == '\0' || *p == '/') return false;
    while (*s) {
        const char *e = strchr(s, '/');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n == 0 || (n == 2 && s[0] == '.' && s[1] == '.')) return false;
        s += n;
        if (*s == '/') s++;
    }
    return true;
}

static int check_example(const vctx *v, json_object *ex, size_t i)
{
    char field[48];
    json_object *args = NULL, *files = NULL, *expect = NULL, *x;

    snprintf(field, sizeof field, "examples[%zu]", i);
    if (!json_object_is_type(ex, json_type_object))
        return verr(v, ex, field, "expected a mapping (args, and optionally name, files, expect)");
    json_object_object_foreach(ex, k, val) {
        if (strcmp(k, "args") == 0) args = val;
        else if (strcmp(k, "files") == 0) files = val;
        else if (strcmp(k, "expect") == 0) expect = val;
        else if (strcmp(k, "name") == 0) {
            if (!json_object_is_type(val, json_type_string))
                return verr(v, val, field, "name must be a string");
        } else
            return verr(v, val, field, "unknown key '%s' (args, name, files, expect)", k);
    }
    if (!json_object_is_type(args, json_type_object))
        return verr(v, args ? args : ex, field, "args must be a mapping of the skill's inputs");
    if (files != NULL) {
        if (!json_object_is_type(files, json_type_object))
            return verr(v, files, field, "files must be a mapping of relative path to file text");
        json_object_object_foreach(files, path, text) {
            if (!example_path_ok(path))
                return verr(v, text, field, "file '%s': a path inside the example repository, without '..'", path);
            if (!json_object_is_type(text, json_type_string))
                return verr(v, text, field, "file '%s': its text must be a string", path);
        }
    }
    if (expect != NULL) {
        if (!json_object_is_type(expect, json_type_object))
            return verr(v, expect, field, "expect must be a mapping (contains, error)");
        json_object_object_foreach(expect, k2, val2) {
            if (strcmp(k2, "contains") == 0) {
                if (!json_object_is_type(val2, json_type_array))
                    return verr(v, val2, field, "expect.contains must be a list of strings");
                for (size_t j = 0; j < json_object_array_length(val2); j++)
                    if (!json_object_is_type((x = json_object_array_get_idx(val2, j)), json_type_string))
                        return verr(v, x ? x : val2, field, "expect.contains[%zu] must be a string", j);
            } else if (strcmp(k2, "error") == 0) {
                if (!json_object_is_type(val2, json_type_boolean))
                    return verr(v, val2, field, "expect.error must be true or false");
            } else
                return verr(v, val2, field, "unknown key expect.%s (contains, error)", k2);
        }
    }
    return 0;
}

static int check_examples(const vctx *v, json_object *value)
{
    int rc;
    if (!json_object_is_type(value, json_type_array))
        return verr(v, value, "examples", "expected a list of examples");
    for (size_t i = 0; i < json_object_array_length(value); i++)
        if ((rc = check_example(v, json_object_array_get_idx(value, i), i)) < 0) return rc;
    return 0;
}

static int get_strv(const vctx *v, json_object *o, const char *field, cn_strv *out)
{
    if (o == NULL) return 0;
    if (json_object_is_type(o, json_type_string)) return cn_strv_push(out, json_object_get_string(o));
    if (!json_object_is_type(o, json_type_array))
        return verr(v, o, field, "expected a list of strings, got %s", jtype_name(o));
    for (size_t i = 0; i < json_object_array_length(o); i++) {
        json_object *e = json_object_array_get_idx(o, i);
        char name[128];
        snprintf(name, sizeof name, "%s[%zu]", field, i);
        if (!json_object_is_type(e, json_type_string))
            return verr(v, e ? e : o, name, "expected a string, got %s", jtype_name(e));
        int rc = cn_strv_push(out, json_object_get_string(e));
        if (rc < 0) return rc;
    }
    return 0;
}

bool cn_skill_id_valid(const char *id)
{
    size_t n;
    if (id == NULL || *id == '\0') return false;
    n = strlen(id);
    if (n > 64) return false;
    if (!(isalnum((unsigned char)id[0]) || id[0] == '_')) return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)id[i];
        if (!(isalnum(c) || c == '_' || c == '-' || c == '.')) return false;
    }
    return true;
}

char *cn_skill_symbol_name(const char *id)
{
    cn_buf b = CN_BUF_INIT;
    cn_buf_puts(&b, CN_SKILL_SYMBOL_PREFIX);
    for (const char *p = id; *p; p++)
        cn_buf_putc(&b, (isalnum((unsigned char)*p) || *p == '_') ? *p : '_');
    return cn_buf_steal(&b);
}

static const struct {
    const char *name;
    cn_skill_type type;
} skill_types[] = {
    {"retrieval", CN_SKILL_RETRIEVAL}, {"retrieve", CN_SKILL_RETRIEVAL},
    {"expand", CN_SKILL_EXPAND},       {"expansion", CN_SKILL_EXPAND},
    {"rerank", CN_SKILL_RERANK},       {"transform", CN_SKILL_TRANSFORM},
    {"custom", CN_SKILL_CUSTOM},
};

const char *cn_skill_type_name(cn_skill_type t)
{
    switch (t) {
    case CN_SKILL_RETRIEVAL: return "retrieval";
    case CN_SKILL_EXPAND: return "expand";
    case CN_SKILL_RERANK: return "rerank";
    case CN_SKILL_TRANSFORM: return "transform";
    case CN_SKILL_CUSTOM: return "custom";
    }
    return "custom";
}

int cn_skill_type_parse(const char *s, cn_skill_type *out)
{
    for (size_t i = 0; i < sizeof skill_types / sizeof skill_types[0]; i++) {
        if (strcasecmp(s, skill_types[i].name) == 0) {
            *out = skill_types[i].type;
            return 0;
        }
    }
    return CN_EINVAL;
}

const char *cn_cost_name(cn_cost c)
{
    switch (c) {
    case CN_COST_LOW: return "low";
    case CN_COST_MEDIUM: return "medium";
    case CN_COST_HIGH: return "high";
    }
    return "medium";
}

int cn_cost_parse(const char *s, cn_cost *out)
{
    if (strcasecmp(s, "low") == 0) *out = CN_COST_LOW;
    else if (strcasecmp(s, "medium") == 0) *out = CN_COST_MEDIUM;
    else if (strcasecmp(s, "high") == 0) *out = CN_COST_HIGH;
    else return CN_EINVAL;
    return 0;
}

static int parse_input(const vctx *v, json_object *o, size_t idx, cn_input_spec *in)
{
    char field[160];
    json_object *val;
    int rc;

    snprintf(field, sizeof field, "inputs[%zu]", idx);
    if (!json_object_is_type(o, json_type_object))
        return verr(v, o, field, "expected a mapping with name and type_hint, got %s",
                    jtype_name(o));
    if (!json_object_object_get_ex(o, "name", &val))
        return verr(v, o, field, "missing 'name'");
    if ((rc = get_string(v, o, val, field, false, &in->name)) < 0) return rc;
    if (in->name[0] == '\0') return verr(v, val, field, "'name' is empty");
    snprintf(field, sizeof field, "inputs[%zu] (%s)", idx, in->name);

    json_object_object_foreach(o, key, value) {
        char sub[200];
        snprintf(sub, sizeof sub, "%s.%s", field, key);
        if (strcmp(key, "name") == 0) {
            continue;
        } else if (strcmp(key, "type_hint") == 0 || strcmp(key, "type") == 0) {
            free(in->type_hint);
            if ((rc = get_string(v, o, value, sub, false, &in->type_hint)) < 0) return rc;
        } else if (strcmp(key, "required") == 0) {
            if ((rc = get_bool(v, value, sub, &in->required)) < 0) return rc;
        } else if (strcmp(key, "default") == 0) {
            in->has_default = true;
            in->default_value = json_object_get(value);
        } else if (strcmp(key, "description") == 0) {
            if ((rc = get_string(v, o, value, sub, true, &in->description)) < 0) return rc;
        } else if (strcmp(key, "enum") == 0) {
            if (value == NULL) continue;
            if (!json_object_is_type(value, json_type_array))
                return verr(v, value, sub, "expected a list of allowed values, got %s",
                            jtype_name(value));
            for (size_t i = 0; i < json_object_array_length(value); i++) {
                json_object *e = json_object_array_get_idx(value, i);
                if (e == NULL || json_object_is_type(e, json_type_array) ||
                    json_object_is_type(e, json_type_object))
                    return verr(v, e ? e : value, sub, "enum values must be scalars");
                if ((rc = cn_strv_push(&in->enum_values, json_object_get_string(e))) < 0)
                    return rc;
            }
        } else if (strcmp(key, "is_line_number") == 0) {
            if ((rc = get_bool(v, value, sub, &in->is_line_number)) < 0) return rc;
        } else if (strcmp(key, "minimum") == 0) {
            if ((rc = get_number(v, value, sub, &in->minimum)) < 0) return rc;
            in->has_minimum = true;
        } else if (strcmp(key, "maximum") == 0) {
            if ((rc = get_number(v, value, sub, &in->maximum)) < 0) return rc;
            in->has_maximum = true;
        } else {
            char *w = NULL;
            int line, col;
            cn_buf b = CN_BUF_INIT;
            if (cn_yaml_mark(value, &line, &col) == 0)
                cn_buf_printf(&b, "%s:%d:%d: ", v->origin, line, col);
            cn_buf_printf(&b, "%s: unknown field '%s' ignored", field, key);
            w = cn_buf_steal(&b);
            if ((rc = cn_strv_push_owned(&v->meta->warnings, w)) < 0) return rc;
        }
    }
    if (!json_object_object_get_ex(o, "required", NULL)) in->required = !in->has_default;
    if (in->type_hint == NULL && (in->type_hint = cn_strdup("Any")) == NULL)
        return cn_error_set(CN_ENOMEM, "out of memory");

    if (in->enum_values.len > 0) {
        rc = cn_type_new_enum(&in->enum_values, &in->type);
    } else {
        rc = cn_type_parse(in->type_hint, &in->type);
    }
    if (rc < 0) {
        char msg[CN_ERROR_MESSAGE_MAX];
        json_object *th = NULL;
        snprintf(msg, sizeof msg, "%s", cn_error_last()->message);
        if (!json_object_object_get_ex(o, "type_hint", &th)) json_object_object_get_ex(o, "type", &th);
        return verr(v, th ? th : o, field, "%s", msg);
    }
    if (in->is_line_number) {
        const cn_type *t = in->type;
        if (t->kind == CN_T_OPTIONAL) t = t->elem;
        if (t->kind != CN_T_INT && t->kind != CN_T_ANY)
            return verr(v, o, field, "is_line_number needs an int input, not %s", in->type_hint);
    }
    if (in->has_minimum || in->has_maximum) {
        const cn_type *t = in->type;
        if (t->kind == CN_T_OPTIONAL) t = t->elem;
        if (t->kind != CN_T_INT && t->kind != CN_T_FLOAT)
            return verr(v, o, field, "minimum and maximum need an int or float input, not %s", in->type_hint);
        if (in->has_minimum && in->has_maximum && in->minimum > in->maximum)
            return verr(v, o, field, "minimum %g is above maximum %g", in->minimum, in->maximum);
    }
    if (in->has_default && in->default_value != NULL) {
        json_object *coerced = NULL;
        if (cn_type_coerce(in->type, in->name, in->default_value, &coerced) < 0) {
            char msg[CN_ERROR_MESSAGE_MAX];
            json_object *d = NULL;
            snprintf(msg, sizeof msg, "%s", cn_error_last()->message);
            json_object_object_get_ex(o, "default", &d);
            return verr(v, d ? d : o, field, "default does not fit the type: %s", msg);
        }
        json_object_put(in->default_value);
        in->default_value = coerced;
        if (cn_input_check_bounds(in, coerced) < 0) {
            char msg[CN_ERROR_MESSAGE_MAX];
            json_object *d = NULL;
            snprintf(msg, sizeof msg, "%s", cn_error_last()->message);
            json_object_object_get_ex(o, "default", &d);
            return verr(v, d ? d : o, field, "default: %s", msg);
        }
    }
    return 0;
}

int cn_input_check_bounds(const cn_input_spec *in, json_object *value)
{
    double x;
    if (value == NULL || (!in->has_minimum && !in->has_maximum)) return 0;
    if (!json_object_is_type(value, json_type_int) && !json_object_is_type(value, json_type_double)) return 0;
    x = json_object_get_double(value);
    if ((in->has_minimum && x < in->minimum) || (in->has_maximum && x > in->maximum)) {
        if (in->has_minimum && in->has_maximum)
            return cn_error_set(CN_EINVAL, "argument '%s' must be between %g and %g, got %s", in->name, in->minimum,
                                in->maximum, json_object_to_json_string(value));
        if (in->has_minimum)
            return cn_error_set(CN_EINVAL, "argument '%s' must be at least %g, got %s", in->name, in->minimum,
                                json_object_to_json_string(value));
        return cn_error_set(CN_EINVAL, "argument '%s' must be at most %g, got %s", in->name, in->maximum,
                            json_object_to_json_string(value));
    }
    return 0;
}

static int parse_outputs(const vctx *v, json_object *o, cn_output_spec *out)
{
    int rc;
    if (o != NULL && json_object_is_type(o, json_type_string)) {
        out->type_hint = cn_strdup(json_object_get_string(o));
    } else if (o != NULL) {
        if (!json_object_is_type(o, json_type_object))
            return verr(v, o, "outputs", "expected a mapping with type_hint, got %s", jtype_name(o));
        json_object_object_foreach(o, key, value) {
            char sub[128];
            snprintf(sub, sizeof sub, "outputs.%s", key);
            if (strcmp(key, "type_hint") == 0 || strcmp(key, "type") == 0) {
                free(out->type_hint);
                if ((rc = get_string(v, o, value, sub, false, &out->type_hint)) < 0) return rc;
            } else if (strcmp(key, "description") == 0) {
                if ((rc = get_string(v, o, value, sub, true, &out->description)) < 0) return rc;
            } else if (strcmp(key, "line_fields") == 0) {
                if ((rc = get_strv(v, value, sub, &out->line_fields)) < 0) return rc;
            } else if (strcmp(key, "page_limit") == 0) {
                free(out->page_limit);
                if ((rc = get_string(v, o, value, sub, false, &out->page_limit)) < 0) return rc;
            } else if (strcmp(key, "list_field") == 0) {
                free(out->list_field);
                if ((rc = get_string(v, o, value, sub, false, &out->list_field)) < 0) return rc;
            } else {
                cn_buf b = CN_BUF_INIT;
                int line, col;
                if (cn_yaml_mark(value, &line, &col) == 0)
                    cn_buf_printf(&b, "%s:%d:%d: ", v->origin, line, col);
                cn_buf_printf(&b, "outputs: unknown field '%s' ignored", key);
                if ((rc = cn_strv_push_owned(&v->meta->warnings, cn_buf_steal(&b))) < 0) return rc;
            }
        }
    }
    if (out->type_hint == NULL && (out->type_hint = cn_strdup("Any")) == NULL)
        return cn_error_set(CN_ENOMEM, "out of memory");
    if (out->line_fields.len == 0 && o != NULL && json_object_is_type(o, json_type_object) &&
        json_object_object_get_ex(o, "line_fields", NULL)) {
        /* an explicit empty list: the skill returns no line numbers */
    } else if (out->line_fields.len == 0) {
        if ((rc = cn_strv_push(&out->line_fields, "start_line")) < 0 ||
            (rc = cn_strv_push(&out->line_fields, "end_line")) < 0 ||
            (rc = cn_strv_push(&out->line_fields, "line")) < 0)
            return rc;
    }
    if (cn_type_parse(out->type_hint, &out->type) < 0) {
        char msg[CN_ERROR_MESSAGE_MAX];
        snprintf(msg, sizeof msg, "%s", cn_error_last()->message);
        return verr(v, o, "outputs.type_hint", "%s", msg);
    }
    return 0;
}

static int parse_index_req(const vctx *v, json_object *o, size_t idx, cn_index_requirement *r)
{
    char field[128];
    int rc;
    snprintf(field, sizeof field, "index_requirements[%zu]", idx);
    r->max_age_seconds = -1;
    r->required = true;
    if (o != NULL && json_object_is_type(o, json_type_string)) {
        r->type = cn_strdup(json_object_get_string(o));
    } else if (o != NULL && json_object_is_type(o, json_type_object)) {
        json_object_object_foreach(o, key, value) {
            char sub[200];
            snprintf(sub, sizeof sub, "%s.%s", field, key);
            if (strcmp(key, "type") == 0 || strcmp(key, "index_type") == 0) {
                free(r->type);
                if ((rc = get_string(v, o, value, sub, false, &r->type)) < 0) return rc;
            } else if (strcmp(key, "max_age_seconds") == 0) {
                if (value == NULL) continue;
                if (!json_object_is_type(value, json_type_int) || json_object_get_int64(value) < 0)
                    return verr(v, value, sub, "expected a number of seconds >= 0 or null");
                r->max_age_seconds = json_object_get_int64(value);
            } else if (strcmp(key, "scope") == 0) {
                if ((rc = get_string(v, o, value, sub, true, &r->scope)) < 0) return rc;
            } else if (strcmp(key, "required") == 0) {
                if ((rc = get_bool(v, value, sub, &r->required)) < 0) return rc;
            } else {
                cn_buf b = CN_BUF_INIT;
                int line, col;
                if (cn_yaml_mark(value, &line, &col) == 0)
                    cn_buf_printf(&b, "%s:%d:%d: ", v->origin, line, col);
                cn_buf_printf(&b, "%s: unknown field '%s' ignored", field, key);
                if ((rc = cn_strv_push_owned(&v->meta->warnings, cn_buf_steal(&b))) < 0) return rc;
            }
        }
    } else {
        return verr(v, o, field, "expected an index type or a mapping with 'type', got %s",
                    jtype_name(o));
    }
    if (r->type == NULL || r->type[0] == '\0') return verr(v, o, field, "missing 'type'");
    if (r->scope == NULL && (r->scope = cn_strdup("repo")) == NULL)
        return cn_error_set(CN_ENOMEM, "out of memory");
    return 0;
}

static int parse_abi(const vctx *v, json_object *o, cn_skill_meta *m)
{
    const char *s = json_object_get_string(o);
    int major, minor, n = 0;
    if (o == NULL || json_object_is_type(o, json_type_array) || json_object_is_type(o, json_type_object))
        return verr(v, o, "abi", "expected \"MAJOR.MINOR\" such as \"1.0\"");
    if (sscanf(s, "%d.%d%n", &major, &minor, &n) == 2 && s[n] == '\0') {
        m->abi_major = major;
        m->abi_minor = minor;
    } else if (sscanf(s, "%d%n", &major, &n) == 1 && s[n] == '\0') {
        m->abi_major = major;
        m->abi_minor = 0;
    } else {
        return verr(v, o, "abi", "expected \"MAJOR.MINOR\" such as \"1.0\", got '%s'", s);
    }
    if (m->abi_major < 0 || m->abi_minor < 0) return verr(v, o, "abi", "negative version '%s'", s);
    return 0;
}

/* A paged skill (outputs.page_limit) gets an `offset` input the core
 * serves: the limit must be a bounded int input, which is what keeps a
 * page's cost known. */
static int add_offset_input(const vctx *v, json_object *cfg, cn_skill_meta *m)
{
    const cn_input_spec *lim;
    cn_input_spec *grown, *off;
    const cn_type *t;
    double lim_max;

    if (m->outputs.page_limit == NULL) return 0;
    if ((lim = cn_meta_input(m, m->outputs.page_limit)) == NULL)
        return verr(v, cfg, "outputs.page_limit", "names no input ('%s')", m->outputs.page_limit);
    t = lim->type->kind == CN_T_OPTIONAL ? lim->type->elem : lim->type;
    if (t->kind != CN_T_INT || !lim->has_maximum)
        return verr(v, cfg, "outputs.page_limit", "input '%s' must be an int with a maximum", lim->name);
    if (lim->maximum < 2) return verr(v, cfg, "outputs.page_limit", "input '%s': a maximum below 2 leaves nothing to page", lim->name);
    lim_max = lim->maximum;
    if (cn_meta_input(m, "offset") != NULL)
        return verr(v, cfg, "inputs", "'offset' is the core's paging input of a paged skill; rename the skill's own");
    grown = realloc(m->inputs, (m->n_inputs + 1) * sizeof *m->inputs);
    if (grown == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    m->inputs = grown;
    off = &m->inputs[m->n_inputs];
    memset(off, 0, sizeof *off);
    m->n_inputs++;
    off->name = cn_strdup("offset");
    off->type_hint = cn_strdup("int");
    off->has_default = true;
    off->default_value = json_object_new_int(0);
    off->has_minimum = off->has_maximum = true;
    off->minimum = 0;
    off->maximum = lim_max - 1;
    off->core_offset = true;
    {
        cn_buf d = CN_BUF_INIT;
        cn_buf_printf(&d, "Skip this many results: the next page after a result that was cut starts at the "
                          "offset its note gives (results past %g are never served)",
                      off->maximum + 1);
        off->description = cn_buf_steal(&d);
    }
    if (off->name == NULL || off->type_hint == NULL || off->default_value == NULL || off->description == NULL ||
        cn_type_parse("int", &off->type) < 0)
        return cn_error_set(CN_ENOMEM, "out of memory");
    return 0;
}

static int meta_fill(const vctx *v, json_object *cfg, cn_skill_meta *m)
{
    json_object *val;
    int rc;

    if (cfg == NULL || !json_object_is_type(cfg, json_type_object))
        return verr(v, cfg, NULL, "expected a mapping of skill fields, got %s", jtype_name(cfg));
    if (!json_object_object_get_ex(cfg, "skill_id", &val))
        return verr(v, cfg, "skill_id", "missing (every skill package needs a skill_id)");
    if ((rc = get_string(v, cfg, val, "skill_id", false, &m->skill_id)) < 0) return rc;
    if (!cn_skill_id_valid(m->skill_id))
        return verr(v, val, "skill_id",
                    "'%s' is not a valid id (letters, digits, '_', '-', '.'; at most 64)",
                    m->skill_id);

    m->skill_type = CN_SKILL_CUSTOM;
    m->cost = CN_COST_MEDIUM;
    m->cacheable = true;
    m->abi_major = m->abi_minor = -1;

    json_object_object_foreach(cfg, key, value) {
        if (strcmp(key, "skill_id") == 0) continue;
        if (strcmp(key, "skill_type") == 0) {
            if (!json_object_is_type(value, json_type_string) ||
                cn_skill_type_parse(json_object_get_string(value), &m->skill_type) < 0)
                return verr(v, value ? value : cfg, "skill_type",
                            "'%s' is not one of retrieval, expand, rerank, transform, custom",
                            json_object_get_string(value));
        } else if (strcmp(key, "cost") == 0) {
            if (!json_object_is_type(value, json_type_string) ||
                cn_cost_parse(json_object_get_string(value), &m->cost) < 0)
                return verr(v, value ? value : cfg, "cost", "'%s' is not one of low, medium, high",
                            json_object_get_string(value));
        } else if (strcmp(key, "operator") == 0) {
            if ((rc = get_string(v, cfg, value, "operator", true, &m->operator_name)) < 0) return rc;
        } else if (strcmp(key, "cacheable") == 0) {
            if ((rc = get_bool(v, value, "cacheable", &m->cacheable)) < 0) return rc;
        } else if (strcmp(key, "async_capable") == 0) {
            if ((rc = get_bool(v, value, "async_capable", &m->async_capable)) < 0) return rc;
        } else if (strcmp(key, "defaults") == 0) {
            if (value == NULL) continue;
            if (!json_object_is_type(value, json_type_object))
                return verr(v, value, "defaults", "expected a mapping of parameter defaults, got %s",
                            jtype_name(value));
            json_object_put(m->defaults);
            m->defaults = json_object_get(value);
        } else if (strcmp(key, "inputs") == 0) {
            size_t n;
            if (value == NULL) continue;
            if (!json_object_is_type(value, json_type_array))
                return verr(v, value, "inputs", "expected a list of input specs, got %s",
                            jtype_name(value));
            n = json_object_array_length(value);
            m->inputs = calloc(n ? n : 1, sizeof *m->inputs);
            if (m->inputs == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
            for (size_t i = 0; i < n; i++) {
                m->n_inputs = i + 1;
                rc = parse_input(v, json_object_array_get_idx(value, i), i, &m->inputs[i]);
                if (rc < 0) return rc;
                for (size_t j = 0; j < i; j++)
                    if (strcmp(m->inputs[j].name, m->inputs[i].name) == 0)
                        return verr(v, json_object_array_get_idx(value, i), "inputs",
                                    "input '%s' is declared twice", m->inputs[i].name);
            }
        } else if (strcmp(key, "outputs") == 0) {
            if ((rc = parse_outputs(v, value, &m->outputs)) < 0) return rc;
        } else if (strcmp(key, "index_requirements") == 0) {
            size_t n;
            if (value == NULL) continue;
            if (!json_object_is_type(value, json_type_array))
                return verr(v, value, "index_requirements", "expected a list, got %s",
                            jtype_name(value));
            n = json_object_array_length(value);
            m->index_requirements = calloc(n ? n : 1, sizeof *m->index_requirements);
            if (m->index_requirements == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
            for (size_t i = 0; i < n; i++) {
                m->n_index_requirements = i + 1;
                rc = parse_index_req(v, json_object_array_get_idx(value, i), i,
                                     &m->index_requirements[i]);
                if (rc < 0) return rc;
            }
        } else if (strcmp(key, "resources") == 0) {
            if ((rc = get_strv(v, value, "resources", &m->resources)) < 0) return rc;
        } else if (strcmp(key, "dependencies") == 0) {
            if ((rc = get_strv(v, value, "dependencies", &m->dependencies)) < 0) return rc;
        } else if (strcmp(key, "description") == 0) {
            if ((rc = get_string(v, cfg, value, "description", true, &m->description)) < 0) return rc;
        } else if (strcmp(key, "skill_doc") == 0) {
            if ((rc = get_string(v, cfg, value, "skill_doc", true, &m->skill_doc)) < 0) return rc;
        } else if (strcmp(key, "library") == 0) {
            if ((rc = get_string(v, cfg, value, "library", false, &m->library)) < 0) return rc;
            if (m->library[0] == '\0' || strchr(m->library, '/') || strcmp(m->library, "..") == 0 ||
                strcmp(m->library, ".") == 0)
                return verr(v, value, "library",
                            "'%s' must be a file name in the package directory, without '/'",
                            m->library);
        } else if (strcmp(key, "version") == 0) {
            if ((rc = get_string(v, cfg, value, "version", true, &m->version)) < 0) return rc;
        } else if (strcmp(key, "abi") == 0) {
            if ((rc = parse_abi(v, value, m)) < 0) return rc;
        } else if (strcmp(key, "examples") == 0) {
            if (value == NULL) continue;
            if ((rc = check_examples(v, value)) < 0) return rc;
            m->examples = json_object_get(value);
        } else {
            /* Unknown fields are kept as warnings, not errors, so a newer
             * package still loads in an older codenib. */
            cn_buf b = CN_BUF_INIT;
            int line, col;
            if (cn_yaml_mark(value, &line, &col) == 0)
                cn_buf_printf(&b, "%s:%d:%d: ", v->origin, line, col);
            else
                cn_buf_printf(&b, "%s: ", v->origin);
            cn_buf_printf(&b, "unknown field '%s' ignored", key);
            if ((rc = cn_strv_push_owned(&m->warnings, cn_buf_steal(&b))) < 0) return rc;
        }
    }
    if (m->defaults == NULL && (m->defaults = json_object_new_object()) == NULL)
        return cn_error_set(CN_ENOMEM, "out of memory");
    if (m->outputs.type == NULL && (rc = parse_outputs(v, NULL, &m->outputs)) < 0) return rc;
    if (m->library == NULL && (m->library = cn_strdup(m->skill_id)) == NULL)
        return cn_error_set(CN_ENOMEM, "out of memory");
    /* A default in `defaults` must fit its input's type too. */
    json_object_object_foreach(m->defaults, dkey, dval) {
        const cn_input_spec *in = cn_meta_input(m, dkey);
        json_object *coerced = NULL;
        if (in == NULL || dval == NULL) continue;
        if (cn_type_coerce(in->type, dkey, dval, &coerced) < 0) {
            char msg[CN_ERROR_MESSAGE_MAX];
            snprintf(msg, sizeof msg, "%s", cn_error_last()->message);
            return verr(v, dval, "defaults", "%s", msg);
        }
        json_object_put(coerced);
    }
    return add_offset_input(v, cfg, m);
}

int cn_meta_from_json(json_object *cfg, const char *origin, cn_skill_meta **out)
{
    cn_skill_meta *m;
    vctx v;
    int rc;

    *out = NULL;
    m = calloc(1, sizeof *m);
    if (m == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    v.origin = origin ? origin : "skill metadata";
    v.meta = m;
    rc = meta_fill(&v, cfg, m);
    if (rc == 0 && (m->config_path = cn_strdup(v.origin)) == NULL)
        rc = cn_error_set(CN_ENOMEM, "out of memory");
    if (rc == 0 && m->skill_doc == NULL && (m->skill_doc = cn_strdup("")) == NULL)
        rc = cn_error_set(CN_ENOMEM, "out of memory");
    if (rc == 0 && (m->description == NULL || m->description[0] == '\0') && m->skill_doc[0]) {
        free(m->description);
        m->description = cn_strdup(m->skill_doc);
    }
    if (rc == 0 && m->description == NULL && (m->description = cn_strdup("")) == NULL)
        rc = cn_error_set(CN_ENOMEM, "out of memory");
    if (rc < 0) {
        cn_meta_free(m);
        return rc;
    }
    *out = m;
    return 0;
}

int cn_meta_from_yaml_string(const char *text, size_t len, const char *origin,
                             cn_skill_meta **out)
{
    json_object *tree = NULL;
    int rc = cn_yaml_load_string(text, len, origin, &tree);
    *out = NULL;
    if (rc == 0) rc = cn_meta_from_json(tree, origin, out);
    json_object_put(tree);
    return rc;
}

int cn_meta_load_dir(const char *dir, cn_skill_meta **out)
{
    char *cfg_path = cn_path_join(dir, "config.yaml");
    char *md_path = cn_path_join(dir, "skill.md");
    json_object *cfg = NULL;
    cn_skill_meta *m = NULL;
    char *doc = NULL;
    int rc;

    *out = NULL;
    if (cfg_path == NULL || md_path == NULL) {
        rc = cn_error_set(CN_ENOMEM, "out of memory");
        goto done;
    }
    if ((rc = cn_yaml_load_file(cfg_path, &cfg)) < 0) goto done;
    if ((rc = cn_meta_from_json(cfg, cfg_path, &m)) < 0) goto done;
    rc = cn_file_read(md_path, SKILL_DOC_MAX, &doc, NULL);
    if (rc == CN_ENOTFOUND) {
        cn_error_clear();
        rc = 0;
    } else if (rc < 0) {
        goto done;
    } else {
        /* skill.md is the model-facing description: it wins over config. */
        free(m->skill_doc);
        m->skill_doc = doc;
        doc = NULL;
        if (m->skill_doc[0]) {
            free(m->description);
            if ((m->description = cn_strdup(m->skill_doc)) == NULL) {
                rc = cn_error_set(CN_ENOMEM, "out of memory");
                goto done;
            }
        }
    }
    if ((m->dir = cn_strdup(dir)) == NULL) {
        rc = cn_error_set(CN_ENOMEM, "out of memory");
        goto done;
    }
    *out = m;
    m = NULL;
done:
    free(doc);
    cn_meta_free(m);
    json_object_put(cfg);
    free(cfg_path);
    free(md_path);
    return rc;
}

json_object *cn_input_bound_json(const cn_input_spec *in, double bound)
{
    const cn_type *t = in->type && in->type->kind == CN_T_OPTIONAL ? in->type->elem : in->type;
    if (t != NULL && t->kind == CN_T_INT) return json_object_new_int64((int64_t)bound);
    return json_object_new_double(bound);
}

const cn_input_spec *cn_meta_input(const cn_skill_meta *m, const char *name)
{
    for (size_t i = 0; i < m->n_inputs; i++)
        if (strcmp(m->inputs[i].name, name) == 0) return &m->inputs[i];
    return NULL;
}

void cn_meta_free(cn_skill_meta *m)
{
    if (m == NULL) return;
    json_object_put(m->examples);
    free(m->skill_id);
    free(m->operator_name);
    json_object_put(m->defaults);
    for (size_t i = 0; i < m->n_inputs; i++) {
        cn_input_spec *in = &m->inputs[i];
        free(in->name);
        free(in->type_hint);
        cn_type_free(in->type);
        json_object_put(in->default_value);
        free(in->description);
        cn_strv_free(&in->enum_values);
    }
    free(m->inputs);
    free(m->outputs.type_hint);
    cn_type_free(m->outputs.type);
    free(m->outputs.description);
    cn_strv_free(&m->outputs.line_fields);
    free(m->outputs.page_limit);
    free(m->outputs.list_field);
    for (size_t i = 0; i < m->n_index_requirements; i++) {
        free(m->index_requirements[i].type);
        free(m->index_requirements[i].scope);
    }
    free(m->index_requirements);
    cn_strv_free(&m->resources);
    cn_strv_free(&m->dependencies);
    free(m->skill_doc);
    free(m->description);
    free(m->library);
    free(m->version);
    free(m->dir);
    free(m->config_path);
    cn_strv_free(&m->warnings);
    free(m);
}

static json_object *str_or_null(const char *s)
{
    return s ? json_object_new_string(s) : NULL;
}

json_object *cn_meta_to_json(const cn_skill_meta *m)
{
    json_object *o = json_object_new_object(), *inputs, *outputs, *reqs;

    json_object_object_add(o, "skill_id", json_object_new_string(m->skill_id));
    json_object_object_add(o, "skill_type", json_object_new_string(cn_skill_type_name(m->skill_type)));
    inputs = json_object_new_array();
    for (size_t i = 0; i < m->n_inputs; i++) {
        const cn_input_spec *in = &m->inputs[i];
        json_object *e = json_object_new_object();
        json_object_object_add(e, "name", json_object_new_string(in->name));
        json_object_object_add(e, "type_hint", json_object_new_string(in->type_hint));
        json_object_object_add(e, "required", json_object_new_boolean(in->required));
        json_object_object_add(e, "default", json_object_get(in->default_value));
        json_object_object_add(e, "description", json_object_new_string(in->description ? in->description : ""));
        json_object_object_add(e, "enum", in->enum_values.len ? cn_json_strv(&in->enum_values) : NULL);
        json_object_object_add(e, "is_line_number", json_object_new_boolean(in->is_line_number));
        if (in->has_minimum) json_object_object_add(e, "minimum", cn_input_bound_json(in, in->minimum));
        if (in->has_maximum) json_object_object_add(e, "maximum", cn_input_bound_json(in, in->maximum));
        json_object_array_add(inputs, e);
    }
    json_object_object_add(o, "inputs", inputs);
    outputs = json_object_new_object();
    json_object_object_add(outputs, "type_hint", json_object_new_string(m->outputs.type_hint));
    json_object_object_add(outputs, "description",
                           json_object_new_string(m->outputs.description ? m->outputs.description : ""));
    json_object_object_add(outputs, "line_fields", cn_json_strv(&m->outputs.line_fields));
    if (m->outputs.page_limit) json_object_object_add(outputs, "page_limit", json_object_new_string(m->outputs.page_limit));
    if (m->outputs.list_field) json_object_object_add(outputs, "list_field", json_object_new_string(m->outputs.list_field));
    json_object_object_add(o, "outputs", outputs);
    json_object_object_add(o, "async_capable", json_object_new_boolean(m->async_capable));
    json_object_object_add(o, "cacheable", json_object_new_boolean(m->cacheable));
    json_object_object_add(o, "cost", json_object_new_string(cn_cost_name(m->cost)));
    json_object_object_add(o, "dependencies", cn_json_strv(&m->dependencies));
    json_object_object_add(o, "resources", cn_json_strv(&m->resources));
    json_object_object_add(o, "operator", str_or_null(m->operator_name));
    json_object_object_add(o, "defaults", json_object_get(m->defaults));
    reqs = json_object_new_array();
    for (size_t i = 0; i < m->n_index_requirements; i++) {
        const cn_index_requirement *r = &m->index_requirements[i];
        json_object *e = json_object_new_object();
        json_object_object_add(e, "type", json_object_new_string(r->type));
        json_object_object_add(e, "max_age_seconds",
                               r->max_age_seconds < 0 ? NULL : json_object_new_int64(r->max_age_seconds));
        json_object_object_add(e, "scope", json_object_new_string(r->scope));
        json_object_object_add(e, "required", json_object_new_boolean(r->required));
        json_object_array_add(reqs, e);
    }
    json_object_object_add(o, "index_requirements", reqs);
    json_object_object_add(o, "skill_doc", json_object_new_string(m->skill_doc ? m->skill_doc : ""));
    json_object_object_add(o, "description", json_object_new_string(m->description ? m->description : ""));
    json_object_object_add(o, "library", json_object_new_string(m->library));
    json_object_object_add(o, "version", str_or_null(m->version));
    if (m->abi_major >= 0) {
        char abi[32];
        snprintf(abi, sizeof abi, "%d.%d", m->abi_major, m->abi_minor);
        json_object_object_add(o, "abi", json_object_new_string(abi));
    } else {
        json_object_object_add(o, "abi", NULL);
    }
    return o;
}
