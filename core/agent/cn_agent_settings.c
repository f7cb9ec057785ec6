/* SPDX-License-Identifier: Apache-2.0 */
/* The agent options of the embedding API (cn_agent_settings in
 * <codenib/codenib.h>) applied over cn_agent_options: the same options a
 * harness spec sets, given by a program as a struct.  A zero field leaves
 * the option alone, so a caller sets only what it means to; flags take 1
 * for on and -1 for off. */
#include <stdlib.h>
#include <string.h>

#include <codenib/codenib.h>

#include "../plugin/cn_host.h"
#include "cn_agent_support.h"

#define WHERE "cn_agent_settings"

static int set_str(char **dst, const char *v, const char *field)
{
    char *copy;
    if (v == NULL) return 0;
    if ((copy = cn_strdup(v)) == NULL) return cn_error_set(CN_ENOMEM, "%s.%s: out of memory", WHERE, field);
    free(*dst);
    *dst = copy;
    return 0;
}

static int set_flag(bool *dst, int v, const char *field)
{
    if (v == 0) return 0;
    if (v != 1 && v != -1)
        return cn_error_set(CN_EINVAL, "%s.%s: use 1 (on), -1 (off) or 0 (leave as it is), not %d", WHERE, field,
                            v);
    *dst = v == 1;
    return 0;
}

static int set_list(cn_strv *dst, const char *const *items, size_t n, const char *field)
{
    cn_strv fresh = CN_STRV_INIT;
    if (n == 0) return 0;
    if (items == NULL) return cn_error_set(CN_EINVAL, "%s.%s is NULL with %zu items", WHERE, field, n);
    for (size_t i = 0; i < n; i++) {
        if (items[i] == NULL || items[i][0] == '\0') {
            cn_strv_free(&fresh);
            return cn_error_set(CN_EINVAL, "%s.%s[%zu] is empty", WHERE, field, i);
        }
        if (cn_strv_push(&fresh, items[i]) < 0) {
            cn_strv_free(&fresh);
            return cn_error_set(CN_ENOMEM, "%s.%s: out of memory", WHERE, field);
        }
    }
    cn_strv_free(dst);
    *dst = fresh;
    return 0;
}

static int apply_json(const char *text, cn_agent_options *o)
{
    json_object *spec = NULL;
    int rc;
    if (text == NULL) return 0;
    if ((rc = cn_json_parse(text, WHERE ".options_json", &spec)) < 0) return rc;
    if (!json_object_is_type(spec, json_type_object)) {
        json_object_put(spec);
        return cn_error_set(CN_EINVAL, "%s.options_json must be a JSON object of harness keys", WHERE);
    }
    rc = cn_harness_apply_json(spec, WHERE ".options_json", o);
    json_object_put(spec);
    return rc;
}

static int negative(const char *field, long v)
{
    return cn_error_set(CN_EINVAL, "%s.%s must not be negative (got %ld; 0 leaves the option as it is)", WHERE,
                        field, v);
}

int cn_agent_settings_apply(const cn_agent_settings *s, cn_agent_options *o)
{
    int rc;

    if (s == NULL) return 0;
    if (s->struct_size < offsetof(cn_agent_settings, options_json) + sizeof(const char *))
        return cn_error_set(CN_EINVAL, "%s: struct_size %u is too small (set it to sizeof(cn_agent_settings))",
                            WHERE, (unsigned)s->struct_size);
    if ((rc = apply_json(s->options_json, o)) < 0) return rc;
    if (s->max_turns < 0) return negative("max_turns", s->max_turns);
    if (s->max_tokens < 0) return negative("max_tokens", s->max_tokens);
    if (s->max_context_tokens < 0) return negative("max_context_tokens", s->max_context_tokens);
    if (s->max_tool_output < 0) return negative("max_tool_output", s->max_tool_output);
    if (s->max_turns > 0) o->max_turns = s->max_turns;
    if (s->max_tokens > 0) o->max_tokens = s->max_tokens;
    if (s->max_context_tokens > 0) o->max_context_tokens = s->max_context_tokens;
    if (s->max_tool_output > 0) o->max_tool_output = s->max_tool_output;
    if (s->set_temperature == 1) o->temperature = s->temperature;
    else if (s->set_temperature != 0)
        return cn_error_set(CN_EINVAL, "%s.set_temperature: use 1 to set the temperature or 0, not %d", WHERE,
                            s->set_temperature);
    if ((rc = set_str(&o->system_prompt, s->system_prompt, "system_prompt")) < 0 ||
        (rc = set_str(&o->first_turn_tool_choice, s->first_turn_tool_choice, "first_turn_tool_choice")) < 0 ||
        (rc = set_flag(&o->force_first_turn_only, s->force_first_turn_only, "force_first_turn_only")) < 0 ||
        (rc = set_flag(&o->force_localization_contract, s->force_localization_contract,
                       "force_localization_contract")) < 0 ||
        (rc = set_flag(&o->force_final_answer, s->force_final_answer, "force_final_answer")) < 0 ||
        (rc = set_flag(&o->review_final_answer, s->review_final_answer, "review_final_answer")) < 0 ||
        (rc = set_flag(&o->compact_after_read, s->compact_after_read, "compact_after_read")) < 0 ||
        (rc = set_flag(&o->include_default_tools, s->include_default_tools, "include_default_tools")) < 0 ||
        (rc = set_flag(&o->enable_bash, s->enable_bash, "enable_bash")) < 0 ||
        (rc = set_list(&o->allow_skills, s->allow_skills, s->n_allow_skills, "allow_skills")) < 0 ||
        (rc = set_list(&o->exclude_skills, s->exclude_skills, s->n_exclude_skills, "exclude_skills")) < 0)
        return rc;
    if (s->n_allow_skills > 0) o->has_allow_skills = true;
    return cn_agent_options_validate(o, WHERE);
}
