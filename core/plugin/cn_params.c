/* SPDX-License-Identifier: Apache-2.0 */
/* Parameter resolution, argument coercion, the line-number boundary and
 * the invocation of one skill.
 *
 * The boundary is kept here and only here: models, users, config files and
 * callers count lines from 1, skills from 0.  Inputs marked is_line_number
 * are shifted down on the way in, whichever source gave them; the result
 * fields named by outputs.line_fields are shifted up on the way out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cn_registry.h"

static int known_inputs(const cn_skill_meta *m, cn_buf *b)
{
    for (size_t i = 0; i < m->n_inputs; i++)
        cn_buf_printf(b, "%s%s", i ? ", " : "", m->inputs[i].name);
    if (m->n_inputs == 0) cn_buf_puts(b, "none");
    return 0;
}

int cn_params_resolve(const cn_skill_meta *m, json_object *overrides, json_object *args,
                      json_object **out)
{
    json_object *res = json_object_new_object();
    int rc = 0;

    *out = NULL;
    if (res == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    if (args != NULL && !json_object_is_type(args, json_type_object)) {
        json_object_put(res);
        return cn_error_set(CN_EINVAL, "skill '%s': arguments must be a JSON object, got %s",
                            m->skill_id, json_object_to_json_string(args));
    }
    if (overrides != NULL && !json_object_is_type(overrides, json_type_object)) {
        json_object_put(res);
        return cn_error_set(CN_EINVAL, "skill '%s': parameter overrides must be a JSON object",
                            m->skill_id);
    }

    /* 1. declared input defaults, 2. config defaults, 3. caller overrides */
    for (size_t i = 0; i < m->n_inputs; i++)
        if (m->inputs[i].has_default)
            json_object_object_add(res, m->inputs[i].name, json_object_get(m->inputs[i].default_value));
    json_object_object_foreach(m->defaults, dk, dv) {
        const cn_input_spec *in = cn_meta_input(m, dk);
        json_object *c = NULL;
        if (in == NULL) {
            json_object_object_add(res, dk, json_object_get(dv));
            continue;
        }
        if ((rc = cn_type_coerce(in->type, dk, dv, &c)) < 0) {
            cn_error_prefix("skill '%s' (config defaults)", m->skill_id);
            goto fail;
        }
        json_object_object_add(res, dk, c);
    }
    if (overrides != NULL) {
        json_object_object_foreach(overrides, ok, ov) {
            const cn_input_spec *in = cn_meta_input(m, ok);
            json_object *c = NULL;
            if (in != NULL && (rc = cn_type_coerce(in->type, ok, ov, &c)) < 0) {
                cn_error_prefix("skill '%s' (caller parameters)", m->skill_id);
                goto fail;
            }
            json_object_object_add(res, ok, in != NULL ? c : json_object_get(ov));
        }
    }

    /* 4. model arguments: only declared inputs, coerced to their types */
    if (args != NULL) {
        json_object_object_foreach(args, ak, av) {
            const cn_input_spec *in = cn_meta_input(m, ak);
            json_object *c = NULL;
            if (in == NULL) {
                cn_buf b = CN_BUF_INIT;
                known_inputs(m, &b);
                rc = cn_error_set(CN_EINVAL, "skill '%s': unknown argument '%s' (it takes: %s)",
                                  m->skill_id, ak, b.data ? b.data : "");
                cn_buf_free(&b);
                goto fail;
            }
            /* A model often sends null for "not given": fall back to the
             * default when the input has one. */
            if (av == NULL && !in->required && json_object_object_get_ex(res, ak, NULL)) continue;
            if ((rc = cn_type_coerce(in->type, ak, av, &c)) < 0) {
                cn_error_prefix("skill '%s'", m->skill_id);
                goto fail;
            }
            json_object_object_add(res, ak, c);
        }
    }

    for (size_t i = 0; i < m->n_inputs; i++) {
        const cn_input_spec *in = &m->inputs[i];
        json_object *v = NULL;
        if (json_object_object_get_ex(res, in->name, &v) && (rc = cn_input_check_bounds(in, v)) < 0) {
            cn_error_prefix("skill '%s'", m->skill_id);
            goto fail;
        }
        /* Every source above speaks in 1-based lines (a config default of
         * 1 means the first line, as the tool schema tells the model);
         * the skill gets 0-based ones. */
        if (in->is_line_number && json_object_object_get_ex(res, in->name, &v) && v != NULL &&
            json_object_is_type(v, json_type_int)) {
            int64_t line = json_object_get_int64(v);
            if (line < 1) {
                rc = cn_error_set(CN_ETYPE, "skill '%s': argument '%s': line numbers start at 1, "
                                            "got %lld",
                                  m->skill_id, in->name, (long long)line);
                goto fail;
            }
            json_object_object_add(res, in->name, json_object_new_int64(line - 1));
        }
        if (in->required && !json_object_object_get_ex(res, in->name, NULL)) {
            rc = cn_error_set(CN_EINVAL, "skill '%s': missing required argument '%s' (%s)%s%s",
                              m->skill_id, in->name, in->type_hint,
                              in->description && *in->description ? ": " : "",
                              in->description ? in->description : "");
            goto fail;
        }
    }
    *out = res;
    return 0;
fail:
    json_object_put(res);
    return rc;
}

static void shift_lines(const cn_strv *fields, json_object *v, int depth)
{
    if (v == NULL || depth > 64) return;
    if (json_object_is_type(v, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(v); i++)
            shift_lines(fields, json_object_array_get_idx(v, i), depth + 1);
    } else if (json_object_is_type(v, json_type_object)) {
        json_object_object_foreach(v, k, child) {
            if (child != NULL && json_object_is_type(child, json_type_int) &&
                cn_strv_contains(fields, k)) {
                json_object_set_int64(child, json_object_get_int64(child) + 1);
            } else {
                shift_lines(fields, child, depth + 1);
            }
        }
    }
}

void cn_params_result_lines(const cn_skill_meta *m, json_object *result)
{
    if (m->outputs.line_fields.len) shift_lines(&m->outputs.line_fields, result, 0);
}

static int parse_result(const char *id, const char *text, json_object **out)
{
    char what[128];
    snprintf(what, sizeof what, "the result of skill '%s'", id);
    if (cn_json_parse(text, what, out) == 0) return 0;
    {
        char snippet[81], msg[CN_ERROR_MESSAGE_MAX];
        snprintf(msg, sizeof msg, "%s", cn_error_last()->message);
        snprintf(snippet, sizeof snippet, "%s", text);
        return cn_error_set(CN_ESKILL, "skill '%s' returned invalid JSON (%s): %s%s", id, msg,
                            snippet, strlen(text) > 80 ? "..." : "");
    }
}

/* The page a paged skill is asked for: `offset` leaves the arguments
 * (the skill never sees it) and the limit grows by it, up to the limit's
 * maximum, so that the items past the offset are among those it returns. */
static size_t take_offset(const cn_skill_meta *m, json_object *resolved)
{
    const cn_input_spec *lim;
    json_object *v = NULL;
    int64_t off = 0;

    if (m->outputs.page_limit == NULL) return 0;
    if (json_object_object_get_ex(resolved, "offset", &v) && v != NULL && json_object_is_type(v, json_type_int))
        off = json_object_get_int64(v);
    json_object_object_del(resolved, "offset");
    if (off <= 0) return 0;
    lim = cn_meta_input(m, m->outputs.page_limit);
    if (lim != NULL && json_object_object_get_ex(resolved, lim->name, &v) && v != NULL &&
        json_object_is_type(v, json_type_int)) {
        int64_t n = json_object_get_int64(v) + off;
        if (lim->has_maximum && n > (int64_t)lim->maximum) n = (int64_t)lim->maximum;
        json_object_object_add(resolved, lim->name, json_object_new_int64(n));
    }
    return (size_t)off;
}

/* The list a paged or cut result holds: list_field of an object, or the
 * result itself when it is an array; NULL when there is none. */
json_object *cn_params_result_list(const cn_skill_meta *m, json_object *result)
{
    json_object *l = NULL;
    if (result != NULL && json_object_is_type(result, json_type_array)) return result;
    if (m != NULL && m->outputs.list_field != NULL && result != NULL &&
        json_object_is_type(result, json_type_object) && json_object_object_get_ex(result, m->outputs.list_field, &l) &&
        l != NULL && json_object_is_type(l, json_type_array))
        return l;
    return NULL;
}

static void drop_first(const cn_skill_meta *m, json_object *result, size_t offset)
{
    json_object *l = offset ? cn_params_result_list(m, result) : NULL;
    size_t n;
    if (l == NULL) return;
    n = json_object_array_length(l);
    json_object_array_del_idx(l, 0, offset < n ? offset : n);
}

int cn_registry_invoke(cn_registry *reg, const char *id, json_object *args, json_object *overrides,
                       json_object **result)
{
    cn_skill_entry *e = cn_registry_find(reg, id);
    json_object *resolved = NULL, *res = NULL;
    char *out_text = NULL, *args_text;
    cn_error err = {0, ""};
    size_t offset;
    int rc;

    *result = NULL;
    if (e == NULL) return cn_error_set(CN_ENOTFOUND, "no skill '%s' (see `codenib skills list`)", id);
    if (!cn_registry_enabled(reg, id))
        return cn_error_set(CN_EDENIED, "skill '%s' is not allowed in this run (allow/exclude)", id);
    if ((rc = cn_registry_load(reg, e)) < 0) return rc;
    if ((rc = cn_params_resolve(e->meta, overrides, args, &resolved)) < 0) return rc;
    offset = take_offset(e->meta, resolved);
    /* a skill run in its own process reads this as JSON text: UTF-8 */
    args_text = cn_json_text(resolved, JSON_C_TO_STRING_PLAIN);
    json_object_put(resolved);
    if (args_text == NULL) return CN_ENOMEM;

    if (e->state == CN_STATE_INPROCESS)
        rc = e->fn(e->fn_data, args_text, &out_text, &err);
    else
        rc = e->exec->run(e->exec, args_text, &out_text, &err);
    free(args_text);
    if (rc < 0) {
        free(out_text);
        return cn_error_set(rc, "skill '%s' failed: %s", id,
                            err.message[0] ? err.message : cn_error_code_name(rc));
    }
    if (out_text == NULL)
        return cn_error_set(CN_ESKILL, "skill '%s' reported success but returned no result", id);
    /* Both in-process and plugin results come from malloc (the host's
     * allocator is malloc), so one free releases either. */
    rc = parse_result(id, out_text, &res);
    free(out_text);
    if (rc < 0) return rc;
    cn_params_result_lines(e->meta, res);
    drop_first(e->meta, res, offset);
    *result = res;
    return 0;
}
