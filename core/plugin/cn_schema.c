/* SPDX-License-Identifier: Apache-2.0 */
/* OpenAI function-calling schemas for skills, and the dataflow check
 * between one skill's output and another's input. */
#include <stdlib.h>
#include <string.h>

#include "cn_registry.h"

/* Whether a JSON schema {"type": ...} admits null (no type: anything). */
static bool schema_allows_null(json_object *p)
{
    json_object *t = NULL;
    if (!json_object_object_get_ex(p, "type", &t) || t == NULL) return true;
    if (json_object_is_type(t, json_type_string)) return strcmp(json_object_get_string(t), "null") == 0;
    for (size_t i = 0; json_object_is_type(t, json_type_array) && i < json_object_array_length(t); i++)
        if (strcmp(json_object_get_string(json_object_array_get_idx(t, i)), "null") == 0) return true;
    return false;
}

json_object *cn_skill_tool_schema(const cn_skill_meta *m)
{
    json_object *tool = json_object_new_object();
    json_object *fn = json_object_new_object();
    json_object *params = json_object_new_object();
    json_object *props = json_object_new_object();
    json_object *required = json_object_new_array();
    const char *desc = m->skill_doc && *m->skill_doc ? m->skill_doc : m->description;

    for (size_t i = 0; i < m->n_inputs; i++) {
        const cn_input_spec *in = &m->inputs[i];
        json_object *p = cn_type_json_schema(in->type);
        cn_buf d = CN_BUF_INIT;
        if (in->description && *in->description) cn_buf_puts(&d, in->description);
        if (in->is_line_number)
            cn_buf_printf(&d, "%s(1-based line number)", d.len ? " " : "");
        if (d.len) json_object_object_add(p, "description", json_object_new_string(d.data));
        cn_buf_free(&d);
        if (in->has_minimum) json_object_object_add(p, "minimum", cn_input_bound_json(in, in->minimum));
        if (in->has_maximum) json_object_object_add(p, "maximum", cn_input_bound_json(in, in->maximum));
        {
            json_object *dv = NULL;
            bool has = json_object_object_get_ex(m->defaults, in->name, &dv);
            if (!has && in->has_default) {
                has = true;
                dv = in->default_value;
            }
            /* a null default on a type that refuses null would tell the
             * model to send what is refused: "not given" says it */
            if (has && (dv != NULL || schema_allows_null(p)))
                json_object_object_add(p, "default", json_object_get(dv));
        }
        json_object_object_add(props, in->name, p);
        /* An input the configuration already supplies is not required
         * from the model. */
        if (in->required && !json_object_object_get_ex(m->defaults, in->name, NULL))
            json_object_array_add(required, json_object_new_string(in->name));
    }
    json_object_object_add(params, "type", json_object_new_string("object"));
    json_object_object_add(params, "properties", props);
    json_object_object_add(params, "required", required);
    /* the core refuses an argument the skill does not declare */
    json_object_object_add(params, "additionalProperties", json_object_new_boolean(0));
    json_object_object_add(fn, "name", json_object_new_string(m->skill_id));
    json_object_object_add(fn, "description", json_object_new_string(desc ? desc : ""));
    json_object_object_add(fn, "parameters", params);
    json_object_object_add(tool, "type", json_object_new_string("function"));
    json_object_object_add(tool, "function", fn);
    return tool;
}

json_object *cn_registry_tools(const cn_registry *reg, const cn_strv *allow, const cn_strv *exclude)
{
    json_object *tools = json_object_new_array();
    for (size_t i = 0; i < reg->n_entries; i++) {
        const cn_skill_entry *e = reg->entries[i];
        if (e->meta == NULL || e->state == CN_STATE_FAILED || e->state == CN_STATE_DUPLICATE)
            continue;
        if (!cn_registry_enabled(reg, e->id)) continue;
        /* allowlist first, then denylist */
        if (allow && allow->len && !cn_strv_contains(allow, e->id)) continue;
        if (exclude && cn_strv_contains(exclude, e->id)) continue;
        json_object_array_add(tools, cn_skill_tool_schema(e->meta));
    }
    return tools;
}

static const cn_skill_meta *usable_meta(const cn_registry *reg, const char *id)
{
    const cn_skill_entry *e = cn_registry_find(reg, id);
    if (e == NULL || e->meta == NULL) {
        cn_error_set(CN_ENOTFOUND, "no skill '%s'%s", id,
                     e ? " with readable metadata" : " (see `codenib skills list`)");
        return NULL;
    }
    return e->meta;
}

int cn_registry_check_flow(const cn_registry *reg, const char *from, const char *to,
                           const char *input)
{
    const cn_skill_meta *a = usable_meta(reg, from), *b;
    cn_buf why_all = CN_BUF_INIT;
    int rc;

    if (a == NULL) return cn_error_last()->code;
    if ((b = usable_meta(reg, to)) == NULL) return cn_error_last()->code;
    if (input != NULL) {
        const cn_input_spec *in = cn_meta_input(b, input);
        char *why = NULL;
        if (in == NULL) return cn_error_set(CN_ENOTFOUND, "skill '%s' has no input '%s'", to, input);
        if (cn_type_compatible(a->outputs.type, in->type, &why)) {
            free(why);
            return 0;
        }
        rc = cn_error_set(CN_ETYPE, "%s -> %s.%s: %s", from, to, input, why ? why : "types differ");
        free(why);
        return rc;
    }
    for (size_t i = 0; i < b->n_inputs; i++) {
        char *why = NULL;
        if (cn_type_compatible(a->outputs.type, b->inputs[i].type, &why)) {
            free(why);
            cn_buf_free(&why_all);
            return 0;
        }
        cn_buf_printf(&why_all, "%s%s (%s)", i ? "; " : "", b->inputs[i].name,
                      why ? why : "types differ");
        free(why);
    }
    rc = cn_error_set(CN_ETYPE, "the output of %s (%s) fits no input of %s: %s", from,
                      a->outputs.type_hint, to, why_all.data ? why_all.data : "it takes no inputs");
    cn_buf_free(&why_all);
    return rc;
}
